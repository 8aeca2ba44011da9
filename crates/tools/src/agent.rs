//! A running agent of either role and the dispatch of its tools: a call outside the role's
//! registry is blocked before anything runs. Every call is traced (tool, a summary of the
//! arguments that never holds row values, outcome, row count, duration).
//!
//! What each role's `mailbox_send` may put on the bus differs: the consumer's sends the JSON its
//! caller wrote (a request, which the producer parses strictly); the producer's sends only a
//! [`Reply`] its own code built, kept under the handle its `query_masked` result carries
//! ([`ProducerAgent`]), never a body its caller wrote (tracker issue 51).

use crate::replies::Replies;
use crate::tool::{Tool, MAX_TOOL_ROWS};
use maskbus_config::{AgentConfig, Role};
use maskbus_consumer::{Consumer, ConsumerError};
use maskbus_mailbox::{body_of, Mailbox, Outgoing};
use maskbus_producer::reply::Reply;
use maskbus_producer::Producer;
use maskbus_protocol::{Request, Snapshot, VERSION};
use serde::Deserialize;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("blocked: the {role} may only use {allowed}")]
    Blocked { role: Role, allowed: String },
    #[error("invalid arguments for {tool}: {reason}")]
    BadArguments { tool: Tool, reason: String },
    #[error("{tool} failed: {reason}")]
    Failed { tool: Tool, reason: String },
}

/// Why an agent could not start (the CLI adds which config).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Producer(#[from] maskbus_producer::StartError),
    #[error(transparent)]
    Consumer(#[from] ConsumerError),
}

/// A running agent of either role, with what its tools need.
pub enum Agent {
    Producer(Box<ProducerAgent>),
    Consumer(Box<Consumer>),
}

/// A running [`Producer`] (which it derefs to) and the replies its `query_masked` built, kept
/// by handle for its `mailbox_send`: the only replies a tool call can make it send.
pub struct ProducerAgent {
    producer: Producer,
    replies: Replies,
}

impl ProducerAgent {
    pub fn new(producer: Producer) -> Self {
        Self {
            producer,
            replies: Replies::default(),
        }
    }

    /// The producer it runs.
    pub fn producer(&self) -> &Producer {
        &self.producer
    }

    /// Sends `reply` to `to` as the producer's serve loop sends its replies: serialised once
    /// by `maskbus_mailbox::body_of`, with the reply's own kind. Returns the message's id.
    async fn send_reply(
        &self,
        to: String,
        correlation_id: Option<String>,
        reply_to: Option<String>,
        reply: &Reply,
    ) -> Result<i64, String> {
        let body = body_of(reply).map_err(|e| e.to_string())?;
        self.producer
            .mailbox()
            .send(Outgoing {
                to,
                kind: reply.kind().to_string(),
                correlation_id,
                reply_to,
                body,
            })
            .await
            .map_err(|e| e.to_string())
    }
}

impl std::ops::Deref for ProducerAgent {
    type Target = Producer;

    fn deref(&self) -> &Producer {
        &self.producer
    }
}

