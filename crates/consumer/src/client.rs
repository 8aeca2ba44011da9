//! The consumer's side of the bus: sends a request to the producer's mailbox and waits for all
//! its replies, routing replies that belong to another in-flight request (a prefetch, a parent
//! fetch) to the task waiting for them by correlation id.

use super::ConsumerError;
use maskbus_config::ConsumerConfig;
use maskbus_mailbox::{Mailbox, Outgoing};
use maskbus_protocol::{ErrorCode, ErrorReply, ReceivedReply, Request};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub struct Asker {
    mailbox: Mailbox,
    mailbox_name: String,
    producer_mailbox: String,
    /// The role replies must come from: the owner of the producer's mailbox on the bus. `None`
    /// on a bus without grants (every participant a superuser), where roles prove nothing.
    trusted_sender: Option<String>,
    request_timeout: Duration,
    requests: AtomicU64,
    run_id: String,
    /// Replies that arrived for a request another task is waiting on (a prefetch and a parent
    /// fetch can be in flight at once on the one reply mailbox), by correlation id.
    in_flight: std::sync::Mutex<HashMap<String, Vec<ReceivedReply>>>,
}

impl Asker {
    /// The consumer's connection to the bus.
    pub fn mailbox(&self) -> &Mailbox {
        &self.mailbox
    }

