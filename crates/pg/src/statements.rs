//! The one place that writes SQL over user tables from the [`crate::model`]: pages in key order,
//! rows by key, missing-key probes, upserts and the late setting of foreign keys.
//!
//! Every name comes from the catalog (or a policy checked against it) and is quoted here; every
//! value is a bind parameter. Values travel as text and are cast to the column's type
//! (`format_type` spelling) on the server, so one code path carries every type: composite keys of
//! uuid and text, enums, arrays, ranges and the rest.
//!
//! Key cursors are text arrays (`$1::text[]`), compared as a row value
//! (`(t.a, t.b) > ($1[1]::int, $1[2]::text)`), which a btree index on the key serves in order.

use crate::model::{ForeignKey, KeyDef, KeySource, TableRef};
use crate::quote_ident;

/// `t."a"::text, t."b"::text`: each column printed as text, in the given order.
pub fn select_text(columns: &[String]) -> String {
    columns
        .iter()
        .map(|c| format!("t.{}::text", quote_ident(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `t."a", t."b"`: the key columns, for ORDER BY and row comparisons.
pub fn key_row(key: &KeyDef, alias: &str) -> String {
    key.columns
        .iter()
        .map(|c| format!("{alias}.{}", quote_ident(&c.name)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `($n::text[])[1]::integer, ($n::text[])[2]::text`: a text-array parameter as typed key values.
fn cursor_values(key: &KeyDef, param: usize) -> String {
    key.columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("(${param}::text[])[{}]::{}", i + 1, c.sql_type))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(t.a, t.b) > (cursor)`, or, without a cursor, a predicate that only types the parameter.
pub fn after_cursor(key: &KeyDef, param: usize, with_cursor: bool) -> String {
    if with_cursor {
        format!("({}) > ({})", key_row(key, "t"), cursor_values(key, param))
    } else {
        format!("${param}::text[] IS NULL")
    }
}

/// `(t.a, t.b) <= (cursor $param)`: rows up to a range's last key.
pub fn through_cursor(key: &KeyDef, param: usize) -> String {
    format!("({}) <= ({})", key_row(key, "t"), cursor_values(key, param))
}

/// About `$1` percent of `table`'s pages (`TABLESAMPLE SYSTEM`), at most `$2` of their rows
/// (taken before they are ordered, so the cap keeps the sample spread over the table), with
/// `columns` as text, in key order: where a large table is split into ranges.
pub fn sampled_in_key_order(table: &TableRef, key: &KeyDef, columns: &[String]) -> String {
    format!(
        "SELECT {} FROM (SELECT * FROM {} TABLESAMPLE SYSTEM ($1::float8) LIMIT $2) t ORDER BY {}",
        select_text(columns),
        table.sql(),
        key_row(key, "t"),
    )
}

/// The planner's estimates of the rows and the pages of the table in schema `$1` named `$2`,
/// a partitioned table's leaves summed: `reltuples` (NULL when none was ever vacuumed or
/// analyzed) and `relpages`.
pub const ESTIMATED_SIZE: &str = "SELECT (CASE WHEN t.relkind = 'p' THEN
        (SELECT sum(c.reltuples) FROM pg_catalog.pg_partition_tree(t.oid) p
           JOIN pg_catalog.pg_class c ON c.oid = p.relid
          WHERE p.isleaf AND c.reltuples >= 0)
      ELSE nullif(t.reltuples, -1) END)::float8,
      (CASE WHEN t.relkind = 'p' THEN
        (SELECT sum(c.relpages) FROM pg_catalog.pg_partition_tree(t.oid) p
           JOIN pg_catalog.pg_class c ON c.oid = p.relid WHERE p.isleaf)
      ELSE t.relpages END)::float8
    FROM pg_catalog.pg_class t JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
   WHERE n.nspname = $1 AND t.relname = $2";

/// A page in key order: `SELECT columns FROM table t [extra FROM] WHERE (key) > cursor AND
/// (filter) ORDER BY key LIMIT $limit`. The cursor is parameter `$1`; `filter` may use `$2` on.
pub fn page(
    table: &TableRef,
    key: &KeyDef,
    columns: &[String],
    extra_from: &str,
    filter: &str,
    limit_param: usize,
    with_cursor: bool,
) -> String {
    format!(
        "SELECT {} FROM {} t{extra_from} WHERE {} AND ({filter}) ORDER BY {} LIMIT ${limit_param}",
        select_text(columns),
        table.sql(),
        after_cursor(key, 1, with_cursor),
        key_row(key, "t"),
    )
}

/// `(t.a, t.b) IN (...)`: the row's key is one of the keys in the parallel text arrays
/// `$param`, `$param + 1`, ... (one per key column; `unnest` reads each once, where
/// subscripting a long text array would walk it for every element). `IN` hashes the keys, so it
/// serves any key, with or without an index.
pub fn key_in_list(key: &KeyDef, param: usize) -> String {
    let typed: Vec<String> = key
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("k.c{i}::{}", c.sql_type))
        .collect();
    format!(
        "({}) IN (SELECT {} FROM {})",
        key_row(key, "t"),
        typed.join(", "),
        unnest_text(key.columns.len(), param, "k"),
    )
}

/// [`key_in_list`] for a read of `table`'s rows by key: a one-column primary key of integers or
/// uuids on a table that is not partitioned is matched with `= ANY (ARRAY(...))` instead, one
/// ordered scan of the key's index for all the keys, where `IN` probes the index once per key
/// and sorts the rows after (9,885 of a million rows by key: 29 ms against 52-58). Only there:
/// a primary key's index always has the column's collation and operator class, so the server
/// can use it for `=`; the element type is a scalar (`ARRAY` of an array-typed column would make
/// a two-dimensional array); and a partitioned table's partitions are not pruned by an array a
/// subquery builds, so each partition would be probed for every key. Anything else keeps
/// [`key_in_list`].
pub fn key_in_index_list(key: &KeyDef, param: usize, partitioned: bool) -> String {
    match key.columns.as_slice() {
        [column]
            if key.source == KeySource::PrimaryKey
                && !partitioned
                && (column.is_integer() || column.sql_type == "uuid") =>
        {
            format!(
                "t.{} = ANY (ARRAY(SELECT k.c0::{} FROM {}))",
                quote_ident(&column.name),
                column.sql_type,
                unnest_text(1, param, "k"),
            )
        }
        _ => key_in_list(key, param),
    }
}

/// The keys of `table` that are among the keys in `$1`, `$2`, ... (as [`key_in_list`] reads
/// them), as text, in the order pages read the table (`ORDER BY` its key, the key's collations
/// included): the order a producer holds a subset's keys in.
pub fn keys_in_key_order(table: &TableRef, key: &KeyDef) -> String {
    format!(
        "SELECT {} FROM {} t WHERE {} ORDER BY {}",
        select_text(&key.names()),
        table.sql(),
        key_in_list(key, 1),
        key_row(key, "t"),
    )
}

/// `unnest($1::text[], $2::text[]) AS k("c0", "c1")`: parallel text arrays as rows.
fn unnest_text(count: usize, first_param: usize, alias: &str) -> String {
    let arrays: Vec<String> = (0..count)
        .map(|i| format!("${}::text[]", first_param + i))
        .collect();
    let names: Vec<String> = (0..count).map(|i| format!("c{i}")).collect();
    format!(
        "unnest({}) AS {alias}({})",
        arrays.join(", "),
        names.join(", ")
    )
}

/// `(t.x, t.y) = (k.c0::tx, k.c1::ty)` for lookup columns with their types.
fn match_columns(lookup: &[(String, String)], table_alias: &str, values_alias: &str) -> String {
    let left: Vec<String> = lookup
        .iter()
        .map(|(c, _)| format!("{table_alias}.{}", quote_ident(c)))
        .collect();
    let right: Vec<String> = lookup
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| format!("{values_alias}.c{i}::{ty}"))
        .collect();
    format!("({}) = ({})", left.join(", "), right.join(", "))
}

/// The rows of `table` whose `lookup` columns (name, type) equal one of the tuples passed as
/// parallel text arrays `$1..$n`, in key order.
pub fn rows_by(
    table: &TableRef,
    key: &KeyDef,
    columns: &[String],
    lookup: &[(String, String)],
) -> String {
    format!(
        "SELECT {} FROM {} t WHERE EXISTS (SELECT 1 FROM {} WHERE {}) ORDER BY {}",
        select_text(columns),
        table.sql(),
        unnest_text(lookup.len(), 1, "k"),
        match_columns(lookup, "t", "k"),
        key_row(key, "t"),
    )
}

/// The distinct tuples among `$1..$n` (parallel text arrays of `lookup` values) that no row of
/// `table` matches, as text. Tuples with a NULL are left out: they reference nothing.
pub fn missing(table: &TableRef, lookup: &[(String, String)]) -> String {
    let names: Vec<String> = (0..lookup.len()).map(|i| format!("k.c{i}")).collect();
    format!(
        "SELECT DISTINCT {cols} FROM {} WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
        unnest_text(lookup.len(), 1, "k"),
        names
            .iter()
            .map(|n| format!("{n} IS NOT NULL"))
            .collect::<Vec<_>>()
            .join(" AND "),
        table.sql(),
        match_columns(lookup, "p", "k"),
        cols = names.join(", "),
    )
}

/// The distinct values of a foreign key's columns, as text, that its child rows hold and no
/// parent row has (what must come before the key can be added back), at most `$1` of them.
/// Rows with a NULL in the key reference nothing.
pub fn orphans(fk: &ForeignKey) -> String {
    let child: Vec<String> = fk
        .columns
        .iter()
        .map(|c| format!("c.{}", quote_ident(c)))
        .collect();
    let matches: Vec<String> = fk
        .columns
        .iter()
        .zip(&fk.parent_columns)
        .map(|(c, p)| format!("p.{} = c.{}", quote_ident(p), quote_ident(c)))
        .collect();
    format!(
        "SELECT DISTINCT {} FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {}) LIMIT $1",
        child
            .iter()
            .map(|c| format!("{c}::text"))
            .collect::<Vec<_>>()
            .join(", "),
        fk.table.sql(),
        child
            .iter()
            .map(|c| format!("{c} IS NOT NULL"))
            .collect::<Vec<_>>()
            .join(" AND "),
        fk.parent.sql(),
        matches.join(" AND "),
    )
}

/// Deletes the rows of `table` whose key equals one of the tuples passed as parallel text
/// arrays `$1..$n` (one per key column).
pub fn delete_by_key(table: &TableRef, key: &KeyDef) -> String {
    let lookup: Vec<(String, String)> = key
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.sql_type.clone()))
        .collect();
    format!(
        "DELETE FROM {} t WHERE EXISTS (SELECT 1 FROM {} WHERE {})",
        table.sql(),
        unnest_text(lookup.len(), 1, "k"),
        match_columns(&lookup, "t", "k"),
    )
}

/// Sets `columns` to NULL in the rows of `table` whose key equals one of the tuples passed as
/// parallel text arrays (one per key column): the links that close a cycle, cut before its rows
/// are deleted.
pub fn unlink_by_key(table: &TableRef, key: &KeyDef, columns: &[String]) -> String {
    let lookup: Vec<(String, String)> = key
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.sql_type.clone()))
        .collect();
    let sets: Vec<String> = columns
        .iter()
        .map(|c| format!("{} = NULL", quote_ident(c)))
        .collect();
    format!(
        "UPDATE {} t SET {} WHERE EXISTS (SELECT 1 FROM {} WHERE {})",
        table.sql(),
        sets.join(", "),
        unnest_text(lookup.len(), 1, "k"),
        match_columns(&lookup, "t", "k"),
    )
}

/// The rows of `table` with key in (`$1`, `$2`], `columns` as text, in key order, at most `$3`.
/// Without `lower` (`upper`) that end is open and its parameter only typed; `filter` narrows
/// the rows further (`true` for all; a subset's membership). A verify reads each side with it
/// once, and narrows a differing range down with both bounds.
pub fn key_range(
    table: &TableRef,
    key: &KeyDef,
    columns: &[String],
    lower: bool,
    upper: bool,
    filter: &str,
) -> String {
    let upper = if upper {
        format!("({}) <= ({})", key_row(key, "t"), cursor_values(key, 2))
    } else {
        "$2::text[] IS NULL".to_string()
    };
    format!(
        "SELECT {} FROM {} t WHERE {} AND {upper} AND ({filter}) ORDER BY {} LIMIT $3",
        select_text(columns),
        table.sql(),
        after_cursor(key, 1, lower),
        key_row(key, "t"),
    )
}

/// Each text parameter `$1..$n` (text arrays of equal length) cast to its column's type and
/// printed back, in order: how the target will print masked text once it has stored it.
pub fn as_stored(types: &[&str]) -> String {
    let cells: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| format!("k.c{i}::{ty}::text"))
        .collect();
    let arrays: Vec<String> = (0..types.len())
        .map(|i| format!("${}::text[]", i + 1))
        .collect();
    let names: Vec<String> = (0..types.len()).map(|i| format!("c{i}")).collect();
    format!(
        "SELECT {} FROM unnest({}) WITH ORDINALITY AS k({}, n) ORDER BY k.n",
        cells.join(", "),
        arrays.join(", "),
        names.join(", ")
    )
}

