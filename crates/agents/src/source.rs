//! The producer's read side: one page of an entity from the source, masked.
//!
//! Table, column and key names come from the policy and the source catalog, never from request
//! text; values (cursors, horizons, limits, keys) are bind parameters. The connection is
//! read-only and prints values in canonical forms (ISO dates, UTC) so masked text casts back
//! into the target's column types.
//!
//! Which rows a page holds: those whose writing transaction (`xmin`, widened to 64 bits) is
//! committed in snapshot `until` and was not in snapshot `since`, with key above `after`, in key
//! order. A row that commits late (id 41 after id 42 was synced) was still running in `since`,
//! so it falls in the next window and is never skipped; a transaction open elsewhere on the
//! server holds nothing back. Updates give a row a new xmin, so they are synced again too.

use crate::protocol::{ErrorCode, PageReply, Reply, Snapshot, VERSION};
use maskbus_mask::Policy;
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{quote_ident, PgError, PgPool, Target};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;

/// How one entity is read: fixed at first use from the catalog.
#[derive(Clone, Debug)]
struct Shape {
    key: String,
    columns: Vec<String>,
    page_sql: String,
    rows_sql: String,
}

/// Reads masked pages from the source database.
pub struct Source {
    target: Target,
    pool: PgPool,
    schema: String,
    policy: Arc<Policy>,
    shapes: Mutex<HashMap<String, Shape>>,
}

/// A failure that becomes an error reply.
struct Refusal(ErrorCode, String);

impl From<PgError> for Refusal {
    fn from(e: PgError) -> Self {
        Refusal(
            ErrorCode::Unavailable,
            format!("the producer could not read the source: {e}; retry later"),
        )
    }
}

/// The row's 32-bit xmin widened to the 64-bit xid8 that snapshots speak, against the server's
/// next xid (so a row's xid must be less than 2^31 transactions old: see ARCHITECTURE.md).
const XMIN8: &str =
    "(h.next_xid - ((h.next_xid % 4294967296 - t.xmin::text::bigint + 4294967296) % 4294967296))::text::xid8";

/// Session settings for every connection that reads production: no way to write, and values
/// printed in canonical forms (ISO dates, UTC) that the masking rules read and the target parses.
pub const READ_ONLY_CANONICAL: &str =
    "-c default_transaction_read_only=on -c DateStyle=ISO,YMD -c TimeZone=UTC \
     -c IntervalStyle=postgres -c extra_float_digits=3 -c bytea_output=hex";

impl Source {
    pub fn new(
        mut target: Target,
        schema: &str,
        policy: Arc<Policy>,
        pool_size: usize,
    ) -> Result<Self, PgError> {
        // Canonical text forms, and no way to write: the producer only ever reads production.
        target.config.options(READ_ONLY_CANONICAL);
        let pool = PgPool::new(target.clone(), pool_size)?;
        Ok(Self {
            target,
            pool,
            schema: schema.to_string(),
            policy,
            shapes: Mutex::new(HashMap::new()),
        })
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// Checks that the source can be reached (used at start-up to fail fast).
    pub async fn ping(&self) -> Result<(), PgError> {
        let client = self.client().await?;
        client.query_one("SELECT 1", &[]).await.map_err(|e| {
            self.target
                .query_error("checking the source connection", &e)
        })?;
        Ok(())
    }

    async fn shape(&self, entity: &str) -> Result<Shape, Refusal> {
        if let Some(shape) = self.shapes.lock().await.get(entity) {
            return Ok(shape.clone());
        }
        if self.policy.entity(entity).is_none() {
            let known: Vec<_> = self.policy.entities().map(|(n, _)| n).collect();
            return Err(Refusal(
                ErrorCode::UnknownEntity,
                format!(
                    "unknown entity {entity:?}: the producer serves {}",
                    known.join(", ")
                ),
            ));
        }
        let client = self.client().await?;
        let columns: Vec<String> =
            maskbus_pg::catalog::column_types(&self.target, &client, &self.schema, entity)
                .await?
                .into_iter()
                .map(|(name, _)| name)
                .collect();
        if columns.is_empty() {
            return Err(Refusal(
                ErrorCode::PolicyRefused,
                format!(
                    "the policy names {entity}, but the source has no such table in schema {}",
                    self.schema
                ),
            ));
        }
        let keys = maskbus_pg::catalog::primary_keys(&self.target, &client, &self.schema).await?;
        let key = keys.iter().find(|k| k.table == entity).ok_or_else(|| {
            Refusal(
                ErrorCode::PolicyRefused,
                format!("{entity} has no primary key; the sync needs one"),
            )
        })?;
        if key.columns != 1 || !matches!(key.data_type.as_str(), "bigint" | "integer" | "smallint")
        {
            return Err(Refusal(
                ErrorCode::PolicyRefused,
                format!("{entity}: only single-column integer primary keys are supported yet (its key is {} column(s) of {})", key.columns, key.data_type),
            ));
        }
        // Deny by default, checked once for the whole entity: a column without a rule refuses it.
        self.policy
            .masker(entity, &columns)
            .map_err(|e| Refusal(ErrorCode::PolicyRefused, e.to_string()))?;
        let table = format!("{}.{}", quote_ident(&self.schema), quote_ident(entity));
        let key_column = quote_ident(&key.column);
        let select_list = columns
            .iter()
            .map(|c| format!("t.{}::text", quote_ident(c)))
            .collect::<Vec<_>>()
            .join(", ");
        let page_sql = format!(
            "SELECT t.{key_column}::bigint, {select_list}
               FROM {table} t,
                    (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next_xid) h
              WHERE t.{key_column} > $1
                AND pg_visible_in_snapshot({XMIN8}, $3::text::pg_snapshot)
                AND ($2::text IS NULL OR NOT pg_visible_in_snapshot({XMIN8}, $2::text::pg_snapshot))
              ORDER BY t.{key_column}
              LIMIT $4"
        );
        let rows_sql = format!(
            "SELECT t.{key_column}::bigint, {select_list} FROM {table} t WHERE t.{key_column} = ANY($1) ORDER BY t.{key_column}"
        );
        let shape = Shape {
            key: key.column.clone(),
            columns,
            page_sql,
            rows_sql,
        };
        self.shapes
            .lock()
            .await
            .insert(entity.to_string(), shape.clone());
        Ok(shape)
    }

    /// The source's current snapshot: it closes a new window.
    async fn snapshot(&self) -> Result<Snapshot, PgError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT pg_current_snapshot()::text", &[])
            .await
            .map_err(|e| self.target.query_error("reading the current snapshot", &e))?;
        Ok(Snapshot(row.get(0)))
    }

