//! `maskbus verify`: is the target equal to the masked source, and if not, where not.
//!
//! For each table the producer hashes its masked rows in buckets of consecutive keys; the
//! consumer reads its own rows of the same key range once, puts them in the same buckets
//! ([`maskbus_protocol::digest::Bucketing`]) and compares. Only buckets that differ are narrowed down, to
//! one hash per row on both sides. So two equal databases cost one read of each side. What it
//! reports is counts and keys (as the target holds them: kept, or masked by a bijective
//! pseudonym), never a value. A table whose key is masked has another order in the target than
//! in the source: its rows are bucketed by their masked key's hash instead (the producer's
//! first reply says so), the same on both sides whatever the order.
//!
//! `--repair` then deletes the rows the source does not have (children first, over all tables),
//! and asks the producer for the missing and different rows by key (parents first); deletes a
//! write had to come first for (a parent row a child still pointed at) are tried again after the
//! writes. A table that cannot be compared or repaired is named with the reason and the others go
//! on: a verify never says equal while a served table is left out.
//!
//! In watermark mode each pass follows the source's deletes with the same machinery
//! ([`pass_following_deletes`]): once the pass's rows are in, the tables it synced are compared
//! and repaired. Each table's last check is recorded in `maskbus.delete_checks`, which `maskbus
//! status` reads.

use super::bookkeeping;
use super::pages::{EntityPlan, Skipped};
use super::parents::Parents;
use super::writer::PageWriter;
use super::{Consumer, ConsumerError, PassReport};
use futures_util::StreamExt;
use maskbus_pg::statements;
use maskbus_pg::READ_ONLY_CANONICAL;
use maskbus_protocol::digest::{hex, spread_of, unhex, Bucketing, RowHasher, Tally};
use maskbus_protocol::{
    HashReply, KeyCursor, ReceivedReply, Request, MAX_PAGE_ROWS, SPREAD_BUCKETS, VERSION,
};
use std::collections::{BTreeMap, BTreeSet};
use tokio::sync::watch;
use tokio_postgres::types::ToSql;

/// How one table differs from the masked source.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TableDrift {
    pub entity: String,
    pub source_rows: u64,
    pub target_rows: u64,
    /// Keys the source has and the target lacks.
    pub missing: Vec<KeyCursor>,
    /// Keys the target has and the source does not.
    pub extra: Vec<KeyCursor>,
    /// Keys both have, with different values.
    pub different: Vec<KeyCursor>,
}

impl TableDrift {
    pub fn is_equal(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.different.is_empty()
    }
}

/// What a verify found (and, with repair, mended).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct VerifyReport {
    pub tables: Vec<TableDrift>,
    /// Rows deleted and rows written by a repair.
    pub deleted: u64,
    pub written: u64,
    /// Served tables neither verified nor repaired, each with the reason (one that fails
    /// closed, that is not maskbus's to write, that a pass could not sync, or whose comparison
    /// failed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_verified: Vec<NotVerified>,
    /// Tables compared whose repair failed, each with the reason (the others were repaired).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_repaired: Vec<NotVerified>,
}

/// A served table a verify left alone, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NotVerified {
    pub entity: String,
    pub reason: String,
}

impl VerifyReport {
    /// Every served table was compared and is equal: none was left out.
    pub fn is_equal(&self) -> bool {
        self.not_verified.is_empty() && self.tables_equal()
    }

    /// The tables compared are equal (some may have been left out: see `not_verified`).
    pub fn tables_equal(&self) -> bool {
        self.tables.iter().all(TableDrift::is_equal)
    }

    /// A repair made every served table equal: none was left out and none failed.
    pub fn all_repaired(&self) -> bool {
        self.not_verified.is_empty() && self.not_repaired.is_empty()
    }

    /// Whether `entity` was compared and, if it differed, repaired without a failure.
    fn followed(&self, entity: &str, repaired: bool) -> bool {
        self.tables
            .iter()
            .any(|t| t.entity == entity && (repaired || t.is_equal()))
            && !self.not_repaired.iter().any(|n| n.entity == entity)
    }
}

/// An error that stops the whole verify, not only the table it came from: the producer does
/// not answer, or the consumer was told to stop.
fn stops_all(e: &ConsumerError) -> bool {
    e.is_transient() || matches!(e, ConsumerError::NoReply { .. } | ConsumerError::Stopped)
}

