//! Following the producer's change stream: start it, copy the source once, then apply the
//! changes transaction by transaction.
//!
//! 1. No stream yet: ask the producer to start one; it answers with the slot's first position,
//!    recorded in `maskbus.stream_state`.
//! 2. No copy yet: one ordinary pass (a first copy, or the delta since an earlier watermark
//!    pass), with a snapshot taken after the slot was made. Its snapshot is recorded as the join:
//!    the transactions it holds are passed over by the producer.
//! 3. Then rounds of "changes after my position": each source transaction is applied with the
//!    position it reaches; the producer's slot moves only when the next request names it.
//!
//! A lost stream (the slot dropped, or moved past this target) is started again from step 1,
//! with a warning: deletes made while it was lost are found by `maskbus verify`.

use super::changes::{ChangeApplier, Passing};
use super::client::Answer;
use super::pages::EntityPlan;
use super::pass::Pass;
use super::writer::PageWriter;
use super::{Consumer, ConsumerError, PassReport};
use maskbus_protocol::{
    ErrorCode, ReceivedReply, Request, Snapshot, MAX_CHANGE_ROWS, MAX_CHANGE_WAIT_MS, VERSION,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;
use tokio::sync::watch;

/// What one round of the stream did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundReport {
    pub transactions: u64,
    pub rows: u64,
    /// Nothing was left to apply: the target is caught up with the source.
    pub caught_up: bool,
}

/// Follows the change stream for one consumer: where the target stands is kept in the target
/// ([`ChangeApplier`]); the follower holds the plans of the tables it applies to, while they
/// hold.
///
/// One table never stops it: a table that fails at its copy, that the producer leaves out, that
/// the publication lacks, or whose change meets a foreign key the target cannot satisfy (its
/// parent fails) is passed over, reported (`maskbus.table_failures`, `/health`, the
/// `failing_tables` metric) and copied again at each later look until it follows; the others
/// follow meanwhile.
pub struct Follower<'a> {
    consumer: &'a Consumer,
    stop: &'a watch::Receiver<bool>,
    applier: ChangeApplier<'a>,
    /// The entities changes apply to, planned once per stream start (again after a failure).
    plans: Option<Vec<EntityPlan>>,
    /// Tables the last plan could not sync (their schema does not follow the source, say), and
    /// the ones the producer leaves out.
    failed: Vec<super::Skipped>,
    /// Tables that failed at their last copy, or wait for a parent, with the reason: they hold
    /// no watermark, and are copied again at the next look.
    copy_failed: BTreeMap<String, String>,
    /// Policy tables the stream's publication lacks, as the last answer said.
    unpublished: BTreeSet<String>,
    /// Per table with a watermark, the snapshot its copy reached; none until read again.
    joins: Option<HashMap<String, Snapshot>>,
    /// Tables whose watermark this follower has forgotten already (they fail closed).
    forgotten: BTreeSet<String>,
    /// A change named a table the plans do not hold: plan (and copy) again.
    replan: bool,
}

impl<'a> Follower<'a> {
    pub fn new(consumer: &'a Consumer, stop: &'a watch::Receiver<bool>) -> Self {
        Self {
            consumer,
            stop,
            applier: ChangeApplier::new(consumer.db()),
            plans: None,
            failed: Vec::new(),
            copy_failed: BTreeMap::new(),
            unpublished: BTreeSet::new(),
            joins: None,
            forgotten: BTreeSet::new(),
            replan: false,
        }
    }

