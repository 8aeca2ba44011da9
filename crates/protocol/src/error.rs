//! Error replies: a closed type. What a producer sends on failure is a code, the names of the
//! objects involved (entity, column, rule, constraint, subset), the SQLSTATE when the source
//! refused, and the code's fixed sentence. Never the server's message, detail or hint (they
//! quote values), never free text: there is no field to put it in.
//!
//! Outside this module an [`ErrorReply`] is made only by [`ErrorReply::new`] and its builders,
//! which keep names to printable, bounded text:
//!
//! ```compile_fail
//! use maskbus_protocol::{ErrorCode, ErrorReply};
//! let leak = ErrorReply { code: ErrorCode::SourceFailed, message: "invalid input: 078-05-1120".into() };
//! ```
//!
//! and the producer's replies carry no other kind of error (`maskbus_producer::reply`).
//!
//! A received error's `message` is not read: the consumer shows the sentence of the code it
//! knows, so not even a forged or newer producer can put text in front of a user.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a request could not be served. Codes are stable; each has one fixed sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON of a known request shape.
    Malformed,
    UnsupportedVersion,
    UnknownEntity,
    /// The producer defines no subset of that name.
    UnknownSubset,
    LimitTooLarge,
    /// The entity cannot be served as configured (no rule for a column, unsupported key).
    PolicyRefused,
    /// A column of the table (named) has no rule in the policy: a migration added it.
    NoRule,
    /// The source refused the read for good (a missing table or column, a type that does not
    /// cast, permission denied): asking again will not help.
    SourceFailed,
    /// The producer failed for now (database down, connection lost): retry later.
    Unavailable,
    /// The change stream cannot go on from the consumer's position (the slot is gone or has
    /// moved past it): start it again.
    StreamLost,
    /// The producer serves no change stream (its config names no slot).
    NoChangeStream,
    /// The requester has too many replies still pending on the bus: ack them first.
    QuotaExceeded,
    /// One row is larger than any reply may carry.
    RowTooLarge,
    /// A key value is longer than a cursor may carry.
    KeyTooLong,
    /// Tables whose updates and deletes a change stream cannot carry (no key, or no replica
    /// identity).
    NoReplicaIdentity,
    /// The producer's egress guard recognised personal data in what a rule left of a column's
    /// value (named, with the detector): the table fails closed for this run.
    Guarded,
    /// Any code this build does not know (a newer producer).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The one sentence every error of this code carries: no value, no server text.
    pub fn sentence(self) -> &'static str {
        match self {
            ErrorCode::Malformed => {
                "the request is not a maskbus request of a known shape, or sends back a key cursor the producer did not issue (each with its tag)"
            }
            ErrorCode::UnsupportedVersion => {
                "the request speaks another protocol version: run the same maskbus release on both sides"
            }
            ErrorCode::UnknownEntity => {
                "the producer's policy serves no such entity (table or schema.table)"
            }
            ErrorCode::UnknownSubset => {
                "the producer defines no such subset (names are letters, digits, _ and -, at most 63)"
            }
            ErrorCode::LimitTooLarge => {
                "the request asks for more than one request may (rows per page, pages, keys or wait time)"
            }
            ErrorCode::PolicyRefused => {
                "the producer's policy cannot serve this as configured; the producer's log names the reason"
            }
            ErrorCode::NoRule => {
                "a column of this table has no rule in the producer's policy (a migration added it): add one (`maskbus policy init --update` proposes it) and restart the producer; until then this table is not synced, the others are"
            }
            ErrorCode::SourceFailed => {
                "the source refused the read for good; the producer's log has the SQLSTATE and the objects"
            }
            ErrorCode::Unavailable => "the producer cannot reach its source now; retry later",
            ErrorCode::StreamLost => {
                "the change stream cannot go on from this position: start the stream again"
            }
            ErrorCode::NoChangeStream => {
                "this producer serves no change stream: name a replication slot in its config, or sync in watermark mode"
            }
            ErrorCode::QuotaExceeded => {
                "too many replies to this requester are still pending on the bus: claim and ack them, then ask again"
            }
            ErrorCode::RowTooLarge => {
                "a row is larger than a reply may carry (maskbus policy check reports the limit and the table)"
            }
            ErrorCode::KeyTooLong => {
                "a key value is longer than a key cursor may carry (maskbus policy check names the table)"
            }
            ErrorCode::NoReplicaIdentity => {
                "the change stream cannot carry the updates and deletes of these tables: they have no replica identity (the default with a primary key, a replica identity index, or `ALTER TABLE ... REPLICA IDENTITY FULL`, which a table without a primary key needs, whether key columns are named in the policy's [maskbus.keys] or it has none and is followed as a multiset of whole rows); give each one, or sync in watermark mode"
            }
            ErrorCode::Guarded => {
                "the producer's egress guard found personal data in what the policy lets through for this column (the detector is named): nothing of the table is sent this run; give the column a rule that hides it, or list it with a reason in the producer's reviewed-columns file"
            }
            ErrorCode::Unknown => "the producer refused the request with a code this build does not know",
        }
    }

    /// The code as it travels (`source_failed`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Malformed => "malformed",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::UnknownEntity => "unknown_entity",
            ErrorCode::UnknownSubset => "unknown_subset",
            ErrorCode::LimitTooLarge => "limit_too_large",
            ErrorCode::PolicyRefused => "policy_refused",
            ErrorCode::NoRule => "no_rule",
            ErrorCode::SourceFailed => "source_failed",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::StreamLost => "stream_lost",
            ErrorCode::NoChangeStream => "no_change_stream",
            ErrorCode::QuotaExceeded => "quota_exceeded",
            ErrorCode::RowTooLarge => "row_too_large",
            ErrorCode::KeyTooLong => "key_too_long",
            ErrorCode::NoReplicaIdentity => "no_replica_identity",
            ErrorCode::Guarded => "guarded",
            ErrorCode::Unknown => "unknown",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The longest object name an error carries (a quoted `schema.table` fits).
