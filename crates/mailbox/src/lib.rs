//! The bus: a mailbox table, `mq.messages`, in a Postgres database of its own.
//!
//! The producer and the consumer never share a database or a connection string; they only
//! exchange messages here. This crate owns the bus schema (`sql/bus/`). Claims, leases, retries,
//! dead letters and audit retention arrive with the mailbox issue.

use maskbus_pg::Migration;

/// The SQL that creates the bus schema.
pub const MIGRATIONS: &[Migration] = &[Migration {
    component: "bus",
    name: "0001_mailbox.sql",
    sql: include_str!("../../../sql/bus/0001_mailbox.sql"),
}];
