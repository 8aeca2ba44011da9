//! The producer: serves page requests from its mailbox with masked rows, until told to stop.
//!
//! Every reply is built by [`crate::source::Source`], whose pages hold only `MaskedRow`s; the
//! reply path (`Producer::reply`) takes [`Reply`]s and nothing else. A request that cannot be
//! parsed gets an error reply (or, with nowhere to reply to, goes to the dead letters with the
//! reason); it is never dropped and never crashes the loop.

use crate::reply::{EarlyReplies, Reply};
use crate::source::{PageAsk, Source};
use maskbus_mailbox::{body_of, Mailbox, MailboxError, Message};
use maskbus_protocol::{self, ErrorCode, ErrorReply, Request, MAX_PENDING_REPLIES};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A running producer: its masked source, its change feed and its mailbox on the bus
/// ([`Producer::start`] makes one from a config).
pub struct Producer {
    source: Arc<Source>,
    /// The change stream, when the config names a slot.
    feed: Option<Arc<crate::changes::ChangeFeed>>,
    mailbox: Arc<Mailbox>,
    inbox: String,
    /// The answers to the page requests consumers will send next, read and masked while the
    /// current answers travel (see [`Producer::answer_page`]): one per page stream (an entity
    /// read in several ranges has several), at most [`MAX_PREFETCHED`].
    next: tokio::sync::Mutex<Vec<Prefetch>>,
    /// Replies being prepared for each requester, not on the bus yet: requests are answered
    /// side by side, so the quota counts these too. Held while a quota is checked.
    reserved: tokio::sync::Mutex<std::collections::HashMap<String, i64>>,
}

/// A change request's fields, as the feed takes them.
type ChangeAsk = (
    Option<maskbus_protocol::Position>,
    Option<maskbus_protocol::Snapshot>,
    u32,
    Duration,
    Option<Duration>,
);

/// Replies made early that may wait for the bus at once: the masking goes on while a few are
/// written.
const EARLY_DEPTH: usize = 4;

/// The most answers prepared ahead at once (each up to `MAX_ANSWER_BYTES`): the page streams
/// of a few consumers reading their tables in ranges.
const MAX_PREFETCHED: usize = 8;

/// Requests of one page stream differ only in where they continue (`after`): a prepared answer
/// for the same stream at another place is stale.
fn same_stream(a: &Request, b: &Request) -> bool {
    match (a, b) {
        (
            Request::Page {
                entity: e1,
                since: s1,
                until: u1,
                through: t1,
                through_tag: tt1,
                subset: b1,
                ..
            },
            Request::Page {
                entity: e2,
                since: s2,
                until: u2,
                through: t2,
                through_tag: tt2,
                subset: b2,
                ..
            },
        ) => e1 == e2 && s1 == s2 && u1 == u2 && t1 == t2 && tt1 == tt2 && b1 == b2,
        _ => false,
    }
}

/// A page request's answer, being prepared before the request arrives.
struct Prefetch {
    request: Request,
    answer: tokio::task::JoinHandle<Vec<Reply>>,
}

/// The replies to a page request: masked pages, or one error.
async fn page_answer(source: &Source, request: &Request) -> Vec<Reply> {
    match request {
        Request::Page {
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
            ..
        } => {
            source
                .page(PageAsk {
                    entity,
                    since: since.clone(),
                    until: until.clone(),
                    after: after.clone(),
                    after_tag: after_tag.clone(),
                    through: through.clone(),
                    through_tag: through_tag.clone(),
                    limit: *limit,
                    pages: pages.unwrap_or(1),
                    subset: subset.as_deref(),
                })
                .await
        }
        _ => vec![Reply::error(ErrorReply::new(ErrorCode::Malformed))],
    }
}

