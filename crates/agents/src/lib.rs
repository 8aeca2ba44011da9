//! The producer and consumer roles of maskbus: the imperative shell around the mask crate.
//!
//! - [`config`]: one TOML file (and `MASKBUS_*` variables) makes a process one role or the other;
//!   a role holding the other side's URL is refused before anything connects.
//! - [`protocol`]: the typed, versioned JSON on the bus; strict parsing, never a panic.
//! - [`source`]: the producer's reads: keyset pages by transaction window, masked.
//! - [`producer`]: the serve loop; replies carry masked rows only.
//! - [`page_cut`]: masked rows cut into pages bounded by rows and bytes (pure).
//! - [`consumer`]: the watermark sync, parents first, idempotent upserts.
//! - [`plan`]: foreign-key order (pure).
//! - [`tools`]: the tool registry of each role, shared by the CLI and MCP.
//! - [`policy`]: loading a policy, checking it against the live schema, proposing one.
//! - [`policy_init`]: the rule proposed for each column (pure).
//! - [`wire_audit`]: the audit's shell: streams the bus through `maskbus_audit`.

pub mod changes;
pub mod config;
pub mod consumer;
pub mod digest;
mod hashes;
mod health;
pub mod page_cut;
pub mod page_rows;
pub mod plan;
pub mod policy;
pub mod policy_init;
pub mod producer;
pub mod protocol;
mod rows_by_key;
pub mod schema_check;
pub mod source;
pub mod subset;
pub mod tools;
pub mod wire_audit;
