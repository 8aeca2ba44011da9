//! Each role's tools: the registry an agent (an LLM over MCP, or a CI script) may call, and the
//! dispatch that refuses everything else.
//!
//! The producer registers exactly `mailbox_wait`, `mailbox_send` and `query_masked`; the consumer
//! `mailbox_wait`, `mailbox_send`, `insert_rows`, `query_local` and `watermark`. A call outside
//! the role's registry is blocked before anything runs. Every call is traced (tool, a summary of
//! the arguments that never holds row values, outcome, row count, duration).

use crate::config::{AgentConfig, ProducerConfig, Role};
use crate::consumer::{Consumer, ConsumerError};
use crate::producer::Producer;
use crate::protocol::Snapshot;
use crate::source::Source;
use maskbus_mailbox::{Mailbox, Outgoing, Settings};
use maskbus_pg::Target;
use maskbus_producer::reply::Reply;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The producer's connections to the source: requests are answered side by side (the page
/// streams of a table read in ranges, several consumers), each with its next answer prepared.
const SOURCE_CONNECTIONS: usize = 8;

/// The most rows one tool call reads or writes: what an LLM reads in one answer stays small.
/// The model-free consumer's pages are larger (`protocol::MAX_TOOL_ROWS`).
pub const MAX_TOOL_ROWS: u32 = 200;

/// What an entity argument looks like: `table` or `schema.table` (JSON Schema for tool hosts;
/// the agents check it again with `protocol::is_entity_name`).
/// The largest request body the producer reads; a bigger one is dead-lettered unparsed. It
/// holds a key cursor of `protocol::MAX_KEY_VALUE_BYTES` even if every byte is escaped.
pub const MAX_REQUEST_BYTES: usize = 8 << 20;

const ENTITY_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_$]*([.][A-Za-z_][A-Za-z0-9_$]*)?$";

pub const PRODUCER_TOOLS: &[&str] = &["mailbox_wait", "mailbox_send", "query_masked"];
pub const CONSUMER_TOOLS: &[&str] = &[
    "mailbox_wait",
    "mailbox_send",
    "insert_rows",
    "query_local",
    "watermark",
];

/// A tool as an agent host sees it.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
}

fn spec(name: &'static str) -> ToolSpec {
    let (description, input_schema) = match name {
        "mailbox_wait" => (
            "Wait for messages addressed to this agent's mailbox on the bus (long poll). Returns up to `max` messages \
             (sender, kind, correlation_id, reply_to, body) and marks them handled. Waits at most `timeout_ms` \
             (default 10000, at most 60000); returns an empty list if nothing arrives.",
            json!({"type": "object", "additionalProperties": false, "properties": {
                "timeout_ms": {"type": "integer", "minimum": 0, "maximum": 60000},
                "max": {"type": "integer", "minimum": 1, "maximum": 50}}}),
        ),
        "mailbox_send" => (
            "Send one JSON message to another agent's mailbox on the bus. Use `reply_to` to name where answers \
             should go and `correlation_id` to match them. Everything sent stays on the bus for the wire audit.",
            json!({"type": "object", "additionalProperties": false, "required": ["to", "body"], "properties": {
                "to": {"type": "string", "minLength": 1, "maxLength": 200},
                "body": {"description": "any JSON value"},
                "kind": {"type": "string"},
                "correlation_id": {"type": "string"},
                "reply_to": {"type": "string"}}}),
        ),
        "query_masked" => (
            "Read one page of a production table, MASKED by the producer's policy before you see it: SSNs, cards, \
             emails, names and account numbers come back masked, never real. Rows are in key order after \
             `after` (the key values of the last row, as strings); `limit` is 1 to 200 (the cap: a reply never carries more than 200 rows). Returns columns, \
             rows, next_after (pass it back as `after` for the next page) and more (whether rows remain).",
            json!({"type": "object", "additionalProperties": false, "required": ["entity"], "properties": {
                "entity": {"type": "string", "pattern": ENTITY_PATTERN},
                "after": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_TOOL_ROWS},
                "since": {"type": "string", "pattern": "^[0-9]+:[0-9]+:[0-9,]*$"},
                "until": {"type": "string", "pattern": "^[0-9]+:[0-9]+:[0-9,]*$"}}}),
        ),
        "insert_rows" => (
            "Insert rows (already masked, as received from the producer) into a table of the test database. \
             Upserts by primary key, so inserting the same rows twice changes nothing. Insert parents before \
             children (customers, then accounts and addresses, then cards, then transactions): rows whose parents \
             are missing are refused. At most 200 rows per call.",
            json!({"type": "object", "additionalProperties": false, "required": ["entity", "columns", "rows"], "properties": {
                "entity": {"type": "string", "pattern": ENTITY_PATTERN},
                "columns": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "maxItems": MAX_TOOL_ROWS, "items": {"type": "array", "items": {"type": ["string", "null"]}}}}}),
        ),
        "query_local" => (
            "Read rows of a table of the test database (read-only), in primary-key order after `after`, at most \
             `limit` (1 to 200).",
            json!({"type": "object", "additionalProperties": false, "required": ["entity"], "properties": {
                "entity": {"type": "string", "pattern": ENTITY_PATTERN},
                "after": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_TOOL_ROWS}}}),
        ),
        "watermark" => (
            "Show how far the test database is synced, per table: the source horizon it is complete up to, a pass \
             in progress if any, and the rows synced so far.",
            json!({"type": "object", "additionalProperties": false, "properties": {}}),
        ),
        _ => ("", json!({})),
    };
    ToolSpec {
        name,
        description,
        input_schema,
    }
}

