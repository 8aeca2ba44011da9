//! The consumer role of maskbus: it holds the test database's credentials only, asks the
//! producer for pages after its watermark (or follows the masked change stream) and writes them
//! into the target in foreign-key order, idempotently. It never holds a policy or a key, and
//! cannot reach the masker: `maskbus-mask` is not among its dependencies, direct or not
//! (`tests/integration/architecture.rs`).
//!
//! - [`client`]: the request/reply client over the bus ([`client::Asker`]).
//! - [`target_db`]: the target database as the consumer opens and reads it ([`TargetDb`]).
//! - [`bookkeeping`]: the consumer's own SQL over its bookkeeping in the target (schema
//!   `maskbus`: watermarks, ranges, staged links, lifted objects, the stream position, the subset
//!   and the schema it holds): the migrations that make those tables and every statement on them.
//! - [`writer`]: rows into the target ([`writer::PageWriter`]: pages with their watermark in
//!   one transaction, deferred links, rows deleted by key, sequences).
//! - [`pages`]: the pure decisions (entity plans, reply checks, merging, next watermark).
//! - `pass`: one sync pass ([`pass::Pass`]), table by table, page by page.
//! - [`keyless`]: tables without a usable key, synced whole each pass as multisets of rows
//!   (duplicates kept), only the copies whose count differs written.
//! - `parents`: pages whose parents the target lacks, the parents fetched first.
//! - `load`: the first pass into empty tables, loaded in bulk as `pg_restore` does
//!   ([`load::BulkLoad`]); `copy`: pages into the target with `COPY`.
//! - [`rebuild`]: rebuilding what a bulk load lifted, beside the pass and at its end.
//! - [`stream`]: following the change stream ([`stream::Follower`]); `changes`: streamed
//!   transactions into the target ([`changes::ChangeApplier`]).
//! - [`schema`]: the target's schema made from the served one and converged on it every pass
//!   ([`schema::SchemaSync`]); [`reconcile`]: which change runs before a table's rows and which
//!   after them.
//! - [`owned`]: the tables maskbus created or adopted in its target, the only ones it writes
//!   ([`owned::Owned`]); names in schema `maskbus` or PostgreSQL's are refused everywhere.
//! - [`verify`]: the consumer's half of verify and repair ([`verify::Verifier`]).
//! - [`local_tools`]: the back-ends of the consumer's own tools ([`local_tools::LocalTools`]:
//!   `insert_rows`, `query_local`).
//! - [`status`]: `maskbus status`, read-only; `workers`: which worker syncs which table when
//!   several share one target, and how they wait for each other's parent tables;
//!   `held_subset`: the subset a target keeps.
//!
//! Each page is upserted by key in one transaction together with the entity's watermark, so a
//! page delivered twice changes nothing and a crash between pages resumes exactly where the last
//! commit left off. A child page whose parents are not in the target yet (a parent row
//! committed late on the source) asks the producer for those parents first. Foreign keys that
//! close a cycle are written NULL, staged, and set when the pass is through. The target's
//! sequences are moved past the synced values after each pass.

pub mod bookkeeping;
pub mod changes;
pub mod client;
mod copy;
mod held_subset;
pub mod keyless;
pub mod load;
pub mod local_tools;
pub mod owned;
pub mod pages;
mod parents;
pub mod pass;
pub mod rebuild;
pub mod reconcile;
pub mod schema;
pub mod status;
pub mod stream;
pub mod target_db;
pub mod verify;
mod workers;
pub mod writer;

pub use bookkeeping::MIGRATIONS;
pub use pages::{EntityPlan, Skipped, SyncState};
pub use target_db::TargetDb;

use client::Asker;
use maskbus_config::ConsumerConfig;
use maskbus_mailbox::{Mailbox, MailboxError, Settings};
use maskbus_pg::{Database, PgError};
use maskbus_protocol::{ErrorReply, ReceivedReply, Request, VERSION};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::watch;

