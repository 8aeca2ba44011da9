//! The producer role of maskbus: it holds the production credentials, reads the policy's tables
//! read-only, masks every row with `maskbus_mask` before it touches the bus, and answers the
//! consumer's requests. It never writes a target (`tests/integration/architecture.rs`).
//!
//! - `start`: [`Producer::start`], how a producer starts from its config (the policy checked
//!   against the source before anything is served).
//! - [`serve`]: the serve loop (`Producer`): each request parsed once, answered, acked; a
//!   requester's quota of pending replies.
//! - [`source`]: masked reads of production: keyset pages by transaction window.
//! - [`page_cut`]: masked rows cut into pages bounded by rows and bytes (pure).
//! - [`reply`]: the outgoing replies, built from `MaskedRow`s and the closed error type only.
//! - [`changes`]: the change stream: a logical slot read, its transactions masked.
//! - [`subset`]: named subsets: the file, the closure planned over the schema, its filters.
//! - `ranges`: where a large table splits into key ranges read side by side.
//! - `hashes`, `rows_by_key`: verify's hashes of masked rows; parents a page needs, by key.
//! - `cursors`: the key cursors the producer issues (tagged over a masked key), the only ones
//!   it takes back.
//! - `schema`: the schema of the policy's tables, read from the catalog and let through the
//!   masking boundary (`maskbus_mask::schema`).

pub mod changes;
mod cursors;
mod hashes;
pub mod page_cut;
mod ranges;
pub mod reply;
mod rows_by_key;
mod schema;
pub mod serve;
pub mod source;
mod start;
pub mod subset;

pub use serve::{Handled, Producer};
pub use source::Source;
pub use start::{StartError, MAX_REQUEST_BYTES};
