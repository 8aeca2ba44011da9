//! What the live schema looks like: tables, columns, keys, foreign keys and sequences, read from
//! the catalog into the [`crate::model`].
//!
//! The sync engine and `maskbus policy check` take table and column names from here (and from the
//! policy), never from request text. Partitions are not tables of their own: a partitioned table
//! is read and written through its parent.

use crate::model::{Column, ForeignKey, TableInfo, TableRef};
use crate::{Database, PgError};
use std::collections::BTreeMap;
use tokio_postgres::Client;

/// Every table (plain or partitioned, not a partition) of the given schemas, with its columns and
/// key candidates, in schema then table order.
pub async fn tables(
    target: &Database,
    client: &Client,
    schemas: &[String],
) -> Result<Vec<TableInfo>, PgError> {
    read_tables(target, client, schemas, None).await
}

/// The tables of `schemas`, or only the one named `only` among them: one catalog read either
/// way, so looking one table up does not read the whole schema.
///
/// A column's `data_type` and `max_length` are those of `information_schema.columns` (the
/// SQL standard's name of a built-in type, `ARRAY`, a domain's base type; the length of a
/// `char`, `varchar` or `bit` type), computed from `pg_type` with the view's own expressions:
/// the view checks privileges on every column of the database, which cost 10 ms a read on
/// a small one, a read per pass of every producer.
async fn read_tables(
    target: &Database,
    client: &Client,
    schemas: &[String],
    only: Option<&str>,
) -> Result<Vec<TableInfo>, PgError> {
    let rows = client
        .query(
            "WITH rel AS (
                 SELECT c.oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY($1)
                    AND ($2::text IS NULL OR c.relname = $2))
             SELECT r.schema, r.name, r.relkind = 'p', a.attname::text,
                    format_type(a.atttypid, a.atttypmod),
                    CASE WHEN bt.typelem <> 0 AND bt.typlen = -1 THEN 'ARRAY'
                         WHEN bt.typnamespace = 'pg_catalog'::regnamespace THEN format_type(bt.oid, NULL)
                         ELSE format_type(a.atttypid, NULL) END,
                    CASE WHEN tm.typmod = -1 THEN NULL
                         WHEN bt.oid IN ('bpchar'::regtype, 'varchar'::regtype) THEN tm.typmod - 4
                         WHEN bt.oid IN ('bit'::regtype, 'varbit'::regtype) THEN tm.typmod END,
                    NOT a.attnotnull, a.attgenerated <> '', a.attidentity <> '',
                    EXISTS (SELECT 1 FROM pg_opclass o JOIN pg_am m ON m.oid = o.opcmethod
                             WHERE m.amname = 'btree' AND o.opcdefault
                               AND (o.opcintype = bt.oid
                                    OR (bt.typtype = 'e' AND o.opcintype = 'anyenum'::regtype)
                                    OR (bt.typcategory = 'A' AND o.opcintype = 'anyarray'::regtype)
                                    OR (bt.typtype = 'r' AND o.opcintype = 'anyrange'::regtype)
                                    OR EXISTS (SELECT 1 FROM pg_cast k WHERE k.castsource = bt.oid
                                                  AND k.casttarget = o.opcintype AND k.castmethod = 'b'))),
                    EXISTS (SELECT 1 FROM pg_index i
                             WHERE i.indrelid = r.oid AND i.indisunique AND i.indnkeyatts = 1
                               AND i.indpred IS NULL AND i.indkey[0] = a.attnum)
               FROM rel r
               JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
               JOIN pg_type ty ON ty.oid = a.atttypid
               JOIN pg_type bt ON bt.oid = CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END
               CROSS JOIN LATERAL (SELECT CASE WHEN ty.typtype = 'd' THEN ty.typtypmod ELSE a.atttypmod END AS typmod) tm
              ORDER BY r.schema, r.name, a.attnum",
            &[&schemas, &only],
        )
        .await
        .map_err(|e| target.query_error("reading tables and columns from the catalog", &e))?;
    let mut tables: BTreeMap<TableRef, TableInfo> = BTreeMap::new();
    for r in &rows {
        let table = TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1));
        let info = tables.entry(table.clone()).or_insert_with(|| TableInfo {
            table,
            columns: Vec::new(),
            primary_key: None,
            unique_keys: Vec::new(),
            partitioned: r.get(2),
        });
        info.columns.push(Column {
            name: r.get(3),
            sql_type: r.get(4),
            data_type: r.get(5),
            max_length: r.get::<_, Option<i32>>(6).map(|n| n as usize),
            nullable: r.get(7),
            generated: r.get(8),
            identity: r.get(9),
            orderable: r.get(10),
            unique: r.get(11),
        });
    }
    // Key candidates: the primary key, and unique non-partial indexes on plain NOT NULL columns.
    let keys = client
        .query(
            "SELECT n.nspname::text, c.relname::text, ic.relname::text, i.indisprimary,
                    ARRAY(SELECT a.attname::text FROM unnest(i.indkey[0:i.indnkeyatts - 1]) WITH ORDINALITY u(n, o)
                            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.n ORDER BY u.o),
                    NOT EXISTS (SELECT 1 FROM pg_attribute a
                                 WHERE a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey[0:i.indnkeyatts - 1])
                                   AND NOT a.attnotnull)
               FROM pg_index i
               JOIN pg_class c ON c.oid = i.indrelid
               JOIN pg_class ic ON ic.oid = i.indexrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
                AND n.nspname = ANY($1) AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND ($2::text IS NULL OR c.relname = $2)
              ORDER BY 1, 2, i.indnkeyatts, 3",
            &[&schemas, &only],
        )
        .await
        .map_err(|e| target.query_error("reading keys from pg_index", &e))?;
    for r in &keys {
        let table = TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1));
        let Some(info) = tables.get_mut(&table) else {
            continue;
        };
        let columns: Vec<String> = r.get(4);
        if r.get::<_, bool>(3) {
            info.primary_key = Some(columns);
        } else if r.get::<_, bool>(5) {
            info.unique_keys.push((r.get(2), columns));
        }
    }
    Ok(tables.into_values().collect())
}

