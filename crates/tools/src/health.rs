//! What an agent's `/health` and `/metrics` read at request time: whether it reaches its
//! databases (the producer its source and the bus, the consumer its target and the bus), and
//! the bus's depth for its mailboxes.

use crate::agent::Agent;
use maskbus_consumer::status::closed_tables;

/// Why `/health` answers 503: what the agent cannot reach or what fails closed (by role and
/// name, never by endpoint or value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unhealthy(String);

impl Agent {
    /// `Ok` when the agent reaches every database it works with; else which it cannot reach
    /// (by role, never by endpoint).
    /// And the wire audit: a message that has waited longer than `audit_max_age` for it
    /// fails the check.
    pub async fn health(&self, audit_max_age: std::time::Duration) -> Result<(), Unhealthy> {
        self.check_health(audit_max_age).await.map_err(Unhealthy)
    }

    async fn check_health(&self, audit_max_age: std::time::Duration) -> Result<(), String> {
        let own = match self {
            Agent::Producer(p) => match p.source().ping().await {
                Err(_) => Err("the source cannot be reached".to_string()),
                Ok(()) => held_back(),
            },
            Agent::Consumer(c) => match c.db().client().await {
                Ok(client) => match closed_tables(&client).await {
                    Ok(closed) if closed.is_empty() => Ok(()),
                    Ok(closed) => Err(format!(
                        "{} of the synced tables fail closed: {}",
                        closed.len(),
                        closed
                            .iter()
                            .map(|t| format!("{} ({})", t.entity, t.reason))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )),
                    Err(_) => Err("the target does not answer".to_string()),
                },
                Err(_) => Err("the target cannot be reached".to_string()),
            },
        };
        own?;
        self.mailbox()
            .stats()
            .await
            .map_err(|_| "the bus cannot be reached".to_string())?;
        match self.mailbox().audit_status().await {
            Ok(audit) if audit.is_stale(audit_max_age) => Err(format!(
                "the wire audit is stale: a message has waited over {} for it (run maskbus wire-audit)",
                humantime_secs(audit_max_age)
            )),
            _ => Ok(()),
        }
    }

    /// Puts the bus's pending, leased and dead counts of this agent's mailboxes in the metrics.
    pub async fn count_bus(&self) {
        let ours: Vec<String> = match self {
            Agent::Producer(p) => vec![p.inbox().to_string()],
            Agent::Consumer(c) => {
                let mut ours = maskbus_config::consumer_mailboxes(&c.config().mailbox).to_vec();
                ours.push(c.config().producer_mailbox.clone());
                ours
            }
        };
        if let Ok(stats) = self.mailbox().stats().await {
            for m in stats.iter().filter(|m| ours.contains(&m.mailbox)) {
                maskbus_telemetry::metrics().bus_depth(&m.mailbox, m.pending, m.leased, m.dead);
            }
        }
    }
}

/// The tables the producer's egress guard holds back now, each with its column and detector.
fn held_back() -> Result<(), String> {
    let held = maskbus_telemetry::metrics().held_back();
    if held.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the egress guard holds back {} table(s): {}",
        held.len(),
        held.iter()
            .map(|(table, why)| format!("{table} ({why})"))
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

/// A duration in whole seconds, for a health reason.
fn humantime_secs(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs())
}