/// One row if two rows of `table` share a key value (a key no constraint backs must still be
/// unique, or paging by it would skip rows), none otherwise.
/// `TRUNCATE a, b`: empties tables together (so foreign keys among them do not refuse it).
pub fn truncate(tables: &[&TableRef]) -> String {
    let names: Vec<String> = tables.iter().map(|t| t.sql()).collect();
    format!("TRUNCATE {}", names.join(", "))
}

pub fn duplicate_key(table: &TableRef, key: &KeyDef) -> String {
    format!(
        "SELECT 1 FROM {} t GROUP BY {} HAVING count(*) > 1 LIMIT 1",
        table.sql(),
        key_row(key, "t")
    )
}

/// One row whose key has a value longer than `$1` bytes as text, if any: a key a cursor cannot
/// carry.
pub fn overlong_key(table: &TableRef, key: &KeyDef) -> String {
    let longer: Vec<String> = key
        .columns
        .iter()
        .map(|c| format!("octet_length(t.{}::text) > $1", quote_ident(&c.name)))
        .collect();
    format!(
        "SELECT 1 FROM {} t WHERE {} LIMIT 1",
        table.sql(),
        longer.join(" OR ")
    )
}

/// The first `$1` rows of a table as text, in `order` (column names; the key, or every column).
pub fn first_rows(table: &TableRef, columns: &[String], order: &[String]) -> String {
    let order: Vec<String> = order
        .iter()
        .map(|c| format!("t.{}", quote_ident(c)))
        .collect();
    format!(
        "SELECT {} FROM {} t ORDER BY {} LIMIT $1",
        select_text(columns),
        table.sql(),
        order.join(", ")
    )
}

