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

use crate::page_cut::{PageCut, Unsendable};
use crate::reply::{PageReply, Reply};
use crate::subset::{Members, MembersAsk, SubsetFile, Subsets};
use maskbus_mask::{MaskedRow, Policy};
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{statements, Database, KeyDef, PgError, PgPool, TableInfo, TableRef};
use maskbus_policy::schema_check;
use maskbus_protocol::MAX_ROW_BYTES;
use maskbus_protocol::{ErrorCode, ErrorReply, KeyCursor, Snapshot, MAX_KEY_VALUE_BYTES, VERSION};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Mutex;

/// How one entity is read: fixed at first use from the catalog.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub table: TableRef,
    pub key: KeyDef,
    /// The columns read and sent, in table order (generated columns are left to the target).
    pub columns: Vec<String>,
    /// Column name → type, for lookups by column.
    pub types: HashMap<String, String>,
    /// Each column's length limit (`varchar(n)`: pseudonyms fit it) and whether it is an array
    /// (rules apply to each element), in column order.
    pub cells: Vec<maskbus_mask::CellShape>,
    /// Where each key column sits in `columns`.
    pub(crate) key_positions: Vec<usize>,
    /// A partitioned table (its rows by key are read with `IN`: see
    /// [`statements::key_in_index_list`]).
    partitioned: bool,
    /// Whether a key column's rule is not `keep` (a bijective pseudonym): keys that cross the
    /// bus are then fakes, turned back into the source's by [`Source::real_keys`], and the
    /// target's key order is not the source's.
    pub(crate) key_masked: bool,
    page_first: String,
    page_after: String,
}

/// What a page request asks of the source: rows of `entity` written in the window (`since`,
/// `until`], with key after `after`, in `pages` pages of at most `limit` rows, within `subset`
/// when one is named.
#[derive(Clone, Debug, Default)]
pub struct PageAsk<'a> {
    pub entity: &'a str,
    pub since: Option<Snapshot>,
    pub until: Option<Snapshot>,
    pub after: Option<KeyCursor>,
    /// The tag the producer issued with `after` (over a masked key: [`crate::cursors`]).
    pub after_tag: Option<String>,
    /// The last key of the range read (inclusive), or to the end.
    pub through: Option<KeyCursor>,
    pub through_tag: Option<String>,
    pub limit: u32,
    pub pages: u32,
    pub subset: Option<&'a str>,
}

/// Reads masked pages from the source database.
pub struct Source {
    database: Database,
    pool: PgPool,
    policy: Arc<Policy>,
    shapes: Mutex<HashMap<String, Shape>>,
    /// The catalog of the policy's schemas as last read, for the shapes still to be built:
    /// one catalog read for all of a pass's tables instead of one per table. Cleared with the
    /// shapes, and read again when a table is not in it (created since).
    catalog: Mutex<Option<Vec<TableInfo>>>,
    /// The subsets this producer defines.
    subsets: Option<Subsets>,
    /// The fingerprint of the schema last served: when it changes, the shapes are read again.
    schema_seen: Mutex<Option<String>>,
    /// Entities the start's policy check found unfit (a sampled kept column that looks like
    /// PII, say), each with the first reason: refused by name, never served.
    unfit: HashMap<String, String>,
    /// Taken while two connections are taken for one request, so that two such requests never
    /// each hold one of the pool's last connections waiting for another.
    pairing: Mutex<()>,
}

/// A failure that becomes an error reply: the closed [`ErrorReply`] that crosses the bus, and
/// a sentence for the producer's own log (built from names and maskbus's own errors, whose
/// texts never quote a value: `maskbus_pg::error_text` leaves the server's message out).
#[derive(Debug)]
pub struct Refusal(pub(crate) ErrorReply, pub(crate) String);

impl std::fmt::Display for Refusal {
    /// The producer's own sentence (names only, never a value).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl std::error::Error for Refusal {}

impl Refusal {
    pub(crate) fn new(code: ErrorCode, detail: impl Into<String>) -> Self {
        Refusal(ErrorReply::new(code), detail.into())
    }