    /// Masks fetched rows; a value a rule refuses fails the whole page.
    fn mask_rows(
        &self,
        entity: &str,
        shape: &Shape,
        rows: Vec<tokio_postgres::Row>,
    ) -> Result<(Vec<maskbus_mask::MaskedRow>, Vec<i64>), Refusal> {
        let masker = self
            .policy
            .masker(entity, &shape.columns)
            .map_err(|e| Refusal(ErrorCode::PolicyRefused, e.to_string()))?;
        let mut keys = Vec::with_capacity(rows.len());
        let mut masked = Vec::with_capacity(rows.len());
        for row in rows {
            keys.push(row.get::<_, i64>(0));
            let values: Vec<Option<String>> =
                (1..=shape.columns.len()).map(|i| row.get(i)).collect();
            masked.push(
                masker
                    .mask(values)
                    .map_err(|e| Refusal(ErrorCode::PolicyRefused, e.to_string()))?,
            );
        }
        Ok((masked, keys))
    }

    /// `pages` consecutive pages of masked rows (each its own reply of at most `limit` rows), or
    /// one error reply.
    pub async fn page(
        &self,
        entity: &str,
        since: Option<Snapshot>,
        until: Option<Snapshot>,
        after: Option<i64>,
        limit: u32,
        pages: u32,
    ) -> Vec<Reply> {
        match self
            .try_pages(entity, since, until, after, limit, pages.max(1))
            .await
        {
            Ok(pages) => pages.into_iter().map(Reply::Page).collect(),
            Err(Refusal(code, message)) => vec![Reply::error(code, message)],
        }
    }

    async fn try_pages(
        &self,
        entity: &str,
        since: Option<Snapshot>,
        until: Option<Snapshot>,
        after: Option<i64>,
        limit: u32,
        pages: u32,
    ) -> Result<Vec<PageReply>, Refusal> {
        let shape = self.shape(entity).await?;
        let until = match until {
            Some(until) => until,
            None => self.snapshot().await?,
        };
        let client = self.client().await?;
        // One query for all the pages, and one row more than asked to tell whether more remain.
        let wanted = limit as usize * pages as usize;
        let mut rows = client
            .query(
                &shape.page_sql,
                &[
                    &after.unwrap_or(i64::MIN),
                    &since.as_ref().map(|s| s.0.as_str()),
                    &until.0,
                    &(wanted as i64 + 1),
                ],
            )
            .await
            .map_err(|e| {
                Refusal::from(
                    self.target
                        .query_error(format!("reading a page of {entity}"), &e),
                )
            })?;
        let more_after_all = rows.len() > wanted;
        rows.truncate(wanted);
        let (masked, keys) = self.mask_rows(entity, &shape, rows)?;
        let chunks: Vec<Vec<maskbus_mask::MaskedRow>> = if masked.is_empty() {
            vec![Vec::new()]
        } else {
            let mut masked = masked;
            let mut chunks = Vec::new();
            while !masked.is_empty() {
                let rest = masked.split_off(masked.len().min(limit as usize));
                chunks.push(std::mem::replace(&mut masked, rest));
            }
            chunks
        };
        let parts = chunks.len() as u32;
        let mut taken = 0usize;
        Ok(chunks
            .into_iter()
            .enumerate()
            .map(|(part, rows)| {
                taken += rows.len();
                let last = part as u32 + 1 == parts;
                PageReply {
                    v: VERSION,
                    entity: entity.to_string(),
                    key: shape.key.clone(),
                    columns: shape.columns.clone(),
                    next_after: if taken > 0 {
                        Some(keys[taken - 1])
                    } else {
                        after
                    },
                    rows,
                    more: !last || more_after_all,
                    since: since.clone(),
                    until: Some(until.clone()),
                    part: part as u32,
                    parts,
                }
            })
            .collect())
    }

    /// Specific rows by key (parents a consumer's page needs), masked.
    pub async fn rows(&self, entity: &str, keys: &[i64]) -> Reply {
        let result = async {
            let shape = self.shape(entity).await?;
            let client = self.client().await?;
            let rows = client.query(&shape.rows_sql, &[&keys]).await.map_err(|e| {
                Refusal::from(
                    self.target
                        .query_error(format!("reading rows of {entity} by key"), &e),
                )
            })?;
            let (masked, keys) = self.mask_rows(entity, &shape, rows)?;
            Ok::<_, Refusal>(PageReply {
                v: VERSION,
                entity: entity.to_string(),
                key: shape.key.clone(),
                columns: shape.columns.clone(),
                rows: masked,
                next_after: keys.last().copied(),
                more: false,
                since: None,
                until: None,
                part: 0,
                parts: 1,
            })
        }
        .await;
        match result {
            Ok(page) => Reply::Page(page),
            Err(Refusal(code, message)) => Reply::error(code, message),
        }
    }
}
