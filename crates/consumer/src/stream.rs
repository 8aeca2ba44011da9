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

use super::changes::ChangeApplier;
use super::client::Answer;
use super::pages::EntityPlan;
use super::writer::PageWriter;
use super::{Consumer, ConsumerError};
use maskbus_protocol::{
    ErrorCode, ReceivedReply, Request, Snapshot, MAX_CHANGE_ROWS, MAX_CHANGE_WAIT_MS, VERSION,
};
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
pub struct Follower<'a> {
    consumer: &'a Consumer,
    stop: &'a watch::Receiver<bool>,
    applier: ChangeApplier<'a>,
    /// The entities changes apply to, planned once per stream start (again after a failure).
    plans: Option<Vec<EntityPlan>>,
    /// Tables the last plan could not sync (their schema does not follow, say).
    failed: Vec<super::Skipped>,
    /// Tables whose watermark this follower has forgotten already (they fail closed).
    forgotten: std::collections::BTreeSet<String>,
}

impl<'a> Follower<'a> {
    pub fn new(consumer: &'a Consumer, stop: &'a watch::Receiver<bool>) -> Self {
        Self {
            consumer,
            stop,
            applier: ChangeApplier::new(consumer.db()),
            plans: None,
            failed: Vec::new(),
            forgotten: std::collections::BTreeSet::new(),
        }
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
                if !self.failed.is_empty() {
                    return Err(ConsumerError::Partial {
                        tables: self.plans.as_ref().map_or(0, Vec::len) + self.failed.len(),
                        failed: std::mem::take(&mut self.failed),
                    });
                }
                return Ok(total);
            }
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
            // be older than the slot).
            let mut rows = 0;
            loop {
                let report = self.consumer.sync_pass(self.stop).await?;
                report.count();
                rows += report.total_rows();
                if !report.resumed {
                    let Some(until) = report.until else {
                        return Err(ConsumerError::BadReply {
                            entity: String::new(),
                            reason: "the copy ended without the snapshot it reached".into(),
                        });
                    };
                    self.applier.joined(&Snapshot(until)).await?;
                    tracing::info!(rows, "copy done; following the change stream");
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
        let asked = std::time::Instant::now();
        let mut answer = self
            .ask_changes(Some(state.applied), Some(join), wait)
            .await?;
        let answered_ms = asked.elapsed().as_millis() as u64;
        let plans = self.plans.as_deref().unwrap_or_default();
        // Tables that fail closed: their changes are passed over, and their watermark goes
        // (once per table, with the changes), so that they are copied again (and repaired) once
        // they follow.
        let skip: std::collections::BTreeSet<String> =
            self.failed.iter().map(|f| f.entity.clone()).collect();
        let applying = std::time::Instant::now();
        let applied = self
            .applier
            .apply(plans, &mut answer, &skip, &self.forgotten)
            .await?;
        drop(answer);
        let batch = applied.summary;
        tracing::debug!(
            answered_ms,
            apply_ms = applying.elapsed().as_millis() as u64,
            rows = applied.rows,
            "changes received and applied"
        );
        self.forgotten.extend(applied.forgotten);
        // Looked up in a set: a reply naming many closed tables costs its length.
        let mut failing: std::collections::BTreeSet<String> =
            self.failed.iter().map(|f| f.entity.clone()).collect();
        for entity in &batch.closed {
            if failing.insert(entity.clone()) {
                self.failed.push(super::Skipped {
                    entity: entity.clone(),
                    reason: "the producer left its changes out (its policy refuses it now: a column without a rule, or a rule for a column gone; or they were made before a migration not followed yet): they wait, and it is copied again once the policy has its rules".into(),
                });
            }
        }
        let report = RoundReport {
            transactions: batch.transactions,
            rows: applied.rows,
            caught_up: batch.transactions == 0 && !batch.more && !batch.abandoned,
        };
        let by_entity: std::collections::HashMap<&str, &EntityPlan> =
            plans.iter().map(|p| (p.entity.as_str(), p)).rev().collect();
        let touched: Vec<EntityPlan> = applied
            .touched
            .iter()
            .filter_map(|entity| by_entity.get(entity.as_str()).map(|p| (*p).clone()))
            .collect();
        // A migration: the served schema before the changes that need it (the producer held
        // them back); when idle, a look for changes the stream does not show (an index, a
        // constraint, a policy's rules). Tables that lost their watermark to it (their rows
        // have new values the stream does not carry) are copied again.
        if batch.schema_changed || report.caught_up {
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

    /// Brings the target's schema to the served one (see `crate::schema`), then copies again
    /// every table that lost its watermark to it.
    async fn follow_schema(&mut self) -> Result<(), ConsumerError> {
        let (plans, failed) = self.consumer.plan().await?;
        self.failed = failed;
        let states = self.consumer.states().await?;
        let again: std::collections::BTreeSet<String> = plans
            .iter()
            .filter(|p| !states.contains_key(&p.entity))
            .map(|p| p.entity.clone())
            .collect();
        self.plans = Some(plans);
        if !again.is_empty() {
            tracing::info!(tables = %again.iter().cloned().collect::<Vec<_>>().join(", "), "copying again the tables whose schema or rules changed, or that failed closed");
            let report = self.consumer.sync_pass_of(self.stop, Some(&again)).await?;
            report.count();
            // Copied again: should one fail closed later, its watermark goes again.
            self.forgotten.retain(|e| !again.contains(e));
            // Rows deleted on the source while a table was left out: a copy brings none of
            // them back, the repair deletes them.
            let repaired = super::verify::Verifier::connect(self.consumer)
                .await?
                .run_only(Some(&again), true)
                .await?;
            if repaired.deleted + repaired.written > 0 {
                tracing::info!(
                    deleted = repaired.deleted,
                    written = repaired.written,
                    "repaired the tables copied again"
                );
            }
        }
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
