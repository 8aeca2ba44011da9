//! The statements that create a served schema ([`maskbus_model::schema::Schema`]) in an empty
//! target, in dependency order: schemas, extensions, types, sequences, tables (partitioned
//! parents first), sequence ownership, constraints (foreign keys last), indexes, comments; and
//! those of one served change ([`alter`]).
//!
//! A schema reply is data, never code. Names are quoted here; every served text that holds SQL
//! (a type, a collation, a default, a generated column, a partition key or bound, a constraint,
//! an index) is parsed with PostgreSQL's own parser and rebuilt from an allow-listed tree by
//! `maskbus_sqlguard`, never spliced as served: a producer (or whoever sends as it) cannot make
//! the consumer call a function that is not a side-effect-free built-in, read another table, or
//! end a statement. What is refused is left out and said ([`Refused`]), never run:
//!
//! - a table whose column type, collation, generated expression, partition key or partition
//!   bound is refused is left out whole (it could not be made as served), and so is a table
//!   whose parent, or whose column's type, is left out;
//! - a type whose base, attribute or range subtype is refused is left out (with the tables
//!   using it); a domain's refused default or check is only dropped;
//! - a refused default, constraint or index is only dropped: the table is made and synced
//!   without it.

use maskbus_model::quote_ident as q;
use maskbus_model::schema::{
    Change, ColumnDef, ConstraintDef, Extension, Identity, IndexDef, Schema, SequenceDef, TableDef,
    TypeDef, TypeKind,
};
use maskbus_model::TableRef;
use maskbus_sqlguard::{self as guard, Scope};
use std::collections::{BTreeMap, BTreeSet};

/// A served object the consumer does not create, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// What it is, by name: `default of public.orders.total`, `table public.orders`.
    pub object: String,
    /// The table that cannot be made because of it, when it is left out whole.
    pub table: Option<TableRef>,
    /// Why, in a person's words; names only, never a value.
    pub reason: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is not created: it {}", self.object, self.reason)
    }
}

impl std::error::Error for Refused {}

fn refused(object: String, table: Option<&TableRef>, why: guard::Refusal) -> Refused {
    Refused {
        object,
        table: table.cloned(),
        reason: why.to_string(),
    }
}

/// The statements that make a served schema, and what of it is left out.
#[derive(Clone, Debug, Default)]
pub struct Built {
    statements: Vec<String>,
    refused: Vec<Refused>,
}

impl Built {
    /// The statements, in order, for one transaction.
    pub fn statements(&self) -> &[String] {
        &self.statements
    }

    /// Every object left out or dropped, with its reason.
    pub fn refused(&self) -> &[Refused] {
        &self.refused
    }

    /// The tables left out whole, each with its first reason.
    pub fn tables_left_out(&self) -> BTreeMap<TableRef, String> {
        let mut out = BTreeMap::new();
        for r in &self.refused {
            if let Some(table) = &r.table {
                out.entry(table.clone()).or_insert_with(|| r.to_string());
            }
        }
        out
    }
}

/// Set at the start of every transaction that runs a served schema's statements: literals mean
/// what they say, and no name resolves through a schema of the target's choosing.
pub const SESSION: &str =
    "SET LOCAL standard_conforming_strings = on; SET LOCAL search_path = pg_catalog, pg_temp";

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// What a served text may name: the reply's sequences and tables (one shared set), and each
/// table's columns (a partition's are its root's). Built once per reply, so judging a reply is
/// linear in its size.
struct Names<'a> {
    reply: Scope,
    columns: BTreeMap<&'a TableRef, Vec<&'a str>>,
    roots: BTreeMap<&'a TableRef, &'a TableRef>,
}

impl<'a> Names<'a> {
    /// The names of `schema`, but the tables `left_out`.
    fn of(schema: &'a Schema, left_out: &BTreeSet<&TableRef>) -> Self {
        let sequences: Vec<TableRef> = schema
            .sequences
            .iter()
            .map(|s| TableRef::new(&s.schema, &s.name))
            .collect();
        let mut roots: BTreeMap<&TableRef, &TableRef> = BTreeMap::new();
        for t in &schema.tables {
            if let Some((parent, _)) = &t.partition_of {
                // Parents come before their partitions in a served schema; a root not known
                // yet is the parent itself (its own scope then holds its columns, or none).
                let root = roots.get(parent).copied().unwrap_or(parent);
                roots.insert(&t.table, root);
            }
        }
        Self {
            reply: Scope::default().with_sequences(&sequences).with_tables(
                schema
                    .tables
                    .iter()
                    .map(|t| &t.table)
                    .filter(|t| !left_out.contains(t)),
            ),
            columns: schema
                .tables
                .iter()
                .map(|t| {
                    (
                        &t.table,
                        t.columns.iter().map(|c| c.name.as_str()).collect(),
                    )
                })
                .collect(),
            roots,
        }
    }

