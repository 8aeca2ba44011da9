//! The SQL of a subset's closure: which rows of each table a referentially complete subset
//! holds, computed on the source in one statement.
//!
//! One recursive CTE `rel` over rows `(t, k, s)`: `t` a table's index in [`Closure::tables`],
//! `k` its key as text, `s` how the row came in. `kept` is its rows `(t, k)` without repeats.
//! - Roots (`s = 0`, a condition or a keyed-hash fraction of the key) and the rows found from
//!   them along the "down" foreign keys, from parent to child (`s = 1`: the accounts of kept
//!   customers, their cards, their transactions), are followed down.
//! - Every kept row's foreign keys must hold, so its parents come in too (`s = 2`) and, in
//!   turn, their own parents, never their children (else one shared parent would pull in all
//!   of production). A row found going down names its parents in the same step, from the child
//!   row just read; a root or a parent is looked up once by its key for them (and so is a row
//!   found going down whose key the policy names: several rows may share it).
//!
//! `UNION` (not `UNION ALL`) drops a row met twice, so cycles and self-references end. Each
//! round's rows are named once (`d`) and every foreign key is a step joined to them as a set:
//! the server probes the parent's key (always indexed) or the child's foreign key columns where
//! an index serves them, and hashes the round's rows and scans the child once per round where
//! none does (a step per row would scan it once per row). `maskbus subset plan` shows the cost
//! before anything moves. The work is the server's; the producer only streams pages of it.

use crate::model::{KeyDef, TableRef};
use crate::quote_ident;

/// How a row of `rel` came in (its `s`): a root, found going down from a root, or a parent of a
/// kept row.
const ROOT: u8 = 0;
const FOUND: u8 = 1;
const PARENT: u8 = 2;

/// One table of the closure, with the key its rows are named by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosureTable {
    pub table: TableRef,
    pub key: KeyDef,
}

/// How a root table's rows are chosen.
#[derive(Clone, Debug, PartialEq)]
pub enum Pick {
    /// A SQL boolean expression over the table's columns (written by the producer's operator,
    /// checked against the live schema; the table is named by its own name inside it).
    Condition(String),
    /// The rows whose keyed hash of the key falls below `fraction`: the same rows every run for
    /// the same seed. The seed is letters, digits, `_` and `-` only (checked where it is read).
    Fraction { fraction: f64, seed: String },
}

/// A root of the subset.
#[derive(Clone, Debug, PartialEq)]
pub struct Root {
    /// Index into [`Closure::tables`].
    pub table: usize,
    pub pick: Pick,
}

/// A foreign key between two tables of the closure: `child.columns` references
/// `parent.parent_columns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    pub child: usize,
    pub columns: Vec<String>,
    pub parent: usize,
    pub parent_columns: Vec<String>,
}

/// A subset's closure over its tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Closure {
    pub tables: Vec<ClosureTable>,
    pub roots: Vec<Root>,
    /// Followed from parent to child from the roots.
    pub down: Vec<Link>,
    /// Followed from child to parent from every kept row.
    pub up: Vec<Link>,
}

