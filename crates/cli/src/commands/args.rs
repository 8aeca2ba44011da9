//! The arguments several commands share, each defined once: its flag, its environment variable
//! (the same as the config key's, `docs/configuration.md`), its help, and how it becomes a
//! connection target.

use clap::Args;
use maskbus_pg::{Database, PgError};
use std::path::PathBuf;

/// `--source URL`: production (read-only for every command but `seed` and `bank init`).
#[derive(Args, Clone, Debug)]
pub struct Source {
    /// The production database (the source), e.g. postgres://reader@prod.internal/shop.
    #[arg(
        id = "source",
        long = "source",
        env = "MASKBUS_SOURCE_URL",
        value_name = "URL"
    )]
    pub url: String,
}

impl Source {
    pub fn database(&self) -> Result<Database, PgError> {
        Database::parse("source", &self.url)
    }
}

/// `--target URL`: the test database.
#[derive(Args, Clone, Debug)]
pub struct TestDb {
    /// The test database (the target), e.g. postgres://writer@test.internal/shop_test.
    #[arg(
        id = "target",
        long = "target",
        env = "MASKBUS_TARGET_URL",
        value_name = "URL"
    )]
    pub url: String,
}

impl TestDb {
    pub fn database(&self) -> Result<Database, PgError> {
        Database::parse("target", &self.url)
    }
}

/// `--policy FILE`: the masking policy (required: no policy is assumed).
#[derive(Args, Clone, Debug)]
pub struct PolicyFile {
    /// The masking policy TOML file (the demo's is policies/bank.toml).
    #[arg(
        id = "policy",
        long = "policy",
        env = "MASKBUS_POLICY",
        value_name = "FILE"
    )]
    pub path: PathBuf,
}
