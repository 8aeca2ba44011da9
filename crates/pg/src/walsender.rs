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
//! With `streaming`, the walsender is asked for pgoutput's protocol 2 with streaming on and a
//! `logical_decoding_work_mem` of [`STREAM_WORK_MEM`]: a transaction larger than that is sent in
//! blocks while it is still being written, so the consumer applies it (in one open target
//! transaction) while the source writes it, as a subscriber's parallel apply would.
//! [`Blocks`] turns the blocks back into the one shape the rest reads (a `Begin`, the changes, a
//! `Commit`), and where that shape cannot be kept in commit order says so
//! ([`Streamed::Unwound`]): the producer then reads again, without streaming.
//!
//! The client is [`pgwire_replication`] (patched: `vendor/pgwire-replication/MASKBUS-PATCH.md`);
//! its messages are decoded by [`crate::pgoutput`] as the SQL interface's are. Its errors carry the server's own text, which may quote values, so none
//! of it leaves this module: an error says what failed, with the SQLSTATE and its condition.

use crate::pgoutput::{self, Lsn, Message};
use crate::slot::{ChangeSlot, SlotChange};
use crate::{Database, PgError, Sqlstate};
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
    /// A transaction sent while it was written cannot be sent on in commit order: it rolled
    /// back (whole, or a savepoint of it), another transaction committed or was sent while it
    /// was open, or one of its changes left a value to be read from the row as stored (which
    /// the source shows only once it commits). Nothing after this comes; what was sent of the
    /// transaction is not to be applied, and a walsender opened without streaming from what
    /// the consumer confirmed sends everything again, in commit order. `at`: the walsender
    /// stood here; `xids`: the transactions that were being sent while written (a walsender
    /// that streams would send them so again until they end).
    Unwound {
        at: Lsn,
        why: &'static str,
        xids: Vec<u32>,
    },
}

/// `logical_decoding_work_mem` of a streaming walsender: a transaction whose decoded changes
/// pass this is sent in blocks while it is written (about 2,000 changes of a narrow table per
/// block). The server's least is 64 kB; smaller blocks cost the writer more round trips.
pub const STREAM_WORK_MEM: &str = "512kB";

/// Protocol 2's stream blocks turned back into whole transactions: the first block of a
/// streamed transaction opens it (a `Begin`), its changes follow as they come, its stream
/// commit closes it. One streamed transaction is followed at a time, and only while nothing
/// else happens: anything that would put it out of commit order unwinds the stream. Pure.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Inside a block (between Stream Start and Stop) of this transaction.
    block: Option<u32>,
    /// The streamed transaction opened and not yet committed.
    open: Option<u32>,
    /// Unwound already: nothing more is read.
    unwound: bool,
}

