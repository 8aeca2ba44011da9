//! The tools of each role as a caller sees them (an LLM over MCP, a CI script, `maskbus run`):
//! the registry, the dispatch that refuses everything else, and what `/health` and `/metrics`
//! read. It starts nothing of its own: a producer starts in `maskbus_producer`
//! ([`Producer::start`](maskbus_producer::Producer::start)), a consumer in `maskbus_consumer`
//! ([`Consumer::start`](maskbus_consumer::Consumer::start)); [`Agent`] holds whichever the
//! config names.
//!
//! - `tool`: [`Tool`], each tool's name, description and argument schema, written once, and
//!   which role has which.
//! - `agent`: [`Agent`], a running agent of either role; its `call` dispatches a tool.
//! - `replies`: the replies a producer's `query_masked` built, kept by handle: the only thing
//!   its `mailbox_send` sends.
//! - `health`: what `/health` and the bus gauges read.

mod agent;
mod health;
mod replies;
mod tool;

pub use agent::{summarize_arguments, Agent, ProducerAgent, StartError, ToolError};
pub use health::Unhealthy;
pub use replies::MAX_HELD_REPLIES;
pub use tool::{Tool, MAX_TOOL_ROWS};