/// A watermark pass that follows the source's deletes: the pass (see [`crate::pass::Pass`]),
/// then, unless `follow_deletes` is off, the tables it synced (this worker's share, never one
/// that failed) compared with the masked source by key-range hashes and made equal
/// ([`Verifier::follow_deletes`]). A table whose check fails is reported with the pass's
/// failures (the pass is partial) and recorded; the others' deletes are followed.
pub async fn pass_following_deletes(
    consumer: &Consumer,
    stop: &watch::Receiver<bool>,
) -> Result<PassReport, ConsumerError> {
    let config = consumer.config();
    let (plans, skipped) = consumer.plan().await?;
    let passed = super::pass::Pass::new(config, consumer.asker(), consumer.db(), stop)
        .run(plans.clone(), skipped)
        .await;
    let failed: BTreeSet<String> = match &passed {
        Ok(report) => report.failed.iter().map(|f| f.entity.clone()).collect(),
        Err(ConsumerError::Partial { failed, .. }) => {
            failed.iter().map(|f| f.entity.clone()).collect()
        }
        Err(_) => return passed,
    };
    if *stop.borrow() {
        return passed;
    }
    let share = super::workers::assign(&plans, config.workers);
    let me = config.worker.saturating_sub(1);
    let synced: Vec<EntityPlan> = plans
        .into_iter()
        .zip(share)
        .filter(|(p, worker)| *worker == me && !failed.contains(&p.entity))
        .map(|(p, _)| p)
        .collect();
    let names: BTreeSet<String> = synced.iter().map(|p| p.entity.clone()).collect();
    if !config.follow_deletes {
        return with_schema_after_rows(consumer, &names, passed).await;
    }
    let checked = Verifier::connect(consumer)
        .await?
        // The pass made each keyless table equal, deletes included (it reads it whole).
        .follow_deletes(synced.into_iter().filter(|p| !p.key.is_keyless()).collect())
        .await?;
    if checked.deleted + checked.written > 0 {
        tracing::info!(
            deleted = checked.deleted,
            written = checked.written,
            "followed the source's deletes"
        );
    }
    let check_failed: Vec<Skipped> = checked
        .not_verified
        .into_iter()
        .chain(checked.not_repaired)
        .map(|n| {
            tracing::error!(entity = %n.entity, reason = %n.reason, "could not follow this table's deletes; following the others'");
            Skipped {
                reason: format!("following its deletes failed: {}", n.reason),
                entity: n.entity,
            }
        })
        .collect();
    if check_failed.is_empty() {
        return with_schema_after_rows(consumer, &names, passed).await;
    }
    let passed = with_schema_after_rows(consumer, &names, passed).await;
    match passed {
        Ok(report) => Err(ConsumerError::Partial {
            tables: report.rows.len() + report.failed.len(),
            failed: check_failed,
        }),
        Err(ConsumerError::Partial { mut failed, tables }) => {
            failed.extend(check_failed);
            Err(ConsumerError::Partial { failed, tables })
        }
        Err(e) => Err(e),
    }
}

/// What the rows of `synced` must satisfy and the target lacks (a migration's NOT NULL, unique
/// index, check or foreign key; `crate::schema::after_rows`), added now that their rows and
/// deletes are in: a table whose rows do not satisfy it yet fails this pass (its rows are
/// synced), said and recorded, and it is tried again by the next.
async fn with_schema_after_rows(
    consumer: &Consumer,
    synced: &BTreeSet<String>,
    passed: Result<PassReport, ConsumerError>,
) -> Result<PassReport, ConsumerError> {
    let waiting = super::schema::after_rows(consumer.db(), synced).await?;
    if waiting.is_empty() {
        return passed;
    }
    if let Err(e) = consumer.db().record_failures(&[], &waiting).await {
        tracing::warn!(error = %e, "could not record which tables failed (status and /health read it)");
    }
    match passed {
        Ok(report) => Err(ConsumerError::Partial {
            tables: report.rows.len() + report.failed.len(),
            failed: waiting,
        }),
        Err(ConsumerError::Partial { mut failed, tables }) => {
            failed.extend(waiting);
            Err(ConsumerError::Partial { failed, tables })
        }
        Err(e) => Err(e),
    }
}

/// One key range of one target table, read to be hashed.
struct TargetRange<'a> {
    client: &'a tokio_postgres::Client,
    target: &'a maskbus_pg::Database,
    plan: &'a EntityPlan,
    /// The columns the producer hashed, in its order.
    columns: &'a [String],
}

