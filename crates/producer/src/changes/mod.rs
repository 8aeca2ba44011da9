//! The producer's change stream: a logical replication slot on the source, read without being
//! consumed, its row changes masked by the same masker as pages, and served in commit order.
//!
//! - The consumer starts the stream (a request without `after`): the slot and its publication
//!   are made, every policy table in it, and the consumer then copies the source with a snapshot
//!   taken after that. Transactions the copy's snapshot holds are passed over later, so the copy
//!   and the stream join without a gap or a double.
//! - Each later request names the position the consumer has committed. The slot moves up to it,
//!   and only then; a crash of anything before that reads the same changes again.
//! - A slot that is gone, or that has moved past what the consumer committed, means changes the
//!   consumer never got: the answer says so (`stream_lost`) and the consumer starts over.
//!
//! - An answer holds whole transactions, or, when a large one arrives first, that one alone, sent
//!   as it arrives and is masked ([`ChangeFeed::pipeline`]): the consumer applies it while the
//!   rest still comes, and commits with its last reply. Through a walsender a large transaction
//!   arrives while the source still writes it (pgoutput's streaming, [`walsender::Blocks`]), so
//!   the consumer applies it as it is written and commits once the source has; should the
//!   source roll it back, or another transaction commit before it, the answer is refused, the
//!   consumer rolls back, and the stream is read again without streaming past that point.
//!
//! `masking` masks each row change (deletes by their masked key, updates of a key as a delete and
//! an upsert); `parts` cuts them into replies; `txn` reads pgoutput's messages; `backlog` keeps
//! what a walsender sent until the consumer confirms it.

mod backlog;
mod masking;
mod reply_cut;
mod streaming_hold;
mod txn;

use backlog::{Backlog, Confirmed};
use masking::{Admit, Masking};
use reply_cut::Parts;
use streaming_hold::Hold;

pub use txn::{visible_in, Transaction};

use crate::reply::{ChangeReply, EarlyReplies, Reply};
use crate::source::{Refusal, Source};
use maskbus_pg::slot::{self, ChangeSlot, SlotChange};
use maskbus_pg::walsender::{self, SlotStream, Streamed};
use maskbus_pg::{Database, PgError, TableRef};
use maskbus_protocol::{ChangeOp, ErrorCode, Lsn, Position, Snapshot, MAX_PAGE_ROWS};
use std::sync::Arc;

/// How often a long poll asks whether the source may have committed something new, the least
/// wait between two looks at the slot.
const POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// The longest wait after a look at the slot before the next (the old fixed interval).
const LOOK_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// How long an idle answer waits at most for the WAL flush to pass what was written before
/// the question (three WAL writer delays at the default 200 ms, and room).
const FLUSH_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// A transaction first in line that holds this many messages (so far) is sent alone, as it
/// arrives and is masked ([`ChangeFeed::pipeline`]): more than one reply's worth of rows.
const PIPELINE_AT: usize = MAX_PAGE_ROWS as usize;

/// The longest wait for the next message of a transaction being sent: the walsender sends a
/// transaction without pause once its commit is decoded, so a silence this long means it is
/// gone.
const PIPELINE_GAP: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a consumer waits for a reply before it gives an answer up, when its request does
/// not say (its `request_timeout`): a source transaction sent while it is written
/// ([`SlotStream::writing`]) that would keep it waiting longer is unwound instead, to be sent
/// whole once it commits ([`Question::reply_due`]).
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(20);

/// Why a transaction being written was unwound for the consumer's patience.
const PAUSED: &str =
    "the source paused, or wrote too little to fill a reply, in a transaction sent while it was written";

/// The least patience a request is taken to have.
const PATIENCE_LEAST: std::time::Duration = std::time::Duration::from_secs(1);

/// The prefix of every slot maskbus makes: what `maskbus slot list` looks for.
pub const SLOT_PREFIX: &str = "maskbus_";

/// The producer's slot and the connection that reads it.
pub struct ChangeFeed {
    slot: ChangeSlot,
    source: Arc<Source>,
    client: tokio::sync::Mutex<Option<tokio_postgres::Client>>,
    /// When the source last refused a replication connection: the slot is read by SQL until
    /// [`WALSENDER_RETRY`] has passed, and the walsender is then tried again.
    refused: std::sync::Mutex<Refused>,
    /// The walsender, while a consumer follows (taken after `client`, never before).
    live: Arc<tokio::sync::Mutex<Option<Live>>>,
    /// Whether a walsender streams large transactions while they are written (the
    /// `stream_while_written` key).
    streaming: bool,
    /// What keeps the next walsender from streaming: transactions unwound
    /// ([`Streamed::Unwound`]) that a streaming walsender would send so again.
    hold: std::sync::Mutex<Hold>,
    /// The policy's tables the publication lacks, as last looked at, and when.
    unpublished: std::sync::Mutex<(Vec<String>, Option<tokio::time::Instant>)>,
    /// Held while the publication is compared with the policy (and altered).
    following: tokio::sync::Mutex<()>,
}

/// How often a change request looks whether the publication still covers the policy's tables
/// (an entity list always looks).
const PUBLICATION_LOOK: std::time::Duration = std::time::Duration::from_secs(1);

/// How long an `ALTER PUBLICATION ... ADD TABLE` waits for the transactions running when it
/// committed (their changes of the added table may not be published).
const ADD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// An open walsender and what it sent that the consumer has not confirmed.
struct Live {
    stream: SlotStream,
    backlog: Backlog,
    /// When an answer last read it.
    used: tokio::time::Instant,
    /// The stream failed: the next answer opens another.
    broken: bool,
}

