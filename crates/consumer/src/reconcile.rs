//! The pure half of the reconcile loop (`crate::schema`): which of a table's schema changes go
//! before its rows and which wait for them, and what the target is compared from.
//!
//! A pass converges the target's real catalog on the served schema in two steps, as a
//! declarative schema tool plans a diff: first what rows can go into (types, tables, columns,
//! widenings, dropped constraints and NOT NULLs, the primary key), then the rows, then what the
//! rows must satisfy (NOT NULL, UNIQUE, CHECK, EXCLUDE, FOREIGN KEY, a unique index), once they
//! do. A column added NOT NULL without a default goes in nullable: the table's rows are written
//! again and fill it, and the NOT NULL follows them.

use maskbus_model::schema::{Change, ConstraintDef, ConstraintKind, IndexDef, Schema, TableDef};
use maskbus_model::TableRef;
use std::collections::{BTreeSet, HashMap};

/// When a change runs in a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the table's rows: what they go into.
    BeforeRows,
    /// After them: what they must satisfy.
    AfterRows,
}

/// When `change` runs; `new_table` when the same pass creates its table (empty, so what rows
/// must satisfy is made with it, except a foreign key, whose parent may be new too).
pub fn phase(change: &Change, new_table: bool) -> Phase {
    let after = match change {
        Change::SetNotNull { not_null, .. } => *not_null,
        Change::AddConstraint(c) => match c.kind {
            ConstraintKind::Foreign => true,
            ConstraintKind::Primary => false,
            _ => !new_table,
        },
        Change::AddIndex(i) => !new_table && is_unique_index(&i.definition),
        _ => false,
    };
    if after {
        Phase::AfterRows
    } else {
        Phase::BeforeRows
    }
}

/// Whether an index definition (as `pg_get_indexdef` prints it) makes a unique index.
fn is_unique_index(definition: &str) -> bool {
    definition.trim_start().starts_with("CREATE UNIQUE")
}

/// `change` as it runs before the rows: a column added NOT NULL with nothing to fill it (no
/// default, identity or generation) is added nullable.
pub fn before_rows(change: &Change) -> Change {
    match change {
        Change::AddColumn { table, column }
            if column.not_null
                && column.default.is_none()
                && column.identity.is_none()
                && column.generated.is_none() =>
        {
            let mut column = column.clone();
            column.not_null = false;
            Change::AddColumn {
                table: table.clone(),
                column,
            }
        }
        other => other.clone(),
    }
}

/// The order after-rows changes run in: NOT NULLs, unique indexes, then constraints other than
/// foreign keys, then foreign keys (which may need a unique index made just before).
pub fn after_rows_rank(change: &Change) -> u8 {
    match change {
        Change::SetNotNull { .. } => 0,
        Change::AddIndex(_) => 1,
        Change::AddConstraint(c) if c.kind != ConstraintKind::Foreign => 2,
        _ => 3,
    }
}

