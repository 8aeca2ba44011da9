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