    /// Why a row could not be masked, as the consumer is told: the egress guard's refusal by
    /// column, rule and detector (`guarded`, logged here with the same names, counted in
    /// `maskbus_guarded`), any other as the policy's.
    pub(crate) fn of_mask(error: maskbus_mask::MaskError, entity: &str) -> Self {
        match &error {
            maskbus_mask::MaskError::Egress {
                column,
                rule,
                detector,
                ..
            } => {
                tracing::error!(%entity, %column, %rule, %detector, "the egress guard refused a row: what the rule leaves of this column reads as personal data; nothing of the table is sent until it masks clean");
                maskbus_telemetry::metrics().guarded(entity, column, detector);
                Refusal(
                    ErrorReply::new(ErrorCode::Guarded)
                        .column(column)
                        .rule(rule)
                        .detector(detector),
                    error.to_string(),
                )
                .on(entity)
            }
            _ => Refusal::new(ErrorCode::PolicyRefused, error.to_string()).on(entity),
        }
    }

    /// The same refusal, naming the entity it concerns.
    pub(crate) fn on(mut self, entity: &str) -> Self {
        self.0 = self.0.entity(entity);
        self
    }

    /// The same refusal, naming the subset it concerns.
    pub(crate) fn subset(mut self, name: &str) -> Self {
        self.0 = self.0.subset(name);
        self
    }

    pub(crate) fn code(&self) -> ErrorCode {
        self.0.code()
    }

    /// The reply that crosses the bus; the detail goes to the producer's log.
    pub(crate) fn into_reply(self) -> Reply {
        let Refusal(error, detail) = self;
        tracing::warn!(code = %error.code(), refused = %error, %detail, "request refused");
        Reply::error(error)
    }
}

impl From<PgError> for Refusal {
    /// Says what failed without the source's endpoint or the server's text (the reply crosses
    /// the bus), and whether asking again can help.
    fn from(e: PgError) -> Self {
        let detail = match &e {
            PgError::Query { action, reason, .. } => format!("{action}: {reason}"),
            _ => "the producer cannot reach the source database".to_string(),
        };
        match &e {
            PgError::Query {
                transient: false,
                sqlstate,
                ..
            } => {
                let mut error = ErrorReply::new(ErrorCode::SourceFailed);
                if let Some(code) = sqlstate {
                    error = error.sqlstate(code.as_str());
                }
                Refusal(error, detail)
            }
            _ => Refusal::new(ErrorCode::Unavailable, detail),
        }
    }
}

/// The row's 32-bit xmin widened to the 64-bit xid that snapshots speak (as a bigint), against
/// the server's next xid (so a row's xid must be less than 2^31 transactions old: see
/// docs/internals.md, "Why snapshot windows").
const XMIN64: &str =
    "(h.next_xid - ((h.next_xid % 4294967296 - t.xmin::text::bigint + 4294967296) % 4294967296))";

/// Once per query: the server's next xid, the two snapshots of the window (`$2` since, `$3`
/// until) parsed, and the xmin of each, below which every xid is visible in it. `OFFSET 0`
/// keeps the planner from pulling the subquery up into the row filter, where each of these
/// would be computed again for every row (the current snapshot taken, the snapshots parsed).
const WINDOW_HORIZON: &str =
    ", (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next_xid,
            $3::text::pg_snapshot AS until_snap,
            pg_snapshot_xmin($3::text::pg_snapshot)::text::bigint AS until_xmin,
            $2::text::pg_snapshot AS since_snap,
            pg_snapshot_xmin($2::text::pg_snapshot)::text::bigint AS since_xmin
          OFFSET 0) h";

/// The rows committed in the window: visible in `until` and not in `since`. Most rows are older
/// than both snapshots' xmin, and are decided by comparing two numbers (visible in `until`,
/// visible in `since`); only the rest are looked up in the snapshots' lists of running xids.
fn window_filter() -> String {
    format!(
        "({XMIN64} < h.until_xmin OR pg_visible_in_snapshot({XMIN64}::text::xid8, h.until_snap))
         AND (h.since_snap IS NULL OR ({XMIN64} >= h.since_xmin
              AND NOT pg_visible_in_snapshot({XMIN64}::text::xid8, h.since_snap)))"
    )
}