/// The tools of a role, in registry order.
pub fn registry(role: Role) -> Vec<ToolSpec> {
    tools_of(role).iter().map(|n| spec(n)).collect()
}

/// The names of a role's tools.
pub fn tools_of(role: Role) -> &'static [&'static str] {
    match role {
        Role::Producer => PRODUCER_TOOLS,
        Role::Consumer => CONSUMER_TOOLS,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("blocked: the {role} may only use {allowed}")]
    Blocked { role: Role, allowed: String },
    #[error("invalid arguments for {tool}: {reason}")]
    BadArguments { tool: String, reason: String },
    #[error("{tool} failed: {reason}")]
    Failed { tool: String, reason: String },
}

/// A running agent of either role, with what its tools need.
pub enum Agent {
    Producer(Box<Producer>),
    Consumer(Box<Consumer>),
}

impl Agent {
    pub async fn start(config: &AgentConfig) -> Result<Self, StartError> {
        match config {
            AgentConfig::Producer(p) => Ok(Agent::Producer(Box::new(start_producer(p).await?))),
            AgentConfig::Consumer(c) => {
                let consumer = Consumer::start(c.clone()).await?;
                Ok(Agent::Consumer(Box::new(consumer)))
            }
        }
    }

    pub fn role(&self) -> Role {
        match self {
            Agent::Producer(_) => Role::Producer,
            Agent::Consumer(_) => Role::Consumer,
        }
    }

    fn inbox(&self) -> &str {
        match self {
            Agent::Producer(p) => &p.inbox,
            Agent::Consumer(c) => &c.config().mailbox,
        }
    }

    fn mailbox(&self) -> &Mailbox {
        match self {
            Agent::Producer(p) => &p.mailbox,
            Agent::Consumer(c) => c.mailbox(),
        }
    }

    /// Calls a tool by name. Anything outside the role's registry is blocked before it runs.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, ToolError> {
        let started = Instant::now();
        let arguments_summary = summarize_arguments(&arguments);
        let allowed = tools_of(self.role());
        let result = if allowed.contains(&tool) {
            self.dispatch(tool, arguments).await
        } else {
            Err(ToolError::Blocked {
                role: self.role(),
                allowed: allowed.join(", "),
            })
        };
        let (outcome, rows) = match &result {
            Ok(value) => (
                "ok",
                value
                    .get("rows")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            ),
            Err(ToolError::Blocked { .. }) => ("blocked", 0),
            Err(ToolError::BadArguments { .. }) => ("bad_arguments", 0),
            Err(ToolError::Failed { .. }) => ("failed", 0),
        };
        tracing::info!(
            role = self.role().name(),
            tool = %tool.chars().take(64).collect::<String>(),
            arguments = %arguments_summary,
            outcome,
            rows,
            duration_ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        result
    }

