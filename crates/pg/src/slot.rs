//! A logical replication slot on the source, read over an ordinary connection.
//!
//! The change stream needs three things of Postgres: a publication naming the tables, a slot
//! that keeps every change to them from the moment it is created, and a way to read changes
//! without consuming them until the target has committed them. The SQL functions give all
//! three without the replication protocol: `pg_logical_slot_peek_binary_changes` reads
//! `pgoutput` messages and leaves the slot where it is, `pg_replication_slot_advance` moves it
//! once the changes are safe, so a crash anywhere before that reads them again. The role needs
//! the `REPLICATION` attribute (or superuser) and the server `wal_level = logical`.
//!
//! Every statement on slots and publications lives here; names are checked to be plain
//! identifiers before they reach SQL.

use crate::pgoutput::{self, Lsn, Message};
use crate::{Database, PgError, TableRef};
use tokio_postgres::Client;

/// A slot and the publication it reads: by default both named `name` and both made by maskbus;
/// or a publication a DBA made ([`ChangeSlot::with_publication`]), which maskbus reads and never
/// creates, alters or drops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSlot {
    name: String,
    publication: String,
    /// The publication is maskbus' own: made, altered and dropped with the slot.
    managed: bool,
}

/// One change message as the slot returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotChange {
    /// Where the message sits in the WAL (advance the slot past it once it is applied).
    pub lsn: Lsn,
    pub xid: u32,
    pub message: Message,
}

/// A slot as `pg_replication_slots` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotState {
    pub name: String,
    pub database: String,
    /// Something is reading it right now.
    pub active: bool,
    /// The WAL it keeps on the server, in bytes.
    pub retained_bytes: i64,
}

/// A name Postgres would not take for a replication slot.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} cannot name a replication slot: use lower-case letters, digits and _, at most 63")]
pub struct SlotNameError(String);

/// Lower-case letters, digits and `_`, at most 63 characters (Postgres's rule for slot names,
/// applied to the publication's too).
fn plain_name(name: &str) -> Result<String, SlotNameError> {
    let plain = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain {
        Ok(name.to_string())
    } else {
        Err(SlotNameError(maskbus_model::shorten(name)))
    }
}

impl ChangeSlot {
    /// The slot `name` and its own publication of the same name.
    pub fn new(name: &str) -> Result<Self, SlotNameError> {
        let name = plain_name(name)?;
        Ok(ChangeSlot {
            publication: name.clone(),
            name,
            managed: true,
        })
    }

