//! The typed, versioned JSON the producer and the consumer exchange over the bus.
//!
//! A request names an entity, a window of source transactions and a key cursor; a reply carries
//! masked rows and where to continue, or an error with a code. Requests are parsed strictly
//! (unknown fields, a wrong version, a limit over the cap, names that are not plain identifiers
//! are all errors), and parsing never panics: any body gets either a request or a [`ErrorReply`]
//! the producer can answer with.
//!
//! Nothing here touches a database, and nothing here can mask: the crate is pure and knows
//! neither the policy nor the key (`tests/integration/architecture.rs` holds it so). The
//! producer's outgoing replies, built only from `maskbus_mask::MaskedRow`s, are the producer
//! crate's (`maskbus_producer::reply`); what a consumer reads back is [`ReceivedReply`]: plain
//! values, never mistaken for masked rows.
//!
//! - [`error`]: error replies, a closed type (a code, object names, a fixed sentence).
//! - [`digest`]: row and range hashes for verify (XXH3), letters on the wire.
//! - [`page_rows`]: a page's rows read straight from the body text.
//!
//! `stream` holds the change stream's and verify's messages (positions, changes, hashes).

pub mod digest;
pub mod error;
pub mod page_rows;
mod stream;

pub use error::{ErrorCode, ErrorReply};
pub use maskbus_model::KeyCursor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use stream::{
    Bucket, ChangeOp, HashReply, Lsn, Position, ReceivedChanges, RowHash, SpreadBucket, TxId,
    BUCKETS_PER_REPLY, BUCKET_ROWS, SPREAD_BUCKETS,
};

/// The protocol version this build speaks. Version 2 names entities `schema.table` and carries
/// keys as tuples of text (any key type, composite keys); version 1 (single bigint keys) is
/// refused with an error that says so.
pub const VERSION: u32 = 2;

/// The most columns a key (or a lookup) may have, and the longest text of one key, its values
/// together. A btree entry holds at most about 2.7 kB after compression, so no indexed key the
/// source can hold is longer than this; `maskbus policy check` names a table whose key is.
pub const MAX_KEY_COLUMNS: usize = 32;
pub const MAX_KEY_VALUE_BYTES: usize = 1 << 20;

/// The most rows one reply may carry. A model-free consumer asks for large pages: each page is
/// one message on the bus, and a message costs the bus a claim, an ack and a row of `mq.mail`
/// whatever its size (1,000-row pages synced the large bank 12% faster than 200-row ones, in
/// the same memory, see docs/scaling.md). An agent's tool call asks for far fewer
/// (`maskbus_tools::MAX_TOOL_ROWS`).
pub const MAX_PAGE_ROWS: u32 = 2000;

/// The most replies one page request may ask for: the model-free consumer asks for several
/// consecutive pages at once to save round trips; each reply still carries at most
/// [`MAX_PAGE_ROWS`] rows.
pub const MAX_PAGES_PER_REQUEST: u32 = 64;

/// The most JSON text one page reply carries, unless its one row is larger.
pub const MAX_PAGE_BYTES: usize = 8 << 20;

/// The largest row that can cross the bus, as JSON text: a reply of one such row stays well
/// under a consumer's 64 MiB body limit. `maskbus policy check` prints it.
pub const MAX_ROW_BYTES: usize = 32 << 20;

/// The most JSON text the pages answering one request carry together (one row more if the
/// first alone is larger): what a producer holds in memory for one answer.
pub const MAX_ANSWER_BYTES: usize = 32 << 20;

/// The most replies a producer lets stand unacked in one requester's mailbox: a request whose
/// replies would go over it is dead-lettered with `quota_exceeded` as its reason, unanswered. A consumer acks each
/// answer as it takes it, so it holds at most a few requests' pages at once.
pub const MAX_PENDING_REPLIES: i64 = 2048;

/// The most changed rows one change request may ask for (replies of at most [`MAX_PAGE_ROWS`]
/// rows each; a transaction is never cut, so one larger than this still comes whole).
pub const MAX_CHANGE_ROWS: u32 = MAX_PAGE_ROWS * MAX_PAGES_PER_REQUEST;

/// The most key ranges one entity is split into ([`Request::Ranges`]): each is read by its own
/// page stream, a source connection on the producer and a target connection on the consumer.
pub const MAX_STREAMS: u32 = 16;

/// The longest a change request may ask the producer to wait for a change.
pub const MAX_CHANGE_WAIT_MS: u32 = 10_000;

/// A source snapshot, `xmin:xmax:xip,...` as `pg_current_snapshot()` prints it. A window of
/// source transactions is the set committed in one snapshot and not in an earlier one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Snapshot(pub String);

