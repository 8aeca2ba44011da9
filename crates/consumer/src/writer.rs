//! The consumer's writes of rows into the target ([`PageWriter`]): pages upserted together with
//! their watermark and their staged links in one transaction, links set once a cycle is in,
//! rows deleted by key (a repair), sequences moved past the synced values. Each write checks
//! first that its table is one maskbus owns ([`crate::owned`]): no other is ever written.

use super::bookkeeping;
use super::owned::Owned;
use super::pages::{self, EntityPlan, Progress};
use super::target_db::TargetDb;
use super::ConsumerError;
use maskbus_pg::deadpool_postgres;
use maskbus_pg::deadpool_postgres::GenericClient;
use maskbus_pg::{statements, PgError};
use maskbus_protocol::ReceivedPage;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

/// Why a page could not be written.
pub enum ApplyError {
    /// A foreign key (by constraint name, when the server says) to a row the target does not
    /// have yet: fetch the parents and try again.
    MissingParents(Option<String>),
    Consumer(ConsumerError),
}

/// How a page goes into its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    /// `COPY ... FROM STDIN`: the rows of a first pass, which the table cannot hold yet.
    Copy,
    /// `INSERT ... ON CONFLICT` or `MERGE` by key: any page, any number of times.
    Upsert,
}

impl Load {
    /// COPY for a page of an entity's first window (rows after the cursor, which no earlier
    /// page wrote) keyed by a constraint, so that a row that is there after all (written by
    /// hand, or fetched as a parent) is refused by the key and the page is upserted instead.
    fn for_page(plan: &EntityPlan, page: &ReceivedPage) -> Self {
        if page.since.is_none() && plan.key.is_constraint() && !page.rows.is_empty() {
            Load::Copy
        } else {
            Load::Upsert
        }
    }
}

impl From<PgError> for ApplyError {
    fn from(e: PgError) -> Self {
        ApplyError::Consumer(e.into())
    }
}

/// Writes rows into the target's tables: pages with their watermark and staged links, links
/// set later, rows deleted by key, sequences moved. While tables are filled together it holds
/// the one transaction they share.
pub struct PageWriter<'db> {
    db: &'db TargetDb,
    /// While tables are filled together (a cycle of deferrable NOT NULL links), the one
    /// connection whose open transaction holds all their pages and watermarks.
    group: tokio::sync::Mutex<Option<deadpool_postgres::Object>>,
    /// The tables maskbus owns in the target, read before the first write: only those are
    /// written.
    owned: tokio::sync::OnceCell<Owned>,
    /// Rows written in the shared transaction of tables filled together, not committed yet:
    /// counted as written ([`TargetDb::count_written`]) when it commits.
    group_rows: std::sync::atomic::AtomicU64,
}

