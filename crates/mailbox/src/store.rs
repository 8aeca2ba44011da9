//! The mailbox operations, each one short statement against the bus (no transaction is ever held
//! open while a handler runs).

use crate::backoff::backoff;
use crate::body::{nesting_depth, Body, MAX_NESTING};
use crate::listener;
use maskbus_pg::deadpool_postgres;
use maskbus_pg::{Database, PgError, PgPool};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How a mailbox behaves. The defaults suit the agents; tests shorten the lease.
#[derive(Clone, Debug)]
pub struct Settings {
    /// How long a claim hides a message from other receivers.
    pub lease: Duration,
    /// Attempts before a message goes to the dead letters.
    pub max_attempts: u32,
    /// A long poll claims again at least this often, in case a notification was lost.
    pub poll_interval: Duration,
    pub backoff_base: Duration,
    pub backoff_cap: Duration,
    /// Connections in the pool.
    pub pool_size: usize,
    /// Bodies larger than this are dead-lettered at claim time instead of being parsed.
    pub max_body_bytes: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(30),
            max_attempts: 5,
            poll_interval: Duration::from_secs(1),
            backoff_base: Duration::from_secs(1),
            backoff_cap: Duration::from_secs(60),
            pool_size: 4,
            max_body_bytes: 64 << 20,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error(transparent)]
    Pg(#[from] PgError),
    #[error("message {message_id}: the lease is stale (it expired and another receiver claimed the message, or it was already acked); the outcome was not recorded")]
    StaleLease { message_id: i64 },
    #[error("mailbox name {0:?} is not usable: give 1 to {max} bytes of printable characters", max = crate::MAX_MAILBOX_NAME_BYTES)]
    BadMailboxName(String),
    #[error("a correlation id has at most {max} bytes", max = crate::MAX_CORRELATION_ID_BYTES)]
    BadCorrelationId,
    #[error("{0:?} is not a role name this bus can grant to")]
    BadRole(String),
}

/// Proof of a claim: needed to ack, nack or dead-letter the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lease {
    pub message_id: i64,
    pub token: i64,
}

/// A claimed message.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: i64,
    pub mailbox: String,
    pub sender: String,
    pub kind: String,
    pub correlation_id: Option<String>,
    pub reply_to: Option<String>,
    /// The JSON text as it was sent (checked to be JSON this side can read): a receiver reads it
    /// straight into its own types.
    pub body: Body,
    /// Including this one.
    pub attempts: i32,
    pub lease: Lease,
}

/// A message to send.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub to: String,
    pub kind: String,
    pub correlation_id: Option<String>,
    pub reply_to: Option<String>,
    pub body: Body,
}

/// What woke a long poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Messages were there at the first claim.
    Immediate,
    /// A NOTIFY arrived.
    Notification,
    /// The poll interval passed.
    Poll,
    /// The wait ran out with nothing to claim.
    Timeout,
}