    /// The scope of a text of `table`: its columns (its root's, for a partition), and the
    /// reply's sequences and tables.
    fn scope(&self, table: &TableRef) -> Scope {
        let root = self.roots.get(table).copied().unwrap_or(table);
        self.reply
            .with_columns(self.columns.get(root).into_iter().flatten().copied())
    }
}

/// The statements that create `schema`, in order, for one transaction; what is refused is left
/// out (see the module's rules) and listed.
pub fn create(schema: &Schema) -> Built {
    let names = Names::of(schema, &BTreeSet::new());
    let mut built = Built::default();
    for name in &schema.schemas {
        built.statements.push(create_schema(name));
    }
    for e in &schema.extensions {
        built.statements.push(create_extension(e));
    }
    let mut types_left_out = BTreeSet::new();
    for t in &schema.types {
        match create_type(t) {
            Ok((sql, dropped)) => {
                built.statements.push(sql);
                built.refused.extend(dropped);
            }
            Err(r) => {
                types_left_out.insert(type_name_of(t));
                built.refused.push(r);
            }
        }
    }
    let mut sequences_left_out = BTreeSet::new();
    for s in &schema.sequences {
        match create_sequence(s) {
            Ok(sql) => built.statements.push(sql),
            Err(r) => {
                sequences_left_out.insert((s.schema.as_str(), s.name.as_str()));
                built.refused.push(r);
            }
        }
    }
    let mut tables_left_out: BTreeSet<&TableRef> = BTreeSet::new();
    for t in &schema.tables {
        let scope = names.scope(&t.table);
        let made = match &t.partition_of {
            Some((parent, _)) if tables_left_out.contains(parent) => Err(Refused {
                object: format!("table {}", t.table),
                table: Some(t.table.clone()),
                reason: format!("is a partition of {parent}, which is left out"),
            }),
            _ => {
                uses_left_out_type(t, &types_left_out).map_or_else(|| create_table(t, &scope), Err)
            }
        };
        match made {
            Ok((sql, dropped)) => {
                built.statements.push(sql);
                built.refused.extend(dropped);
            }
            Err(r) => {
                tables_left_out.insert(&t.table);
                built.refused.push(r);
            }
        }
    }
    for s in &schema.sequences {
        if let Some((table, column)) = &s.owned_by {
            if !tables_left_out.contains(table)
                && !sequences_left_out.contains(&(s.schema.as_str(), s.name.as_str()))
            {
                built.statements.push(format!(
                    "ALTER SEQUENCE {}.{} OWNED BY {}.{}",
                    q(&s.schema),
                    q(&s.name),
                    table.sql(),
                    q(column)
                ));
            }
        }
    }
    // What a constraint or an index may reference: the tables that are made.
    let made_names = Names::of(schema, &tables_left_out);
    let made = |table: &TableRef| made_names.scope(table);
    for c in schema
        .constraints
        .iter()
        .filter(|c| !tables_left_out.contains(&c.table))
    {
        match add_constraint(c, &made(&c.table)) {
            Ok(sql) => built.statements.push(sql),
            Err(r) => built.refused.push(r),
        }
    }
    for i in schema
        .indexes
        .iter()
        .filter(|i| !tables_left_out.contains(&i.table))
    {
        match create_index(i, &made(&i.table)) {
            Ok(sql) => built.statements.push(sql),
            Err(r) => built.refused.push(r),
        }
    }
    for c in schema
        .comments
        .iter()
        .filter(|c| !tables_left_out.contains(&c.table))
    {
        built.statements.push(match &c.column {
            None => format!("COMMENT ON TABLE {} IS {}", c.table.sql(), literal(&c.text)),
            Some(column) => format!(
                "COMMENT ON COLUMN {}.{} IS {}",
                c.table.sql(),
                q(column),
                literal(&c.text)
            ),
        });
    }
    built
}

/// A type's name as a rebuilt column type names it.
fn type_name_of(t: &TypeDef) -> String {
    format!("{}.{}", q(&t.schema), q(&t.name))
}

/// The refusal of `t` when one of its columns has a type that is left out.
fn uses_left_out_type(t: &TableDef, left_out: &BTreeSet<String>) -> Option<Refused> {
    if left_out.is_empty() {
        return None;
    }
    t.columns.iter().find_map(|c| {
        let rebuilt = guard::type_name(&c.sql_type).ok()?;
        let base = rebuilt.trim_end_matches("[]");
        left_out.contains(base).then(|| Refused {
            object: format!("table {}", t.table),
            table: Some(t.table.clone()),
            reason: format!("has column {} of a type that is left out", c.name),
        })
    })
}