pub(crate) fn params<T: ToSql + Sync>(values: &[T]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

impl<'db> PageWriter<'db> {
    pub fn new(db: &'db TargetDb) -> Self {
        Self {
            db,
            group: tokio::sync::Mutex::new(None),
            owned: tokio::sync::OnceCell::new(),
            group_rows: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The tables maskbus owns, read once.
    async fn owned(&self) -> Result<&Owned, PgError> {
        self.owned.get_or_try_init(|| Owned::load(self.db)).await
    }

    /// Refuses `doing` to `plan`'s table unless maskbus owns it: checked before every write.
    async fn refuse_unless_owned(&self, doing: &str, plan: &EntityPlan) -> Result<(), PgError> {
        self.owned()
            .await?
            .refuse_unless_owned(self.target(), doing, &plan.table)
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.db.client().await
    }

    fn target(&self) -> &maskbus_pg::Database {
        self.db.target()
    }

    /// Compares a keyless table (synced whole, as a multiset: see [`crate::keyless`]) with the
    /// pages of `fetch`, every masked row of the source in one window, each staged as it comes,
    /// and with `apply` makes it equal: surplus copies deleted, missing copies inserted, and
    /// with `record` the watermark (the window's snapshot) recorded, in one transaction (an
    /// equal table writes nothing). Without `apply`, nothing stays (the staging is rolled
    /// back).
    pub async fn converge_keyless(
        &self,
        plan: &EntityPlan,
        fetch: &mut super::keyless::WholeFetch<'_>,
        apply: bool,
        record: bool,
    ) -> Result<super::keyless::Multiset, ConsumerError> {
        use statements::keyless;
        if apply {
            self.refuse_unless_owned("syncing", plan).await?;
        }
        let Some(first) = fetch.next(plan).await? else {
            return Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "no page came for the table".into(),
            });
        };
        let columns: Vec<String> = pages::page_columns(plan, &first)?
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target().query_error(action, &e);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        tx.batch_execute(&keyless::stage(&plan.table, &columns))
            .await
            .map_err(q(format!("staging the rows of {}", plan.entity)))?;
        let stage = EntityPlan {
            table: keyless::stage_table(),
            deferred: Vec::new(),
            ..plan.clone()
        };
        let mut source_rows = 0u64;
        let mut page = Some(first);
        while let Some(got) = page {
            if !got.rows.is_empty() {
                source_rows += super::copy::copy_page(&tx, &stage, &got)
                    .await
                    .map_err(q(format!("staging the rows of {}", plan.entity)))?;
            }
            page = fetch.next(plan).await?;
        }
        let until = if record { Some(fetch.until()?) } else { None };
        let drift: Vec<(String, i64, i64)> = tx
            .query(&keyless::drift(&plan.table, &columns), &[])
            .await
            .map_err(q(format!("comparing the rows of {}", plan.entity)))?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        let mut set = super::keyless::multiset_of(&drift, source_rows);
        if !apply {
            return Ok(set);
        }
        if !set.is_equal() {
            if plan.parents.iter().any(|fk| fk.deferrable) {
                tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")
                    .await
                    .map_err(q("SET CONSTRAINTS".into()))?;
            }
            // Only the rows whose count differs are read again, by their hashes.
            let differing: Vec<&str> = drift.iter().map(|(h, _, _)| h.as_str()).collect();
            set.deleted = tx
                .execute(
                    &keyless::delete_surplus(&plan.table, &columns),
                    &[&differing],
                )
                .await
                .map_err(q(format!("deleting rows of {}", plan.entity)))?;
            let identity = columns.iter().any(|c| plan.identity.contains(c));
            set.inserted = tx
                .execute(
                    &keyless::insert_missing(&plan.table, &columns, identity),
                    &[&differing],
                )
                .await
                .map_err(q(format!("writing rows of {}", plan.entity)))?;
        }
        if let Some(until) = &until {
            let none: Option<String> = None;
            let no_key: Option<Vec<String>> = None;
            tx.execute(
                bookkeeping::RECORD_WATERMARK,
                &[
                    &plan.entity,
                    &Some(until.0.clone()),
                    &none,
                    &no_key,
                    &(source_rows as i64),
                    &none,
                ],
            )
            .await
            .map_err(q("recording the watermark".into()))?;
        }
        tx.commit()
            .await
            .map_err(q(format!("COMMIT of the rows of {}", plan.entity)))?;
        Ok(set)
    }

    /// Opens the transaction that tables filled together share: their constraints are checked
    /// once, at [`PageWriter::commit_group`].
    pub async fn begin_group(&self) -> Result<(), PgError> {
        let client = self.client().await?;
        client
            .batch_execute("BEGIN; SET CONSTRAINTS ALL DEFERRED")
            .await
            .map_err(|e| {
                self.target()
                    .query_error("BEGIN of tables filled together", &e)
            })?;
        *self.group.lock().await = Some(client);
        Ok(())
    }

    /// True while tables are being filled together: a lost connection then loses the whole
    /// group, so the pass starts over instead of retrying a page.
    pub async fn in_group(&self) -> bool {
        self.group.lock().await.is_some()
    }

    /// Commits the shared transaction: every deferred constraint is checked now.
    pub async fn commit_group(&self) -> Result<(), PgError> {
        if let Some(client) = self.group.lock().await.take() {
            client.batch_execute("COMMIT").await.map_err(|e| {
                self.target()
                    .query_error("COMMIT of tables filled together", &e)
            })?;
            self.db.count_written(
                self.group_rows
                    .swap(0, std::sync::atomic::Ordering::Relaxed),
            );
        }
        Ok(())
    }

    /// Rolls the shared transaction back: nothing of the group is kept, watermarks included.
    pub async fn abort_group(&self) {
        self.group_rows
            .store(0, std::sync::atomic::Ordering::Relaxed);
        if let Some(client) = self.group.lock().await.take() {
            if client.batch_execute("ROLLBACK").await.is_err() {
                // A connection that cannot roll back must not go back to the pool half-open.
                let _ = deadpool_postgres::Object::take(client);
            }
        }
    }

    /// Upserts a page, stages its deferred links and, with `state`, records the watermark, all
    /// in one transaction (or, while tables are filled together, in the shared one, behind a
    /// savepoint). Returns the number of rows written.
    pub async fn apply(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&Progress>,
    ) -> Result<u64, ApplyError> {
        let load = Load::for_page(plan, page);
        match self.apply_as(plan, page, state, load).await? {
            Some(written) => Ok(written),
            None => Ok(self
                .apply_as(plan, page, state, Load::Upsert)
                .await?
                .unwrap_or(0)),
        }
    }

    /// [`PageWriter::apply`] with the given load; `None` when COPY met a row that is there already
    /// (nothing of the page was kept).
    async fn apply_as(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&Progress>,
        load: Load,
    ) -> Result<Option<u64>, ApplyError> {
        let columns = pages::page_columns(plan, page).map_err(ApplyError::Consumer)?;
        self.owned()
            .await?
            .require(&plan.table.to_string())
            .map_err(ApplyError::Consumer)?;
        let mut group = self.group.lock().await;
        if let Some(client) = group.as_mut() {
            let q = |action: &str, e: tokio_postgres::Error| self.target().query_error(action, &e);
            client
                .batch_execute("SAVEPOINT page")
                .await
                .map_err(|e| q("SAVEPOINT", e))?;
            let written = self
                .write_page(&*client, plan, page, &columns, state, load)
                .await;
            let end = if matches!(written, Ok(Some(_))) {
                "RELEASE SAVEPOINT page"
            } else {
                "ROLLBACK TO SAVEPOINT page"
            };
            client.batch_execute(end).await.map_err(|e| q(end, e))?;
            if let Ok(Some(rows)) = &written {
                self.group_rows
                    .fetch_add(*rows, std::sync::atomic::Ordering::Relaxed);
            }
            return written;
        }
        drop(group);
        let mut client = self.client().await?;
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target().query_error(action, &e);
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        // Deferrable constraints are checked at COMMIT, so rows of one page may reference each
        // other in any order; one more round trip, spent only where a link is deferrable.
        if plan.parents.iter().any(|fk| fk.deferrable) {
            tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")
                .await
                .map_err(q("SET CONSTRAINTS".into()))?;
        }
        let Some(written) = self
            .write_page(&tx, plan, page, &columns, state, load)
            .await?
        else {
            return Ok(None);
        };
        tx.commit()
            .await
            .map_err(q(format!("COMMIT of a page of {}", plan.entity)))?;
        self.db.count_written(written);
        Ok(Some(written))
    }

    /// The statements of one page, in the caller's transaction.
    async fn write_page(
        &self,
        tx: &impl super::copy::PageClient,
        plan: &EntityPlan,
        page: &ReceivedPage,
        columns: &[(String, String)],
        state: Option<&Progress>,
        load: Load,
    ) -> Result<Option<u64>, ApplyError> {
        let links = pages::staged_links(plan, page);
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target().query_error(action, &e);
        let wrote = if page.rows.is_empty() {
            Ok(0)
        } else if load == Load::Copy {
            super::copy::copy_page(tx, plan, page).await
        } else {
            let statement = statements::upsert(&statements::Write {
                table: &plan.table,
                key: &plan.key,
                columns,
                deferred: &plan.deferred,
                identity: columns.iter().any(|(c, _)| plan.identity.contains(c)),
            });
            let values: Vec<Vec<Option<&str>>> = (0..page.columns.len())
                .map(|i| page.rows.iter().map(|row| row.get(i)).collect())
                .collect();
            tx.execute(&statement, &params(&values)).await
        };
        let written = match wrote {
            Ok(n) => n,
            Err(e) if load == Load::Copy && e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                return Ok(None);
            }
            Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => {
                let constraint = e
                    .as_db_error()
                    .and_then(|d| d.constraint())
                    .map(String::from);
                return Err(ApplyError::MissingParents(constraint));
            }
            Err(e) => {
                return Err(q(format!("writing a page of {}", plan.entity))(e).into());
            }
        };
        if !links.is_empty() {
            // Keys and values travel as JSON arrays of arrays: a text[][] must be rectangular and
            // NULL-free in places these are not.
            let keys = serde_json::json!(links.iter().map(|(k, _)| k).collect::<Vec<_>>());
            let vals = serde_json::json!(links.iter().map(|(_, v)| v).collect::<Vec<_>>());
            tx.execute(
                bookkeeping::STAGE_LINKS,
                &[&plan.entity, &plan.deferred, &keys, &vals],
            )
            .await
            .map_err(q(format!("staging the links of {}", plan.entity)))?;
        }
        match state {
            Some(Progress::Entity(state)) => {
                tx.execute(
                    bookkeeping::RECORD_WATERMARK,
                    &[
                        &plan.entity,
                        &state.synced_until,
                        &state.pass_until,
                        &state.after_key,
                        &state.rows_synced,
                        &state.after_tag,
                    ],
                )
                .await
                .map_err(q("recording the watermark".into()))?;
            }
            Some(Progress::Range(range)) => {
                let recorded = tx
                    .execute(
                        bookkeeping::ADVANCE_RANGE,
                        &[
                            &range.entity,
                            &range.range_no,
                            &range.after_key,
                            &range.done,
                            &range.rows_synced,
                            &range.until,
                            &range.after_tag,
                        ],
                    )
                    .await
                    .map_err(q("recording where a range stands".into()))?;
                if recorded != 1 {
                    // The range was forgotten meanwhile (its watermark reset): nothing of the
                    // page is kept.
                    return Err(ApplyError::Consumer(ConsumerError::BadReply {
                        entity: plan.entity.clone(),
                        reason: format!("range {} of this pass is no longer recorded; the next pass reads the table again", range.range_no),
                    }));
                }
            }
            None => {}
        }
        Ok(Some(written))
    }

    /// Sets the staged links of `plan`'s table and forgets them, in one transaction. Returns the
    /// rows linked.
    pub async fn set_links(&self, plan: &EntityPlan) -> Result<u64, PgError> {
        self.refuse_unless_owned("setting the deferred links of", plan)
            .await?;
        let mut client = self.client().await?;
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target().query_error(action, &e);
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        let linked = if plan.deferred.is_empty() {
            0
        } else {
            let sql = statements::set_later(
                &plan.table,
                &plan.key,
                &plan.deferred_types(),
                bookkeeping::STAGED_LINKS,
            );
            tx.execute(&sql, &[&plan.entity, &plan.deferred])
                .await
                .map_err(q(format!("setting the deferred links of {}", plan.entity)))?
        };
        tx.execute(bookkeeping::CLEAR_LINKS, &[&plan.entity])
            .await
            .map_err(q("clearing maskbus.pending_links".into()))?;
        tx.commit()
            .await
            .map_err(q(format!("COMMIT of the links of {}", plan.entity)))?;
        Ok(linked)
    }

    /// The tuples of `parent_columns` (name, type) of `plan`'s table among `tuples` that no row
    /// has yet.
    pub async fn missing(
        &self,
        plan: &EntityPlan,
        lookup: &[(String, String)],
        tuples: &[Vec<String>],
    ) -> Result<Vec<Vec<String>>, PgError> {
        let client = self.client().await?;
        let arrays: Vec<Vec<&str>> = (0..lookup.len())
            .map(|i| tuples.iter().map(|t| t[i].as_str()).collect())
            .collect();
        let rows = client
            .query(&statements::missing(&plan.table, lookup), &params(&arrays))
            .await
            .map_err(|e| {
                self.target()
                    .query_error(format!("looking for missing rows of {}", plan.entity), &e)
            })?;
        Ok(rows
            .iter()
            .map(|r| (0..lookup.len()).map(|i| r.get(i)).collect())
            .collect())
    }

    /// Sets every sequence behind a synced column past the largest synced value, so the test
    /// engineers' own inserts do not collide with synced rows.
    pub async fn move_sequences(&self, plans: &[EntityPlan]) -> Result<(), PgError> {
        for plan in plans {
            self.refuse_unless_owned("moving the sequences of", plan)
                .await?;
        }
        let client = self.client().await?;
        for plan in plans {
            for (sequence, column) in
                maskbus_pg::catalog::sequences(self.target(), &client, &plan.table).await?
            {
                let sql = maskbus_pg::statements::move_sequence_past(&plan.table, &column);
                client.query(&sql, &[&sequence]).await.map_err(|e| {
                    self.target().query_error(
                        format!("moving the sequence of {}.{column}", plan.entity),
                        &e,
                    )
                })?;
            }
        }
        Ok(())
    }

    /// Deletes rows by key from several tables in one transaction, in the order given (children
    /// first): constraints deferred, and the links that close a cycle cut first, so rows that
    /// reference each other go together. Returns how many rows were deleted.
    pub async fn delete_keys(
        &self,
        deletions: &[(&EntityPlan, &[Vec<String>])],
    ) -> Result<u64, PgError> {
        for (plan, _) in deletions {
            self.refuse_unless_owned("deleting rows of", plan).await?;
        }
        let mut client = self.client().await?;
        let q =
            |action: String| move |e: tokio_postgres::Error| self.target().query_error(action, &e);
        let tx = client.transaction().await.map_err(q("BEGIN".into()))?;
        tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")
            .await
            .map_err(q("SET CONSTRAINTS".into()))?;
        let key_arrays = |plan: &EntityPlan, keys: &[Vec<String>]| -> Vec<Vec<String>> {
            (0..plan.key.columns.len())
                .map(|i| keys.iter().map(|k| k[i].clone()).collect())
                .collect()
        };
        for (plan, keys) in deletions.iter().filter(|(p, _)| !p.deferred.is_empty()) {
            let columns = key_arrays(plan, keys);
            tx.execute(
                &statements::unlink_by_key(&plan.table, &plan.key, &plan.deferred),
                &params(&columns),
            )
            .await
            .map_err(q(format!("cutting the links of rows of {}", plan.entity)))?;
        }
        let mut deleted = 0;
        for (plan, keys) in deletions {
            let columns = key_arrays(plan, keys);
            deleted += tx
                .execute(
                    &statements::delete_by_key(&plan.table, &plan.key),
                    &params(&columns),
                )
                .await
                .map_err(q(format!("deleting rows of {}", plan.entity)))?;
        }
        tx.commit()
            .await
            .map_err(q("COMMIT of the deleted rows".into()))?;
        Ok(deleted)
    }
}