/// How long a walsender no answer reads stays open. Short, because a server shutting down waits
/// for each walsender until its client has confirmed everything sent: with the consumer's
/// target on that server, or the consumer gone, only closing the connection lets the shutdown
/// finish (`scripts/check-restart` restarts the server mid-stream). A consumer that takes
/// longer than this between two requests gets a new walsender, which decodes again from the
/// slot's restart point.
const IDLE_CLOSE: std::time::Duration = std::time::Duration::from_secs(3);

/// How long the slot is read by SQL after the source refused a replication connection, before
/// the walsender is tried again (a pg_hba.conf line added while the producer runs is taken up).
const WALSENDER_RETRY: std::time::Duration = std::time::Duration::from_secs(300);

/// When the source last refused this producer a replication connection, if it did.
#[derive(Default)]
struct Refused(Option<tokio::time::Instant>);

impl Refused {
    fn at(&mut self, when: tokio::time::Instant) {
        self.0 = Some(when);
    }

    /// Whether a walsender may be tried at `now`.
    fn allows(&self, now: tokio::time::Instant) -> bool {
        self.0
            .is_none_or(|when| now.saturating_duration_since(when) >= WALSENDER_RETRY)
    }
}

/// A change request being answered.
struct Question<'a> {
    /// What the consumer has committed (the slot stands there).
    after: Lsn,
    /// The snapshot the consumer's copy was taken with: transactions it saw are passed over.
    join: Option<&'a Snapshot>,
    /// About this many rows at most.
    limit: u32,
    /// How long to wait for a change before an idle answer.
    wait: std::time::Duration,
    /// The source's WAL insert position when the question came: an idle answer stands past it.
    asked_at: Lsn,
    /// How long the consumer waits for a reply before it gives the answer up.
    patience: std::time::Duration,
    /// When the question reached the feed (before it waited for an answer in progress).
    arrived: tokio::time::Instant,
}

impl Question<'_> {
    /// When the next reply is due, the last having gone at `last` (if one has): the consumer's
    /// patience counts from its question for the first (a long poll's wait, at most half of
    /// it, may have passed before a transaction begins), and from its asking for the next
    /// after it applied a reply.
    fn reply_due(&self, last: Option<tokio::time::Instant>) -> tokio::time::Instant {
        match last {
            None => self.arrived + self.patience * 3 / 4,
            Some(last) => last + self.patience / 2,
        }
    }
}

/// How many messages one look reads for a budget of `limit` rows: passed-over transactions
/// count against it too.
fn peek_limit(limit: u32) -> i32 {
    (limit as i32).saturating_mul(2).saturating_add(64)
}

impl ChangeFeed {
    /// The feed of slot `name` (it must start with [`SLOT_PREFIX`]).
    pub fn new(name: &str, source: Arc<Source>) -> Result<Self, SlotError> {
        if !name.starts_with(SLOT_PREFIX) {
            return Err(SlotError::NotOurs(maskbus_model::shorten(name)));
        }
        let slot = ChangeSlot::new(name)?;
        if !walsender::one_server(source.database()) {
            tracing::info!(slot = name, "the source URL names several servers: the change stream reads its slot by SQL on the server the connection reached, not through a walsender");
        }
        Ok(Self {
            slot,
            source,
            client: tokio::sync::Mutex::new(None),
            refused: std::sync::Mutex::new(Refused::default()),
            live: Arc::new(tokio::sync::Mutex::new(None)),
            hold: std::sync::Mutex::new(Hold::default()),
            streaming: true,
            unpublished: std::sync::Mutex::new((Vec::new(), None)),
            following: tokio::sync::Mutex::new(()),
        })
    }

    /// The feed reads publication `name`, made by a DBA: the producer never creates, alters or
    /// drops it, and the policy's tables it lacks fail closed by name.
    pub fn with_publication(mut self, name: &str) -> Result<Self, SlotError> {
        self.slot = self.slot.with_publication(name)?;
        Ok(self)
    }

    /// The publication the stream reads.
    pub fn publication(&self) -> &str {
        self.slot.publication()
    }

    /// The policy's tables the publication lacked when last looked at (`schema.table`).
    pub fn unpublished(&self) -> Vec<String> {
        self.unpublished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0
            .clone()
    }

    /// Brings the publication to the policy's tables, on a connection of its own (before an
    /// entity list is answered: a copy the consumer makes after it has a snapshot taken after
    /// every table it names was published).
    pub async fn follow_policy(&self) -> Result<Vec<String>, Refusal> {
        let client = self.database().connect().await?;
        self.follow_policy_on(&client).await
    }

