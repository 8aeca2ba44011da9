//! The bank that maskbus protects: its schema and a seeder for the production database.
//!
//! `schema` hands the SQL under `crates/bank/sql/` to the migration runner; `profile` reads the named
//! sizes kept in `seeds/`; `generate` makes rows as pure functions of a seeded random generator
//! (the same seed gives the same bank, byte for byte); `seed` streams those rows into Postgres with
//! COPY. This crate writes real-looking PII on purpose and only ever into the source database:
//! nothing here reads from the bus or writes to the test side.

pub mod generate;
pub mod profile;
pub mod seed;

pub use profile::Profile;
pub use seed::{seed, SeedError, SeedEvent, SeedOptions, SeedReport};

use maskbus_pg::Migration;

/// The tables of the bank schema, parents before children (the order the seeder fills them in).
pub const TABLES: [&str; 5] = [
    "customers",
    "addresses",
    "accounts",
    "cards",
    "transactions",
];

/// The SQL that creates the bank schema, applied identically to the source and the target.
pub const MIGRATIONS: &[Migration] = &[Migration {
    component: "bank",
    name: "0001_schema.sql",
    sql: include_str!("../sql/0001_schema.sql"),
}];

/// Rows per bank table in `database` (source or target), parents first.
pub async fn row_counts(
    database: &maskbus_pg::Database,
) -> Result<Vec<(&'static str, i64)>, maskbus_pg::PgError> {
    let client = database.connect().await?;
    let mut counts = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let n: i64 = client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .map_err(|e| database.query_error(format!("counting rows of {table}"), &e))?
            .get(0);
        counts.push((table, n));
    }
    Ok(counts)
}
