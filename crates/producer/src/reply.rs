//! What the producer sends: the outgoing side of the wire contract, built only from what the
//! mask crate makes (`MaskedRow`, `ServedSchema`) and the closed error type of `maskbus_protocol`. A consumer
//! reads the same JSON as `maskbus_protocol::ReceivedReply`, plain values it cannot mistake
//! for masked rows; the consumer crate never sees these types.
//!
//! A reply's error is only ever the closed [`ErrorReply`]:
//!
//! ```compile_fail
//! use maskbus_producer::reply::Reply;
//! use maskbus_protocol::ErrorCode;
//! let leak = Reply::error(ErrorCode::SourceFailed, "invalid input: 078-05-1120");
//! ```

use maskbus_mask::schema::ServedSchema;
use maskbus_mask::MaskedRow;
use maskbus_protocol::{
    ChangeOp, ErrorReply, HashReply, KeyCursor, Position, RangesReply, Snapshot, VERSION,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// What the producer answers. Page replies are built from masked rows only.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The entities served (`schema.table`), and the key columns the policy names for some.
    Entities {
        v: u32,
        entities: Vec<String>,
        keys: BTreeMap<String, Vec<String>>,
        /// The served schema's fingerprint ([`ServedSchema::fingerprint`]).
        schema: Option<String>,
        /// Per entity, its rules' fingerprint (`Policy::rules_fingerprint`).
        rules: BTreeMap<String, String>,
    },
    Page(PageReply),
    /// Where an entity splits into ranges: bounds cut from masked rows (`crate::ranges`).
    Ranges(RangesReply),
    Changes(ChangeReply),
    Hashes(HashReply),
    /// The schema of the policy's tables, only as the mask crate lets it through.
    Schema {
        v: u32,
        #[serde(flatten)]
        served: ServedSchema,
    },
    Error {
        v: u32,
        error: ErrorReply,
        /// Its place among an answer's replies when replies went before it (a source
        /// transaction sent as it was masked, [`EarlyReplies`]): the last, `part` of `parts`.
        #[serde(skip_serializing_if = "Option::is_none")]
        part: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parts: Option<u32>,
        /// The claim of the request this answers, in a change answer ([`Reply::of_attempt`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
    },
}

/// A page of masked rows.
#[derive(Debug, Serialize)]
pub struct PageReply {
    pub v: u32,
    pub entity: String,
    /// The key columns, in key order.
    pub key: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<MaskedRow>,
    /// The last key in `rows`, to send back as `after`.
    pub next_after: Option<KeyCursor>,
    /// Over a masked key, the tag the producer issued with `next_after` (`crate::cursors`), to
    /// send back with it as `after_tag`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_after_tag: Option<String>,
    /// Whether more rows of this window remain.
    pub more: bool,
    pub since: Option<Snapshot>,
    /// The snapshot that closes the window (absent in replies to `rows` requests).
    pub until: Option<Snapshot>,
    /// This reply's place among the replies to one request: `part` of `parts`, from 0.
    pub part: u32,
    pub parts: u32,
}

impl Reply {
    /// An error reply: only ever an [`ErrorReply`], a closed type.
    pub fn error(error: ErrorReply) -> Self {
        Reply::Error {
            v: VERSION,
            error,
            part: None,
            parts: None,
            attempt: None,
        }
    }

    /// The same reply, if part of a change answer, tagged with the claim of the request it
    /// answers (the bus counts claims from 1). A request whose lease ran out while its answer
    /// was being sent may be answered again, cut differently; the consumer reads one answer
    /// only, never parts of two.
    pub fn of_attempt(mut self, claim: u32) -> Self {
        match &mut self {
            Reply::Changes(changes) => changes.attempt = claim,
            Reply::Error { attempt, .. } => *attempt = Some(claim),
            _ => {}
        }
        self
    }