/// What one message of the stream is, once [`Blocks`] has read it.
#[derive(Debug, PartialEq, Eq)]
pub enum Block {
    /// A message in protocol 1's form (a change inside a block without its transaction id).
    Message(Vec<u8>),
    /// A message to pass as it came (outside any block).
    AsIs,
    /// The first block of a streamed transaction: it begins here.
    Begin { xid: u32 },
    /// The streamed transaction committed.
    Commit {
        commit_lsn: Lsn,
        end_lsn: Lsn,
        commit_time: i64,
    },
    /// Nothing to pass on (a block's start or stop).
    Nothing,
    /// Commit order cannot be kept ([`Streamed::Unwound`]); `xids`: the transactions being
    /// sent while written.
    Unwound { why: &'static str, xids: Vec<u32> },
}

impl Blocks {
    /// Reads one `XLogData` payload.
    pub fn read(&mut self, data: &[u8]) -> Block {
        if self.unwound {
            return Block::Nothing;
        }
        let be32 = |at: usize| {
            data.get(at..at + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let be64 = |at: usize| {
            data.get(at..at + 8)
                .map(|b| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
        };
        let block = match data.first() {
            // Stream Start: xid, first segment.
            Some(b'S') => match (be32(1), data.get(5)) {
                (Some(xid), Some(&first)) => {
                    self.block = Some(xid);
                    match self.open {
                        Some(open) if open == xid => Block::Nothing,
                        Some(_) => self.unwind(
                            "another transaction was sent while a large one was being written",
                            Some(xid),
                        ),
                        None if first == 1 => {
                            self.open = Some(xid);
                            Block::Begin { xid }
                        }
                        // A later block of a transaction whose first was not followed (the
                        // stream started inside it cannot be: a new walsender decodes it from
                        // its start).
                        None => self.unwind("a block of a transaction begun before", Some(xid)),
                    }
                }
                _ => Block::Message(data.to_vec()),
            },
            // Stream Stop.
            Some(b'E') if data.len() == 1 => {
                self.block = None;
                Block::Nothing
            }
            // Stream Commit: xid, flags, commit LSN, end LSN, commit time.
            Some(b'c') => match (be32(1), be64(6), be64(14), be64(22)) {
                (Some(xid), Some(commit_lsn), Some(end_lsn), Some(time))
                    if self.open == Some(xid) =>
                {
                    self.open = None;
                    self.block = None;
                    Block::Commit {
                        commit_lsn: Lsn(commit_lsn),
                        end_lsn: Lsn(end_lsn),
                        commit_time: time as i64,
                    }
                }
                (Some(xid), Some(_), Some(_), Some(_)) => {
                    self.unwind("the commit of a transaction not followed", Some(xid))
                }
                _ => Block::Message(data.to_vec()),
            },
            // Stream Abort: xid, subtransaction xid.
            Some(b'A') if data.len() >= 9 => {
                let xid = be32(1);
                if xid == be32(5) {
                    self.unwind("a large transaction rolled back", xid)
                } else {
                    self.unwind("a savepoint of a large transaction rolled back", xid)
                }
            }
            // Inside a block, a change carries its (sub)transaction's id after its tag.
            Some(&tag)
                if self.block.is_some()
                    && matches!(tag, b'R' | b'Y' | b'I' | b'U' | b'D' | b'T' | b'M') =>
            {
                if data.len() < 5 {
                    Block::Message(data.to_vec())
                } else if be32(1) != self.block {
                    // A subtransaction's (a savepoint, an exception block): should it roll
                    // back, the walsender does not always say so. PostgreSQL 15 sends a
                    // subtransaction's stream abort only when its changes were in memory when
                    // the transaction was streamed, not when they had been spilled to disk
                    // first (a walsender started inside the transaction, a TOASTed value
                    // pending), and the consumer would commit them. So such a transaction is
                    // sent whole once committed, which leaves its rolled-back savepoints out.
                    self.unwind(
                        "a subtransaction (a savepoint) of a large transaction wrote, whose rollback might not be sent",
                        None,
                    )
                } else {
                    let mut message = Vec::with_capacity(data.len() - 4);
                    message.push(tag);
                    message.extend_from_slice(&data[5..]);
                    Block::Message(message)
                }
            }
            _ if self.open.is_some() && self.block.is_none() => self.unwind(
                "another transaction committed while a large one was being written",
                None,
            ),
            _ => Block::AsIs,
        };
        block
    }

    /// Nothing more is read: `why`, with the transactions being sent while written (the one
    /// open, and `also`).
    fn unwind(&mut self, why: &'static str, also: Option<u32>) -> Block {
        self.unwound = true;
        let mut xids: Vec<u32> = self.open.into_iter().chain(also).collect();
        xids.dedup();
        Block::Unwound { why, xids }
    }

    /// The transaction being sent while it is written, if one is.
    pub fn writing(&self) -> Option<u32> {
        self.open.filter(|_| !self.unwound)
    }

    /// A whole transaction's `Begin` (outside any block) arrived: it committed while a streamed
    /// one is open, ahead of it.
    pub fn whole_begins(&mut self) -> Option<Block> {
        self.writing()?;
        Some(self.unwind(
            "another transaction committed while a large one was being written",
            None,
        ))
    }

    /// A change of the open streamed transaction names a value by reference to the row as
    /// stored (a TOASTed value it left untouched): the source shows that row only once the
    /// transaction commits, so it is sent whole then.
    pub fn refers_to_stored(&mut self, message: &Message) -> Option<Block> {
        self.writing()?;
        let unchanged = matches!(message, Message::Update { new, .. } if new.contains(&pgoutput::Cell::Unchanged));
        unchanged.then(|| {
            self.unwind(
                "a large transaction left a stored value to be read while it was being written",
                None,
            )
        })
    }
}

/// An open walsender on the slot.
pub struct SlotStream {
    client: ReplicationClient,
    source: Database,
    slot: String,
    blocks: Blocks,
    /// Where the last message sent began.
    read_to: Lsn,
    streams: bool,
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
    /// With `streaming`, a large transaction is sent while it is written ([`Blocks`]).
    pub async fn open(
        source: &Database,
        slot: &ChangeSlot,
        after: Lsn,
        streaming: bool,
    ) -> Result<Self, PgError> {
        crate::slot::once_released(|| Self::open_now(source, slot, after, streaming)).await
    }

    async fn open_now(
        source: &Database,
        slot: &ChangeSlot,
        after: Lsn,
        streaming: bool,
    ) -> Result<Self, PgError> {
        let config = replication_config(source, slot, after, streaming)?;
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
                    reason: format!(
                        "no answer to the replication handshake within {}",
                        maskbus_model::human_duration(limit)
                    ),
                });
            }
        }
        Ok(Self {
            client,
            source: source.clone(),
            slot: slot.name().to_string(),
            blocks: Blocks::default(),
            read_to: after,
            streams: streaming,
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

    fn streamed(&mut self, event: ReplicationEvent) -> Result<Option<Streamed>, PgError> {
        // Unwound: nothing more is passed on, not even where the walsender stands.
        if self.blocks.unwound {
            return Ok(None);
        }
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
            ReplicationEvent::Begin { final_lsn, .. } if self.blocks.writing().is_some() => self
                .blocks
                .whole_begins()
                .and_then(|block| unwound(Lsn(final_lsn.as_u64()), block)),
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
                let at = Lsn(wal_start.as_u64());
                self.read_to = self.read_to.max(at);
                let decoded = match self.blocks.read(&data) {
                    Block::Nothing => return Ok(None),
                    block @ Block::Unwound { .. } => return Ok(unwound(at, block)),
                    Block::Begin { xid } => {
                        return Ok(change(
                            at.0,
                            Message::Begin {
                                final_lsn: at,
                                commit_time: 0,
                                xid,
                            },
                        ))
                    }
                    Block::Commit {
                        commit_lsn,
                        end_lsn,
                        commit_time,
                    } => {
                        return Ok(change(
                            commit_lsn.0,
                            Message::Commit {
                                commit_lsn,
                                end_lsn,
                                commit_time,
                            },
                        ))
                    }
                    Block::Message(message) => pgoutput::decode(&message),
                    Block::AsIs => pgoutput::decode(&data),
                };
                let message = decoded.map_err(|e| {
                    self.source.refusal(
                        format!("decoding a change of replication slot {}", self.slot),
                        e.to_string(),
                    )
                })?;
                if let Some(block) = self.blocks.refers_to_stored(&message) {
                    return Ok(unwound(at, block));
                }
                change(at.0, message)
            }
            // Logical messages (`pg_logical_emit_message`) are not asked for; a stop position
            // is never set.
            ReplicationEvent::Message { .. } | ReplicationEvent::StoppedAt { .. } => None,
        })
    }