impl Snapshot {
    /// True for the shape Postgres prints; the server checks it again when it casts it.
    pub fn is_well_formed(text: &str) -> bool {
        let mut parts = text.splitn(3, ':');
        let number =
            |t: &str| !t.is_empty() && t.len() <= 20 && t.bytes().all(|b| b.is_ascii_digit());
        let (Some(xmin), Some(xmax), Some(xip)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        text.len() <= 200_000
            && number(xmin)
            && number(xmax)
            && (xip.is_empty() || xip.split(',').all(number))
    }

    /// `xmin` and `xmax`: every transaction below `xmin` is done, none from `xmax` on had
    /// started. `None` for text that is not a snapshot.
    pub fn bounds(&self) -> Option<(u64, u64)> {
        let mut parts = self.0.splitn(3, ':');
        let number = |t: Option<&str>| t.and_then(|t| t.parse::<u64>().ok());
        Some((number(parts.next())?, number(parts.next())?))
    }

    /// Whether the transaction with 32-bit id `xid` (as the replication protocol names it) is
    /// visible in this snapshot (committed before it was taken), the id widened to 64 bits
    /// against the snapshot's `xmax` (ids within 2^31 of it). False for text that is not a
    /// snapshot.
    pub fn holds(&self, xid: u32) -> bool {
        let Some((xmin, xmax)) = self.bounds() else {
            return false;
        };
        // Truncated to 32 bits on purpose: the walsender names transactions so.
        let delta = xid.wrapping_sub(xmax as u32) as i32;
        let Some(xid) = xmax.checked_add_signed(i64::from(delta)) else {
            return false;
        };
        xid < xmin || (xid < xmax && !self.running().any(|r| r == xid))
    }

    /// The transactions still running when the snapshot was taken.
    pub fn running(&self) -> impl Iterator<Item = u64> + '_ {
        self.0
            .splitn(3, ':')
            .nth(2)
            .unwrap_or("")
            .split(',')
            .filter_map(|t| t.parse::<u64>().ok())
    }
}

impl<'de> Deserialize<'de> for Snapshot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if Snapshot::is_well_formed(&text) {
            Ok(Snapshot(text))
        } else {
            Err(serde::de::Error::custom(
                "a snapshot looks like \"xmin:xmax:xip,...\" (digits)",
            ))
        }
    }
}

/// What the consumer asks the producer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// The entities the producer's policy can serve.
    Entities { v: u32 },
    /// The schema of the policy's tables, as it passed the masking boundary.
    Schema { v: u32 },
    /// One page of an entity: rows written by source transactions committed in snapshot
    /// `until` but not in snapshot `since`, with key greater than `after`, in key order. Without
    /// `until`, the producer takes its current snapshot and returns it; the consumer then sends it
    /// back for the rest of the pass. Without `since`, every row visible in `until`.
    Page {
        v: u32,
        entity: String,
        #[serde(default)]
        since: Option<Snapshot>,
        #[serde(default)]
        until: Option<Snapshot>,
        /// The key of the last row received (text values in key column order).
        #[serde(default)]
        after: Option<KeyCursor>,
        /// The tag the producer issued with `after` ([`ReceivedPage::next_after_tag`]): a
        /// cursor over a masked key is taken back only with its tag ([`CURSOR_TAG_LETTERS`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_tag: Option<String>,
        /// The last key of the range this page stream reads ([`Request::Ranges`]): rows with
        /// key up to it, inclusive. Without it, every row after `after`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        through: Option<KeyCursor>,
        /// The tag the producer issued with `through` ([`RangesReply::bound_tags`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        through_tag: Option<String>,
        limit: u32,
        /// How many consecutive pages to send, each its own reply (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pages: Option<u32>,
        /// Only the rows of this subset, defined on the producer (by name: no SQL travels).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subset: Option<String>,
    },
    /// Where to split an entity into at most `streams` key ranges of at least `min_rows` rows
    /// each, read side by side in one window: the producer answers with the keys between them
    /// ([`RangesReply`], masked as every key is), sampled from the table. Without `until`, the
    /// producer takes its current snapshot and returns it, as for a page.
    Ranges {
        v: u32,
        entity: String,
        #[serde(default)]
        until: Option<Snapshot>,
        streams: u32,
        min_rows: u32,
    },
    /// Specific rows, whatever transaction wrote them (parents a child page needs): those whose
    /// `columns` (the key, or the columns a foreign key references) equal one of `keys`.
    Rows {
        v: u32,
        entity: String,
        columns: Vec<String>,
        keys: Vec<Vec<String>>,
    },
    /// The source's changes after `after` (a position whose changes the consumer has committed:
    /// the producer's slot moves up to it), in commit order, masked, at most about `limit` rows
    /// (whole transactions). Without `after` the stream starts: the producer makes its slot and
    /// answers with the position it starts from. Transactions visible in snapshot `join` (the
    /// one the consumer's copy reached) are in the copy already and are passed over.
    Changes {
        v: u32,
        #[serde(default)]
        after: Option<Position>,
        #[serde(default)]
        join: Option<Snapshot>,
        limit: u32,
        /// With nothing to send yet, wait up to this long for a change before answering (a
        /// follower's long poll; at most [`MAX_CHANGE_WAIT_MS`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait_ms: Option<u32>,
        /// How long the consumer waits for a reply before it gives the answer up (its
        /// `request_timeout`): a source transaction sent while it is written that would keep it
        /// waiting longer is sent whole once committed instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        patience_ms: Option<u32>,
    },
    /// Hashes of an entity's masked rows with key above `after` and, with `through`, up to it:
    /// per bucket of [`BUCKET_ROWS`] rows, or per row with `rows`.
    Hashes {
        v: u32,
        entity: String,
        #[serde(default)]
        after: Option<KeyCursor>,
        /// The tag the producer issued with `after` ([`HashReply::next_after_tag`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_tag: Option<String>,
        #[serde(default)]
        through: Option<KeyCursor>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        through_tag: Option<String>,
        #[serde(default)]
        rows: bool,
        /// Only the rows of this subset.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subset: Option<String>,
        /// The entity's rows spread by masked key hash, as the producer's first reply said
        /// ([`HashReply::spread`]): buckets of [`SPREAD_BUCKETS`], or with `rows`, the rows of
        /// the buckets in `only`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        spread: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        only: Vec<u32>,
    },
}

