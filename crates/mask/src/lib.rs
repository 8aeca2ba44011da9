//! The masking boundary of maskbus (filled in by the masking issue).
//!
//! This crate must stay pure: no I/O, no tokio, no database, no clock, no randomness. The
//! workspace's dependency test (tests/integration) fails if it gains such a dependency.
