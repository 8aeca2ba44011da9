//! A logical replication slot read over the replication protocol: a walsender on the source,
//! kept open from one answer of the change stream to the next.
//!
//! [`ChangeSlot::peek`](crate::slot::ChangeSlot::peek) decodes the WAL from the slot's restart
//! point at every look, so a look while a big transaction is being written decodes all of it
//! so far, and the look after its commit decodes it all again. A walsender decodes each record
//! once, as it is flushed, and sends a transaction the moment its commit is decoded: what
//! Postgres' own subscriptions do. The slot is the same, and so are its guarantees: the stream
//! starts after what the consumer confirmed, and nothing moves the slot but what the consumer
//! has committed ([`SlotStream::acknowledge`], or
//! [`ChangeSlot::advance`](crate::slot::ChangeSlot::advance) while no walsender reads it).
//!
//! The client is [`pgwire_replication`]; its messages are decoded by [`crate::pgoutput`] as the
//! SQL interface's are. Its errors carry the server's own text, which may quote values, so none
//! of it leaves this module: an error says what failed, with the SQLSTATE and its condition.

use crate::pgoutput::{self, Lsn, Message};
use crate::slot::{ChangeSlot, SlotChange};
use crate::{PgError, Sqlstate, Target};
use pgwire_replication::{PgWireError, ReplicationClient, ReplicationConfig, ReplicationEvent};
use std::time::Duration;
use tokio_postgres::config::Host;

/// What the stream says next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Streamed {
    /// A message of a committed transaction, in commit order.
    Change(SlotChange),
    /// The walsender has decoded the WAL up to here: every transaction that committed before it
    /// was sent before this.
    StandsAt(Lsn),
}

/// An open walsender on the slot.
pub struct SlotStream {
    client: ReplicationClient,
    source: Target,
    slot: String,
}

/// How the producer's walsender shows in `pg_stat_activity`: `maskbus slot drop` ends it.
pub const APPLICATION_NAME: &str = "maskbus producer";

/// SQLSTATEs that say the server takes no replication connection from this role here
/// (`pg_hba.conf` has no `replication` line for it, or another password method): the SQL
/// interface may still read the slot.
const NOT_PERMITTED: [&str; 2] = ["28000", "28P01"];

/// `too_many_connections`: every walsender the server allows (`max_wal_senders`) is taken, for
/// now: the SQL interface does not need one.
const NONE_FREE: &str = "53300";

/// `object_in_use`: another process reads the slot (or the last walsender is still exiting).
pub const SLOT_IN_USE: &str = "55006";

impl SlotStream {
    /// Opens a walsender on `slot` and starts it after `after`: transactions that committed at
    /// or before it are not sent. Returns once the server has accepted the start.
    /// A slot still held by the walsender of an earlier answer, exiting, is waited for.
    pub async fn open(source: &Target, slot: &ChangeSlot, after: Lsn) -> Result<Self, PgError> {
        crate::slot::once_released(|| Self::open_now(source, slot, after)).await
    }

    async fn open_now(source: &Target, slot: &ChangeSlot, after: Lsn) -> Result<Self, PgError> {
        let config = replication_config(source, slot, after)?;
        let limit = source.handshake_limit();
        let action = format!("starting replication from slot {}", slot.name());
        let mut client = ReplicationClient::connect(config)
            .await
            .map_err(|e| wire_error(source, &action, &e))?;
        match tokio::time::timeout(limit, client.wait_started()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(wire_error(source, &action, &e)),
            Err(_) => {
                client.abort();
                return Err(PgError::Connect {
                    role: source.role,
                    endpoint: source.endpoint(),
                    reason: format!("no answer to the replication handshake within {limit:?}"),
                });
            }
        }
        Ok(Self {
            client,
            source: source.clone(),
            slot: slot.name().to_string(),
        })
    }

