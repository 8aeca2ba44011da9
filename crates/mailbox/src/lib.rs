//! The bus: mailboxes in one Postgres table, `mq.mail`, on a database of its own (the views
//! `mq.messages` and `mq.archive` show its unacked and acked messages).
//!
//! The producer and the consumer never share a database or a connection string; they exchange
//! messages here. What the bus guarantees (docs/internals.md says it at length):
//!
//! - **At-least-once delivery, handled once in effect.** A claim leases messages for a while and
//!   counts the attempt; an ack archives the message. A receiver that dies without acking has its
//!   messages claimed again after the lease. Handlers are idempotent (the consumer upserts), so a
//!   redelivery does not change the outcome.
//! - **Competing receivers get distinct messages**: claims use `FOR UPDATE SKIP LOCKED`.
//! - **Stale acks are refused**: every claim draws a new lease token; an ack or nack must carry
//!   the current one.
//! - **Nothing is retried forever**: a nack delays the message with exponential backoff; after
//!   `max_attempts` it moves to the dead letters with the error. So does a message whose
//!   receivers keep dying.
//! - **Each body is written once, nothing disappears unaudited**: an ack marks the message in
//!   `mq.mail` (it shows in `mq.archive`) without rewriting its body; dead ones move to
//!   `mq.dead_letters`, keeping id and body; only [`Mailbox::purge`] deletes, and only what the
//!   wire audit has scanned.
//!
//! - **Authenticated, least privilege**: every participant is its own database role; the sender
//!   of a message is the session's role, written by `mq.send`; only a mailbox's owner claims from
//!   it; only the auditor reads every body and moves the audit watermark; only the operator
//!   purges and redrives (`crates/mailbox/sql/0003_authenticated_mailboxes.sql`, [`Mailbox::grant`]).
//! - **Poison never stops a receiver**: a body over the receiver's size limit, or one it cannot
//!   parse, goes to the dead letters with the reason instead of being returned.
//!
//! No transaction is held open while a handler runs: claim, ack and nack are each one short
//! statement. Every statement on the bus's tables lives in this crate.
//!
//! Modules: `store` (the `Mailbox`: send, claim, ack, nack, dead-letter, redrive, stats, purge,
//! grants), `audit` (the auditor's reads, findings and watermark), `body` (bodies as JSON text),
//! `backoff` (the nack delays), `listener` (the LISTEN connection that wakes long polls).

pub mod audit;
mod backoff;
mod body;
mod listener;
mod store;

pub use backoff::backoff;
pub use body::{body_of, Body};
pub use store::{
    AuditStatus, Lease, Mailbox, MailboxError, MailboxStats, Message, NackOutcome, Outgoing,
    PurgeReport, Received, Settings, Wake,
};

use maskbus_pg::Migration;

/// The bus as it stands: one current definition of each table and function (`sql/mq.sql`),
/// what a fresh bus is made from. [`MIGRATIONS`] are the steps that bring an older bus to it.
pub const CURRENT: Migration = Migration {
    component: "bus",
    name: "mq.sql",
    sql: include_str!("../sql/mq.sql"),
};

/// Makes the bus schema current: [`CURRENT`] on a fresh bus, the missing steps on an old one.
pub async fn install(
    target: &maskbus_pg::Database,
) -> Result<Vec<&'static str>, maskbus_pg::PgError> {
    maskbus_pg::apply_schema(target, &CURRENT, MIGRATIONS).await
}

/// The steps from the first bus to the current one, in order: history, never edited.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        component: "bus",
        name: "0001_mailbox.sql",
        sql: include_str!("../sql/0001_mailbox.sql"),
    },
    Migration {
        component: "bus",
        name: "0002_mailbox_semantics.sql",
        sql: include_str!("../sql/0002_mailbox_semantics.sql"),
    },
    Migration {
        component: "bus",
        name: "0003_authenticated_mailboxes.sql",
        sql: include_str!("../sql/0003_authenticated_mailboxes.sql"),
    },
    Migration {
        component: "bus",
        name: "0004_bodies_written_once.sql",
        sql: include_str!("../sql/0004_bodies_written_once.sql"),
    },
    Migration {
        component: "bus",
        name: "0005_bodies_as_text.sql",
        sql: include_str!("../sql/0005_bodies_as_text.sql"),
    },
    Migration {
        component: "bus",
        name: "0006_side_doors.sql",
        sql: include_str!("../sql/0006_side_doors.sql"),
    },
    Migration {
        component: "bus",
        name: "0007_audit_triage.sql",
        sql: include_str!("../sql/0007_audit_triage.sql"),
    },
    Migration {
        component: "bus",
        name: "0008_triage_and_owners.sql",
        sql: include_str!("../sql/0008_triage_and_owners.sql"),
    },
    Migration {
        component: "bus",
        name: "0009_own_refusals.sql",
        sql: include_str!("../sql/0009_own_refusals.sql"),
    },
];

/// The longest mailbox name (and `reply_to`) the bus accepts, in bytes (`mq.limits`, whose
/// default this is; the agents check it before they send).
pub const MAX_MAILBOX_NAME_BYTES: usize = 128;

/// The longest correlation id the bus accepts, in bytes (`mq.limits`' default).
pub const MAX_CORRELATION_ID_BYTES: usize = 128;

/// The most messages one `mq.send` may carry for a role that is not a superuser.
pub const MAX_MESSAGES_PER_SEND: usize = 256;