const MAX_NAME: usize = 140;

/// The most entities one error names.
const MAX_ENTITIES: usize = 64;

/// A name of a schema object, as an error may carry it: printable, at most [`MAX_NAME`] bytes.
fn name_of(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = if c.is_control() { '?' } else { c };
        if out.len() + c.len_utf8() > MAX_NAME {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// An SQLSTATE: five digits or capital letters, or nothing.
fn sqlstate_of(text: &str) -> Option<String> {
    (text.len() == 5
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()))
    .then(|| text.to_string())
}

/// Why a request could not be served (see the module docs: a closed type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorReply {
    code: ErrorCode,
    /// Boxed: errors travel inside `Result`s, kept small.
    names: Box<Names>,
}

/// The objects an error names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Names {
    entities: Vec<String>,
    column: Option<String>,
    rule: Option<String>,
    constraint: Option<String>,
    subset: Option<String>,
    sqlstate: Option<String>,
    detector: Option<String>,
}

impl ErrorReply {
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            names: Box::default(),
        }
    }

    /// Names an entity the error concerns (several calls name several, up to a bound).
    pub fn entity(mut self, name: &str) -> Self {
        if self.names.entities.len() < MAX_ENTITIES {
            self.names.entities.push(name_of(name));
        }
        self
    }

    pub fn column(mut self, name: &str) -> Self {
        self.names.column = Some(name_of(name));
        self
    }

    /// The rule's name (`pseudonym`, `scrub`), never its parameters.
    pub fn rule(mut self, name: &str) -> Self {
        self.names.rule = Some(name_of(name));
        self
    }

    pub fn constraint(mut self, name: &str) -> Self {
        self.names.constraint = Some(name_of(name));
        self
    }

    pub fn subset(mut self, name: &str) -> Self {
        self.names.subset = Some(name_of(name));
        self
    }

    /// The audit detector that fired (`ssn`, `source_value`): a name, never what it read.
    pub fn detector(mut self, name: &str) -> Self {
        self.names.detector = Some(name_of(name));
        self
    }

    pub fn detector_name(&self) -> Option<&str> {
        self.names.detector.as_deref()
    }

    /// The SQLSTATE the source answered with (ignored unless it has the shape of one).
    pub fn sqlstate(mut self, code: &str) -> Self {
        self.names.sqlstate = sqlstate_of(code);
        self
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The code's fixed sentence.
    pub fn message(&self) -> &'static str {
        self.code.sentence()
    }

    /// The first entity named.
    pub fn entity_name(&self) -> Option<&str> {
        self.names.entities.first().map(String::as_str)
    }

    pub fn column_name(&self) -> Option<&str> {
        self.names.column.as_deref()
    }

    pub fn sqlstate_code(&self) -> Option<&str> {
        self.names.sqlstate.as_deref()
    }
}