/// `CREATE TYPE` (or `CREATE DOMAIN`) for `t`, and what of it is dropped (a domain's refused
/// default or check); refused whole when its base, an attribute or its subtype is.
fn create_type(t: &TypeDef) -> Result<(String, Vec<Refused>), Refused> {
    let name = type_name_of(t);
    let whole = |why| refused(format!("type {}.{}", t.schema, t.name), None, why);
    let mut dropped = Vec::new();
    let sql = match &t.kind {
        TypeKind::Enum { labels } => format!(
            "CREATE TYPE {name} AS ENUM ({})",
            labels
                .iter()
                .map(|l| literal(l))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TypeKind::Domain {
            base,
            not_null,
            default,
            checks,
        } => {
            let base = guard::type_name(base).map_err(whole)?;
            let mut sql = format!("CREATE DOMAIN {name} AS {base}");
            if let Some(default) = default {
                match guard::expression(default, &Scope::default()) {
                    Ok(default) => sql += &format!(" DEFAULT {default}"),
                    Err(why) => dropped.push(refused(
                        format!("the default of domain {}.{}", t.schema, t.name),
                        None,
                        why,
                    )),
                }
            }
            if *not_null {
                sql += " NOT NULL";
            }
            for (constraint, check) in checks {
                match guard::constraint(check, &Scope::of_domain()) {
                    Ok(check) => sql += &format!(" CONSTRAINT {} {check}", q(constraint)),
                    Err(why) => dropped.push(refused(
                        format!("check {constraint} of domain {}.{}", t.schema, t.name),
                        None,
                        why,
                    )),
                }
            }
            sql
        }
        TypeKind::Composite { attributes } => {
            let mut parts = Vec::new();
            for (a, ty) in attributes {
                parts.push(format!("{} {}", q(a), guard::type_name(ty).map_err(whole)?));
            }
            format!("CREATE TYPE {name} AS ({})", parts.join(", "))
        }
        TypeKind::Range { subtype } => format!(
            "CREATE TYPE {name} AS RANGE (SUBTYPE = {})",
            guard::type_name(subtype).map_err(whole)?
        ),
    };
    Ok((sql, dropped))
}

/// `CREATE TABLE` for `t` (a partition as `PARTITION OF` its parent), and the defaults dropped.
fn create_table(t: &TableDef, scope: &Scope) -> Result<(String, Vec<Refused>), Refused> {
    let whole =
        |part: &str, why| refused(format!("{part} of table {}", t.table), Some(&t.table), why);
    let mut dropped = Vec::new();
    let mut sql = format!("CREATE TABLE {}", t.table.sql());
    if let Some((parent, bound)) = &t.partition_of {
        let bound =
            guard::partition_bound(bound).map_err(|why| whole("the partition bound", why))?;
        sql += &format!(" PARTITION OF {} {bound}", parent.sql());
    } else {
        let mut columns = Vec::new();
        for c in &t.columns {
            let (column, default_dropped) = column_sql(&t.table, c, scope)?;
            columns.push(column);
            dropped.extend(default_dropped);
        }
        sql += &format!(" ({})", columns.join(", "));
    }
    if let Some(key) = &t.partition_key {
        let key =
            guard::partition_key(key, scope).map_err(|why| whole("the partition key", why))?;
        sql += &format!(" PARTITION BY {key}");
    }
    Ok((sql, dropped))
}

/// A column as `CREATE TABLE` and `ADD COLUMN` write it, and its default when dropped. Its
/// type, collation and generated expression are the table's: refused, the table is too.
fn column_sql(
    table: &TableRef,
    c: &ColumnDef,
    scope: &Scope,
) -> Result<(String, Option<Refused>), Refused> {
    let whole =
        |part: &str, why| refused(format!("{part} of {table}.{}", c.name), Some(table), why);
    let mut col = format!(
        "{} {}",
        q(&c.name),
        guard::type_name(&c.sql_type).map_err(|why| whole("the type", why))?
    );
    if let Some(collation) = &c.collation {
        let collation = guard::collation(collation).map_err(|why| whole("the collation", why))?;
        col += &format!(" COLLATE {collation}");
    }
    let mut dropped = None;
    if let Some(generated) = &c.generated {
        let generated = guard::expression(generated, scope)
            .map_err(|why| whole("the generated expression", why))?;
        col += &format!(" GENERATED ALWAYS AS ({generated}) STORED");
    } else if let Some(default) = &c.default {
        match guard::expression(default, scope) {
            Ok(default) => col += &format!(" DEFAULT {default}"),
            Err(why) => {
                dropped = Some(refused(
                    format!("the default of {table}.{}", c.name),
                    None,
                    why,
                ))
            }
        }
    }
    match c.identity {
        Some(Identity::Always) => col += " GENERATED ALWAYS AS IDENTITY",
        Some(Identity::ByDefault) => col += " GENERATED BY DEFAULT AS IDENTITY",
        None => {}
    }
    if c.not_null {
        col += " NOT NULL";
    }
    Ok((col, dropped))
}

/// The statements of one change (see [`maskbus_model::schema::diff`]), with `served` the
/// schema it leads to (what its texts may name), and what of it is dropped (a refused default,
/// constraint or index: not made, said). `Err` when the change cannot be made at all (a
/// refused type, collation, generated expression, partition key or bound): its table fails
/// closed.
pub fn alter(change: &Change, served: &Schema) -> Result<(Vec<String>, Vec<Refused>), Refused> {
    let names = Names::of(served, &BTreeSet::new());
    let scope = |table: &TableRef| names.scope(table);
    let one = |s: String| Ok((vec![s], Vec::new()));
    match change {
        Change::CreateSchema(name) => one(create_schema(name)),
        Change::CreateExtension(e) => one(create_extension(e)),
        Change::CreateType(t) => {
            let (sql, dropped) = create_type(t)?;
            Ok((vec![sql], dropped))
        }
        Change::CreateSequence(s) => one(create_sequence(s)?),
        Change::AddEnumLabel {
            schema,
            name,
            label,
            after,
            before,
        } => one(format!(
            "ALTER TYPE {}.{} ADD VALUE IF NOT EXISTS {}{}",
            q(schema),
            q(name),
            literal(label),
            match (after, before) {
                (Some(after), _) => format!(" AFTER {}", literal(after)),
                (None, Some(before)) => format!(" BEFORE {}", literal(before)),
                (None, None) => String::new(),
            }
        )),
        Change::CreateTable(t) => {
            let (sql, dropped) = create_table(t, &scope(&t.table))?;
            Ok((vec![sql], dropped))
        }
        Change::DropTable(t) => one(format!("DROP TABLE IF EXISTS {}", t.sql())),
        Change::AddColumn { table, column } => {
            let (sql, dropped) = column_sql(table, column, &scope(table))?;
            Ok((
                vec![format!("ALTER TABLE {} ADD COLUMN {sql}", table.sql())],
                dropped.into_iter().collect(),
            ))
        }
        Change::DropColumn { table, column } => one(format!(
            "ALTER TABLE {} DROP COLUMN {}",
            table.sql(),
            q(column)
        )),
        Change::RenameColumn { table, from, to } => one(format!(
            "ALTER TABLE {} RENAME COLUMN {} TO {}",
            table.sql(),
            q(from),
            q(to)
        )),
        Change::AlterColumnType {
            table,
            column,
            sql_type,
        } => {
            let ty = guard::type_name(sql_type).map_err(|why| {
                refused(format!("the type of {table}.{column}"), Some(table), why)
            })?;
            one(format!(
                "ALTER TABLE {} ALTER COLUMN {} TYPE {ty} USING {}::{ty}",
                table.sql(),
                q(column),
                q(column)
            ))
        }
        Change::SetDefault {
            table,
            column,
            default,
        } => {
            let drop = format!(
                "ALTER TABLE {} ALTER COLUMN {} DROP DEFAULT",
                table.sql(),
                q(column)
            );
            match default
                .as_deref()
                .map(|d| guard::expression(d, &scope(table)))
            {
                None => one(drop),
                Some(Ok(d)) => one(format!(
                    "ALTER TABLE {} ALTER COLUMN {} SET DEFAULT {d}",
                    table.sql(),
                    q(column)
                )),
                // The old default goes: the target keeps no default the source no longer has.
                Some(Err(why)) => Ok((
                    vec![drop],
                    vec![refused(
                        format!("the default of {table}.{column}"),
                        None,
                        why,
                    )],
                )),
            }
        }
        Change::SetNotNull {
            table,
            column,
            not_null,
        } => one(format!(
            "ALTER TABLE {} ALTER COLUMN {} {} NOT NULL",
            table.sql(),
            q(column),
            if *not_null { "SET" } else { "DROP" }
        )),
        Change::AddConstraint(c) => Ok(match add_constraint(c, &scope(&c.table)) {
            Ok(sql) if validated_apart(c, served) => (
                vec![
                    format!("{sql} NOT VALID"),
                    format!(
                        "ALTER TABLE {} VALIDATE CONSTRAINT {}",
                        c.table.sql(),
                        q(&c.name)
                    ),
                ],
                Vec::new(),
            ),
            Ok(sql) => (vec![sql], Vec::new()),
            Err(r) => (Vec::new(), vec![r]),
        }),
        Change::DropConstraint { table, name } => one(format!(
            "ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}",
            table.sql(),
            q(name)
        )),
        Change::AddIndex(i) => Ok(match create_index(i, &scope(&i.table)) {
            Ok(sql) => (vec![sql], Vec::new()),
            Err(r) => (Vec::new(), vec![r]),
        }),
        Change::DropIndex { table, name } => one(format!(
            "DROP INDEX IF EXISTS {}.{}",
            q(&table.schema),
            q(name)
        )),
    }
}

/// Whether constraint `c` is added `NOT VALID` and then validated, in the same transaction (a
/// check or a foreign key on a table that is not partitioned, which Postgres allows; one the
/// source holds `NOT VALID` stays so, never validated here).
fn validated_apart(c: &ConstraintDef, served: &Schema) -> bool {
    use maskbus_model::schema::ConstraintKind;
    let partitioned = served
        .tables
        .iter()
        .any(|t| t.table == c.table && (t.partition_key.is_some() || t.partition_of.is_some()));
    matches!(c.kind, ConstraintKind::Check | ConstraintKind::Foreign)
        && !partitioned
        && !c
            .definition
            .to_ascii_uppercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .ends_with(&["NOT", "VALID"])
}

/// The statements that give `table`.`column` type `sql_type` when its values cannot convert
/// (text already masked as `[REDACTED]` turned into `jsonb`, say): the column's values are
/// emptied (NULL, its NOT NULL dropped) so that the table's rows, written again under the new
/// type, fill it; the NOT NULL comes back once they do. Never runs served text: the type is
/// rebuilt as [`alter`] rebuilds it.
pub fn retype_emptied(
    table: &TableRef,
    column: &str,
    sql_type: &str,
) -> Result<Vec<String>, Refused> {
    let ty = guard::type_name(sql_type)
        .map_err(|why| refused(format!("the type of {table}.{column}"), Some(table), why))?;
    Ok(vec![
        format!(
            "ALTER TABLE {} ALTER COLUMN {} DROP NOT NULL",
            table.sql(),
            q(column)
        ),
        // An old default that cannot take the new type would refuse it too; the served one is
        // set again by the next comparison.
        format!(
            "ALTER TABLE {} ALTER COLUMN {} DROP DEFAULT",
            table.sql(),
            q(column)
        ),
        format!(
            "ALTER TABLE {} ALTER COLUMN {} TYPE {ty} USING NULL",
            table.sql(),
            q(column)
        ),
    ])
}

fn create_schema(name: &str) -> String {
    format!("CREATE SCHEMA IF NOT EXISTS {}", q(name))
}

fn create_extension(e: &Extension) -> String {
    format!(
        "CREATE EXTENSION IF NOT EXISTS {} WITH SCHEMA {}",
        q(&e.name),
        q(&e.schema)
    )
}

fn create_sequence(s: &SequenceDef) -> Result<String, Refused> {
    let data_type = guard::type_name(&s.data_type)
        .map_err(|why| refused(format!("sequence {}.{}", s.schema, s.name), None, why))?;
    Ok(format!(
        "CREATE SEQUENCE IF NOT EXISTS {}.{} AS {data_type} INCREMENT BY {} MINVALUE {} MAXVALUE {} START WITH {}{}",
        q(&s.schema),
        q(&s.name),
        s.increment,
        s.min,
        s.max,
        s.start,
        if s.cycle { " CYCLE" } else { "" }
    ))
}

fn add_constraint(c: &ConstraintDef, scope: &Scope) -> Result<String, Refused> {
    let definition = guard::constraint(&c.definition, scope)
        .map_err(|why| refused(format!("constraint {} of {}", c.name, c.table), None, why))?;
    Ok(format!(
        "ALTER TABLE {} ADD CONSTRAINT {} {definition}",
        c.table.sql(),
        q(&c.name)
    ))
}

/// `CREATE [UNIQUE] INDEX` for `i`, rebuilt from its definition (what follows `USING`) with the
/// index's own name and table, so a definition cannot name another table; on a partitioned
/// table without `ONLY`, so the partitions get it too.
fn create_index(i: &IndexDef, scope: &Scope) -> Result<String, Refused> {
    let rebuilt = guard::index(&i.definition, scope)
        .map_err(|why| refused(format!("index {} of {}", i.name, i.table), None, why))?;
    Ok(rebuilt.create_statement(&i.name, &i.table))
}

/// What one of this module's statements does, read back from its text (maskbus's own, never a
/// server's): the kind (`CREATE TYPE`, `ALTER TABLE ... ADD CONSTRAINT`), the object by name,
/// and the schema it is made in, so an error can name them and the privilege that fix needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Described {
    /// `CREATE TYPE`, `CREATE INDEX`, `ALTER TABLE`, `COMMENT ON COLUMN`.
    pub kind: String,
    /// The object as the statement names it (`public.order_status`, `orders_pkey ON
    /// public.orders`, `public.orders ADD CONSTRAINT orders_pkey`).
    pub object: String,
    /// The schema a new object is made in (none for a schema itself, or an object altered).
    pub schema: Option<String>,
}