    /// Compares the publication with the policy's tables on the source: maskbus' own gets the
    /// tables it lacks added (those with a replica identity: a table without one would refuse
    /// every DELETE once published) and the tables the policy no longer names dropped; a DBA's
    /// is never altered. Returns the policy's tables it lacks after that (they fail closed by
    /// name), or nothing while there is no publication of maskbus' own yet (the stream's start
    /// makes it).
    async fn follow_policy_on(
        &self,
        client: &tokio_postgres::Client,
    ) -> Result<Vec<String>, Refusal> {
        let _one = self.following.lock().await;
        let policy: Vec<TableRef> = self
            .source
            .policy()
            .entities()
            .map(|(name, _)| TableRef::parse(name))
            .collect();
        let published = self.slot.published(self.database(), client).await?;
        let lacking: Vec<String> = match published {
            None if self.slot.manages_publication() => Vec::new(),
            None => {
                let names: Vec<String> = policy.iter().map(ToString::to_string).collect();
                self.say_unpublished(&names);
                return Ok(names);
            }
            Some(published) => {
                let existing = slot::existing(self.database(), client, &policy).await?;
                let missing: Vec<TableRef> = existing
                    .into_iter()
                    .filter(|t| !published.contains(t))
                    .collect();
                if self.slot.manages_publication() {
                    let unkeyed =
                        slot::without_replica_identity(self.database(), client, &missing).await?;
                    let add: Vec<TableRef> = missing
                        .iter()
                        .filter(|t| !unkeyed.contains(t))
                        .cloned()
                        .collect();
                    let remove: Vec<TableRef> = published
                        .iter()
                        .filter(|t| !policy.contains(t))
                        .cloned()
                        .collect();
                    if !add.is_empty() || !remove.is_empty() {
                        let names = |t: &[TableRef]| {
                            t.iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        };
                        let settled = match self
                            .slot
                            .alter(self.database(), client, &add, &remove, ADD_PATIENCE)
                            .await
                        {
                            Ok(settled) => settled,
                            // Not published (permission denied, say): those tables fail closed
                            // by name rather than copy once and never stream.
                            Err(refusal) => {
                                let mut lacking: Vec<String> =
                                    missing.iter().map(ToString::to_string).collect();
                                lacking.sort();
                                self.say_unpublished(&lacking);
                                return Err(refusal.into());
                            }
                        };
                        tracing::info!(publication = self.slot.publication(), added = %names(&add), dropped = %names(&remove), "the publication follows the policy's tables");
                        if !settled {
                            tracing::warn!(publication = self.slot.publication(), "transactions that were running when tables were added to the publication have not ended: their changes of those tables may reach the consumer only through `maskbus verify --repair`");
                        }
                    }
                    unkeyed.iter().map(ToString::to_string).collect()
                } else {
                    let names: Vec<String> = missing.iter().map(ToString::to_string).collect();
                    let had = self.unpublished();
                    if names.iter().any(|n| !had.contains(n))
                        || had.iter().any(|n| !names.contains(n))
                    {
                        // A table the DBA added: its copy's snapshot must see every change
                        // the stream does not carry.
                        if had.iter().any(|n| !names.contains(n))
                            && !slot::await_running(self.database(), client, ADD_PATIENCE).await?
                        {
                            tracing::warn!(publication = self.slot.publication(), "transactions that were running when tables were added to the publication have not ended");
                        }
                    }
                    names
                }
            }
        };
        self.say_unpublished(&lacking);
        Ok(lacking)
    }

    /// Records (and logs, when it changed) the policy's tables the publication lacks.
    fn say_unpublished(&self, names: &[String]) {
        let mut held = self
            .unpublished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.0 != names && !names.is_empty() {
            tracing::warn!(publication = self.slot.publication(), tables = %names.join(", "), "the publication lacks these tables of the policy: they fail closed in stream mode until it has them (ALTER PUBLICATION ... ADD TABLE, by its owner; a table without a replica identity is added once it has one: REPLICA IDENTITY FULL for a table without a key)");
        } else if held.0 != names {
            tracing::info!(
                publication = self.slot.publication(),
                "the publication holds every table of the policy"
            );
        }
        *held = (names.to_vec(), Some(tokio::time::Instant::now()));
    }

    /// The policy's tables the publication lacks, looked at again when the last look is older
    /// than [`PUBLICATION_LOOK`].
    async fn lacking(&self, client: &tokio_postgres::Client) -> Result<Vec<String>, Refusal> {
        let fresh = self
            .unpublished
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .1
            .is_some_and(|at| at.elapsed() < PUBLICATION_LOOK);
        if fresh {
            return Ok(self.unpublished());
        }
        self.follow_policy_on(client).await
    }

    /// Whether large transactions are streamed while they are written (on by default).
    pub fn streaming(mut self, on: bool) -> Self {
        self.streaming = on;
        self
    }

    pub fn slot_name(&self) -> &str {
        self.slot.name()
    }

    fn database(&self) -> &Database {
        self.source.database()
    }

    fn refusal(&self) -> std::sync::MutexGuard<'_, Refused> {
        // The guard is never held across an await or a panic-prone call: a poisoned lock
        // still holds a valid time.
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn hold(&self) -> std::sync::MutexGuard<'_, Hold> {
        // Never held across an await or a panic-prone call: a poisoned lock still holds a
        // valid state.
        self.hold
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Transactions sent while they were written (`xids`) were unwound at `at`: the walsender
    /// is closed by the answer, and the next ones read without streaming until they have ended
    /// and the consumer is past them ([`Hold`]).
    fn unwound(&self, live: &mut Live, at: Lsn, why: &'static str, xids: &[u32]) {
        live.broken = true;
        self.hold().unwound(xids);
        tracing::info!(slot = self.slot.name(), %at, why, "a transaction sent while it was written is read again once committed, without streaming");
    }

    fn walsender_allowed(&self) -> bool {
        walsender::one_server(self.database()) && self.refusal().allows(tokio::time::Instant::now())
    }

    /// Answers a change request: starts the stream without `after`, else serves what follows it.
    /// With `early`, a large source transaction goes to it as it is masked ([`Self::pipeline`]),
    /// and what is returned is the rest of the answer, numbered after what went early.
    /// `patience`: how long the consumer waits for a reply before it gives the answer up.
    pub async fn answer(
        &self,
        after: Option<Position>,
        join: Option<Snapshot>,
        limit: u32,
        wait: std::time::Duration,
        patience: Option<std::time::Duration>,
        mut early: Option<&mut EarlyReplies>,
    ) -> Vec<Reply> {
        let arrived = tokio::time::Instant::now();
        let mut guard = self.client.lock().await;
        let outcome = async {
            let client = match guard.take() {
                Some(client) => guard.insert(client),
                None => guard.insert(self.database().connect().await?),
            };
            match after {
                None => {
                    if let Some(live) = self.live.lock().await.take() {
                        live.stream.close().await;
                    }
                    self.start(client).await
                }
                Some(after) => {
                    let mut live = self.live.lock().await;
                    self.confirm(client, &mut live, after.0).await?;
                    // A look that fails keeps what the last one found: the stream goes on.
                    let lacking = match self.lacking(client).await {
                        Ok(lacking) => lacking,
                        Err(refusal) => {
                            tracing::warn!(%refusal, "could not compare the stream's publication with the policy's tables");
                            self.unpublished()
                        }
                    };
                    let answered = self
                        .answer_after(
                            client,
                            &mut live,
                            after,
                            join,
                            limit,
                            wait,
                            patience,
                            arrived,
                            early.as_deref_mut(),
                        )
                        .await;
                    answered.map(|mut replies| {
                        for reply in &mut replies {
                            reply.unpublished.clone_from(&lacking);
                        }
                        replies
                    })
                }
            }
        }
        .await;
        match outcome {
            Ok(replies) => replies.into_iter().map(Reply::Changes).collect(),
            Err(refusal) => {
                if refusal.code() == ErrorCode::Unavailable {
                    // The connection may be what failed: the next request opens a new one.
                    *guard = None;
                }
                let sent = early.map_or(0, |early| early.sent());
                vec![refusal.into_reply().after_early(sent)]
            }
        }
    }