impl Request {
    /// The page request a consumer sends after the pages that answered this one: the same
    /// window (closed by the `until` the answer carried), after the last key sent, with the
    /// tag the producer issued with it. `None` when nothing remains or this is not a page
    /// request. The consumer asks it; the producer prepares its answer while the current one
    /// travels.
    pub fn continuation(
        &self,
        more: bool,
        until: Option<Snapshot>,
        next_after: Option<KeyCursor>,
        next_after_tag: Option<String>,
    ) -> Option<Request> {
        match self {
            Request::Page {
                v,
                entity,
                since,
                through,
                through_tag,
                limit,
                pages,
                subset,
                ..
            } if more => Some(Request::Page {
                v: *v,
                entity: entity.clone(),
                since: since.clone(),
                until,
                after: next_after,
                after_tag: next_after_tag,
                through: through.clone(),
                through_tag: through_tag.clone(),
                limit: *limit,
                pages: *pages,
                subset: subset.clone(),
            }),
            _ => None,
        }
    }
}

/// What the consumer receives: the same shape, read back as plain values.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReceivedReply {
    Entities {
        v: u32,
        entities: Vec<String>,
        #[serde(default)]
        keys: BTreeMap<String, Vec<String>>,
        /// The fingerprint of the schema the producer serves now (absent when it cannot read
        /// it): a consumer that holds another asks for the schema and follows it.
        #[serde(default)]
        schema: Option<String>,
        /// Per entity, the fingerprint of how it is masked: a table whose rules changed is
        /// written again.
        #[serde(default)]
        rules: BTreeMap<String, String>,
    },
    Page(ReceivedPage),
    Ranges(RangesReply),
    Changes(ReceivedChanges),
    Hashes(HashReply),
    Schema {
        v: u32,
        schema: maskbus_model::schema::Schema,
        /// Tables whose schema stayed on the producer, each with the reason (names only).
        left_out: Vec<SchemaLeftOut>,
    },
    Error {
        v: u32,
        error: ErrorReply,
        /// Its place among an answer's replies when replies went before it (a source
        /// transaction sent as it was masked): the last, `part` of `parts`.
        #[serde(default)]
        part: Option<u32>,
        #[serde(default)]
        parts: Option<u32>,
        /// The claim of the request it answers, in a change answer.
        #[serde(default)]
        attempt: Option<u32>,
    },
}

/// Where an entity splits into key ranges read side by side ([`Request::Ranges`]): range `i`
/// holds the rows with key after `bounds[i-1]` (the first, from the start) and up to
/// `bounds[i]` (the last, to the end), in the source's key order. No bounds: one range, the
/// table is too small to split. The bounds are masked keys, as every key that crosses; the
/// producer undoes them when they come back as `after` and `through`, each with its tag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangesReply {
    pub v: u32,
    pub entity: String,
    pub until: Snapshot,
    pub bounds: Vec<KeyCursor>,
    /// Over a masked key, the tag of each bound, in the same order (none over a kept key): sent
    /// back with the bound as `after_tag` or `through_tag`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bound_tags: Vec<String>,
    /// The producer's estimate of the entity's rows (from the catalog), for progress.
    pub rows: u64,
}

