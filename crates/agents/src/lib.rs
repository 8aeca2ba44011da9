//! The roles of maskbus as a caller sees them: each role's tool registry (shared by the CLI
//! and MCP), how an agent starts from its config, and what its `/health` reads. A thin facade:
//! the work lives in the crates it re-exports.
//!
//! - [`tools`]: the tool registry of each role and the dispatch that refuses everything else.
//! - `health`: what `/health` and the bus gauges read.
//!
//! Where the rest lives: `maskbus_config` (a config makes a process one role),
//! `maskbus_protocol` (the wire contract), `maskbus_producer`, `maskbus_consumer`,
//! `maskbus_policy` (policy load, check, init), `maskbus_wire_audit` (the audit's shell).

mod health;
pub mod tools;

pub use maskbus_config as config;
pub use maskbus_consumer as consumer;
pub use maskbus_policy as policy;
pub use maskbus_producer::{changes, source, subset};
pub use maskbus_protocol as protocol;
pub use maskbus_wire_audit as wire_audit;

/// The producer's serve loop (`maskbus_producer::serve`).
pub mod producer {
    pub use maskbus_producer::serve::*;
}
