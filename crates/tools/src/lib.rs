//! The tools of each role as a caller sees them (an LLM over MCP, a CI script, `maskbus run`):
//! the registry, the dispatch that refuses everything else, and what `/health` and `/metrics`
//! read. It starts nothing of its own: a producer starts in `maskbus_producer`
//! ([`Producer::start`](maskbus_producer::Producer::start)), a consumer in `maskbus_consumer`
//! ([`Consumer::start`](maskbus_consumer::Consumer::start)); [`Agent`] holds whichever the
//! config names.
//!
//! - [`Tool`]: each tool's name, description and argument schema, written once, and which role
//!   has which.
//! - [`Agent`]: a running agent of either role; its `call` dispatches a tool.
//! - `health`: what `/health` and the bus gauges read.

mod agent;
mod health;
mod tool;

pub use agent::{summarize_arguments, Agent, StartError, ToolError};
pub use health::Unhealthy;
pub use tool::{Tool, MAX_TOOL_ROWS};
