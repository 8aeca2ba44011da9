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
//! Deletes carry the key columns only, masked like the rest (a key's rule is `keep` or a
//! bijective pseudonym, checked when the entity is first read: the consumer deletes the same
//! masked key it stored). An update of a key is a delete of the old key and an upsert of the
//! new row. A row whose change left a TOASTed value out is read from the source by its key.

mod backlog;
mod txn;

use backlog::Backlog;

pub use txn::{visible_in, Transaction};

use crate::page_cut::row_json_len;
use crate::reply::{ChangeReply, Reply};
use crate::source::{Refusal, Shape, Source};
use maskbus_mask::MaskedRow;
use maskbus_pg::slot::{self, ChangeSlot, SlotChange};
use maskbus_pg::walsender::{self, SlotStream, Streamed};
use maskbus_pg::{PgError, TableRef, Target};
use maskbus_protocol::{
    ChangeOp, ErrorCode, Lsn, Position, Snapshot, MAX_PAGE_BYTES, MAX_PAGE_ROWS, VERSION,
};
use std::collections::HashMap;
use std::sync::Arc;
use txn::{cells_of, has_unchanged, RowChange};

/// How often a long poll asks whether the source may have committed something new, the least
/// wait between two looks at the slot.
const POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// The longest wait after a look at the slot before the next (the old fixed interval).
const LOOK_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// How long an idle answer waits at most for the WAL flush to pass what was written before
/// the question (three WAL writer delays at the default 200 ms, and room).
const FLUSH_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

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
}

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
}

/// How many messages one look reads for a budget of `limit` rows: passed-over transactions
/// count against it too.
fn peek_limit(limit: u32) -> i32 {
    (limit as i32).saturating_mul(2).saturating_add(64)
}

/// One set of changes: one entity, one operation, consecutive in its transaction.
struct ChangeSet {
    entity: String,
    op: ChangeOp,
    key: Vec<String>,
    columns: Vec<String>,
    rows: Vec<MaskedRow>,
}

impl ChangeFeed {
    /// The feed of slot `name` (it must start with [`SLOT_PREFIX`]).
    pub fn new(name: &str, source: Arc<Source>) -> Result<Self, SlotError> {
        if !name.starts_with(SLOT_PREFIX) {
            return Err(SlotError::NotOurs(maskbus_model::shorten(name)));
        }
        let slot = ChangeSlot::new(name)?;
        if !walsender::one_server(source.target()) {
            tracing::info!(slot = name, "the source URL names several servers: the change stream reads its slot by SQL on the server the connection reached, not through a walsender");
        }
        Ok(Self {
            slot,
            source,
            client: tokio::sync::Mutex::new(None),
            refused: std::sync::Mutex::new(Refused::default()),
            live: Arc::new(tokio::sync::Mutex::new(None)),
        })
    }

    pub fn slot_name(&self) -> &str {
        self.slot.name()
    }

    fn target(&self) -> &Target {
        self.source.target()
    }

    fn refusal(&self) -> std::sync::MutexGuard<'_, Refused> {
        // The guard is never held across an await or a panic-prone call: a poisoned lock
        // still holds a valid time.
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn walsender_allowed(&self) -> bool {
        walsender::one_server(self.target()) && self.refusal().allows(tokio::time::Instant::now())
    }

