//! What the live schema looks like: columns, keys and foreign keys, read from the catalog.
//!
//! The sync engine and `maskbus policy check` take table and column names from here (and from the
//! policy), never from request text.

use crate::{PgError, Target};
use tokio_postgres::Client;

/// One column of a base table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogColumn {
    pub table: String,
    pub column: String,
    /// `information_schema` spelling: `character varying`, `date`, `bigint`, ...
    pub data_type: String,
    pub max_length: Option<usize>,
    pub nullable: bool,
    /// A one-column primary key or unique index covers it.
    pub unique: bool,
}

/// Every column of every base table in `schema`, in table then column order.
pub async fn columns(
    target: &Target,
    client: &Client,
    schema: &str,
) -> Result<Vec<CatalogColumn>, PgError> {
    let rows = client
        .query(
            "SELECT c.table_name::text, c.column_name::text, c.data_type::text,
                    c.character_maximum_length::int, c.is_nullable = 'YES',
                    EXISTS (SELECT 1
                              FROM pg_index i
                              JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                             WHERE i.indrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
                               AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
                               AND a.attname = c.column_name)
               FROM information_schema.columns c
               JOIN information_schema.tables t
                 ON t.table_schema = c.table_schema AND t.table_name = c.table_name
              WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE'
              ORDER BY c.table_name, c.ordinal_position",
            &[&schema],
        )
        .await
        .map_err(|e| target.query_error("reading columns from information_schema", &e))?;
    Ok(rows
        .iter()
        .map(|r| CatalogColumn {
            table: r.get(0),
            column: r.get(1),
            data_type: r.get(2),
            max_length: r.get::<_, Option<i32>>(3).map(|n| n as usize),
            nullable: r.get(4),
            unique: r.get(5),
        })
        .collect())
}

/// A table's single-column primary key, if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimaryKey {
    pub table: String,
    pub column: String,
    /// `format_type` spelling, e.g. `bigint`.
    pub data_type: String,
    /// How many columns the key has (only 1 is supported by the sync).
    pub columns: usize,
}

/// Primary keys of the base tables in `schema`.
pub async fn primary_keys(
    target: &Target,
    client: &Client,
    schema: &str,
) -> Result<Vec<PrimaryKey>, PgError> {
    let rows = client
        .query(
            "SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), cardinality(k.conkey)
               FROM pg_constraint k
               JOIN pg_class c ON c.oid = k.conrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1]
              WHERE k.contype = 'p' AND n.nspname = $1
              ORDER BY 1",
            &[&schema],
        )
        .await
        .map_err(|e| target.query_error("reading primary keys from pg_constraint", &e))?;
    Ok(rows
        .iter()
        .map(|r| PrimaryKey {
            table: r.get(0),
            column: r.get(1),
            data_type: r.get(2),
            columns: r.get::<_, i32>(3) as usize,
        })
        .collect())
}

/// One foreign key: `table.columns` references `parent.parent_columns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKey {
    pub table: String,
    pub columns: Vec<String>,
    pub parent: String,
    pub parent_columns: Vec<String>,
}

/// Foreign keys between base tables of `schema`.
pub async fn foreign_keys(
    target: &Target,
    client: &Client,
    schema: &str,
) -> Result<Vec<ForeignKey>, PgError> {
    let rows = client
        .query(
            "SELECT c.relname::text, p.relname::text,
                    ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                            JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i),
                    ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                            JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i)
               FROM pg_constraint k
               JOIN pg_class c ON c.oid = k.conrelid
               JOIN pg_class p ON p.oid = k.confrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE k.contype = 'f' AND n.nspname = $1
              ORDER BY 1, 2",
            &[&schema],
        )
        .await
        .map_err(|e| target.query_error("reading foreign keys from pg_constraint", &e))?;
    Ok(rows
        .iter()
        .map(|r| ForeignKey {
            table: r.get(0),
            parent: r.get(1),
            columns: r.get(2),
            parent_columns: r.get(3),
        })
        .collect())
}

/// Each column of `table` with its full type (`format_type`, e.g. `character varying(60)`), in
/// column order. Empty when the table does not exist.
pub async fn column_types(
    target: &Target,
    client: &Client,
    schema: &str,
    table: &str,
) -> Result<Vec<(String, String)>, PgError> {
    let rows = client
        .query(
            "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
               FROM pg_attribute a
               JOIN pg_class c ON c.oid = a.attrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')
                AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum",
            &[&schema, &table],
        )
        .await
        .map_err(|e| target.query_error(format!("reading the columns of {table}"), &e))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// The first `limit` rows of `table` in primary-key order, every value as text (for side-by-side
/// displays). The table name is checked against the catalog before it is used.
pub async fn first_rows(
    target: &Target,
    client: &Client,
    schema: &str,
    table: &str,
    limit: i64,
) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), PgError> {
    let columns: Vec<String> = column_types(target, client, schema, table)
        .await?
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    if columns.is_empty() {
        return Err(PgError::Query {
            role: target.role,
            endpoint: target.endpoint(),
            action: format!("reading {table}"),
            reason: format!("there is no table {table} in schema {schema}"),
            transient: false,
        });
    }
    let key = primary_keys(target, client, schema)
        .await?
        .into_iter()
        .find(|k| k.table == table)
        .map(|k| k.column)
        .unwrap_or_else(|| columns[0].clone());
    let sql = format!(
        "SELECT {} FROM {}.{} t ORDER BY t.{} LIMIT $1",
        columns
            .iter()
            .map(|c| format!("t.{}::text", crate::quote_ident(c)))
            .collect::<Vec<_>>()
            .join(", "),
        crate::quote_ident(schema),
        crate::quote_ident(table),
        crate::quote_ident(&key)
    );
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