    /// Every table failing now, with its reason, each once.
    fn failing(&self) -> Vec<super::Skipped> {
        let mut all: Vec<super::Skipped> = Vec::new();
        let mut add = |entity: &str, reason: String| {
            if !all.iter().any(|f| f.entity == entity) {
                all.push(super::Skipped {
                    entity: entity.to_string(),
                    reason,
                });
            }
        };
        for f in &self.failed {
            add(&f.entity, f.reason.clone());
        }
        for entity in &self.unpublished {
            let keyless = self
                .plans
                .iter()
                .flatten()
                .any(|p| &p.entity == entity && p.key.is_keyless());
            let reason = if keyless {
                // The producer leaves such a table out of its publication while it has no
                // REPLICA IDENTITY FULL (publishing it would make its deletes fail there).
                format!("it has no primary key or unique NOT NULL key, and the change stream does not carry it: the source table needs REPLICA IDENTITY FULL to stream its updates and deletes (ALTER TABLE {entity} REPLICA IDENTITY FULL), or name key columns in the policy's [maskbus.keys] (REPLICA IDENTITY FULL too), or sync in watermark mode, where it is copied whole each pass; or the publication (one a DBA made) lacks it. It is copied and followed once the stream carries it")
            } else {
                "the publication of the producer's change stream lacks it (one a DBA made, which the producer never alters): its changes never come; it is copied and followed once the publication has it (ALTER PUBLICATION ... ADD TABLE)".into()
            };
            add(entity, reason);
        }
        for (entity, reason) in &self.copy_failed {
            add(entity, reason.clone());
        }
        all
    }

    /// Says which tables fail: in `maskbus.table_failures` (status and `/health` read it), the
    /// log and the metrics.
    async fn report_failures(&self) {
        let failing = self.failing();
        let mut covered: Vec<String> = self
            .plans
            .iter()
            .flatten()
            .map(|p| p.entity.clone())
            .collect();
        covered.extend(failing.iter().map(|f| f.entity.clone()));
        covered.extend(self.forgotten.iter().cloned());
        if let Err(e) = self.consumer.db().record_failures(&covered, &failing).await {
            tracing::warn!(error = %e, "could not record which tables failed (status and /health read it)");
        }
        maskbus_telemetry::metrics().failing("consumer", failing.len());
    }