impl TargetRange<'_> {
    /// Hashes the target's rows with key in (`after`, `through`] as they stream in, in key
    /// order, handing each key and hash to `each`; returns how many there were. Memory stays one
    /// row however large the range.
    async fn each_hash(
        &self,
        after: &Option<KeyCursor>,
        through: &Option<KeyCursor>,
        mut each: impl FnMut(&[&str], u64),
    ) -> Result<u64, ConsumerError> {
        let plan = self.plan;
        if let Some(column) = self.columns.iter().find(|c| !plan.types.contains_key(*c)) {
            return Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: format!(
                    "the source hashes column {}, which the target lacks",
                    maskbus_model::shorten(column)
                ),
            });
        }
        let sql = statements::key_range(
            &plan.table,
            &plan.key,
            self.columns,
            after.is_some(),
            through.is_some(),
            "true",
        );
        let failed = |e: tokio_postgres::Error| {
            self.target
                .query_error(format!("reading {} to verify it", plan.entity), &e)
        };
        let params: [&(dyn ToSql + Sync); 3] = [after, through, &i64::MAX];
        let stream = self
            .client
            .query_raw(&sql, params.iter().copied())
            .await
            .map_err(failed)?;
        futures_util::pin_mut!(stream);
        let positions: Vec<usize> = plan
            .key
            .columns
            .iter()
            .filter_map(|k| self.columns.iter().position(|c| *c == k.name))
            .collect();
        let mut hasher = RowHasher::default();
        let mut read = 0;
        while let Some(row) = stream.next().await.transpose().map_err(failed)? {
            let key: Vec<&str> = positions
                .iter()
                .map(|&i| row.get::<_, Option<&str>>(i).unwrap_or_default())
                .collect();
            let hash = hasher.hash((0..self.columns.len()).map(|i| row.get(i)));
            each(&key, hash);
            read += 1;
        }
        Ok(read)
    }
}

/// The row hashes of a key range on one side, by key.
type RowHashes = BTreeMap<Vec<String>, String>;

/// A hash reply names this entity, its key as the target's, every key column among the
/// columns hashed, and every key it carries whole: what the comparison and a repair rely on.
fn hashes_fit(plan: &EntityPlan, reply: &HashReply) -> bool {
    let width = plan.key.columns.len();
    let spread_fits = reply
        .spread_buckets
        .iter()
        .all(|b| b.index < SPREAD_BUCKETS)
        && (reply.spread || reply.spread_buckets.is_empty())
        && (!reply.spread || reply.buckets.is_empty());
    spread_fits
        && reply.entity == plan.entity
        && reply.key == plan.key.names()
        && reply.key.iter().all(|k| reply.columns.contains(k))
        && reply.buckets.iter().all(|b| b.last.len() == width)
        && reply.rows.iter().all(|r| r.key.len() == width)
        && reply.next_after.as_ref().is_none_or(|k| k.len() == width)
        && super::pages::tag_fits(reply.next_after.as_ref(), reply.next_after_tag.as_deref())
}

/// The source's and the target's rows of one range (or one round of spread buckets), by key:
/// what the target lacks, has different, or has extra.
fn compare(source: &RowHashes, ours: RowHashes, drift: &mut TableDrift) {
    for (key, hash) in source {
        match ours.get(key) {
            None => drift.missing.push(key.clone()),
            Some(h) if h != hash => drift.different.push(key.clone()),
            Some(_) => {}
        }
    }
    drift
        .extra
        .extend(ours.into_keys().filter(|k| !source.contains_key(k)));
}

/// A cursor as the producer issued it: its key, and its tag when it has one (over a masked key).
type Tagged = Option<(KeyCursor, Option<String>)>;

/// The cursor a hash reply ends at, with its tag.
fn next_of(reply: &HashReply) -> Tagged {
    reply
        .next_after
        .clone()
        .map(|key| (key, reply.next_after_tag.clone()))
}

/// A bucket's last key (a kept key: hashed by key range), which needs no tag.
fn untagged(key: Option<KeyCursor>) -> Tagged {
    key.map(|key| (key, None))
}

/// How a hash request spreads an entity with a masked key.
enum Spread {
    /// By key range (the key is kept).
    No,
    /// The spread buckets' tallies.
    Buckets,
    /// The rows of these spread buckets.
    RowsOf(Vec<u32>),
}

