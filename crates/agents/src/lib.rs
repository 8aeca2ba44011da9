//! The producer and consumer roles of maskbus: the imperative shell around the mask crate.
//!
//! - [`policy`]: loading a masking policy (file or the bank default) and checking it against a
//!   live schema (`maskbus policy check`).
//!
//! The roles, the protocol and the sync arrive with the agents issue.

pub mod policy;
