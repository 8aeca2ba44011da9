//! Schema objects: what the producer reads of the policy's tables from the source catalog,
//! what crosses the bus once the mask crate has let it through (`maskbus_mask::schema`), and
//! what the consumer creates in an empty target (`maskbus_pg::ddl`).
//!
//! Expressions (defaults, checks, generated columns, partition bounds, index and constraint
//! definitions) are carried as Postgres's own deparsed text (`pg_get_expr`,
//! `pg_get_constraintdef`, `pg_get_indexdef`), so the target gets exactly what the source
//! says; the consumer never runs that text: it parses each with PostgreSQL's own parser and
//! rebuilds it from an allow-listed tree (`maskbus_pg::ddl`, through `maskbus_sqlguard`). Names
//! are carried bare and quoted where SQL is written.

use crate::TableRef;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

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
    /// What no served schema carries (triggers, rules, row security policies, storage
    /// options): named only, never created, so the consumer's report says what the target
    /// lacks and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_served: Vec<NotServedDef>,
}

/// An object of a served table that the served schema does not carry, by name only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotServedDef {
    pub table: TableRef,
    pub kind: NotServedKind,
    /// Its name (a trigger's with the function it runs), or what the name looks like when the
    /// producer's guard judged it personal.
    pub name: String,
}

/// The kinds of object no served schema carries, each with the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotServedKind {
    Trigger,
    Rule,
    RowSecurityPolicy,
    StorageOption,
}

impl NotServedKind {
    /// The kind as the catalog query names it (`maskbus_pg::statements::NOT_SERVED_OF_TABLES`).
    pub fn from_catalog(kind: &str) -> Option<Self> {
        match kind {
            "trigger" => Some(Self::Trigger),
            "rule" => Some(Self::Rule),
            "row_security_policy" => Some(Self::RowSecurityPolicy),
            "storage_option" => Some(Self::StorageOption),
            _ => None,
        }
    }