/// A table whose schema the producer did not serve, and why.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SchemaLeftOut {
    pub entity: String,
    pub reason: String,
}

impl ReceivedReply {
    /// Which of the replies to its request this one is, and how many there are: `None` while
    /// that is not known yet (a source transaction sent as it is masked: its replies say
    /// `parts = 0` until the last ones). Pages, changes and hashes may come in several parts.
    pub fn part_of(&self) -> (u32, Option<u32>) {
        match self {
            ReceivedReply::Page(p) => (p.part, Some(p.parts.max(1))),
            ReceivedReply::Changes(c) => (c.part, (c.parts > 0).then_some(c.parts)),
            ReceivedReply::Hashes(h) => (h.part, Some(h.parts.max(1))),
            ReceivedReply::Error { part, parts, .. } => {
                (part.unwrap_or(0), Some(parts.unwrap_or(1).max(1)))
            }
            _ => (0, Some(1)),
        }
    }

    /// Which claim of its request this reply answers, where it says (change answers): replies
    /// of different attempts belong to different answers, which may be cut differently.
    pub fn attempt(&self) -> Option<u32> {
        match self {
            ReceivedReply::Changes(c) => (c.attempt > 0).then_some(c.attempt),
            ReceivedReply::Error { attempt, .. } => *attempt,
            _ => None,
        }
    }

