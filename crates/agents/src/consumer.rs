//! The consumer: asks the producer for pages after its watermark and inserts them into the
//! target in foreign-key order, idempotently.
//!
//! Each page is upserted by primary key in one transaction together with the entity's watermark
//! (`maskbus.sync_state`), so a page delivered twice changes nothing and a crash between pages
//! resumes exactly where the last commit left off. A child page whose parents are not in the
//! target yet (a parent row committed late on the source) asks the producer for those parents by
//! key first. The target's sequences are moved past the largest synced keys after each pass.

use crate::config::ConsumerConfig;
use crate::plan;
use crate::protocol::{ErrorCode, ReceivedPage, ReceivedReply, Request, Snapshot, VERSION};
use maskbus_mailbox::{Mailbox, MailboxError, Outgoing, Settings};
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{quote_ident, Migration, PgError, PgPool, Target};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio_postgres::error::SqlState;

/// The consumer's own bookkeeping in the target database.
pub const MIGRATIONS: &[Migration] = &[Migration {
    component: "sync",
    name: "0001_sync_state.sql",
    sql: include_str!("../../../sql/sync/0001_sync_state.sql"),
}];

#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
    #[error("the producer refused {what}: {message} ({code:?})")]
    Refused {
        what: String,
        code: ErrorCode,
        message: String,
    },
    #[error("no reply from the producer at mailbox {mailbox} after {tries} tries of {timeout:?}: is `maskbus run` running with the producer config?")]
    NoReply {
        mailbox: String,
        tries: u32,
        timeout: Duration,
    },
    #[error("a reply for {entity} does not fit the target: {reason}")]
    BadReply { entity: String, reason: String },
    #[error("{entity}: {reason}")]
    Unsupported { entity: String, reason: String },
    #[error("{0}")]
    Plan(#[from] plan::PlanError),
    #[error("stopped by a signal")]
    Stopped,
}

/// How one entity lands in the target.
#[derive(Clone, Debug)]
pub struct EntityPlan {
    pub entity: String,
    pub key: String,
    /// Column name → full type (`character varying(60)`).
    pub types: HashMap<String, String>,
    /// (column, parent entity) for single-column foreign keys to the parent's key.
    pub parents: Vec<(String, String)>,
}

/// An entity's watermark: source snapshots, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncState {
    /// Every row written by a transaction committed in this snapshot is synced.
    pub synced_until: Option<String>,
    /// The snapshot closing a pass in progress.
    pub pass_until: Option<String>,
    pub after_key: Option<i64>,
    pub rows_synced: i64,
}

#[derive(Clone, Debug, Default)]
pub struct PassReport {
    /// The pass finished one that a crash had cut short (so it only reached that pass's horizon).
    pub resumed: bool,
    /// Rows inserted or updated per entity, in plan order.
    pub rows: Vec<(String, u64)>,
    pub pages: u64,
    pub parents_fetched: u64,
}

impl PassReport {
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().map(|(_, n)| n).sum()
    }
}

pub struct Consumer {
    pub config: ConsumerConfig,
    pub mailbox: Mailbox,
    target: Target,
    pool: PgPool,
    requests: AtomicU64,
    run_id: String,
    /// Replies that arrived for a request another task is waiting on (a prefetch and a parent
    /// fetch can be in flight at once on the one reply mailbox), by correlation id.
    in_flight: std::sync::Mutex<HashMap<String, Vec<ReceivedReply>>>,
}

