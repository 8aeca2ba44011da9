//! `maskbus bank init`: the demo bank's schema, in the databases named, and nowhere else.
//!
//! The bank is a fixture for the demo, the benchmarks and the tests. It is created only when
//! asked for by name: syncing a database of one's own needs `maskbus bus init` and a target
//! that holds the same schema as the source, never this.

use crate::exit::Exit;
use anyhow::Result;
use clap::Subcommand;
use maskbus_pg::{apply_migrations, ensure_database, Database};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum BankCommand {
    /// Create the source (and, if given, the target) database if missing and apply the bank
    /// schema (crates/bank/sql) to it: the demo's production and test databases.
    Init {
        /// The demo's production database, e.g. postgres://postgres@127.0.0.1:55432/fintechp
        #[arg(long, env = "MASKBUS_SOURCE_URL")]
        source: String,
        /// The demo's test database: the same schema, empty, filled by the consumer.
        #[arg(long, env = "MASKBUS_TARGET_URL")]
        target: Option<String>,
    },
}

pub async fn run(command: BankCommand) -> Result<ExitCode> {
    let BankCommand::Init { source, target } = command;
    // Parse both first so a typo in the second does not leave the first half done.
    let mut databases = vec![Database::parse("source", &source)?];
    if let Some(target) = target {
        let target = Database::parse("target", &target)?;
        if target.endpoint() == databases[0].endpoint() {
            anyhow::bail!(
                "the source and target URLs name the same database ({}); give each its own",
                target.endpoint()
            );
        }
        databases.push(target);
    }
    for database in &databases {
        let created = ensure_database(database).await?;
        let applied = apply_migrations(database, maskbus_bank::MIGRATIONS).await?;
        let what = match (created, applied.is_empty()) {
            (true, _) => format!("created, applied {}", applied.join(", ")),
            (false, false) => format!("applied {}", applied.join(", ")),
            (false, true) => "up to date: nothing to do".to_string(),
        };
        println!(
            "{:<6} {:<40} bank schema {what}",
            database.role,
            database.endpoint().to_string()
        );
    }
    Ok(Exit::Ok.into())
}