/// Rows on either side that one round of narrowing a spread holds in memory.
const NARROW_ROWS: u64 = 100_000;

/// Compares the target with the masked source, table by table, over one read-only
/// connection of its own that reads values as the producer prints them; repairs on request.
pub struct Verifier<'a> {
    consumer: &'a Consumer,
    /// The target, read-only, values in the canonical text the producer hashes.
    target: maskbus_pg::Database,
    client: tokio_postgres::Client,
}

impl<'a> Verifier<'a> {
    pub async fn connect(consumer: &'a Consumer) -> Result<Self, ConsumerError> {
        let mut target = consumer.db().target().clone();
        target.config.options(READ_ONLY_CANONICAL);
        let client = target.connect().await?;
        Ok(Self {
            consumer,
            target,
            client,
        })
    }

    /// Compares every synced table with the masked source; with `repair`, makes them equal.
    pub async fn run(self, repair: bool) -> Result<VerifyReport, ConsumerError> {
        self.run_only(None, repair).await
    }

    /// [`Verifier::run`] over `only` these entities (every one with `None`).
    pub async fn run_only(
        self,
        only: Option<&BTreeSet<String>>,
        repair: bool,
    ) -> Result<VerifyReport, ConsumerError> {
        let (mut plans, mut skipped) = self.consumer.plan().await?;
        if let Some(only) = only {
            plans.retain(|p| only.contains(&p.entity));
            skipped.retain(|s| only.contains(&s.entity));
        }
        self.run_plans(plans, skipped, repair).await
    }

    /// [`Verifier::run`] over every table but those of `failed` (a pass could not sync them),
    /// which are named not verified with the reason: the others are compared, and repaired with
    /// `repair`.
    pub async fn run_except(
        self,
        failed: &[Skipped],
        repair: bool,
    ) -> Result<VerifyReport, ConsumerError> {
        let (mut plans, mut skipped) = self.consumer.plan().await?;
        plans.retain(|p| !failed.iter().any(|f| f.entity == p.entity));
        for f in failed {
            if !skipped.iter().any(|s| s.entity == f.entity) {
                skipped.push(Skipped {
                    entity: f.entity.clone(),
                    reason: format!("the sync failed: {}", f.reason),
                });
            }
        }
        self.run_plans(plans, skipped, repair).await
    }

    /// Compares the tables a pass synced with the masked source and makes them equal: the rows
    /// the source deleted are deleted (children first); rows that differ or are missing (written
    /// after the pass's snapshot) are fetched by key. A table whose comparison or repair fails
    /// is named with the reason in the report, the others go on.
    pub async fn follow_deletes(
        self,
        plans: Vec<EntityPlan>,
    ) -> Result<VerifyReport, ConsumerError> {
        self.run_plans(plans, Vec::new(), true).await
    }