impl Consumer {
    pub async fn start(config: ConsumerConfig) -> Result<Self, ConsumerError> {
        let bus = Target::parse("bus", &config.bus_url.0)?;
        let target = Target::parse("target", &config.target_url.0)?;
        maskbus_pg::apply_migrations(&target, MIGRATIONS).await?;
        let mailbox = Mailbox::connect(bus, "consumer", Settings::default()).await?;
        let pool = PgPool::new(target.clone(), 2)?;
        // Correlation ids must not repeat across restarts: a late reply to a previous run's
        // request must never be taken for an answer to this one.
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Ok(Self {
            run_id: format!("{}-{started:x}", std::process::id()),
            config,
            mailbox,
            target,
            pool,
            requests: AtomicU64::new(0),
            in_flight: std::sync::Mutex::new(HashMap::new()),
        })
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// Sends a request and waits for all its replies (a page request may have several), asking
    /// again after each timeout.
    pub async fn ask(&self, request: &Request) -> Result<Vec<ReceivedReply>, ConsumerError> {
        const TRIES: u32 = 3;
        let body = serde_json::to_value(request).map_err(|e| ConsumerError::BadReply {
            entity: String::new(),
            reason: format!("could not encode a request: {e}"),
        })?;
        for _ in 0..TRIES {
            let correlation = format!(
                "{}-{}",
                self.run_id,
                self.requests.fetch_add(1, Ordering::Relaxed)
            );
            self.mailbox
                .send(Outgoing {
                    to: self.config.producer_mailbox.clone(),
                    kind: "request".into(),
                    correlation_id: Some(correlation.clone()),
                    reply_to: Some(self.config.mailbox.clone()),
                    body: body.clone(),
                })
                .await?;
            let deadline = tokio::time::Instant::now() + self.config.request_timeout;
            let mut answers: Vec<ReceivedReply> = Vec::new();
            self.lock_in_flight()
                .insert(correlation.clone(), Vec::new());
            let outcome = loop {
                answers.extend(
                    self.lock_in_flight()
                        .get_mut(&correlation)
                        .map(std::mem::take)
                        .unwrap_or_default(),
                );
                let complete = match answers.first() {
                    None => false,
                    Some(ReceivedReply::Page(page)) => answers.len() as u32 >= page.parts.max(1),
                    Some(_) => true,
                };
                if complete {
                    answers.sort_by_key(|a| match a {
                        ReceivedReply::Page(page) => page.part,
                        _ => 0,
                    });
                    break Some(Ok(std::mem::take(&mut answers)));
                }
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    break None;
                }
                // Short waits: a reply for this request may also be claimed by another task
                // waiting on the same mailbox, which hands it over through `in_flight`.
                let received = match self
                    .mailbox
                    .receive(
                        &self.config.mailbox,
                        32,
                        left.min(Duration::from_millis(100)),
                    )
                    .await
                {
                    Ok(received) => received,
                    Err(e) => break Some(Err(e.into())),
                };
                let mut handled = Vec::with_capacity(received.messages.len());
                let mut failure = None;
                for message in received.messages {
                    let owner = message.correlation_id.clone().unwrap_or_default();
                    let waiting =
                        owner == correlation || self.lock_in_flight().contains_key(&owner);
                    if !waiting {
                        // A late answer to an earlier request: archived by the ack, so the audit
                        // still sees it; the page it carries is asked for again anyway.
                        handled.push(message.lease);
                        continue;
                    }
                    match serde_json::from_value::<ReceivedReply>(message.body) {
                        Ok(reply) => {
                            handled.push(message.lease);
                            if owner == correlation {
                                answers.push(reply);
                            } else if let Some(theirs) = self.lock_in_flight().get_mut(&owner) {
                                theirs.push(reply);
                            }
                        }
                        Err(e) => {
                            let reason = format!("not a maskbus reply: {e}");
                            if let Err(e) = self.mailbox.dead_letter(message.lease, &reason).await {
                                failure = Some(e.into());
                            } else {
                                failure = Some(ConsumerError::BadReply {
                                    entity: String::new(),
                                    reason,
                                });
                            }
                            break;
                        }
                    }
                }
                if let Err(e) = self.mailbox.ack_batch(&handled).await {
                    break Some(Err(e.into()));
                }
                if let Some(e) = failure {
                    break Some(Err(e));
                }
            };
            self.lock_in_flight().remove(&correlation);
            if let Some(result) = outcome {
                return result;
            }
            tracing::warn!(mailbox = %self.config.producer_mailbox, "no reply in {:?}; asking again", self.config.request_timeout);
        }
        Err(ConsumerError::NoReply {
            mailbox: self.config.producer_mailbox.clone(),
            tries: TRIES,
            timeout: self.config.request_timeout,
        })
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<ReceivedReply>>> {
        // A panic while holding this lock cannot leave the map half-changed; keep using it.
        self.in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Asks until the producer answers with something other than "unavailable" (the source may be
    /// restarting), backing off between tries.
    async fn ask_patiently(
        &self,
        request: &Request,
        what: &str,
    ) -> Result<Vec<ReceivedReply>, ConsumerError> {
        let mut wait = Duration::from_millis(200);
        for _ in 0..30 {
            let replies = self.ask(request).await?;
            match replies.first() {
                Some(ReceivedReply::Error { error, .. })
                    if error.code == ErrorCode::Unavailable =>
                {
                    tracing::warn!(what, reason = %error.message, "producer unavailable; retrying in {wait:?}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Some(ReceivedReply::Error { error, .. }) => {
                    return Err(ConsumerError::Refused {
                        what: what.to_string(),
                        code: error.code,
                        message: error.message.clone(),
                    })
                }
                _ => return Ok(replies),
            }
        }
        Err(ConsumerError::Refused {
            what: what.to_string(),
            code: ErrorCode::Unavailable,
            message: "the producer stayed unavailable".into(),
        })
    }

    /// The entities to sync, in foreign-key order: what the producer serves and the target has.
    pub async fn plan(&self) -> Result<Vec<EntityPlan>, ConsumerError> {
        let offered = match self
            .ask_patiently(&Request::Entities { v: VERSION }, "the entity list")
            .await?
            .into_iter()
            .next()
        {
            Some(ReceivedReply::Entities { entities, .. }) => entities,
            _ => {
                return Err(ConsumerError::BadReply {
                    entity: String::new(),
                    reason: "expected the entity list".into(),
                })
            }
        };
        self.catalog_plan(offered).await
    }

    /// How `entities` land in the target, from its catalog alone, in foreign-key order. A name
    /// the target has no table for is skipped with a warning.
    pub async fn catalog_plan(
        &self,
        offered: Vec<String>,
    ) -> Result<Vec<EntityPlan>, ConsumerError> {
        let client = self.client().await?;
        let schema = &self.config.schema;
        let keys = maskbus_pg::catalog::primary_keys(&self.target, &client, schema).await?;
        let fks = maskbus_pg::catalog::foreign_keys(&self.target, &client, schema).await?;
        let mut plans = BTreeMap::new();
        for entity in offered {
            let types: HashMap<String, String> =
                maskbus_pg::catalog::column_types(&self.target, &client, schema, &entity)
                    .await?
                    .into_iter()
                    .collect();
            if types.is_empty() {
                tracing::warn!(%entity, "the producer serves {entity}, but the target has no such table; skipping it");
                continue;
            }
            let key = keys.iter().find(|k| k.table == entity).ok_or_else(|| {
                ConsumerError::Unsupported {
                    entity: entity.clone(),
                    reason: "the target table has no primary key; the sync upserts by primary key"
                        .into(),
                }
            })?;
            if key.columns != 1
                || !matches!(key.data_type.as_str(), "bigint" | "integer" | "smallint")
            {
                return Err(ConsumerError::Unsupported {
                    entity: entity.clone(),
                    reason: "only single-column integer primary keys are supported yet".into(),
                });
            }
            let parents = fks
                .iter()
                .filter(|fk| fk.table == entity && fk.columns.len() == 1)
                .map(|fk| (fk.columns[0].clone(), fk.parent.clone()))
                .collect();
            plans.insert(
                entity.clone(),
                EntityPlan {
                    entity,
                    key: key.column.clone(),
                    types,
                    parents,
                },
            );
        }
        let names: Vec<String> = plans.keys().cloned().collect();
        let edges: Vec<(String, String)> = fks
            .iter()
            .map(|fk| (fk.table.clone(), fk.parent.clone()))
            .collect();
        let order = plan::fk_order(&names, &edges)?;
        Ok(order.into_iter().filter_map(|e| plans.remove(&e)).collect())
    }

    /// Every entity's watermark.
    pub async fn states(&self) -> Result<BTreeMap<String, SyncState>, ConsumerError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT entity, synced_until, pass_until, after_key, rows_synced FROM maskbus.sync_state",
                &[],
            )
            .await
            .map_err(|e| self.target.query_error("reading maskbus.sync_state", &e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get(0),
                    SyncState {
                        synced_until: r.get(1),
                        pass_until: r.get(2),
                        after_key: r.get(3),
                        rows_synced: r.get(4),
                    },
                )
            })
            .collect())
    }