/// The exact number of rows of a table.
pub fn count_rows(table: &TableRef) -> String {
    format!("SELECT count(*) FROM {}", table.sql())
}

/// `DROP INDEX` of index `name` of `table` (an index lies in its table's schema). Run only once
/// the catalog said the index is that table's (by the table's oid): an index is never dropped by
/// schema and name alone, whatever table it belongs to.
pub fn drop_index_of(table: &TableRef, name: &str) -> String {
    format!(
        "DROP INDEX {}",
        TableRef::new(table.schema.clone(), name).sql()
    )
}

/// Whether a table holds any row.
pub fn has_rows(table: &TableRef) -> String {
    format!("SELECT EXISTS (SELECT 1 FROM {})", table.sql())
}

/// Moves sequence `$1` (by name) past the largest value of `column`, never back.
pub fn move_sequence_past(table: &TableRef, column: &str) -> String {
    format!(
        "SELECT setval($1::text::regclass, m.top)
           FROM (SELECT max({})::bigint AS top FROM {}) m
          WHERE m.top IS NOT NULL
            AND m.top > coalesce(pg_sequence_last_value($1::text::regclass), 0)",
        quote_ident(column),
        table.sql()
    )
}

/// Every distinct non-NULL value of one column, as text (the audit's exact-match inventory).
pub fn distinct_values(table: &TableRef, column: &str) -> String {
    let column = quote_ident(column);
    format!(
        "SELECT DISTINCT {column}::text FROM {} WHERE {column} IS NOT NULL",
        table.sql()
    )
}

/// Up to `$1` non-NULL values of one column, as text: a sample for the detectors.
pub fn sample(table: &TableRef, column: &str) -> String {
    let column = quote_ident(column);
    format!(
        "SELECT t.{column}::text FROM {} t WHERE t.{column} IS NOT NULL LIMIT $1",
        table.sql()
    )
}

/// Up to `$1` rows of `columns` of `table`, each as text (NULL stays NULL): what `policy init`
/// reads a row's values together in.
pub fn sample_rows(table: &TableRef, columns: &[String]) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("t.{}::text", quote_ident(c)))
        .collect();
    format!("SELECT {} FROM {} t LIMIT $1", list.join(", "), table.sql())
}

/// Every row's `columns` as text, read whole (streamed by the caller): the real values the
/// producer's egress guard matches against.
pub fn column_texts(table: &TableRef, columns: &[String]) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("t.{}::text", quote_ident(c)))
        .collect();
    format!("SELECT {} FROM {} t", list.join(", "), table.sql())
}

