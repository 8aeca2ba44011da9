//! The closure of a subset by its definition, computed in memory from the source's keys and
//! foreign key columns, independent of the closure's SQL: what the subset tests compare the
//! target with. And the target's keys, and a check that every foreign key of a database holds.

use crate::support::*;
use maskbus_mask::Policy;
use maskbus_pg::tokio_postgres::Client;
use maskbus_pg::{Database, ForeignKey, KeyDef, TableRef};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Each table's kept keys (key values as text, in key column order).
pub type Kept = BTreeMap<TableRef, BTreeSet<Vec<String>>>;

/// A table's rows (by index) by the values of some of their columns.
type RowsByValue = HashMap<Vec<String>, Vec<usize>>;

/// The source's tables (with keys) and foreign keys, as the policy serves them.
pub async fn schema(url: &str, policy: &Policy) -> (Vec<(TableRef, KeyDef)>, Vec<ForeignKey>) {
    let target = Database::parse("source", url).unwrap();
    let client = target.connect().await.unwrap();
    let schemas = policy.schemas();
    let infos = maskbus_pg::catalog::tables(&target, &client, &schemas)
        .await
        .unwrap();
    let tables: Vec<(TableRef, KeyDef)> = infos
        .iter()
        .filter(|i| policy.entity(&i.table.to_string()).is_some())
        .map(|i| {
            let key = i.key(policy.key_columns(&i.table.to_string())).unwrap();
            (i.table.clone(), key)
        })
        .collect();
    let served: BTreeSet<&TableRef> = tables.iter().map(|(t, _)| t).collect();
    let fks = maskbus_pg::catalog::foreign_keys(&target, &client, &schemas)
        .await
        .unwrap()
        .into_iter()
        .filter(|fk| served.contains(&fk.table) && served.contains(&fk.parent))
        .collect();
    (tables, fks)
}

/// Every row of `table` as column → text, for the columns asked.
async fn rows_of(
    client: &Client,
    table: &TableRef,
    columns: &[String],
) -> Vec<HashMap<String, Option<String>>> {
    let sql = format!(
        "SELECT {} FROM {} t",
        maskbus_pg::statements::select_text(columns),
        table.sql()
    );
    client
        .query(&sql, &[])
        .await
        .unwrap()
        .iter()
        .map(|r| {
            columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.clone(), r.get::<_, Option<String>>(i)))
                .collect()
        })
        .collect()
}

