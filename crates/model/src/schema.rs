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

impl Schema {
    /// The tables it describes, by `schema.table`.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.iter().map(|t| t.table.to_string()).collect()
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
        for partition in &partitions {
            self.without_table(partition);
        }
        self.tables.retain(|t| t.table != *table);
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