impl std::fmt::Display for Described {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind, self.object)
    }
}

impl Described {
    /// The usual fix when the role `user` was refused this statement for want of a privilege
    /// (SQLSTATE 42501), on the database `database`.
    pub fn permission_fix(&self, user: &str, database: &str) -> String {
        match (self.kind.as_str(), &self.schema) {
            ("CREATE SCHEMA", _) => format!(
                "grant CREATE on database {database} to {user}, or make it the database's owner"
            ),
            ("CREATE EXTENSION", _) => format!(
                "the extension is not one {user} may create: have a superuser create it in the target first, or leave it out (the consumer's `extensions` setting)"
            ),
            (kind, Some(schema)) if kind.starts_with("CREATE") => format!(
                "grant CREATE on schema {schema} to {user}, or make it the schema's owner"
            ),
            _ => format!("make {user} the owner of it, or of its table"),
        }
    }
}

/// Reads back what a statement of this module does ([`Described`]).
pub fn describe(statement: &str) -> Described {
    let words = leading_words(statement, 12);
    let mut i = 0;
    let mut kind = Vec::new();
    while let Some(w) = words.get(i) {
        match w.as_str() {
            "CREATE" | "ALTER" | "COMMENT" | "ON" | "TABLE" | "TYPE" | "DOMAIN" | "SEQUENCE"
            | "SCHEMA" | "EXTENSION" | "INDEX" | "COLUMN" | "DROP" => kind.push(w.as_str()),
            "IF" | "NOT" | "EXISTS" | "UNIQUE" | "ONLY" => {}
            _ => break,
        }
        i += 1;
    }
    let words: Vec<String> = words.iter().map(|w| plain(w)).collect();
    let name = words.get(i).cloned().unwrap_or_default();
    let mut object = name.clone();
    let mut schema = schema_of(&name);
    let kind = kind.join(" ");
    match kind.as_str() {
        "CREATE INDEX" => {
            // name ON [ONLY] table: the index is made in its table's schema.
            if let Some(table) = words
                .iter()
                .skip(i + 2)
                .find(|w| w.as_str() != "ONLY")
                .filter(|_| words.get(i + 1).map(String::as_str) == Some("ON"))
            {
                object = format!("{name} ON {table}");
                schema = schema_of(table);
            }
        }
        "ALTER TABLE" => {
            // ADD CONSTRAINT name, ALTER COLUMN name, ...: what is changed, by name.
            let rest: Vec<&str> = words
                .iter()
                .skip(i + 1)
                .take(3)
                .map(String::as_str)
                .collect();
            if rest.len() == 3 {
                object = format!("{name} {}", rest.join(" "));
            }
            schema = None;
        }
        "CREATE SCHEMA" => schema = None,
        k if !k.starts_with("CREATE") => schema = None,
        _ => {}
    }
    Described {
        kind,
        object,
        schema,
    }
}