    /// Follows the change stream until stopped, or until caught up with `once`. Returns the rows
    /// written by the copy and the changes.
    pub async fn run(mut self, once: bool) -> Result<u64, ConsumerError> {
        let config = self.consumer.config();
        let mut total = 0u64;
        let mut retry = maskbus_pg::Retry::transient();
        let mut caught_up = false;
        loop {
            if *self.stop.borrow() {
                return Ok(total);
            }
            // Following, an idle round is a long poll: the producer answers as soon as a change
            // commits (or after the follow interval, at most half the request timeout).
            let wait = if once || !caught_up {
                Duration::ZERO
            } else {
                config.follow_interval.min(config.request_timeout / 2)
            };
            let report = match self.round(wait).await {
                Ok(report) => report,
                Err(ConsumerError::Refused { error, .. })
                    if error.code() == ErrorCode::StreamLost =>
                {
                    tracing::error!(refused = %error, "the change stream was lost; starting it again (deletes made meanwhile need `maskbus verify --repair`)");
                    self.applier.forgotten().await?;
                    continue;
                }
                Err(e)
                    if e.is_transient()
                        || matches!(&e, ConsumerError::Refused { error, .. } if error.code() == ErrorCode::Unavailable) =>
                {
                    self.plans = None;
                    self.joins = None;
                    tracing::warn!(error = %e, "transient failure; resuming the stream from the target's position");
                    if !retry.pause().await {
                        return Err(e);
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            retry.reset();
            total += report.rows;
            caught_up = report.caught_up;
            if caught_up && once {
                // Caught up, but not with every table: the exit code says so.
                let failed = self.failing();
                if !failed.is_empty() {
                    return Err(ConsumerError::Partial {
                        tables: self.plans.as_ref().map_or(0, Vec::len)
                            + self.failed.len()
                            + self.unpublished.len(),
                        failed,
                    });
                }
                return Ok(total);
            }
        }
    }

    /// A pass over `only` these entities (every one with `None`), the tables that fail in its
    /// report: what can be copied is, and the follower goes on.
    async fn copy(&self, only: Option<&BTreeSet<String>>) -> Result<PassReport, ConsumerError> {
        let (mut plans, mut skipped) = self.consumer.plan().await?;
        if let Some(only) = only {
            plans.retain(|p| only.contains(&p.entity));
            skipped.retain(|s| only.contains(&s.entity));
        }
        let consumer = self.consumer;
        let (report, _) = Pass::new(
            consumer.config(),
            consumer.asker(),
            consumer.db(),
            self.stop,
        )
        .run_reported(plans, skipped)
        .await?;
        Ok(report)
    }

    /// Records the tables of a copy's report that failed (and forgets those that copied).
    fn copied(&mut self, report: &PassReport, tried: Option<&BTreeSet<String>>) {
        if let Some(tried) = tried {
            self.copy_failed.retain(|e, _| !tried.contains(e));
        } else {
            self.copy_failed.clear();
        }
        for f in &report.failed {
            tracing::error!(entity = %f.entity, reason = %f.reason, "this table could not be copied; following the others, and copying it again at the next look");
            self.copy_failed.insert(f.entity.clone(), f.reason.clone());
        }
    }

    /// One step of the stream: start it, make the copy, or apply the next changes.
    /// With `wait`, the producer holds an answer with no change that long for one to come.
    pub async fn round(&mut self, wait: Duration) -> Result<RoundReport, ConsumerError> {
        let Some(state) = self.applier.state().await? else {
            let replies = self
                .ask_changes(None, None, Duration::ZERO)
                .await?
                .all()
                .await?;
            let started = match replies.first() {
                Some(ReceivedReply::Changes(start)) if start.started => start.through.0,
                _ => {
                    return Err(ConsumerError::BadReply {
                        entity: String::new(),
                        reason: "the producer did not start the stream".into(),
                    })
                }
            };
            self.applier.started(started).await?;
            tracing::info!(position = %started, "change stream started; copying the source");
            return Ok(RoundReport::default());
        };
        let Some(join) = state.join else {
            // The copy: passes until one is not the rest of a pass cut short (whose snapshot may
            // be older than the slot). A table that fails is passed over from the join on, and
            // copied again at the next look.
            let mut rows = 0;
            loop {
                let report = self.copy(None).await?;
                report.count();
                rows += report.total_rows();
                self.copied(&report, None);
                if !report.resumed {
                    let Some(until) = report.until else {
                        if report.failed.is_empty() {
                            return Err(ConsumerError::BadReply {
                                entity: String::new(),
                                reason: "the copy ended without the snapshot it reached".into(),
                            });
                        }
                        // Nothing could be copied: tried again after a pause.
                        self.report_failures().await;
                        let mut stop = self.stop.clone();
                        tokio::select! {
                            _ = stop.wait_for(|stopped| *stopped) => {}
                            _ = tokio::time::sleep(self.consumer.config().follow_interval) => {}
                        }
                        return Ok(RoundReport {
                            caught_up: true,
                            ..RoundReport::default()
                        });
                    };
                    self.applier.joined(&Snapshot(until)).await?;
                    self.plans = None;
                    self.joins = None;
                    self.report_failures().await;
                    tracing::info!(
                        rows,
                        failing = self.copy_failed.len(),
                        "copy done; following the change stream"
                    );
                    return Ok(RoundReport {
                        rows,
                        ..RoundReport::default()
                    });
                }
            }
        };
        if self.plans.is_none() {
            let (plans, failed) = self.consumer.plan().await?;
            self.plans = Some(plans);
            self.failed = failed;
        }
        if self.joins.is_none() {
            self.joins = Some(self.read_joins().await?);
        }
        let asked = std::time::Instant::now();
        let mut answer = self
            .ask_changes(Some(state.applied), Some(join), wait)
            .await?;
        let answered_ms = asked.elapsed().as_millis() as u64;
        let plans = self.plans.as_deref().unwrap_or_default();
        let joins = self.joins.as_ref().cloned().unwrap_or_default();
        // Tables that fail closed, or hold no copy: their changes are passed over, and their
        // watermark goes (once per table, with the changes), so that they are copied again
        // (and repaired) once they follow.
        let mut skip: BTreeSet<String> = self.failing().into_iter().map(|f| f.entity).collect();
        let uncopied: Vec<String> = plans
            .iter()
            .filter(|p| !joins.contains_key(&p.entity))
            .map(|p| p.entity.clone())
            .collect();
        // A table not copied that does not fail (added to the policy, say) is copied after this
        // answer, not once the stream is idle (a busy source may never be).
        if uncopied.iter().any(|e| !skip.contains(e)) {
            self.replan = true;
        }
        skip.extend(uncopied);
        let applying = std::time::Instant::now();
        let applied = self
            .applier
            .apply(
                plans,
                &mut answer,
                Passing {
                    skip: &skip,
                    forgotten: &self.forgotten,
                    joins: &joins,
                },
            )
            .await?;
        drop(answer);
        if let Some(waits) = applied.waits {
            // Nothing was committed: the same changes are asked for again, this table passed
            // over (its watermark goes with them), and it is copied again at the next look.
            tracing::warn!(entity = %waits.entity, reason = %waits.reason, "a streamed change of this table cannot be applied; following the others");
            self.copy_failed.insert(waits.entity, waits.reason);
            self.report_failures().await;
            // Copied again at the next look, not only once the stream is idle.
            self.replan = true;
            return Ok(RoundReport::default());
        }
        let batch = applied.summary;
        tracing::debug!(
            answered_ms,
            apply_ms = applying.elapsed().as_millis() as u64,
            rows = applied.rows,
            "changes received and applied"
        );
        self.forgotten.extend(applied.forgotten);
        if !applied.unplanned.is_empty() {
            tracing::info!(tables = %applied.unplanned.iter().cloned().collect::<Vec<_>>().join(", "), "changes of tables not planned yet (added to the policy): they are planned and copied");
            self.replan = true;
        }
        // What the producer names as unpublished or closed is read as names of tables the
        // target plans, never as text to keep: anything else is passed over.
        let known: BTreeSet<&str> = plans
            .iter()
            .map(|p| p.entity.as_str())
            .chain(self.failed.iter().map(|f| f.entity.as_str()))
            .collect();
        let named = |names: &BTreeSet<String>| -> BTreeSet<String> {
            names
                .iter()
                .filter(|n| maskbus_protocol::is_entity_name(n))
                .map(|n| maskbus_model::qualify(n))
                .filter(|n| known.contains(n.as_str()))
                .collect()
        };
        let unpublished = named(&batch.unpublished);
        let closed = named(&batch.closed);
        let newly_unpublished = unpublished != self.unpublished;
        self.unpublished = unpublished;
        // Looked up in a set: a reply naming many closed tables costs its length.
        let mut failing: BTreeSet<String> = self.failed.iter().map(|f| f.entity.clone()).collect();
        let mut newly_closed = false;
        for entity in &closed {
            if failing.insert(entity.clone()) {
                newly_closed = true;
                self.failed.push(super::Skipped {
                    entity: entity.clone(),
                    reason: "the producer left its changes out (its policy refuses it now: a column without a rule, or a rule for a column gone; or they were made before a migration not followed yet): they wait, and it is copied again once the policy has its rules".into(),
                });
            }
        }
        if newly_closed || newly_unpublished {
            self.report_failures().await;
        }
        let report = RoundReport {
            transactions: batch.transactions,
            rows: applied.rows,
            caught_up: batch.transactions == 0 && !batch.more && !batch.abandoned,
        };
        let by_entity: HashMap<&str, &EntityPlan> =
            plans.iter().map(|p| (p.entity.as_str(), p)).rev().collect();
        let touched: Vec<EntityPlan> = applied
            .touched
            .iter()
            .filter_map(|entity| by_entity.get(entity.as_str()).map(|p| (*p).clone()))
            .collect();
        // A migration: the served schema before the changes that need it (the producer held
        // them back); when idle, a look for changes the stream does not show (an index, a
        // constraint, a policy's rules, a table added). Tables that lost their watermark to it
        // (their rows have new values the stream does not carry), that failed or waited, are
        // copied again.
        if batch.schema_changed || report.caught_up || std::mem::take(&mut self.replan) {
            self.follow_schema().await?;
        }
        if !touched.is_empty() {
            PageWriter::new(self.consumer.db())
                .move_sequences(&touched)
                .await?;
        }
        if report.transactions > 0 {
            tracing::info!(transactions = report.transactions, rows = report.rows, position = %batch.through, "changes applied");
            maskbus_telemetry::metrics().applied(report.transactions, report.rows);
        }
        Ok(report)
    }

    /// Per table with a watermark, the snapshot its copy reached: changes of the transactions
    /// it holds are in the copy already.
    async fn read_joins(&self) -> Result<HashMap<String, Snapshot>, ConsumerError> {
        Ok(self
            .consumer
            .states()
            .await?
            .into_iter()
            .filter(|(_, s)| s.pass_until.is_none())
            .filter_map(|(entity, s)| Some((entity, Snapshot(s.synced_until?))))
            .collect())
    }

    /// Brings the target's schema to the served one (see `crate::schema`), then copies again
    /// every table that holds no copy: it lost its watermark to a migration, failed at its copy,
    /// waited for a parent, or was added to the policy. Each copy's snapshot is its table's
    /// join: the changes still queued that it holds are passed over, the rest applied.
    async fn follow_schema(&mut self) -> Result<(), ConsumerError> {
        let (plans, failed) = self.consumer.plan().await?;
        self.failed = failed;
        let joins = self.read_joins().await?;
        let again: BTreeSet<String> = plans
            .iter()
            .filter(|p| !joins.contains_key(&p.entity) && !self.unpublished.contains(&p.entity))
            .map(|p| p.entity.clone())
            .collect();
        self.plans = Some(plans);
        self.joins = Some(joins);
        if again.is_empty() {
            self.copy_failed.clear();
        } else {
            tracing::info!(tables = %again.iter().cloned().collect::<Vec<_>>().join(", "), "copying again the tables whose schema or rules changed, that failed or waited, or that are new");
            let report = self.copy(Some(&again)).await?;
            report.count();
            self.copied(&report, Some(&again));
            self.copy_failed.retain(|e, _| again.contains(e));
            let copied: BTreeSet<String> =
                again.iter().filter(|e| report.synced(e)).cloned().collect();
            // Copied again: should one fail closed later, its watermark goes again.
            self.forgotten.retain(|e| !copied.contains(e));
            self.joins = None;
            // A keyless table's copy made it equal to the source at its join, deletes included
            // (it is converged whole): a repair at a later snapshot would hold changes the
            // stream then applies again, doubling rows of a multiset.
            let keyless: BTreeSet<&str> = self
                .plans
                .iter()
                .flatten()
                .filter(|p| p.key.is_keyless())
                .map(|p| p.entity.as_str())
                .collect();
            let copied: BTreeSet<String> = copied
                .into_iter()
                .filter(|e| !keyless.contains(e.as_str()))
                .collect();
            if !copied.is_empty() {
                // Rows deleted on the source while a table was left out: a copy brings none
                // of them back, the repair deletes them.
                let repaired = super::verify::Verifier::connect(self.consumer)
                    .await?
                    .run_only(Some(&copied), true)
                    .await?;
                if repaired.deleted + repaired.written > 0 {
                    tracing::info!(
                        deleted = repaired.deleted,
                        written = repaired.written,
                        "repaired the tables copied again"
                    );
                }
            }
        }
        self.report_failures().await;
        Ok(())
    }

    /// Asks for the changes after `after` (none: start the stream); the answer is read as it
    /// comes.
    async fn ask_changes(
        &self,
        after: Option<maskbus_protocol::Lsn>,
        join: Option<Snapshot>,
        wait: Duration,
    ) -> Result<Answer<'a>, ConsumerError> {
        let config = self.consumer.config();
        let request = Request::Changes {
            v: VERSION,
            after: after.map(maskbus_protocol::Position),
            join,
            limit: (config.page_size * config.pages_per_request).min(MAX_CHANGE_ROWS),
            wait_ms: (!wait.is_zero())
                .then(|| wait.as_millis().min(u128::from(MAX_CHANGE_WAIT_MS)) as u32),
            patience_ms: Some(crate::client::patience_ms(config.request_timeout)),
        };
        self.consumer
            .asker()
            .ask_parts_patiently(&request, "the source's changes")
            .await
    }
}
