//! Schema objects: what the producer reads of the policy's tables from the source catalog,
//! what crosses the bus once the mask crate has let it through (`maskbus_mask::schema`), and
//! what the consumer creates in an empty target (`maskbus_pg::ddl`).
//!
//! Expressions (defaults, checks, generated columns, partition bounds, index and constraint
//! definitions) are carried as Postgres's own deparsed text (`pg_get_expr`,
//! `pg_get_constraintdef`, `pg_get_indexdef`), so the target gets exactly what the source
//! says, and the consumer checks each is one fragment before it runs it
//! (`maskbus_pg::ddl::fragment_is_single`). Names are carried bare and quoted where SQL is
//! written.

use crate::TableRef;
use serde::{Deserialize, Serialize};

/// Every object the policy's tables need, in the order they are created.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    /// Schemas holding a table or a type (`public` is there already).
    pub schemas: Vec<String>,
    pub extensions: Vec<Extension>,
    /// Types the columns use, each after the types it uses.
    pub types: Vec<TypeDef>,
    /// Sequences a column default draws from (not the identity columns' own).
    pub sequences: Vec<SequenceDef>,
    /// Partitioned parents before their partitions.
    pub tables: Vec<TableDef>,
    /// Primary and unique keys, checks and exclusions; foreign keys last.
    pub constraints: Vec<ConstraintDef>,
    /// Indexes that back no constraint.
    pub indexes: Vec<IndexDef>,
    /// Only those the policy keeps (`[maskbus.schema] comments = "keep"`).
    pub comments: Vec<CommentDef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extension {
    pub name: String,
    pub schema: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeDef {
    pub schema: String,
    pub name: String,
    pub kind: TypeKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TypeKind {
    /// Labels in their sort order.
    Enum {
        labels: Vec<String>,
    },
    Domain {
        /// `format_type` of the base type.
        base: String,
        not_null: bool,
        default: Option<String>,
        /// (constraint name, `CHECK (...)` as `pg_get_constraintdef` prints it).
        checks: Vec<(String, String)>,
    },
    /// (attribute, `format_type` of its type).
    Composite {
        attributes: Vec<(String, String)>,
    },
    Range {
        subtype: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceDef {
    pub schema: String,
    pub name: String,
    pub data_type: String,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cycle: bool,
    /// The column that owns it (a `serial`), if any.
    pub owned_by: Option<(TableRef, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDef {
    pub table: TableRef,
    pub columns: Vec<ColumnDef>,
    /// `PARTITION BY ...` of a partitioned table, as `pg_get_partkeydef` prints it.
    pub partition_key: Option<String>,
    /// The parent and the bound (`FOR VALUES ...`, `DEFAULT`) of a partition.
    pub partition_of: Option<(TableRef, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    /// `format_type` of its type: `numeric(12,2)`, `sales.mood[]`.
    pub sql_type: String,
    pub not_null: bool,
    pub default: Option<String>,
    pub identity: Option<Identity>,
    /// The expression of a `GENERATED ALWAYS AS (...) STORED` column.
    pub generated: Option<String>,
    /// A collation other than the type's default.
    pub collation: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    Always,
    ByDefault,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstraintDef {
    pub table: TableRef,
    pub name: String,
    pub kind: ConstraintKind,
    /// As `pg_get_constraintdef` prints it: `PRIMARY KEY (id)`, `FOREIGN KEY ... DEFERRABLE`.
    pub definition: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintKind {
    Primary,
    Unique,
    Check,
    Exclusion,
    Foreign,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexDef {
    pub table: TableRef,
    pub name: String,
    /// As `pg_get_indexdef` prints it: `CREATE [UNIQUE] INDEX name ON schema.table USING ...`.
    pub definition: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommentDef {
    pub table: TableRef,
    /// `None` for the table's own comment.
    pub column: Option<String>,
    pub text: String,
}

/// A received schema that does not hold together: an object of a table it does not describe,
/// a partition of no table (or of itself), a table not among those served.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the served schema does not hold together: {0}")]
pub struct NotWellFormed(String);

impl Schema {
    /// Checks a received schema before anything is made of it: every table is one of `offered`
    /// (`schema.table`) or a partition, down a chain without a cycle, of one; every constraint,
    /// index, comment and owned sequence belongs to a table it describes.
    pub fn well_formed(&self, offered: &[String]) -> Result<(), NotWellFormed> {
        let bad = |what: String| Err(NotWellFormed(crate::shorten(&what)));
        let has = |t: &TableRef| self.tables.iter().any(|d| d.table == *t);
        for t in &self.tables {
            let mut at = t;
            let mut steps = 0;
            while let Some((parent, _)) = &at.partition_of {
                steps += 1;
                if steps > self.tables.len() || parent == &t.table {
                    return bad(format!("{} is a partition of itself", t.table));
                }
                match self.tables.iter().find(|d| d.table == *parent) {
                    Some(p) => at = p,
                    None => {
                        return bad(format!("{} is a partition of a table not served", t.table))
                    }
                }
            }
            if !offered.contains(&at.table.to_string()) {
                return bad(format!("{} is not a table the producer serves", at.table));
            }
        }
        for c in &self.constraints {
            if !has(&c.table) {
                return bad(format!("constraint {} is on a table not served", c.name));
            }
        }
        for i in &self.indexes {
            if !has(&i.table) {
                return bad(format!("index {} is on a table not served", i.name));
            }
        }
        for c in &self.comments {
            if !has(&c.table) {
                return bad("a comment is on a table not served".into());
            }
        }
        for q in &self.sequences {
            if q.owned_by.as_ref().is_some_and(|(t, _)| !has(t)) {
                return bad(format!(
                    "sequence {} is owned by a table not served",
                    q.name
                ));
            }
        }
        Ok(())
    }

    /// The tables it describes, by `schema.table`.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.table.to_string()).collect()
    }

    /// `table` (and its partitions, constraints and indexes) as `old` describes it, in place of
    /// how this one does (or in addition, when this one leaves it out): a table that did not
    /// follow a migration keeps its old description, so that the next difference starts from
    /// what the target holds.
    pub fn keep_from(&mut self, old: &Schema, table: &TableRef) {
        self.keep_from_visiting(old, table, &mut Vec::new());
    }

    fn keep_from_visiting(&mut self, old: &Schema, table: &TableRef, seen: &mut Vec<TableRef>) {
        if seen.contains(table) {
            return;
        }
        seen.push(table.clone());
        let partitions: Vec<TableRef> = old
            .tables
            .iter()
            .filter(|t| t.table != *table)
            .filter(|t| t.partition_of.as_ref().is_some_and(|(p, _)| p == table))
            .map(|t| t.table.clone())
            .collect();
        self.tables.retain(|t| t.table != *table);
        self.constraints.retain(|c| c.table != *table);
        self.indexes.retain(|i| i.table != *table);
        self.tables
            .extend(old.tables.iter().filter(|t| t.table == *table).cloned());
        // Its own constraints, and the foreign keys of others that reference it (served
        // schemas leave those out with it).
        let carried: Vec<ConstraintDef> = old
            .constraints
            .iter()
            .filter(|c| c.table == *table || references(&c.definition, table))
            .filter(|c| !self.constraints.contains(c))
            .cloned()
            .collect();
        self.constraints.extend(carried);
        self.indexes
            .extend(old.indexes.iter().filter(|i| i.table == *table).cloned());
        for partition in &partitions {
            self.keep_from_visiting(old, partition, seen);
        }
    }

    /// Leaves out `table` and everything that belongs to it or references it (a foreign key of
    /// another table, a partition).
    pub fn without_table(&mut self, table: &TableRef) {
        let partitions: Vec<TableRef> = self
            .tables
            .iter()
            .filter(|t| t.partition_of.as_ref().is_some_and(|(p, _)| p == table))
            .map(|t| t.table.clone())
            .collect();
        // Gone before its partitions are visited: a cycle of partitions ends here.
        self.tables.retain(|t| t.table != *table);
        for partition in &partitions {
            self.without_table(partition);
        }
        self.constraints
            .retain(|c| c.table != *table && !references(&c.definition, table));
        self.indexes.retain(|i| i.table != *table);
        self.comments.retain(|c| c.table != *table);
        for sequence in &mut self.sequences {
            if sequence.owned_by.as_ref().is_some_and(|(t, _)| t == table) {
                sequence.owned_by = None;
            }
        }
    }
}

/// Whether a foreign key's definition (`... REFERENCES schema.table(cols) ...`) names `table`.
fn references(definition: &str, table: &TableRef) -> bool {
    let Some((_, after)) = definition.split_once(" REFERENCES ") else {
        return false;
    };
    let name = after.split('(').next().unwrap_or_default().trim();
    let bare = |s: &str| s.trim_matches('"').replace("\"\"", "\"");
    let (schema, rel) = match name.rsplit_once('.') {
        Some((s, r)) => (bare(s), bare(r)),
        None => (crate::DEFAULT_SCHEMA.to_string(), bare(name)),
    };
    schema == table.schema && rel == table.name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(name: &str, sql_type: &str) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            sql_type: sql_type.into(),
            not_null: false,
            default: None,
            identity: None,
            generated: None,
            collation: None,
        }
    }

    fn one_table(columns: Vec<ColumnDef>) -> Schema {
        Schema {
            tables: vec![TableDef {
                table: TableRef::parse("t"),
                columns,
                partition_key: None,
                partition_of: None,
            }],
            ..Schema::default()
        }
    }

    #[test]
    fn the_diff_adds_drops_renames_and_retypes_columns_and_says_which_rewrite_rows() {
        let target = one_table(vec![
            col("id", "integer"),
            col("old", "text"),
            col("n", "integer"),
        ]);
        let renamed = one_table(vec![
            col("id", "integer"),
            col("new", "text"),
            col("n", "integer"),
        ]);
        let changes = diff(&target, &renamed);
        assert_eq!(
            changes,
            vec![Change::RenameColumn {
                table: TableRef::parse("t"),
                from: "old".into(),
                to: "new".into()
            }]
        );
        assert!(changes[0].rewrites_rows());
        let grown = one_table(vec![
            col("id", "integer"),
            col("n", "bigint"),
            col("extra", "text"),
        ]);
        let described: Vec<String> = diff(&target, &grown).iter().map(Change::describe).collect();
        assert_eq!(
            described,
            vec![
                "drop column public.t.old",
                "add column public.t.extra",
                "change the type of public.t.n to bigint"
            ]
        );
        assert!(diff(&target, &target).is_empty());
        let mut with_enum = target.clone();
        with_enum.types.push(TypeDef {
            schema: "public".into(),
            name: "mood".into(),
            kind: TypeKind::Enum {
                labels: vec!["calm".into()],
            },
        });
        let mut more = with_enum.clone();
        more.types[0].kind = TypeKind::Enum {
            labels: vec!["calm".into(), "grumpy".into()],
        };
        assert_eq!(
            diff(&with_enum, &more),
            vec![Change::AddEnumLabel {
                schema: "public".into(),
                name: "mood".into(),
                label: "grumpy".into(),
                after: Some("calm".into()),
                before: None
            }]
        );
    }

    #[test]
    fn a_received_schema_names_only_served_tables_and_no_partition_cycle() {
        let t = |n: &str| TableRef::parse(n);
        let table = |n: &str, of: Option<&str>| TableDef {
            table: t(n),
            columns: Vec::new(),
            partition_key: None,
            partition_of: of.map(|p| (t(p), "DEFAULT".into())),
        };
        let offered = vec!["public.a".to_string()];
        let ok = Schema {
            tables: vec![table("a", None), table("a_1", Some("a"))],
            ..Schema::default()
        };
        assert!(ok.well_formed(&offered).is_ok());
        let cycle = Schema {
            tables: vec![table("z", Some("z"))],
            ..Schema::default()
        };
        assert!(cycle.well_formed(&offered).is_err());
        let mut two = Schema {
            tables: vec![table("x", Some("y")), table("y", Some("x"))],
            ..Schema::default()
        };
        assert!(two.well_formed(&offered).is_err());
        two.without_table(&t("x")); // terminates on a cycle all the same
        let mut elsewhere = ok.clone();
        elsewhere.indexes.push(IndexDef {
            table: t("maskbus.sync_state"),
            name: "i".into(),
            definition: "CREATE INDEX i ON maskbus.sync_state USING btree ((1))".into(),
        });
        assert!(elsewhere.well_formed(&offered).is_err());
        let stranger = Schema {
            tables: vec![table("b", None)],
            ..Schema::default()
        };
        assert!(stranger.well_formed(&offered).is_err());
    }

    #[test]
    fn a_table_left_out_takes_its_partitions_and_the_keys_that_reference_it() {
        let t = |n: &str| TableRef::parse(n);
        let table = |n: &str, of: Option<&str>| TableDef {
            table: t(n),
            columns: Vec::new(),
            partition_key: None,
            partition_of: of.map(|p| (t(p), "DEFAULT".into())),
        };
        let fk = |on: &str, to: &str| ConstraintDef {
            table: t(on),
            name: format!("{on}_fk"),
            kind: ConstraintKind::Foreign,
            definition: format!("FOREIGN KEY (x) REFERENCES {to}(id)"),
        };
        let mut schema = Schema {
            tables: vec![
                table("a", None),
                table("a_2024", Some("a")),
                table("b", None),
            ],
            constraints: vec![fk("b", "a"), fk("b", "sales.\"a\""), fk("a", "b")],
            ..Schema::default()
        };
        schema.without_table(&t("a"));
        assert_eq!(schema.table_names(), vec!["public.b"]);
        assert_eq!(schema.constraints.len(), 1, "{:?}", schema.constraints);
        assert_eq!(
            schema.constraints[0].definition,
            "FOREIGN KEY (x) REFERENCES sales.\"a\"(id)"
        );
    }
}

/// One step from a target's schema to the served one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    CreateSchema(String),
    CreateExtension(Extension),
    CreateType(TypeDef),
    CreateSequence(SequenceDef),
    /// A label the served enum has and the target's lacks, after `after` (or first).
    AddEnumLabel {
        schema: String,
        name: String,
        label: String,
        after: Option<String>,
        /// For a label that goes first: the one it goes before.
        before: Option<String>,
    },
    /// A table the target lacks, with its own constraints and indexes.
    CreateTable(TableDef),
    AddColumn {
        table: TableRef,
        column: ColumnDef,
    },
    DropColumn {
        table: TableRef,
        column: String,
    },
    RenameColumn {
        table: TableRef,
        from: String,
        to: String,
    },
    AlterColumnType {
        table: TableRef,
        column: String,
        sql_type: String,
    },
    SetDefault {
        table: TableRef,
        column: String,
        default: Option<String>,
    },
    SetNotNull {
        table: TableRef,
        column: String,
        not_null: bool,
    },
    AddConstraint(ConstraintDef),
    DropConstraint {
        table: TableRef,
        name: String,
    },
    AddIndex(IndexDef),
    DropIndex {
        table: TableRef,
        name: String,
    },
    /// A table no longer served (the policy stopped naming it).
    DropTable(TableRef),
}

impl Change {
    /// The table it changes (`None` for a type).
    pub fn table(&self) -> Option<&TableRef> {
        match self {
            Change::CreateSchema(_)
            | Change::CreateExtension(_)
            | Change::CreateType(_)
            | Change::CreateSequence(_)
            | Change::AddEnumLabel { .. } => None,
            Change::CreateTable(t) => Some(&t.table),
            Change::DropTable(t) => Some(t),
            Change::AddConstraint(c) => Some(&c.table),
            Change::AddIndex(i) => Some(&i.table),
            Change::AddColumn { table, .. }
            | Change::DropColumn { table, .. }
            | Change::RenameColumn { table, .. }
            | Change::AlterColumnType { table, .. }
            | Change::SetDefault { table, .. }
            | Change::SetNotNull { table, .. }
            | Change::DropConstraint { table, .. }
            | Change::DropIndex { table, .. } => Some(table),
        }
    }

    /// Whether the table's watermark goes with it: its rows must be written again (a new
    /// column's values, which the source may have filled in without a new row version; a
    /// renamed or retyped column's), or the table is gone.
    pub fn rewrites_rows(&self) -> bool {
        matches!(
            self,
            Change::AddColumn { .. }
                | Change::RenameColumn { .. }
                | Change::AlterColumnType { .. }
                | Change::DropTable(_)
        )
    }

    /// What it does, in words (names only).
    pub fn describe(&self) -> String {
        match self {
            Change::CreateSchema(name) => format!("create schema {name}"),
            Change::CreateExtension(e) => format!("create extension {}", e.name),
            Change::CreateType(t) => format!("create type {}.{}", t.schema, t.name),
            Change::CreateSequence(q) => format!("create sequence {}.{}", q.schema, q.name),
            Change::AddEnumLabel { schema, name, .. } => {
                format!("add a label to enum {schema}.{name}")
            }
            Change::CreateTable(t) => format!("create table {}", t.table),
            Change::DropTable(t) => format!("drop table {t}"),
            Change::AddColumn { table, column } => format!("add column {table}.{}", column.name),
            Change::DropColumn { table, column } => format!("drop column {table}.{column}"),
            Change::RenameColumn { table, from, to } => {
                format!("rename column {table}.{from} to {to}")
            }
            Change::AlterColumnType {
                table,
                column,
                sql_type,
            } => format!("change the type of {table}.{column} to {sql_type}"),
            Change::SetDefault { table, column, .. } => {
                format!("change the default of {table}.{column}")
            }
            Change::SetNotNull {
                table,
                column,
                not_null,
            } => format!(
                "{} NOT NULL on {table}.{column}",
                if *not_null { "set" } else { "drop" }
            ),
            Change::AddConstraint(c) => format!("add constraint {} on {}", c.name, c.table),
            Change::DropConstraint { table, name } => format!("drop constraint {name} on {table}"),
            Change::AddIndex(i) => format!("create index {} on {}", i.name, i.table),
            Change::DropIndex { table, name } => format!("drop index {name} on {table}"),
        }
    }
}

/// The changes that take `target` (the target's schema of the served tables) to `served`, in
/// the order they apply: types, tables, columns, then constraints and indexes (dropped first).
/// A column dropped and another added at the same place with the same type is a rename.
/// Comments, identity and generated expressions of existing columns are not compared.
pub fn diff(target: &Schema, served: &Schema) -> Vec<Change> {
    let mut changes = Vec::new();
    // What a target's catalog read of the served tables does not show (schemas, extensions and
    // sequences elsewhere) is made with IF NOT EXISTS: asking for it again changes nothing.
    for name in served
        .schemas
        .iter()
        .filter(|n| !target.schemas.contains(n))
    {
        changes.push(Change::CreateSchema(name.clone()));
    }
    for e in served
        .extensions
        .iter()
        .filter(|e| !target.extensions.contains(e))
    {
        changes.push(Change::CreateExtension(e.clone()));
    }
    for t in &served.types {
        match target
            .types
            .iter()
            .find(|x| x.schema == t.schema && x.name == t.name)
        {
            None => changes.push(Change::CreateType(t.clone())),
            Some(existing) => {
                if let (TypeKind::Enum { labels: have }, TypeKind::Enum { labels: want }) =
                    (&existing.kind, &t.kind)
                {
                    for (i, label) in want.iter().enumerate() {
                        if !have.contains(label) {
                            changes.push(Change::AddEnumLabel {
                                schema: t.schema.clone(),
                                name: t.name.clone(),
                                label: label.clone(),
                                after: i.checked_sub(1).map(|p| want[p].clone()),
                                before: (i == 0).then(|| want.get(1).cloned()).flatten(),
                            });
                        }
                    }
                }
            }
        }
    }
    for q in &served.sequences {
        if !target
            .sequences
            .iter()
            .any(|x| x.schema == q.schema && x.name == q.name)
        {
            changes.push(Change::CreateSequence(q.clone()));
        }
    }
    for t in &served.tables {
        let Some(existing) = target.tables.iter().find(|x| x.table == t.table) else {
            changes.push(Change::CreateTable(t.clone()));
            continue;
        };
        if t.partition_of.is_some() {
            continue; // a partition's columns are its parent's
        }
        let table = &t.table;
        let gone: Vec<&ColumnDef> = existing
            .columns
            .iter()
            .filter(|c| !t.columns.iter().any(|s| s.name == c.name))
            .collect();
        let new: Vec<&ColumnDef> = t
            .columns
            .iter()
            .filter(|c| !existing.columns.iter().any(|s| s.name == c.name))
            .collect();
        let mut renamed: Vec<(&str, &str)> = Vec::new();
        // A rename keeps the column's type, nullability and default; anything else is a drop
        // and an add (the new column's values then come with the rewrite).
        if gone.len() == 1
            && new.len() == 1
            && gone[0].sql_type == new[0].sql_type
            && gone[0].not_null == new[0].not_null
            && gone[0].default == new[0].default
        {
            let (from, to) = (gone[0], new[0]);
            let before = existing
                .columns
                .iter()
                .take_while(|c| c.name != from.name)
                .count();
            let after = t.columns.iter().take_while(|c| c.name != to.name).count();
            if before == after {
                renamed.push((&from.name, &to.name));
            }
        }
        for (from, to) in &renamed {
            changes.push(Change::RenameColumn {
                table: table.clone(),
                from: from.to_string(),
                to: to.to_string(),
            });
        }
        for c in gone
            .iter()
            .filter(|c| !renamed.iter().any(|(f, _)| *f == c.name))
        {
            changes.push(Change::DropColumn {
                table: table.clone(),
                column: c.name.clone(),
            });
        }
        for c in new
            .iter()
            .filter(|c| !renamed.iter().any(|(_, t)| *t == c.name))
        {
            changes.push(Change::AddColumn {
                table: table.clone(),
                column: (*c).clone(),
            });
        }
        for c in &t.columns {
            let Some(old) = existing
                .columns
                .iter()
                .find(|o| o.name == c.name)
                .or_else(|| {
                    renamed
                        .iter()
                        .find(|(_, to)| *to == c.name)
                        .and_then(|(from, _)| existing.columns.iter().find(|o| o.name == *from))
                })
            else {
                continue;
            };
            if old.sql_type != c.sql_type {
                changes.push(Change::AlterColumnType {
                    table: table.clone(),
                    column: c.name.clone(),
                    sql_type: c.sql_type.clone(),
                });
            }
            if old.default != c.default && c.generated.is_none() && c.identity.is_none() {
                changes.push(Change::SetDefault {
                    table: table.clone(),
                    column: c.name.clone(),
                    default: c.default.clone(),
                });
            }
            if old.not_null != c.not_null && c.identity.is_none() {
                changes.push(Change::SetNotNull {
                    table: table.clone(),
                    column: c.name.clone(),
                    not_null: c.not_null,
                });
            }
        }
    }
    // Tables no longer served (partitions go with their parent), and partitions dropped from a
    // parent still served.
    for t in &target.tables {
        if served.tables.iter().any(|s| s.table == t.table) {
            continue;
        }
        let parent_served = t
            .partition_of
            .as_ref()
            .is_some_and(|(p, _)| served.tables.iter().any(|s| s.table == *p));
        if t.partition_of.is_none() || parent_served {
            changes.push(Change::DropTable(t.table.clone()));
        }
    }
    // Constraints and indexes: dropped when gone or different, added when new or different.
    for c in &target.constraints {
        let kept = served
            .constraints
            .iter()
            .any(|s| s.table == c.table && s.name == c.name && s.definition == c.definition);
        // A foreign key to a table the sync does not carry is not served, and stays.
        let outside = c.kind == ConstraintKind::Foreign
            && !served
                .tables
                .iter()
                .any(|t| references(&c.definition, &t.table));
        if !kept && !outside && served.tables.iter().any(|t| t.table == c.table) {
            changes.push(Change::DropConstraint {
                table: c.table.clone(),
                name: c.name.clone(),
            });
        }
    }
    for i in &target.indexes {
        let kept = served
            .indexes
            .iter()
            .any(|s| s.table == i.table && s.name == i.name && s.definition == i.definition);
        if !kept && served.tables.iter().any(|t| t.table == i.table) {
            changes.push(Change::DropIndex {
                table: i.table.clone(),
                name: i.name.clone(),
            });
        }
    }
    // A new table's constraints go after every table is made (a foreign key between two new
    // ones), non-foreign first as served.
    for c in &served.constraints {
        let there = target
            .constraints
            .iter()
            .any(|t| t.table == c.table && t.name == c.name && t.definition == c.definition);
        if !there {
            changes.push(Change::AddConstraint(c.clone()));
        }
    }
    for i in &served.indexes {
        let there = target
            .indexes
            .iter()
            .any(|t| t.table == i.table && t.name == i.name && t.definition == i.definition);
        if !there {
            changes.push(Change::AddIndex(i.clone()));
        }
    }
    changes
}