    async fn dispatch(&self, tool: &str, arguments: Value) -> Result<Value, ToolError> {
        let bad = |reason: String| ToolError::BadArguments {
            tool: tool.to_string(),
            reason,
        };
        let failed = |reason: String| ToolError::Failed {
            tool: tool.to_string(),
            reason,
        };
        fn parse<T: for<'de> Deserialize<'de>>(arguments: Value) -> Result<T, String> {
            let arguments = if arguments.is_null() {
                json!({})
            } else {
                arguments
            };
            serde_json::from_value(arguments).map_err(|e| e.to_string())
        }
        match (tool, self) {
            ("mailbox_wait", agent) => {
                let args: WaitArgs = parse(arguments).map_err(bad)?;
                let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(10_000).min(60_000));
                let received = agent
                    .mailbox()
                    .receive(agent.inbox(), args.max.unwrap_or(10).clamp(1, 50), timeout)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                let mut messages = Vec::new();
                for message in received.messages {
                    agent
                        .mailbox()
                        .ack(message.lease)
                        .await
                        .map_err(|e| failed(e.to_string()))?;
                    messages.push(json!({
                        "id": message.id, "from": message.sender, "kind": message.kind,
                        "correlation_id": message.correlation_id, "reply_to": message.reply_to, "body": message.body
                    }));
                }
                Ok(json!({ "messages": messages }))
            }
            ("mailbox_send", agent) => {
                let args: SendArgs = parse(arguments).map_err(bad)?;
                let id = agent
                    .mailbox()
                    .send(Outgoing {
                        to: args.to,
                        kind: args.kind.unwrap_or_else(|| "message".into()),
                        correlation_id: args.correlation_id,
                        reply_to: args.reply_to,
                        body: maskbus_mailbox::body_of(&args.body)
                            .map_err(|e| bad(e.to_string()))?,
                    })
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok(json!({ "sent": id }))
            }
            ("query_masked", Agent::Producer(producer)) => {
                let args: QueryArgs = parse(arguments).map_err(bad)?;
                let limit = args.limit.unwrap_or(50);
                if limit == 0 || limit > MAX_TOOL_ROWS {
                    return Err(bad(format!("limit {limit} is outside 1..={MAX_TOOL_ROWS}: a reply carries at most {MAX_TOOL_ROWS} rows")));
                }
                let parse_horizon = |h: Option<String>| -> Result<Option<Snapshot>, ToolError> {
                    h.map(|t| {
                        if Snapshot::is_well_formed(&t) {
                            Ok(Snapshot(t))
                        } else {
                            Err(bad(
                                "since and until are snapshots like \"xmin:xmax:xip,...\"".into(),
                            ))
                        }
                    })
                    .transpose()
                };
                let body = json!({
                    "type": "page", "v": crate::protocol::VERSION, "entity": args.entity, "limit": limit,
                    "after": args.after, "since": parse_horizon(args.since)?, "until": parse_horizon(args.until)?
                });
                match producer.answer(&body).await.into_iter().next() {
                    Some(Reply::Error { error, .. }) => Err(failed(error.to_string())),
                    Some(reply) => serde_json::to_value(&reply).map_err(|e| failed(e.to_string())),
                    None => Err(failed("no reply".into())),
                }
            }
            ("insert_rows", Agent::Consumer(consumer)) => {
                let args: InsertArgs = parse(arguments).map_err(bad)?;
                if args.rows.len() > MAX_TOOL_ROWS as usize {
                    return Err(bad(format!(
                        "{} rows; insert at most {MAX_TOOL_ROWS} at a time",
                        args.rows.len()
                    )));
                }
                let written = consumer
                    .local()
                    .insert_rows(&args.entity, args.columns, args.rows)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok(json!({ "written": written }))
            }
            ("query_local", Agent::Consumer(consumer)) => {
                let args: LocalArgs = parse(arguments).map_err(bad)?;
                let limit = args.limit.unwrap_or(50);
                if limit == 0 || limit > MAX_TOOL_ROWS {
                    return Err(bad(format!("limit {limit} is outside 1..={MAX_TOOL_ROWS}")));
                }
                let (columns, rows) = consumer
                    .local()
                    .query_local(&args.entity, args.after, limit)
                    .await
                    .map_err(|e: ConsumerError| failed(e.to_string()))?;
                Ok(json!({ "entity": args.entity, "columns": columns, "rows": rows }))
            }
            ("watermark", Agent::Consumer(consumer)) => {
                let _: EmptyArgs = parse(arguments).map_err(bad)?;
                let states = consumer.states().await.map_err(|e| failed(e.to_string()))?;
                let entities: Vec<Value> = states
                    .iter()
                    .map(|(entity, s)| {
                        json!({
                            "entity": entity, "synced_until": s.synced_until,
                            "pass_until": s.pass_until, "after_key": s.after_key,
                            "rows_synced": s.rows_synced
                        })
                    })
                    .collect();
                Ok(json!({ "watermarks": entities }))
            }
            _ => Err(ToolError::Blocked {
                role: self.role(),
                allowed: tools_of(self.role()).join(", "),
            }),
        }
    }
}