/// What handling one message came to, for logs and tests.
#[derive(Debug, PartialEq, Eq)]
pub enum Handled {
    Replied { kind: &'static str, rows: usize },
    DeadLettered,
}

impl Producer {
    pub fn new(source: Arc<Source>, mailbox: Arc<Mailbox>, inbox: String) -> Self {
        Self {
            source,
            feed: None,
            mailbox,
            inbox,
            next: tokio::sync::Mutex::new(Vec::new()),
            reserved: tokio::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// The same producer, answering change requests from `feed` (none: it has no stream).
    pub fn with_feed(mut self, feed: Option<Arc<crate::changes::ChangeFeed>>) -> Self {
        self.feed = feed;
        self
    }

    /// The masked reads of production it answers from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Its connection to the bus.
    pub fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    /// The mailbox it claims requests from.
    pub fn inbox(&self) -> &str {
        &self.inbox
    }

    /// Answers a page request, from the prepared answer when it is the one that was expected,
    /// then starts preparing the answer to the request that will follow. Reading ahead is
    /// safe: an answer is a function of the request and of the source, read a moment earlier,
    /// and a row changed in between is in a later window anyway.
    async fn answer_page(&self, request: Request) -> Vec<Reply> {
        let prepared = {
            let mut next = self.next.lock().await;
            let prepared = next
                .iter()
                .position(|p| p.request == request)
                .map(|i| next.remove(i).answer);
            next.retain(|p| {
                let stale = same_stream(&p.request, &request);
                if stale {
                    p.answer.abort();
                }
                !stale
            });
            prepared
        };
        let replies = match prepared {
            Some(answer) => match answer.await {
                Ok(replies) => replies,
                Err(_) => page_answer(&self.source, &request).await,
            },
            None => page_answer(&self.source, &request).await,
        };
        let next = match replies.last() {
            Some(Reply::Page(last)) => request.continuation(
                last.more,
                last.until.clone(),
                last.next_after.clone(),
                last.next_after_tag.clone(),
            ),
            _ => None,
        };
        if let Some(next) = next {
            let source = Arc::clone(&self.source);
            let ahead = next.clone();
            let answer = tokio::spawn(async move { page_answer(&source, &ahead).await });
            let mut prepared = self.next.lock().await;
            if prepared.len() >= MAX_PREFETCHED {
                prepared.remove(0).answer.abort();
            }
            prepared.push(Prefetch {
                request: next,
                answer,
            });
        }
        replies
    }

    /// Answers a request built by a tool call: checked as a request from the bus is
    /// (`maskbus_protocol::check_request`), then answered.
    pub async fn answer(&self, request: Request) -> Vec<Reply> {
        match maskbus_protocol::check_request(request) {
            Err(error) => vec![Reply::error(error)],
            Ok(request) => self.answer_request(request).await,
        }
    }

    /// Answers one checked request: one reply, or one per page asked for. Never panics.
    async fn answer_request(&self, request: Request) -> Vec<Reply> {
        match request {
            Request::Entities { .. } => {
                // A consumer copies what the list names with snapshots taken after this: the
                // stream's publication holds those tables first, so no change of one is lost
                // between its copy and the stream.
                if let Some(feed) = &self.feed {
                    if let Err(refusal) = feed.follow_policy().await {
                        tracing::warn!(%refusal, "could not bring the stream's publication to the policy's tables");
                    }
                }
                let schema = crate::schema::fingerprint(&self.source).await;
                let policy = self.source.policy();
                vec![Reply::Entities {
                    v: maskbus_protocol::VERSION,
                    entities: policy.entities().map(|(n, _)| n.to_string()).collect(),
                    keys: policy
                        .entities()
                        .filter_map(|(n, _)| Some((n.to_string(), policy.key_columns(n)?.to_vec())))
                        .collect(),
                    schema,
                    rules: policy
                        .entities()
                        .filter_map(|(n, _)| Some((n.to_string(), policy.rules_fingerprint(n)?)))
                        .collect(),
                }]
            }
            Request::Schema { .. } => crate::schema::answer(&self.source).await,
            page @ Request::Page { .. } => page_answer(&self.source, &page).await,
            Request::Ranges {
                entity,
                until,
                streams,
                min_rows,
                ..
            } => {
                let ask = crate::ranges::RangeAsk {
                    entity: &entity,
                    until,
                    streams,
                    min_rows,
                };
                crate::ranges::answer(&self.source, ask).await
            }
            Request::Rows {
                entity,
                columns,
                keys,
                ..
            } => crate::rows_by_key::answer(&self.source, &entity, &columns, &keys).await,
            Request::Changes {
                after,
                join,
                limit,
                wait_ms,
                patience_ms,
                ..
            } => match &self.feed {
                Some(feed) => {
                    let wait = std::time::Duration::from_millis(u64::from(wait_ms.unwrap_or(0)));
                    let patience =
                        patience_ms.map(|ms| std::time::Duration::from_millis(u64::from(ms)));
                    feed.answer(after, join, limit, wait, patience, None).await
                }
                None => vec![Reply::error(ErrorReply::new(ErrorCode::NoChangeStream))],
            },
            Request::Hashes {
                entity,
                after,
                after_tag,
                through,
                through_tag,
                rows,
                subset,
                only,
                ..
            } => {
                let ask = crate::hashes::HashAsk {
                    entity: &entity,
                    after,
                    after_tag,
                    through,
                    through_tag,
                    per_row: rows,
                    subset: subset.as_deref(),
                    only,
                };
                crate::hashes::answer(&self.source, ask).await
            }
        }
    }

    /// The only way a reply leaves the producer: a [`Reply`], whose pages carry masked rows only.
    async fn reply(
        &self,
        to: &str,
        correlation_id: Option<String>,
        replies: Vec<Reply>,
    ) -> Result<(), MailboxError> {
        let kind = replies.first().map_or("error", Reply::kind);
        // Each reply is serialized once, straight into the text the bus stores. A reply that
        // cannot be encoded is answered by the closed error type, which always can be.
        let bodies = replies
            .iter()
            .filter_map(|reply| {
                let body = body_of(reply)
                    .or_else(|_| body_of(&Reply::error(ErrorReply::new(ErrorCode::Unavailable))));
                Some((correlation_id.clone(), body.ok()?))
            })
            .collect();
        // All the replies to one request go out in one statement.
        self.mailbox.send_batch(to, kind, None, bodies).await?;
        Ok(())
    }

    /// Handles one claimed message: answer, reply, ack.
    pub async fn handle(&self, message: &Message) -> Result<Handled, MailboxError> {
        let started = Instant::now();
        let Some(reply_to) = message.reply_to.clone() else {
            self.mailbox
                .dead_letter(
                    message.lease,
                    "request has no reply_to: nowhere to send the answer",
                )
                .await?;
            tracing::warn!(
                request = message.id,
                "dead-lettered a request without reply_to"
            );
            return Ok(Handled::DeadLettered);
        };
        // The mailbox checked the body is JSON; a request is small, read as a document.
        let request: serde_json::Value =
            serde_json::from_str(message.body.get()).unwrap_or(serde_json::Value::Null);
        let parsed = maskbus_protocol::parse_request(&request);
        // A requester has a quota of replies pending on the bus: past it, the request is
        // dead-lettered with the reason and not answered at all (an error reply would itself
        // add to what the requester leaves unacked). The bus bounds the requests it may send.
        let asked = match &parsed {
            Ok(Request::Page { pages, .. }) => i64::from(pages.unwrap_or(1)),
            Ok(Request::Changes { .. } | Request::Rows { .. } | Request::Hashes { .. }) => {
                i64::from(maskbus_protocol::MAX_PAGES_PER_REQUEST)
            }
            _ => 1,
        };
        let pending = {
            let mut reserved = self.reserved.lock().await;
            let pending = self.mailbox.pending_to(&reply_to).await?
                + reserved.get(&reply_to).copied().unwrap_or(0);
            if pending + asked <= MAX_PENDING_REPLIES {
                *reserved.entry(reply_to.clone()).or_default() += asked;
            }
            pending
        };
        if pending + asked > MAX_PENDING_REPLIES {
            tracing::warn!(
                request = message.id,
                requester = %message.sender,
                pending,
                "dead-lettered a request over its requester's quota of pending replies"
            );
            self.mailbox
                .dead_letter(
                    message.lease,
                    &format!(
                        "quota_exceeded: {pending} replies to this requester are still unacked (at most {MAX_PENDING_REPLIES}); claim and ack them, then ask again"
                    ),
                )
                .await?;
            return Ok(Handled::DeadLettered);
        }
        let outcome = self
            .answer_and_reply(message, &reply_to, parsed, started)
            .await;
        let mut reserved = self.reserved.lock().await;
        if let Some(held) = reserved.get_mut(&reply_to) {
            *held -= asked;
            if *held <= 0 {
                reserved.remove(&reply_to);
            }
        }
        outcome
    }

    /// Answers a request within its requester's quota, replies, acks, and logs it.
    async fn answer_and_reply(
        &self,
        message: &Message,
        reply_to: &str,
        parsed: Result<Request, ErrorReply>,
        started: Instant,
    ) -> Result<Handled, MailboxError> {
        // Parsed once, above; a page request may have been prepared already, and a change
        // request may send its first replies before the rest is made.
        let mut early = (0, 0);
        let replies = match parsed {
            Ok(page @ Request::Page { .. }) => self.answer_page(page).await,
            Ok(Request::Changes {
                after,
                join,
                limit,
                wait_ms,
                patience_ms,
                ..
            }) if self.feed.is_some() => {
                let wait = Duration::from_millis(u64::from(wait_ms.unwrap_or(0)));
                let patience = patience_ms.map(|ms| Duration::from_millis(u64::from(ms)));
                let (replies, sent) = self
                    .answer_changes(message, reply_to, (after, join, limit, wait, patience))
                    .await?;
                early = sent;
                replies
            }
            Ok(request) => self.answer_request(request).await,
            Err(error) => vec![Reply::error(error)],
        };
        let reply_kind = replies.first().map_or("error", Reply::kind);
        let (kind, rows, entity) = match replies.first() {
            Some(Reply::Page(page)) => (
                "page",
                replies
                    .iter()
                    .map(|r| {
                        if let Reply::Page(p) = r {
                            p.rows.len()
                        } else {
                            0
                        }
                    })
                    .sum(),
                page.entity.clone(),
            ),
            Some(Reply::Entities { entities, .. }) => ("entities", entities.len(), String::new()),
            Some(Reply::Ranges(ranges)) => {
                ("ranges", ranges.bounds.len() + 1, ranges.entity.clone())
            }
            Some(Reply::Schema { served, .. }) => {
                ("schema", served.schema().tables.len(), String::new())
            }
            Some(Reply::Changes(first)) => (
                "changes",
                replies
                    .iter()
                    .map(|r| match r {
                        Reply::Changes(c) => c.rows.len(),
                        _ => 0,
                    })
                    .sum(),
                first.entity.clone(),
            ),
            Some(Reply::Hashes(first)) => (
                "hashes",
                first.buckets.len() + first.rows.len(),
                first.entity.clone(),
            ),
            Some(Reply::Error { error, .. }) => {
                tracing::warn!(request = message.id, code = %error.code(), refused = %error, "request refused");
                (
                    "error",
                    0,
                    error.entity_name().unwrap_or_default().to_string(),
                )
            }
            None => ("error", 0, String::new()),
        };
        let error_code = match replies.first() {
            Some(Reply::Error { error, .. }) => Some(error.code().name()),
            _ => None,
        };
        let pages = replies
            .iter()
            .filter(|r| matches!(r, Reply::Page(_)))
            .count() as u64;
        let (early_replies, early_rows) = early;
        let rows = rows + early_rows;
        self.reply(reply_to, message.correlation_id.clone(), replies)
            .await?;
        self.mailbox.ack(message.lease).await?;
        let metrics = maskbus_telemetry::metrics();
        metrics.reply(reply_kind, error_code);
        metrics.answered_in(started.elapsed().as_secs_f64());
        if kind == "page" {
            metrics.add_rows("producer", &entity, rows as u64);
            metrics.add_pages("producer", pages);
        }
        tracing::info!(
            request = message.id,
            entity = %entity,
            outcome = kind,
            rows,
            early_replies,
            duration_ms = started.elapsed().as_millis() as u64,
            "served"
        );
        Ok(Handled::Replied {
            kind: reply_kind,
            rows,
        })
    }

    /// Answers a change request, sending the replies the feed makes before its answer is whole
    /// (a large source transaction, [`EarlyReplies`]) as they come, each through
    /// [`Producer::reply`]. Returns the rest of the answer, and how many replies and rows went
    /// early.
    async fn answer_changes(
        &self,
        message: &Message,
        reply_to: &str,
        (after, join, limit, wait, patience): ChangeAsk,
    ) -> Result<(Vec<Reply>, (u32, usize)), MailboxError> {
        let Some(feed) = &self.feed else {
            return Ok((
                vec![Reply::error(ErrorReply::new(ErrorCode::NoChangeStream))],
                (0, 0),
            ));
        };
        let (mut early, mut to_bus) = EarlyReplies::channel(EARLY_DEPTH);
        let correlation = &message.correlation_id;
        let claim = u32::try_from(message.attempts).unwrap_or(0);
        // The receiver moves into the forwarding, so that a bus failure drops it and the
        // pipeline's next send sees the receiving end gone instead of waiting forever.
        let forward = async move {
            while let Some(reply) = to_bus.recv().await {
                self.reply(reply_to, correlation.clone(), vec![reply.of_attempt(claim)])
                    .await?;
            }
            Ok::<_, MailboxError>(())
        };
        let answer = async {
            let replies = feed
                .answer(after, join, limit, wait, patience, Some(&mut early))
                .await;
            let sent = (early.sent(), early.rows());
            // The forwarding ends once every early reply is on the bus.
            drop(early);
            (replies, sent)
        };
        let (forwarded, (replies, sent)) = tokio::join!(forward, answer);
        forwarded?;
        let replies = replies.into_iter().map(|r| r.of_attempt(claim)).collect();
        Ok((replies, sent))
    }

    /// Serves until `shutdown` resolves, then finishes the request in flight and returns.
    pub async fn serve(&self, shutdown: impl Future<Output = ()>) -> Result<u64, MailboxError> {
        tokio::pin!(shutdown);
        let mut served = 0u64;
        loop {
            let received = tokio::select! {
                biased;
                _ = &mut shutdown => break,
                received = self.mailbox.receive(&self.inbox, 16, Duration::from_secs(5)) => received,
            };
            let messages = match received {
                Ok(received) => received.messages,
                Err(e) => {
                    // The bus went away (a restart): the pool reconnects; wait a little and retry.
                    tracing::warn!(error = %e, "cannot claim from the bus; retrying");
                    tokio::select! {
                        biased;
                        _ = &mut shutdown => break,
                        _ = tokio::time::sleep(Duration::from_millis(500)) => continue,
                    }
                }
            };
            // Requests already claimed are finished even if a signal arrives meanwhile. They are
            // answered side by side: the page streams of one table's ranges, several consumers.
            let handled =
                futures_util::future::join_all(messages.iter().map(|m| self.handle(m))).await;
            for (message, outcome) in messages.iter().zip(handled) {
                match outcome {
                    Ok(_) => served += 1,
                    Err(e) => {
                        tracing::warn!(request = message.id, error = %e, "could not answer; the request comes back after its lease")
                    }
                }
            }
        }
        Ok(served)
    }
}