fn cells(alias: &str, columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| format!("{alias}.{}", quote_ident(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a."id"::text, ...`: each key column of row `alias` as text.
fn text_cells(alias: &str, key: &KeyDef) -> Vec<String> {
    key.columns
        .iter()
        .map(|c| format!("{alias}.{}::text", quote_ident(&c.name)))
        .collect()
}

/// `ARRAY[a."id"::text, ...]`: a row's key as the closure names it.
fn key_array(alias: &str, key: &KeyDef) -> String {
    format!("ARRAY[{}]::text[]", text_cells(alias, key).join(", "))
}

/// `(d.k[1])::bigint, (d.k[2])::text`: a closure row's key cast back to the key's types.
fn typed_key(row: &str, key: &KeyDef) -> String {
    key.columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("({row}.k[{}])::{}", i + 1, c.sql_type))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A key as the text its keyed hash is taken of: the text of `ARRAY[a::text, ...]` (`{1,2}`).
/// Spelled out for keys of integers, whose text never needs an array's quotes (the same text
/// without building and printing an array for every row of the root table).
fn key_text(alias: &str, key: &KeyDef) -> String {
    if !key.columns.iter().all(|c| c.is_integer()) {
        return format!("{}::text", key_array(alias, key));
    }
    format!(
        "'{{' || {} || '}}'",
        text_cells(alias, key).join(" || ',' || ")
    )
}

/// Whether a key's keyed hash, its md5's first 32 bits as a number in `0..2^32`, falls below
/// `threshold`: those 32 bits as 8 lowercase hex digits compared as bytes with the threshold's.
fn key_hash_below(alias: &str, key: &KeyDef, seed: &str, threshold: u64) -> String {
    if threshold > u64::from(u32::MAX) {
        return "true".into();
    }
    format!(
        "substr(md5('{seed}:' || {}), 1, 8) COLLATE \"C\" < '{threshold:08x}'",
        key_text(alias, key)
    )
}

impl Closure {
    fn root_select(&self, root: &Root) -> String {
        let table = &self.tables[root.table];
        let alias = quote_ident(&table.table.name);
        let filter = match &root.pick {
            Pick::Condition(condition) => format!("({condition})"),
            Pick::Fraction { fraction, seed } => {
                let threshold = (fraction.clamp(0.0, 1.0) * 4_294_967_296.0).round() as u64;
                key_hash_below(&alias, &table.key, seed, threshold)
            }
        };
        format!(
            "SELECT {}::int AS t, {} AS k, {ROOT} AS s FROM {} AS {alias} WHERE {filter}",
            root.table,
            key_array(&alias, &table.key),
            table.table.sql(),
        )
    }

    /// The links up from `child`, in their order.
    fn up_from(&self, child: usize) -> Vec<&Link> {
        self.up.iter().filter(|l| l.child == child).collect()
    }

    /// The parents of child row `c` along `links` (all of them from `c`'s table), each read
    /// as `alias` by the link's columns: rows `(t, k, s)` with `s = 2`.
    fn parents(&self, links: &[&Link], alias: &str) -> Vec<String> {
        links
            .iter()
            .map(|link| {
                let parent = &self.tables[link.parent];
                format!(
                    "SELECT {}::int AS t, {} AS k, {PARENT} AS s FROM {} {alias} WHERE ({}) = ({})",
                    link.parent,
                    key_array(alias, &parent.key),
                    parent.table.sql(),
                    cells(alias, &link.parent_columns),
                    cells("c", &link.columns),
                )
            })
            .collect()
    }

    /// One step down along `link`: from a row `d` of the parent that goes down (a root, or a
    /// row found going down) to the child rows that reference it, each with its parents along
    /// the links up from the child, read from the child row in hand. When the link
    /// references the parent's key itself (the usual foreign key to a primary key), the
    /// child's columns are matched to `d`'s key directly: `d` was read from the parent in this
    /// statement, so joining the parent again would find only `d`.
    ///
    /// A child without a key (synced whole, as a multiset) is never a row of `rel`: nothing
    /// could name it. Its rows found going down bring only their other parents in (`None`
    /// when it has none to bring), as a keyed child's would; which of its rows the subset
    /// holds is [`Self::member`]'s to say, from the rows its parents went down from.
    fn step_down(&self, link: &Link) -> Option<String> {
        let (parent, child) = (&self.tables[link.parent], &self.tables[link.child]);
        let keyless = child.key.is_keyless();
        let by_parent_key = parent.key.names() == link.parent_columns;
        let (from, matched) = if by_parent_key {
            (
                format!("{} c", child.table.sql()),
                cells("c", &link.columns),
            )
        } else {
            (
                format!(
                    "{} c JOIN {} p ON ({}) = ({})",
                    child.table.sql(),
                    parent.table.sql(),
                    cells("c", &link.columns),
                    cells("p", &link.parent_columns),
                ),
                key_row("p", &parent.key),
            )
        };
        let found = format!(
            "{}::int AS t, {} AS k, {FOUND} AS s",
            link.child,
            key_array("c", &child.key)
        );
        // A key named in the policy need not be unique: the child row in hand is then one of
        // several with its key, so its parents are left to the step up, which reads them all.
        // Along the link just come down by the parent's key, the parent is `d` itself, whose
        // parents are followed already (from a root or a parent by the step up, from a row
        // found going down when it was found): naming it again would only look it up once per
        // child row (9,689 index probes of accounts for the 1% subset's transactions).
        let ups = if child.key.is_constraint() || keyless {
            self.up_from(link.child)
                .into_iter()
                .filter(|up| !(by_parent_key && *up == link))
                .collect()
        } else {
            Vec::new()
        };
        if keyless && ups.is_empty() {
            return None;
        }
        let (select, from) = if ups.is_empty() {
            (found, from)
        } else {
            let mut rows = if keyless {
                Vec::new()
            } else {
                vec![format!("SELECT {found}")]
            };
            rows.extend(self.parents(&ups, "q"));
            (
                "x.t, x.k, x.s".to_string(),
                format!("{from} CROSS JOIN LATERAL ({}) x", rows.join(" UNION ALL ")),
            )
        };
        Some(format!(
            "SELECT {select} FROM d, {from} WHERE d.t = {} AND d.s <> {PARENT} AND ({matched}) = ({})",
            link.parent,
            typed_key("d", &parent.key),
        ))
    }

    /// One step up from a root or a parent `d` of `child` along every link in `links` (all of
    /// them from `child`): the child row is looked up once by its key, then each parent it
    /// references by that link's columns. (A row found going down named its parents already,
    /// unless its key is one the policy names, which may repeat: every row of that key then.)
    fn step_up(&self, child: usize, links: &[&Link]) -> String {
        let rows = &self.tables[child];
        // Rows found going down named their parents, unless their key may repeat.
        let which = if rows.key.is_constraint() {
            format!(" AND d.s <> {FOUND}")
        } else {
            String::new()
        };
        format!(
            "SELECT u.t, u.k, u.s FROM d, {} c CROSS JOIN LATERAL ({}) u WHERE d.t = {child}{which} AND ({}) = ({})",
            rows.table.sql(),
            self.parents(links, "p").join(" UNION ALL "),
            key_row("c", &rows.key),
            typed_key("d", &rows.key),
        )
    }

    /// `WITH RECURSIVE rel(t, k, s) AS (...), kept(t, k) AS (...)`: to stand before a query
    /// that reads `kept`.
    pub fn with_clause(&self) -> String {
        self.with_roots(self.roots_union())
    }

    /// The roots' rows `(t, k, s)`, each once.
    fn roots_union(&self) -> String {
        let roots: Vec<String> = self.roots.iter().map(|r| self.root_select(r)).collect();
        if roots.is_empty() {
            "SELECT NULL::int AS t, NULL::text[] AS k, NULL::int AS s WHERE false".to_string()
        } else {
            roots.join(" UNION ")
        }
    }

    /// The roots alone, at most `$1` of them, as rows `(t int, k text)` (`k` an array's text,
    /// `{1}`), for [`Self::kept_rows_from`]: a statement of its own, which the server may scan
    /// in parallel (a recursive statement it never does).
    pub fn root_rows(&self) -> String {
        format!(
            "SELECT r.t, r.k::text FROM ({}) r LIMIT $1",
            self.roots_union()
        )
    }

    /// Every kept row as `(t, k)`, at most `$1` of them, from roots given as parameters (`$2
    /// int[]` the tables, `$3 text[]` the keys as [`Self::root_rows`] printed them): the rest
    /// of the closure in one statement, which a producer runs once per pass and then reads the
    /// kept rows by key.
    pub fn kept_rows_from(&self) -> String {
        format!(
            "{} SELECT t, k FROM kept LIMIT $1",
            self.with_roots(format!(
                "SELECT r.t, r.k::text[] AS k, {ROOT} AS s FROM unnest($2::int[], $3::text[]) AS r(t, k)"
            ))
        )
    }

    fn with_roots(&self, roots: String) -> String {
        let mut steps: Vec<String> = self.down.iter().filter_map(|l| self.step_down(l)).collect();
        // One lookup of a child row for all its links up, children in first-link order (a
        // keyless child is never a row of `rel`: its rows named their parents going down).
        let mut children: Vec<usize> = Vec::new();
        for link in &self.up {
            if !children.contains(&link.child) && !self.tables[link.child].key.is_keyless() {
                children.push(link.child);
            }
        }
        steps.extend(
            children
                .into_iter()
                .map(|child| self.step_up(child, &self.up_from(child))),
        );
        let rel = if steps.is_empty() {
            format!("rel(t, k, s) AS ({roots})")
        } else {
            // The rows of the last round are named once (`d`), as a recursive term may name
            // `rel` only once, and each step joins them as a set: the server may hash a round's
            // rows and scan a child table once per round where no index serves the foreign key,
            // instead of once per row (a `LATERAL` step per row of `rel` can only loop).
            format!(
                "rel(t, k, s) AS ({roots} UNION (WITH d AS (SELECT t, k, s FROM rel) {}))",
                steps.join(" UNION ALL ")
            )
        };
        format!("WITH RECURSIVE {rel}, kept(t, k) AS (SELECT DISTINCT t, k FROM rel)")
    }

    /// The same closure cut down to what can decide which rows of `table` are kept: the
    /// tables whose kept rows lead up to `table`, and the tables whose roots lead down to
    /// those. A page of one table then never walks a part of the schema that cannot reach it
    /// (a 10,000-deep self-reference elsewhere, say). Rows of `table` come out the same.
    pub fn relevant_to(&self, table: usize) -> Closure {
        let mut kept = std::collections::BTreeSet::from([table]);
        grow(&mut kept, |set| {
            self.up
                .iter()
                .filter(|l| set.contains(&l.parent))
                .map(|l| l.child)
                .collect()
        });
        let mut down = kept.clone();
        grow(&mut down, |set| {
            self.down
                .iter()
                .filter(|l| set.contains(&l.child))
                .map(|l| l.parent)
                .collect()
        });
        Closure {
            tables: self.tables.clone(),
            roots: self
                .roots
                .iter()
                .filter(|r| down.contains(&r.table))
                .cloned()
                .collect(),
            down: self
                .down
                .iter()
                .filter(|l| down.contains(&l.parent) && down.contains(&l.child))
                .cloned()
                .collect(),
            up: self
                .up
                .iter()
                .filter(|l| kept.contains(&l.parent) && kept.contains(&l.child))
                .cloned()
                .collect(),
        }
    }

    /// A predicate true when row `alias` of table `table` is kept (with [`Self::with_clause`]).
    /// A table without a key has no rows in `kept`: its row is kept when it references, along
    /// a link followed down, a row of the parent that goes down (a root or a row found going
    /// down, never a row pulled in as a parent), as a keyed child row is found; a NULL in the
    /// link's columns references nothing.
    pub fn member(&self, table: usize, alias: &str) -> String {
        if self.tables[table].key.is_keyless() {
            return self.keyless_member(table, alias);
        }
        format!(
            "({}) IN (SELECT {} FROM kept m WHERE m.t = {table})",
            key_row(alias, &self.tables[table].key),
            typed_key("m", &self.tables[table].key),
        )
    }

    fn keyless_member(&self, table: usize, alias: &str) -> String {
        let found: Vec<String> = self
            .down
            .iter()
            .filter(|l| l.child == table)
            .map(|link| {
                let parent = &self.tables[link.parent];
                let going_down = format!(
                    "SELECT {} FROM rel m WHERE m.t = {} AND m.s <> {PARENT}",
                    typed_key("m", &parent.key),
                    link.parent,
                );
                let referenced = if parent.key.names() == link.parent_columns {
                    going_down
                } else {
                    format!(
                        "SELECT {} FROM {} p WHERE ({}) IN ({going_down})",
                        cells("p", &link.parent_columns),
                        parent.table.sql(),
                        key_row("p", &parent.key),
                    )
                };
                format!("({}) IN ({referenced})", cells(alias, &link.columns))
            })
            .collect();
        if found.is_empty() {
            return "false".to_string();
        }
        format!("({})", found.join(" OR "))
    }

    /// How many rows of `table` (one without a key) the subset holds: one row, the count.
    pub fn keyless_count(&self, table: usize) -> String {
        let closure = self.relevant_to(table);
        format!(
            "{} SELECT count(*) FROM {} t WHERE {}",
            closure.with_clause(),
            self.tables[table].table.sql(),
            closure.member(table, "t"),
        )
    }

    /// How many rows of each table the subset holds: rows `(t, count)`.
    pub fn counts(&self) -> String {
        format!(
            "{} SELECT t, count(*) FROM kept GROUP BY t",
            self.with_clause()
        )
    }
}

/// Adds to `set` what `more` finds from it until nothing new comes: a fixpoint over tables.
pub fn grow(
    set: &mut std::collections::BTreeSet<usize>,
    more: impl Fn(&std::collections::BTreeSet<usize>) -> Vec<usize>,
) {
    loop {
        let before = set.len();
        set.extend(more(set));
        if set.len() == before {
            return;
        }
    }
}

fn key_row(alias: &str, key: &KeyDef) -> String {
    crate::statements::key_row(key, alias)
}

/// `EXPLAIN SELECT 1 FROM table AS name WHERE (condition)`: plans a root condition without
/// running it, so a typo or an unknown column is refused before anything moves.
pub fn check_condition(table: &TableRef, condition: &str) -> String {
    format!(
        "EXPLAIN SELECT 1 FROM {} AS {} WHERE ({condition})",
        table.sql(),
        quote_ident(&table.name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{KeyColumn, KeySource};

    fn table(name: &str) -> ClosureTable {
        ClosureTable {
            table: TableRef::new("public", name),
            key: KeyDef {
                columns: vec![KeyColumn {
                    name: "id".into(),
                    sql_type: "bigint".into(),
                }],
                source: KeySource::PrimaryKey,
            },
        }
    }

    fn bank() -> Closure {
        let link = |child, column: &str, parent| Link {
            child,
            columns: vec![column.into()],
            parent,
            parent_columns: vec!["id".into()],
        };
        Closure {
            tables: vec![table("customers"), table("accounts")],
            roots: vec![Root {
                table: 0,
                pick: Pick::Condition("customers.id < 10".into()),
            }],
            down: vec![link(1, "customer_id", 0)],
            up: vec![link(1, "customer_id", 0)],
        }
    }

    #[test]
    fn the_closure_goes_down_from_the_roots_then_up_from_every_kept_row() {
        let sql = bank().with_clause();
        assert!(sql.starts_with("WITH RECURSIVE rel(t, k, s) AS (SELECT 0::int AS t, ARRAY[\"customers\".\"id\"::text]::text[] AS k, 0 AS s"));
        assert!(sql
            .contains("FROM \"public\".\"customers\" AS \"customers\" WHERE (customers.id < 10)"));
        // the round's rows are named once, and every step joins them
        assert!(sql.contains("UNION (WITH d AS (SELECT t, k, s FROM rel) SELECT "));
        assert_eq!(
            sql.matches("FROM rel").count(),
            2,
            "rel in the step and in kept"
        );
        // down: from a customer (t = 0) that goes down to its accounts (t = 1), by the
        // customer's key itself; the customer is the row in hand, not named again
        assert!(sql.contains("SELECT 1::int AS t, ARRAY[c.\"id\"::text]::text[] AS k, 1 AS s FROM d, \"public\".\"accounts\" c WHERE d.t = 0 AND d.s <> 2 AND (c.\"customer_id\") = ((d.k[1])::bigint)"));
        // up: from a root or a parent account (t = 1), looked up once, to its customer (t = 0)
        assert!(sql.contains(" UNION ALL SELECT u.t, u.k, u.s FROM d, \"public\".\"accounts\" c CROSS JOIN LATERAL (SELECT 0::int AS t, ARRAY[p.\"id\"::text]::text[] AS k, 2 AS s FROM \"public\".\"customers\" p WHERE (p.\"id\") = (c.\"customer_id\")) u WHERE d.t = 1 AND d.s <> 1 AND (c.\"id\") = ((d.k[1])::bigint)))"));
        assert!(sql.ends_with("kept(t, k) AS (SELECT DISTINCT t, k FROM rel)"));
        assert_eq!(
            bank().member(1, "t"),
            "(t.\"id\") IN (SELECT (m.k[1])::bigint FROM kept m WHERE m.t = 1)"
        );
    }

    #[test]
    fn a_row_found_going_down_names_its_other_parents_from_the_row_in_hand() {
        let mut closure = bank();
        closure.tables.push(table("branches"));
        // accounts (1) also reference branches (2)
        closure.up.push(Link {
            child: 1,
            columns: vec!["branch_id".into()],
            parent: 2,
            parent_columns: vec!["id".into()],
        });
        let sql = closure.with_clause();
        assert!(sql.contains("SELECT x.t, x.k, x.s FROM d, \"public\".\"accounts\" c CROSS JOIN LATERAL (SELECT 1::int AS t, ARRAY[c.\"id\"::text]::text[] AS k, 1 AS s UNION ALL SELECT 2::int AS t, ARRAY[q.\"id\"::text]::text[] AS k, 2 AS s FROM \"public\".\"branches\" q WHERE (q.\"id\") = (c.\"branch_id\")) x WHERE d.t = 0 AND d.s <> 2 AND (c.\"customer_id\") = ((d.k[1])::bigint)"));
        assert!(
            !sql.contains("FROM \"public\".\"customers\" q"),
            "the customer come down from is not looked up again"
        );
    }

    #[test]
    fn a_link_to_other_columns_than_the_key_joins_the_parent_and_a_child_is_looked_up_once() {
        let mut closure = bank();
        closure.tables.push(table("cards"));
        // accounts (1) reference customers (0) by the customer's number, not its key; cards
        // (2) reference accounts by key and customers by key.
        let by = |child, column: &str, parent, parent_column: &str| Link {
            child,
            columns: vec![column.into()],
            parent,
            parent_columns: vec![parent_column.into()],
        };
        closure.down = vec![by(1, "customer_no", 0, "number")];
        closure.up = vec![by(2, "account_id", 1, "id"), by(2, "holder_id", 0, "id")];
        let sql = closure.with_clause();
        assert!(sql.contains("FROM d, \"public\".\"accounts\" c JOIN \"public\".\"customers\" p ON (c.\"customer_no\") = (p.\"number\") WHERE d.t = 0 AND d.s <> 2 AND (p.\"id\") = ((d.k[1])::bigint)"));
        assert_eq!(sql.matches("FROM d, \"public\".\"cards\" c").count(), 1);
        assert!(sql.contains("CROSS JOIN LATERAL (SELECT 1::int AS t, ARRAY[p.\"id\"::text]::text[] AS k, 2 AS s FROM \"public\".\"accounts\" p WHERE (p.\"id\") = (c.\"account_id\") UNION ALL SELECT 0::int AS t, ARRAY[p.\"id\"::text]::text[] AS k, 2 AS s FROM \"public\".\"customers\" p WHERE (p.\"id\") = (c.\"holder_id\")) u WHERE d.t = 2 AND d.s <> 1 AND (c.\"id\") = ((d.k[1])::bigint)"));
    }

    #[test]
    fn a_fraction_is_a_keyed_hash_of_the_key_below_a_threshold() {
        let mut closure = bank();
        closure.roots[0].pick = Pick::Fraction {
            fraction: 0.25,
            seed: "s1".into(),
        };
        let sql = closure.with_clause();
        assert!(sql.contains(
            "substr(md5('s1:' || '{' || \"customers\".\"id\"::text || '}'), 1, 8) COLLATE \"C\" < '40000000'"
        ));
    }

    #[test]
    fn a_table_is_computed_from_the_part_of_the_closure_that_reaches_it() {
        let link = |child, parent| Link {
            child,
            columns: vec!["x".into()],
            parent,
            parent_columns: vec!["id".into()],
        };
        // 0 customers (root) <- 1 accounts; 2 staff (root) <- 2 staff (self-reference);
        // 3 merchants, referenced by 1.
        let closure = Closure {
            tables: ["customers", "accounts", "staff", "merchants"]
                .map(table)
                .to_vec(),
            roots: vec![
                Root {
                    table: 0,
                    pick: Pick::Condition("true".into()),
                },
                Root {
                    table: 2,
                    pick: Pick::Condition("true".into()),
                },
            ],
            down: vec![link(1, 0), link(2, 2)],
            up: vec![link(1, 0), link(2, 2), link(1, 3)],
        };
        let merchants = closure.relevant_to(3);
        assert_eq!(
            merchants.roots.len(),
            1,
            "the staff root cannot reach merchants"
        );
        assert_eq!(merchants.down, vec![link(1, 0)]);
        assert_eq!(merchants.up, vec![link(1, 3)]);
        let staff = closure.relevant_to(2);
        assert_eq!(
            (staff.down.clone(), staff.up.clone()),
            (vec![link(2, 2)], vec![link(2, 2)])
        );
        assert_eq!(staff.roots[0].table, 2);
    }

    #[test]
    fn rows_of_a_key_that_may_repeat_are_looked_up_for_their_parents() {
        let mut closure = bank();
        closure.tables[1].key.source = KeySource::Policy;
        let sql = closure.with_clause();
        // down to accounts without their parents inline ...
        assert!(sql.contains("SELECT 1::int AS t, ARRAY[c.\"id\"::text]::text[] AS k, 1 AS s FROM d, \"public\".\"accounts\" c WHERE d.t = 0 AND d.s <> 2"));
        // ... and up from every account row, found going down or not
        assert!(sql.contains("u WHERE d.t = 1 AND (c.\"id\") = ((d.k[1])::bigint)"));
    }

    #[test]
    fn a_keyless_child_brings_its_other_parents_and_is_kept_by_the_rows_gone_down() {
        let mut closure = bank();
        // visits (2, no key) reference customers (0) and branches (3).
        closure.tables.push(ClosureTable {
            table: TableRef::new("public", "visits"),
            key: KeyDef {
                columns: crate::model::ROW_LOCATION
                    .iter()
                    .map(|(name, sql_type)| KeyColumn {
                        name: name.to_string(),
                        sql_type: sql_type.to_string(),
                    })
                    .collect(),
                source: KeySource::RowLocation,
            },
        });
        closure.tables.push(table("branches"));
        let link = |column: &str, parent| Link {
            child: 2,
            columns: vec![column.into()],
            parent,
            parent_columns: vec!["id".into()],
        };
        closure.down.push(link("customer_id", 0));
        closure
            .up
            .extend([link("customer_id", 0), link("branch_id", 3)]);
        let sql = closure.with_clause();
        // going down to visits names no visit, only the branch each one references
        assert!(sql.contains("SELECT x.t, x.k, x.s FROM d, \"public\".\"visits\" c CROSS JOIN LATERAL (SELECT 3::int AS t, ARRAY[q.\"id\"::text]::text[] AS k, 2 AS s FROM \"public\".\"branches\" q WHERE (q.\"id\") = (c.\"branch_id\")) x WHERE d.t = 0 AND d.s <> 2 AND (c.\"customer_id\") = ((d.k[1])::bigint)"), "{sql}");
        assert!(
            !sql.contains("ctid"),
            "a visit is never a row of rel: {sql}"
        );
        assert!(
            !sql.contains("d.t = 2"),
            "nothing steps up from a visit: {sql}"
        );
        // a visit is kept when it references a customer gone down, not one pulled in as a
        // parent; a NULL references nothing
        assert_eq!(
            closure.member(2, "t"),
            "((t.\"customer_id\") IN (SELECT (m.k[1])::bigint FROM rel m WHERE m.t = 0 AND m.s <> 2))"
        );
        // cut down to the visits, the closure has no step up and none into them
        let cut = closure.relevant_to(2);
        assert!(cut.up.is_empty());
        assert!(!cut.with_clause().contains("visits"));
        assert!(closure
            .keyless_count(2)
            .ends_with("SELECT count(*) FROM \"public\".\"visits\" t WHERE ((t.\"customer_id\") IN (SELECT (m.k[1])::bigint FROM rel m WHERE m.t = 0 AND m.s <> 2))"));
        // by other columns than the parent's key: the parent is read for them
        let mut by_number = closure.clone();
        by_number.down[1].columns = vec!["customer_no".into()];
        by_number.down[1].parent_columns = vec!["number".into()];
        assert_eq!(
            by_number.member(2, "t"),
            "((t.\"customer_no\") IN (SELECT p.\"number\" FROM \"public\".\"customers\" p WHERE (p.\"id\") IN (SELECT (m.k[1])::bigint FROM rel m WHERE m.t = 0 AND m.s <> 2)))"
        );
        // without a link down into it, no visit is kept
        closure.down.clear();
        assert_eq!(closure.member(2, "t"), "false");
    }

    #[test]
    fn without_links_the_ctes_are_not_recursive() {
        let mut closure = bank();
        closure.down.clear();
        closure.up.clear();
        let sql = closure.with_clause();
        assert!(!sql.contains("LATERAL"));
        assert!(sql.starts_with("WITH RECURSIVE rel(t, k, s) AS (SELECT 0::int"));
        assert!(sql.ends_with("0 AS s FROM \"public\".\"customers\" AS \"customers\" WHERE (customers.id < 10)), kept(t, k) AS (SELECT DISTINCT t, k FROM rel)"));
    }
}