    /// The same slot reading publication `publication`, made by a DBA: maskbus never creates,
    /// alters or drops it.
    pub fn with_publication(self, publication: &str) -> Result<Self, SlotNameError> {
        Ok(ChangeSlot {
            publication: plain_name(publication)?,
            managed: false,
            ..self
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The publication the slot reads.
    pub fn publication(&self) -> &str {
        &self.publication
    }

    /// Whether maskbus makes, alters and drops the publication (it is not a DBA's).
    pub fn manages_publication(&self) -> bool {
        self.managed
    }

    /// The tables the publication holds (`schema.table`; with `publish_via_partition_root`, a
    /// partitioned table by its root), or `None` when there is no such publication.
    pub async fn published(
        &self,
        source: &Database,
        client: &Client,
    ) -> Result<Option<std::collections::BTreeSet<TableRef>>, PgError> {
        let what = || format!("reading publication {}", self.publication);
        let exists = client
            .query_opt(
                "SELECT 1 FROM pg_publication WHERE pubname = $1",
                &[&self.publication],
            )
            .await
            .map_err(|e| source.query_error(what(), &e))?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows = client
            .query(
                "SELECT schemaname::text, tablename::text FROM pg_publication_tables
                  WHERE pubname = $1",
                &[&self.publication],
            )
            .await
            .map_err(|e| source.query_error(what(), &e))?;
        Ok(Some(
            rows.iter()
                .map(|r| TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1)))
                .collect(),
        ))
    }

    /// Adds `add` to maskbus' own publication and drops `remove` from it; then waits (up to
    /// `patience`) for the transactions running when it committed to end, so that a snapshot
    /// taken after this returns holds every change of an added table the stream does not
    /// carry. Returns whether they ended in time. A DBA's publication is never altered.
    pub async fn alter(
        &self,
        source: &Database,
        client: &Client,
        add: &[TableRef],
        remove: &[TableRef],
        patience: std::time::Duration,
    ) -> Result<bool, PgError> {
        if !self.managed || (add.is_empty() && remove.is_empty()) {
            return Ok(true);
        }
        client
            .batch_execute("SET default_transaction_read_only = off")
            .await
            .map_err(|e| source.query_error("opening the session to alter a publication", &e))?;
        let altered = self.alter_now(source, client, add, remove).await;
        let _ = client
            .batch_execute("RESET default_transaction_read_only")
            .await;
        altered?;
        if add.is_empty() {
            return Ok(true);
        }
        await_running(source, client, patience).await
    }

    async fn alter_now(
        &self,
        source: &Database,
        client: &Client,
        add: &[TableRef],
        remove: &[TableRef],
    ) -> Result<(), PgError> {
        let what = || format!("altering publication {}", self.publication);
        for (verb, tables) in [("ADD", add), ("DROP", remove)] {
            if tables.is_empty() {
                continue;
            }
            let names: Vec<String> = tables.iter().map(TableRef::sql).collect();
            client
                .batch_execute(&format!(
                    "ALTER PUBLICATION {} {verb} TABLE {}",
                    self.publication,
                    names.join(", ")
                ))
                .await
                .map_err(|e| source.query_error(what(), &e))?;
        }
        Ok(())
    }

    /// Creates the publication on `tables` and the slot; returns the position from which the
    /// slot keeps every change (a copy whose snapshot is taken after this misses none).
    pub async fn create(
        &self,
        source: &Database,
        client: &Client,
        tables: &[TableRef],
    ) -> Result<Lsn, PgError> {
        let tables: Vec<String> = tables.iter().map(TableRef::sql).collect();
        // The slot and its publication are all maskbus ever makes on the source: a session
        // kept read-only for everything else is opened up for them only.
        client
            .batch_execute("SET default_transaction_read_only = off")
            .await
            .map_err(|e| source.query_error("opening the session to make a slot", &e))?;
        let created = self.create_both(source, client, &tables).await;
        let _ = client
            .batch_execute("RESET default_transaction_read_only")
            .await;
        created
    }

    async fn create_both(
        &self,
        source: &Database,
        client: &Client,
        tables: &[String],
    ) -> Result<Lsn, PgError> {
        if self.managed {
            client
                .batch_execute(&format!(
                    "CREATE PUBLICATION {} FOR TABLE {} WITH (publish_via_partition_root = true)",
                    self.publication,
                    tables.join(", ")
                ))
                .await
                .map_err(|e| {
                    source.query_error(format!("creating publication {}", self.publication), &e)
                })?;
        }
        let created = client
            .query_one(
                "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')",
                &[&self.name],
            )
            .await;
        let row = match created {
            Ok(row) => row,
            Err(e) => {
                // Nothing is left half made: the publication goes with the slot that failed
                // (maskbus' own only).
                if self.managed {
                    let _ = client
                        .batch_execute(&format!("DROP PUBLICATION IF EXISTS {}", self.publication))
                        .await;
                }
                return Err(source.query_error(
                    format!(
                        "creating replication slot {} (the source needs wal_level = logical and a role with REPLICATION)",
                        self.name
                    ),
                    &e,
                ));
            }
        };
        parse_lsn(source, row.get(0))
    }

    /// Up to `limit` messages after the slot's position, in commit order, leaving the slot
    /// where it is. Whole transactions only: Postgres stops at a commit. Only WAL flushed to
    /// disk is decoded, so a commit made with `synchronous_commit = off` shows a moment later.
    pub async fn peek(
        &self,
        source: &Database,
        client: &Client,
        limit: i32,
    ) -> Result<Vec<SlotChange>, PgError> {
        let rows = client
            .query(
                "SELECT lsn::text, xid::text, data FROM pg_logical_slot_peek_binary_changes(
                     $1::text::name, NULL, $2, 'proto_version', '1', 'publication_names', $3::text)",
                &[&self.name, &limit, &self.publication],
            )
            .await
            .map_err(|e| {
                source.query_error(format!("reading replication slot {}", self.name), &e)
            })?;
        rows.iter()
            .map(|row| {
                let data: &[u8] = row.get(2);
                let message = pgoutput::decode(data).map_err(|e| {
                    source.refusal(
                        format!("decoding a change of replication slot {}", self.name),
                        e.to_string(),
                    )
                })?;
                Ok(SlotChange {
                    lsn: parse_lsn(source, row.get(0))?,
                    xid: row.get::<_, &str>(1).parse().unwrap_or(0),
                    message,
                })
            })
            .collect()
    }

