//! `maskbus subset plan`: per table, how many rows each of the producer's subsets will hold and
//! how many the source has, before anything moves. Counts only, never a value.

use crate::exit::Exit;
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use maskbus_config::{self as config, AgentConfig};
use maskbus_producer::subset::plan_report;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SubsetCommand {
    /// Plan the subsets on the source and count their rows per table (exit 1 when the subsets
    /// file does not fit the source).
    Plan(PlanArgs),
}

#[derive(Args)]
pub struct PlanArgs {
    /// The producer's config (its source, policy and subsets file).
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
    /// Only this subset.
    #[arg(long)]
    subset: Option<String>,
    /// Print the plan as JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(command: SubsetCommand) -> Result<ExitCode> {
    let SubsetCommand::Plan(args) = command;
    let AgentConfig::Producer(producer) = config::load(&args.config)? else {
        bail!("maskbus subset plan runs with the producer's config (subsets are defined and computed on the source)");
    };
    let report = plan_report(&producer, args.subset.as_deref()).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for problem in &report.problems {
            println!("problem: {problem}");
        }
        for (name, counts) in &report.subsets {
            println!("subset {name}");
            println!(
                "  {:<36} {:>12} {:>12} {:>7}  role",
                "table", "subset rows", "source rows", "share"
            );
            for c in counts {
                let share = if c.source_rows > 0 {
                    format!(
                        "{:.1}%",
                        100.0 * c.subset_rows as f64 / c.source_rows as f64
                    )
                } else {
                    "-".into()
                };
                println!(
                    "  {:<36} {:>12} {:>12} {:>7}  {}",
                    c.table, c.subset_rows, c.source_rows, share, c.role
                );
            }
        }
    }
    Ok(if report.problems.is_empty() {
        Exit::Ok.into()
    } else {
        ExitCode::FAILURE
    })
}