/// A page of `table` in key order within the snapshot window, with `filter` (the window, and
/// for a subset the closure's membership too).
fn page_sql(
    table: &TableRef,
    key: &KeyDef,
    columns: &[String],
    filter: &str,
    with_cursor: bool,
) -> String {
    statements::page(table, key, columns, WINDOW_HORIZON, filter, 4, with_cursor)
}

/// Masks one row and takes it into `cut`: `false` when the answer is full.
fn take(
    masker: &maskbus_mask::Masker<'_>,
    cut: &mut PageCut,
    values: Vec<Option<String>>,
    entity: &str,
) -> Result<bool, Refusal> {
    take_at(masker, cut, values, None, entity)
}

/// [`take`] for a keyless table's row, with its location (the page's cursor).
fn take_located(
    masker: &maskbus_mask::Masker<'_>,
    cut: &mut PageCut,
    values: Vec<Option<String>>,
    location: KeyCursor,
    entity: &str,
) -> Result<bool, Refusal> {
    take_at(masker, cut, values, Some(location), entity)
}

fn take_at(
    masker: &maskbus_mask::Masker<'_>,
    cut: &mut PageCut,
    values: Vec<Option<String>>,
    location: Option<KeyCursor>,
    entity: &str,
) -> Result<bool, Refusal> {
    let masked = masker
        .mask(values)
        .map_err(|e| Refusal::of_mask(e, entity))?;
    let pushed = match location {
        Some(location) => cut.push_located(masked, location),
        None => cut.push(masked),
    };
    match pushed {
        Ok(taken) => Ok(taken),
        Err(Unsendable::RowTooLarge { bytes }) => Err(Refusal::new(
            ErrorCode::RowTooLarge,
            format!("a row of {entity} is {bytes} bytes as JSON, over the {MAX_ROW_BYTES} a reply may carry"),
        )
        .on(entity)),
        Err(Unsendable::KeyTooLong { bytes }) => Err(Refusal::new(
            ErrorCode::KeyTooLong,
            format!("a key value of {entity} is {bytes} bytes, over the {MAX_KEY_VALUE_BYTES} a cursor may carry"),
        )
        .on(entity)),
    }
}

fn shape_page(shape: &Shape, filter: &str, with_cursor: bool) -> String {
    page_sql(
        &shape.table,
        &shape.key,
        &read_columns(&shape.key, &shape.columns),
        filter,
        with_cursor,
    )
}

/// The columns a page reads: the sent ones, and for a keyless table its row location after
/// them (the page's cursor, never sent as a value of a row).
fn read_columns(key: &KeyDef, columns: &[String]) -> Vec<String> {
    let mut read = columns.to_vec();
    if key.is_keyless() {
        read.extend(key.names());
    }
    read
}

use maskbus_pg::READ_ONLY_CANONICAL;

impl Source {
    pub fn new(
        mut database: Database,
        policy: Arc<Policy>,
        pool_size: usize,
    ) -> Result<Self, PgError> {
        // Canonical text forms, and no way to write: the producer only ever reads production.
        database.config.options(READ_ONLY_CANONICAL);
        let pool = PgPool::new(database.clone(), pool_size)?;
        Ok(Self {
            database,
            pool,
            policy,
            shapes: Mutex::new(HashMap::new()),
            catalog: Mutex::new(None),
            subsets: None,
            schema_seen: Mutex::new(None),
            unfit: HashMap::new(),
            pairing: Mutex::new(()),
        })
    }

    /// The same source, refusing these entities (with their reasons): what `policy check`
    /// found unfit when the producer started.
    pub fn with_unfit(mut self, unfit: HashMap<String, String>) -> Self {
        self.unfit = unfit
            .into_iter()
            .map(|(e, why)| (maskbus_mask::qualify(&e), why))
            .collect();
        self
    }

    /// The same source, serving the subsets of `file` by name.
    pub fn with_subsets(mut self, file: SubsetFile) -> Self {
        self.subsets = Some(Subsets::new(file));
        self
    }

    /// The subsets this producer defines; refused (naming `name`) when it defines none.
    pub(crate) fn subsets(&self, name: &str) -> Result<&Subsets, Refusal> {
        self.subsets.as_ref().ok_or_else(|| {
            Refusal::new(
                ErrorCode::UnknownSubset,
                "this producer defines no subsets (its `subsets` key)",
            )
            .subset(name)
        })
    }