    /// Compares `plans` one by one (a table whose comparison fails is named, the others go on),
    /// `skipped` named not verified; with `repair`, makes the tables compared equal. Records
    /// in `maskbus.delete_checks` the tables found equal or repaired, and those that failed.
    async fn run_plans(
        self,
        plans: Vec<EntityPlan>,
        skipped: Vec<Skipped>,
        repair: bool,
    ) -> Result<VerifyReport, ConsumerError> {
        let mut report = VerifyReport {
            not_verified: skipped
                .into_iter()
                .map(|s| NotVerified {
                    entity: s.entity,
                    reason: s.reason,
                })
                .collect(),
            ..VerifyReport::default()
        };
        let mut compared = Vec::with_capacity(plans.len());
        let mut failed = Vec::new();
        // Keyless tables are compared (and with `repair` made equal) as multisets, on their own:
        // their drift joins the report after the keyed tables' repair.
        let mut keyless = Vec::new();
        // A keyless table's repair may need parent rows the target lacks (asked by them).
        let all = if repair && plans.iter().any(|p| p.key.is_keyless()) {
            plans.clone()
        } else {
            Vec::new()
        };
        for plan in plans {
            if plan.key.is_keyless() {
                match self.verify_keyless(&plan, repair, &all).await {
                    Ok(set) => {
                        if !set.is_equal() {
                            tracing::warn!(entity = %plan.entity, missing = set.missing.len(), extra = set.extra.len(), "the target's rows differ from the masked source's (as multisets)");
                        }
                        report.deleted += set.deleted;
                        report.written += set.inserted;
                        keyless.push((plan, set));
                    }
                    Err(e) if stops_all(&e) => return Err(e),
                    Err(e) => {
                        tracing::error!(entity = %plan.entity, error = %e, "could not compare this table; comparing the others");
                        failed.push(NotVerified {
                            entity: plan.entity.clone(),
                            reason: format!("its comparison failed: {e}"),
                        });
                    }
                }
                continue;
            }
            match self.verify_table(&plan).await {
                Ok(drift) => {
                    if !drift.is_equal() {
                        tracing::warn!(entity = %plan.entity, missing = drift.missing.len(), extra = drift.extra.len(), different = drift.different.len(), "the target differs from the masked source");
                    }
                    report.tables.push(drift);
                    compared.push(plan);
                }
                Err(e) if stops_all(&e) => return Err(e),
                Err(e) => {
                    tracing::error!(entity = %plan.entity, error = %e, "could not compare this table; comparing the others");
                    failed.push(NotVerified {
                        entity: plan.entity.clone(),
                        reason: format!("its comparison failed: {e}"),
                    });
                }
            }
        }
        if repair && !report.tables_equal() {
            self.repair(&compared, &mut report).await?;
        }
        for (plan, set) in keyless {
            report.tables.push(TableDrift {
                entity: plan.entity.clone(),
                source_rows: set.source_rows,
                target_rows: set.target_rows,
                missing: set.missing,
                extra: set.extra,
                different: Vec::new(),
            });
            compared.push(plan);
        }
        let followed: Vec<String> = compared
            .iter()
            .map(|p| p.entity.clone())
            .filter(|e| report.followed(e, repair))
            .collect();
        failed.extend(report.not_repaired.iter().cloned());
        if let Err(e) = self.record_checks(&followed, &failed).await {
            tracing::warn!(error = %e, "could not record which tables' deletes were followed (status reads it)");
        }
        report.not_verified.extend(
            failed
                .into_iter()
                .filter(|f| !report.not_repaired.iter().any(|n| n.entity == f.entity)),
        );
        Ok(report)
    }

    /// Records in `maskbus.delete_checks` the tables whose deletes were followed up to their
    /// watermark, and those whose check failed with the reason.
    async fn record_checks(
        &self,
        followed: &[String],
        failed: &[NotVerified],
    ) -> Result<(), ConsumerError> {
        if followed.is_empty() && failed.is_empty() {
            return Ok(());
        }
        let db = self.consumer.db();
        let client = db.client().await?;
        let q = |e: tokio_postgres::Error| {
            ConsumerError::from(
                db.target()
                    .query_error("recording maskbus.delete_checks", &e),
            )
        };
        if !followed.is_empty() {
            client
                .execute(bookkeeping::RECORD_DELETE_CHECKS, &[&followed])
                .await
                .map_err(q)?;
        }
        for f in failed {
            client
                .execute(
                    bookkeeping::RECORD_DELETE_CHECK_FAILURE,
                    &[&f.entity, &f.reason],
                )
                .await
                .map_err(q)?;
        }
        Ok(())
    }

    async fn ask_hashes(
        &self,
        plan: &EntityPlan,
        after: Tagged,
        through: Option<KeyCursor>,
        rows: bool,
    ) -> Result<HashReply, ConsumerError> {
        self.ask(plan, after, through, rows, Spread::No).await
    }

