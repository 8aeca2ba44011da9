//! The statements that create a served schema ([`maskbus_model::schema::Schema`]) in an empty
//! target, in dependency order: schemas, extensions, types, sequences, tables (partitioned
//! parents first), sequence ownership, constraints (foreign keys last), indexes, comments.
//!
//! Names are quoted here; expressions are Postgres's own deparsed text from the source, and each
//! is checked to be one fragment ([`fragment_is_single`]) before it is spliced: a producer
//! cannot end a statement and start another through a default.

use maskbus_model::quote_ident as q;
use maskbus_model::schema::{
    Change, ColumnDef, ConstraintDef, Extension, Identity, IndexDef, Schema, SequenceDef, TableDef,
    TypeDef, TypeKind,
};
use maskbus_model::TableRef;

/// A fragment that is not one SQL expression (named by what it was for).
#[derive(Debug, thiserror::Error)]
#[error("the served schema's {what} is not one SQL fragment (a `;`, a comment or an unclosed quote outside any literal); the consumer runs no such text")]
pub struct NotAFragment {
    pub what: String,
}

/// Whether `text` is one fragment: no `;`, no comment, no `,` outside parentheses (so a
/// constraint or a default cannot add another `ALTER TABLE` subcommand), every quote and
/// parenthesis closed, outside string literals and quoted names. Dollar quoting and
/// backslashes outside literals are refused (deparsed expressions use neither); the statements
/// run with `standard_conforming_strings = on`, so a backslash in a literal is a character.
pub fn fragment_is_single(text: &str) -> bool {
    let mut depth: i64 = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => loop {
                match chars.next() {
                    None => return false,
                    Some(x) if x == c => {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    Some(_) => {}
                }
            },
            ';' | '$' | '\\' => return false,
            ',' if depth == 0 => return false,
            '-' if chars.peek() == Some(&'-') => return false,
            '/' if chars.peek() == Some(&'*') => return false,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

/// Set at the start of every transaction that runs a served schema's statements: literals mean
/// what they say, and no name resolves through a schema of the target's choosing.
pub const SESSION: &str =
    "SET LOCAL standard_conforming_strings = on; SET LOCAL search_path = pg_catalog, pg_temp";

fn checked(what: impl FnOnce() -> String, text: &str) -> Result<&str, NotAFragment> {
    if fragment_is_single(text) {
        Ok(text)
    } else {
        Err(NotAFragment { what: what() })
    }
}

fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The statements that create `schema`, in order, for one transaction.
pub fn create(schema: &Schema) -> Result<Vec<String>, NotAFragment> {
    let mut out = Vec::new();
    for name in &schema.schemas {
        out.push(create_schema(name));
    }
    for e in &schema.extensions {
        out.push(create_extension(e));
    }
    for t in &schema.types {
        out.push(create_type(t)?);
    }
    for s in &schema.sequences {
        out.push(create_sequence(s)?);
    }
    for t in &schema.tables {
        out.push(create_table(t)?);
    }
    for s in &schema.sequences {
        if let Some((table, column)) = &s.owned_by {
            out.push(format!(
                "ALTER SEQUENCE {}.{} OWNED BY {}.{}",
                q(&s.schema),
                q(&s.name),
                table.sql(),
                q(column)
            ));
        }
    }
    for c in &schema.constraints {
        out.push(add_constraint(c)?);
    }
    for i in &schema.indexes {
        out.push(create_index(i)?);
    }
    for c in &schema.comments {
        out.push(match &c.column {
            None => format!("COMMENT ON TABLE {} IS {}", c.table.sql(), literal(&c.text)),
            Some(column) => format!(
                "COMMENT ON COLUMN {}.{} IS {}",
                c.table.sql(),
                q(column),
                literal(&c.text)
            ),
        });
    }
    Ok(out)
}

/// `CREATE TYPE` (or `CREATE DOMAIN`) for `t`.
fn create_type(t: &TypeDef) -> Result<String, NotAFragment> {
    let name = format!("{}.{}", q(&t.schema), q(&t.name));
    let what = || format!("type {}.{}", t.schema, t.name);
    Ok(match &t.kind {
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
            let mut sql = format!("CREATE DOMAIN {name} AS {}", checked(what, base)?);
            if let Some(default) = default {
                sql += &format!(" DEFAULT {}", checked(what, default)?);
            }
            if *not_null {
                sql += " NOT NULL";
            }
            for (constraint, check) in checks {
                sql += &format!(" CONSTRAINT {} {}", q(constraint), checked(what, check)?);
            }
            sql
        }
        TypeKind::Composite { attributes } => {
            let mut parts = Vec::new();
            for (a, ty) in attributes {
                parts.push(format!("{} {}", q(a), checked(what, ty)?));
            }
            format!("CREATE TYPE {name} AS ({})", parts.join(", "))
        }
        TypeKind::Range { subtype } => {
            format!(
                "CREATE TYPE {name} AS RANGE (SUBTYPE = {})",
                checked(what, subtype)?
            )
        }
    })
}

/// `CREATE TABLE` for `t` (a partition as `PARTITION OF` its parent).
fn create_table(t: &TableDef) -> Result<String, NotAFragment> {
    let what = |part: &str| format!("{part} of table {}", t.table);
    let mut sql = format!("CREATE TABLE {}", t.table.sql());
    if let Some((parent, bound)) = &t.partition_of {
        sql += &format!(
            " PARTITION OF {} {}",
            parent.sql(),
            checked(|| what("partition bound"), bound)?
        );
    } else {
        let mut columns = Vec::new();
        for c in &t.columns {
            columns.push(column_sql(&t.table, c)?);
        }
        sql += &format!(" ({})", columns.join(", "));
    }
    if let Some(key) = &t.partition_key {
        sql += &format!(
            " PARTITION BY {}",
            checked(|| what("the partition key"), key)?
        );
    }
    Ok(sql)
}

/// A column as `CREATE TABLE` and `ADD COLUMN` write it.
fn column_sql(table: &TableRef, c: &ColumnDef) -> Result<String, NotAFragment> {
    let what = |part: &str| format!("{part} of table {table}");
    let mut col = format!(
        "{} {}",
        q(&c.name),
        checked(|| what("a column type"), &c.sql_type)?
    );
    if let Some(collation) = &c.collation {
        col += &format!(" COLLATE {}", checked(|| what("a collation"), collation)?);
    }
    if let Some(generated) = &c.generated {
        col += &format!(
            " GENERATED ALWAYS AS ({}) STORED",
            checked(|| what("a generated column"), generated)?
        );
    } else if let Some(default) = &c.default {
        col += &format!(" DEFAULT {}", checked(|| what("a default"), default)?);
    }
    match c.identity {
        Some(Identity::Always) => col += " GENERATED ALWAYS AS IDENTITY",
        Some(Identity::ByDefault) => col += " GENERATED BY DEFAULT AS IDENTITY",
        None => {}
    }
    if c.not_null {
        col += " NOT NULL";
    }
    Ok(col)
}

/// The statements of one change (see [`maskbus_model::schema::diff`]).
pub fn alter(change: &Change) -> Result<Vec<String>, NotAFragment> {
    let one = |s: String| Ok(vec![s]);
    match change {
        Change::CreateSchema(name) => one(create_schema(name)),
        Change::CreateExtension(e) => one(create_extension(e)),
        Change::CreateType(t) => one(create_type(t)?),
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
        Change::CreateTable(t) => one(create_table(t)?),
        Change::DropTable(t) => one(format!("DROP TABLE IF EXISTS {}", t.sql())),
        Change::AddColumn { table, column } => one(format!(
            "ALTER TABLE {} ADD COLUMN {}",
            table.sql(),
            column_sql(table, column)?
        )),
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
            let ty = checked(|| format!("the type of {table}.{column}"), sql_type)?;
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
        } => one(match default {
            Some(d) => format!(
                "ALTER TABLE {} ALTER COLUMN {} SET DEFAULT {}",
                table.sql(),
                q(column),
                checked(|| format!("the default of {table}.{column}"), d)?
            ),
            None => format!(
                "ALTER TABLE {} ALTER COLUMN {} DROP DEFAULT",
                table.sql(),
                q(column)
            ),
        }),
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
        Change::AddConstraint(c) => one(add_constraint(c)?),
        Change::DropConstraint { table, name } => one(format!(
            "ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}",
            table.sql(),
            q(name)
        )),
        Change::AddIndex(i) => one(create_index(i)?),
        Change::DropIndex { table, name } => one(format!(
            "DROP INDEX IF EXISTS {}.{}",
            q(&table.schema),
            q(name)
        )),
    }
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

fn create_sequence(s: &SequenceDef) -> Result<String, NotAFragment> {
    let what = || format!("sequence {}.{}", s.schema, s.name);
    Ok(format!(
        "CREATE SEQUENCE IF NOT EXISTS {}.{} AS {} INCREMENT BY {} MINVALUE {} MAXVALUE {} START WITH {}{}",
        q(&s.schema),
        q(&s.name),
        checked(what, &s.data_type)?,
        s.increment,
        s.min,
        s.max,
        s.start,
        if s.cycle { " CYCLE" } else { "" }
    ))
}

fn add_constraint(c: &ConstraintDef) -> Result<String, NotAFragment> {
    Ok(format!(
        "ALTER TABLE {} ADD CONSTRAINT {} {}",
        c.table.sql(),
        q(&c.name),
        checked(
            || format!("constraint {} of {}", c.name, c.table),
            &c.definition
        )?
    ))
}

/// `CREATE [UNIQUE] INDEX` for `i`, rebuilt from its definition's method and columns (what
/// follows `USING`) with the index's own name and table, so a definition cannot name another
/// table; on a partitioned table without `ONLY`, so the partitions get it too.
fn create_index(i: &IndexDef) -> Result<String, NotAFragment> {
    let refused = || NotAFragment {
        what: format!("index {} of {}", i.name, i.table),
    };
    let definition = i.definition.as_str();
    let unique = if definition.starts_with("CREATE UNIQUE INDEX ") {
        true
    } else if definition.starts_with("CREATE INDEX ") {
        false
    } else {
        return Err(refused());
    };
    let on = definition.find(" ON ").ok_or_else(refused)?;
    let using = definition[on..].find(" USING ").ok_or_else(refused)? + on;
    let rest = &definition[using + " USING ".len()..];
    let method: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let columns = &rest[method.len()..];
    if method.is_empty() || !columns.starts_with(' ') || !fragment_is_single(columns) {
        return Err(refused());
    }
    Ok(format!(
        "CREATE {}INDEX {} ON {} USING {}{}",
        if unique { "UNIQUE " } else { "" },
        q(&i.name),
        i.table.sql(),
        q(&method),
        columns
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_cannot_end_the_statement_or_hide_text() {
        for good in [
            "nextval('zoo.keepers_id_seq'::regclass)",
            "upper(name)",
            "CHECK ((VALUE > 0))",
            "'it''s'::text",
            "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
            "(\"weird;name\" > 0)",
            "FOREIGN KEY (a, b) REFERENCES public.t(x, y) DEFERRABLE",
            "FOR VALUES IN ('a', 'b')",
        ] {
            assert!(fragment_is_single(good), "{good}");
        }
        for bad in [
            "0); DROP TABLE x; --",
            "1 -- hidden",
            "1 /* hidden */",
            "'open",
            "(1",
            "1)",
            "$$x$$",
            "CHECK (true), DROP COLUMN important",
            "0, DROP COLUMN id",
        ] {
            assert!(!fragment_is_single(bad), "{bad}");
        }
    }

    #[test]
    fn an_index_is_rebuilt_on_its_own_table_whatever_its_definition_names() {
        let index = |definition: &str| IndexDef {
            table: TableRef::parse("public.people"),
            name: "people_lower".into(),
            definition: definition.into(),
        };
        assert_eq!(
            create_index(&index(
                "CREATE INDEX people_lower ON ONLY public.people USING btree (lower(name)) WHERE (id > 10)"
            ))
            .unwrap(),
            "CREATE INDEX \"people_lower\" ON \"public\".\"people\" USING \"btree\" (lower(name)) WHERE (id > 10)"
        );
        assert!(create_index(&index(
            "CREATE UNIQUE INDEX x ON maskbus.sync_state USING btree ((1))"
        ))
        .unwrap()
        .contains("ON \"public\".\"people\""));
        assert!(create_index(&index("DROP TABLE people")).is_err());
        assert!(create_index(&index("CREATE INDEX x ON t USING btree (a), DROP x")).is_err());
    }
}