    pub async fn new(mailbox: Mailbox, config: &ConsumerConfig) -> Result<Self, ConsumerError> {
        let trusted_sender = mailbox.owner(&config.producer_mailbox).await?;
        match &trusted_sender {
            Some(role) => {
                tracing::info!(producer = %role, "replies are accepted from the producer mailbox's owner only")
            }
            None => {
                tracing::warn!(mailbox = %config.producer_mailbox, "the producer mailbox has no owner on the bus, so replies cannot be authenticated; run `maskbus bus grant`")
            }
        }
        // Correlation ids must not repeat across restarts: a late reply to a previous run's
        // request must never be taken for an answer to this one.
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Ok(Self {
            mailbox,
            mailbox_name: config.mailbox.clone(),
            producer_mailbox: config.producer_mailbox.clone(),
            trusted_sender,
            request_timeout: config.request_timeout,
            requests: AtomicU64::new(0),
            run_id: format!("{}-{started:x}", std::process::id()),
            in_flight: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Sends a request and waits for all its replies (a page request may have several), asking
    /// again after each timeout.
    pub async fn ask(&self, request: &Request) -> Result<Vec<ReceivedReply>, ConsumerError> {
        self.ask_parts(request).await?.all().await
    }

    /// Sends a request; its replies are then read one at a time, in order, as they come
    /// ([`Answer::next`]), so a consumer can apply the first while the producer still makes the
    /// rest.
    pub async fn ask_parts(&self, request: &Request) -> Result<Answer<'_>, ConsumerError> {
        let body = maskbus_mailbox::body_of(request).map_err(|e| ConsumerError::BadReply {
            entity: String::new(),
            reason: format!("could not encode a request: {e}"),
        })?;
        let mut answer = Answer {
            asker: self,
            body,
            correlation: String::new(),
            tries: 0,
            held: BTreeMap::new(),
            next: 0,
            parts: None,
            deadline: tokio::time::Instant::now(),
            peeked: None,
            attempt: None,
        };
        answer.send().await?;
        Ok(answer)
    }

    /// Claims what came to this consumer's mailbox within `wait`: replies to requests being
    /// waited for are handed to their waiters (through `in_flight`), the rest acked as late
    /// answers; forged and unreadable replies go to the dead letters.
    async fn receive(&self, wait: Duration) -> Result<(), ConsumerError> {
        let received = self.mailbox.receive(&self.mailbox_name, 32, wait).await?;
        let mut handled = Vec::with_capacity(received.messages.len());
        let mut failure = None;
        for message in received.messages {
            if let Some(trusted) = &self.trusted_sender {
                if &message.sender != trusted {
                    // A forged reply: kept as evidence in the dead letters, never applied.
                    let reason = format!(
                        "refused: a reply from role {} (only {trusted}, the owner of {}, answers)",
                        maskbus_pg::excerpt(&message.sender, 64),
                        self.producer_mailbox
                    );
                    tracing::warn!(message = message.id, %reason, "refused a reply");
                    if let Err(e) = self.mailbox.dead_letter(message.lease, &reason).await {
                        failure = Some(e.into());
                        break;
                    }
                    continue;
                }
            }
            let owner = message.correlation_id.clone().unwrap_or_default();
            if !self.lock_in_flight().contains_key(&owner) {
                // A late answer to an earlier request: archived by the ack, so the audit still
                // sees it; what it carries is asked for again anyway.
                handled.push(message.lease);
                continue;
            }
            match ReceivedReply::from_body(&message.body) {
                Ok(reply) => {
                    handled.push(message.lease);
                    if let Some(theirs) = self.lock_in_flight().get_mut(&owner) {
                        theirs.push(reply);
                    }
                }
                Err(e) => {
                    // Poison: dead-lettered with the reason; the wait goes on (the request is
                    // asked again after its timeout if its answer was this).
                    let reason = format!(
                        "not a maskbus reply: {}",
                        maskbus_pg::excerpt(&e.to_string(), 200)
                    );
                    tracing::warn!(message = message.id, %reason, "dead-lettered a reply");
                    if let Err(e) = self.mailbox.dead_letter(message.lease, &reason).await {
                        failure = Some(e.into());
                        break;
                    }
                }
            }
        }
        self.mailbox.ack_batch(&handled).await?;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<ReceivedReply>>> {
        // A panic while holding this lock cannot leave the map half-changed; keep using it.
        self.in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Asks until the producer answers with something other than "unavailable" (the source may be
    /// restarting), backing off between tries.
    pub async fn ask_patiently(
        &self,
        request: &Request,
        what: &str,
    ) -> Result<Vec<ReceivedReply>, ConsumerError> {
        self.ask_parts_patiently(request, what).await?.all().await
    }

    /// [`Asker::ask_parts`], asking again while the producer's first reply is "unavailable";
    /// any other refusal is returned as [`ConsumerError::Refused`].
    pub async fn ask_parts_patiently(
        &self,
        request: &Request,
        what: &str,
    ) -> Result<Answer<'_>, ConsumerError> {
        let mut retry =
            maskbus_pg::Retry::new(30, Duration::from_millis(200), Duration::from_secs(5));
        loop {
            let mut answer = self.ask_parts(request).await?;
            match answer.peek().await? {
                Some(ReceivedReply::Error { error, .. })
                    if error.code() == ErrorCode::Unavailable =>
                {
                    tracing::warn!(what, refused = %error, "producer unavailable; retrying in {}", maskbus_model::human_duration(retry.next_pause()));
                    if !retry.pause().await {
                        break;
                    }
                }
                Some(ReceivedReply::Error { error, .. }) => {
                    return Err(ConsumerError::Refused {
                        what: what.to_string(),
                        error: error.clone(),
                    })
                }
                _ => return Ok(answer),
            }
        }
        Err(ConsumerError::Refused {
            what: what.to_string(),
            error: ErrorReply::new(ErrorCode::Unavailable),
        })
    }
}

/// The replies to one request, read in order as they come. A request that gets no reply within
/// the request timeout is sent again (three tries in all); once a reply has been read, a
/// silence that long ends the answer with [`ConsumerError::Cut`] (the consumer, which may have
/// used what it read, starts over); the silence counts from when the next reply is asked for.
/// A request answered twice (its lease ran out while the producer worked) sends each part
/// twice: one reply per part is kept, so no row is applied twice. Change answers, which need
/// not be cut alike twice, say which claim of the request they answer: the replies of one
/// claim are read, never parts of two.
pub struct Answer<'a> {
    asker: &'a Asker,
    body: Box<serde_json::value::RawValue>,
    /// The correlation id of the last try.
    correlation: String,
    tries: u32,
    /// Replies received, by part, not yet read.
    held: BTreeMap<u32, ReceivedReply>,
    /// The part to read next.
    next: u32,
    /// How many parts there are, once a reply has said.
    parts: Option<u32>,
    /// When a silence ends the wait for the next part.
    deadline: tokio::time::Instant,
    /// A reply looked at and not read yet.
    peeked: Option<ReceivedReply>,
    /// The claim of the request whose answer is read, once a reply has said
    /// ([`ReceivedReply::attempt`]).
    attempt: Option<u32>,
}

/// A change request's `patience_ms`: how long the consumer waits for a reply (its request
/// timeout), within which a producer sends a transaction being written, or gives it up.
pub fn patience_ms(timeout: Duration) -> u32 {
    u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX)
}

/// How many times a request that gets no reply at all is sent.
const TRIES: u32 = 3;

impl Answer<'_> {
    /// Sends the request (again), under a new correlation id.
    async fn send(&mut self) -> Result<(), ConsumerError> {
        let asker = self.asker;
        self.forget();
        self.attempt = None;
        self.tries += 1;
        self.correlation = format!(
            "{}-{}",
            asker.run_id,
            asker.requests.fetch_add(1, Ordering::Relaxed)
        );
        // Waiting before the request leaves: a reply that another task waiting on the same
        // mailbox claims at once is handed over, not dropped as a late answer.
        asker
            .lock_in_flight()
            .insert(self.correlation.clone(), Vec::new());
        let sent = asker
            .mailbox
            .send(Outgoing {
                to: asker.producer_mailbox.clone(),
                kind: "request".into(),
                correlation_id: Some(self.correlation.clone()),
                reply_to: Some(asker.mailbox_name.clone()),
                body: self.body.clone(),
            })
            .await;
        if let Err(e) = sent {
            self.forget();
            return Err(e.into());
        }
        self.deadline = tokio::time::Instant::now() + asker.request_timeout;
        Ok(())
    }

    /// Stops waiting for the last try's replies.
    fn forget(&mut self) {
        if !self.correlation.is_empty() {
            self.asker.lock_in_flight().remove(&self.correlation);
        }
    }

    /// The next reply without reading it.
    pub async fn peek(&mut self) -> Result<Option<&ReceivedReply>, ConsumerError> {
        if self.peeked.is_none() {
            self.peeked = self.next_part().await?;
        }
        Ok(self.peeked.as_ref())
    }

    /// The next reply in part order, waiting for it; `None` once the last has been read.
    pub async fn next(&mut self) -> Result<Option<ReceivedReply>, ConsumerError> {
        if let Some(peeked) = self.peeked.take() {
            return Ok(Some(peeked));
        }
        self.next_part().await
    }

    /// Every reply left, in part order.
    pub async fn all(mut self) -> Result<Vec<ReceivedReply>, ConsumerError> {
        let mut replies = Vec::new();
        while let Some(reply) = self.next().await? {
            replies.push(reply);
        }
        Ok(replies)
    }

    async fn next_part(&mut self) -> Result<Option<ReceivedReply>, ConsumerError> {
        let asker = self.asker;
        if self.next > 0 {
            // The silence counts from now: while the caller used the last reply (a long
            // statement on the target) nothing was received.
            self.deadline = tokio::time::Instant::now() + asker.request_timeout;
        }
        loop {
            if self.parts.is_some_and(|parts| self.next >= parts) {
                self.forget();
                return Ok(None);
            }
            for reply in asker
                .lock_in_flight()
                .get_mut(&self.correlation)
                .map(std::mem::take)
                .unwrap_or_default()
            {
                if let Some(attempt) = reply.attempt() {
                    match self.attempt {
                        Some(kept) if kept == attempt => {}
                        // A later claim's answer supersedes one of which nothing was read;
                        // once something was, only that answer is read (should its producer
                        // be gone, the silence cuts the answer off).
                        Some(kept) if self.next == 0 && attempt > kept => {
                            self.held.clear();
                            self.parts = None;
                            self.attempt = Some(attempt);
                        }
                        None if self.next == 0 => self.attempt = Some(attempt),
                        _ => continue,
                    }
                }
                let (part, parts) = reply.part_of();
                if part < self.next {
                    continue;
                }
                if let Some(parts) = parts {
                    self.parts = Some(self.parts.map_or(parts, |known| known.min(parts)));
                }
                self.held.entry(part).or_insert(reply);
            }
            if let Some(reply) = self.held.remove(&self.next) {
                self.next += 1;
                return Ok(Some(reply));
            }
            let left = self
                .deadline
                .saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                if self.next > 0 {
                    self.forget();
                    return Err(ConsumerError::Cut {
                        mailbox: asker.producer_mailbox.clone(),
                        read: self.next,
                        timeout: asker.request_timeout,
                    });
                }
                if self.tries >= TRIES {
                    self.forget();
                    return Err(ConsumerError::NoReply {
                        mailbox: asker.producer_mailbox.clone(),
                        tries: TRIES,
                        timeout: asker.request_timeout,
                    });
                }
                tracing::warn!(mailbox = %asker.producer_mailbox, "{}", no_reply(asker.request_timeout, self.tries));
                self.held.clear();
                self.parts = None;
                self.send().await?;
                continue;
            }
            // Short waits: a reply for this request may also be claimed by another task waiting
            // on the same mailbox, which hands it over through `in_flight`.
            if let Err(e) = asker.receive(left.min(Duration::from_millis(100))).await {
                self.forget();
                return Err(e);
            }
        }
    }
}

/// What a consumer says when a request got no reply within `timeout` and is sent again (it
/// has been sent `tries` times): from the first silence on, what to check.
fn no_reply(timeout: Duration, tries: u32) -> String {
    let waited = maskbus_model::human_duration(timeout);
    if tries <= 1 {
        format!("no reply in {waited}; asking again: is a producer running on this bus (maskbus run --config producer.toml)?")
    } else {
        format!("still no reply in {waited} (try {tries}); asking again: is a producer running on this bus (maskbus run --config producer.toml), with the mailbox this consumer's producer_mailbox names?")
    }
}

impl Drop for Answer<'_> {
    fn drop(&mut self) {
        self.forget();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silence_asks_whether_a_producer_runs_from_the_first_timeout() {
        let first = no_reply(Duration::from_secs(30), 1);
        assert!(
            first.starts_with("no reply in 30 s; asking again"),
            "{first}"
        );
        assert!(
            first.contains(
                "is a producer running on this bus (maskbus run --config producer.toml)?"
            ),
            "{first}"
        );
        let later = no_reply(Duration::from_nanos(1_666_666_666), 2);
        assert!(later.contains("1.7 s"), "{later}");
        assert!(
            later.contains("is a producer running on this bus"),
            "{later}"
        );
    }
}