#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    #[error("the producer refused {what}: {error}")]
    Refused { what: String, error: ErrorReply },
    #[error("no reply from the producer at mailbox {mailbox} after {tries} tries of {}: is a producer running on this bus (`maskbus run --config producer.toml`)?", maskbus_model::human_duration(*.timeout))]
    NoReply {
        mailbox: String,
        tries: u32,
        timeout: Duration,
    },
    #[error("the producer's answer at mailbox {mailbox} stopped after {read} replies: nothing more came within {}; the consumer starts that step again", maskbus_model::human_duration(*.timeout))]
    Cut {
        mailbox: String,
        read: u32,
        timeout: Duration,
    },
    #[error("a reply for {entity} does not fit the target: {reason}")]
    BadReply { entity: String, reason: String },
    #[error("{entity}: {reason}")]
    Unsupported { entity: String, reason: String },
    #[error("{}", owned::not_owned(entity))]
    NotOwned { entity: String },
    #[error("{}", owned::reserved(entity))]
    Reserved { entity: String },
    #[error("{0}")]
    Plan(#[from] maskbus_model::plan::PlanError),
    #[error("{} of {} tables could not be synced: {}", failed.len(), tables, failed.iter().map(|s| format!("{} ({})", s.entity, s.reason)).collect::<Vec<_>>().join("; "))]
    Partial { failed: Vec<Skipped>, tables: usize },
    #[error("the target database {database} holds data (table {table} has rows: one this role cannot read counts by its pages on disk) and is not a maskbus target: the consumer writes only into an empty copy of the schema, which it marks on its first run. Point target_url at the test database; if this one really is it, run the consumer once with --init-target")]
    NotATarget { database: String, table: String },
    #[error("the consumer's target role {role} on database {database} {power}: the consumer builds its target from the schema the bus serves, which is untrusted input, and such a role could turn it into commands on the server. Connect as a role that owns the test database and is not superuser (docs/deployment.md); for a throwaway database only, set allow_superuser_target = true in the consumer's config")]
    SuperuserTarget {
        database: String,
        role: String,
        power: String,
    },
    #[error("the target database {database} holds {held}, and the config asks for {asked}: a target holds one subset for good (a delta of one cannot turn its rows into another's). Sync into another empty database, or drop this one and start again")]
    OtherSubset {
        database: String,
        held: String,
        asked: String,
    },
    #[error("stopped by a signal")]
    Stopped,
}