/// The closure by the definition, in memory: from `roots` down every foreign key (or those
/// named in `follow_down`) from parent to child, then up every foreign key from each kept row
/// to its parent, transitively; parents pulled in are not followed down.
pub async fn oracle(
    url: &str,
    policy: &Policy,
    roots: &[(TableRef, String)],
    follow_down: Option<&[&str]>,
    virtual_fks: &[ForeignKey],
) -> Kept {
    let (tables, mut fks) = schema(url, policy).await;
    fks.extend(virtual_fks.iter().cloned());
    let client = connect(url).await;
    let mut rows = HashMap::new();
    for (table, key) in &tables {
        let mut columns: BTreeSet<String> = key.names().into_iter().collect();
        for fk in &fks {
            if fk.table == *table {
                columns.extend(fk.columns.iter().cloned());
            }
            if fk.parent == *table {
                columns.extend(fk.parent_columns.iter().cloned());
            }
        }
        let columns: Vec<String> = columns.into_iter().collect();
        rows.insert(table.clone(), rows_of(&client, table, &columns).await);
    }
    let key_of = |table: &TableRef, row: &HashMap<String, Option<String>>| -> Vec<String> {
        let key = &tables.iter().find(|(t, _)| t == table).unwrap().1;
        key.names()
            .iter()
            .map(|c| row[c].clone().unwrap())
            .collect()
    };
    let values = |row: &HashMap<String, Option<String>>,
                  columns: &[String]|
     -> Option<Vec<String>> { columns.iter().map(|c| row[c].clone()).collect() };
    let mut kept: Kept = tables
        .iter()
        .map(|(t, _)| (t.clone(), BTreeSet::new()))
        .collect();
    let mut frontier: Vec<(TableRef, usize)> = Vec::new();
    for (table, condition) in roots {
        let root_keys: BTreeSet<Vec<String>> = client
            .query(
                &format!(
                    "SELECT {} FROM {} AS {} WHERE {condition}",
                    {
                        let key = &tables.iter().find(|(t, _)| t == table).unwrap().1;
                        key.names()
                            .iter()
                            .map(|c| {
                                format!(
                                    "{}.{}::text",
                                    maskbus_pg::quote_ident(&table.name),
                                    maskbus_pg::quote_ident(c)
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                    table.sql(),
                    maskbus_pg::quote_ident(&table.name)
                ),
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| (0..r.len()).map(|i| r.get::<_, String>(i)).collect())
            .collect();
        for (i, row) in rows[table].iter().enumerate() {
            if root_keys.contains(&key_of(table, row))
                && kept.get_mut(table).unwrap().insert(key_of(table, row))
            {
                frontier.push((table.clone(), i));
            }
        }
    }
    // Down. Child lookups by value, so the 10,000-deep chain is not quadratic.
    let mut by_child_columns: HashMap<(TableRef, Vec<String>), RowsByValue> = HashMap::new();
    for fk in &fks {
        let index = by_child_columns
            .entry((fk.table.clone(), fk.columns.clone()))
            .or_default();
        if index.is_empty() {
            for (i, r) in rows[&fk.table].iter().enumerate() {
                if let Some(v) = values(r, &fk.columns) {
                    index.entry(v).or_default().push(i);
                }
            }
        }
    }
    while let Some((table, i)) = frontier.pop() {
        let parent_row = &rows[&table][i];
        for fk in fks.iter().filter(|fk| fk.parent == table) {
            if follow_down.is_some_and(|names| !names.contains(&fk.name.as_str())) {
                continue;
            }
            let Some(wanted) = values(parent_row, &fk.parent_columns) else {
                continue;
            };
            let index = &by_child_columns[&(fk.table.clone(), fk.columns.clone())];
            for &j in index.get(&wanted).into_iter().flatten() {
                let child = &rows[&fk.table][j];
                if kept
                    .get_mut(&fk.table)
                    .unwrap()
                    .insert(key_of(&fk.table, child))
                {
                    frontier.push((fk.table.clone(), j));
                }
            }
        }
    }
    // Up, from every kept row.
    let mut frontier: Vec<(TableRef, usize)> = Vec::new();
    for (table, table_rows) in &rows {
        for (i, row) in table_rows.iter().enumerate() {
            if kept[table].contains(&key_of(table, row)) {
                frontier.push((table.clone(), i));
            }
        }
    }
    // Parent lookups by value, so the 10,000-deep chain is not quadratic.
    let mut by_parent_columns: HashMap<(TableRef, Vec<String>), HashMap<Vec<String>, usize>> =
        HashMap::new();
    for fk in &fks {
        by_parent_columns
            .entry((fk.parent.clone(), fk.parent_columns.clone()))
            .or_insert_with(|| {
                rows[&fk.parent]
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| Some((values(r, &fk.parent_columns)?, i)))
                    .collect()
            });
    }
    while let Some((table, i)) = frontier.pop() {
        let child = &rows[&table][i];
        for fk in fks.iter().filter(|fk| fk.table == table) {
            let Some(wanted) = values(child, &fk.columns) else {
                continue;
            };
            let index = &by_parent_columns[&(fk.parent.clone(), fk.parent_columns.clone())];
            if let Some(&j) = index.get(&wanted) {
                let parent = &rows[&fk.parent][j];
                if kept
                    .get_mut(&fk.parent)
                    .unwrap()
                    .insert(key_of(&fk.parent, parent))
                {
                    frontier.push((fk.parent.clone(), j));
                }
            }
        }
    }
    kept
}

/// Each table's keys in the target.
pub async fn target_keys(url: &str, policy: &Policy) -> Kept {
    let (tables, _) = schema(url, policy).await;
    let client = connect(url).await;
    let mut keys = Kept::new();
    for (table, key) in &tables {
        let rows = rows_of(&client, table, &key.names()).await;
        keys.insert(
            table.clone(),
            rows.iter()
                .map(|r| key.names().iter().map(|c| r[c].clone().unwrap()).collect())
                .collect(),
        );
    }
    keys
}

/// Every foreign key of the target holds: no child row points at a missing parent.
pub async fn assert_foreign_keys_hold(url: &str, policy: &Policy) {
    let (_, fks) = schema(url, policy).await;
    let client = connect(url).await;
    for fk in &fks {
        let orphans = client
            .query(&maskbus_pg::statements::orphans(fk), &[&1000i64])
            .await
            .unwrap();
        assert!(orphans.is_empty(), "{}: {} orphans", fk.name, orphans.len());
    }
}
