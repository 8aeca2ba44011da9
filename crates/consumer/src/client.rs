//! The consumer's side of the bus: sends a request to the producer's mailbox and waits for all
//! its replies, routing replies that belong to another in-flight request (a prefetch, a parent
//! fetch) to the task waiting for them by correlation id.

use super::ConsumerError;
use maskbus_config::ConsumerConfig;
use maskbus_mailbox::{Mailbox, Outgoing};
use maskbus_protocol::{ErrorCode, ErrorReply, ReceivedReply, Request};
use std::collections::HashMap;
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
        const TRIES: u32 = 3;
        let body = maskbus_mailbox::body_of(request).map_err(|e| ConsumerError::BadReply {
            entity: String::new(),
            reason: format!("could not encode a request: {e}"),
        })?;
        for _ in 0..TRIES {
            let correlation = format!(
                "{}-{}",
                self.run_id,
                self.requests.fetch_add(1, Ordering::Relaxed)
            );
            // Waiting before the request leaves: a reply that another task waiting on the same
            // mailbox claims at once is handed over, not dropped as a late answer.
            self.lock_in_flight()
                .insert(correlation.clone(), Vec::new());
            let sent = self
                .mailbox
                .send(Outgoing {
                    to: self.producer_mailbox.clone(),
                    kind: "request".into(),
                    correlation_id: Some(correlation.clone()),
                    reply_to: Some(self.mailbox_name.clone()),
                    body: body.clone(),
                })
                .await;
            if let Err(e) = sent {
                self.lock_in_flight().remove(&correlation);
                return Err(e.into());
            }
            let deadline = tokio::time::Instant::now() + self.request_timeout;
            let mut answers: Vec<ReceivedReply> = Vec::new();
            let outcome = loop {
                // A request answered twice (its lease ran out while the producer worked) sends
                // each part twice: keep one reply per part, so no row is applied twice.
                for reply in self
                    .lock_in_flight()
                    .get_mut(&correlation)
                    .map(std::mem::take)
                    .unwrap_or_default()
                {
                    if !answers.iter().any(|a| a.part_of().0 == reply.part_of().0) {
                        answers.push(reply);
                    }
                }
                let complete = answers
                    .first()
                    .is_some_and(|a| answers.len() as u32 >= a.part_of().1);
                if complete {
                    answers.sort_by_key(|a| a.part_of().0);
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
                    .receive(&self.mailbox_name, 32, left.min(Duration::from_millis(100)))
                    .await
                {
                    Ok(received) => received,
                    Err(e) => break Some(Err(e.into())),
                };
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
                    let waiting =
                        owner == correlation || self.lock_in_flight().contains_key(&owner);
                    if !waiting {
                        // A late answer to an earlier request: archived by the ack, so the audit
                        // still sees it; the page it carries is asked for again anyway.
                        handled.push(message.lease);
                        continue;
                    }
                    match ReceivedReply::from_body(&message.body) {
                        Ok(reply) => {
                            handled.push(message.lease);
                            if owner == correlation {
                                answers.push(reply);
                            } else if let Some(theirs) = self.lock_in_flight().get_mut(&owner) {
                                theirs.push(reply);
                            }
                        }
                        Err(e) => {
                            // Poison: dead-lettered with the reason; the wait goes on (the
                            // request is asked again after its timeout if its answer was this).
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
            tracing::warn!(mailbox = %self.producer_mailbox, "no reply in {:?}; asking again", self.request_timeout);
        }
        Err(ConsumerError::NoReply {
            mailbox: self.producer_mailbox.clone(),
            tries: TRIES,
            timeout: self.request_timeout,
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
    pub async fn ask_patiently(
        &self,
        request: &Request,
        what: &str,
    ) -> Result<Vec<ReceivedReply>, ConsumerError> {
        let mut retry =
            maskbus_pg::Retry::new(30, Duration::from_millis(200), Duration::from_secs(5));
        loop {
            let replies = self.ask(request).await?;
            match replies.first() {
                Some(ReceivedReply::Error { error, .. })
                    if error.code() == ErrorCode::Unavailable =>
                {
                    tracing::warn!(what, refused = %error, "producer unavailable; retrying in {:?}", retry.next_pause());
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
                _ => return Ok(replies),
            }
        }
        Err(ConsumerError::Refused {
            what: what.to_string(),
            error: ErrorReply::new(ErrorCode::Unavailable),
        })
    }
}
