//! The typed, versioned JSON the producer and the consumer exchange over the bus.
//!
//! A request names an entity, a window of source transactions and a key cursor; a reply carries
//! masked rows and where to continue, or an error with a code. Requests are parsed strictly
//! (unknown fields, a wrong version, a limit over the cap, names that are not plain identifiers
//! are all errors), and parsing never panics: any body gets either a request or a [`ErrorReply`]
//! the producer can answer with.
//!
//! Nothing here touches a database. The producer builds its page replies only from
//! `maskbus_mask::MaskedRow`s ([`PageReply`] holds nothing else).

use maskbus_mask::MaskedRow;
pub use maskbus_pg::KeyCursor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol version this build speaks. Version 2 names entities `schema.table` and carries
/// keys as tuples of text (any key type, composite keys); version 1 (single bigint keys) is
/// refused with an error that says so.
pub const VERSION: u32 = 2;

/// The most columns a key (or a lookup) may have, and the longest text of one key value.
pub const MAX_KEY_COLUMNS: usize = 32;
pub const MAX_KEY_VALUE_BYTES: usize = 8192;

/// The most rows one reply may carry.
pub const MAX_PAGE_ROWS: u32 = 200;

/// The most replies one page request may ask for: the model-free consumer asks for several
/// consecutive pages at once to save round trips; each reply still carries at most
/// [`MAX_PAGE_ROWS`] rows.
pub const MAX_PAGES_PER_REQUEST: u32 = 64;

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
        limit: u32,
        /// How many consecutive pages to send, each its own reply (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pages: Option<u32>,
    },
    /// Specific rows, whatever transaction wrote them (parents a child page needs): those whose
    /// `columns` (the key, or the columns a foreign key references) equal one of `keys`.
    Rows {
        v: u32,
        entity: String,
        columns: Vec<String>,
        keys: Vec<Vec<String>>,
    },
}

impl Request {
    /// The page request a consumer sends after the pages that answered this one: the same
    /// window (closed by the `until` the answer carried), after the last key sent. `None` when
    /// nothing remains or this is not a page request. The consumer asks it; the producer
    /// prepares its answer while the current one travels.
    pub fn continuation(
        &self,
        more: bool,
        until: Option<Snapshot>,
        next_after: Option<KeyCursor>,
    ) -> Option<Request> {
        match self {
            Request::Page {
                v,
                entity,
                since,
                limit,
                pages,
                ..
            } if more => Some(Request::Page {
                v: *v,
                entity: entity.clone(),
                since: since.clone(),
                until,
                after: next_after,
                limit: *limit,
                pages: *pages,
            }),
            _ => None,
        }
    }
}

/// Why a request could not be served. Codes are stable; messages are for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON of a known request shape.
    Malformed,
    UnsupportedVersion,
    UnknownEntity,
    LimitTooLarge,
    /// The entity cannot be served as configured (no rule for a column, unsupported key).
    PolicyRefused,
    /// The source refused the read for good (a missing table or column, a type that does not
    /// cast, permission denied): asking again will not help.
    SourceFailed,
    /// The producer failed for now (database down, connection lost): retry later.
    Unavailable,
}

/// What the producer answers. Page replies are built from masked rows only.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The entities served (`schema.table`), and the key columns the policy names for some.
    Entities {
        v: u32,
        entities: Vec<String>,
        keys: BTreeMap<String, Vec<String>>,
    },
    Page(PageReply),
    Error {
        v: u32,
        error: ErrorReply,
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
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        Reply::Error {
            v: VERSION,
            error: ErrorReply {
                code,
                message: message.into(),
            },
        }
    }

    /// The message kind written on the bus.
    pub fn kind(&self) -> &'static str {
        match self {
            Reply::Entities { .. } => "entities",
            Reply::Page(_) => "page",
            Reply::Error { .. } => "error",
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
    },
    Page(ReceivedPage),
    Error {
        v: u32,
        error: ErrorReply,
    },
}