    /// Records the fingerprint of the schema served now; when it differs from the last one, a
    /// migration changed a table, and every entity's shape is read again from the catalog at
    /// its next use.
    pub(crate) async fn schema_seen(&self, fingerprint: &str) {
        let mut seen = self.schema_seen.lock().await;
        if seen.as_deref() != Some(fingerprint) {
            if seen.is_some() {
                tracing::info!("the served schema changed: tables are read again from the catalog");
            }
            self.forget_shapes().await;
            *seen = Some(fingerprint.to_string());
        }
    }

    /// Forgets every entity's shape: the next use reads it again from the catalog.
    pub(crate) async fn forget_shapes(&self) {
        self.shapes.lock().await.clear();
        *self.catalog.lock().await = None;
    }

    /// `table` as the catalog has it: from the last read of the policy's schemas, or from a new
    /// read of them when it is not there (the first use, a table created since).
    /// The lock is not held while a connection is taken or the catalog read: no request waits
    /// on it holding a connection another needs.
    async fn table_info(&self, table: &TableRef) -> Result<Option<TableInfo>, PgError> {
        let known = |catalog: &Option<Vec<TableInfo>>| {
            catalog
                .iter()
                .flatten()
                .find(|t| &t.table == table)
                .cloned()
        };
        if let Some(info) = known(&*self.catalog.lock().await) {
            return Ok(Some(info));
        }
        let client = self.client().await?;
        let read =
            maskbus_pg::catalog::tables(&self.database, &client, &self.policy.schemas()).await?;
        drop(client);
        let read = Some(read);
        let info = known(&read);
        *self.catalog.lock().await = read;
        Ok(info)
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// Two connections for one request, taken one after the other while no other request
    /// takes a pair. Every other request holds at most one, and never while it waits for
    /// another or for a lock whose holder waits for one (a subset's closure is computed on a
    /// connection taken under the subsets' lock, by a request that holds none), so the pool
    /// always frees one.
    pub(crate) async fn two_clients(
        &self,
    ) -> Result<(deadpool_postgres::Object, deadpool_postgres::Object), PgError> {
        let _pairing = self.pairing.lock().await;
        Ok((self.pool.get().await?, self.pool.get().await?))
    }

    /// Checks that the source can be reached (used at start-up to fail fast).
    pub async fn ping(&self) -> Result<(), PgError> {
        let client = self.client().await?;
        client.query_one("SELECT 1", &[]).await.map_err(|e| {
            self.database
                .query_error("checking the source connection", &e)
        })?;
        Ok(())
    }

    /// The source as this producer reaches it (canonical text, read-only).
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// How `entity` is read and masked, fixed at first use from the catalog; refused when the
    /// policy does not serve it or cannot mask every column.
    pub(crate) async fn shape(&self, entity: &str) -> Result<Shape, Refusal> {
        let entity = maskbus_mask::qualify(entity);
        if let Some(shape) = self.shapes.lock().await.get(&entity) {
            return Ok(shape.clone());
        }
        if self.policy.entity(&entity).is_none() {
            let known: Vec<_> = self.policy.entities().map(|(n, _)| n).collect();
            return Err(Refusal::new(
                ErrorCode::UnknownEntity,
                format!("the producer serves {}", known.join(", ")),
            )
            .on(&entity));
        }
        if let Some(why) = self.unfit.get(&entity) {
            return Err(Refusal::new(
                ErrorCode::PolicyRefused,
                format!("{entity} does not fit the policy ({why}); `maskbus policy check` shows every error"),
            )
            .on(&entity));
        }
        let table = TableRef::parse(&entity);
        let info = self
            .table_info(&table)
            .await
            .map_err(|e| Refusal::from(e).on(&entity))?
            .ok_or_else(|| {
                Refusal::new(
                    ErrorCode::PolicyRefused,
                    format!("the policy names {entity}, but the source has no such table"),
                )
                .on(&entity)
            })?;
        let refused = |detail: String| Refusal::new(ErrorCode::PolicyRefused, detail).on(&entity);
        let key = info
            .key(self.policy.key_columns(&entity))
            .map_err(|e| refused(e.to_string()))?;
        schema_check::key_rules_fit(&self.policy, &entity, &key)
            .map_err(|e| refused(e.to_string()))?;
        // The policy must fit the table as it is now (types, widths, NULLs, UNIQUE columns),
        // or the table is refused by name: a page of it would not go into the target.
        let misfit = maskbus_mask::fit::check(
            &self.policy,
            &schema_check::column_infos(std::slice::from_ref(&info)),
        )
        .into_iter()
        .find_map(|l| match l.verdict {
            maskbus_mask::fit::Verdict::Error(e) if maskbus_mask::qualify(&l.entity) == entity => {
                Some(format!("{}: {e}", l.column))
            }
            _ => None,
        });
        if let Some(misfit) = misfit {
            return Err(refused(format!(
                "{entity} does not fit the policy: {misfit}; `maskbus policy check` shows every error"
            )));
        }
        let columns: Vec<String> = info.synced_columns().map(|c| c.name.clone()).collect();
        // A rule for a column the table no longer has (dropped or renamed by a migration): the
        // policy does not agree with the source yet, and the table is refused by name.
        if let Some(rules) = self.policy.entity(&entity) {
            if let Some((stale, _)) = rules
                .columns()
                .find(|(c, _)| !info.columns.iter().any(|live| live.name == *c))
            {
                return Err(Refusal(
                    ErrorReply::new(ErrorCode::PolicyRefused).column(stale),
                    format!("the policy has a rule for {entity}.{}, which the source table does not have: remove the rule (a dropped column) or rename it (a renamed column)", maskbus_mask::shorten(stale)),
                )
                .on(&entity));
            }
        }
        // Deny by default, checked once for the whole entity: a column without a rule refuses it.
        self.policy
            .masker(&entity, &columns)
            .map_err(|e| match &e {
                maskbus_mask::MaskError::NoRule { column, .. } => Refusal(
                    ErrorReply::new(ErrorCode::NoRule).column(column),
                    e.to_string(),
                )
                .on(&entity),
                _ => refused(e.to_string()),
            })?;
        let key_positions = key
            .columns
            .iter()
            .filter_map(|k| columns.iter().position(|c| *c == k.name))
            .collect();
        let key_masked = key.columns.iter().any(|k| {
            self.policy
                .entity(&entity)
                .and_then(|r| r.rule(&k.name))
                .is_some_and(|r| *r != maskbus_mask::Rule::Keep)
        });
        let window = window_filter();
        let read = read_columns(&key, &columns);
        let page = |with_cursor| page_sql(&table, &key, &read, &window, with_cursor);
        let shape = Shape {
            page_first: page(false),
            page_after: page(true),
            types: info
                .synced_columns()
                .map(|c| (c.name.clone(), c.sql_type.clone()))
                .collect(),
            cells: info
                .synced_columns()
                .map(|c| maskbus_mask::CellShape::of(&c.data_type, c.max_length))
                .collect(),
            partitioned: info.partitioned,
            table,
            key,
            columns,
            key_positions,
            key_masked,
        };
        self.shapes.lock().await.insert(entity, shape.clone());
        Ok(shape)
    }

    /// The source's values of `masked`, keys the consumer sent over `columns` of `shape`'s
    /// entity (every key that crosses the bus is masked: a cursor, a bound, the rows it asks
    /// for): each value through its column's rule undone ([`maskbus_mask::Masker::reveal`]),
    /// with one masker for all of them. A real value sent instead finds nothing (it is undone
    /// into another), so a lookup cannot confirm a guess of one. Refused by name when a value
    /// is no fake the key can undo (the consumer never holds such a key).
    pub(crate) fn real_keys(
        &self,
        shape: &Shape,
        columns: &[String],
        masked: &[KeyCursor],
    ) -> Result<Vec<KeyCursor>, Refusal> {
        let entity = shape.table.to_string();
        // Each column by its own rule: a lookup may name columns other than the key (what a
        // foreign key references), masked while the key is kept.
        let rules = self.policy.entity(&entity);
        let all_kept = columns
            .iter()
            .all(|c| rules.and_then(|r| r.rule(c)) == Some(&maskbus_mask::Rule::Keep));
        if all_kept {
            return Ok(masked.to_vec());
        }
        let masker = self.masker(shape)?;
        let undo = |column: &String, value: &String| {
            masker.reveal(column, value).ok_or_else(|| {
                Refusal::new(
                    ErrorCode::Malformed,
                    format!(
                        "a key value of {entity}.{} is no masked value the producer can look up",
                        maskbus_mask::shorten(column)
                    ),
                )
                .on(&entity)
            })
        };
        masked
            .iter()
            .map(|key| columns.iter().zip(key).map(|(c, v)| undo(c, v)).collect())
            .collect()
    }

    /// [`Source::real_keys`] of one cursor, sent as `which` (`after`, `through`) with `tag`:
    /// only a cursor the producer issued is undone ([`crate::cursors::admit`]), so a made-up
    /// fake tells nothing of the real key it stands for.
    pub(crate) fn real_key(
        &self,
        shape: &Shape,
        masked: &Option<KeyCursor>,
        tag: &Option<String>,
        which: &str,
    ) -> Result<Option<KeyCursor>, Refusal> {
        crate::cursors::admit(self, shape, masked.as_ref(), tag.as_deref(), which)?;
        if shape.key.is_keyless() {
            // A keyless table's cursor is a row location (the partition and place of a row,
            // never a value of it): it only orders the pages of one read, and goes back as
            // it came.
            return Ok(masked.clone());
        }
        match masked {
            Some(cursor) => Ok(self
                .real_keys(shape, &shape.key.names(), std::slice::from_ref(cursor))?
                .pop()),
            None => Ok(None),
        }
    }

    /// The source's current snapshot: it closes a new window.
    pub(crate) async fn snapshot(&self) -> Result<Snapshot, PgError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT pg_current_snapshot()::text", &[])
            .await
            .map_err(|e| {
                self.database
                    .query_error("reading the current snapshot", &e)
            })?;
        Ok(Snapshot(row.get(0)))
    }