#[derive(Debug)]
pub struct Received {
    pub messages: Vec<Message>,
    pub wake: Wake,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NackOutcome {
    /// The message will be visible again after this delay.
    Retry { after: Duration },
    /// Attempts were used up: the message is in the dead letters.
    DeadLettered,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MailboxStats {
    pub mailbox: String,
    pub pending: i64,
    pub leased: i64,
    pub delayed: i64,
    pub archived: i64,
    pub dead: i64,
    /// Seconds since the oldest pending message was sent.
    pub oldest_pending_age_secs: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub deleted_archived: i64,
    pub deleted_dead: i64,
    /// Old enough, but not yet scanned by a wire audit.
    pub kept_unaudited: i64,
    /// Old enough, but still pending, delayed or leased (never purged).
    pub kept_in_flight: i64,
    /// Old enough dead letters, kept because dead letters were not asked for.
    pub kept_dead: i64,
    pub audited_through: i64,
    /// Old enough and audited, but kept as the evidence of an open finding.
    pub kept_evidence: i64,
}

/// How far the wire audit is (`mq.audit_status`): numbers only, for any participant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuditStatus {
    pub scanned_through: i64,
    /// Seconds since the oldest message the audit has not scanned was sent; none when every
    /// message is scanned.
    pub oldest_unaudited_secs: Option<f64>,
    pub open_findings: i64,
    pub acked_findings: i64,
}

impl AuditStatus {
    /// Whether a message has waited for the audit longer than `max_age`.
    pub fn is_stale(&self, max_age: Duration) -> bool {
        self.oldest_unaudited_secs
            .is_some_and(|age| age > max_age.as_secs_f64())
    }
}

/// A handle on the bus: a connection pool plus one LISTEN connection for long polls.
pub struct Mailbox {
    target: Database,
    pool: PgPool,
    settings: Settings,
    woken: watch::Receiver<u64>,
    listener: tokio::task::JoinHandle<()>,
    parked: Arc<watch::Sender<usize>>,
    notify_wakeups: AtomicU64,
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

fn check_mailbox_name(name: &str) -> Result<(), MailboxError> {
    let ok = !name.is_empty()
        && name.len() <= crate::MAX_MAILBOX_NAME_BYTES
        && !name.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(MailboxError::BadMailboxName(
            name.chars().take(64).collect(),
        ))
    }
}

impl Mailbox {
    /// Connects to the bus. Messages sent from here carry the session's role as their sender.
    pub async fn connect(target: Database, settings: Settings) -> Result<Self, MailboxError> {
        let pool = PgPool::new(target.clone(), settings.pool_size)?;
        let mailbox_ready: bool = {
            let client = pool.get().await?;
            client
                .query_one(
                    "SELECT to_regprocedure('mq.grant_participant(name,text,text)') IS NOT NULL",
                    &[],
                )
                .await
                .map_err(|e| target.query_error("looking for the mailbox schema", &e))?
                .get(0)
        };
        if !mailbox_ready {
            return Err(target
                .refusal(
                    "opening the mailbox",
                    "the bus schema is missing or out of date; run `maskbus bus init`",
                )
                .into());
        }
        let (woken, mut ready, listener) = listener::spawn(target.clone());
        // A long poll that parks before LISTEN is in place would miss its first wake-up and wait
        // a whole poll interval; wait (briefly) for the listener. Without it, polling still works.
        let _ = tokio::time::timeout(Duration::from_secs(3), ready.wait_for(|ready| *ready)).await;
        Ok(Self {
            target,
            pool,
            settings,
            woken,
            listener,
            parked: Arc::new(watch::channel(0).0),
            notify_wakeups: AtomicU64::new(0),
        })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, PgError> {
        self.pool.get().await
    }

    /// Runs one of the hot statements (send, claim, ack), prepared once per pooled connection:
    /// one round trip a call instead of two, and no planning per call.
    async fn query_prepared(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        action: &str,
    ) -> Result<Vec<tokio_postgres::Row>, MailboxError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(|e| self.error(action, &e))?;
        client
            .query(&statement, params)
            .await
            .map_err(|e| self.error(action, &e))
    }

    fn error(&self, action: &str, e: &tokio_postgres::Error) -> MailboxError {
        self.target.query_error(action, e).into()
    }

    /// Sends one message; returns its id.
    pub async fn send(&self, message: Outgoing) -> Result<i64, MailboxError> {
        let Outgoing {
            to,
            kind,
            correlation_id,
            reply_to,
            body,
        } = message;
        let ids = self
            .send_batch(
                &to,
                &kind,
                reply_to.as_deref(),
                vec![(correlation_id, body)],
            )
            .await?;
        Ok(ids[0])
    }