    /// The answer to a change request after `after`, confirmed already.
    #[allow(clippy::too_many_arguments)]
    async fn answer_after(
        &self,
        client: &tokio_postgres::Client,
        live: &mut Option<Live>,
        after: Position,
        join: Option<Snapshot>,
        limit: u32,
        wait: std::time::Duration,
        patience: Option<std::time::Duration>,
        arrived: tokio::time::Instant,
        early: Option<&mut EarlyReplies>,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        {
            // Every transaction committed before this request is in the WAL before
            // this position; decoding reads only what is flushed, which lags it on a
            // source with `synchronous_commit = off` (by up to three WAL writer
            // delays). An idle answer is only given once the stream stands past it, so
            // "caught up" covers every commit made before the question.
            let first = self.slot.horizon(self.database(), client).await?;
            let asked_at = first.inserted();
            let question = Question {
                after: after.0,
                join: join.as_ref(),
                limit,
                wait,
                asked_at,
                patience: patience.map_or(PATIENCE, |p| p.max(PATIENCE_LEAST)),
                arrived,
            };
            let streaming = self.streaming
                && self
                    .hold()
                    .streams(after.0, |xid| first.running(xid), asked_at);
            // A walsender opened without streaming after an unwind gives way, once the
            // unwound transactions have ended and the consumer is past them, to one
            // that streams (started after what the consumer confirmed, as any).
            if streaming && live.as_ref().is_some_and(|open| !open.stream.streams()) {
                if let Some(plain) = live.take() {
                    plain.stream.close().await;
                }
            }
            if live.is_none() && self.walsender_allowed() {
                match SlotStream::open(self.database(), &self.slot, after.0, streaming).await {
                    Ok(stream) => {
                        *live = Some(Live {
                            stream,
                            backlog: Backlog::new(after.0),
                            used: tokio::time::Instant::now(),
                            broken: false,
                        })
                    }
                    Err(e) if walsender::not_permitted(&e) => {
                        tracing::warn!(slot = self.slot.name(), refused = %e, retry_s = WALSENDER_RETRY.as_secs(), "the source takes no replication connection from this role: the change stream reads the slot by SQL, which decodes its WAL again at every look, and tries the walsender again later (allow `replication` for the role in pg_hba.conf to stream it)");
                        self.refusal().at(tokio::time::Instant::now());
                    }
                    Err(e) if walsender::none_free(&e) => {
                        tracing::warn!(slot = self.slot.name(), "every walsender the source allows is taken (max_wal_senders): this answer reads the slot by SQL");
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            let Some(open) = live.as_mut() else {
                return self.peek_poll(client, first, &question).await;
            };
            let streamed = self.stream_poll(open, &question, early).await;
            if open.broken {
                // The next answer starts the stream again from what the consumer has
                // confirmed.
                if let Some(broken) = live.take() {
                    broken.stream.close().await;
                }
            } else {
                // A refusal of the changes themselves (a policy that refuses a row)
                // keeps the stream and its backlog.
                open.used = tokio::time::Instant::now();
                self.close_when_idle();
            }
            streamed
        }
    }

    /// A long poll on a walsender: each transaction arrives once, as its commit is decoded,
    /// and is kept until the consumer confirms it. The answer goes as soon as whole
    /// transactions are at hand and nothing more is (or about `limit` rows are); an idle answer
    /// at `wait`, once the walsender has said it decoded past the question.
    async fn stream_poll(
        &self,
        live: &mut Live,
        question: &Question<'_>,
        mut early: Option<&mut EarlyReplies>,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        let budget = peek_limit(question.limit) as usize;
        let started = tokio::time::Instant::now();
        let deadline = started + question.wait;
        let grace = started + FLUSH_GRACE;
        let mut keepalives = 0usize;
        // When the first change of this answer came: what follows is the walsender sending it.
        let mut first: Option<tokio::time::Instant> = None;
        // When the last message (not a keepalive) came.
        let mut last_data = started;
        let mut unwound = false;
        loop {
            let now = tokio::time::Instant::now();
            let whole = live.backlog.whole();
            // A transaction still arriving, being written: nothing of it for half the
            // consumer's patience, or no reply by the time the first is due (without a
            // pipeline), and it is sent whole once committed (keepalives come while the writer
            // idles: they do not count).
            let writing = live
                .stream
                .writing()
                .filter(|_| live.backlog.held() > whole);
            let pause_at = (last_data + question.patience / 2).min(question.reply_due(None));
            if let Some(xid) = writing.filter(|_| now >= pause_at) {
                self.unwound(live, live.stream.read_to(), PAUSED, &[xid]);
                unwound = true;
                break;
            }
            // A large transaction first (or one being written, which is large): masked and
            // sent as it arrives (or as it is held), so the consumer applies it while the rest
            // is still coming.
            if early.is_some()
                && (live.backlog.first_len() >= PIPELINE_AT || (whole == 0 && writing.is_some()))
            {
                let passed_over = live
                    .backlog
                    .first_xid()
                    .is_some_and(|xid| question.join.is_some_and(|s| visible_in(xid, s)));
                if let (Some(early), false) = (early.as_deref_mut(), passed_over) {
                    return self.pipeline(live, question, early).await;
                }
            }
            if whole >= budget {
                break;
            }
            // A large transaction arriving behind whole ones is read no further: they go now,
            // and it goes as it arrives in an answer of its own, kept by none.
            if early.is_some() && whole > 0 && live.backlog.held() - whole >= PIPELINE_AT {
                break;
            }
            // A transaction arriving (its commit decoded, the walsender still sending it) is
            // waited for, even past the deadline: it comes without pause.
            let arriving = live.backlog.held() > whole;
            // Idle at the deadline: the answer goes once the walsender stands past the
            // question, or after the grace.
            if whole == 0
                && !arriving
                && now >= deadline
                && (live.backlog.stands_at() >= question.asked_at || now >= grace)
            {
                break;
            }
            let timeout = if whole > 0 {
                std::time::Duration::ZERO
            } else if writing.is_some() {
                pause_at.saturating_duration_since(now)
            } else if arriving {
                PIPELINE_GAP
            } else if now < deadline {
                deadline - now
            } else {
                grace.saturating_duration_since(now)
            };
            match live.stream.next(timeout).await {
                Err(e) => {
                    live.broken = true;
                    return Err(e.into());
                }
                Ok(Some(Streamed::Unwound { at, why, xids })) => {
                    // Whole transactions held go; the one being written is sent again.
                    self.unwound(live, at, why, &xids);
                    unwound = true;
                    break;
                }
                Ok(Some(streamed)) => {
                    let keepalive = matches!(streamed, Streamed::StandsAt(_));
                    keepalives += usize::from(keepalive);
                    if !keepalive {
                        last_data = tokio::time::Instant::now();
                        first.get_or_insert(last_data);
                    }
                    live.backlog.push(streamed);
                }
                // Nothing more at hand: whole transactions go now; else the checks above. A
                // transaction that stopped arriving means the walsender is gone.
                Ok(None) => {
                    if live.backlog.whole() > 0 {
                        break;
                    }
                    // A writer's pause: the check above.
                    if arriving && writing.is_none() {
                        live.broken = true;
                        return Err(Refusal::new(
                            ErrorCode::Unavailable,
                            "the walsender stopped sending a transaction it had begun",
                        ));
                    }
                }
            }
        }
        // With a pipeline at hand, a large transaction after the first waits for the next
        // answer, which sends it as it is masked.
        let large = if early.is_some() {
            PIPELINE_AT
        } else {
            usize::MAX
        };
        let (messages, whole) = live.backlog.served(budget, large);
        // A transaction still arriving (committed, or being written) is more to come: the
        // consumer asks again at once and is not told it has caught up.
        let whole = whole && !unwound && live.backlog.held() == live.backlog.whole();
        tracing::debug!(
            read_ms = started.elapsed().as_millis() as u64,
            receive_ms = first.map_or(0, |f| f.elapsed().as_millis() as u64),
            messages = messages.len(),
            keepalives,
            "changes streamed"
        );
        let stands_at = live.backlog.stands_at();
        self.serve(messages, whole, stands_at, question).await
    }

    /// Serves the transaction arriving first, alone, as it arrives: each reply goes to `early`
    /// as soon as it is cut and the next has begun, and the last ones, with the commit, are
    /// returned. Its messages are let go of as they are masked ([`Backlog::take_first`]). With
    /// streaming it may still be being written: should it roll back, or be overtaken by another
    /// commit, the answer is refused and the consumer rolls back what it applied. Should the
    /// answer stop before the commit (a table's columns changed, a refusal, the walsender gone),
    /// its last reply says so and the consumer, which applies the replies in one target
    /// transaction, rolls all of it back. One being written that would keep the consumer
    /// waiting for a reply past its patience is unwound.
    async fn pipeline(
        &self,
        live: &mut Live,
        question: &Question<'_>,
        early: &mut EarlyReplies,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        let started = tokio::time::Instant::now();
        let again = || {
            Refusal::new(
                ErrorCode::Unavailable,
                "the source transaction sent while it was written is sent again once committed",
            )
        };
        // When the last reply went to the consumer.
        let mut last_sent: Option<tokio::time::Instant> = None;
        let malformed = |reason: String| Refusal::new(ErrorCode::SourceFailed, reason);
        let mut decoder = txn::Decoder::default();
        for described in live.backlog.described() {
            decoder.push(described.message.clone()).map_err(malformed)?;
        }
        // Each message is let go of as it is masked: the producer's memory does not grow with
        // the transaction (a consumer that does not commit it gets it from a new walsender).
        let mut masking = Masking::new(&self.source);
        let mut parts = Parts::default();
        let mut rows = 0usize;
        loop {
            while let Some(change) = live.backlog.take_first() {
                let change = match decoder.push(change.message).map_err(malformed)? {
                    txn::Decoded::Change(change) => change,
                    txn::Decoded::Commit { end } => {
                        parts.commit(end);
                        // More is held already: the consumer asks again at once.
                        let more = live.backlog.held() > 0;
                        tracing::debug!(
                            pipeline_ms = started.elapsed().as_millis() as u64,
                            rows,
                            early = early.sent(),
                            "changes masked as they arrived"
                        );
                        return Ok(with_closed(parts.finish(end, more), masking.closed()));
                    }
                    txn::Decoded::Begin { xid } => {
                        parts.begin(xid);
                        continue;
                    }
                    txn::Decoded::Nothing => continue,
                };
                match masking.admit(&change).await? {
                    Admit::Mask => rows += masking.mask(&change, &mut parts).await?,
                    Admit::Closed => {}
                    Admit::Changed(entity) => {
                        // Nothing of this transaction is applied: the consumer applies the
                        // schema first, then asks again from where it stands.
                        tracing::info!(%entity, "a table's columns changed in the stream: the consumer applies the schema before its changes");
                        parts.abandon();
                        let mut out = parts.finish(question.after, true);
                        if let Some(last) = out.last_mut() {
                            last.schema_changed = true;
                        }
                        return Ok(with_closed(out, masking.closed()));
                    }
                }
                // A reply goes as soon as it is cut: the consumer applies it while this one
                // masks the rest (a row read again from the source may take a while).
                for reply in parts.take_ready(question.after) {
                    if !early.send(reply).await {
                        return Err(Refusal::new(
                            ErrorCode::Unavailable,
                            "the bus took no more of this answer",
                        ));
                    }
                    last_sent = Some(tokio::time::Instant::now());
                }
            }
            // Being written: the next reply is due within the consumer's patience, or the
            // transaction is sent whole once committed (keepalives, which come while the
            // writer idles, do not count).
            let now = tokio::time::Instant::now();
            let timeout = match live.stream.writing() {
                Some(xid) => {
                    let due = question.reply_due(last_sent);
                    if now >= due {
                        let at = live.stream.read_to();
                        self.unwound(live, at, PAUSED, &[xid]);
                        return Err(again());
                    }
                    due - now
                }
                None => PIPELINE_GAP,
            };
            match live.stream.next(timeout).await {
                Ok(Some(Streamed::Unwound { at, why, xids })) => {
                    // The consumer rolls back what it applied of it, and asks again.
                    self.unwound(live, at, why, &xids);
                    return Err(again());
                }
                Ok(Some(streamed)) => live.backlog.push(streamed),
                // The writer's pause: the check above.
                Ok(None) if live.stream.writing().is_some() => {}
                Ok(None) => {
                    live.broken = true;
                    return Err(Refusal::new(
                        ErrorCode::Unavailable,
                        "the walsender stopped sending a transaction it had begun",
                    ));
                }
                Err(e) => {
                    live.broken = true;
                    return Err(e.into());
                }
            }
        }
    }

    /// A long poll by SQL: with nothing to send, look at the slot again until `wait` is up.
    async fn peek_poll(
        &self,
        client: &tokio_postgres::Client,
        first: slot::Horizon,
        question: &Question<'_>,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        // A look decodes the WAL from the slot's restart point, which stays behind what was
        // confirmed until the server logs its running transactions (every 15 s at most), and a
        // look while a big transaction is being written decodes all of it so far, for nothing,
        // slowing the writer (twice as slow here). So a look only happens when it may find a
        // commit the last one did not (`Horizon::may_differ`), and the wait after a look is as
        // long as the look took, up to `LOOK_PAUSE`. (A look's time is not all decoding: a peek
        // whose end falls inside a record waits for the WAL writer.)
        let started = tokio::time::Instant::now();
        let deadline = started + question.wait;
        let mut looked: Option<slot::Horizon> = None;
        let mut next = Some(first);
        let mut replies = Vec::new();
        loop {
            let horizon = match next.take() {
                Some(horizon) => horizon,
                None => self.slot.horizon(self.database(), client).await?,
            };
            let mut pause = POLL;
            if looked.as_ref().is_none_or(|l| horizon.may_differ(l)) {
                let look = tokio::time::Instant::now();
                replies = self.follow(client, horizon.flushed(), question).await?;
                looked = Some(horizon);
                pause = look.elapsed().clamp(POLL, LOOK_PAUSE);
            }
            let idle = replies.iter().all(|r| r.op == ChangeOp::None);
            let flushed_past = replies
                .last()
                .is_some_and(|r| r.through.0 >= question.asked_at);
            let now = tokio::time::Instant::now();
            let flush_awaited = flushed_past || now >= started + FLUSH_GRACE;
            if !idle || (now >= deadline && flush_awaited) {
                return Ok(replies);
            }
            tokio::time::sleep(pause.min(deadline.saturating_duration_since(now).max(POLL))).await;
        }
    }

    /// Makes the slot (again, if a consumer starts over) and its publication on every policy
    /// table; answers with the position the stream starts from.
    async fn start(&self, client: &tokio_postgres::Client) -> Result<Vec<ChangeReply>, Refusal> {
        let tables: Vec<TableRef> = self
            .source
            .policy()
            .entities()
            .map(|(name, _)| TableRef::parse(name))
            .collect();
        // A table without a usable key is followed as a multiset, by its whole old rows
        // (`REPLICA IDENTITY FULL`: see `masking`). One without (the default identity has none
        // without a primary key) is left out of the publication, which would make its deletes
        // fail on the source: it fails closed by name on the consumer (the publication lacks
        // it), and the other tables stream. It is added once it has REPLICA IDENTITY FULL
        // ([`ChangeFeed::follow_policy_on`]).
        let mut keyless = Vec::new();
        for table in &tables {
            if let Ok(shape) = self.source.shape(&table.to_string()).await {
                if shape.key.is_keyless() {
                    keyless.push(table.clone());
                }
            }
        }
        let mut left_out = Vec::new();
        for table in &keyless {
            let lacking = slot::without_replica_identity(
                self.database(),
                client,
                std::slice::from_ref(table),
            )
            .await?;
            if !lacking.is_empty() {
                left_out.push(table.clone());
            }
        }
        if !left_out.is_empty() {
            let names: Vec<String> = left_out.iter().map(ToString::to_string).collect();
            tracing::warn!(tables = %names.join(", "), "these tables have no primary key or unique NOT NULL key and no REPLICA IDENTITY FULL: the change stream cannot carry their updates and deletes, so they are left out of it and fail closed by name; give each REPLICA IDENTITY FULL (ALTER TABLE ... REPLICA IDENTITY FULL), name key columns in the policy's [maskbus.keys], or sync in watermark mode");
        }
        let keyed: Vec<TableRef> = tables
            .iter()
            .filter(|t| !keyless.contains(t))
            .cloned()
            .collect();
        let unkeyed = slot::without_replica_identity(self.database(), client, &keyed).await?;
        if !unkeyed.is_empty() {
            let names: Vec<String> = unkeyed.iter().map(ToString::to_string).collect();
            let mut refusal = Refusal::new(
                ErrorCode::NoReplicaIdentity,
                format!("no replica identity on {}", names.join(", ")),
            );
            for name in &names {
                refusal = refusal.on(name);
            }
            return Err(refusal);
        }
        let tables: Vec<TableRef> = tables
            .into_iter()
            .filter(|t| !left_out.contains(t))
            .collect();
        if tables.is_empty() && !left_out.is_empty() {
            // Nothing left to stream.
            let names: Vec<String> = left_out.iter().map(ToString::to_string).collect();
            let mut refusal = Refusal::new(
                ErrorCode::NoReplicaIdentity,
                format!(
                    "no primary key or unique NOT NULL key, and no REPLICA IDENTITY FULL, on {}",
                    names.join(", ")
                ),
            );
            for name in &names {
                refusal = refusal.on(name);
            }
            return Err(refusal);
        }
        self.slot.drop(self.database(), client).await?;
        let start = self.slot.create(self.database(), client, &tables).await?;
        tracing::info!(slot = self.slot.name(), %start, "change stream started");
        Ok(vec![ChangeReply::standing_at(Position(start), false, true)])
    }

    /// Moves the slot to `after`, what the consumer has committed; `stream_lost` when the slot is
    /// gone or already past it.
    async fn confirm(
        &self,
        client: &tokio_postgres::Client,
        live: &mut Option<Live>,
        after: Lsn,
    ) -> Result<(), Refusal> {
        let lost = |why: String| {
            Refusal::new(ErrorCode::StreamLost,
                format!("{why}: changes after {after} may be missing; the consumer starts the stream again"),
            )
        };
        match self.slot.position(self.database(), client).await? {
            None => {
                return Err(lost(format!(
                    "replication slot {} is gone",
                    self.slot.name()
                )))
            }
            Some(position) if position > after => {
                return Err(lost(format!(
                    "replication slot {} has moved on to {position}",
                    self.slot.name()
                )))
            }
            Some(_) => {}
        }
        if let Some(open) = live.as_mut() {
            match open.backlog.confirm(after) {
                Confirmed::Serves => {
                    open.stream.acknowledge(after);
                    return Ok(());
                }
                Confirmed::Behind => {
                    // The consumer went back before a position it confirmed (a target
                    // restored, another consumer): the slot has been told to move past it, so
                    // the changes between are gone.
                    let from = open.backlog.from();
                    if let Some(behind) = live.take() {
                        behind.stream.close().await;
                    }
                    return Err(lost(format!(
                        "replication slot {} was confirmed to {from}",
                        self.slot.name()
                    )));
                }
                Confirmed::LetGo => {
                    // A large transaction served as it arrived was not committed by the
                    // consumer (killed, cut off, a migration met in it): it is not kept, and a
                    // new walsender started from `after` sends it again.
                    tracing::debug!(%after, "a large transaction not committed by the consumer is read again");
                    if let Some(let_go) = live.take() {
                        let_go.stream.close().await;
                    }
                }
            }
        }
        self.slot.advance(self.database(), client, after).await?;
        Ok(())
    }

    /// Closes the walsender once no answer has used it for [`IDLE_CLOSE`]: a slot read by no one
    /// can be dropped (`maskbus slot drop`), and a consumer gone keeps no session open.
    fn close_when_idle(&self) {
        let live = Arc::clone(&self.live);
        tokio::spawn(async move {
            tokio::time::sleep(IDLE_CLOSE).await;
            let mut guard = live.lock().await;
            if guard
                .as_ref()
                .is_some_and(|open| open.used.elapsed() >= IDLE_CLOSE)
            {
                if let Some(idle) = guard.take() {
                    idle.stream.close().await;
                    tracing::debug!("the change stream's walsender closed: no request for a while");
                }
            }
        });
    }

    /// One look at the slot by SQL, the WAL flushed up to `flushed` at least.
    async fn follow(
        &self,
        client: &tokio_postgres::Client,
        flushed: Lsn,
        question: &Question<'_>,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        let peek_limit = peek_limit(question.limit);
        let started = std::time::Instant::now();
        let peeked = self.slot.peek(self.database(), client, peek_limit).await?;
        tracing::debug!(
            peek_ms = started.elapsed().as_millis() as u64,
            "slot peeked"
        );
        let whole = (peeked.len() as i32) < peek_limit;
        self.serve(peeked, whole, flushed, question).await
    }

    /// The masked changes of `peeked` (whole transactions, in commit order) after
    /// `question.after` (confirmed already), about `limit` rows at most. `whole`: `peeked` holds
    /// every transaction that committed before `stands_at`, so an answer that serves them all
    /// stands there.
    async fn serve(
        &self,
        peeked: Vec<SlotChange>,
        whole: bool,
        stands_at: Lsn,
        question: &Question<'_>,
    ) -> Result<Vec<ChangeReply>, Refusal> {
        let (after, join, limit) = (question.after, question.join, question.limit);
        let started = std::time::Instant::now();
        let transactions = txn::transactions(peeked)
            .map_err(|reason| Refusal::new(ErrorCode::SourceFailed, reason))?;
        let mut through = after;
        let mut masking = Masking::new(&self.source);
        let mut parts = Parts::default();
        let mut rows = 0usize;
        let mut cut = false;
        for transaction in transactions {
            if rows >= limit as usize {
                cut = true;
                break;
            }
            if transaction.end <= after {
                continue;
            }
            if join.is_some_and(|s| visible_in(transaction.xid, s)) {
                through = transaction.end;
                continue;
            }
            // A table that fails closed (a column without a rule) is left out of the stream; the
            // consumer copies it again once it follows. A transaction after a migration on one
            // of its tables (the stream describes other columns than the table had, and the
            // catalog, read again, has them): nothing of it or after it goes out until the
            // consumer has the new schema. A change older than its table's columns closes it.
            if let Some(entity) = masking.changed(&transaction.changes).await? {
                tracing::info!(%entity, "a table's columns changed in the stream: the consumer applies the schema before its changes");
                let mut out = parts.finish(through, true);
                if let Some(last) = out.last_mut() {
                    last.schema_changed = true;
                }
                return Ok(with_closed(out, masking.closed()));
            }
            through = transaction.end;
            parts.begin(transaction.xid);
            for change in &transaction.changes {
                rows += masking.mask(change, &mut parts).await?;
            }
            parts.commit(transaction.end);
        }
        tracing::debug!(
            mask_ms = started.elapsed().as_millis() as u64,
            rows,
            "changes masked"
        );
        if whole && !cut {
            // Everything committed before `stands_at` was read: the stream stands there, so the
            // slot lets go of the WAL before it (the source's other traffic too), and the next
            // look decodes from there on.
            through = through.max(stands_at);
        }
        Ok(with_closed(
            parts.finish(through, cut || !whole),
            masking.closed(),
        ))
    }
}

/// A maskbus slot on the source, as `maskbus slot list` and the producer's start report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotReport {
    pub name: String,
    pub database: String,
    /// The WAL the slot keeps on the source, in bytes.
    pub retained_bytes: i64,
    /// The slot this producer's config names.
    pub own: bool,
}

impl SlotReport {
    /// A slot no running producer of this config reads: it keeps WAL on production until it is
    /// dropped. (Another producer's config may name it; `maskbus slot drop` only when not.)
    pub fn abandoned(&self) -> bool {
        !self.own
    }
}

/// Own slot keeping more WAL than this: its consumer is far behind, or gone.
pub const SLOT_LAG_WARNING_BYTES: i64 = 1 << 30;

/// Every maskbus slot on the source, `own` marking the one named `own_slot`.
pub async fn slot_report(
    source: &Database,
    own_slot: Option<&str>,
) -> Result<Vec<SlotReport>, maskbus_pg::PgError> {
    let client = source.connect().await?;
    Ok(slot::slots(source, &client, SLOT_PREFIX)
        .await?
        .into_iter()
        .map(|s| SlotReport {
            own: own_slot == Some(s.name.as_str()),
            name: s.name,
            database: s.database,
            retained_bytes: s.retained_bytes,
        })
        .collect())
}

/// Logs each slot: an error for one this producer does not read, a warning for its own when it
/// keeps much WAL.
pub fn log_slot_report(report: &[SlotReport]) {
    for slot in report {
        let megabytes = slot.retained_bytes / (1 << 20);
        if slot.abandoned() {
            tracing::error!(slot = %slot.name, database = %slot.database, retained_mb = megabytes, "replication slot not read by this producer keeps WAL on the source; if no other producer names it, drop it: maskbus slot drop {} --config <producer config>", slot.name);
        } else if slot.retained_bytes > SLOT_LAG_WARNING_BYTES {
            tracing::warn!(slot = %slot.name, retained_mb = megabytes, "this producer's slot keeps much WAL on the source: is its consumer running?");
        }
    }
}

/// Why a slot cannot be named, followed or dropped.
#[derive(Debug, thiserror::Error)]
pub enum SlotError {
    #[error(transparent)]
    Name(#[from] maskbus_pg::slot::SlotNameError),
    #[error("slot {0:?} is not a maskbus slot: maskbus' slots are named {SLOT_PREFIX}..., so `maskbus slot list` finds every one")]
    NotOurs(String),
    #[error(transparent)]
    Pg(#[from] PgError),
}

/// Drops the maskbus slot `name` and its publication.
pub async fn drop_slot(source: &Database, name: &str) -> Result<bool, SlotError> {
    if !name.starts_with(SLOT_PREFIX) {
        return Err(SlotError::NotOurs(maskbus_model::shorten(name)));
    }
    let slot = ChangeSlot::new(name)?;
    let client = source.connect().await?;
    let existed = slot.position(source, &client).await?.is_some();
    slot.drop(source, &client).await?;
    Ok(existed)
}

/// `out` with the tables left out named on every part.
fn with_closed(
    mut out: Vec<ChangeReply>,
    closed: &std::collections::BTreeSet<String>,
) -> Vec<ChangeReply> {
    for reply in &mut out {
        reply.closed = closed.iter().cloned().collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_walsender_is_tried_again_once_the_retry_has_passed() {
        let start = tokio::time::Instant::now();
        let mut refused = Refused::default();
        assert!(refused.allows(start), "never refused: tried");
        refused.at(start);
        assert!(!refused.allows(start));
        assert!(!refused.allows(start + WALSENDER_RETRY - std::time::Duration::from_millis(1)));
        assert!(refused.allows(start + WALSENDER_RETRY));
        // A clock read before the refusal was noted does not wrap around into "long ago".
        refused.at(start + WALSENDER_RETRY);
        assert!(!refused.allows(start));
    }
}
