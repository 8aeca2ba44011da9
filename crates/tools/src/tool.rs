//! The tools an agent (an LLM over MCP, or a CI script) may call: each tool's name, description
//! and argument schema, written once here, and which role has which.
//!
//! One tool differs by role: `mailbox_send`. The consumer sends requests it writes (JSON the
//! producer parses strictly); the producer sends only a reply its own code built, named by the
//! `handle` a `query_masked` result carries, and never a body a caller wrote (tracker issue 51).

use maskbus_config::Role;
use serde_json::{json, Value};

/// The most rows one tool call reads or writes: what an LLM reads in one answer stays small.
/// The model-free consumer's pages are larger (`maskbus_protocol::MAX_PAGE_ROWS`).
pub const MAX_TOOL_ROWS: u32 = 200;

/// What an entity argument looks like: `table` or `schema.table` (JSON Schema for tool hosts;
/// the agents check it again with `maskbus_protocol::is_entity_name`).
const ENTITY_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_$]*([.][A-Za-z_][A-Za-z0-9_$]*)?$";

/// What a snapshot argument looks like (`xmin:xmax:xip,...`).
const SNAPSHOT_PATTERN: &str = "^[0-9]+:[0-9]+:[0-9,]*$";

/// What a cursor's tag looks like (`maskbus_protocol::is_cursor_tag`): 32 letters `a` to `p`.
const CURSOR_TAG_PATTERN: &str = "^[a-p]{32}$";

/// One tool of maskbus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    MailboxWait,
    MailboxSend,
    QueryMasked,
    InsertRows,
    QueryLocal,
    Watermark,
}

const PRODUCER_TOOLS: &[Tool] = &[Tool::MailboxWait, Tool::MailboxSend, Tool::QueryMasked];
const CONSUMER_TOOLS: &[Tool] = &[
    Tool::MailboxWait,
    Tool::MailboxSend,
    Tool::InsertRows,
    Tool::QueryLocal,
    Tool::Watermark,
];