/// The arguments worth tracing: cursors, limits and names, never a row value or a message body
/// (insert_rows carries masked rows, mailbox_send whatever a model wrote; neither is logged).
pub fn summarize_arguments(arguments: &Value) -> String {
    const SAFE: &[&str] = &[
        "entity",
        "after",
        "limit",
        "since",
        "until",
        "to",
        "kind",
        "timeout_ms",
        "max",
        "correlation_id",
    ];
    let Some(object) = arguments.as_object() else {
        return String::new();
    };
    let mut parts = Vec::new();
    for (key, value) in object {
        let shown = match value {
            _ if !SAFE.contains(&key.as_str()) => match value {
                Value::Array(items) => format!("[{} items]", items.len()),
                _ => "..".to_string(),
            },
            Value::String(text) => format!("{:?}", text.chars().take(64).collect::<String>()),
            Value::Number(n) => n.to_string(),
            other => other.to_string().chars().take(64).collect(),
        };
        parts.push(format!("{key}={shown}"));
    }
    parts.join(" ")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    timeout_ms: Option<u64>,
    max: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    to: String,
    body: Value,
    kind: Option<String>,
    correlation_id: Option<String>,
    reply_to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    entity: String,
    after: Option<Vec<String>>,
    limit: Option<u32>,
    since: Option<String>,
    until: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InsertArgs {
    entity: String,
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalArgs {
    entity: String,
    after: Option<Vec<String>>,
    limit: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyArgs {}

/// Starts the producer's parts: the policy (with its key), the read-only source, the bus.
pub async fn start_producer(config: &ProducerConfig) -> Result<Producer, StartError> {
    let policy = crate::policy::load(
        &config.policy,
        config.pseudonym_key.as_ref().map(|k| k.0.as_str()),
    )?;
    if policy.needs_key() && !policy.has_key() {
        return Err(StartError::NoKey {
            policy: policy.name().to_string(),
        });
    }
    let source_target = Target::parse("source", &config.source_url.0)?;
    let bus = Target::parse("bus", &config.bus_url.0)?;
    // The same promise as `maskbus policy check`: a policy that does not fit the source is
    // refused before anything is served.
    // A table that does not fit (a migration added a column without a rule, say) is refused by
    // name when asked for, and the others are served: only a policy that fits no table at all
    // is refused here.
    let lines = crate::policy::check(&source_target, &policy).await?;
    let errors: Vec<String> = lines
        .iter()
        .filter_map(|l| match &l.verdict {
            maskbus_mask::fit::Verdict::Error(e) => Some(format!("{}.{}: {e}", l.entity, l.column)),
            _ => None,
        })
        .collect();
    let unfit: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|l| matches!(l.verdict, maskbus_mask::fit::Verdict::Error(_)))
        .map(|l| l.entity.as_str())
        .collect();
    let fits_some = policy.entities().any(|(e, _)| !unfit.contains(e));
    if fits_some {
        for error in &errors {
            tracing::error!(%error, "this table does not fit the policy: it is refused by name, the others are served (`maskbus policy check` shows every error)");
        }
    } else if !errors.is_empty() {
        return Err(StartError::Unfit {
            policy: policy.name().to_string(),
            count: errors.len(),
            first: errors
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    // Subsets, when defined: each planned and its conditions planned by the server, before
    // anything is served.
    let subsets = match &config.subsets {
        None => None,
        Some(path) => {
            let file = crate::subset::SubsetFile::load(path)?;
            let problems = crate::subset::check(&source_target, &policy, &file).await?;
            if !problems.is_empty() {
                return Err(StartError::UnfitSubsets {
                    count: problems.len(),
                    first: problems
                        .iter()
                        .take(3)
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("; "),
                });
            }
            Some(file)
        }
    };
    let mut reasons: std::collections::HashMap<String, String> = Default::default();
    for line in &lines {
        if let maskbus_mask::fit::Verdict::Error(e) = &line.verdict {
            reasons
                .entry(line.entity.clone())
                .or_insert_with(|| format!("{}: {e}", line.column));
        }
    }
    let mut source =
        Source::new(source_target, Arc::new(policy), SOURCE_CONNECTIONS)?.with_unfit(reasons);
    if let Some(file) = subsets {
        source = source.with_subsets(file);
    }
    let source = Arc::new(source);
    // Fail fast on a source that is wrong or down; wait for one that is restarting (it says
    // so: shutting down, or not accepting connections yet).
    let mut restarting = maskbus_pg::Retry::transient();
    loop {
        match source.ping().await {
            Err(maskbus_pg::PgError::Query {
                sqlstate: Some(code),
                ..
            }) if matches!(code.as_str(), "57P01" | "57P02" | "57P03")
                && restarting.pause().await => {}
            result => break result?,
        }
    }
    let feed = match &config.slot {
        Some(name) => Some(Arc::new(
            crate::changes::ChangeFeed::new(name, Arc::clone(&source))
                .map_err(StartError::Slot)?
                .streaming(config.stream_while_written),
        )),
        None => None,
    };
    // Slots hold WAL on production for as long as they exist: say so loudly at every start.
    match crate::changes::slot_report(source.target(), config.slot.as_deref()).await {
        Ok(report) => crate::changes::log_slot_report(&report),
        Err(e) => tracing::warn!(error = %e, "could not list the source's replication slots"),
    }
    // Requests are small: anything larger is refused by size before it is parsed.
    let settings = Settings {
        max_body_bytes: MAX_REQUEST_BYTES,
        ..Settings::default()
    };
    let mailbox = Mailbox::connect(bus, settings).await?;
    let mut producer = Producer::new(source, Arc::new(mailbox), config.mailbox.clone());
    producer.feed = feed;
    Ok(producer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traced_arguments_never_hold_values() {
        let summary = summarize_arguments(&json!({
            "entity": "customers", "limit": 5,
            "rows": [["224-30-8280"]], "body": {"ssn": "224-30-8280"}
        }));
        assert_eq!(
            summary,
            "body=.. entity=\"customers\" limit=5 rows=[1 items]"
        );
        assert!(!summary.contains("8280"));
    }

    #[test]
    fn the_registries_are_exactly_the_designs() {
        let names = |role| registry(role).iter().map(|t| t.name).collect::<Vec<_>>();
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
        assert!(registry(Role::Producer)
            .iter()
            .all(|t| !t.description.is_empty() && t.input_schema["type"] == "object"));
    }
}

/// Why an agent could not start (the CLI adds which config).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Policy(#[from] crate::policy::PolicyLoadError),
    #[error("policy {policy} uses keyed pseudonyms, but no pseudonym key is configured; set pseudonym_key in the producer config or MASKBUS_PSEUDONYM_KEY (`maskbus key new` makes one)")]
    NoKey { policy: String },
    #[error("policy {policy} does not fit the source ({count} errors; `maskbus policy check` shows them all): {first}")]
    Unfit {
        policy: String,
        count: usize,
        first: String,
    },
    #[error(transparent)]
    Subsets(#[from] crate::subset::SubsetFileError),
    #[error("the subsets file does not fit the source ({count} problems; `maskbus subset plan` shows them): {first}")]
    UnfitSubsets { count: usize, first: String },
    #[error("config: {0}")]
    Slot(crate::changes::SlotError),
    #[error(transparent)]
    Pg(#[from] maskbus_pg::PgError),
    #[error(transparent)]
    Mailbox(#[from] maskbus_mailbox::MailboxError),
    #[error(transparent)]
    Consumer(#[from] ConsumerError),
}