    /// Where the source stands now, for deciding whether a look at the slot can find anything
    /// the last one did not ([`Horizon::may_differ`]).
    pub async fn horizon(&self, source: &Database, client: &Client) -> Result<Horizon, PgError> {
        // Left to right: the snapshot is read before the insert position.
        let row = client
            .query_one(
                "SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text,
                        pg_current_wal_flush_lsn()::text",
                &[],
            )
            .await
            .map_err(|e| {
                source.query_error("reading the source's snapshot and WAL position", &e)
            })?;
        Ok(Horizon {
            snapshot: row.get(0),
            inserted: parse_lsn(source, row.get(1))?,
            flushed: parse_lsn(source, row.get(2))?,
        })
    }

    /// Moves the slot past `lsn`: the changes up to it are applied and the server may drop
    /// their WAL. A position the slot has passed already changes nothing (a consumer that
    /// confirms the same position twice, after a restart of either side).
    /// The slot is free once the walsender of the last answer has exited, a moment after its
    /// connection closed: a slot still in use is waited for, up to [`RELEASE_WAIT`].
    pub async fn advance(
        &self,
        source: &Database,
        client: &Client,
        lsn: Lsn,
    ) -> Result<(), PgError> {
        once_released(|| self.advance_now(source, client, lsn)).await
    }

    async fn advance_now(
        &self,
        source: &Database,
        client: &Client,
        lsn: Lsn,
    ) -> Result<(), PgError> {
        client
            .query(
                "SELECT pg_replication_slot_advance(slot_name, $2::text::pg_lsn)
                   FROM pg_replication_slots
                  WHERE slot_name = $1 AND confirmed_flush_lsn < $2::text::pg_lsn",
                &[&self.name, &lsn.to_string()],
            )
            .await
            .map_err(|e| {
                source.query_error(format!("advancing replication slot {}", self.name), &e)
            })?;
        Ok(())
    }

    /// Where the slot stands (every change before it is confirmed), if the slot exists.
    pub async fn position(
        &self,
        source: &Database,
        client: &Client,
    ) -> Result<Option<Lsn>, PgError> {
        let row = client
            .query_opt(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots
                  WHERE slot_name = $1 AND slot_type = 'logical'",
                &[&self.name],
            )
            .await
            .map_err(|e| {
                source.query_error(format!("looking for replication slot {}", self.name), &e)
            })?;
        match row.and_then(|r| r.get::<_, Option<String>>(0)) {
            Some(text) => Ok(Some(parse_lsn(source, &text)?)),
            None => Ok(None),
        }
    }

    /// Drops the slot and its publication, whichever exist (a DBA's publication stays).
    pub async fn drop(&self, source: &Database, client: &Client) -> Result<(), PgError> {
        client
            .batch_execute("SET default_transaction_read_only = off")
            .await
            .map_err(|e| source.query_error("opening the session to drop a slot", &e))?;
        let dropped = self.drop_both(source, client).await;
        let _ = client
            .batch_execute("RESET default_transaction_read_only")
            .await;
        dropped
    }