impl Tool {
    /// The tools of a role, in registry order: the producer's one data tool is `query_masked`.
    pub fn of(role: Role) -> &'static [Tool] {
        match role {
            Role::Producer => PRODUCER_TOOLS,
            Role::Consumer => CONSUMER_TOOLS,
        }
    }

    /// The tool called `name`, of either role.
    pub fn named(name: &str) -> Option<Tool> {
        PRODUCER_TOOLS
            .iter()
            .chain(CONSUMER_TOOLS)
            .copied()
            .find(|tool| tool.name() == name)
    }

    /// The name an agent calls it by.
    pub fn name(self) -> &'static str {
        match self {
            Tool::MailboxWait => "mailbox_wait",
            Tool::MailboxSend => "mailbox_send",
            Tool::QueryMasked => "query_masked",
            Tool::InsertRows => "insert_rows",
            Tool::QueryLocal => "query_local",
            Tool::Watermark => "watermark",
        }
    }

    /// What it does, for the agent host, as `role` has it (only `mailbox_send` differs).
    pub fn description(self, role: Role) -> &'static str {
        match self {
            Tool::MailboxWait => {
                "Wait for messages addressed to this agent's mailbox on the bus (long poll). Returns up to `max` messages \
                 (sender, kind, correlation_id, reply_to, body) and marks them handled. Waits at most `timeout_ms` \
                 (default 10000, at most 60000); returns an empty list if nothing arrives."
            }
            Tool::MailboxSend => match role {
                Role::Producer => {
                    "Send a reply the producer built to a mailbox on the bus: pass the `handle` of a `query_masked` \
                     result, with `to` (the request's reply_to) and the request's `correlation_id`. The reply goes out \
                     exactly as the producer built it, with its own kind; there is no body to write. Each handle is \
                     sent once; only the 64 latest results are kept. Everything sent stays on the bus for the wire audit."
                }
                Role::Consumer => {
                    "Send one JSON message to another agent's mailbox on the bus (to the producer: a request, which it \
                     parses and checks strictly). Use `reply_to` to name where answers should go and `correlation_id` to \
                     match them. Everything sent stays on the bus for the wire audit."
                }
            },
            Tool::QueryMasked => {
                "Read one page of a production table, MASKED by the producer's policy before you see it: SSNs, cards, \
                 emails, names and account numbers come back masked, never real. Rows are in key order after \
                 `after` (the key values of the last row, as strings); `limit` is 1 to 200 (the cap: a reply never carries more than 200 rows). Returns columns, \
                 rows, next_after (pass it back as `after` for the next page; when the reply also has next_after_tag, pass that \
                 as `after_tag`: a masked key is taken back only with the tag the producer issued), more (whether rows remain) \
                 and a `handle`: pass it to mailbox_send to send this page, as built, as the producer's reply."
            }
            Tool::InsertRows => {
                "Insert rows (already masked, as received from the producer) into a table of the test database. \
                 Upserts by primary key, so inserting the same rows twice changes nothing. Insert parents before \
                 children (customers, then accounts and addresses, then cards, then transactions): rows whose parents \
                 are missing are refused. At most 200 rows per call."
            }
            Tool::QueryLocal => {
                "Read rows of a table of the test database (read-only), in primary-key order after `after`, at most \
                 `limit` (1 to 200)."
            }
            Tool::Watermark => {
                "Show how far the test database is synced, per table: the source horizon it is complete up to, a pass \
                 in progress if any, and the rows synced so far."
            }
        }
    }

    /// Its arguments as `role` takes them, as JSON Schema (an object; no other property is
    /// taken). Only `mailbox_send` differs: the producer's takes a `handle`, never a `body`.
    pub fn input_schema(self, role: Role) -> Value {
        let entity = json!({"type": "string", "pattern": ENTITY_PATTERN});
        let after = json!({"type": "array", "items": {"type": "string"}});
        let limit = json!({"type": "integer", "minimum": 1, "maximum": MAX_TOOL_ROWS});
        let snapshot = json!({"type": "string", "pattern": SNAPSHOT_PATTERN});
        let (required, properties) = match self {
            Tool::MailboxWait => (
                json!([]),
                json!({"timeout_ms": {"type": "integer", "minimum": 0, "maximum": 60000},
                       "max": {"type": "integer", "minimum": 1, "maximum": 50}}),
            ),
            Tool::MailboxSend if role == Role::Producer => (
                json!(["to", "handle"]),
                json!({"to": {"type": "string", "minLength": 1, "maxLength": 200},
                       "handle": {"type": "string", "minLength": 1, "maxLength": 64,
                                  "description": "the handle of a query_masked result"},
                       "correlation_id": {"type": "string"},
                       "reply_to": {"type": "string"}}),
            ),
            Tool::MailboxSend => (
                json!(["to", "body"]),
                json!({"to": {"type": "string", "minLength": 1, "maxLength": 200},
                       "body": {"description": "any JSON value"},
                       "kind": {"type": "string"},
                       "correlation_id": {"type": "string"},
                       "reply_to": {"type": "string"}}),
            ),
            Tool::QueryMasked => (
                json!(["entity"]),
                json!({"entity": entity, "after": after, "limit": limit,
                       "after_tag": {"type": "string", "pattern": CURSOR_TAG_PATTERN},
                       "since": snapshot, "until": snapshot}),
            ),
            Tool::InsertRows => (
                json!(["entity", "columns", "rows"]),
                json!({"entity": entity,
                       "columns": {"type": "array", "items": {"type": "string"}},
                       "rows": {"type": "array", "maxItems": MAX_TOOL_ROWS,
                                "items": {"type": "array", "items": {"type": ["string", "null"]}}}}),
            ),
            Tool::QueryLocal => (
                json!(["entity"]),
                json!({"entity": entity, "after": after, "limit": limit}),
            ),
            Tool::Watermark => (json!([]), json!({})),
        };
        let mut schema =
            json!({"type": "object", "additionalProperties": false, "properties": properties});
        if required.as_array().is_some_and(|r| !r.is_empty()) {
            schema["required"] = required;
        }
        schema
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registries_are_exactly_the_designs() {
        let names = |role| Tool::of(role).iter().map(|t| t.name()).collect::<Vec<_>>();
        assert_eq!(
            names(Role::Producer),
            ["mailbox_wait", "mailbox_send", "query_masked"]
        );
        assert_eq!(
            names(Role::Consumer),
            [
                "mailbox_wait",
                "mailbox_send",
                "insert_rows",
                "query_local",
                "watermark"
            ]
        );
        for role in [Role::Producer, Role::Consumer] {
            assert!(Tool::of(role).iter().all(
                |t| !t.description(role).is_empty() && t.input_schema(role)["type"] == "object"
            ));
        }
    }

    #[test]
    fn the_producer_sends_by_handle_and_the_consumer_by_body() {
        let send = Tool::MailboxSend;
        let producer = send.input_schema(Role::Producer);
        assert_eq!(producer["required"], json!(["to", "handle"]));
        assert!(producer["properties"].get("body").is_none());
        assert!(producer["properties"].get("kind").is_none());
        assert_eq!(producer["additionalProperties"], false);
        assert!(send.description(Role::Producer).contains("handle"));
        assert!(Tool::QueryMasked
            .description(Role::Producer)
            .contains("handle"));
        let consumer = send.input_schema(Role::Consumer);
        assert_eq!(consumer["required"], json!(["to", "body"]));
        assert!(consumer["properties"].get("handle").is_none());
    }

    #[test]
    fn a_tag_argument_is_the_shape_the_producer_checks() {
        assert_eq!(
            CURSOR_TAG_PATTERN,
            format!("^[a-p]{{{}}}$", maskbus_protocol::CURSOR_TAG_LETTERS)
        );
    }

    #[test]
    fn each_name_finds_its_tool() {
        for role in [Role::Producer, Role::Consumer] {
            for tool in Tool::of(role) {
                assert_eq!(Tool::named(tool.name()), Some(*tool));
            }
        }
        assert_eq!(Tool::named("query_masked "), None);
        assert_eq!(Tool::named("drop_table"), None);
    }
}
