//! `maskbus policy check`: does the masking policy fit the live source schema?

use anyhow::Result;
use clap::{Args, Subcommand};
use maskbus_pg::Target;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Compare a policy with the live source schema; exits 1 when it finds errors.
    Check(CheckArgs),
}

#[derive(Args)]
pub struct CheckArgs {
    /// The production database whose schema the policy must fit.
    #[arg(long, env = "MASKBUS_SOURCE_URL")]
    source: String,
    /// A policy TOML file; the bank policy (policies/bank.toml) when left out.
    #[arg(long, env = "MASKBUS_POLICY")]
    policy: Option<PathBuf>,
}

pub async fn run(command: PolicyCommand) -> Result<ExitCode> {
    match command {
        PolicyCommand::Check(args) => {
            let source = Target::parse("source", &args.source)?;
            let policy = maskbus_agents::policy::load(args.policy.as_deref(), None)?;
            let lines = maskbus_agents::policy::check(&source, &policy).await?;
            print!("{}", maskbus_mask::fit::render(policy.name(), &lines));
            let (errors, _) = maskbus_mask::fit::tally(&lines);
            Ok(if errors > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}
