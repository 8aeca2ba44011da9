//! The wire audit's detectors (filled in by the wire-audit issue).
//!
//! Pure like the mask crate: no I/O, no tokio, no database. The CLI streams bus messages in and
//! prints what this crate finds.