    /// The masker of `shape`'s entity, its columns in the shape's order, fitted to their shapes.
    pub(crate) fn masker(&self, shape: &Shape) -> Result<maskbus_mask::Masker<'_>, Refusal> {
        self.masker_of(shape, &shape.columns, shape.cells.clone())
    }

    /// The masker of `shape`'s key columns alone, in key order, fitted to their shapes as
    /// [`Source::masker`] fits them (a pseudonym shortened to a `varchar(n)`, an array's
    /// elements one by one): a deleted row's key is masked into the key its row was stored by.
    pub(crate) fn key_masker(&self, shape: &Shape) -> Result<maskbus_mask::Masker<'_>, Refusal> {
        let cells = shape
            .key_positions
            .iter()
            .filter_map(|&at| shape.cells.get(at).copied())
            .collect();
        self.masker_of(shape, &shape.key.names(), cells)
    }

    fn masker_of(
        &self,
        shape: &Shape,
        columns: &[String],
        cells: Vec<maskbus_mask::CellShape>,
    ) -> Result<maskbus_mask::Masker<'_>, Refusal> {
        let entity = shape.table.to_string();
        Ok(self
            .policy
            .masker(&entity, columns)
            .map_err(|e| Refusal::new(ErrorCode::PolicyRefused, e.to_string()).on(&entity))?
            .with_shapes(cells))
    }

    /// Reads the rows of `sql` as they arrive, masks each and cuts them into pages
    /// ([`PageCut`]: bounded by rows and bytes); stops reading when the answer is full. Returns
    /// the pages, each page's cursor, and whether rows remain that did not fit.
    pub(crate) async fn masked_pages(
        &self,
        shape: &Shape,
        client: &tokio_postgres::Client,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        cut: PageCut,
        action: &str,
    ) -> Result<(Vec<Vec<MaskedRow>>, Vec<KeyCursor>, bool, usize), Refusal> {
        use futures_util::StreamExt;
        let entity = shape.table.to_string();
        let failed = |e: &tokio_postgres::Error| {
            Refusal::from(self.database.query_error(action, e)).on(&entity)
        };
        let masker = self.masker(shape)?;
        let rows = client
            .query_raw(sql, params.iter().copied())
            .await
            .map_err(|e| failed(&e))?;
        futures_util::pin_mut!(rows);
        let mut cut = cut;
        let mut read = 0usize;
        while let Some(row) = rows.next().await {
            let row = row.map_err(|e| failed(&e))?;
            read += 1;
            let values: Vec<Option<String>> =
                (0..shape.columns.len()).map(|i| row.get(i)).collect();
            let taken = if shape.key.is_keyless() {
                // A keyless table's row location follows the row: the page's cursor.
                let at = shape.columns.len();
                let location: KeyCursor = (at..at + shape.key.columns.len())
                    .map(|i| row.get::<_, Option<String>>(i).unwrap_or_default())
                    .collect();
                take_located(&masker, &mut cut, values, location, &entity)?
            } else {
                take(&masker, &mut cut, values, &entity)?
            };
            if !taken {
                break;
            }
        }
        let (chunks, keys, left) = cut.finish();
        maskbus_telemetry::metrics().served_clean(&entity);
        Ok((chunks, keys, left, read))
    }

    /// `ask.pages` consecutive pages of masked rows (each its own reply of at most `ask.limit`
    /// rows), or one error reply.
    pub async fn page(&self, ask: PageAsk<'_>) -> Vec<Reply> {
        match self.try_pages(ask).await {
            Ok(pages) => pages.into_iter().map(Reply::Page).collect(),
            Err(refusal) => vec![refusal.into_reply()],
        }
    }

    async fn try_pages(&self, ask: PageAsk<'_>) -> Result<Vec<PageReply>, Refusal> {
        let PageAsk {
            entity,
            since,
            until,
            after,
            after_tag,
            through,
            through_tag,
            limit,
            pages,
            subset,
        } = ask;
        let pages = pages.max(1);
        let shape = self.shape(entity).await?;
        if after
            .iter()
            .chain(&through)
            .any(|a| a.len() != shape.key.columns.len())
        {
            return Err(Refusal::new(
                ErrorCode::Malformed,
                format!(
                    "the cursor has a value per key column: {} has {}",
                    shape.table,
                    shape.key.columns.len()
                ),
            )
            .on(&shape.table.to_string()));
        }
        if through.is_some() && subset.is_some() {
            return Err(Refusal::new(
                ErrorCode::Malformed,
                format!(
                    "a subset of {} is read in one range, without `through`",
                    shape.table
                ),
            )
            .on(&shape.table.to_string()));
        }
        let until = match until {
            Some(until) => until,
            None => self.snapshot().await?,
        };
        // The consumer's cursor is the masked key of the last row it got; the rows after it
        // are those after the source's key it was made from, in the source's key order. Only
        // cursors the producer issued are taken back (their tags checked).
        let masked_after = after;
        let after = self.real_key(&shape, &masked_after, &after_tag, "after")?;
        let through = self.real_key(&shape, &through, &through_tag, "through")?;
        // One query for all the pages, and one row more than asked to tell whether more remain.
        let wanted = limit as usize * pages as usize;
        // A subset's members are settled before the page takes its connection: the first page
        // of a pass computes the closure on a connection of its own.
        let members = match subset {
            Some(name) => Some(
                self.subsets(name)?
                    .members(
                        self,
                        MembersAsk {
                            name,
                            until: &until.0,
                            table: &shape.table,
                            key: &shape.key,
                            wanted,
                        },
                        |member| {
                            shape_page(
                                &shape,
                                &format!("({}) AND {member}", window_filter()),
                                after.is_some(),
                            )
                        },
                    )
                    .await?,
            ),
            None => None,
        };
        let client = self.client().await?;
        // A range's pages end at its last key ($5).
        let ranged = through.as_ref().map(|_| {
            shape_page(
                &shape,
                &format!(
                    "{} AND {}",
                    window_filter(),
                    statements::through_cursor(&shape.key, 5)
                ),
                after.is_some(),
            )
        });
        let plain = match &ranged {
            Some(sql) => sql,
            None if after.is_some() => &shape.page_after,
            None => &shape.page_first,
        };
        let since_text = since.as_ref().map(|s| s.0.as_str());
        let asked = wanted as i64 + 1;
        let cut = || PageCut::new(limit as usize, pages as usize, shape.key_positions.clone());
        let action = format!("reading a page of {}", shape.table);
        let (sql, kept) = match &members {
            Some(Members::Kept { keys, otherwise }) => match keys.start_after(after.as_ref()) {
                Some(start) => (plain, Some((keys, start))),
                None => (otherwise, None),
            },
            Some(Members::Filtered(sql)) => (sql, None),
            Some(Members::Whole) | None => (plain, None),
        };
        let (chunks, keys, more_after_all) = match kept {
            // The kept keys after the cursor, a slice at a time: the same page statement
            // (cursor, window, order, limit) with the slice as its filter. The first slice has
            // one key per row asked; a slice whose rows are all outside the window is followed
            // by one twice as large, so a sparse delta takes a few statements, not one per
            // slice of the table.
            Some((kept, mut start)) => {
                let mut width = wanted + 1;
                let by_key = shape_page(
                    &shape,
                    &format!(
                        "({}) AND {}",
                        window_filter(),
                        statements::key_in_index_list(&shape.key, 5, shape.partitioned)
                    ),
                    after.is_some(),
                );
                loop {
                    let slice = kept.columns(start, width);
                    let taken = slice.first().map_or(0, Vec::len);
                    let rest = start + taken < kept.len();
                    let (chunks, keys, left, read) = if taken == 0 {
                        let (chunks, keys, left) = cut().finish();
                        (chunks, keys, left, 0)
                    } else {
                        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                            vec![&after, &since_text, &until.0, &asked];
                        params.extend(
                            slice
                                .iter()
                                .map(|a| a as &(dyn tokio_postgres::types::ToSql + Sync)),
                        );
                        self.masked_pages(&shape, &client, &by_key, &params, cut(), &action)
                            .await?
                    };
                    // A slice whose rows are all outside the window says nothing: the next
                    // one is read, so a page never comes back empty while keys remain.
                    if read == 0 && rest {
                        start += taken;
                        width = width.saturating_mul(2);
                        continue;
                    }
                    break (chunks, keys, read > wanted || left || rest);
                }
            }
            None => {
                let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    vec![&after, &since_text, &until.0, &asked];
                if through.is_some() {
                    params.push(&through);
                }
                let (chunks, keys, left, read) = self
                    .masked_pages(&shape, &client, sql, &params, cut(), &action)
                    .await?;
                // One row more than asked was read to tell whether more remain; a cut answer
                // has more.
                (chunks, keys, read > wanted || left)
            }
        };
        let parts = chunks.len() as u32;
        Ok(chunks
            .into_iter()
            .enumerate()
            .map(|(part, rows)| {
                let last = part as u32 + 1 == parts;
                // The cursor the page ends at, with its tag: the one sent back (checked) when
                // the page is empty.
                let (next_after, next_after_tag) = if rows.is_empty() {
                    (masked_after.clone(), after_tag.clone())
                } else {
                    let key = keys.get(part).cloned();
                    let tag = key
                        .as_ref()
                        .and_then(|k| crate::cursors::tag(self, &shape, k));
                    (key, tag)
                };
                PageReply {
                    v: VERSION,
                    entity: shape.table.to_string(),
                    key: shape.key.names(),
                    columns: shape.columns.clone(),
                    next_after,
                    next_after_tag,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_no_endpoint_and_says_whether_to_retry() {
        let target =
            Database::parse("source", "postgres://alice:pw@prod.internal:6543/bank").unwrap();
        let permanent = PgError::Query {
            role: "source",
            endpoint: target.endpoint(),
            action: "reading a page of public.customers".into(),
            reason: "permission denied (SQLSTATE 42501)".into(),
            transient: false,
            sqlstate: maskbus_pg::Sqlstate::parse("42501"),
        };
        let Refusal(error, _) = Refusal::from(permanent);
        assert_eq!(error.code(), ErrorCode::SourceFailed);
        assert_eq!(error.sqlstate_code(), Some("42501"));
        let Refusal(error2, _) = Refusal::from(PgError::Connect {
            role: "source",
            endpoint: target.endpoint(),
            reason: "connection refused".into(),
        });
        assert_eq!(error2.code(), ErrorCode::Unavailable);
        for error in [error, error2] {
            let text = serde_json::to_string(&error).unwrap();
            for secret in ["alice", "pw", "prod.internal", "6543"] {
                assert!(!text.contains(secret), "{text}");
            }
        }
    }
}