    /// Upserts a page and, with `state`, records the watermark in the same transaction.
    /// Returns the number of rows written.
    async fn apply(
        &self,
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&SyncState>,
    ) -> Result<u64, ApplyError> {
        let statement =
            upsert_statement(&self.config.schema, plan, page).map_err(ApplyError::Consumer)?;
        let columns: Vec<Vec<Option<&str>>> = (0..page.columns.len())
            .map(|i| page.rows.iter().map(|row| row[i].as_deref()).collect())
            .collect();
        let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = columns
            .iter()
            .map(|c| c as &(dyn tokio_postgres::types::ToSql + Sync))
            .collect();
        let mut client = self
            .client()
            .await
            .map_err(|e| ApplyError::Consumer(e.into()))?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| ApplyError::Consumer(self.target.query_error("BEGIN", &e).into()))?;
        let written = if page.rows.is_empty() {
            0
        } else {
            match tx.execute(&statement, &params).await {
                Ok(n) => n,
                Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => {
                    return Err(ApplyError::MissingParents)
                }
                Err(e) => {
                    return Err(ApplyError::Consumer(
                        self.target
                            .query_error(format!("inserting a page of {}", plan.entity), &e)
                            .into(),
                    ))
                }
            }
        };
        if let Some(state) = state {
            tx.execute(
                "INSERT INTO maskbus.sync_state (entity, synced_until, pass_until, after_key, rows_synced, updated_at)
                 VALUES ($1, $2, $3, $4, $5, now())
                 ON CONFLICT (entity) DO UPDATE
                    SET synced_until = EXCLUDED.synced_until, pass_until = EXCLUDED.pass_until,
                        after_key = EXCLUDED.after_key, rows_synced = EXCLUDED.rows_synced, updated_at = now()",
                &[&plan.entity, &state.synced_until, &state.pass_until, &state.after_key, &state.rows_synced],
            )
            .await
            .map_err(|e| ApplyError::Consumer(self.target.query_error("recording the watermark", &e).into()))?;
        }
        tx.commit().await.map_err(|e| {
            ApplyError::Consumer(self.target.query_error("COMMIT of a page", &e).into())
        })?;
        Ok(written)
    }

    /// Applies a page, first fetching (by key) any parent rows the target lacks.
    async fn apply_with_parents(
        &self,
        plans: &[EntityPlan],
        plan: &EntityPlan,
        page: &ReceivedPage,
        state: Option<&SyncState>,
        report: &mut PassReport,
        depth: u32,
    ) -> Result<u64, ConsumerError> {
        match self.apply(plan, page, state).await {
            Ok(n) => Ok(n),
            Err(ApplyError::Consumer(e)) => Err(e),
            Err(ApplyError::MissingParents) if depth < 8 => {
                for (column, parent) in &plan.parents {
                    let Some(parent_plan) = plans.iter().find(|p| &p.entity == parent) else {
                        continue;
                    };
                    let Some(index) = page.columns.iter().position(|c| c == column) else {
                        continue;
                    };
                    let keys: Vec<i64> = page
                        .rows
                        .iter()
                        .filter_map(|r| r[index].as_deref()?.parse().ok())
                        .collect();
                    let missing = self.missing_keys(parent_plan, &keys).await?;
                    for chunk in missing.chunks(crate::protocol::MAX_PAGE_ROWS as usize) {
                        let request = Request::Rows {
                            v: VERSION,
                            entity: parent.clone(),
                            keys: chunk.to_vec(),
                        };
                        let Some(ReceivedReply::Page(parents)) = self
                            .ask_patiently(&request, &format!("rows of {parent}"))
                            .await?
                            .into_iter()
                            .next()
                        else {
                            return Err(ConsumerError::BadReply {
                                entity: parent.clone(),
                                reason: "expected a page".into(),
                            });
                        };
                        report.parents_fetched += parents.rows.len() as u64;
                        Box::pin(self.apply_with_parents(
                            plans,
                            parent_plan,
                            &parents,
                            None,
                            report,
                            depth + 1,
                        ))
                        .await?;
                    }
                }
                Box::pin(self.apply_with_parents(plans, plan, page, state, report, depth + 1)).await
            }
            Err(ApplyError::MissingParents) => Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "rows reference parents the producer could not supply".into(),
            }),
        }
    }

    async fn missing_keys(
        &self,
        plan: &EntityPlan,
        keys: &[i64],
    ) -> Result<Vec<i64>, ConsumerError> {
        let client = self.client().await?;
        let sql = format!(
            "SELECT DISTINCT k FROM unnest($1::bigint[]) AS k WHERE NOT EXISTS (SELECT 1 FROM {}.{} p WHERE p.{} = k) ORDER BY k",
            quote_ident(&self.config.schema),
            quote_ident(&plan.entity),
            quote_ident(&plan.key)
        );
        let rows = client.query(&sql, &[&keys]).await.map_err(|e| {
            self.target
                .query_error(format!("looking for missing rows of {}", plan.entity), &e)
        })?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// One pass: every entity, parents first, up to one horizon. Between pages it checks `stop`.
    pub async fn sync_pass(
        &self,
        stop: &watch::Receiver<bool>,
    ) -> Result<PassReport, ConsumerError> {
        let plans = self.plan().await?;
        let states = self.states().await?;
        // A pass cut short by a crash is resumed with its own closing snapshot, for every entity,
        // so parents and children stay within one window.
        let mut until: Option<Snapshot> = states
            .values()
            .find_map(|s| s.pass_until.clone())
            .map(Snapshot);
        let mut report = PassReport {
            resumed: until.is_some(),
            ..PassReport::default()
        };
        for plan in &plans {
            let mut state = states.get(&plan.entity).cloned().unwrap_or_default();
            let mut after = state.pass_until.as_ref().and(state.after_key);
            let mut moved = 0u64;
            // The replies to the next request, asked for while this page was being inserted.
            let mut prefetched: Option<Vec<ReceivedReply>> = None;
            loop {
                if *stop.borrow() {
                    return Err(ConsumerError::Stopped);
                }
                let request = Request::Page {
                    v: VERSION,
                    entity: plan.entity.clone(),
                    since: state.synced_until.clone().map(Snapshot),
                    until: until.clone(),
                    after,
                    limit: self.config.page_size,
                    pages: Some(self.config.pages_per_request),
                };
                // The page and its watermark commit together; on a transient failure (a database
                // restarting) the same request is asked again, so nothing is skipped or doubled.
                let mut pause = Duration::from_millis(200);
                let mut tries = 0;
                let (page, next_state) = loop {
                    match self
                        .fetch_and_apply(
                            &plans,
                            plan,
                            &request,
                            prefetched.take(),
                            state.clone(),
                            &mut report,
                        )
                        .await
                    {
                        Ok((page, next_state, next_replies)) => {
                            prefetched = next_replies;
                            break (page, next_state);
                        }
                        Err(e) if e.is_transient() && tries < 40 => {
                            tries += 1;
                            tracing::warn!(entity = %plan.entity, error = %e, "transient failure; retrying the page in {pause:?}");
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(3));
                        }
                        Err(e) => return Err(e),
                    }
                };
                until = page.until.clone();
                state = next_state;
                let rows = page.rows.len() as i64;
                moved += rows as u64;
                // A merged page holds the replies of one request: parts 0..=part.
                let before = report.pages;
                report.pages += u64::from(page.part) + 1;
                if before / 100 != report.pages / 100 {
                    tracing::info!(entity = %plan.entity, rows = moved, pages = report.pages, "syncing");
                }
                if !page.more {
                    break;
                }
                after = page.next_after;
            }
            tracing::info!(entity = %plan.entity, rows = moved, "entity caught up");
            report.rows.push((plan.entity.clone(), moved));
        }
        self.move_sequences(&plans).await?;
        Ok(report)
    }

    /// Asks for one request's pages (unless they were prefetched) and applies them with the
    /// watermark they lead to. While the target inserts them, the next request is already on its
    /// way to the producer; its replies are returned for the next call.
    async fn fetch_and_apply(
        &self,
        plans: &[EntityPlan],
        plan: &EntityPlan,
        request: &Request,
        prefetched: Option<Vec<ReceivedReply>>,
        state: SyncState,
        report: &mut PassReport,
    ) -> Result<(ReceivedPage, SyncState, Option<Vec<ReceivedReply>>), ConsumerError> {
        let replies = match prefetched {
            Some(replies) => replies,
            None => {
                self.ask_patiently(request, &format!("a page of {}", plan.entity))
                    .await?
            }
        };
        let page = merge_pages(&plan.entity, replies)?;
        let Some(until) = page.until.clone() else {
            return Err(ConsumerError::BadReply {
                entity: plan.entity.clone(),
                reason: "a page reply without the snapshot that closes its window".into(),
            });
        };
        let rows = page.rows.len() as i64;
        let next = if page.more {
            SyncState {
                pass_until: Some(until.0),
                after_key: page.next_after,
                rows_synced: state.rows_synced + rows,
                ..state
            }
        } else {
            SyncState {
                synced_until: Some(until.0),
                pass_until: None,
                after_key: None,
                rows_synced: state.rows_synced + rows,
            }
        };
        let next_request = match request {
            Request::Page {
                v,
                entity,
                since,
                limit,
                pages,
                ..
            } if page.more => Some(Request::Page {
                v: *v,
                entity: entity.clone(),
                since: since.clone(),
                until: page.until.clone(),
                after: page.next_after,
                limit: *limit,
                pages: *pages,
            }),
            _ => None,
        };
        let what = format!("a page of {}", plan.entity);
        let prefetch = async {
            match &next_request {
                Some(next) => self.ask_patiently(next, &what).await.ok(),
                None => None,
            }
        };
        let (applied, next_replies) = tokio::join!(
            self.apply_with_parents(plans, plan, &page, Some(&next), report, 0),
            prefetch
        );
        applied?;
        Ok((page, next, next_replies))
    }

    /// Sets each key's sequence past the largest synced key, so inserts of the test engineers'
    /// own rows do not collide with synced ones.
    async fn move_sequences(&self, plans: &[EntityPlan]) -> Result<(), ConsumerError> {
        let client = self.client().await?;
        for plan in plans {
            let table = format!(
                "{}.{}",
                quote_ident(&self.config.schema),
                quote_ident(&plan.entity)
            );
            let sql = format!(
                "SELECT setval(s.seq, m.top)
                   FROM (SELECT pg_get_serial_sequence($1, $2) AS seq) s,
                        (SELECT max({key}) AS top FROM {table}) m
                  WHERE s.seq IS NOT NULL AND m.top IS NOT NULL
                    AND m.top > coalesce(pg_sequence_last_value(s.seq::regclass), 0)",
                key = quote_ident(&plan.key)
            );
            client
                .query(&sql, &[&table, &plan.key])
                .await
                .map_err(|e| {
                    self.target
                        .query_error(format!("moving the sequence of {}", plan.entity), &e)
                })?;
        }
        Ok(())
    }

    /// Inserts rows a caller supplies (the `insert_rows` tool): same upsert, no watermark.
    pub async fn insert_rows(
        &self,
        entity: &str,
        columns: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
    ) -> Result<u64, ConsumerError> {
        // The target's catalog is enough: the caller (an agent) brings the rows, and may have no
        // model-free producer to ask for missing parents.
        let plans = self.catalog_plan(vec![entity.to_string()]).await?;
        let plan = plans.iter().find(|p| p.entity == entity).ok_or_else(|| {
            ConsumerError::Unsupported {
                entity: entity.to_string(),
                reason: "the test database has no such table".into(),
            }
        })?;
        let page = ReceivedPage {
            v: VERSION,
            entity: entity.to_string(),
            key: plan.key.clone(),
            columns,
            rows,
            next_after: None,
            more: false,
            since: None,
            until: None,
            part: 0,
            parts: 1,
        };
        match self.apply(plan, &page, None).await {
            Ok(written) => Ok(written),
            Err(ApplyError::Consumer(e)) => Err(e),
            Err(ApplyError::MissingParents) => Err(ConsumerError::BadReply {
                entity: entity.to_string(),
                reason: "the rows reference parent rows the test database does not have yet: insert the parents first"
                    .into(),
            }),
        }
    }

    /// Rows of the target (the `query_local` tool), as text, in key order.
    pub async fn query_local(
        &self,
        entity: &str,
        after: Option<i64>,
        limit: u32,
    ) -> Result<(Vec<String>, Vec<Vec<Option<String>>>), ConsumerError> {
        if !crate::protocol::is_identifier(entity) {
            return Err(ConsumerError::Unsupported {
                entity: entity.chars().take(64).collect(),
                reason: "not a plain table name".into(),
            });
        }
        let client = self.client().await?;
        let keys =
            maskbus_pg::catalog::primary_keys(&self.target, &client, &self.config.schema).await?;
        let key = keys
            .iter()
            .find(|k| k.table == entity && k.columns == 1)
            .ok_or_else(|| ConsumerError::Unsupported {
                entity: entity.to_string(),
                reason: "no such table with a single-column primary key in the target".into(),
            })?;
        let columns: Vec<String> =
            maskbus_pg::catalog::column_types(&self.target, &client, &self.config.schema, entity)
                .await?
                .into_iter()
                .map(|(c, _)| c)
                .collect();
        let sql = format!(
            "SELECT {} FROM {}.{} t WHERE t.{key}::bigint > $1 ORDER BY t.{key} LIMIT $2",
            columns
                .iter()
                .map(|c| format!("t.{}::text", quote_ident(c)))
                .collect::<Vec<_>>()
                .join(", "),
            quote_ident(&self.config.schema),
            quote_ident(entity),
            key = quote_ident(&key.column)
        );
        let rows = client
            .query(
                &sql,
                &[
                    &after.unwrap_or(i64::MIN),
                    &i64::from(limit.min(crate::protocol::MAX_PAGE_ROWS)),
                ],
            )
            .await
            .map_err(|e| self.target.query_error(format!("reading {entity}"), &e))?;
        let values = rows
            .iter()
            .map(|r| (0..columns.len()).map(|i| r.get(i)).collect())
            .collect();
        Ok((columns, values))
    }

    /// Passes until stopped (or one pass with `once`). Returns the rows moved.
    pub async fn run(
        &self,
        once: bool,
        mut stop: watch::Receiver<bool>,
    ) -> Result<u64, ConsumerError> {
        let mut total = 0;
        let mut transient_failures = 0;
        loop {
            let report = match self.sync_pass(&stop).await {
                Ok(report) => report,
                Err(ConsumerError::Stopped) => return Ok(total),
                // Between pages (reading the plan or the watermarks) a restart can also strike;
                // the pass resumes from the watermarks the target holds.
                Err(e) if e.is_transient() && transient_failures < 40 => {
                    transient_failures += 1;
                    tracing::warn!(error = %e, "transient failure; resuming the pass");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            transient_failures = 0;
            total += report.total_rows();
            tracing::info!(
                rows = report.total_rows(),
                pages = report.pages,
                parents_fetched = report.parents_fetched,
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

impl ConsumerError {
    /// Worth retrying after a pause: a database or the bus restarting, a dropped connection.
    pub fn is_transient(&self) -> bool {
        match self {
            ConsumerError::Pg(e) | ConsumerError::Mailbox(MailboxError::Pg(e)) => e.is_transient(),
            _ => false,
        }
    }
}

/// The replies to one page request, in order, as one page: their rows concatenated, the cursor
/// and `more` of the last. They must agree on entity, key and columns.
fn merge_pages(entity: &str, replies: Vec<ReceivedReply>) -> Result<ReceivedPage, ConsumerError> {
    let bad = |reason: &str| ConsumerError::BadReply {
        entity: entity.to_string(),
        reason: reason.to_string(),
    };
    let mut pages = replies.into_iter().map(|reply| match reply {
        ReceivedReply::Page(page) => Ok(page),
        _ => Err(bad("expected a page")),
    });
    let mut merged = pages.next().ok_or_else(|| bad("no page arrived"))??;
    for page in pages {
        let page = page?;
        if page.entity != merged.entity || page.key != merged.key || page.columns != merged.columns
        {
            return Err(bad("the pages of one request disagree on their columns"));
        }
        merged.rows.extend(page.rows);
        merged.next_after = page.next_after;
        merged.more = page.more;
        merged.part = page.part;
    }
    Ok(merged)
}

enum ApplyError {
    MissingParents,
    Consumer(ConsumerError),
}

/// `INSERT ... SELECT ... FROM unnest(text arrays) ON CONFLICT (key) DO UPDATE`, with every name
/// checked against the target's catalog and every value a bind parameter.
pub fn upsert_statement(
    schema: &str,
    plan: &EntityPlan,
    page: &ReceivedPage,
) -> Result<String, ConsumerError> {
    let bad = |reason: String| ConsumerError::BadReply {
        entity: plan.entity.clone(),
        reason,
    };
    if page.entity != plan.entity {
        return Err(bad(format!(
            "a page of {} arrived for {}",
            page.entity, plan.entity
        )));
    }
    if page.key != plan.key || !page.columns.contains(&plan.key) {
        return Err(bad(format!(
            "the page is keyed by {}, the target by {}",
            page.key, plan.key
        )));
    }
    let mut seen = std::collections::HashSet::new();
    for column in &page.columns {
        if !plan.types.contains_key(column) {
            return Err(bad(format!("column {column:?} is not in the target table")));
        }
        if !seen.insert(column) {
            return Err(bad(format!("column {column} appears twice")));
        }
    }
    if let Some(row) = page.rows.iter().find(|r| r.len() != page.columns.len()) {
        return Err(bad(format!(
            "a row has {} values for {} columns",
            row.len(),
            page.columns.len()
        )));
    }
    let names: Vec<String> = page.columns.iter().map(|c| quote_ident(c)).collect();
    let casts: Vec<String> = page
        .columns
        .iter()
        .map(|c| format!("u.{}::{}", quote_ident(c), plan.types[c]))
        .collect();
    let arrays: Vec<String> = (1..=page.columns.len())
        .map(|i| format!("${i}::text[]"))
        .collect();
    let updates: Vec<String> = page
        .columns
        .iter()
        .filter(|c| **c != plan.key)
        .map(|c| format!("{0} = EXCLUDED.{0}", quote_ident(c)))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_string()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    Ok(format!(
        "INSERT INTO {}.{} ({}) SELECT {} FROM unnest({}) AS u({}) ON CONFLICT ({}) {on_conflict}",
        quote_ident(schema),
        quote_ident(&plan.entity),
        names.join(", "),
        casts.join(", "),
        arrays.join(", "),
        names.join(", "),
        quote_ident(&plan.key),
    ))
}