/// The first `n` words of `sql`, a double-quoted name kept whole (with its quotes), split at
/// white space and at `(`.
fn leading_words(sql: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in sql.chars() {
        if c == '"' {
            quoted = !quoted;
            word.push(c);
        } else if !quoted && (c.is_whitespace() || c == '(') {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
                if words.len() == n {
                    return words;
                }
            }
            if c == '(' {
                break;
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() && words.len() < n {
        words.push(word);
    }
    words
}

/// A name as a person writes it: each part that needs no quotes (lower-case letters, digits
/// and `_`, not starting with a digit) without them: `"public"."order_status"` reads
/// `public.order_status`, `"My Shop"."T"` stays as it is.
fn plain(name: &str) -> String {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut quoted = false;
    for c in name.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                part.push(c);
            }
            '.' if !quoted => parts.push(std::mem::take(&mut part)),
            _ => part.push(c),
        }
    }
    parts.push(part);
    parts
        .iter()
        .map(
            |p| match p.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
                Some(inner)
                    if !inner.is_empty()
                        && !inner.starts_with(|c: char| c.is_ascii_digit())
                        && inner
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
                {
                    inner.to_string()
                }
                _ => p.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(".")
}

/// The schema of a qualified name as written (`public.orders`, `"My Schema"."T"`), unquoted.
fn schema_of(name: &str) -> Option<String> {
    let mut quoted = false;
    for (at, c) in name.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => {
                let schema = &name[..at];
                return Some(
                    match schema.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
                        Some(inner) => inner.replace("\"\"", "\""),
                        None => schema.to_string(),
                    },
                );
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_model::schema::ConstraintKind;

    #[test]
    fn a_statement_is_described_by_its_kind_object_and_schema() {
        let d = describe("CREATE TYPE \"public\".\"order_status\" AS ENUM ('new', 'paid')");
        assert_eq!(d.to_string(), "CREATE TYPE public.order_status");
        assert_eq!(d.schema.as_deref(), Some("public"));
        assert_eq!(
            d.permission_fix("maskbus_writer", "shop_test"),
            "grant CREATE on schema public to maskbus_writer, or make it the schema's owner"
        );
        let d = describe("CREATE SCHEMA IF NOT EXISTS shop");
        assert_eq!(d.to_string(), "CREATE SCHEMA shop");
        assert!(d
            .permission_fix("w", "shop_test")
            .starts_with("grant CREATE on database shop_test to w"));
        let d = describe("CREATE TABLE \"My Shop\".\"Order Lines\" (id bigint)");
        assert_eq!(d.to_string(), "CREATE TABLE \"My Shop\".\"Order Lines\"");
        assert_eq!(d.schema.as_deref(), Some("My Shop"));
        let d = describe("CREATE UNIQUE INDEX orders_key ON ONLY public.orders USING btree (id)");
        assert_eq!(d.to_string(), "CREATE INDEX orders_key ON public.orders");
        assert_eq!(d.schema.as_deref(), Some("public"));
        let d = describe("ALTER TABLE public.orders ADD CONSTRAINT orders_pkey PRIMARY KEY (id)");
        assert_eq!(
            d.to_string(),
            "ALTER TABLE public.orders ADD CONSTRAINT orders_pkey"
        );
        assert_eq!(d.schema, None);
        let d = describe("CREATE SEQUENCE IF NOT EXISTS public.orders_id_seq AS bigint");
        assert_eq!(d.to_string(), "CREATE SEQUENCE public.orders_id_seq");
        let d = describe("COMMENT ON COLUMN public.orders.note IS 'x'");
        assert_eq!(d.to_string(), "COMMENT ON COLUMN public.orders.note");
        let d = describe("CREATE EXTENSION IF NOT EXISTS citext WITH SCHEMA public");
        assert_eq!(d.to_string(), "CREATE EXTENSION citext");
    }

    fn column(name: &str, sql_type: &str, default: Option<&str>) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            sql_type: sql_type.into(),
            not_null: false,
            default: default.map(Into::into),
            identity: None,
            generated: None,
            collation: None,
        }
    }

    fn people() -> Schema {
        let table = TableRef::parse("public.people");
        Schema {
            tables: vec![TableDef {
                table: table.clone(),
                columns: vec![
                    column("id", "integer", Some("nextval('public.people_id_seq'::regclass)")),
                    column("name", "text", Some("'x'::text")),
                ],
                partition_key: None,
                partition_of: None,
            }],
            sequences: vec![SequenceDef {
                schema: "public".into(),
                name: "people_id_seq".into(),
                data_type: "integer".into(),
                start: 1,
                increment: 1,
                min: 1,
                max: 2147483647,
                cycle: false,
                owned_by: Some((table.clone(), "id".into())),
            }],
            constraints: vec![ConstraintDef {
                table: table.clone(),
                name: "people_pkey".into(),
                kind: ConstraintKind::Primary,
                definition: "PRIMARY KEY (id)".into(),
            }],
            indexes: vec![IndexDef {
                table,
                name: "people_lower".into(),
                definition: "CREATE INDEX people_lower ON ONLY public.people USING btree (lower(name)) WHERE (id > 10)".into(),
            }],
            ..Schema::default()
        }
    }

    #[test]
    fn a_legitimate_schema_is_rebuilt_whole() {
        let built = create(&people());
        assert!(built.refused().is_empty(), "{:?}", built.refused());
        let sql = built.statements().join(";\n");
        assert!(sql.contains("pg_catalog.nextval"), "{sql}");
        assert!(
            sql.contains("ON \"public\".\"people\" USING btree"),
            "{sql}"
        );
        assert!(sql.contains("OWNED BY"), "{sql}");
    }

    #[test]
    fn a_served_function_call_is_never_spliced() {
        let mut schema = people();
        schema.tables[0].columns[1].default =
            Some("(query_to_xml('select 1', true, true, ''))::text".into());
        schema.constraints.push(ConstraintDef {
            table: TableRef::parse("public.people"),
            name: "sneaky".into(),
            kind: ConstraintKind::Check,
            definition: "CHECK ((lo_from_bytea(0, '\\x41'::bytea) > 0))".into(),
        });
        schema.indexes[0].definition =
            "CREATE INDEX people_lower ON public.people USING btree (public.dblink_exec('x'))"
                .into();
        let built = create(&schema);
        let sql = built.statements().join(";\n");
        for bad in ["query_to_xml", "lo_from_bytea", "dblink"] {
            assert!(!sql.contains(bad), "{bad} in {sql}");
        }
        // Dropped, said; the table is still made.
        assert_eq!(built.refused().len(), 3, "{:?}", built.refused());
        assert!(built.tables_left_out().is_empty());
        assert!(sql.contains("CREATE TABLE \"public\".\"people\""));
    }

    #[test]
    fn a_refused_bound_or_type_leaves_its_table_out_and_its_children_with_it() {
        let mut schema = people();
        let parent = TableRef::parse("public.people");
        let child = TableRef::parse("public.people_1");
        let grandchild = TableRef::parse("public.people_1_a");
        schema.tables[0].partition_key = Some("LIST (name)".into());
        schema.tables.push(TableDef {
            table: child.clone(),
            columns: Vec::new(),
            partition_key: Some("LIST (name)".into()),
            partition_of: Some((parent, "FOR VALUES IN ((pg_sleep(1))::text)".into())),
        });
        schema.tables.push(TableDef {
            table: grandchild.clone(),
            columns: Vec::new(),
            partition_key: None,
            partition_of: Some((child.clone(), "FOR VALUES IN ('a')".into())),
        });
        let built = create(&schema);
        let left_out = built.tables_left_out();
        assert!(left_out.contains_key(&child) && left_out.contains_key(&grandchild));
        assert!(!built.statements().join(" ").contains("pg_sleep"));
    }

    #[test]
    fn a_refused_default_in_a_change_drops_the_old_one() {
        let schema = people();
        let (sql, dropped) = alter(
            &Change::SetDefault {
                table: TableRef::parse("public.people"),
                column: "name".into(),
                default: Some("pg_notify('c', 'x')".into()),
            },
            &schema,
        )
        .unwrap();
        assert_eq!(
            sql,
            ["ALTER TABLE \"public\".\"people\" ALTER COLUMN \"name\" DROP DEFAULT"]
        );
        assert_eq!(dropped.len(), 1);
        assert!(alter(
            &Change::AlterColumnType {
                table: TableRef::parse("public.people"),
                column: "name".into(),
                sql_type: "text; DROP TABLE x".into(),
            },
            &schema,
        )
        .is_err());
    }

    #[test]
    fn a_check_added_later_is_validated_apart_and_a_retype_that_cannot_convert_empties_the_column()
    {
        let schema = people();
        let table = TableRef::parse("public.people");
        let check = |definition: &str| {
            alter(
                &Change::AddConstraint(ConstraintDef {
                    table: table.clone(),
                    name: "people_id_check".into(),
                    kind: ConstraintKind::Check,
                    definition: definition.into(),
                }),
                &schema,
            )
            .unwrap()
            .0
        };
        let sql = check("CHECK ((id > 0))");
        assert_eq!(sql.len(), 2, "{sql:?}");
        assert!(sql[0].ends_with(" NOT VALID"), "{sql:?}");
        assert_eq!(
            sql[1],
            "ALTER TABLE \"public\".\"people\" VALIDATE CONSTRAINT \"people_id_check\""
        );
        // One the source holds NOT VALID stays so: never validated here.
        assert_eq!(check("CHECK ((id > 0)) NOT VALID").len(), 1);
        let sql = retype_emptied(&table, "name", "jsonb").unwrap();
        assert_eq!(
            sql,
            [
                "ALTER TABLE \"public\".\"people\" ALTER COLUMN \"name\" DROP NOT NULL",
                "ALTER TABLE \"public\".\"people\" ALTER COLUMN \"name\" DROP DEFAULT",
                "ALTER TABLE \"public\".\"people\" ALTER COLUMN \"name\" TYPE \"jsonb\" USING NULL"
            ]
        );
        assert!(retype_emptied(&table, "name", "text; DROP TABLE x").is_err());
    }
}