    /// Sends several messages to one mailbox in one statement; returns their ids in order.
    pub async fn send_batch(
        &self,
        to: &str,
        kind: &str,
        reply_to: Option<&str>,
        messages: Vec<(Option<String>, Body)>,
    ) -> Result<Vec<i64>, MailboxError> {
        check_mailbox_name(to)?;
        if let Some(reply_to) = reply_to {
            check_mailbox_name(reply_to)?;
        }
        if messages.iter().any(|(c, _)| {
            c.as_ref()
                .is_some_and(|c| c.len() > crate::MAX_CORRELATION_ID_BYTES)
        }) {
            return Err(MailboxError::BadCorrelationId);
        }
        let action = format!("sending to mailbox {to}");
        let send = "SELECT mq.send($1, $2, $3, $4, $5)";
        if messages.len() <= crate::MAX_MESSAGES_PER_SEND {
            let (correlation_ids, bodies): (Vec<Option<String>>, Vec<&str>) =
                messages.iter().map(|(c, b)| (c.clone(), b.get())).unzip();
            let rows = self
                .query_prepared(
                    send,
                    &[&to, &kind, &correlation_ids, &reply_to, &bodies],
                    &action,
                )
                .await?;
            return Ok(rows.iter().map(|r| r.get(0)).collect());
        }
        // More than one send may carry (the replies to a very large source transaction): in
        // chunks, all in one transaction, so the receiver sees all of them or none.
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| self.error(&action, &e))?;
        let statement = tx
            .prepare(send)
            .await
            .map_err(|e| self.error(&action, &e))?;
        let mut ids = Vec::with_capacity(messages.len());
        for chunk in messages.chunks(crate::MAX_MESSAGES_PER_SEND) {
            let (correlation_ids, bodies): (Vec<Option<String>>, Vec<&str>) =
                chunk.iter().map(|(c, b)| (c.clone(), b.get())).unzip();
            let rows = tx
                .query(
                    &statement,
                    &[&to, &kind, &correlation_ids, &reply_to, &bodies],
                )
                .await
                .map_err(|e| self.error(&action, &e))?;
            ids.extend(rows.iter().map(|r| r.get::<_, i64>(0)));
        }
        tx.commit().await.map_err(|e| self.error(&action, &e))?;
        Ok(ids)
    }