impl fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code.sentence(), self.code.name())?;
        if !self.names.entities.is_empty() {
            write!(f, "; entity {}", self.names.entities.join(", "))?;
        }
        let named = [
            ("column", &self.names.column),
            ("rule", &self.names.rule),
            ("constraint", &self.names.constraint),
            ("subset", &self.names.subset),
            ("detector", &self.names.detector),
            ("SQLSTATE", &self.names.sqlstate),
        ];
        for (what, name) in named {
            if let Some(name) = name {
                write!(f, "; {what} {name}")?;
            }
        }
        Ok(())
    }
}

/// The wire form: the code, its sentence, the names.
#[derive(Serialize, Deserialize)]
struct Wire {
    code: ErrorCode,
    #[serde(default)]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    entities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    column: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    constraint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sqlstate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detector: Option<String>,
}

impl Serialize for ErrorReply {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            code: self.code,
            message: Some(self.code.sentence().to_string()),
            entities: self.names.entities.clone(),
            column: self.names.column.clone(),
            rule: self.names.rule.clone(),
            constraint: self.names.constraint.clone(),
            subset: self.names.subset.clone(),
            sqlstate: self.names.sqlstate.clone(),
            detector: self.names.detector.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ErrorReply {
    /// The message is not read (the code's sentence stands for it); names are bounded again.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(d)?;
        let name = |n: Option<String>| n.as_deref().map(name_of);
        Ok(ErrorReply {
            code: wire.code,
            names: Box::new(Names {
                entities: wire
                    .entities
                    .iter()
                    .take(MAX_ENTITIES)
                    .map(|n| name_of(n))
                    .collect(),
                column: name(wire.column),
                rule: name(wire.rule),
                constraint: name(wire.constraint),
                subset: name(wire.subset),
                sqlstate: wire.sqlstate.as_deref().and_then(sqlstate_of),
                detector: name(wire.detector),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_received_message_is_never_shown_only_the_codes_sentence() {
        let body = r#"{"code":"source_failed","message":"invalid input syntax: \"078051120\"","entities":["public.t\nx"],"sqlstate":"22P02"}"#;
        let error: ErrorReply = serde_json::from_str(body).unwrap();
        let shown = error.to_string();
        assert!(!shown.contains("078051120"), "{shown}");
        assert!(shown.contains("entity public.t?x"), "{shown}");
        assert!(shown.contains("SQLSTATE 22P02"), "{shown}");
        let sent = serde_json::to_string(&error).unwrap();
        assert!(!sent.contains("078051120"), "{sent}");
    }

    #[test]
    fn names_are_bounded_and_sqlstates_checked() {
        let error = ErrorReply::new(ErrorCode::SourceFailed)
            .entity(&"x".repeat(10_000))
            .sqlstate("22P02 078-05-1120");
        assert!(error.entity_name().unwrap().len() <= MAX_NAME + 3);
        assert_eq!(error.sqlstate_code(), None);
        let unknown: ErrorReply = serde_json::from_str(r#"{"code":"from_the_future"}"#).unwrap();
        assert_eq!(unknown.code(), ErrorCode::Unknown);
    }
}