    /// The kind in words.
    pub fn label(self) -> &'static str {
        match self {
            Self::Trigger => "trigger",
            Self::Rule => "rule",
            Self::RowSecurityPolicy => "row security policy",
            Self::StorageOption => "storage option",
        }
    }

    /// Why no served schema carries it.
    pub fn why(self) -> &'static str {
        match self {
            Self::StorageOption => "it tunes the source's storage, not the data",
            Self::RowSecurityPolicy => {
                "it runs the source's own expressions on every read, and the target runs no code of the producer's"
            }
            Self::Trigger | Self::Rule => "it runs code, and the target runs no code of the producer's",
        }
    }
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

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConstraintDef {
    pub table: TableRef,
    pub name: String,
    pub kind: ConstraintKind,
    /// As `pg_get_constraintdef` prints it: `PRIMARY KEY (id)`, `FOREIGN KEY ... DEFERRABLE`.
    pub definition: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    /// index, comment and owned sequence belongs to a table it describes. Linear in the size of
    /// the schema: each table is found by name in a map, and each partition chain is walked once
    /// whatever its depth (every table on it takes the root found), so a hostile reply costs no
    /// more than reading it.
    pub fn well_formed(&self, offered: &[String]) -> Result<(), NotWellFormed> {
        let bad = |what: String| Err(NotWellFormed(crate::shorten(&what)));
        let offered: HashSet<&str> = offered.iter().map(String::as_str).collect();
        let index = self.table_index();
        // Each table's root (the table at the top of its partition chain), by position.
        let mut root: Vec<Option<usize>> = vec![None; self.tables.len()];
        let mut on_path = vec![false; self.tables.len()];
        let mut path = Vec::new();
        for start in 0..self.tables.len() {
            path.clear();
            let mut at = start;
            let found = loop {
                if let Some(r) = root[at] {
                    break r;
                }
                if on_path[at] {
                    return bad(format!(
                        "{} is a partition of itself",
                        self.tables[at].table
                    ));
                }
                on_path[at] = true;
                path.push(at);
                match &self.tables[at].partition_of {
                    None => break at,
                    Some((parent, _)) => match index.get(parent) {
                        Some(&p) => at = p,
                        None => {
                            return bad(format!(
                                "{} is a partition of a table not served",
                                self.tables[at].table
                            ))
                        }
                    },
                }
            };
            for &i in &path {
                root[i] = Some(found);
                on_path[i] = false;
            }
            let top = &self.tables[found].table;
            if !offered.contains(top.to_string().as_str()) {
                return bad(format!("{top} is not a table the producer serves"));
            }
        }
        let has = |t: &TableRef| index.contains_key(t);
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
        for n in &self.not_served {
            if !has(&n.table) {
                return bad(format!("a {} is on a table not served", n.kind.label()));
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

    /// Each table's position by name (the first description of a name, as a search in order
    /// would find it).
    fn table_index(&self) -> HashMap<&TableRef, usize> {
        let mut index = HashMap::with_capacity(self.tables.len());
        for (i, t) in self.tables.iter().enumerate() {
            index.entry(&t.table).or_insert(i);
        }
        index
    }

    /// `tables` and every partition below them, down each chain (a cycle ends where it closes),
    /// parents before their partitions, each once: one walk over the schema.
    fn with_partitions(&self, tables: &[TableRef]) -> Vec<TableRef> {
        let mut partitions: HashMap<&TableRef, Vec<&TableRef>> = HashMap::new();
        for t in &self.tables {
            if let Some((parent, _)) = &t.partition_of {
                if *parent != t.table {
                    partitions.entry(parent).or_default().push(&t.table);
                }
            }
        }
        let mut seen: HashSet<&TableRef> = HashSet::new();
        let mut order = Vec::new();
        let mut todo: Vec<&TableRef> = tables.iter().rev().collect();
        while let Some(table) = todo.pop() {
            if !seen.insert(table) {
                continue;
            }
            order.push(table.clone());
            if let Some(below) = partitions.get(table) {
                todo.extend(below.iter().rev());
            }
        }
        order
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
        self.keep_all_from(old, std::slice::from_ref(table));
    }

    /// [`Schema::keep_from`] for each of `tables`, in one pass over both schemas.
    pub fn keep_all_from(&mut self, old: &Schema, tables: &[TableRef]) {
        let order = old.with_partitions(tables);
        let kept: HashSet<&TableRef> = order.iter().collect();
        self.tables.retain(|t| !kept.contains(&t.table));
        self.constraints.retain(|c| !kept.contains(&c.table));
        self.indexes.retain(|i| !kept.contains(&i.table));
        let mut described: HashMap<&TableRef, Vec<&TableDef>> = HashMap::new();
        for t in old.tables.iter().filter(|t| kept.contains(&t.table)) {
            described.entry(&t.table).or_default().push(t);
        }
        for table in &order {
            for t in described.get(table).into_iter().flatten() {
                self.tables.push((*t).clone());
            }
        }
        // Its own constraints, and the foreign keys of others that reference it (served
        // schemas leave those out with it), each once.
        let carried: Vec<ConstraintDef> = {
            let mut present: HashSet<&ConstraintDef> = self.constraints.iter().collect();
            old.constraints
                .iter()
                .filter(|c| {
                    kept.contains(&c.table)
                        || referenced(&c.definition).is_some_and(|r| kept.contains(&r))
                })
                .filter(|c| present.insert(c))
                .cloned()
                .collect()
        };
        self.constraints.extend(carried);
        self.indexes.extend(
            old.indexes
                .iter()
                .filter(|i| kept.contains(&i.table))
                .cloned(),
        );
    }

    /// Leaves out `table` and everything that belongs to it or references it (a foreign key of
    /// another table, a partition).
    pub fn without_table(&mut self, table: &TableRef) {
        self.without_tables(std::slice::from_ref(table));
    }

    /// [`Schema::without_table`] for each of `tables`, in one pass over the schema (a chain of
    /// partitions, or a cycle of them, ends where it closes).
    pub fn without_tables(&mut self, tables: &[TableRef]) {
        let gone: HashSet<TableRef> = self.with_partitions(tables).into_iter().collect();
        self.tables.retain(|t| !gone.contains(&t.table));
        self.constraints.retain(|c| {
            !gone.contains(&c.table)
                && !referenced(&c.definition).is_some_and(|r| gone.contains(&r))
        });
        self.indexes.retain(|i| !gone.contains(&i.table));
        self.comments.retain(|c| !gone.contains(&c.table));
        self.not_served.retain(|n| !gone.contains(&n.table));
        for sequence in &mut self.sequences {
            if sequence
                .owned_by
                .as_ref()
                .is_some_and(|(t, _)| gone.contains(t))
            {
                sequence.owned_by = None;
            }
        }
    }
}

/// The table a foreign key's definition (`... REFERENCES schema.table(cols) ...`) names, if any.
fn referenced(definition: &str) -> Option<TableRef> {
    let (_, after) = definition.split_once(" REFERENCES ")?;
    let name = after.split('(').next().unwrap_or_default().trim();
    let bare = |s: &str| s.trim_matches('"').replace("\"\"", "\"");
    Some(match name.rsplit_once('.') {
        Some((s, r)) => TableRef::new(bare(s), bare(r)),
        None => TableRef::new(crate::DEFAULT_SCHEMA, bare(name)),
    })
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

    /// A partition chain `depth` deep under `public.t0`, each table with a foreign key to its
    /// parent and an index: a hostile reply of tens of MB at 100,000 (some 550 bytes of JSON a
    /// table).
    fn chain(depth: usize) -> Schema {
        let t = |i: usize| TableRef::parse(&format!("t{i}"));
        let mut schema = Schema::default();
        for i in 0..depth {
            schema.tables.push(TableDef {
                table: t(i),
                columns: vec![col("id", "integer")],
                partition_key: Some("RANGE (id)".into()),
                partition_of: i
                    .checked_sub(1)
                    .map(|p| (t(p), "FOR VALUES FROM (0) TO (10)".into())),
            });
            schema.indexes.push(IndexDef {
                table: t(i),
                name: format!("t{i}_id"),
                definition: format!("CREATE INDEX t{i}_id ON public.t{i} USING btree (id)"),
            });
            if let Some(p) = i.checked_sub(1) {
                schema.constraints.push(ConstraintDef {
                    table: t(i),
                    name: format!("t{i}_fk"),
                    kind: ConstraintKind::Foreign,
                    definition: format!("FOREIGN KEY (id) REFERENCES t{p}(id)"),
                });
            }
        }
        schema
    }

    /// Each check over a served reply finds tables by name in a map, and walks each partition
    /// chain once: a 100,000-deep chain (some 50 MB of JSON, where a search per step took 30 s of
    /// CPU for 3,000) is judged, compared and cut as fast as it is read. No timing is
    /// asserted: a quadratic walk would keep this test from finishing at all.
    #[test]
    fn a_hundred_thousand_deep_partition_chain_is_judged_in_one_walk() {
        const DEPTH: usize = 100_000;
        let offered = vec!["public.t0".to_string()];
        let mut deep = chain(DEPTH);
        // Listed leaf first: every walk starts at the bottom of the chain.
        deep.tables.reverse();
        assert!(deep.well_formed(&offered).is_ok());
        // A chain whose root the producer does not serve is refused, naming the root.
        let err = deep.well_formed(&["public.t1".into()]).unwrap_err();
        assert!(
            err.to_string().contains("public.t0 is not a table"),
            "{err}"
        );

        // The difference from nothing, and from itself.
        let changes = diff(&Schema::default(), &deep);
        assert_eq!(changes.len(), 3 * DEPTH - 1);
        assert!(diff(&deep, &deep).is_empty());
        // Cutting the chain at its top takes every partition, key and index with it; keeping it
        // from the old description brings them all back.
        let mut cut = deep.clone();
        cut.without_tables(&[TableRef::parse("t0")]);
        assert_eq!(cut, Schema::default());
        cut.keep_all_from(&deep, &[TableRef::parse("t0")]);
        assert_eq!(cut.tables.len(), DEPTH);
        assert_eq!(cut.tables[0].table, TableRef::parse("t0"), "parents first");
        assert_eq!(cut.constraints.len(), DEPTH - 1);
        assert_eq!(cut.indexes.len(), DEPTH);
        assert!(diff(&cut, &deep).is_empty());

        // A chain whose top is missing.
        let top = deep.tables.pop().unwrap();
        let err = deep.well_formed(&offered).unwrap_err();
        assert!(
            err.to_string()
                .contains("t1 is a partition of a table not served"),
            "{err}"
        );
        // A cycle at the bottom of the chain: the top made a partition of the leaf.
        let leaf = TableRef::parse(&format!("t{}", DEPTH - 1));
        deep.tables.push(TableDef {
            partition_of: Some((leaf.clone(), "DEFAULT".into())),
            ..top
        });
        let err = deep.well_formed(&offered).unwrap_err();
        assert!(err.to_string().contains("partition of itself"), "{err}");
        // Cut at the leaf, the cycle ends where it closes.
        deep.without_table(&leaf);
        assert_eq!(deep, Schema::default());
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
/// Every object is looked up by name in a map (the first of a name, as a search in order would
/// find it), so the difference costs about the size of the two schemas, whatever `served` holds.
pub fn diff(target: &Schema, served: &Schema) -> Vec<Change> {
    let mut changes = Vec::new();
    // What a target's catalog read of the served tables does not show (schemas, extensions and
    // sequences elsewhere) is made with IF NOT EXISTS: asking for it again changes nothing.
    let schemas: HashSet<&String> = target.schemas.iter().collect();
    for name in served.schemas.iter().filter(|n| !schemas.contains(n)) {
        changes.push(Change::CreateSchema(name.clone()));
    }
    let extensions: HashSet<(&String, &String)> = target
        .extensions
        .iter()
        .map(|e| (&e.name, &e.schema))
        .collect();
    for e in served
        .extensions
        .iter()
        .filter(|e| !extensions.contains(&(&e.name, &e.schema)))
    {
        changes.push(Change::CreateExtension(e.clone()));
    }
    let mut types: HashMap<(&String, &String), &TypeDef> = HashMap::new();
    for t in &target.types {
        types.entry((&t.schema, &t.name)).or_insert(t);
    }
    for t in &served.types {
        match types.get(&(&t.schema, &t.name)) {
            None => changes.push(Change::CreateType(t.clone())),
            Some(existing) => {
                if let (TypeKind::Enum { labels: have }, TypeKind::Enum { labels: want }) =
                    (&existing.kind, &t.kind)
                {
                    let have: HashSet<&String> = have.iter().collect();
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
    let sequences: HashSet<(&String, &String)> = target
        .sequences
        .iter()
        .map(|q| (&q.schema, &q.name))
        .collect();
    for q in &served.sequences {
        if !sequences.contains(&(&q.schema, &q.name)) {
            changes.push(Change::CreateSequence(q.clone()));
        }
    }
    let target_tables = target.table_index();
    let served_tables = served.table_index();
    for t in &served.tables {
        let Some(existing) = target_tables.get(&t.table).map(|&i| &target.tables[i]) else {
            changes.push(Change::CreateTable(t.clone()));
            continue;
        };
        if t.partition_of.is_some() {
            continue; // a partition's columns are its parent's
        }
        columns_diff(&t.table, existing, t, &mut changes);
    }
    // Tables no longer served (partitions go with their parent), and partitions dropped from a
    // parent still served.
    for t in &target.tables {
        if served_tables.contains_key(&t.table) {
            continue;
        }
        let parent_served = t
            .partition_of
            .as_ref()
            .is_some_and(|(p, _)| served_tables.contains_key(p));
        if t.partition_of.is_none() || parent_served {
            changes.push(Change::DropTable(t.table.clone()));
        }
    }
    // Constraints and indexes: dropped when gone or different, added when new or different.
    let served_constraints: HashSet<(&TableRef, &String, &String)> = served
        .constraints
        .iter()
        .map(|c| (&c.table, &c.name, &c.definition))
        .collect();
    for c in &target.constraints {
        let kept = served_constraints.contains(&(&c.table, &c.name, &c.definition));
        // A foreign key to a table the sync does not carry is not served, and stays.
        let outside = c.kind == ConstraintKind::Foreign
            && !referenced(&c.definition).is_some_and(|r| served_tables.contains_key(&r));
        if !kept && !outside && served_tables.contains_key(&c.table) {
            changes.push(Change::DropConstraint {
                table: c.table.clone(),
                name: c.name.clone(),
            });
        }
    }
    let served_indexes: HashSet<(&TableRef, &String, &String)> = served
        .indexes
        .iter()
        .map(|i| (&i.table, &i.name, &i.definition))
        .collect();
    for i in &target.indexes {
        let kept = served_indexes.contains(&(&i.table, &i.name, &i.definition));
        if !kept && served_tables.contains_key(&i.table) {
            changes.push(Change::DropIndex {
                table: i.table.clone(),
                name: i.name.clone(),
            });
        }
    }
    // A new table's constraints go after every table is made (a foreign key between two new
    // ones), non-foreign first as served.
    let target_constraints: HashSet<(&TableRef, &String, &String)> = target
        .constraints
        .iter()
        .map(|c| (&c.table, &c.name, &c.definition))
        .collect();
    for c in &served.constraints {
        if !target_constraints.contains(&(&c.table, &c.name, &c.definition)) {
            changes.push(Change::AddConstraint(c.clone()));
        }
    }
    let target_indexes: HashSet<(&TableRef, &String, &String)> = target
        .indexes
        .iter()
        .map(|i| (&i.table, &i.name, &i.definition))
        .collect();
    for i in &served.indexes {
        if !target_indexes.contains(&(&i.table, &i.name, &i.definition)) {
            changes.push(Change::AddIndex(i.clone()));
        }
    }
    changes
}

/// The column changes that take `existing` (the target's description of `table`) to `t` (the
/// served one), each column found by name in a map.
fn columns_diff(table: &TableRef, existing: &TableDef, t: &TableDef, changes: &mut Vec<Change>) {
    fn by_name(columns: &[ColumnDef]) -> HashMap<&str, &ColumnDef> {
        let mut map = HashMap::with_capacity(columns.len());
        for c in columns {
            map.entry(c.name.as_str()).or_insert(c);
        }
        map
    }
    let old_columns = by_name(&existing.columns);
    let new_columns = by_name(&t.columns);
    let gone: Vec<&ColumnDef> = existing
        .columns
        .iter()
        .filter(|c| !new_columns.contains_key(c.name.as_str()))
        .collect();
    let new: Vec<&ColumnDef> = t
        .columns
        .iter()
        .filter(|c| !old_columns.contains_key(c.name.as_str()))
        .collect();
    // A rename keeps the column's type, nullability and default; anything else is a drop and an
    // add (the new column's values then come with the rewrite).
    let mut renamed: Option<(&str, &str)> = None;
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
            renamed = Some((&from.name, &to.name));
        }
    }
    if let Some((from, to)) = renamed {
        changes.push(Change::RenameColumn {
            table: table.clone(),
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    for c in gone
        .iter()
        .filter(|c| renamed.is_none_or(|(f, _)| f != c.name))
    {
        changes.push(Change::DropColumn {
            table: table.clone(),
            column: c.name.clone(),
        });
    }
    for c in new
        .iter()
        .filter(|c| renamed.is_none_or(|(_, to)| to != c.name))
    {
        changes.push(Change::AddColumn {
            table: table.clone(),
            column: (*c).clone(),
        });
    }
    for c in &t.columns {
        let Some(old) = old_columns.get(c.name.as_str()).or_else(|| {
            renamed
                .filter(|(_, to)| *to == c.name)
                .and_then(|(from, _)| old_columns.get(from))
        }) else {
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