/// Up to `$2` rows of `columns` as text, spread over the whole table: each row is taken with
/// probability `$1` percent (`TABLESAMPLE BERNOULLI`), and the limit picks among them at
/// random, so rows updated or added at the end of the heap are read as often as the first ones
/// (a limit alone would stop two thirds of the way through).
pub fn spread_sample_rows(table: &TableRef, columns: &[String]) -> String {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("t.{}::text", quote_ident(c)))
        .collect();
    format!(
        "SELECT {} FROM {} t TABLESAMPLE BERNOULLI ($1::float8) ORDER BY random() LIMIT $2",
        list.join(", "),
        table.sql()
    )
}

/// How a page is written into a table.
#[derive(Clone, Debug)]
pub struct Write<'a> {
    pub table: &'a TableRef,
    pub key: &'a KeyDef,
    /// (column, type) in the order of the page's values, parameters `$1..$n` as text arrays.
    pub columns: &'a [(String, String)],
    /// Columns written NULL now and set later ([`set_later`]): foreign keys that close a cycle.
    pub deferred: &'a [String],
    /// Some column is an identity column: insert with `OVERRIDING SYSTEM VALUE`.
    pub identity: bool,
}

/// Inserts the page's rows, or updates the rows with the same key. With a key a constraint
/// backs, `INSERT ... ON CONFLICT (key) DO UPDATE`; with a key named only in the policy, `MERGE`
/// matching on the key.
pub fn upsert(w: &Write<'_>) -> String {
    let names: Vec<String> = w.columns.iter().map(|(c, _)| quote_ident(c)).collect();
    let values: Vec<String> = w
        .columns
        .iter()
        .enumerate()
        .map(|(i, (c, ty))| {
            if w.deferred.contains(c) {
                format!("NULL::{ty}")
            } else {
                format!("u.c{i}::{ty}")
            }
        })
        .collect();
    let source = unnest_text(w.columns.len(), 1, "u");
    let key_names = w.key.names();
    let overriding = if w.identity {
        " OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    let updated: Vec<&String> = names
        .iter()
        .zip(w.columns)
        .filter(|(_, (c, _))| !key_names.contains(c))
        .map(|(n, _)| n)
        .collect();
    if w.key.is_constraint() {
        let on_conflict = if updated.is_empty() {
            "DO NOTHING".to_string()
        } else {
            format!(
                "DO UPDATE SET {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = EXCLUDED.{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "INSERT INTO {} ({}){overriding} SELECT {} FROM {source} ON CONFLICT ({}) {on_conflict}",
            w.table.sql(),
            names.join(", "),
            values.join(", "),
            key_names.iter().map(|k| quote_ident(k)).collect::<Vec<_>>().join(", "),
        )
    } else {
        let on: Vec<String> = key_names
            .iter()
            .map(|k| format!("t.{0} = s.{0}", quote_ident(k)))
            .collect();
        let when_matched = if updated.is_empty() {
            String::new()
        } else {
            format!(
                " WHEN MATCHED THEN UPDATE SET {}",
                updated
                    .iter()
                    .map(|n| format!("{n} = s.{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "MERGE INTO {} t USING (SELECT {} FROM {source}) s ON {}{when_matched} \
             WHEN NOT MATCHED THEN INSERT ({}){overriding} VALUES ({})",
            w.table.sql(),
            values
                .iter()
                .zip(&names)
                .map(|(v, n)| format!("{v} AS {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            on.join(" AND "),
            names.join(", "),
            names
                .iter()
                .map(|n| format!("s.{n}"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

/// Sets `columns` (name, type) from staged links: `links` is a subquery yielding `key text[]` (the
/// row's key values in key order) and `vals text[]` (the values of `columns`, in order).
pub fn set_later(
    table: &TableRef,
    key: &KeyDef,
    columns: &[(String, String)],
    links: &str,
) -> String {
    let sets: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (c, ty))| format!("{} = (l.vals[{}])::{ty}", quote_ident(c), i + 1))
        .collect();
    let key_values: Vec<String> = key
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| format!("(l.key[{}])::{}", i + 1, c.sql_type))
        .collect();
    format!(
        "UPDATE {} t SET {} FROM ({links}) l WHERE ({}) = ({})",
        table.sql(),
        sets.join(", "),
        key_row(key, "t"),
        key_values.join(", "),
    )
}

/// Keyless tables ([`KeySource::RowLocation`]): synced whole each pass as a multiset of rows.
/// The masked rows of one pass are staged in a temporary table of the target table's column
/// types (dropped at commit); both sides' rows are then compared by a hash of their text
/// (`md5` of the row printed by the server, the same types on both sides), and the target is
/// made equal row count by row count: surplus copies deleted by location, missing copies
/// inserted. An unchanged table writes nothing.
pub mod keyless {
    use crate::model::TableRef;
    use crate::quote_ident;

    /// The temporary table a keyless table's masked rows are staged in.
    pub fn stage_table() -> TableRef {
        TableRef::new("pg_temp", "maskbus_keyless_stage")
    }

    /// `CREATE TEMP TABLE ... ON COMMIT DROP AS SELECT <columns> FROM <table> WITH NO DATA`: the
    /// stage, with the target's column types.
    pub fn stage(table: &TableRef, columns: &[String]) -> String {
        format!(
            "CREATE TEMP TABLE {} ON COMMIT DROP AS SELECT {} FROM {} t WITH NO DATA",
            quote_ident(&stage_table().name),
            columns_of("t", columns),
            table.sql(),
        )
    }

    fn columns_of(alias: &str, columns: &[String]) -> String {
        columns
            .iter()
            .map(|c| format!("{alias}.{}", quote_ident(c)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The hash a row of `alias` is compared by: `md5` of the row of `columns` as text.
    fn row_hash(alias: &str, columns: &[String]) -> String {
        format!("md5(ROW({})::text)", columns_of(alias, columns))
    }

    /// Whether a row of `alias` (a scan of `table`) lives in `table` itself or in one of its
    /// partitions: never in an inheritance child someone else made (`CREATE TABLE mine ()
    /// INHERITS (owned)`), whose rows a plain scan of `table` also returns. The plain form is
    /// kept (not `ONLY`) so a partitioned table's rows, which live in its partitions, count.
    fn own_rows(alias: &str, table: &TableRef) -> String {
        let class = format!("'{}'::pg_catalog.regclass", table.sql().replace('\'', "''"));
        format!(
            "({alias}.tableoid = {class} OR {alias}.tableoid IN \
             (SELECT relid FROM pg_catalog.pg_partition_tree({class})))"
        )
    }

    /// Each row hash whose count differs between the stage (the source) and `table`: the hash,
    /// the source's count, the target's count.
    pub fn drift(table: &TableRef, columns: &[String]) -> String {
        format!(
            "SELECT h, coalesce(s.n, 0)::int8, coalesce(d.n, 0)::int8
               FROM (SELECT {} AS h, count(*) AS n FROM {} x GROUP BY 1) s
               FULL JOIN (SELECT {} AS h, count(*) AS n FROM {} y WHERE {} GROUP BY 1) d USING (h)
              WHERE s.n IS DISTINCT FROM d.n",
            row_hash("x", columns),
            stage_table().sql(),
            row_hash("y", columns),
            table.sql(),
            own_rows("y", table),
        )
    }

    /// Deletes from `table` the copies of each row beyond the stage's count of it (by
    /// location: `tableoid` and `ctid`, unique in a partitioned table too), among the rows
    /// whose hash is in `$1` (a `text[]`: those [`drift`] found, so only they are sorted).
    pub fn delete_surplus(table: &TableRef, columns: &[String]) -> String {
        let hash = row_hash("y", columns);
        let staged = row_hash("x", columns);
        format!(
            "DELETE FROM {t} d WHERE (d.tableoid, d.ctid) IN (
               SELECT a.rel, a.loc
                 FROM (SELECT y.tableoid AS rel, y.ctid AS loc, {hash} AS h,
                              row_number() OVER (PARTITION BY {hash}) AS n
                         FROM {t} y WHERE {own} AND {hash} IN (SELECT unnest($1::text[]))) a
                 LEFT JOIN (SELECT {staged} AS h, count(*) AS n FROM {} x
                             WHERE {staged} IN (SELECT unnest($1::text[])) GROUP BY 1) b ON b.h = a.h
                WHERE a.n > coalesce(b.n, 0))",
            stage_table().sql(),
            t = table.sql(),
            own = own_rows("y", table),
        )
    }

    /// Inserts into `table` the copies of each staged row beyond `table`'s count of it, among
    /// the rows whose hash is in `$1` (run after [`delete_surplus`], which leaves no count
    /// above the stage's).
    pub fn insert_missing(table: &TableRef, columns: &[String], identity: bool) -> String {
        let hash = row_hash("x", columns);
        let ours = row_hash("y", columns);
        // The stage's columns under positional names of this statement's own (`c0`, ...): a
        // column of any name, `x` or `h` included, is read as a column, never as the row.
        let staged: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| format!("x.{} AS c{i}", quote_ident(c)))
            .collect();
        let picked: Vec<String> = (0..columns.len()).map(|i| format!("a.c{i}")).collect();
        format!(
            "INSERT INTO {t} ({}){} SELECT {}
               FROM (SELECT {}, {hash} AS h, row_number() OVER (PARTITION BY {hash}) AS n
                       FROM {} x WHERE {hash} IN (SELECT unnest($1::text[]))) a
               LEFT JOIN (SELECT {ours} AS h, count(*) AS n FROM {t} y
                           WHERE {own} AND {ours} IN (SELECT unnest($1::text[])) GROUP BY 1) b
                      ON b.h = a.h
              WHERE a.n > coalesce(b.n, 0)",
            columns
                .iter()
                .map(|c| quote_ident(c))
                .collect::<Vec<_>>()
                .join(", "),
            if identity {
                " OVERRIDING SYSTEM VALUE"
            } else {
                ""
            },
            picked.join(", "),
            staged.join(", "),
            stage_table().sql(),
            t = table.sql(),
            own = own_rows("y", table),
        )
    }

    /// The hash of the row passed as parallel text arrays (`u.c0` ... one per column of
    /// `columns`, each cast to its type): the same as [`row_hash`] of the row the table holds.
    fn passed_hash(columns: &[(String, String)]) -> String {
        let cast: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| format!("u.c{i}::{ty}"))
            .collect();
        format!("md5(ROW({})::text)", cast.join(", "))
    }

    /// A streamed delete of a keyless table: deletes from `table` one copy of each row passed
    /// (`$1`.. parallel `text[]`, one per column of `columns` in order, every column the
    /// target writes), found by the row's hash and deleted by location. A row passed twice
    /// deletes two copies; no statement deletes more rows than it is passed.
    pub fn delete_rows(table: &TableRef, columns: &[(String, String)]) -> String {
        let names: Vec<String> = columns.iter().map(|(c, _)| c.clone()).collect();
        let hash = row_hash("y", &names);
        format!(
            "WITH b AS (SELECT {} AS h, count(*) AS n FROM {} GROUP BY 1)
             DELETE FROM {t} d WHERE (d.tableoid, d.ctid) IN (
               SELECT a.rel, a.loc
                 FROM (SELECT y.tableoid AS rel, y.ctid AS loc, {hash} AS h,
                              row_number() OVER (PARTITION BY {hash}) AS n
                         FROM {t} y WHERE {own} AND {hash} IN (SELECT h FROM b)) a
                 JOIN b ON b.h = a.h
                WHERE a.n <= b.n)",
            passed_hash(columns),
            super::unnest_text(columns.len(), 1, "u"),
            t = table.sql(),
            own = own_rows("y", table),
        )
    }

    /// A streamed insert into a keyless table: every row passed (`$1`.. parallel `text[]`, one
    /// per column of `columns`), duplicates too (there is no key to meet).
    pub fn insert_rows(table: &TableRef, columns: &[(String, String)], identity: bool) -> String {
        let names: Vec<String> = columns.iter().map(|(c, _)| quote_ident(c)).collect();
        let values: Vec<String> = columns
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| format!("u.c{i}::{ty}"))
            .collect();
        format!(
            "INSERT INTO {} ({}){} SELECT {} FROM {}",
            table.sql(),
            names.join(", "),
            if identity {
                " OVERRIDING SYSTEM VALUE"
            } else {
                ""
            },
            values.join(", "),
            super::unnest_text(columns.len(), 1, "u"),
        )
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn streamed_rows_are_found_by_the_same_hash_and_deleted_one_copy_each() {
            let table = TableRef::new("s", "Log \"x\"");
            let columns = vec![
                ("at".to_string(), "date".to_string()),
                ("odd\"col".to_string(), "text".to_string()),
            ];
            let delete = delete_rows(&table, &columns);
            assert!(
                delete.contains("md5(ROW(y.\"at\", y.\"odd\"\"col\")::text)"),
                "{delete}"
            );
            assert!(
                delete.contains("md5(ROW(u.c0::date, u.c1::text)::text)"),
                "{delete}"
            );
            assert!(
                delete.contains("unnest($1::text[], $2::text[]) AS u(c0, c1)"),
                "{delete}"
            );
            assert!(delete.contains("a.n <= b.n"), "{delete}");
            assert!(delete.contains("(d.tableoid, d.ctid) IN"), "{delete}");
            assert_eq!(
                insert_rows(&table, &columns, false),
                "INSERT INTO \"s\".\"Log \"\"x\"\"\" (\"at\", \"odd\"\"col\") SELECT u.c0::date, \
                 u.c1::text FROM unnest($1::text[], $2::text[]) AS u(c0, c1)"
            );
            assert!(insert_rows(&table, &columns, true).contains("OVERRIDING SYSTEM VALUE"));
        }

        #[test]
        fn rows_are_compared_by_their_text_with_every_name_quoted() {
            let table = TableRef::new("s", "Log \"x\"");
            let columns = vec!["at".to_string(), "odd\"col".to_string()];
            let hash = "md5(ROW(y.\"at\", y.\"odd\"\"col\")::text)";
            for sql in [
                drift(&table, &columns),
                delete_surplus(&table, &columns),
                insert_missing(&table, &columns, true),
            ] {
                assert!(sql.contains(hash), "{sql}");
                assert!(sql.contains("\"s\".\"Log \"\"x\"\"\""), "{sql}");
                assert!(
                    sql.contains("\"pg_temp\".\"maskbus_keyless_stage\""),
                    "{sql}"
                );
            }
            assert!(delete_surplus(&table, &columns).contains("(d.tableoid, d.ctid) IN"));
            assert!(insert_missing(&table, &columns, true).contains("OVERRIDING SYSTEM VALUE"));
            assert!(!insert_missing(&table, &columns, false).contains("OVERRIDING"));
            assert_eq!(
                stage(&table, &columns),
                "CREATE TEMP TABLE \"maskbus_keyless_stage\" ON COMMIT DROP AS SELECT t.\"at\", \
                 t.\"odd\"\"col\" FROM \"s\".\"Log \"\"x\"\"\" t WITH NO DATA"
            );
        }
    }
}

/// The CHECK constraints of the table in schema `$1` named `$2`: name, the expression as the
/// server prints it (`pg_get_expr`), and the columns it mentions. What `policy check` evaluates
/// over the masked sample ([`failing_check`]).
pub const CHECKS_OF_TABLE: &str =
    "SELECT c.conname::text, pg_catalog.pg_get_expr(c.conbin, c.conrelid),
        ARRAY(SELECT a.attname::text FROM pg_catalog.unnest(c.conkey) k
                JOIN pg_catalog.pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k)
    FROM pg_catalog.pg_constraint c
    JOIN pg_catalog.pg_class t ON t.oid = c.conrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
   WHERE n.nspname = $1 AND t.relname = $2 AND c.contype = 'c'
   ORDER BY c.conname";

/// What of the tables `$1` (each `schema \x01 name`) no served schema carries, because it runs
/// code or tunes storage: (schema, table, kind, name) of their triggers (with the function each
/// runs), rules, row-level security policies and storage options (names only, never a body or
/// a value). The kinds are `maskbus_model::NotServedKind::from_catalog`'s.
pub const NOT_SERVED_OF_TABLES: &str =
    "WITH t AS (SELECT c.oid, n.nspname::text AS s, c.relname::text AS r, c.reloptions
                 FROM pg_catalog.pg_class c
                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname || E'\\x01' || c.relname = ANY($1))
  SELECT t.s, t.r, 'trigger', tg.tgname::text || ' (runs function ' || tg.tgfoid::regproc::text || ')'
    FROM t JOIN pg_catalog.pg_trigger tg ON tg.tgrelid = t.oid
   WHERE NOT tg.tgisinternal
  UNION ALL
  SELECT t.s, t.r, 'rule', ru.rulename::text
    FROM t JOIN pg_catalog.pg_rewrite ru ON ru.ev_class = t.oid
   WHERE ru.rulename <> '_RETURN'
  UNION ALL
  SELECT t.s, t.r, 'row_security_policy', p.polname::text
    FROM t JOIN pg_catalog.pg_policy p ON p.polrelid = t.oid
  UNION ALL
  SELECT t.s, t.r, 'storage_option', pg_catalog.split_part(o, '=', 1)
    FROM t, pg_catalog.unnest(t.reloptions) o
   ORDER BY 1, 2, 3, 4";

/// Starts the read-only transaction `policy check` evaluates the source's own constraints in:
/// nothing it runs can write, and nothing runs long.
pub const READ_ONLY_CHECKS: &str =
    "BEGIN TRANSACTION READ ONLY; SET LOCAL statement_timeout = '30s'";

/// Whether every value of `$1` (text[]) casts to `sql_type` (`format_type` text from the
/// catalog): an error says one does not.
pub fn casts_to(sql_type: &str) -> String {
    format!("SELECT count(CAST(v AS {sql_type})) FROM pg_catalog.unnest($1::text[]) v")
}

/// How many rows of masked values fail a CHECK: the values of `columns` (name, `format_type`)
/// come as text arrays `$1..$n`, one per column, row by row, are cast to their types under the
/// columns' own names, and `expression` (the source's own `pg_get_expr` text of the constraint,
/// never served or request text) is evaluated over them; a NULL result passes, as in a CHECK.
pub fn failing_check(columns: &[(String, String)], expression: &str) -> String {
    let params: Vec<String> = (1..=columns.len())
        .map(|i| format!("${i}::text[]"))
        .collect();
    let aliases: Vec<String> = (1..=columns.len())
        .map(|i| format!("maskbus_v{i}"))
        .collect();
    let casts: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| {
            format!(
                "CAST(u.maskbus_v{} AS {ty}) AS {}",
                i + 1,
                quote_ident(name)
            )
        })
        .collect();
    format!(
        "SELECT count(*) FROM (SELECT {} FROM pg_catalog.unnest({}) AS u({})) AS maskbus_row WHERE NOT ({expression})",
        casts.join(", "),
        params.join(", "),
        aliases.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::KeyColumn;

    fn key(cols: &[(&str, &str)], source: KeySource) -> KeyDef {
        KeyDef {
            columns: cols
                .iter()
                .map(|(n, t)| KeyColumn {
                    name: n.to_string(),
                    sql_type: t.to_string(),
                })
                .collect(),
            source,
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_one_column_primary_key_of_integers_or_uuids_is_read_by_any_of_an_array_others_by_in() {
        let indexed = key(&[("id", "bigint")], KeySource::PrimaryKey);
        assert_eq!(
            key_in_index_list(&indexed, 5, false),
            "t.\"id\" = ANY (ARRAY(SELECT k.c0::bigint FROM unnest($5::text[]) AS k(c0)))"
        );
        let hostile = key(&[("we\"ird", "uuid")], KeySource::PrimaryKey);
        assert_eq!(
            key_in_index_list(&hostile, 1, false),
            "t.\"we\"\"ird\" = ANY (ARRAY(SELECT k.c0::uuid FROM unnest($1::text[]) AS k(c0)))"
        );
        let by_in = |k: &KeyDef, partitioned| {
            assert_eq!(key_in_index_list(k, 1, partitioned), key_in_list(k, 1));
        };
        // A partitioned table, a unique index (it may have a collation of its own), a key the
        // policy names (no index), an array or text primary key, a composite key.
        by_in(&indexed, true);
        by_in(
            &key(&[("id", "bigint")], KeySource::UniqueIndex("u".into())),
            false,
        );
        by_in(&key(&[("id", "bigint")], KeySource::Policy), false);
        by_in(&key(&[("tags", "integer[]")], KeySource::PrimaryKey), false);
        by_in(&key(&[("code", "text")], KeySource::PrimaryKey), false);
        by_in(
            &key(&[("a", "integer"), ("b", "integer")], KeySource::PrimaryKey),
            false,
        );
        assert_eq!(
            key_in_list(&indexed, 5),
            "(t.\"id\") IN (SELECT k.c0::bigint FROM unnest($5::text[]) AS k(c0))"
        );
    }

    #[test]
    fn kept_keys_are_matched_from_parallel_arrays_and_sorted_by_the_table() {
        let k = key(&[("a", "integer"), ("b", "text")], KeySource::PrimaryKey);
        let t = TableRef::new("zoo", "link");
        assert_eq!(
            key_in_list(&k, 5),
            "(t.\"a\", t.\"b\") IN (SELECT k.c0::integer, k.c1::text FROM unnest($5::text[], $6::text[]) AS k(c0, c1))"
        );
        assert_eq!(
            keys_in_key_order(&t, &k),
            "SELECT t.\"a\"::text, t.\"b\"::text FROM \"zoo\".\"link\" t WHERE (t.\"a\", t.\"b\") IN \
             (SELECT k.c0::integer, k.c1::text FROM unnest($1::text[], $2::text[]) AS k(c0, c1)) ORDER BY t.\"a\", t.\"b\""
        );
    }

    #[test]
    fn deletes_and_ranges_match_the_whole_key() {
        let k = key(&[("a", "integer"), ("b", "text")], KeySource::PrimaryKey);
        let t = TableRef::new("zoo", "link");
        assert_eq!(
            delete_by_key(&t, &k),
            "DELETE FROM \"zoo\".\"link\" t WHERE EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) \
             AS k(c0, c1) WHERE (t.\"a\", t.\"b\") = (k.c0::integer, k.c1::text))"
        );
        assert_eq!(
            unlink_by_key(&t, &k, &s(&["x"])),
            "UPDATE \"zoo\".\"link\" t SET \"x\" = NULL WHERE EXISTS (SELECT 1 FROM unnest($1::text[], $2::text[]) \
             AS k(c0, c1) WHERE (t.\"a\", t.\"b\") = (k.c0::integer, k.c1::text))"
        );
        let open = key_range(&t, &k, &s(&["x"]), false, false, "true");
        assert!(
            open.contains("$1::text[] IS NULL AND $2::text[] IS NULL"),
            "{open}"
        );
        let closed = key_range(&t, &k, &s(&["x"]), true, true, "true");
        assert!(
            closed.contains(
                "(t.\"a\", t.\"b\") <= (($2::text[])[1]::integer, ($2::text[])[2]::text)"
            ),
            "{closed}"
        );
        assert!(closed.starts_with("SELECT t.\"x\"::text FROM"), "{closed}");
        assert!(
            closed.ends_with("ORDER BY t.\"a\", t.\"b\" LIMIT $3"),
            "{closed}"
        );
        assert_eq!(
            as_stored(&["numeric(10,2)", "jsonb"]),
            "SELECT k.c0::numeric(10,2)::text, k.c1::jsonb::text FROM unnest($1::text[], $2::text[]) \
             WITH ORDINALITY AS k(c0, c1, n) ORDER BY k.n"
        );
    }

    #[test]
    fn a_composite_page_compares_row_values_in_key_order() {
        let k = key(&[("a", "integer"), ("b", "text")], KeySource::PrimaryKey);
        let t = TableRef::new("zoo", "link");
        let sql = page(&t, &k, &s(&["a", "b", "x"]), "", "true", 2, true);
        assert_eq!(
            sql,
            "SELECT t.\"a\"::text, t.\"b\"::text, t.\"x\"::text FROM \"zoo\".\"link\" t \
             WHERE (t.\"a\", t.\"b\") > (($1::text[])[1]::integer, ($1::text[])[2]::text) \
             AND (true) ORDER BY t.\"a\", t.\"b\" LIMIT $2"
        );
        let first = page(&t, &k, &s(&["a"]), "", "true", 2, false);
        assert!(first.contains("WHERE $1::text[] IS NULL AND"), "{first}");
    }

    #[test]
    fn upserts_use_on_conflict_or_merge_and_leave_deferred_columns_null() {
        let k = key(&[("id", "uuid")], KeySource::PrimaryKey);
        let t = TableRef::new("public", "staff");
        let cols = vec![
            ("id".to_string(), "uuid".to_string()),
            ("boss".to_string(), "uuid".to_string()),
            ("name".to_string(), "text".to_string()),
        ];
        let deferred = s(&["boss"]);
        let w = Write {
            table: &t,
            key: &k,
            columns: &cols,
            deferred: &deferred,
            identity: true,
        };
        assert_eq!(
            upsert(&w),
            "INSERT INTO \"public\".\"staff\" (\"id\", \"boss\", \"name\") OVERRIDING SYSTEM VALUE \
             SELECT u.c0::uuid, NULL::uuid, u.c2::text FROM unnest($1::text[], $2::text[], $3::text[]) \
             AS u(c0, c1, c2) ON CONFLICT (\"id\") DO UPDATE SET \"boss\" = EXCLUDED.\"boss\", \
             \"name\" = EXCLUDED.\"name\""
        );
        let k = key(&[("id", "uuid")], KeySource::Policy);
        let w = Write {
            key: &k,
            deferred: &[],
            identity: false,
            ..w
        };
        let merge = upsert(&w);
        assert!(
            merge.starts_with(
                "MERGE INTO \"public\".\"staff\" t USING (SELECT u.c0::uuid AS \"id\""
            ),
            "{merge}"
        );
        assert!(
            merge.contains(
                "ON t.\"id\" = s.\"id\" WHEN MATCHED THEN UPDATE SET \"boss\" = s.\"boss\""
            ),
            "{merge}"
        );
        assert!(
            merge.ends_with(
                "INSERT (\"id\", \"boss\", \"name\") VALUES (s.\"id\", s.\"boss\", s.\"name\")"
            ),
            "{merge}"
        );
    }

    #[test]
    fn lookups_match_tuples_of_any_arity() {
        let k = key(&[("id", "bigint")], KeySource::PrimaryKey);
        let t = TableRef::new("public", "p");
        let lookup = vec![
            ("x".to_string(), "integer".to_string()),
            ("y".to_string(), "date".to_string()),
        ];
        let sql = rows_by(&t, &k, &s(&["id"]), &lookup);
        assert!(
            sql.contains("FROM unnest($1::text[], $2::text[]) AS k(c0, c1) WHERE (t.\"x\", t.\"y\") = (k.c0::integer, k.c1::date)"),
            "{sql}"
        );
        let sql = missing(&t, &lookup);
        assert!(
            sql.starts_with("SELECT DISTINCT k.c0, k.c1 FROM unnest"),
            "{sql}"
        );
        assert!(
            sql.contains("k.c0 IS NOT NULL AND k.c1 IS NOT NULL"),
            "{sql}"
        );
    }

    #[test]
    fn links_are_set_by_key() {
        let k = key(&[("a", "integer"), ("b", "text")], KeySource::PrimaryKey);
        let t = TableRef::new("public", "p");
        let sql = set_later(
            &t,
            &k,
            &[("boss".into(), "integer".into())],
            "SELECT key, vals FROM links",
        );
        assert_eq!(
            sql,
            "UPDATE \"public\".\"p\" t SET \"boss\" = (l.vals[1])::integer FROM (SELECT key, vals FROM links) l \
             WHERE (t.\"a\", t.\"b\") = ((l.key[1])::integer, (l.key[2])::text)"
        );
    }

    #[test]
    fn a_check_is_evaluated_over_bind_parameters_cast_under_the_columns_names() {
        let sql = failing_check(
            &[
                ("zip".into(), "text".into()),
                ("Odd \"x\"".into(), "character varying(5)".into()),
            ],
            "(zip ~ '^[0-9]{5}$'::text)",
        );
        assert_eq!(
            sql,
            "SELECT count(*) FROM (SELECT CAST(u.maskbus_v1 AS text) AS \"zip\", \
             CAST(u.maskbus_v2 AS character varying(5)) AS \"Odd \"\"x\"\"\" \
             FROM pg_catalog.unnest($1::text[], $2::text[]) AS u(maskbus_v1, maskbus_v2)) AS maskbus_row \
             WHERE NOT ((zip ~ '^[0-9]{5}$'::text))"
        );
    }
}