    /// The transaction being sent while the source writes it (its first block came, its commit
    /// not yet), if one is: a silence then is the source's writer pausing, not the walsender
    /// gone.
    pub fn writing(&self) -> Option<u32> {
        self.blocks.writing()
    }

    /// Whether this walsender was asked to stream transactions while they are written.
    pub fn streams(&self) -> bool {
        self.streams
    }

    /// Where the last message sent began.
    pub fn read_to(&self) -> Lsn {
        self.read_to
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

/// The stream's word for an unwound block read at `at`.
fn unwound(at: Lsn, block: Block) -> Option<Streamed> {
    match block {
        Block::Unwound { why, xids } => Some(Streamed::Unwound { at, why, xids }),
        _ => None,
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
pub fn one_server(source: &Database) -> bool {
    source.config.get_hosts().len() <= 1 && source.config.get_hostaddrs().len() <= 1
}

/// Whether `e` means every walsender the server allows is taken (`max_wal_senders`): the SQL
/// interface may read the slot this time.
pub fn none_free(e: &PgError) -> bool {
    e.sqlstate() == Some(NONE_FREE)
}

fn replication_config(
    source: &Database,
    slot: &ChangeSlot,
    after: Lsn,
    streaming: bool,
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
    // The slot's publication has the slot's name (`ChangeSlot::create`), or is a DBA's
    // (`ChangeSlot::with_publication`); both are plain identifiers, checked there.
    Ok(ReplicationConfig::new(
        host,
        user,
        password,
        source.dbname(),
        slot.name(),
        slot.publication(),
    )
    .with_port(port)
    // The session's settings are the source connection's own (`READ_ONLY_CANONICAL` for the
    // producer): pgoutput prints each value with them, so a date or a float reaches the masker
    // in the same form a page's does, whatever the server's defaults.
    .with_options(session_options(
        config.get_options().unwrap_or_default(),
        streaming,
    ))
    .with_streaming(streaming)
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

/// The walsender session's `options`: the source connection's own, and with `streaming` the
/// work memory past which a transaction is sent while it is written.
fn session_options(own: &str, streaming: bool) -> String {
    if !streaming {
        return own.to_string();
    }
    let work_mem = format!("-c logical_decoding_work_mem={STREAM_WORK_MEM}");
    if own.trim().is_empty() {
        work_mem
    } else {
        format!("{own} {work_mem}")
    }
}

/// A replication client's error as maskbus reports it: the server's SQLSTATE and its condition
/// (never its message), the I/O failure, or what the protocol broke.
fn wire_error(source: &Database, action: &str, e: &PgWireError) -> PgError {
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

    fn source() -> Database {
        Database::parse("source", "postgres://u:secret@127.0.0.1:5999/db").unwrap()
    }

    #[test]
    fn only_a_url_naming_one_server_is_streamed_through_a_walsender() {
        assert!(one_server(&source()));
        let failover = Database::parse(
            "source",
            "postgres://u@10.0.0.1:5432,10.0.0.2:5432/db?target_session_attrs=read-write",
        )
        .unwrap();
        assert!(!one_server(&failover));
        let addressed = Database::parse(
            "source",
            "host=db.internal hostaddr=10.0.0.9 port=6000 user=u dbname=db",
        )
        .unwrap();
        assert!(one_server(&addressed));
        let config = replication_config(
            &addressed,
            &ChangeSlot::new("maskbus_s").unwrap(),
            Lsn(0),
            false,
        )
        .unwrap();
        assert_eq!((config.host.as_str(), config.port), ("10.0.0.9", 6000));
    }

    fn start(xid: u32, first: bool) -> Vec<u8> {
        let mut m = vec![b'S'];
        m.extend_from_slice(&xid.to_be_bytes());
        m.push(u8::from(first));
        m
    }

    fn stream_commit(xid: u32, commit: u64, end: u64) -> Vec<u8> {
        let mut m = vec![b'c'];
        m.extend_from_slice(&xid.to_be_bytes());
        m.push(0);
        m.extend_from_slice(&commit.to_be_bytes());
        m.extend_from_slice(&end.to_be_bytes());
        m.extend_from_slice(&7i64.to_be_bytes());
        m
    }

    fn abort(xid: u32, sub: u32) -> Vec<u8> {
        let mut m = vec![b'A'];
        m.extend_from_slice(&xid.to_be_bytes());
        m.extend_from_slice(&sub.to_be_bytes());
        m
    }

    /// A protocol-1 insert into relation 16384 of one text cell, and the same inside a block
    /// of (sub)transaction `xid`.
    fn insert(xid: Option<u32>) -> Vec<u8> {
        let mut m = vec![b'I'];
        if let Some(xid) = xid {
            m.extend_from_slice(&xid.to_be_bytes());
        }
        m.extend_from_slice(&16384u32.to_be_bytes());
        m.push(b'N');
        m.extend_from_slice(&1u16.to_be_bytes());
        m.push(b't');
        m.extend_from_slice(&1u32.to_be_bytes());
        m.push(b'7');
        m
    }

    #[test]
    fn blocks_of_one_streamed_transaction_read_as_one_whole_transaction() {
        let mut blocks = Blocks::default();
        assert_eq!(blocks.read(&start(9, true)), Block::Begin { xid: 9 });
        // A change carries its transaction's id, taken off.
        let Block::Message(bytes) = blocks.read(&insert(Some(9))) else {
            panic!("a change")
        };
        assert_eq!(bytes, insert(None));
        assert!(pgoutput::decode(&bytes).is_ok());
        assert_eq!(blocks.read(b"E"), Block::Nothing);
        assert_eq!(blocks.read(&start(9, false)), Block::Nothing);
        assert!(matches!(blocks.read(&insert(Some(9))), Block::Message(_)));
        assert_eq!(blocks.read(b"E"), Block::Nothing);
        assert_eq!(
            blocks.read(&stream_commit(9, 100, 108)),
            Block::Commit {
                commit_lsn: Lsn(100),
                end_lsn: Lsn(108),
                commit_time: 7
            }
        );
        // Then whole transactions as before, as they came.
        assert_eq!(blocks.whole_begins(), None);
        assert_eq!(blocks.writing(), None);
        assert_eq!(blocks.read(&insert(None)), Block::AsIs);
    }

    #[test]
    fn anything_that_would_break_commit_order_unwinds_and_then_nothing_is_read() {
        // Each names the transactions being sent while written: a walsender that streams sends
        // them so again until they end.
        type Case<'a> = (&'a [&'a [u8]], &'a str, &'a [u32]);
        let cases: [Case; 6] = [
            (&[&abort(9, 9)], "rolled back", &[9]),
            // A subtransaction's change: its rollback might not be sent.
            (&[&insert(Some(12))], "subtransaction", &[9]),
            (&[&abort(9, 12)], "savepoint", &[9]),
            (
                &[b"E", &start(10, true)],
                "another transaction was sent",
                &[9, 10],
            ),
            (&[b"E", &stream_commit(10, 1, 2)], "not followed", &[9, 10]),
            (
                &[b"E", &insert(None)],
                "another transaction committed",
                &[9],
            ),
        ];
        for (messages, why, named) in cases {
            let mut blocks = Blocks::default();
            assert_eq!(blocks.read(&start(9, true)), Block::Begin { xid: 9 });
            assert!(matches!(blocks.read(&insert(Some(9))), Block::Message(_)));
            let last = messages.iter().map(|m| blocks.read(m)).last().unwrap();
            let Block::Unwound { why: said, xids } = last else {
                panic!("{why}: {last:?}")
            };
            assert!(said.contains(why), "{said}");
            assert_eq!(xids, named, "{why}");
            assert_eq!(blocks.writing(), None, "{why}");
            assert_eq!(blocks.read(&insert(Some(9))), Block::Nothing, "{why}");
            assert_eq!(
                blocks.read(&stream_commit(9, 1, 2)),
                Block::Nothing,
                "{why}"
            );
        }
        // A whole transaction's Begin while one is open.
        let mut blocks = Blocks::default();
        blocks.read(&start(9, true));
        blocks.read(b"E");
        assert_eq!(blocks.writing(), Some(9));
        assert!(matches!(
            blocks.whole_begins(),
            Some(Block::Unwound { xids, .. }) if xids == [9]
        ));
        // A block that is not a first, of a transaction never opened.
        let mut blocks = Blocks::default();
        assert!(matches!(
            blocks.read(&start(9, false)),
            Block::Unwound { xids, .. } if xids == [9]
        ));
        // A value left to be read from the stored row, while open.
        let mut blocks = Blocks::default();
        blocks.read(&start(9, true));
        let update = Message::Update {
            relation: 1,
            old: None,
            new: vec![pgoutput::Cell::Unchanged],
        };
        assert!(matches!(
            blocks.refers_to_stored(&update),
            Some(Block::Unwound { xids, .. }) if xids == [9]
        ));
        // Truncated or stray bytes are passed on to the decoder, which refuses them.
        let mut blocks = Blocks::default();
        for bytes in [&b"S"[..], b"S\0\0", b"c\0\0\0\x09", b"A\0"] {
            assert!(
                matches!(blocks.read(bytes), Block::Message(_) | Block::AsIs),
                "{bytes:?}"
            );
        }
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
        let config = replication_config(&source(), &slot, Lsn(0x16_0000_0010), false).unwrap();
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
        let config = replication_config(&canonical, &slot, Lsn(0), false).unwrap();
        assert_eq!(config.options.as_deref(), Some(crate::READ_ONLY_CANONICAL));
        assert!(!config.streaming);
        let config = replication_config(&canonical, &slot, Lsn(0), true).unwrap();
        assert_eq!(
            config.options.as_deref(),
            Some(
                format!(
                    "{} -c logical_decoding_work_mem={STREAM_WORK_MEM}",
                    crate::READ_ONLY_CANONICAL
                )
                .as_str()
            )
        );
        assert!(config.streaming);
    }
}