/// Foreign keys whose child table is in one of `schemas` (the parent may be anywhere). A key
/// declared on a partition (as some schemas do, partition by partition) is the partitioned
/// table's: child and parent are mapped to their partition roots, and the copies each
/// partition carries count once.
pub async fn foreign_keys(
    target: &Database,
    client: &impl tokio_postgres::GenericClient,
    schemas: &[String],
) -> Result<Vec<ForeignKey>, PgError> {
    let rows = client
        .query(
            "SELECT k.conname::text, cn.nspname::text, c.relname::text, pn.nspname::text, p.relname::text,
                    ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i),
                    ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                            JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i),
                    NOT EXISTS (SELECT 1 FROM pg_attribute a
                                 WHERE a.attrelid = k.conrelid AND a.attnum = ANY(k.conkey) AND a.attnotnull),
                    k.condeferrable
               FROM pg_constraint k
               JOIN pg_class c0 ON c0.oid = k.conrelid
               JOIN pg_class c ON c.oid = CASE WHEN c0.relispartition THEN pg_partition_root(c0.oid) ELSE c0.oid END
               JOIN pg_namespace cn ON cn.oid = c.relnamespace
               JOIN pg_class p0 ON p0.oid = k.confrelid
               JOIN pg_class p ON p.oid = CASE WHEN p0.relispartition THEN pg_partition_root(p0.oid) ELSE p0.oid END
               JOIN pg_namespace pn ON pn.oid = p.relnamespace
              WHERE k.contype = 'f' AND cn.nspname = ANY($1) AND k.conparentid = 0
              ORDER BY 2, 3, 1",
            &[&schemas],
        )
        .await
        .map_err(|e| target.query_error("reading foreign keys from pg_constraint", &e))?;
    let mut keys: Vec<ForeignKey> = Vec::with_capacity(rows.len());
    for r in &rows {
        let key = ForeignKey {
            name: r.get(0),
            table: TableRef::new(r.get::<_, String>(1), r.get::<_, String>(2)),
            parent: TableRef::new(r.get::<_, String>(3), r.get::<_, String>(4)),
            columns: r.get(5),
            parent_columns: r.get(6),
            nullable: r.get(7),
            deferrable: r.get(8),
        };
        let same = |k: &ForeignKey| {
            k.table == key.table
                && k.parent == key.parent
                && k.columns == key.columns
                && k.parent_columns == key.parent_columns
        };
        if !keys.iter().any(same) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// The sequences behind columns of `table` (serial, identity, or a `DEFAULT nextval(...)`), each
/// with its column, as (sequence regclass text, column).
pub async fn sequences(
    target: &Database,
    client: &Client,
    table: &TableRef,
) -> Result<Vec<(String, String)>, PgError> {
    let rows = client
        .query(
            "SELECT DISTINCT s.oid::regclass::text, a.attname::text
               FROM pg_class t
               JOIN pg_namespace n ON n.oid = t.relnamespace
               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
               JOIN pg_depend d ON (d.classid = 'pg_class'::regclass AND d.refobjid = t.oid
                                    AND d.refobjsubid = a.attnum AND d.deptype IN ('a', 'i'))
                               OR (d.classid = 'pg_attrdef'::regclass AND d.objid IN
                                    (SELECT ad.oid FROM pg_attrdef ad WHERE ad.adrelid = t.oid AND ad.adnum = a.attnum)
                                   AND d.refclassid = 'pg_class'::regclass)
               JOIN pg_class s ON s.oid = CASE WHEN d.classid = 'pg_class'::regclass THEN d.objid ELSE d.refobjid END
                              AND s.relkind = 'S'
              WHERE n.nspname = $1 AND t.relname = $2
              ORDER BY 1",
            &[&table.schema, &table.name],
        )
        .await
        .map_err(|e| target.query_error(format!("reading the sequences of {table}"), &e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// One table by name, or `None` when the database has no such table.
pub async fn table(
    target: &Database,
    client: &Client,
    table: &TableRef,
) -> Result<Option<TableInfo>, PgError> {
    Ok(read_tables(
        target,
        client,
        std::slice::from_ref(&table.schema),
        Some(&table.name),
    )
    .await?
    .into_iter()
    .find(|t| &t.table == table))
}

/// The first `limit` rows of `table` in key order, every value as text (for side-by-side
/// displays). The table name is checked against the catalog before it is used.
pub async fn first_rows(
    target: &Database,
    client: &Client,
    table: &TableRef,
    limit: i64,
) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), PgError> {
    let Some(info) = self::table(target, client, table).await? else {
        return Err(target.refusal(
            format!("reading {table}"),
            format!("there is no table {table}"),
        ));
    };
    let columns: Vec<String> = info.columns.iter().map(|c| c.name.clone()).collect();
    let order: Vec<String> = info
        .key(None)
        .map(|k| k.names())
        .unwrap_or_else(|_| columns.clone());
    let sql = crate::statements::first_rows(table, &columns, &order);
    let rows = client
        .query(&sql, &[&limit])
        .await
        .map_err(|e| target.query_error(format!("reading {table}"), &e))?;
    let values = rows
        .iter()
        .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
        .collect();
    Ok((columns, values))
}

/// Rows in `table` (exact count).
pub async fn count_rows(
    target: &Database,
    client: &Client,
    table: &TableRef,
) -> Result<i64, PgError> {
    client
        .query_one(&crate::statements::count_rows(table), &[])
        .await
        .map(|r| r.get(0))
        .map_err(|e| target.query_error(format!("counting rows of {table}"), &e))
}