    async fn drop_both(&self, source: &Database, client: &Client) -> Result<(), PgError> {
        // A producer that follows keeps its walsender open between answers: dropping the slot
        // ends it (its next answer finds the slot gone and says so). Another reader is waited
        // for, and refused after a while.
        if let Err(e) = client
            .execute(
                "SELECT pg_terminate_backend(s.active_pid, 5000)
                   FROM pg_replication_slots s
                   JOIN pg_stat_activity a ON a.pid = s.active_pid
                  WHERE s.slot_name = $1 AND a.application_name = $2",
                &[&self.name, &crate::walsender::APPLICATION_NAME],
            )
            .await
        {
            // Without the right to end it, the drop waits for it like for any other reader.
            tracing::debug!(slot = %self.name, error = %crate::error_text(&e), "could not end the walsender on the slot");
        }
        once_released(|| self.drop_slot_now(source, client)).await?;
        if self.managed {
            client
                .batch_execute(&format!("DROP PUBLICATION IF EXISTS {}", self.publication))
                .await
                .map_err(|e| {
                    source.query_error(format!("dropping publication {}", self.publication), &e)
                })?;
        }
        Ok(())
    }

    async fn drop_slot_now(&self, source: &Database, client: &Client) -> Result<(), PgError> {
        client
            .execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
                &[&self.name],
            )
            .await
            .map_err(|e| source.query_error(format!("dropping replication slot {}", self.name), &e))?;
        Ok(())
    }
}

/// Waits, up to `patience`, for the transactions running now to end (commit or roll back);
/// returns whether they did. A snapshot taken after it returns true sees each of them ended.
pub async fn await_running(
    source: &Database,
    client: &Client,
    patience: std::time::Duration,
) -> Result<bool, PgError> {
    let what = "waiting for the source's running transactions";
    let now: String = client
        .query_one("SELECT pg_current_snapshot()::text", &[])
        .await
        .map_err(|e| source.query_error(what, &e))?
        .get(0);
    let deadline = tokio::time::Instant::now() + patience;
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        // Running now: listed in the snapshot (or at its xmax, not started then: not waited
        // for), and still in progress.
        let running: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_snapshot_xip($1::text::pg_snapshot) AS x
                  WHERE pg_xact_status(x) = 'in progress'",
                &[&now],
            )
            .await
            .map_err(|e| source.query_error(what, &e))?
            .get(0);
        if running == 0 {
            return Ok(true);
        }
        if tokio::time::Instant::now() + pause >= deadline {
            return Ok(false);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(std::time::Duration::from_millis(200));
    }
}

/// How long a slot in use is waited for before `advance` or `drop` gives up: a walsender exits
/// within milliseconds of its client; a slot still in use after this is read by someone else.
pub const RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Runs `step` until the slot is not in use (SQLSTATE 55006), for up to [`RELEASE_WAIT`].
pub(crate) async fn once_released<T, F, Fut>(mut step: F) -> Result<T, PgError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, PgError>>,
{
    let deadline = tokio::time::Instant::now() + RELEASE_WAIT;
    let mut pause = std::time::Duration::from_millis(2);
    loop {
        match step().await {
            Err(e)
                if e.sqlstate() == Some(crate::walsender::SLOT_IN_USE)
                    && tokio::time::Instant::now() + pause < deadline =>
            {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_millis(100));
            }
            done => return done,
        }
    }
}

/// The logical slots of the connected database whose names start with `prefix`, with the WAL
/// each keeps (slots of other databases belong to other sources).
pub async fn slots(
    source: &Database,
    client: &Client,
    prefix: &str,
) -> Result<Vec<SlotState>, PgError> {
    let rows = client
        .query(
            "SELECT slot_name::text, coalesce(database::text, ''), active,
                    coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint
               FROM pg_replication_slots
              WHERE slot_type = 'logical' AND starts_with(slot_name::text, $1)
                AND database = current_database()
              ORDER BY slot_name",
            &[&prefix],
        )
        .await
        .map_err(|e| source.query_error("listing replication slots", &e))?;
    Ok(rows
        .iter()
        .map(|row| SlotState {
            name: row.get(0),
            database: row.get(1),
            active: row.get(2),
            retained_bytes: row.get(3),
        })
        .collect())
}