    /// The same reply, if an error, as the last of an answer whose first `sent` replies went
    /// before it ([`EarlyReplies`]; the replies of the change stream number themselves).
    pub fn after_early(mut self, sent: u32) -> Self {
        if let Reply::Error { part, parts, .. } = &mut self {
            if sent > 0 {
                *part = Some(sent);
                *parts = Some(sent + 1);
            }
        }
        self
    }

    /// The message kind written on the bus.
    pub fn kind(&self) -> &'static str {
        match self {
            Reply::Entities { .. } => "entities",
            Reply::Page(_) => "page",
            Reply::Ranges(_) => "ranges",
            Reply::Changes(_) => "changes",
            Reply::Hashes(_) => "hashes",
            Reply::Schema { .. } => "schema",
            Reply::Error { .. } => "error",
        }
    }
}

/// One set of masked changes.
#[derive(Debug, Serialize)]
pub struct ChangeReply {
    pub v: u32,
    pub entity: String,
    pub op: ChangeOp,
    pub key: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<MaskedRow>,
    /// The end of the source transaction these changes belong to.
    pub lsn: Option<Position>,
    /// This is the last set of its transaction: apply the transaction now.
    pub commit: bool,
    /// Where the stream stands once every change of this request is applied.
    pub through: Position,
    /// More changes may follow `through` already: ask again at once.
    pub more: bool,
    /// The stream was (re)started by this request: copy the source now, then follow from here.
    pub started: bool,
    /// The next transaction changes a table's columns: the consumer applies the served schema
    /// first, then asks again from `through`.
    pub schema_changed: bool,
    /// Tables whose changes are left out: they fail closed (a column without a rule).
    pub closed: Vec<String>,
    /// Policy tables the stream's publication lacks (a DBA's, never altered by maskbus).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpublished: Vec<String>,
    /// The source transaction of these changes (its 32-bit id), none on a reply with no change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xid: Option<maskbus_protocol::TxId>,
    pub part: u32,
    pub parts: u32,
    /// The claim of the request this answers ([`Reply::of_attempt`]).
    pub attempt: u32,
}

impl ChangeReply {
    /// A reply with no change: it only says where the stream stands (`started` when the request
    /// started the stream).
    pub fn standing_at(through: Position, more: bool, started: bool) -> Self {
        ChangeReply {
            v: VERSION,
            entity: String::new(),
            op: ChangeOp::None,
            key: Vec::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            lsn: None,
            commit: false,
            schema_changed: false,
            closed: Vec::new(),
            unpublished: Vec::new(),
            xid: None,
            through,
            more,
            started,
            part: 0,
            parts: 1,
            attempt: 0,
        }
    }
}

/// Where the first replies of an answer go while the rest is still being made: a large source
/// transaction in the change stream goes to the bus as it is masked, so the consumer applies it
/// while it still arrives. The receiving end sends each through the producer's one reply path
/// (`Producer::reply`); only [`ChangeReply`]s, made from masked rows, go this way.
pub struct EarlyReplies {
    to_bus: tokio::sync::mpsc::Sender<Reply>,
    sent: u32,
    rows: usize,
}

impl EarlyReplies {
    /// The sender, and the receiver that takes its replies to the bus (at most `depth` waiting).
    pub fn channel(depth: usize) -> (Self, tokio::sync::mpsc::Receiver<Reply>) {
        let (to_bus, receiver) = tokio::sync::mpsc::channel(depth.max(1));
        (
            Self {
                to_bus,
                sent: 0,
                rows: 0,
            },
            receiver,
        )
    }

    /// Sends one reply on; false when the receiving end is gone (the bus failed and the
    /// forwarding stopped).
    pub async fn send(&mut self, reply: ChangeReply) -> bool {
        let rows = reply.rows.len();
        if self.to_bus.send(Reply::Changes(reply)).await.is_err() {
            return false;
        }
        self.sent += 1;
        self.rows += rows;
        true
    }

    /// Replies sent so far.
    pub fn sent(&self) -> u32 {
        self.sent
    }

    /// Rows in them.
    pub fn rows(&self) -> usize {
        self.rows
    }
}
