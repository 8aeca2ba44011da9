//! The masking boundary of maskbus: the one crate a security reviewer has to read.
//!
//! Where exactly is the SSN masked? In [`rules::ssn`], called through [`Masker::mask`], which is
//! the only way to build a [`MaskedRow`]; the producer sends nothing but `MaskedRow`s. Can
//! anything get around it? Not by leaving a column out: [`Policy::masker`] refuses any column the
//! policy does not name (deny by default). Not by building a row by hand: `MaskedRow` has no
//! public constructor and no `Deserialize`. The schema a consumer builds its tables from crosses
//! the same way: only [`schema::serve`] makes a `ServedSchema`.
//!
//! This crate must stay pure: no I/O, no tokio, no database, no files, no clock, no randomness.
//! Policies arrive as text, rows as values, keys as bytes; everything here is a function of its
//! inputs, so masking is deterministic. `tests/integration/architecture.rs` fails the build if a
//! dependency reaches an I/O crate.
//!
//! - [`rules`]: what each rule does to one value.
//! - [`json`]: rules by path inside JSON documents, deny by default inside them too.
//! - [`array`]: a rule on an array column, applied to each element.
//! - [`policy`]: the TOML policy, entity → column → rule; the bank policy is `policies/bank.toml`.
//! - [`row`]: `Masker` and `MaskedRow`.
//! - [`egress`]: the guard every masker runs on what its rules left, before a row exists.
//! - [`pseudonym`]: deterministic keyed fakes; `bijection` makes those of digits unique (FF1).
//!   `alnum` is the bijection of a key of letters and digits (one FF1 over both, classes kept).
//! - [`cursor_tag`]: tags on the key cursors the producer issues, so it takes back only its own.
//! - [`schema`]: what of the source's schema may cross; `ServedSchema` is made only there.
//! - [`fit`]: does a policy fit a live schema (`maskbus policy check`).
//! - [`catalog`]: every rule with its class, the list docs/rules.md is generated from.
//! - [`escape`]: names of production in generated comments and Markdown, kept to one line.
//!
//! `rule_spec` reads one rule as a policy file writes it (a name or a table), strictly.

mod alnum;
pub mod array;
mod bijection;
pub mod catalog;
pub mod cursor_tag;
pub mod egress;
pub mod escape;
pub mod fit;
pub mod json;
pub mod policy;
pub mod pseudonym;
pub mod row;
mod rule_spec;
pub mod rules;
pub mod schema;

pub use policy::{
    is_entity_name, is_identifier, qualify, EntityPolicy, Policy, PolicyError, BANK_POLICY_TOML,
    DEFAULT_SCHEMA,
};
pub use pseudonym::{
    estimate_key_bits, PseudonymKey, PseudonymKind, WeakKey, MIN_KEY_BITS, MIN_KEY_BYTES,
};
pub use row::{MaskedCells, MaskedRow, Masker};
pub use rules::{CellShape, Rule, RuleClass, RuleError};

/// Why a row could not be masked. Names entity, column and rule; never quotes a value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MaskError {
    #[error("unknown entity {entity:?}: the policy covers {known}")]
    UnknownEntity { entity: String, known: String },
    #[error("{entity}.{column} has no masking rule: deny by default refuses it; add a rule (or \"keep\") to the policy")]
    NoRule { entity: String, column: String },
    #[error("{entity}.{column} uses a keyed pseudonym, but no pseudonym key was configured; set pseudonym_key (or MASKBUS_PSEUDONYM_KEY)")]
    NoKey { entity: String, column: String },
    #[error("a row of {entity} has {got} values for {expected} columns")]
    Arity {
        entity: String,
        expected: usize,
        got: usize,
    },
    #[error("{entity}.{column}: what rule {rule} leaves of a value reads as {detector}{}: the egress guard refuses the row, and nothing of the table is sent this run; give the column a rule that hides it, or list it with a reason in the reviewed-columns file", if *split { " (split over adjacent columns)" } else { "" })]
    Egress {
        entity: String,
        column: String,
        rule: String,
        /// The audit's detector that fired (`ssn`, `source_value`): never the value.
        detector: &'static str,
        split: bool,
    },
    #[error("{entity}.{column}: rule {rule} refused a value: it {reason}")]
    Rule {
        entity: String,
        column: String,
        rule: String,
        reason: RuleError,
    },
}

pub use maskbus_model::shorten;