    /// The next message, waiting at most `wait` for it; `None` when nothing came.
    pub async fn next(&mut self, wait: Duration) -> Result<Option<Streamed>, PgError> {
        loop {
            // Once the client's worker has ended, its last word (the error) is read whole: a
            // timeout in the middle of that read would lose it.
            let received = if self.client.is_running() {
                tokio::time::timeout(wait, self.client.recv()).await
            } else {
                Ok(self.client.recv().await)
            };
            let event = match received {
                Err(_) => return Ok(None),
                Ok(Ok(Some(event))) => event,
                Ok(Ok(None)) => {
                    return Err(PgError::Query {
                        role: self.source.role,
                        endpoint: self.source.endpoint(),
                        action: format!("reading replication slot {}", self.slot),
                        reason: "the server ended the replication stream".into(),
                        transient: true,
                        sqlstate: None,
                    })
                }
                Ok(Err(e)) => {
                    let action = format!("reading replication slot {}", self.slot);
                    return Err(wire_error(&self.source, &action, &e));
                }
            };
            if let Some(streamed) = self.streamed(event)? {
                return Ok(Some(streamed));
            }
        }
    }

    fn streamed(&self, event: ReplicationEvent) -> Result<Option<Streamed>, PgError> {
        let change = |lsn: u64, message| {
            Some(Streamed::Change(SlotChange {
                lsn: Lsn(lsn),
                xid: match &message {
                    Message::Begin { xid, .. } => *xid,
                    _ => 0,
                },
                message,
            }))
        };
        Ok(match event {
            ReplicationEvent::KeepAlive { wal_end, .. } => {
                Some(Streamed::StandsAt(Lsn(wal_end.as_u64())))
            }
            // The client reads the boundaries itself and hands them over decoded.
            ReplicationEvent::Begin {
                final_lsn,
                xid,
                commit_time_micros,
            } => change(
                final_lsn.as_u64(),
                Message::Begin {
                    final_lsn: Lsn(final_lsn.as_u64()),
                    commit_time: commit_time_micros,
                    xid,
                },
            ),
            ReplicationEvent::Commit {
                lsn,
                end_lsn,
                commit_time_micros,
            } => change(
                lsn.as_u64(),
                Message::Commit {
                    commit_lsn: Lsn(lsn.as_u64()),
                    end_lsn: Lsn(end_lsn.as_u64()),
                    commit_time: commit_time_micros,
                },
            ),
            ReplicationEvent::XLogData {
                wal_start, data, ..
            } => {
                let message = pgoutput::decode(&data).map_err(|e| {
                    self.source.refusal(
                        format!("decoding a change of replication slot {}", self.slot),
                        e.to_string(),
                    )
                })?;
                change(wal_start.as_u64(), message)
            }
            // Logical messages (`pg_logical_emit_message`) are not asked for; a stop position
            // is never set.
            ReplicationEvent::Message { .. } | ReplicationEvent::StoppedAt { .. } => None,
        })
    }

    /// Tells the server the consumer has committed everything up to `lsn`: the slot moves there
    /// at the next status update (within a fifth of a second), and the server may drop the WAL
    /// before it.
    pub fn acknowledge(&self, lsn: Lsn) {
        self.client
            .update_applied_lsn(pgwire_replication::Lsn(lsn.0));
    }

    /// Ends the stream (CopyDone) and waits, briefly, for the client to let go of it. The slot
    /// is free once the walsender on the server has exited, a moment later:
    /// [`ChangeSlot::advance`](crate::slot::ChangeSlot::advance) waits for that.
    pub async fn close(mut self) {
        if tokio::time::timeout(Duration::from_secs(2), self.client.shutdown())
            .await
            .is_err()
        {
            self.client.abort();
        }
    }
}

/// Whether `e` means the server takes no replication connection from this role (and the SQL
/// interface is the way left to read the slot).
pub fn not_permitted(e: &PgError) -> bool {
    e.sqlstate()
        .is_some_and(|code| NOT_PERMITTED.contains(&code))
}

/// Whether the source's URL names one server, the one a walsender would reach. With several
/// (`host=a,b`, a failover list) the SQL connection went to the first that answered as its
/// `target_session_attrs` asks, which a replication connection of its own cannot be sure to
/// reach: the slot there is read by SQL, on that connection.
pub fn one_server(source: &Target) -> bool {
    source.config.get_hosts().len() <= 1 && source.config.get_hostaddrs().len() <= 1
}