    /// Hashes after `after` (a cursor the producer issued, with its tag) and up to `through`
    /// (a bucket's last key: a kept key, which needs no tag).
    async fn ask(
        &self,
        plan: &EntityPlan,
        after: Tagged,
        through: Option<KeyCursor>,
        rows: bool,
        spread: Spread,
    ) -> Result<HashReply, ConsumerError> {
        let (after, after_tag) = after.unzip();
        let (spread, only) = match spread {
            Spread::No => (false, Vec::new()),
            Spread::Buckets => (true, Vec::new()),
            Spread::RowsOf(only) => (true, only),
        };
        let request = Request::Hashes {
            v: VERSION,
            entity: plan.entity.clone(),
            after,
            after_tag: after_tag.flatten(),
            through,
            through_tag: None,
            rows,
            subset: self.consumer.config().subset.clone(),
            spread,
            only,
        };
        let what = format!("hashes of {}", plan.entity);
        match self
            .consumer
            .asker()
            .ask_patiently(&request, &what)
            .await?
            .into_iter()
            .next()
        {
            Some(ReceivedReply::Hashes(reply)) if hashes_fit(plan, &reply) => Ok(reply),
            _ => Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "expected hashes of this table, keyed as the target is, every key whole"
                    .into(),
            }),
        }
    }

    /// The target's rows with key in (`after`, `through`], as (key, hash), in key order.
    async fn target_hashes(
        &self,
        plan: &EntityPlan,
        columns: &[String],
        after: &Option<KeyCursor>,
        through: &Option<KeyCursor>,
    ) -> Result<Vec<(Vec<String>, u64)>, ConsumerError> {
        let mut rows = Vec::new();
        let range = TargetRange {
            client: &self.client,
            target: &self.target,
            plan,
            columns,
        };
        range
            .each_hash(after, through, |key, hash| {
                rows.push((key.iter().map(|k| k.to_string()).collect(), hash))
            })
            .await?;
        Ok(rows)
    }

    /// Compares a keyless table with the masked source as multisets (every row's count), and
    /// with `repair` makes it equal in the same transaction ([`crate::keyless`]).
    /// Compares a keyless table as a multiset, and with `repair` makes it equal; a row that
    /// references a parent the target lacks (in a subset, one that joined it unchanged) has
    /// its parents asked for (among `plans`) and written first.
    async fn verify_keyless(
        &self,
        plan: &EntityPlan,
        repair: bool,
        plans: &[EntityPlan],
    ) -> Result<crate::keyless::Multiset, ConsumerError> {
        let config = self.consumer.config();
        let fetch = || {
            crate::keyless::WholeFetch::new(
                self.consumer.asker(),
                plan,
                None,
                config.page_size,
                config.pages_per_request,
                config.subset.clone(),
            )
        };
        let writer = PageWriter::new(self.consumer.db());
        match writer
            .converge_keyless(plan, &mut fetch(), repair, false)
            .await
        {
            Err(ConsumerError::Pg(e))
                if repair
                    && e.sqlstate()
                        == Some(tokio_postgres::error::SqlState::FOREIGN_KEY_VIOLATION.code()) =>
            {
                let parents = Parents::new(self.consumer.asker(), &writer, plans);
                let mut applied = crate::parents::Applied::default();
                let mut again = fetch();
                while let Some(page) = again.next(plan).await? {
                    if !page.rows.is_empty() {
                        parents.supply(plan, &page, &mut applied, 0).await?;
                    }
                }
                writer
                    .converge_keyless(plan, &mut fetch(), repair, false)
                    .await
            }
            outcome => outcome,
        }
    }

    async fn verify_table(&self, plan: &EntityPlan) -> Result<TableDrift, ConsumerError> {
        let mut drift = TableDrift {
            entity: plan.entity.clone(),
            ..TableDrift::default()
        };
        let mut cursor: Option<KeyCursor> = None;
        let mut reply = self.ask_hashes(plan, None, None, false).await?;
        if reply.spread {
            return self.verify_spread(plan, reply, drift).await;
        }
        loop {
            // The range this reply covers; the last one is open (the target's rows beyond the
            // source's last key are extra).
            let through = if reply.more {
                reply.next_after.clone()
            } else {
                None
            };
            // The producer hashes the next range while the target's rows of this one are read.
            let ask_next = async {
                match reply.more {
                    true => Some(self.ask_hashes(plan, next_of(&reply), None, false).await),
                    false => None,
                }
            };
            let mut bucketing = Bucketing::new(&reply.buckets);
            let range = TargetRange {
                client: &self.client,
                target: &self.target,
                plan,
                columns: &reply.columns,
            };
            let (next, read) = tokio::join!(
                ask_next,
                range.each_hash(&cursor, &through, |key, hash| bucketing.add(key, hash))
            );
            drift.target_rows += read?;
            drift.source_rows += reply.buckets.iter().map(|b| b.count).sum::<u64>();
            for index in bucketing.differing() {
                let lower = if index == 0 {
                    cursor.clone()
                } else {
                    Some(reply.buckets[index - 1].last.clone())
                };
                let upper = Some(reply.buckets[index].last.clone());
                self.narrow(plan, &reply.columns, lower, upper, &mut drift)
                    .await?;
            }
            if bucketing.beyond.count > 0 {
                let from = reply
                    .buckets
                    .last()
                    .map(|b| b.last.clone())
                    .or(cursor.clone());
                let extra = self
                    .target_hashes(plan, &reply.columns, &from, &None)
                    .await?;
                drift.extra.extend(extra.into_iter().map(|(k, _)| k));
            }
            match next {
                None => return Ok(drift),
                Some(next) => {
                    cursor = reply.next_after.take();
                    reply = next?;
                }
            }
        }
    }

    /// Compares a table whose key the producer masks: the target's key order is not the
    /// source's, so both sides put each row in a bucket by its masked key's hash
    /// ([`spread_of`]). The source's buckets come in replies over the source's order, the
    /// target is read once in its own; only buckets that differ are compared row by row, in
    /// rounds of at most [`NARROW_ROWS`] rows so memory stays bounded by the drift.
    async fn verify_spread(
        &self,
        plan: &EntityPlan,
        first: HashReply,
        mut drift: TableDrift,
    ) -> Result<TableDrift, ConsumerError> {
        let buckets = SPREAD_BUCKETS as usize;
        let mut source = vec![Tally::default(); buckets];
        let mut reply = first;
        let columns = reply.columns.clone();
        loop {
            for bucket in &reply.spread_buckets {
                let Some(sum) = unhex(&bucket.hash) else {
                    return Err(ConsumerError::BadReply {
                        entity: plan.entity.clone(),
                        reason: "a spread bucket's hash is not 16 letters a to p".into(),
                    });
                };
                let tally = &mut source[bucket.index as usize];
                tally.count += bucket.count;
                tally.sum = tally.sum.wrapping_add(sum);
            }
            if !reply.more {
                break;
            }
            let after = next_of(&reply);
            reply = self.ask(plan, after, None, false, Spread::Buckets).await?;
            if !reply.spread || reply.columns != columns {
                return Err(self.not_spread(plan));
            }
        }
        let mut target = vec![Tally::default(); buckets];
        let range = TargetRange {
            client: &self.client,
            target: &self.target,
            plan,
            columns: &columns,
        };
        drift.target_rows = range
            .each_hash(&None, &None, |key, hash| {
                target[spread_of(key.iter().copied()) as usize].add(hash)
            })
            .await?;
        drift.source_rows = source.iter().map(|t| t.count).sum();
        let differing: Vec<usize> = (0..buckets).filter(|&i| source[i] != target[i]).collect();
        // Rounds of buckets holding at most NARROW_ROWS rows on either side (one bucket at the
        // least).
        let mut rounds: Vec<Vec<u32>> = Vec::new();
        let mut size = 0u64;
        for index in differing {
            let rows = source[index].count.max(target[index].count);
            if rounds.is_empty() || size + rows > NARROW_ROWS {
                rounds.push(Vec::new());
                size = 0;
            }
            size += rows;
            if let Some(round) = rounds.last_mut() {
                round.push(index as u32);
            }
        }
        for round in rounds {
            let wanted: std::collections::HashSet<u32> = round.iter().copied().collect();
            let mut theirs = RowHashes::new();
            let mut after = None;
            loop {
                let reply = self
                    .ask(plan, after, None, true, Spread::RowsOf(round.clone()))
                    .await?;
                if !reply.spread {
                    return Err(self.not_spread(plan));
                }
                let more = reply.more;
                after = next_of(&reply);
                for row in reply.rows {
                    theirs.insert(row.key, row.hash);
                }
                if !more {
                    break;
                }
            }
            let mut ours = RowHashes::new();
            range
                .each_hash(&None, &None, |key, hash| {
                    if wanted.contains(&spread_of(key.iter().copied())) {
                        ours.insert(key.iter().map(|k| k.to_string()).collect(), hex(hash));
                    }
                })
                .await?;
            compare(&theirs, ours, &mut drift);
        }
        Ok(drift)
    }

    fn not_spread(&self, plan: &EntityPlan) -> ConsumerError {
        ConsumerError::BadReply {
            entity: plan.entity.clone(),
            reason: "the producer stopped hashing this table by spread halfway (did its policy change? run verify again)".into(),
        }
    }

    /// Compares one key range row by row.
    async fn narrow(
        &self,
        plan: &EntityPlan,
        columns: &[String],
        lower: Option<KeyCursor>,
        upper: Option<KeyCursor>,
        drift: &mut TableDrift,
    ) -> Result<(), ConsumerError> {
        let mut source = RowHashes::new();
        let mut after = untagged(lower.clone());
        loop {
            let reply = self
                .ask_hashes(plan, after.clone(), upper.clone(), true)
                .await?;
            let more = reply.more;
            after = next_of(&reply);
            for row in reply.rows {
                source.insert(row.key, row.hash);
            }
            if !more {
                break;
            }
        }
        let ours: RowHashes = self
            .target_hashes(plan, columns, &lower, &upper)
            .await?
            .into_iter()
            .map(|(k, h)| (k, hex(h)))
            .collect();
        compare(&source, ours, drift);
        Ok(())
    }

    /// Deletes the extra rows (children first, all in one transaction; when that fails, one
    /// table at a time), then fetches the missing and different ones (parents first), then
    /// tries again the deletes that failed (a parent row a child pointed at until its write).
    /// A table whose repair still fails is named in `not_repaired` with the reason; the others
    /// are repaired. `plans` are in fill order, one for each of `report.tables`.
    async fn repair(
        &self,
        plans: &[EntityPlan],
        report: &mut VerifyReport,
    ) -> Result<(), ConsumerError> {
        let mut not_repaired: BTreeMap<String, String> = BTreeMap::new();
        let deletions: Vec<(&EntityPlan, &[Vec<String>])> = plans
            .iter()
            .zip(&report.tables)
            .rev()
            .filter(|(_, drift)| !drift.extra.is_empty())
            .map(|(plan, drift)| (plan, drift.extra.as_slice()))
            .collect();
        let writer = PageWriter::new(self.consumer.db());
        let mut deleted = 0;
        let mut waiting = Vec::new();
        if !deletions.is_empty() {
            match writer.delete_keys(&deletions).await {
                Ok(n) => deleted += n,
                Err(e) if e.is_transient() => return Err(e.into()),
                Err(e) => {
                    tracing::warn!(error = %e, "the deletes of every table in one transaction failed; deleting table by table, children first");
                    for deletion in &deletions {
                        match writer.delete_keys(std::slice::from_ref(deletion)).await {
                            Ok(n) => deleted += n,
                            Err(e) if e.is_transient() => return Err(e.into()),
                            Err(_) => waiting.push(*deletion),
                        }
                    }
                }
            }
        }
        let parents = Parents::new(self.consumer.asker(), &writer, plans);
        let mut written = 0;
        for (plan, drift) in plans.iter().zip(&report.tables) {
            let wanted: Vec<Vec<String>> = drift
                .missing
                .iter()
                .chain(&drift.different)
                .cloned()
                .collect();
            for chunk in wanted.chunks(MAX_PAGE_ROWS as usize) {
                let fetched = async {
                    let page = parents
                        .rows(plan, &plan.key.names(), chunk.to_vec())
                        .await?;
                    Ok::<_, ConsumerError>(parents.apply(plan, &page, None).await?.rows)
                };
                match fetched.await {
                    Ok(rows) => written += rows,
                    Err(e) if stops_all(&e) => return Err(e),
                    Err(e) => {
                        tracing::error!(entity = %plan.entity, error = %e, "could not repair this table; repairing the others");
                        not_repaired.insert(
                            plan.entity.clone(),
                            format!("its rows could not be written: {e}"),
                        );
                        break;
                    }
                }
            }
        }
        // Children first still: a child row written above may have let go of its parent.
        for deletion in waiting {
            match writer.delete_keys(std::slice::from_ref(&deletion)).await {
                Ok(n) => deleted += n,
                Err(e) if e.is_transient() => return Err(e.into()),
                Err(e) => {
                    tracing::error!(entity = %deletion.0.entity, error = %e, "could not delete this table's rows the source no longer has");
                    not_repaired
                        .entry(deletion.0.entity.clone())
                        .or_insert(format!("its rows the source no longer has could not be deleted (another table's rows still refer to them?): {e}"));
                }
            }
        }
        // Links that close a cycle (a self-reference) were written NULL and staged, as in a
        // pass: set them now, or a repaired row would keep its link NULL.
        for plan in plans.iter().filter(|p| !p.deferred.is_empty()) {
            if let Err(e) = writer.set_links(plan).await {
                if e.is_transient() {
                    return Err(e.into());
                }
                not_repaired
                    .entry(plan.entity.clone())
                    .or_insert(format!("its links could not be set: {e}"));
            }
        }
        writer.move_sequences(plans).await?;
        report.deleted = deleted;
        report.written = written;
        report.not_repaired = not_repaired
            .into_iter()
            .map(|(entity, reason)| NotVerified { entity, reason })
            .collect();
        Ok(())
    }
}