    /// Answers a change request: starts the stream without `after`, else serves what follows it.
    pub async fn answer(
        &self,
        after: Option<Position>,
        join: Option<Snapshot>,
        limit: u32,
        wait: std::time::Duration,
    ) -> Vec<Reply> {
        let mut guard = self.client.lock().await;
        let outcome = async {
            let client = match guard.take() {
                Some(client) => guard.insert(client),
                None => guard.insert(self.target().connect().await?),
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
                    // Every transaction committed before this request is in the WAL before
                    // this position; decoding reads only what is flushed, which lags it on a
                    // source with `synchronous_commit = off` (by up to three WAL writer
                    // delays). An idle answer is only given once the stream stands past it, so
                    // "caught up" covers every commit made before the question.
                    let first = self.slot.horizon(self.target(), client).await?;
                    let asked_at = first.inserted();
                    let question = Question {
                        after: after.0,
                        join: join.as_ref(),
                        limit,
                        wait,
                        asked_at,
                    };
                    if live.is_none() && self.walsender_allowed() {
                        match SlotStream::open(self.target(), &self.slot, after.0).await {
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
                    let streamed = self.stream_poll(open, &question).await;
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
        }
        .await;
        match outcome {
            Ok(replies) => replies.into_iter().map(Reply::Changes).collect(),
            Err(refusal) => {
                if refusal.code() == ErrorCode::Unavailable {
                    // The connection may be what failed: the next request opens a new one.
                    *guard = None;
                }
                vec![refusal.into_reply()]
            }
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
    ) -> Result<Vec<ChangeReply>, Refusal> {
        let budget = peek_limit(question.limit) as usize;
        let started = tokio::time::Instant::now();
        let deadline = started + question.wait;
        let grace = started + FLUSH_GRACE;
        let mut keepalives = 0usize;
        // When the first change of this answer came: what follows is the walsender sending it.
        let mut first: Option<tokio::time::Instant> = None;
        loop {
            let now = tokio::time::Instant::now();
            let whole = live.backlog.whole();
            if whole >= budget {
                break;
            }
            // Idle at the deadline: the answer goes once the walsender stands past the
            // question, or after the grace.
            if whole == 0
                && now >= deadline
                && (live.backlog.stands_at() >= question.asked_at || now >= grace)
            {
                break;
            }
            let timeout = if whole > 0 {
                std::time::Duration::ZERO
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
                Ok(Some(streamed)) => {
                    let keepalive = matches!(streamed, Streamed::StandsAt(_));
                    keepalives += usize::from(keepalive);
                    if !keepalive && first.is_none() {
                        first = Some(tokio::time::Instant::now());
                    }
                    live.backlog.push(streamed);
                }
                // Nothing more at hand: whole transactions go now; else the checks above.
                Ok(None) => {
                    if live.backlog.whole() > 0 {
                        break;
                    }
                }
            }
        }
        let (messages, whole) = live.backlog.served(budget);
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
                None => self.slot.horizon(self.target(), client).await?,
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
        let unkeyed = slot::without_replica_identity(self.target(), client, &tables).await?;
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
        self.slot.drop(self.target(), client).await?;
        let start = self.slot.create(self.target(), client, &tables).await?;
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
        match self.slot.position(self.target(), client).await? {
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
            if open.backlog.confirm(after) {
                open.stream.acknowledge(after);
                return Ok(());
            }
            // The consumer went back before a position it confirmed (a target restored, another
            // consumer): the slot has been told to move past it, so the changes between are
            // gone.
            let from = open.backlog.from();
            if let Some(behind) = live.take() {
                behind.stream.close().await;
            }
            return Err(lost(format!(
                "replication slot {} was confirmed to {from}",
                self.slot.name()
            )));
        }
        self.slot.advance(self.target(), client, after).await?;
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
        let peeked = self.slot.peek(self.target(), client, peek_limit).await?;
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
        let mut sets_by_txn: Vec<(Lsn, Vec<ChangeSet>)> = Vec::new();
        let mut rows = 0usize;
        let mut cut = false;
        let mut shapes: HashMap<String, Shape> = HashMap::new();
        let mut closed: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
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
            // consumer copies it again once it follows.
            self.close_refused(&transaction, &mut shapes, &mut closed)
                .await?;
            // A transaction after a migration on one of its tables (the stream describes other
            // columns than the table had): nothing of it or after it goes out until the consumer
            // has the new schema. The shapes are read again from the catalog for the next look.
            if let Some(entity) = self
                .columns_changed(&transaction, &mut shapes, &closed)
                .await?
            {
                tracing::info!(%entity, "a table's columns changed in the stream: the consumer applies the schema before its changes");
                self.source.forget_shapes().await;
                let mut out = replies(sets_by_txn, through, true);
                if let Some(last) = out.last_mut() {
                    last.schema_changed = true;
                }
                return Ok(with_closed(out, &closed));
            }
            through = transaction.end;
            let sets = self.sets(&transaction, &mut shapes, &closed).await?;
            rows += sets.iter().map(|s| s.rows.len()).sum::<usize>();
            sets_by_txn.push((transaction.end, sets));
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
            replies(sets_by_txn, through, cut || !whole),
            &closed,
        ))
    }

    /// Adds to `closed` each table of `transaction` that the policy refuses now (a column
    /// without a rule, a rule for a column gone): its changes are left out.
    async fn close_refused(
        &self,
        transaction: &Transaction,
        shapes: &mut HashMap<String, Shape>,
        closed: &mut std::collections::BTreeSet<String>,
    ) -> Result<(), Refusal> {
        for change in &transaction.changes {
            let relations: Vec<&txn::Relation> = match change {
                RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => {
                    vec![relation]
                }
                RowChange::Truncate { relations } => relations.iter().collect(),
            };
            for relation in relations {
                if closed.contains(&relation.entity) {
                    continue;
                }
                match self.shape(shapes, &relation.entity).await {
                    Ok(_) => {}
                    Err(refusal)
                        if matches!(
                            refusal.code(),
                            ErrorCode::NoRule | ErrorCode::PolicyRefused
                        ) =>
                    {
                        tracing::warn!(entity = %relation.entity, refused = %refusal, "this table fails closed: its changes are left out of the stream until the policy has its rules");
                        closed.insert(relation.entity.clone());
                    }
                    Err(refusal) => return Err(refusal),
                }
            }
        }
        Ok(())
    }

    /// A transaction's changes as masked sets, consecutive changes of one entity and operation
    /// together.
    async fn sets(
        &self,
        transaction: &Transaction,
        shapes: &mut HashMap<String, Shape>,
        closed: &std::collections::BTreeSet<String>,
    ) -> Result<Vec<ChangeSet>, Refusal> {
        let mut sets: Vec<ChangeSet> = Vec::new();
        // One masker per table and per kind of row for the whole transaction: a big update
        // is thousands of rows of one table, and a masker is looked up in the policy and
        // fitted to the table's columns once.
        let mut rows_of: HashMap<String, maskbus_mask::Masker<'_>> = HashMap::new();
        let mut keys_of: HashMap<String, maskbus_mask::Masker<'_>> = HashMap::new();
        for change in &transaction.changes {
            let touches_closed = match change {
                RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => {
                    closed.contains(&relation.entity)
                }
                RowChange::Truncate { relations } => {
                    relations.iter().any(|r| closed.contains(&r.entity))
                }
            };
            if touches_closed {
                continue;
            }
            match change {
                RowChange::Upsert {
                    relation,
                    new,
                    old_key,
                } => {
                    let shape = self.shape(shapes, &relation.entity).await?;
                    let key = shape.key.names();
                    if let Some(old) = old_key {
                        let old_values = cells_of(relation, old, &key);
                        if old_values != cells_of(relation, new, &key) {
                            let row =
                                self.mask_key(&mut keys_of, &relation.entity, shape, old_values)?;
                            add(&mut sets, shape, ChangeOp::Delete, row);
                        }
                    }
                    let row = if has_unchanged(new) {
                        // A TOASTed value the update did not touch: read the row as it is now
                        // (a later change in the stream brings it further still).
                        let key_values = cells_of(relation, new, &key);
                        match self.current_row(&relation.entity, &key, key_values).await? {
                            Some(row) => row,
                            None => continue,
                        }
                    } else {
                        let values: Vec<Option<String>> = cells_of(relation, new, &shape.columns)
                            .into_iter()
                            .map(|v| v.map(String::from))
                            .collect();
                        cached(&mut rows_of, &relation.entity, || self.source.masker(shape))?
                            .mask(values)
                            .map_err(|e| Refusal::new(ErrorCode::PolicyRefused, e.to_string()))?
                    };
                    add(&mut sets, shape, ChangeOp::Upsert, row);
                }
                RowChange::Delete { relation, old } => {
                    let shape = self.shape(shapes, &relation.entity).await?;
                    let key = shape.key.names();
                    let row = self.mask_key(
                        &mut keys_of,
                        &relation.entity,
                        shape,
                        cells_of(relation, old, &key),
                    )?;
                    add(&mut sets, shape, ChangeOp::Delete, row);
                }
                RowChange::Truncate { relations } => {
                    for relation in relations {
                        let shape = self.shape(shapes, &relation.entity).await?;
                        sets.push(ChangeSet {
                            entity: shape.table.to_string(),
                            op: ChangeOp::Truncate,
                            key: shape.key.names(),
                            columns: Vec::new(),
                            rows: Vec::new(),
                        });
                    }
                }
            }
        }
        Ok(sets)
    }

    /// The first table of `transaction` whose columns in the stream are not those it had when
    /// its shape was read (a column added, dropped or renamed since).
    async fn columns_changed(
        &self,
        transaction: &Transaction,
        shapes: &mut HashMap<String, Shape>,
        closed: &std::collections::BTreeSet<String>,
    ) -> Result<Option<String>, Refusal> {
        for change in &transaction.changes {
            let relation = match change {
                RowChange::Upsert { relation, .. } | RowChange::Delete { relation, .. } => relation,
                RowChange::Truncate { .. } => continue,
            };
            if closed.contains(&relation.entity) {
                continue;
            }
            let shape = self.shape(shapes, &relation.entity).await?;
            let streamed: std::collections::BTreeSet<&str> =
                relation.columns.iter().map(|c| c.name.as_str()).collect();
            let known: std::collections::BTreeSet<&str> =
                shape.columns.iter().map(String::as_str).collect();
            if streamed != known {
                return Ok(Some(relation.entity.clone()));
            }
        }
        Ok(None)
    }

    /// The entity's shape, asked of the source once per look.
    async fn shape<'s>(
        &self,
        shapes: &'s mut HashMap<String, Shape>,
        entity: &str,
    ) -> Result<&'s Shape, Refusal> {
        if !shapes.contains_key(entity) {
            let shape = self.source.shape(entity).await?;
            shapes.insert(entity.to_string(), shape);
        }
        shapes
            .get(entity)
            .ok_or_else(|| Refusal::new(ErrorCode::Unavailable, "an entity's shape went missing"))
    }