/// What the served schema is compared with: the target's real catalog (`present`) for every
/// table but those maskbus adopted (`adopted`: made by hand or `pg_dump`, whose own differences
/// are never undone), which are described as the served schema they last followed (`followed`),
/// so that only a migration's changes reach them.
///
/// An expression maskbus made from a served text reads back from the catalog as Postgres
/// prints it, which need not be the text it was made from (a check over a `varchar` gains
/// casts): an object the target has under the name and kind `followed` gives it, and a default
/// where `followed` has one, are taken as `followed` says, so the same text served again is no
/// change, while one gone, added or served with another text is.
pub fn compared_from(present: &Schema, followed: &Schema, adopted: &BTreeSet<TableRef>) -> Schema {
    let mut from = present.clone();
    let constraints: HashMap<(&TableRef, &str), &ConstraintDef> = followed
        .constraints
        .iter()
        .map(|c| ((&c.table, c.name.as_str()), c))
        .collect();
    for c in &mut from.constraints {
        if let Some(f) = constraints.get(&(&c.table, c.name.as_str())) {
            if f.kind == c.kind {
                c.definition.clone_from(&f.definition);
            }
        }
    }
    let indexes: HashMap<(&TableRef, &str), &IndexDef> = followed
        .indexes
        .iter()
        .map(|i| ((&i.table, i.name.as_str()), i))
        .collect();
    for i in &mut from.indexes {
        if let Some(f) = indexes.get(&(&i.table, i.name.as_str())) {
            i.definition.clone_from(&f.definition);
        }
    }
    let tables: HashMap<&TableRef, &TableDef> =
        followed.tables.iter().map(|t| (&t.table, t)).collect();
    for t in &mut from.tables {
        let Some(f) = tables.get(&t.table) else {
            continue;
        };
        for c in &mut t.columns {
            let followed = f.columns.iter().find(|fc| fc.name == c.name);
            if let Some(fc) = followed {
                if c.default.is_some() && fc.default.is_some() {
                    c.default.clone_from(&fc.default);
                }
            }
        }
    }
    if adopted.is_empty() {
        return from;
    }
    from.tables.retain(|t| !adopted.contains(&t.table));
    from.constraints.retain(|c| !adopted.contains(&c.table));
    from.indexes.retain(|i| !adopted.contains(&i.table));
    from.tables.extend(
        followed
            .tables
            .iter()
            .filter(|t| adopted.contains(&t.table))
            .cloned(),
    );
    from.constraints.extend(
        followed
            .constraints
            .iter()
            .filter(|c| adopted.contains(&c.table))
            .cloned(),
    );
    from.indexes.extend(
        followed
            .indexes
            .iter()
            .filter(|i| adopted.contains(&i.table))
            .cloned(),
    );
    from
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_model::schema::ColumnDef;

    fn t() -> TableRef {
        TableRef::parse("public.users")
    }

    fn constraint(kind: ConstraintKind) -> Change {
        Change::AddConstraint(ConstraintDef {
            table: t(),
            name: "c".into(),
            kind,
            definition: String::new(),
        })
    }

    #[test]
    fn what_rows_must_satisfy_waits_for_them_on_a_table_that_has_rows() {
        assert_eq!(
            phase(&constraint(ConstraintKind::Unique), false),
            Phase::AfterRows
        );
        assert_eq!(
            phase(&constraint(ConstraintKind::Unique), true),
            Phase::BeforeRows
        );
        assert_eq!(
            phase(&constraint(ConstraintKind::Foreign), true),
            Phase::AfterRows
        );
        assert_eq!(
            phase(&constraint(ConstraintKind::Primary), false),
            Phase::BeforeRows
        );
        let not_null = |not_null| Change::SetNotNull {
            table: t(),
            column: "a".into(),
            not_null,
        };
        assert_eq!(phase(&not_null(true), false), Phase::AfterRows);
        assert_eq!(phase(&not_null(false), false), Phase::BeforeRows);
        let index = |definition: &str| {
            Change::AddIndex(IndexDef {
                table: t(),
                name: "i".into(),
                definition: definition.into(),
            })
        };
        assert_eq!(
            phase(
                &index("CREATE UNIQUE INDEX i ON public.users USING btree (a)"),
                false
            ),
            Phase::AfterRows
        );
        assert_eq!(
            phase(
                &index("CREATE INDEX i ON public.users USING btree (a)"),
                false
            ),
            Phase::BeforeRows
        );
    }

    #[test]
    fn a_required_column_without_a_default_goes_in_nullable() {
        let column = |default: Option<&str>| ColumnDef {
            name: "a".into(),
            sql_type: "integer".into(),
            not_null: true,
            default: default.map(Into::into),
            identity: None,
            generated: None,
            collation: None,
        };
        let add = |c| Change::AddColumn {
            table: t(),
            column: c,
        };
        let Change::AddColumn { column: bare, .. } = before_rows(&add(column(None))) else {
            unreachable!()
        };
        assert!(!bare.not_null);
        let Change::AddColumn {
            column: defaulted, ..
        } = before_rows(&add(column(Some("0"))))
        else {
            unreachable!()
        };
        assert!(defaulted.not_null, "a default fills it");
    }
}