impl Agent {
    /// Starts the role its config names: [`Producer::start`] or [`Consumer::start`].
    pub async fn start(config: &AgentConfig) -> Result<Self, StartError> {
        match config {
            AgentConfig::Producer(p) => Ok(Agent::Producer(Box::new(ProducerAgent::new(
                Producer::start(p).await?,
            )))),
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

    pub(crate) fn inbox(&self) -> &str {
        match self {
            Agent::Producer(p) => p.inbox(),
            Agent::Consumer(c) => &c.config().mailbox,
        }
    }

    pub(crate) fn mailbox(&self) -> &Mailbox {
        match self {
            Agent::Producer(p) => p.mailbox(),
            Agent::Consumer(c) => c.mailbox(),
        }
    }

    /// The tools this agent may call.
    pub fn tools(&self) -> &'static [Tool] {
        Tool::of(self.role())
    }

    /// Calls a tool by name. Anything outside the role's registry is blocked before it runs.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, ToolError> {
        let started = Instant::now();
        let arguments_summary = summarize_arguments(&arguments);
        let result = match Tool::named(tool).filter(|t| self.tools().contains(t)) {
            Some(tool) => self.dispatch(tool, arguments).await,
            None => Err(self.blocked()),
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

    fn blocked(&self) -> ToolError {
        ToolError::Blocked {
            role: self.role(),
            allowed: self
                .tools()
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    async fn dispatch(&self, tool: Tool, arguments: Value) -> Result<Value, ToolError> {
        let bad = |reason: String| ToolError::BadArguments { tool, reason };
        let failed = |reason: String| ToolError::Failed { tool, reason };
        match (tool, self) {
            (Tool::MailboxWait, agent) => {
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
            (Tool::MailboxSend, Agent::Producer(producer)) => {
                let args = reply_args(arguments).map_err(bad)?;
                let Some(reply) = producer.replies.take(&args.handle) else {
                    return Err(bad(format!(
                        "no query_masked result has the handle {:?} (it was never given, was sent already, or \
                         is older than the {} latest results): call query_masked and send the handle it returns",
                        args.handle.chars().take(64).collect::<String>(),
                        crate::replies::MAX_HELD_REPLIES
                    )));
                };
                match producer
                    .send_reply(args.to, args.correlation_id, args.reply_to, &reply)
                    .await
                {
                    Ok(id) => Ok(json!({ "sent": id, "kind": reply.kind() })),
                    Err(reason) => {
                        // Not sent: the handle stays good for another try.
                        producer.replies.put_back(args.handle, reply);
                        Err(failed(reason))
                    }
                }
            }
            (Tool::MailboxSend, Agent::Consumer(consumer)) => {
                let args: SendArgs = parse(arguments).map_err(bad)?;
                let id = consumer
                    .mailbox()
                    .send(Outgoing {
                        to: args.to,
                        kind: args.kind.unwrap_or_else(|| "message".into()),
                        correlation_id: args.correlation_id,
                        reply_to: args.reply_to,
                        body: body_of(&args.body).map_err(|e| bad(e.to_string()))?,
                    })
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok(json!({ "sent": id }))
            }
            (Tool::QueryMasked, Agent::Producer(producer)) => {
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
                let request = Request::Page {
                    v: VERSION,
                    entity: args.entity,
                    since: parse_horizon(args.since)?,
                    until: parse_horizon(args.until)?,
                    after: args.after,
                    after_tag: args.after_tag,
                    through: None,
                    through_tag: None,
                    limit,
                    pages: None,
                    subset: None,
                };
                match producer.answer(request).await.into_iter().next() {
                    Some(Reply::Error { error, .. }) => Err(failed(error.to_string())),
                    Some(reply) => {
                        // What the caller reads is the reply as built; what it may send is the
                        // reply itself, kept under the handle.
                        let mut result =
                            serde_json::to_value(&reply).map_err(|e| failed(e.to_string()))?;
                        let handle = producer.replies.keep(reply);
                        if let Value::Object(fields) = &mut result {
                            fields.insert("handle".into(), Value::String(handle));
                        }
                        Ok(result)
                    }
                    None => Err(failed("no reply".into())),
                }
            }
            (Tool::InsertRows, Agent::Consumer(consumer)) => {
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
            (Tool::QueryLocal, Agent::Consumer(consumer)) => {
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
            (Tool::Watermark, Agent::Consumer(consumer)) => {
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
            _ => Err(self.blocked()),
        }
    }
}

/// A tool's arguments, read strictly (no argument but those named; none at all reads as `{}`).
fn parse<T: for<'de> Deserialize<'de>>(arguments: Value) -> Result<T, String> {
    let arguments = if arguments.is_null() {
        json!({})
    } else {
        arguments
    };
    serde_json::from_value(arguments).map_err(|e| e.to_string())
}

/// The producer's `mailbox_send` arguments: a handle, and never a body or a kind, which a
/// caller would have written (refused by name, so a model reads why).
fn reply_args(arguments: Value) -> Result<ReplyArgs, String> {
    if let Some(written) = ["body", "kind"]
        .into_iter()
        .find(|field| arguments.get(field).is_some())
    {
        return Err(format!(
            "the producer sends no `{written}` written by a caller, only a reply its own code built: \
             pass the `handle` of a query_masked result"
        ));
    }
    parse(arguments)
}

/// The arguments worth tracing: cursors, limits and names, never a row value or a message body
/// (insert_rows carries masked rows, mailbox_send whatever a model wrote; neither is logged).
pub fn summarize_arguments(arguments: &Value) -> String {
    const SAFE: &[&str] = &[
        "entity",
        "after",
        "after_tag",
        "limit",
        "since",
        "until",
        "to",
        "kind",
        "timeout_ms",
        "max",
        "correlation_id",
        "handle",
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

/// The producer's `mailbox_send`: which reply, to where.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyArgs {
    to: String,
    handle: String,
    correlation_id: Option<String>,
    reply_to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    entity: String,
    after: Option<Vec<String>>,
    /// The `next_after_tag` of the page `after` came from: over a masked key, the producer
    /// takes back only the cursors it issued.
    after_tag: Option<String>,
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
    fn the_producers_send_takes_a_handle_and_refuses_a_body() {
        let args = reply_args(json!({
            "to": "maskbus.consumer", "handle": "r-1", "correlation_id": "ask-1"
        }))
        .unwrap();
        assert_eq!(args.handle, "r-1");
        assert_eq!(args.to, "maskbus.consumer");

        // A crafted schema reply, as a model steered by the rows it read might write one.
        let crafted = json!({
            "to": "maskbus.consumer", "kind": "schema",
            "body": {"type": "schema", "v": 2, "tables": [{"name": "customers",
                     "checks": ["pg_sleep(600) IS NOT NULL"]}]}
        });
        let refused = reply_args(crafted).unwrap_err();
        assert!(refused.contains("`body`"), "{refused}");
        assert!(refused.contains("handle"), "{refused}");
        let refused =
            reply_args(json!({"to": "x", "handle": "r-1", "kind": "schema"})).unwrap_err();
        assert!(refused.contains("`kind`"), "{refused}");
        // A body beside a good handle is refused too, and so is a null one.
        for body in [json!({"type": "page"}), Value::Null] {
            let refused = reply_args(json!({"to": "x", "handle": "r-1", "body": body}));
            assert!(refused.is_err(), "{refused:?}");
        }
        assert!(reply_args(json!({"to": "x"}))
            .unwrap_err()
            .contains("handle"));
        assert!(reply_args(json!({"to": "x", "handle": "r-1", "rows": []})).is_err());
    }
}