    /// Claims up to `limit` visible messages of `mailbox` without waiting. A message whose body
    /// is over [`Settings::max_body_bytes`], or is not JSON this side can parse (nested too deep,
    /// say), is dead-lettered here with the reason and not returned: poison never reaches a
    /// handler, and never stops one.
    pub async fn claim(&self, mailbox: &str, limit: u32) -> Result<Vec<Message>, MailboxError> {
        check_mailbox_name(mailbox)?;
        let rows = self
            .query_prepared(
                "SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, body_bytes, attempts, lease
                   FROM mq.claim($1, $2, $3, $4)",
                &[
                    &mailbox,
                    &(limit.min(i32::MAX as u32) as i32),
                    &self.settings.lease.as_secs_f64(),
                    &(self.settings.max_attempts.min(i32::MAX as u32) as i32),
                ],
                &format!("claiming from mailbox {mailbox}"),
            )
            .await?;
        let mut messages = Vec::with_capacity(rows.len());
        for row in &rows {
            match self.read_claimed(row) {
                Ok(message) => messages.push(message),
                Err((Some(lease), reason)) => {
                    tracing::warn!(message = lease.message_id, %reason, "dead-lettered a message that cannot be handled");
                    match self.dead_letter(lease, &reason).await {
                        Ok(()) | Err(MailboxError::StaleLease { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                Err((None, reason)) => {
                    tracing::warn!(%reason, "a claimed row could not be read; its lease will expire");
                }
            }
        }
        Ok(messages)
    }

    /// One claimed row as a message, or why not (with the lease, when it could be read).
    fn read_claimed(&self, row: &tokio_postgres::Row) -> Result<Message, (Option<Lease>, String)> {
        let lease = match (row.try_get::<_, i64>(0), row.try_get::<_, i64>(9)) {
            (Ok(message_id), Ok(token)) => Lease { message_id, token },
            _ => return Err((None, "the claim returned a row without id or lease".into())),
        };
        let fail = |what: &str| (Some(lease), what.to_string());
        let bytes = row.try_get::<_, i32>(7).map_err(|_| fail("no body size"))?;
        if bytes.max(0) as usize > self.settings.max_body_bytes {
            return Err(fail(&format!(
                "the body is {bytes} bytes, over this receiver's limit of {} bytes",
                self.settings.max_body_bytes
            )));
        }
        let text: String = row.try_get(6).map_err(|_| fail("the body is not text"))?;
        if nesting_depth(&text) >= MAX_NESTING {
            return Err(fail(&format!(
                "the body is not JSON this receiver can read: nested deeper than {MAX_NESTING} levels"
            )));
        }
        // Validated in place: the text becomes the body without a copy.
        let body: Body = serde_json::value::RawValue::from_string(text).map_err(|e| {
            fail(&format!(
                "the body is not JSON this receiver can read: {}",
                maskbus_pg::excerpt(&e.to_string(), 120)
            ))
        })?;
        Ok(Message {
            id: lease.message_id,
            mailbox: row.try_get(1).map_err(|_| fail("no mailbox"))?,
            sender: row.try_get(2).map_err(|_| fail("no sender"))?,
            kind: row.try_get(3).map_err(|_| fail("no kind"))?,
            correlation_id: row
                .try_get(4)
                .map_err(|_| fail("unreadable correlation id"))?,
            reply_to: row.try_get(5).map_err(|_| fail("unreadable reply_to"))?,
            body,
            attempts: row.try_get(8).map_err(|_| fail("no attempt count"))?,
            lease,
        })
    }

    /// The long poll: claims at once if it can, else waits up to `wait` for a notification (or
    /// the poll interval) and claims again.
    pub async fn receive(
        &self,
        mailbox: &str,
        limit: u32,
        wait: Duration,
    ) -> Result<Received, MailboxError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut woken = self.woken.clone();
        woken.borrow_and_update();
        let mut wake = Wake::Immediate;
        loop {
            // Seen before the claim: a notification that lands after it still changes the value.
            let messages = self.claim(mailbox, limit).await?;
            if !messages.is_empty() {
                return Ok(Received { messages, wake });
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(Received {
                    messages,
                    wake: Wake::Timeout,
                });
            }
            let nap = (deadline - now).min(self.settings.poll_interval);
            self.parked.send_modify(|n| *n += 1);
            wake = tokio::select! {
                changed = woken.changed() => match changed {
                    Ok(()) => Wake::Notification,
                    Err(_) => { tokio::time::sleep(nap).await; Wake::Poll }
                },
                _ = tokio::time::sleep(nap) => Wake::Poll,
            };
            self.parked.send_modify(|n| *n -= 1);
            if wake == Wake::Notification {
                self.notify_wakeups.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// How many long polls are parked right now (tests wait on it instead of sleeping).
    pub fn parked(&self) -> watch::Receiver<usize> {
        self.parked.subscribe()
    }

    /// Long polls woken by a notification so far.
    pub fn notify_wakeups(&self) -> u64 {
        self.notify_wakeups.load(Ordering::Relaxed)
    }

    /// Marks a message handled: it moves to the archive. Refused with a stale lease.
    pub async fn ack(&self, lease: Lease) -> Result<(), MailboxError> {
        let acked = self.ack_batch(&[lease]).await?;
        if acked.is_empty() {
            return Err(MailboxError::StaleLease {
                message_id: lease.message_id,
            });
        }
        Ok(())
    }

    /// Acks several messages in one statement; returns the ids acked (stale leases are left out).
    pub async fn ack_batch(&self, leases: &[Lease]) -> Result<Vec<i64>, MailboxError> {
        let ids: Vec<i64> = leases.iter().map(|l| l.message_id).collect();
        let tokens: Vec<i64> = leases.iter().map(|l| l.token).collect();
        let rows = self
            .query_prepared("SELECT mq.ack($1, $2)", &[&ids, &tokens], "acking messages")
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Gives a message back after a failure: it is retried after a backoff, or dead-lettered with
    /// `error` when its attempts are used up.
    pub async fn nack(&self, message: &Message, error: &str) -> Result<NackOutcome, MailboxError> {
        let attempts = message.attempts.max(0) as u32;
        if attempts >= self.settings.max_attempts {
            self.dead_letter(message.lease, error).await?;
            return Ok(NackOutcome::DeadLettered);
        }
        let delay = backoff(
            attempts,
            self.settings.backoff_base,
            self.settings.backoff_cap,
        );
        let client = self.client().await?;
        let updated: i32 = client
            .query_one(
                "SELECT mq.nack($1, $2, $3, $4)",
                &[
                    &message.lease.message_id,
                    &message.lease.token,
                    &delay.as_secs_f64(),
                    &error,
                ],
            )
            .await
            .map_err(|e| self.error("nacking a message", &e))?
            .get(0);
        if updated == 0 {
            return Err(MailboxError::StaleLease {
                message_id: message.lease.message_id,
            });
        }
        Ok(NackOutcome::Retry { after: delay })
    }

    /// Moves a message to the dead letters at once, with the reason (e.g. it cannot be parsed).
    pub async fn dead_letter(&self, lease: Lease, reason: &str) -> Result<(), MailboxError> {
        let client = self.client().await?;
        let moved: i32 = client
            .query_one(
                "SELECT mq.dead_letter($1, $2, $3)",
                &[&lease.message_id, &lease.token, &reason],
            )
            .await
            .map_err(|e| self.error("dead-lettering a message", &e))?
            .get(0);
        if moved == 0 {
            return Err(MailboxError::StaleLease {
                message_id: lease.message_id,
            });
        }
        Ok(())
    }

    /// Moves the dead letters of `mailbox` back to pending, attempts reset. Returns how many.
    pub async fn redrive(&self, mailbox: &str) -> Result<u64, MailboxError> {
        check_mailbox_name(mailbox)?;
        let client = self.client().await?;
        let moved: i64 = client
            .query_one("SELECT mq.redrive($1)", &[&mailbox])
            .await
            .map_err(|e| self.error(&format!("redriving the dead letters of {mailbox}"), &e))?
            .get(0);
        Ok(moved as u64)
    }

    /// Per mailbox: pending, leased, delayed, archived and dead counts, and the oldest pending age.
    pub async fn stats(&self) -> Result<Vec<MailboxStats>, MailboxError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT mailbox, pending, leased, delayed, archived, dead, oldest_pending_secs FROM mq.stats()",
                &[],
            )
            .await
            .map_err(|e| self.error("reading mailbox statistics", &e))?;
        Ok(rows
            .iter()
            .map(|r| MailboxStats {
                mailbox: r.get(0),
                pending: r.get(1),
                leased: r.get(2),
                delayed: r.get(3),
                archived: r.get(4),
                dead: r.get(5),
                oldest_pending_age_secs: r.get(6),
            })
            .collect())
    }

    /// Deletes archived (and, with `dead_letters`, dead) messages sent more than `older_than` ago
    /// that a wire audit has already scanned. Pending and leased messages are never purged.
    pub async fn purge(
        &self,
        older_than: Duration,
        dead_letters: bool,
    ) -> Result<PurgeReport, MailboxError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT deleted_archived, deleted_dead, kept_unaudited, kept_in_flight, kept_dead, audited_through,
                        kept_evidence
                   FROM mq.purge($1, $2)",
                &[&older_than.as_secs_f64(), &dead_letters],
            )
            .await
            .map_err(|e| self.error("purging old messages", &e))?;
        Ok(PurgeReport {
            deleted_archived: row.get(0),
            deleted_dead: row.get(1),
            kept_unaudited: row.get(2),
            kept_in_flight: row.get(3),
            kept_dead: row.get(4),
            audited_through: row.get(5),
            kept_evidence: row.get(6),
        })
    }

    /// How far the wire audit is: its watermark, how long the oldest unscanned message has
    /// waited, and the findings open and acknowledged.
    pub async fn audit_status(&self) -> Result<AuditStatus, MailboxError> {
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT scanned_through, oldest_unaudited_secs, open_findings, acked_findings
                   FROM mq.audit_status()",
                &[],
            )
            .await
            .map_err(|e| self.error("reading how far the audit is", &e))?;
        Ok(AuditStatus {
            scanned_through: row.get(0),
            oldest_unaudited_secs: row.get(1),
            open_findings: row.get(2),
            acked_findings: row.get(3),
        })
    }

    /// How many messages this session's role sent to `mailbox` that are still unacked: a
    /// producer refuses a request whose replies would take its requester over its quota.
    pub async fn pending_to(&self, mailbox: &str) -> Result<i64, MailboxError> {
        check_mailbox_name(mailbox)?;
        let rows = self
            .query_prepared(
                "SELECT mq.pending_to($1)",
                &[&mailbox],
                "counting the replies still pending",
            )
            .await?;
        Ok(rows.first().map_or(0, |r| r.get(0)))
    }

    /// The role that owns `mailbox` on this bus, if one was granted it.
    pub async fn owner(&self, mailbox: &str) -> Result<Option<String>, MailboxError> {
        check_mailbox_name(mailbox)?;
        let client = self.client().await?;
        let row = client
            .query_one("SELECT mq.mailbox_owner($1)::text", &[&mailbox])
            .await
            .map_err(|e| self.error("looking up a mailbox's owner", &e))?;
        Ok(row.try_get(0).unwrap_or(None))
    }

    /// Whether this session may claim from `mailbox`: its role was granted the mailbox, or the
    /// session is a superuser's (a bus with no grants). The same test `mq.claim` makes.
    pub async fn owns(&self, mailbox: &str) -> Result<bool, MailboxError> {
        check_mailbox_name(mailbox)?;
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT mq.mailbox_owner($1) = session_user \
                     OR coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r \
                                   WHERE r.rolname = session_user), false)",
                &[&mailbox],
            )
            .await
            .map_err(|e| self.error("looking up whether this role owns a mailbox", &e))?;
        Ok(row
            .try_get::<_, Option<bool>>(0)
            .ok()
            .flatten()
            .unwrap_or(false))
    }

    /// Gives `role` its part on this bus (`producer` or `consumer` with the mailbox it owns,
    /// `auditor`, `operator`): `mq.grant_participant`, run as the bus's owner.
    pub async fn grant(
        &self,
        role: &str,
        part: &str,
        mailbox: Option<&str>,
    ) -> Result<(), MailboxError> {
        if role.is_empty() || role.len() > 63 || role.chars().any(char::is_control) {
            return Err(MailboxError::BadRole(role.chars().take(64).collect()));
        }
        if let Some(mailbox) = mailbox {
            check_mailbox_name(mailbox)?;
        }
        let client = self.client().await?;
        client
            .execute(
                "SELECT mq.grant_participant($1::text::name, $2, $3)",
                &[&role, &part, &mailbox],
            )
            .await
            .map_err(|e| self.error(&format!("granting the {part} part"), &e))?;
        Ok(())
    }

    /// An id below which every message ever sent is committed or rolled back: the audit scans up
    /// to it and then records it with [`Mailbox::record_audit`].
    pub async fn audit_horizon(&self) -> Result<i64, MailboxError> {
        let client = self.client().await?;
        Ok(client
            .query_one("SELECT mq.audit_horizon()", &[])
            .await
            .map_err(|e| self.error("taking the audit horizon", &e))?
            .get(0))
    }

    /// Records that an audit has scanned every message with id up to `scanned_through`.
    pub async fn record_audit(&self, scanned_through: i64) -> Result<(), MailboxError> {
        let client = self.client().await?;
        client
            .execute("SELECT mq.record_audit($1)", &[&scanned_through])
            .await
            .map_err(|e| self.error("recording the audit watermark", &e))?;
        Ok(())
    }
}
