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
use crate::{PgError, TableRef, Target};
use tokio_postgres::Client;

/// A slot and the publication it reads, both named `name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSlot {
    name: String,
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

impl ChangeSlot {
    /// The slot `name`: lower-case letters, digits and `_`, at most 63 characters (Postgres's
    /// rule for slot names, applied to the publication's too).
    pub fn new(name: &str) -> Result<Self, String> {
        let plain = !name.is_empty()
            && name.len() <= 63
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if plain {
            Ok(ChangeSlot { name: name.into() })
        } else {
            Err(format!(
                "{name:?} cannot name a replication slot: use lower-case letters, digits and _, at most 63"
            ))
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Creates the publication on `tables` and the slot; returns the position from which the
    /// slot keeps every change (a copy whose snapshot is taken after this misses none).
    pub async fn create(
        &self,
        source: &Target,
        client: &Client,
        tables: &[TableRef],
    ) -> Result<Lsn, PgError> {
        let tables: Vec<String> = tables.iter().map(TableRef::sql).collect();
        client
            .batch_execute(&format!(
                "CREATE PUBLICATION {} FOR TABLE {}",
                self.name,
                tables.join(", ")
            ))
            .await
            .map_err(|e| source.query_error(format!("creating publication {}", self.name), &e))?;
        let created = client
            .query_one(
                "SELECT lsn::text FROM pg_create_logical_replication_slot($1, 'pgoutput')",
                &[&self.name],
            )
            .await;
        let row = match created {
            Ok(row) => row,
            Err(e) => {
                // Nothing is left half made: the publication goes with the slot that failed.
                let _ = client
                    .batch_execute(&format!("DROP PUBLICATION IF EXISTS {}", self.name))
                    .await;
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
        source: &Target,
        client: &Client,
        limit: i32,
    ) -> Result<Vec<SlotChange>, PgError> {
        let rows = client
            .query(
                "SELECT lsn::text, xid::text, data FROM pg_logical_slot_peek_binary_changes(
                     $1::text::name, NULL, $2, 'proto_version', '1', 'publication_names', $1::text)",
                &[&self.name, &limit],
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

    /// Moves the slot past `lsn`: the changes up to it are applied and the server may drop
    /// their WAL.
    pub async fn advance(&self, source: &Target, client: &Client, lsn: Lsn) -> Result<(), PgError> {
        client
            .query_one(
                "SELECT 1 FROM pg_replication_slot_advance($1, $2::text::pg_lsn)",
                &[&self.name, &lsn.to_string()],
            )
            .await
            .map_err(|e| {
                source.query_error(format!("advancing replication slot {}", self.name), &e)
            })?;
        Ok(())
    }

    /// Drops the slot and its publication, whichever exist.
    pub async fn drop(&self, source: &Target, client: &Client) -> Result<(), PgError> {
        client
            .execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1",
                &[&self.name],
            )
            .await
            .map_err(|e| source.query_error(format!("dropping replication slot {}", self.name), &e))?;
        client
            .batch_execute(&format!("DROP PUBLICATION IF EXISTS {}", self.name))
            .await
            .map_err(|e| source.query_error(format!("dropping publication {}", self.name), &e))?;
        Ok(())
    }
}

/// The logical slots on the server whose names start with `prefix`, with the WAL each keeps.
pub async fn slots(
    source: &Target,
    client: &Client,
    prefix: &str,
) -> Result<Vec<SlotState>, PgError> {
    let rows = client
        .query(
            "SELECT slot_name::text, coalesce(database::text, ''), active,
                    coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint
               FROM pg_replication_slots
              WHERE slot_type = 'logical' AND starts_with(slot_name::text, $1)
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

fn parse_lsn(source: &Target, text: &str) -> Result<Lsn, PgError> {
    text.parse()
        .map_err(|e: pgoutput::DecodeError| source.refusal("reading a WAL position", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::ChangeSlot;

    #[test]
    fn only_plain_names_reach_sql() {
        assert!(ChangeSlot::new("maskbus_bank_1").is_ok());
        for bad in ["", "Upper", "a-b", "a;drop", "x y", &"a".repeat(64)] {
            assert!(ChangeSlot::new(bad).is_err(), "{bad:?}");
        }
    }
}