    /// Reads a reply body. Pages, nearly every byte on the bus, are read straight into their
    /// struct: an internally tagged enum would first buffer the whole document.
    pub fn from_body(body: &serde_json::value::RawValue) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Tag {
            #[serde(rename = "type")]
            kind: String,
        }
        let text = body.get();
        // The producer writes the tag first: such a page is read in one pass. Any other body
        // has its tag found first (a pass over the whole document), then is read.
        if text.starts_with(r#"{"type":"page","#) {
            return serde_json::from_str(text).map(ReceivedReply::Page);
        }
        if serde_json::from_str::<Tag>(text)?.kind == "page" {
            return serde_json::from_str(text).map(ReceivedReply::Page);
        }
        serde_json::from_str(text)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ReceivedPage {
    pub v: u32,
    pub entity: String,
    pub key: Vec<String>,
    pub columns: Vec<String>,
    pub rows: crate::page_rows::Rows,
    pub next_after: Option<KeyCursor>,
    /// The producer's tag on `next_after` (over a masked key): sent back with it as `after_tag`.
    #[serde(default)]
    pub next_after_tag: Option<String>,
    pub more: bool,
    pub since: Option<Snapshot>,
    pub until: Option<Snapshot>,
    #[serde(default)]
    pub part: u32,
    #[serde(default = "one")]
    pub parts: u32,
}

fn one() -> u32 {
    1
}

/// A request names entities by the same names a policy may use: `table` or `schema.table`.
pub use maskbus_model::{is_entity_name, is_identifier};

/// What is wrong with a key tuple, if anything: it holds 1 to [`MAX_KEY_COLUMNS`] values
/// (else malformed), of at most [`MAX_KEY_VALUE_BYTES`] together (else too long).
fn key_problem(values: &[String]) -> Option<ErrorCode> {
    if values.is_empty() || values.len() > MAX_KEY_COLUMNS {
        Some(ErrorCode::Malformed)
    } else if values.iter().map(String::len).sum::<usize>() > MAX_KEY_VALUE_BYTES {
        Some(ErrorCode::KeyTooLong)
    } else {
        None
    }
}

/// The letters of a cursor's tag: the producer issues one with every cursor over a masked key
/// (`maskbus_mask::cursor_tag`), and takes such a cursor back only with it.
pub const CURSOR_TAG_LETTERS: usize = 32;

/// Whether `tag` has the shape of a cursor's tag: [`CURSOR_TAG_LETTERS`] letters `a` to `p`
/// (whether the producer issued it, only the producer can tell).
pub fn is_cursor_tag(tag: &str) -> bool {
    tag.len() == CURSOR_TAG_LETTERS && tag.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

/// A subset's (or a seed's, or a virtual foreign key's) name: letters, digits, `_` and `-`, at
/// most 63. Such names travel on the bus and stand in logs; a seed stands inside SQL text.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses and checks a request body. Never panics; every failure is an [`ErrorReply`], which
/// echoes nothing of the body but the entity's name.
pub fn parse_request(body: &serde_json::Value) -> Result<Request, ErrorReply> {
    let request: Request =
        serde_json::from_value(body.clone()).map_err(|_| ErrorReply::new(ErrorCode::Malformed))?;
    check_request(request)
}

/// Checks a request however it was made (parsed from the bus, or built by a tool call): the
/// version, the names, the limits and the key cursors. Never panics; every failure is an
/// [`ErrorReply`], which echoes nothing but the entity's name.
pub fn check_request(request: Request) -> Result<Request, ErrorReply> {
    let fail = ErrorReply::new;
    let (v, entity) = match &request {
        Request::Entities { v } | Request::Schema { v } => (*v, None),
        Request::Changes { v, .. } => (*v, None),
        Request::Page { v, entity, .. }
        | Request::Ranges { v, entity, .. }
        | Request::Rows { v, entity, .. }
        | Request::Hashes { v, entity, .. } => (*v, Some(entity)),
    };
    if v != VERSION {
        return Err(fail(ErrorCode::UnsupportedVersion));
    }
    if let Some(entity) = entity {
        if !is_entity_name(entity) {
            return Err(fail(ErrorCode::UnknownEntity));
        }
    }
    let subset = match &request {
        Request::Page { subset, .. } | Request::Hashes { subset, .. } => subset.as_deref(),
        _ => None,
    };
    if subset.is_some_and(|s| !is_plain_name(s)) {
        return Err(fail(ErrorCode::UnknownSubset));
    }
    let entity = |e: ErrorCode| match entity {
        Some(name) => fail(e).entity(name),
        None => fail(e),
    };
    match &request {
        Request::Page {
            pages: Some(pages), ..
        } if *pages == 0 || *pages > MAX_PAGES_PER_REQUEST => Err(entity(ErrorCode::LimitTooLarge)),
        Request::Page { limit, .. } if *limit == 0 || *limit > MAX_PAGE_ROWS => {
            Err(entity(ErrorCode::LimitTooLarge))
        }
        Request::Page { after, through, .. } | Request::Hashes { after, through, .. }
            if after
                .iter()
                .chain(through)
                .any(|k| key_problem(k).is_some()) =>
        {
            let code = after.iter().chain(through).find_map(|k| key_problem(k));
            Err(entity(code.unwrap_or(ErrorCode::Malformed)))
        }
        // A tag comes with the cursor it was issued with, and has a tag's shape.
        Request::Page {
            after,
            after_tag,
            through,
            through_tag,
            ..
        }
        | Request::Hashes {
            after,
            after_tag,
            through,
            through_tag,
            ..
        } if [(after, after_tag), (through, through_tag)]
            .into_iter()
            .any(|(cursor, tag)| {
                tag.as_deref()
                    .is_some_and(|t| cursor.is_none() || !is_cursor_tag(t))
            }) =>
        {
            Err(entity(ErrorCode::Malformed))
        }
        Request::Ranges { streams, .. } if *streams < 2 || *streams > MAX_STREAMS => {
            Err(entity(ErrorCode::LimitTooLarge))
        }
        Request::Changes { limit, .. } if *limit == 0 || *limit > MAX_CHANGE_ROWS => {
            Err(fail(ErrorCode::LimitTooLarge))
        }
        Request::Changes {
            wait_ms: Some(wait),
            ..
        } if *wait > MAX_CHANGE_WAIT_MS => Err(fail(ErrorCode::LimitTooLarge)),
        Request::Hashes { only, .. }
            if only.len() > SPREAD_BUCKETS as usize
                || only.iter().any(|b| *b >= SPREAD_BUCKETS) =>
        {
            Err(entity(ErrorCode::LimitTooLarge))
        }
        Request::Rows { keys, .. } if keys.is_empty() || keys.len() > MAX_PAGE_ROWS as usize => {
            Err(entity(ErrorCode::LimitTooLarge))
        }
        Request::Rows { columns, keys, .. }
            if !columns.iter().all(|c| is_identifier(c))
                || columns.is_empty()
                || columns.len() > MAX_KEY_COLUMNS
                || keys.iter().any(|k| k.len() != columns.len()) =>
        {
            Err(entity(ErrorCode::Malformed))
        }
        Request::Rows { keys, .. } if keys.iter().any(|k| key_problem(k).is_some()) => {
            let code = keys.iter().find_map(|k| key_problem(k));
            Err(entity(code.unwrap_or(ErrorCode::Malformed)))
        }
        _ => Ok(request),
    }
}

#[cfg(test)]
mod tests;