/// Whether `e` means every walsender the server allows is taken (`max_wal_senders`): the SQL
/// interface may read the slot this time.
pub fn none_free(e: &PgError) -> bool {
    e.sqlstate() == Some(NONE_FREE)
}

fn replication_config(
    source: &Target,
    slot: &ChangeSlot,
    after: Lsn,
) -> Result<ReplicationConfig, PgError> {
    let config = &source.config;
    let bad = |reason: &str| PgError::BadUrl {
        role: source.role,
        reason: reason.into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    // `hostaddr`, where given, is the address the SQL connection reached (the host name only
    // names it, for TLS): the walsender goes there too.
    let host = match (config.get_hostaddrs().first(), config.get_hosts().first()) {
        (Some(address), _) => address.to_string(),
        (None, Some(Host::Tcp(host))) => host.clone(),
        (None, Some(Host::Unix(dir))) => dir
            .to_str()
            .ok_or_else(|| bad("its socket directory is not UTF-8"))?
            .to_string(),
        (None, None) => return Err(bad("it names no host")),
    };
    let password = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .unwrap_or_default();
    let user = config.get_user().unwrap_or_default();
    // The slot's publication has the slot's name (`ChangeSlot::create`); both are plain
    // identifiers, checked by `ChangeSlot::new`.
    Ok(ReplicationConfig::new(
        host,
        user,
        password,
        source.dbname(),
        slot.name(),
        slot.name(),
    )
    .with_port(port)
    // The session's settings are the source connection's own (`READ_ONLY_CANONICAL` for the
    // producer): pgoutput prints each value with them, so a date or a float reaches the masker
    // in the same form a page's does, whatever the server's defaults.
    .with_options(config.get_options().unwrap_or_default())
    .with_start_lsn(pgwire_replication::Lsn(after.0))
    .with_application_name(APPLICATION_NAME)
    // What the worker reads ahead between two answers: enough to keep the walsender busy, not a
    // second backlog.
    .with_buffer_size(1024)
    // Until `acknowledge` says more, status updates report `after`. The server sends a
    // keepalive, which says how far it has decoded, whenever it has caught up with the WAL
    // and the position reported is behind that.
    .with_status_interval(Duration::from_millis(200)))
}

/// A replication client's error as maskbus reports it: the server's SQLSTATE and its condition
/// (never its message), the I/O failure, or what the protocol broke.
fn wire_error(source: &Target, action: &str, e: &PgWireError) -> PgError {
    let (reason, transient, sqlstate) = match e {
        PgWireError::Server(text) => {
            // The client prints `MESSAGE (SQLSTATE XXXXX)`: the code is the last thing, in its
            // own parentheses (a message may quote a value that looks like one).
            let code = text
                .strip_suffix(')')
                .and_then(|t| t.rsplit_once("(SQLSTATE "))
                .and_then(|(_, code)| Sqlstate::parse(code));
            let reason = match code {
                Some(code) => format!(
                    "{} (SQLSTATE {})",
                    crate::condition(code.as_str()),
                    code.as_str()
                ),
                None => "the server refused (no SQLSTATE given)".to_string(),
            };
            let transient = code.is_some_and(|c| {
                c.as_str().starts_with("08")
                    || matches!(
                        c.as_str(),
                        "57P01" | "57P02" | "57P03" | NONE_FREE | SLOT_IN_USE
                    )
            });
            (reason, transient, code)
        }
        PgWireError::Io(io) => (
            format!("the replication connection failed ({:?})", io.kind()),
            true,
            None,
        ),
        PgWireError::Auth(_) => (
            "authentication of the replication connection failed (an auth method this client \
             does not speak, or a wrong password)"
                .to_string(),
            false,
            Sqlstate::parse("28000"),
        ),
        PgWireError::Tls(_) => (
            "the replication connection needs TLS, which maskbus does not open".to_string(),
            false,
            Sqlstate::parse("28000"),
        ),
        PgWireError::MessageTooLarge { payload_bytes, .. } => (
            format!("a replication message of {payload_bytes} bytes is over the client's limit"),
            false,
            None,
        ),
        PgWireError::Protocol(_) | PgWireError::Task(_) | PgWireError::Internal(_) => (
            "the replication protocol broke (an unexpected message)".to_string(),
            true,
            None,
        ),
        _ => ("the replication client failed".to_string(), true, None),
    };
    PgError::Query {
        role: source.role,
        endpoint: source.endpoint(),
        action: action.to_string(),
        reason,
        transient,
        sqlstate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Target {
        Target::parse("source", "postgres://u:secret@127.0.0.1:5999/db").unwrap()
    }

    #[test]
    fn only_a_url_naming_one_server_is_streamed_through_a_walsender() {
        assert!(one_server(&source()));
        let failover = Target::parse(
            "source",
            "postgres://u@10.0.0.1:5432,10.0.0.2:5432/db?target_session_attrs=read-write",
        )
        .unwrap();
        assert!(!one_server(&failover));
        let addressed = Target::parse(
            "source",
            "host=db.internal hostaddr=10.0.0.9 port=6000 user=u dbname=db",
        )
        .unwrap();
        assert!(one_server(&addressed));
        let config =
            replication_config(&addressed, &ChangeSlot::new("maskbus_s").unwrap(), Lsn(0)).unwrap();
        assert_eq!((config.host.as_str(), config.port), ("10.0.0.9", 6000));
    }

    #[test]
    fn a_server_error_keeps_its_sqlstate_and_never_its_text() {
        let e = PgWireError::Server(
            "ERROR: invalid input syntax for type bigint: \"078-05-1120\" (SQLSTATE 22P02)".into(),
        );
        let text = wire_error(&source(), "starting replication", &e).to_string();
        assert!(!text.contains("078-05-1120"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("22P02"), "{text}");
        // A value that looks like a code is not taken for one.
        let quoted =
            PgWireError::Server("ERROR: bad value \"SQLSTATE 12ABC\" (SQLSTATE 22P02)".into());
        let text = wire_error(&source(), "starting replication", &quoted).to_string();
        assert!(text.contains("22P02") && !text.contains("12ABC"), "{text}");
        let refused = wire_error(
            &source(),
            "starting replication",
            &PgWireError::Server("FATAL: no pg_hba.conf entry (SQLSTATE 28000)".into()),
        );
        assert!(not_permitted(&refused));
        assert!(!refused.is_transient());
        let in_use = wire_error(
            &source(),
            "starting replication",
            &PgWireError::Server("ERROR: slot is active for PID 7 (SQLSTATE 55006)".into()),
        );
        assert!(in_use.is_transient() && !not_permitted(&in_use));
        assert_eq!(in_use.sqlstate(), Some(SLOT_IN_USE));
        let full = wire_error(
            &source(),
            "starting replication",
            &PgWireError::Server("FATAL: too many walsenders (SQLSTATE 53300)".into()),
        );
        assert!(none_free(&full) && full.is_transient() && !not_permitted(&full));
    }

    #[test]
    fn the_connection_is_the_sources_own() {
        let slot = ChangeSlot::new("maskbus_x").unwrap();
        let config = replication_config(&source(), &slot, Lsn(0x16_0000_0010)).unwrap();
        assert_eq!(
            (config.host.as_str(), config.port, config.user.as_str()),
            ("127.0.0.1", 5999, "u")
        );
        assert_eq!(
            (config.database.as_str(), config.slot.as_str()),
            ("db", "maskbus_x")
        );
        assert_eq!(config.start_lsn.as_u64(), 0x16_0000_0010);
        assert_eq!(config.options.as_deref(), Some(""));
        let mut canonical = source();
        canonical.config.options(crate::READ_ONLY_CANONICAL);
        let config = replication_config(&canonical, &slot, Lsn(0)).unwrap();
        assert_eq!(config.options.as_deref(), Some(crate::READ_ONLY_CANONICAL));
    }
}
