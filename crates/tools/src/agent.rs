//! A running agent of either role and the dispatch of its tools: a call outside the role's
//! registry is blocked before anything runs. Every call is traced (tool, a summary of the
//! arguments that never holds row values, outcome, row count, duration).

use crate::tool::{Tool, MAX_TOOL_ROWS};
use maskbus_config::{AgentConfig, Role};
use maskbus_consumer::{Consumer, ConsumerError};
use maskbus_mailbox::{Mailbox, Outgoing};
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
    Producer(Box<Producer>),
    Consumer(Box<Consumer>),
}

impl Agent {
    /// Starts the role its config names: [`Producer::start`] or [`Consumer::start`].
    pub async fn start(config: &AgentConfig) -> Result<Self, StartError> {
        match config {
            AgentConfig::Producer(p) => Ok(Agent::Producer(Box::new(Producer::start(p).await?))),
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
        fn parse<T: for<'de> Deserialize<'de>>(arguments: Value) -> Result<T, String> {
            let arguments = if arguments.is_null() {
                json!({})
            } else {
                arguments
            };
            serde_json::from_value(arguments).map_err(|e| e.to_string())
        }
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
            (Tool::MailboxSend, agent) => {
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
                    through: None,
                    limit,
                    pages: None,
                    subset: None,
                };
                match producer.answer(request).await.into_iter().next() {
                    Some(Reply::Error { error, .. }) => Err(failed(error.to_string())),
                    Some(reply) => serde_json::to_value(&reply).map_err(|e| failed(e.to_string())),
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
}
