//! Subsets: a small test database that is still whole.
//!
//! A subset is defined on the producer, in a file beside the policy (the producer's `subsets`
//! key), because its conditions run on production and a security reviewer reads them there:
//!
//! ```toml
//! [subsets.texas]
//! where = { customers = "EXISTS (SELECT 1 FROM addresses a WHERE a.customer_id = customers.id AND a.state = 'TX')" }
//! outside = "empty"             # tables outside the closure: "empty" (default) or "whole"
//!
//! [subsets.one_percent]
//! fraction = { customers = 0.01 }
//! seed = "2026"                 # the same rows every run for the same seed (default: the name)
//! follow_down = ["accounts_customer_id_fkey", "transactions_account_id_fkey"]   # default: all
//!
//! [[virtual_foreign_keys]]      # for schemas that lack real ones; followed like real ones
//! name = "notes_customer"
//! table = "notes"
//! columns = ["customer_ref"]
//! parent = "customers"
//! parent_columns = ["id"]
//! ```
//!
//! The consumer asks for a subset by name; no SQL travels on the bus. What the subset holds is
//! computed on the source ([`maskbus_pg::closure`]): the roots, every row reached from them down
//! the "follow down" foreign keys, and every row any of those references, transitively.
//!
//! This module reads the file and decides the closure's shape (pure, [`plan`]); `source.rs`
//! runs it.

mod file;
mod run;

pub use file::{Outside, SubsetDef, SubsetFile, SubsetFileError};
pub use run::{check, plan_report, PlanReport, PlanReportError, SubsetCount, Subsets};
pub(crate) use run::{Members, MembersAsk};

use maskbus_pg::closure::{grow, Closure, ClosureTable, Link, Pick, Root};
use maskbus_pg::{ForeignKey, KeyDef, TableRef};
use std::collections::BTreeSet;

/// A subset's closure, and what becomes of the tables outside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    pub closure: Closure,
    /// Tables of the policy the closure never reaches.
    pub outside: Vec<TableRef>,
    pub outside_rule: Outside,
}

impl Planned {
    /// The closure's index of `table`, when the closure reaches it.
    pub fn index(&self, table: &TableRef) -> Option<usize> {
        self.closure.tables.iter().position(|t| t.table == *table)
    }
}

/// Why a subset cannot be planned against this schema.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SubsetError {
    #[error("no subset named {name:?}: the producer defines {known}")]
    Unknown { name: String, known: String },
    #[error("subset {subset}: {table} is not a table the policy serves; roots must be")]
    RootNotServed { subset: String, table: String },
    #[error("subset {subset}: {table} has no primary key or unique NOT NULL key, so its rows cannot be a subset's roots (they are picked by key); root the subset at a table it references, or give it a key ([maskbus.keys] in the policy)")]
    KeylessRoot { subset: String, table: String },
    #[error("subset {subset}: follow_down names {name:?}, which is no foreign key between tables the policy serves (known: {known})")]
    UnknownForeignKey {
        subset: String,
        name: String,
        known: String,
    },
}

/// Plans subset `name` of `file` over `tables` (the policy's tables with their keys) and
/// `foreign_keys` (the source's, with the file's virtual ones added by the caller). Pure.
pub fn plan(
    file: &SubsetFile,
    name: &str,
    tables: &[(TableRef, KeyDef)],
    foreign_keys: &[ForeignKey],
) -> Result<Planned, SubsetError> {
    let def = file.subsets.get(name).ok_or_else(|| SubsetError::Unknown {
        name: name.to_string(),
        known: file.names().join(", "),
    })?;
    let index = |table: &TableRef| tables.iter().position(|(t, _)| t == table);
    // Foreign keys between served tables only: the consumer has no others. A table without a
    // key (synced whole, as a multiset) is only ever a child: a real foreign key references a
    // unique key, and a virtual one to such a table names no row the closure could keep.
    let links: Vec<(&ForeignKey, Link)> = foreign_keys
        .iter()
        .filter_map(|fk| {
            let parent = index(&fk.parent)?;
            if tables[parent].1.is_keyless() {
                return None;
            }
            Some((
                fk,
                Link {
                    child: index(&fk.table)?,
                    columns: fk.columns.clone(),
                    parent,
                    parent_columns: fk.parent_columns.clone(),
                },
            ))
        })
        .collect();
    if let Some(names) = &def.follow_down {
        for wanted in names {
            if !links.iter().any(|(fk, _)| fk.name == *wanted) {
                let known: BTreeSet<&str> = links.iter().map(|(fk, _)| fk.name.as_str()).collect();
                return Err(SubsetError::UnknownForeignKey {
                    subset: name.to_string(),
                    name: wanted.clone(),
                    known: known.into_iter().collect::<Vec<_>>().join(", "),
                });
            }
        }
    }
    let mut roots = Vec::new();
    for (table, pick) in def.picks(name) {
        let table = TableRef::parse(&maskbus_mask::qualify(&table));
        let at = index(&table).ok_or_else(|| SubsetError::RootNotServed {
            subset: name.to_string(),
            table: table.to_string(),
        })?;
        if tables[at].1.is_keyless() {
            return Err(SubsetError::KeylessRoot {
                subset: name.to_string(),
                table: table.to_string(),
            });
        }
        roots.push(Root { table: at, pick });
    }
    // Tables reached down from the roots, then up from every table reached.
    let follows = |fk: &ForeignKey| {
        def.follow_down
            .as_ref()
            .is_none_or(|n| n.contains(&fk.name))
    };
    let mut down_reached: BTreeSet<usize> = roots.iter().map(|r| r.table).collect();
    grow(&mut down_reached, |reached| {
        links
            .iter()
            .filter(|(fk, l)| follows(fk) && reached.contains(&l.parent))
            .map(|(_, l)| l.child)
            .collect()
    });
    let mut kept = down_reached.clone();
    grow(&mut kept, |reached| {
        links
            .iter()
            .filter(|(_, l)| reached.contains(&l.child))
            .map(|(_, l)| l.parent)
            .collect()
    });
    let down: Vec<Link> = links
        .iter()
        .filter(|(fk, l)| follows(fk) && down_reached.contains(&l.parent))
        .map(|(_, l)| l.clone())
        .collect();
    let up: Vec<Link> = links
        .iter()
        .filter(|(_, l)| kept.contains(&l.child))
        .map(|(_, l)| l.clone())
        .collect();
    Ok(Planned {
        closure: Closure {
            tables: tables
                .iter()
                .map(|(table, key)| ClosureTable {
                    table: table.clone(),
                    key: key.clone(),
                })
                .collect(),
            roots,
            down,
            up,
        },
        outside: tables
            .iter()
            .enumerate()
            .filter(|(i, _)| !kept.contains(i))
            .map(|(_, (t, _))| t.clone())
            .collect(),
        outside_rule: def.outside,
    })
}

impl SubsetDef {
    /// Each root table with how its rows are picked.
    fn picks(&self, name: &str) -> Vec<(String, Pick)> {
        let mut picks: Vec<(String, Pick)> = self
            .condition
            .iter()
            .map(|(t, c)| (t.clone(), Pick::Condition(c.clone())))
            .collect();
        picks.extend(self.fraction.iter().map(|(t, f)| {
            (
                t.clone(),
                Pick::Fraction {
                    fraction: *f,
                    seed: self.seed.clone().unwrap_or_else(|| name.to_string()),
                },
            )
        }));
        picks
    }
}

#[cfg(test)]
mod tests;