impl ReceivedReply {
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
pub use maskbus_mask::{is_entity_name, is_identifier};

/// A key tuple within bounds: 1 to [`MAX_KEY_COLUMNS`] values of at most
/// [`MAX_KEY_VALUE_BYTES`] each.
fn key_fits(values: &[String]) -> bool {
    !values.is_empty()
        && values.len() <= MAX_KEY_COLUMNS
        && values.iter().all(|v| v.len() <= MAX_KEY_VALUE_BYTES)
}

/// Parses and checks a request body. Never panics; every failure is an [`ErrorReply`].
pub fn parse_request(body: &serde_json::Value) -> Result<Request, ErrorReply> {
    let fail = |code, message: String| ErrorReply { code, message };
    let request: Request = serde_json::from_value(body.clone()).map_err(|e| {
        // serde quotes what it did not expect (an unknown field, of any size): echo a little.
        fail(
            ErrorCode::Malformed,
            format!(
                "not a maskbus request: {}",
                maskbus_pg::excerpt(&e.to_string(), 160)
            ),
        )
    })?;
    let (v, entity) = match &request {
        Request::Entities { v } => (*v, None),
        Request::Page { v, entity, .. } | Request::Rows { v, entity, .. } => (*v, Some(entity)),
    };
    if v != VERSION {
        return Err(fail(
            ErrorCode::UnsupportedVersion,
            format!(
                "protocol version {v} is not supported; this producer speaks version {VERSION}: run the same maskbus release on both sides"
            ),
        ));
    }
    if let Some(entity) = entity {
        if !is_entity_name(entity) {
            return Err(fail(
                ErrorCode::UnknownEntity,
                "the entity is not a table name (table or schema.table; letters, digits, _)"
                    .to_string(),
            ));
        }
    }
    match &request {
        Request::Page { pages: Some(pages), .. } if *pages == 0 || *pages > MAX_PAGES_PER_REQUEST => Err(fail(
            ErrorCode::LimitTooLarge,
            format!("{pages} pages asked for; ask for 1 to {MAX_PAGES_PER_REQUEST} pages of at most {MAX_PAGE_ROWS} rows"),
        )),
        Request::Page { limit, .. } if *limit == 0 || *limit > MAX_PAGE_ROWS => Err(fail(
            ErrorCode::LimitTooLarge,
            format!("limit {limit} is outside 1..={MAX_PAGE_ROWS}: a reply carries at most {MAX_PAGE_ROWS} rows"),
        )),
        Request::Page { after: Some(after), .. } if !key_fits(after) => Err(fail(
            ErrorCode::Malformed,
            format!("a key cursor holds 1 to {MAX_KEY_COLUMNS} values of at most {MAX_KEY_VALUE_BYTES} bytes"),
        )),
        Request::Rows { keys, .. } if keys.is_empty() || keys.len() > MAX_PAGE_ROWS as usize => Err(fail(
            ErrorCode::LimitTooLarge,
            format!("{} keys requested; ask for 1 to {MAX_PAGE_ROWS}", keys.len()),
        )),
        Request::Rows { columns, keys, .. }
            if !columns.iter().all(|c| is_identifier(c))
                || !key_fits(columns)
                || keys.iter().any(|k| k.len() != columns.len() || !key_fits(k)) =>
        {
            Err(fail(
                ErrorCode::Malformed,
                format!("a rows request names 1 to {MAX_KEY_COLUMNS} plain column names and, for each row, one value per column"),
            ))
        }
        _ => Ok(request),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snapshots_are_checked_for_shape() {
        for good in ["10:14:", "10:14:10,12", "1:1:"] {
            assert!(Snapshot::is_well_formed(good), "{good}");
        }
        for bad in ["", "10", "10:14", "a:b:", "10:14:x", "10:14:1,,2", "-1:2:"] {
            assert!(!Snapshot::is_well_formed(bad), "{bad}");
        }
    }

    #[test]
    fn a_page_request_round_trips() {
        let request = Request::Page {
            v: VERSION,
            entity: "sales.orders".into(),
            since: Some(Snapshot("10:14:10,12".into())),
            until: None,
            after: Some(vec!["41".into(), "2024-01-01".into()]),
            limit: 200,
            pages: None,
        };
        let body = serde_json::to_value(&request).unwrap();
        assert_eq!(body["since"], json!("10:14:10,12"));
        assert_eq!(body["after"], json!(["41", "2024-01-01"]));
        assert_eq!(parse_request(&body), Ok(request));
    }

    #[test]
    fn bad_requests_get_error_codes_not_panics() {
        let cases = [
            (json!("SELECT * FROM customers"), ErrorCode::Malformed),
            (json!([1, 2]), ErrorCode::Malformed),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 100000}),
                ErrorCode::LimitTooLarge,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 0}),
                ErrorCode::LimitTooLarge,
            ),
            (
                json!({"type": "page", "v": 1, "entity": "customers", "limit": 10}),
                ErrorCode::UnsupportedVersion,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers; DROP TABLE customers", "limit": 10}),
                ErrorCode::UnknownEntity,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "where": "1=1"}),
                ErrorCode::Malformed,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "since": "-1"}),
                ErrorCode::Malformed,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after": "0 OR 1=1"}),
                ErrorCode::Malformed,
            ),
            (
                json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id"], "keys": []}),
                ErrorCode::LimitTooLarge,
            ),
            (
                json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id"], "keys": [["1", "2"]]}),
                ErrorCode::Malformed,
            ),
            (
                json!({"type": "rows", "v": 2, "entity": "customers", "columns": ["id; --"], "keys": [["1"]]}),
                ErrorCode::Malformed,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "a.b.c", "limit": 10}),
                ErrorCode::UnknownEntity,
            ),
            (
                json!({"type": "page", "v": 2, "entity": "customers", "limit": 10, "after": []}),
                ErrorCode::Malformed,
            ),
            (json!({"type": "drop", "v": 1}), ErrorCode::Malformed),
        ];
        // An attacker's 1 MB field name comes back as a short excerpt, not whole.
        let huge = format!("f{}", "x".repeat(1 << 20));
        let error =
            parse_request(&json!({"type": "page", "v": 2, "entity": "t", "limit": 1, huge: 1}))
                .unwrap_err();
        assert_eq!(error.code, ErrorCode::Malformed);
        assert!(error.message.len() < 300, "{} bytes", error.message.len());
        for (body, code) in cases {
            assert_eq!(parse_request(&body).unwrap_err().code, code, "{body}");
        }
    }

    #[test]
    fn a_page_reads_the_same_whatever_the_order_of_its_fields() {
        let raw = |text: &str| serde_json::value::RawValue::from_string(text.to_string()).unwrap();
        let fields = r#""v":2,"entity":"public.t","key":["id"],"columns":["id","name"],"rows":[["1",null],["2","b\"c"]],"next_after":["2"],"more":false,"since":null,"until":"5:9:""#;
        let first = ReceivedReply::from_body(&raw(&format!(r#"{{"type":"page",{fields}}}"#)));
        let last = ReceivedReply::from_body(&raw(&format!(r#"{{{fields},"type":"page"}}"#)));
        let (Ok(ReceivedReply::Page(first)), Ok(ReceivedReply::Page(last))) = (first, last) else {
            panic!("both are pages");
        };
        assert_eq!(first, last);
        assert_eq!(first.rows.len(), 2);
        assert_eq!(first.rows.row(1).get(1), Some("b\"c"));
        let error = raw(r#"{"type":"error","v":2,"error":{"code":"malformed","message":"m"}}"#);
        assert!(matches!(
            ReceivedReply::from_body(&error),
            Ok(ReceivedReply::Error { .. })
        ));
        let number_cell = format!(
            r#"{{"type":"page",{}}}"#,
            fields.replace(r#"["1",null]"#, "[1,null]")
        );
        assert!(ReceivedReply::from_body(&raw(&number_cell)).is_err());
    }
}
