//! `maskbus config keys`: every config key from the one table that defines them (name,
//! environment variable, role, kind, default, doc), and the other environment variables from
//! theirs: the reference in docs/configuration.md, or the keys tab-separated for scripts
//! (`scripts/sync` keeps each agent's environment to its own keys).

use crate::exit::Exit;
use anyhow::Result;
use clap::Subcommand;
use maskbus_config::KEYS;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Every config key and every other environment variable: Markdown
    /// (docs/configuration.md), or `--tsv`: each key's name, variable, role.
    Keys {
        /// Tab-separated lines (name, environment variable, role) instead of Markdown.
        #[arg(long)]
        tsv: bool,
    },
}

pub fn run(command: ConfigCommand) -> Result<ExitCode> {
    match command {
        ConfigCommand::Keys { tsv: true } => {
            for key in KEYS {
                println!("{}\t{}\t{}", key.name, key.env, key.takes_name());
            }
        }
        ConfigCommand::Keys { tsv: false } => {
            print!("{}", maskbus_config::reference_markdown());
        }
    }
    Ok(Exit::Ok.into())
}