impl ConsumerError {
    /// Worth retrying after a pause: a database or the bus restarting, a dropped connection.
    /// Everything else (a type mismatch, a missing table, permission denied, a refusal) is
    /// permanent and fails fast.
    pub fn is_transient(&self) -> bool {
        match self {
            ConsumerError::Pg(e) | ConsumerError::Mailbox(MailboxError::Pg(e)) => e.is_transient(),
            ConsumerError::Cut { .. } => true,
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct PassReport {
    /// The pass finished one that a crash had cut short (so it only reached that pass's horizon).
    pub resumed: bool,
    /// Rows inserted or updated per entity, in plan order.
    pub rows: Vec<(String, u64)>,
    pub pages: u64,
    pub parents_fetched: u64,
    pub links_set: u64,
    /// Indexes and foreign keys rebuilt after a bulk load.
    pub rebuilt: usize,
    /// The source snapshot the pass reached (every table synced up to it).
    pub until: Option<String>,
    /// Entities that could not be synced, and why (the rest were).
    pub failed: Vec<Skipped>,
}

impl PassReport {
    /// Adds this finished pass to the process's metrics.
    pub fn count(&self) {
        let metrics = maskbus_telemetry::metrics();
        for (entity, rows) in &self.rows {
            metrics.add_rows("consumer", entity, *rows);
        }
        metrics.add_pages("consumer", self.pages);
        metrics.pass_done(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        );
    }

    /// Whether this pass synced `entity` (and still counts it as synced).
    pub fn synced(&self, entity: &str) -> bool {
        self.rows.iter().any(|(e, _)| e == entity)
    }

    pub fn total_rows(&self) -> u64 {
        self.rows.iter().map(|(_, n)| n).sum()
    }
}

/// The consumer: its configuration, its client on the bus and its target database. The jobs
/// it runs each have a type of their own ([`pass::Pass`], [`stream::Follower`],
/// [`verify::Verifier`], [`local_tools::LocalTools`]).
pub struct Consumer {
    config: ConsumerConfig,
    asker: Asker,
    db: TargetDb,
}

impl Consumer {
    pub async fn start(config: ConsumerConfig) -> Result<Self, ConsumerError> {
        Self::open(config, None).await
    }

    /// A consumer for `maskbus verify`: the same, but it takes its replies on the verify
    /// mailbox of its own ([`maskbus_config::verify_mailbox`]), so a follower of the same config
    /// may keep running beside it. On a bus granted before that mailbox existed it takes them
    /// on the consumer's mailbox, and says how to grant the other.
    pub async fn start_verifier(config: ConsumerConfig) -> Result<Self, ConsumerError> {
        let aside = maskbus_config::verify_mailbox(&config.mailbox);
        Self::open(config, Some(aside)).await
    }

    async fn open(config: ConsumerConfig, aside: Option<String>) -> Result<Self, ConsumerError> {
        let bus = Database::parse("bus", &config.bus_url.0)?;
        let target = Database::parse("target", &config.target_url.0)?;
        let connections = config.streams as usize + 2;
        let db = TargetDb::open(
            target,
            config.init_target,
            config.disable_triggers,
            config.allow_superuser_target,
            connections,
        )
        .await?;
        held_subset::hold(&db, config.subset.as_deref()).await?;
        let mailbox = Mailbox::connect(bus, Settings::default()).await?;
        let mut asking = config.clone();
        if let Some(aside) = aside {
            // A name too long for the bus (the configured one near the limit) is not owned
            // either: the job falls back rather than failing where it used to work.
            let owned = match mailbox.owns(&aside).await {
                Ok(owned) => owned,
                Err(MailboxError::BadMailboxName(_)) => false,
                Err(e) => return Err(e.into()),
            };
            if owned {
                asking.mailbox = aside;
            } else {
                tracing::warn!(
                    mailbox = %aside,
                    "this role does not own the mailbox for replies to this job, so it takes them \
                     on the consumer's own mailbox and a running follower of the same config makes \
                     both wait; run `maskbus bus grant --consumer ROLE` again to grant it"
                );
            }
        }
        Ok(Self {
            asker: Asker::new(mailbox, &asking).await?,
            config,
            db,
        })
    }

    pub fn config(&self) -> &ConsumerConfig {
        &self.config
    }

    pub fn asker(&self) -> &Asker {
        &self.asker
    }

    /// The consumer's own mailbox connection (for `mailbox_wait` and health).
    pub fn mailbox(&self) -> &Mailbox {
        self.asker.mailbox()
    }

    pub fn db(&self) -> &TargetDb {
        &self.db
    }

    /// The consumer's tools over its test database.
    pub fn local(&self) -> local_tools::LocalTools<'_> {
        local_tools::LocalTools::new(&self.db)
    }

    /// The entities to sync, in fill order (what the producer serves and the target can take),
    /// and those skipped with the reason.
    pub async fn plan(&self) -> Result<(Vec<EntityPlan>, Vec<Skipped>), ConsumerError> {
        let (offered, keys, fingerprint, mut rules) = match self
            .asker
            .ask_patiently(&Request::Entities { v: VERSION }, "the entity list")
            .await?
            .into_iter()
            .next()
        {
            Some(ReceivedReply::Entities {
                entities,
                keys,
                schema,
                rules,
                ..
            }) => (entities, keys, schema, rules),
            _ => {
                return Err(ConsumerError::BadReply {
                    entity: String::new(),
                    reason: "expected the entity list".into(),
                })
            }
        };
        // A name in schema maskbus (the consumer's own bookkeeping) or PostgreSQL's is refused
        // before anything else; of the rest, the served tables the target already holds are
        // adopted only when the consumer's own config says so (`owned::adopt_served`).
        let (reserved, offered): (Vec<String>, Vec<String>) = offered
            .into_iter()
            .filter(|e| maskbus_protocol::is_entity_name(e))
            .map(|e| maskbus_model::qualify(&e))
            .partition(|e| owned::is_reserved(e));
        rules.retain(|e, _| !owned::is_reserved(e));
        owned::adopt_served(&self.db, &offered, self.config.init_target).await?;
        let failed =
            schema::SchemaSync::new(&self.asker, &self.db, self.config.extensions.as_deref())
                .prepare(schema::Served {
                    entities: &offered,
                    fingerprint: fingerprint.as_deref(),
                    rules: &rules,
                })
                .await?;
        let (mut plans, mut skipped) = self.db.entity_plans(&offered, &keys).await?;
        // A table whose schema does not follow the source fails closed, by name.
        plans.retain(|p| {
            let Some(reason) = failed.get(&p.entity) else {
                return true;
            };
            skipped.push(Skipped {
                entity: p.entity.clone(),
                reason: reason.clone(),
            });
            false
        });
        for s in &mut skipped {
            if let Some(reason) = failed.get(&s.entity) {
                s.reason.clone_from(reason);
            }
        }
        // A served table maskbus neither created nor adopted fails closed, by name: never a
        // write. Nor does anything in schema maskbus.
        let owned = owned::Owned::load(&self.db).await?;
        plans.retain(|p| {
            if owned.owns(&p.entity) {
                return true;
            }
            skipped.push(Skipped {
                entity: p.entity.clone(),
                reason: owned::not_owned(&p.entity),
            });
            false
        });
        skipped.extend(reserved.into_iter().map(|entity| Skipped {
            reason: owned::reserved(&entity),
            entity,
        }));
        Ok((plans, skipped))
    }

    pub async fn states(&self) -> Result<BTreeMap<String, SyncState>, ConsumerError> {
        Ok(self.db.states().await?)
    }

    /// One sync pass (see [`pass::Pass`]).
    pub async fn sync_pass(
        &self,
        stop: &watch::Receiver<bool>,
    ) -> Result<PassReport, ConsumerError> {
        self.sync_pass_of(stop, None).await
    }

    /// A pass over `only` these entities (every one with `None`): a stream copies again the
    /// tables a migration gave new values.
    pub async fn sync_pass_of(
        &self,
        stop: &watch::Receiver<bool>,
        only: Option<&BTreeSet<String>>,
    ) -> Result<PassReport, ConsumerError> {
        let (mut plans, mut skipped) = self.plan().await?;
        if let Some(only) = only {
            plans.retain(|p| only.contains(&p.entity));
            skipped.retain(|s| only.contains(&s.entity));
        }
        pass::Pass::new(&self.config, &self.asker, &self.db, stop)
            .run(plans, skipped)
            .await
    }

    /// Compares the target with the masked source; with `repair`, makes them equal.
    pub async fn verify(&self, repair: bool) -> Result<verify::VerifyReport, ConsumerError> {
        verify::Verifier::connect(self).await?.run(repair).await
    }

    /// Passes until stopped (or until caught up with `once`). Returns the rows moved.
    pub async fn run(
        &self,
        once: bool,
        mut stop: watch::Receiver<bool>,
    ) -> Result<u64, ConsumerError> {
        if self.config.mode == maskbus_config::SyncMode::Stream {
            // A signal ends a wait for the producer too: what is not committed is asked again.
            let mut signal = stop.clone();
            return tokio::select! {
                followed = stream::Follower::new(self, &stop).run(once) => followed,
                // What the cut-short copy committed, not nothing.
                _ = signal.wait_for(|stopped| *stopped) => Ok(self.db.rows_written()),
            };
        }
        if self.config.follow_deletes {
            tracing::info!("watermark mode: passes bring new and updated rows, then compare each table's key-range hashes with the source's and delete the rows it no longer has");
        } else {
            tracing::info!("watermark mode with follow_deletes = false: passes bring new and updated rows; rows deleted in the source stay until `maskbus verify --repair` (or `run --once --repair`) removes them");
        }
        let mut total = 0;
        let mut retry = maskbus_pg::Retry::transient();
        loop {
            // A signal ends the wait for a reply too, not only the gaps between pages: what is
            // not committed is asked again by the next run.
            let mut signal = stop.clone();
            let written_before = self.db.rows_written();
            let pass = tokio::select! {
                pass = verify::pass_following_deletes(self, &stop) => pass,
                _ = signal.wait_for(|stopped| *stopped) => Err(ConsumerError::Stopped),
            };
            let report = match pass {
                Ok(report) => report,
                // The pages the cut-short pass committed are in the target: they count.
                Err(ConsumerError::Stopped) => {
                    return Ok(total + self.db.rows_written().saturating_sub(written_before))
                }
                // Between pages (reading the plan or the watermarks) a restart can also strike;
                // the pass resumes from the watermarks the target holds.
                Err(e) if e.is_transient() => {
                    tracing::warn!(error = %e, "transient failure; resuming the pass");
                    if !retry.pause().await {
                        return Err(e);
                    }
                    continue;
                }
                Err(e @ ConsumerError::Partial { .. }) if !once => {
                    tracing::error!(error = %e, "pass incomplete; following the tables that sync");
                    tokio::select! {
                        _ = stop.wait_for(|stopped| *stopped) => return Ok(total),
                        _ = tokio::time::sleep(self.config.follow_interval) => {}
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            retry.reset();
            total += report.total_rows();
            report.count();
            tracing::info!(
                rows = report.total_rows(),
                pages = report.pages,
                parents_fetched = report.parents_fetched,
                links_set = report.links_set,
                "sync pass done"
            );
            // A resumed pass only reached the old pass's horizon; --once means caught up to now.
            if once && !report.resumed {
                return Ok(total);
            }
            if once {
                continue;
            }
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return Ok(total),
                _ = tokio::time::sleep(self.config.follow_interval) => {}
            }
        }
    }
}