    /// A deleted row's key, through the masker (its rules for key columns are bijective). A change that does not
    /// carry the whole key (a replica identity other than the key maskbus pages by) is refused.
    fn mask_key<'m>(
        &'m self,
        maskers: &mut HashMap<String, maskbus_mask::Masker<'m>>,
        entity: &str,
        shape: &Shape,
        values: Vec<Option<&str>>,
    ) -> Result<MaskedRow, Refusal> {
        let key = shape.key.names();
        if values.iter().any(Option::is_none) {
            return Err(Refusal::new(ErrorCode::PolicyRefused,
                format!(
                    "a delete of {entity} does not carry its key ({}): give the table REPLICA IDENTITY FULL, or a replica identity index on that key",
                    key.join(", ")
                ),
            ));
        }
        cached(maskers, entity, || self.source.key_masker(shape))?
            .mask(values.into_iter().map(|v| v.map(String::from)).collect())
            .map_err(|e| Refusal::new(ErrorCode::PolicyRefused, e.to_string()))
    }

    /// The row with this key as the source holds it now, masked; `None` if it is gone.
    async fn current_row(
        &self,
        entity: &str,
        key: &[String],
        values: Vec<Option<&str>>,
    ) -> Result<Option<MaskedRow>, Refusal> {
        let Some(values) = values.into_iter().map(|v| v.map(String::from)).collect() else {
            return Ok(None);
        };
        let source_keys = crate::rows_by_key::KeysAre::Source;
        match crate::rows_by_key::lookup(&self.source, entity, key, &[values], source_keys)
            .await
            .into_iter()
            .next()
        {
            Some(Reply::Page(page)) => Ok(page.rows.into_iter().next()),
            Some(Reply::Error { error, .. }) => Err(Refusal(
                error,
                format!("looking up a changed row of {entity} by key"),
            )),
            _ => Ok(None),
        }
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
    source: &Target,
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
pub async fn drop_slot(source: &Target, name: &str) -> Result<bool, SlotError> {
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

/// Adds a row to the last set if it has the same entity and operation, or to a new set.
fn add(sets: &mut Vec<ChangeSet>, shape: &Shape, op: ChangeOp, row: MaskedRow) {
    let entity = shape.table.to_string();
    match sets.last_mut() {
        Some(last) if last.entity == entity && last.op == op => last.rows.push(row),
        _ => sets.push(ChangeSet {
            entity,
            op,
            key: shape.key.names(),
            columns: if op == ChangeOp::Delete {
                shape.key.names()
            } else {
                shape.columns.clone()
            },
            rows: vec![row],
        }),
    }
}

/// The replies of one change request: each set cut into replies of at most [`MAX_PAGE_ROWS`]
/// rows and [`MAX_PAGE_BYTES`] of row text (at least one row), the last reply of each transaction marked `commit`; one reply with no change when
/// there is none.
fn replies(transactions: Vec<(Lsn, Vec<ChangeSet>)>, through: Lsn, more: bool) -> Vec<ChangeReply> {
    let mut out: Vec<ChangeReply> = Vec::new();
    for (end, sets) in transactions {
        let first = out.len();
        for set in sets {
            let mut rows = set.rows.into_iter().peekable();
            loop {
                let mut chunk: Vec<MaskedRow> = Vec::new();
                let mut bytes = 0;
                while let Some(row) = rows.next_if(|row| {
                    chunk.is_empty()
                        || (chunk.len() < MAX_PAGE_ROWS as usize
                            && bytes + row_json_len(row) <= MAX_PAGE_BYTES)
                }) {
                    bytes += row_json_len(&row);
                    chunk.push(row);
                }
                out.push(ChangeReply {
                    v: VERSION,
                    entity: set.entity.clone(),
                    op: set.op,
                    key: set.key.clone(),
                    columns: set.columns.clone(),
                    rows: chunk,
                    lsn: Some(Position(end)),
                    commit: false,
                    through: Position(through),
                    more,
                    started: false,
                    schema_changed: false,
                    closed: Vec::new(),
                    part: 0,
                    parts: 0,
                });
                if rows.peek().is_none() {
                    break;
                }
            }
        }
        if out.len() > first {
            if let Some(last) = out.last_mut() {
                last.commit = true;
            }
        }
    }
    if out.is_empty() {
        out.push(ChangeReply::standing_at(Position(through), more, false));
    }
    let parts = out.len() as u32;
    for (part, reply) in out.iter_mut().enumerate() {
        reply.part = part as u32;
        reply.parts = parts;
    }
    out
}

/// `entity`'s masker in `maskers`, made by `make` the first time a transaction needs it.
fn cached<'c, 'm>(
    maskers: &'c mut HashMap<String, maskbus_mask::Masker<'m>>,
    entity: &str,
    make: impl FnOnce() -> Result<maskbus_mask::Masker<'m>, Refusal>,
) -> Result<&'c maskbus_mask::Masker<'m>, Refusal> {
    if !maskers.contains_key(entity) {
        maskers.insert(entity.to_string(), make()?);
    }
    maskers
        .get(entity)
        .ok_or_else(|| Refusal::new(ErrorCode::Unavailable, "a table's masker went missing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(sizes: &[usize]) -> ChangeSet {
        let columns = vec!["id".to_string(), "body".to_string()];
        let rows = crate::page_cut::rows_of_sizes(sizes);
        ChangeSet {
            entity: "public.t".to_string(),
            op: ChangeOp::Upsert,
            key: vec!["id".to_string()],
            columns,
            rows,
        }
    }

    #[test]
    fn a_transaction_is_cut_into_replies_by_rows_and_by_bytes_its_last_marked_commit() {
        let many = replies(vec![(Lsn(7), vec![set(&[10; 4500])])], Lsn(7), false);
        let sizes: Vec<usize> = many.iter().map(|r| r.rows.len()).collect();
        assert_eq!(sizes, vec![2000, 2000, 500]);
        assert_eq!(
            many.iter().map(|r| r.commit).collect::<Vec<_>>(),
            vec![false, false, true]
        );
        // 3 MiB rows: two fit in a reply's 8 MiB, and a row larger than that still travels.
        let large = replies(
            vec![(Lsn(9), vec![set(&[3 << 20, 3 << 20, 3 << 20, 9 << 20])])],
            Lsn(9),
            false,
        );
        let sizes: Vec<usize> = large.iter().map(|r| r.rows.len()).collect();
        assert_eq!(sizes, vec![2, 1, 1]);
        assert!(large.iter().all(|r| r.parts == 3) && large[2].commit && !large[1].commit);
    }

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