/// The tables among `tables` that exist on the source now (a policy may name a table a
/// migration has not created yet).
pub async fn existing(
    source: &Database,
    client: &Client,
    tables: &[TableRef],
) -> Result<Vec<TableRef>, PgError> {
    let names: Vec<String> = tables.iter().map(TableRef::sql).collect();
    let rows = client
        .query(
            "SELECT q.i::int FROM unnest($1::text[]) WITH ORDINALITY AS q(name, i)
              WHERE to_regclass(q.name) IS NOT NULL ORDER BY q.i",
            &[&names],
        )
        .await
        .map_err(|e| source.query_error("looking for the policy's tables", &e))?;
    Ok(rows
        .iter()
        .filter_map(|r| tables.get((r.get::<_, i32>(0) - 1) as usize).cloned())
        .collect())
}

/// The tables among `tables` (and their partitions, where rows live) whose deletes and updates
/// a publication cannot carry: no replica identity (`REPLICA IDENTITY NOTHING`, or the default with no primary key). Publishing such a
/// table would make every DELETE on it fail on the source, so the change stream refuses them.
pub async fn without_replica_identity(
    source: &Database,
    client: &Client,
    tables: &[TableRef],
) -> Result<Vec<TableRef>, PgError> {
    let names: Vec<String> = tables.iter().map(TableRef::sql).collect();
    let rows = client
        .query(
            "SELECT DISTINCT n.nspname::text, c.relname::text
               FROM unnest($1::text[]) AS q(name)
               CROSS JOIN LATERAL (SELECT q.name::regclass AS relid
                                   UNION SELECT relid FROM pg_partition_tree(q.name::regclass)) p
               JOIN pg_class c ON c.oid = p.relid
               JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind = 'r'
                AND (c.relreplident = 'n'
                 OR (c.relreplident = 'd' AND NOT EXISTS
                        (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
                 OR (c.relreplident = 'i' AND NOT EXISTS
                        (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)))
              ORDER BY 1, 2",
            &[&names],
        )
        .await
        .map_err(|e| source.query_error("reading the tables' replica identities", &e))?;
    Ok(rows
        .iter()
        .map(|r| TableRef::new(r.get::<_, String>(0), r.get::<_, String>(1)))
        .collect())
}

/// The source's transactions and WAL at one moment, read before a look at the slot.
///
/// A look (a peek) returns the transactions whose commit is in the WAL flushed when it starts.
/// Every commit enters the WAL before its transaction leaves the running set, so a commit that
/// a look taken at `earlier` did not see (its record after the WAL flushed then) either
/// - was written after `earlier.inserted`, by a transaction that was running (or had no
///   transaction id yet) when `earlier.snapshot` was taken: it has left the running set since,
///   so the snapshot differs; or
/// - was in the WAL but not flushed yet (`earlier.flushed < earlier.inserted`): the flush
///   position has moved since.
///
/// A look that may find nothing new is skipped; above all while one big transaction is being
/// written, when each look would decode its WAL so far again (and slow the writer) to find no
/// commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Horizon {
    snapshot: String,
    inserted: Lsn,
    flushed: Lsn,
}

impl Horizon {
    /// WAL flushed so far: every transaction that committed before it is what a look started
    /// after this sees.
    pub fn flushed(&self) -> Lsn {
        self.flushed
    }

    /// The WAL insert position: where the next record goes. A transaction committed before it
    /// is in the WAL, but with `synchronous_commit = off` maybe not flushed yet, and decoding
    /// reads only up to the flush position.
    pub fn inserted(&self) -> Lsn {
        self.inserted
    }

    /// Whether the transaction with (32-bit) id `xid`, as the replication protocol names it,
    /// was still running: in the snapshot's running set, or at or after its `xmax` (the set
    /// lists only ids before it; a transaction newer than every one completed is running, and
    /// one that ended is always before it). Ids there are 64-bit: compared on their low 32 bits,
    /// modulo 2^32 as Postgres compares them (a running id is within 2^31 of `xmax`). A snapshot
    /// that cannot be read counts as running.
    pub fn running(&self, xid: u32) -> bool {
        let mut parts = self.snapshot.splitn(3, ':');
        let (Some(_), Some(xmax), Some(xip)) = (parts.next(), parts.next(), parts.next()) else {
            return true;
        };
        let Ok(xmax) = xmax.parse::<u64>() else {
            return true;
        };
        // Truncated to 32 bits on purpose: the walsender names transactions so.
        let at_or_after_xmax = xid.wrapping_sub(xmax as u32) as i32 >= 0;
        at_or_after_xmax
            || xip.split(',').filter(|id| !id.is_empty()).any(|id| {
                id.parse::<u64>()
                    .map_or(true, |full| full & u64::from(u32::MAX) == u64::from(xid))
            })
    }

    /// A look now may find a commit that a look taken at `earlier` did not.
    pub fn may_differ(&self, earlier: &Horizon) -> bool {
        self.snapshot != earlier.snapshot
            || (earlier.flushed < earlier.inserted && self.flushed != earlier.flushed)
    }
}

fn parse_lsn(source: &Database, text: &str) -> Result<Lsn, PgError> {
    text.parse().map_err(|e: maskbus_model::NotAnLsn| {
        source.refusal("reading a WAL position", e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::ChangeSlot;

    #[test]
    fn a_look_is_skipped_only_when_it_cannot_find_a_new_commit() {
        use super::Horizon;
        let at = |snapshot: &str, inserted: u64, flushed: u64| Horizon {
            snapshot: snapshot.into(),
            inserted: crate::pgoutput::Lsn(inserted),
            flushed: crate::pgoutput::Lsn(flushed),
        };
        let idle = at("10:12:10,11", 500, 500);
        // Nothing committed or began, everything was flushed: the same answer.
        assert!(!at("10:12:10,11", 500, 500).may_differ(&idle));
        // A big transaction being written: its WAL is flushed as it goes, no commit yet.
        assert!(!at("10:12:10,11", 900, 800).may_differ(&idle));
        // A transaction ended (it left the running set), or one began and may have ended.
        assert!(at("10:12:10", 900, 900).may_differ(&idle));
        assert!(at("11:13:11", 900, 900).may_differ(&idle));
        assert!(at("10:13:10,11,12", 900, 900).may_differ(&idle));
        // WAL not yet flushed at the earlier look (an asynchronous commit): a look once the
        // flush position moves, not before.
        let unflushed = at("10:12:10,11", 500, 400);
        assert!(!at("10:12:10,11", 500, 400).may_differ(&unflushed));
        assert!(at("10:12:10,11", 500, 450).may_differ(&unflushed));
    }

    #[test]
    fn a_transaction_runs_while_the_snapshot_lists_it() {
        use super::Horizon;
        let at = |snapshot: &str| Horizon {
            snapshot: snapshot.into(),
            inserted: crate::pgoutput::Lsn(0),
            flushed: crate::pgoutput::Lsn(0),
        };
        let now = at("4294967300:4294967310:4294967301,4294967305");
        // Listed (64-bit ids compared on their low 32 bits, as a walsender names them).
        assert!(now.running(5));
        assert!(now.running(9));
        // Ended: before xmax and not listed, or before xmin.
        assert!(!now.running(6));
        assert!(!now.running(3));
        // At or after xmax: newer than every transaction completed, so running though not
        // listed (a quiet source whose one writer is the newest).
        assert!(now.running(14));
        assert!(now.running(20));
        assert!(at("12:12:").running(12));
        assert!(!at("12:12:").running(11));
        // Around the wrap of the 32-bit ids.
        let wrapped = at("4294967290:4294967300:");
        assert!(!wrapped.running(u32::MAX - 1));
        assert!(wrapped.running(4));
        // A snapshot that cannot be read counts as running.
        assert!(at("garbled").running(5));
        assert!(at("1:2:x").running(5));
        assert!(at("1:x:").running(5));
    }

    #[test]
    fn only_plain_names_reach_sql() {
        assert!(ChangeSlot::new("maskbus_bank_1").is_ok());
        for bad in ["", "Upper", "a-b", "a;drop", "x y", &"a".repeat(64)] {
            assert!(ChangeSlot::new(bad).is_err(), "{bad:?}");
        }
    }
}
