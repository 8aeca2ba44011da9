//! The messages of the change stream and of verify: masked changes in commit order, and hashes
//! of masked rows by key range.
//!
//! A change reply carries one set of changes (one entity, one operation) of one source
//! transaction, shaped like a page (`entity`, `columns`, `rows`) so the wire audit reads it
//! with the same column hints. Deletes carry the key columns only, but for a table without a
//! key (its `key` the row location, never a column), whose deletes carry the whole masked row,
//! one copy of which the consumer deletes per row. A hash reply carries, for
//! consecutive key ranges, how many rows the producer's masked source holds and a hash of them,
//! or one hash per row when a range is narrowed down: never a value other than a key.

use maskbus_model::KeyCursor;
pub use maskbus_model::Lsn;
use serde::{Deserialize, Serialize};

/// A WAL position on the wire: its 64 bits as 16 letters `a` to `p`, like a hash
/// ([`crate::digest::hex`]). Postgres prints `0/1914527A`, whose digit runs the wire audit
/// would one day read as an SSN or a card: a position must never look like PII.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position(pub Lsn);

impl Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::digest::hex(self.0 .0))
    }
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        crate::digest::unhex(&text)
            .map(|n| Position(Lsn(n)))
            .ok_or_else(|| serde::de::Error::custom("a WAL position travels as 16 letters a to p"))
    }
}

/// A source transaction's 32-bit id (as the replication protocol names it) on the wire: as
/// letters `a` to `p`, like a [`Position`], so that it never reads as a number a detector
/// takes for PII.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct TxId(pub u32);

impl Serialize for TxId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::digest::hex(u64::from(self.0)))
    }
}

impl<'de> Deserialize<'de> for TxId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        crate::digest::unhex(&text)
            .and_then(|n| u32::try_from(n).ok())
            .map(TxId)
            .ok_or_else(|| {
                serde::de::Error::custom("a transaction id travels as 16 letters a to p")
            })
    }
}

/// What a set of changes does to its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeOp {
    /// Insert the rows, or update the row with the same key (a table without a key: insert).
    Upsert,
    /// Delete the rows with these keys (the rows hold the key columns only; for a table without
    /// a key, whole rows: one copy of each is deleted).
    Delete,
    /// Delete every row of the entity (a TRUNCATE on the source).
    Truncate,
    /// No change: the reply only says where the stream stands.
    None,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ReceivedChanges {
    pub v: u32,
    pub entity: String,
    pub op: ChangeOp,
    pub key: Vec<String>,
    pub columns: Vec<String>,
    pub rows: crate::page_rows::Rows,
    pub lsn: Option<Position>,
    pub commit: bool,
    pub through: Position,
    #[serde(default)]
    pub more: bool,
    #[serde(default)]
    pub started: bool,
    /// The next transaction changes a table's columns: apply the served schema first, then
    /// ask again from `through` (the producer sent nothing of it).
    #[serde(default)]
    pub schema_changed: bool,
    /// Tables whose changes this reply leaves out because they fail closed on the producer (a
    /// column without a rule): the consumer copies them again once they follow.
    #[serde(default)]
    pub closed: Vec<String>,
    /// Tables of the producer's policy that the publication of its change stream lacks (one a
    /// DBA made, which the producer never alters): their changes never come, so they fail
    /// closed by name until it has them. Every reply of an answer carries the whole list.
    #[serde(default)]
    pub unpublished: Vec<String>,
    /// The source transaction these changes belong to (its 32-bit id, as the replication
    /// protocol names it): a table copied after the stream began passes over the changes its
    /// copy's snapshot holds already. None from a producer that does not say.
    #[serde(default)]
    pub xid: Option<TxId>,
    /// Its place among the replies of its request, from 0. `parts` is their number, or 0 while
    /// more follow whose number is not known yet: a large source transaction goes as it is
    /// masked, each reply before its last without `lsn`, which only its commit tells.
    pub part: u32,
    pub parts: u32,
    /// The claim of the request this answers, from 1 (0 from a producer that does not say). A
    /// request may be claimed again once its lease ran out, and that answer cut differently:
    /// the replies of one attempt are read, never parts of two.
    #[serde(default)]
    pub attempt: u32,
}

/// The rows of one key range: the last key in it, how many rows, and their combined hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub last: KeyCursor,
    pub count: u64,
    pub hash: String,
}

/// The rows of one bucket of a spread ([`SPREAD_BUCKETS`]): those whose masked key hashes to
/// `index` ([`crate::digest::spread_of`]), how many, and their combined hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpreadBucket {
    pub index: u32,
    pub count: u64,
    pub hash: String,
}

/// One row's key and the hash of its masked values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowHash {
    pub key: KeyCursor,
    pub hash: String,
}

/// Hashes of an entity's masked rows in key order: buckets, or rows when narrowing down.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashReply {
    pub v: u32,
    pub entity: String,
    pub key: Vec<String>,
    /// The columns hashed, in order (the key columns first among the row's values are not
    /// repeated: a row's hash covers `columns`).
    pub columns: Vec<String>,
    #[serde(default)]
    pub buckets: Vec<Bucket>,
    #[serde(default)]
    pub rows: Vec<RowHash>,
    /// The entity's key is masked (a bijective pseudonym), so the target's key order is not
    /// the source's and rows cannot be bucketed by key range: they are spread over
    /// [`SPREAD_BUCKETS`] buckets by their masked key's hash instead (`spread_buckets`, the ones
    /// with rows; `buckets` stays empty), each reply covering the next rows in the source's
    /// order. Later requests say `spread` and never `through`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spread: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread_buckets: Vec<SpreadBucket>,
    /// Where the next request starts (the last key covered).
    pub next_after: Option<KeyCursor>,
    /// The producer's tag on `next_after` (over a masked key): sent back with it as `after_tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_after_tag: Option<String>,
    /// Whether rows remain after `next_after` (within `through`, when given).
    pub more: bool,
    pub part: u32,
    pub parts: u32,
}

/// Rows per bucket, and buckets per hash request: one request covers up to 100,000 rows.
pub const BUCKET_ROWS: usize = 1000;
pub const BUCKETS_PER_REPLY: usize = 100;

/// Buckets a table with a masked key is spread over by key hash: a reply names at most this
/// many, and a row's bucket is below it.
pub const SPREAD_BUCKETS: u32 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_travel_as_letters_that_never_look_like_pii() {
        let p = Position(Lsn(0x16_B374_D848));
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(text, r#""aaaaaabgldheniei""#);
        assert_eq!(serde_json::from_str::<Position>(&text).unwrap(), p);
        for bad in [
            r#""16/B374D848""#,
            r#""x/1""#,
            "12",
            r#""aaaaaabgldhenieiz""#,
        ] {
            assert!(serde_json::from_str::<Position>(bad).is_err(), "{bad}");
        }
    }
}
