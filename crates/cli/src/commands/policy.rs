//! `maskbus policy check`: does the masking policy fit the live source schema?

use crate::exit::Exit;
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Compare a policy with the live source schema; exits 1 when it finds errors.
    Check(CheckArgs),
    /// Propose a complete policy for the source's tables, for a reviewer to edit.
    Init(InitArgs),
}

#[derive(Args)]
pub struct InitArgs {
    /// The production database to read the schema (and a sample of values) from.
    #[command(flatten)]
    source: super::args::Source,
    /// A schema to cover (repeat for several); `public` when left out.
    #[arg(long = "schema")]
    schemas: Vec<String>,
    /// Write the policy to this file instead of standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Bring this reviewed policy up to date instead: its lines stay as they are; rules are
    /// proposed for new tables and columns only (each marked new), and rules for what the
    /// source no longer has are marked. Written back into the file (or to --output).
    #[arg(long, value_name = "FILE")]
    update: Option<PathBuf>,
}

#[derive(Args)]
pub struct CheckArgs {
    /// The production database whose schema the policy must fit.
    #[command(flatten)]
    source: super::args::Source,
    /// The policy to check.
    #[command(flatten)]
    policy: super::args::PolicyFile,
    /// A subsets file to check with it: every subset planned over the policy's tables, every
    /// root condition planned by the server (nothing runs).
    #[arg(long, env = "MASKBUS_SUBSETS")]
    subsets: Option<PathBuf>,
    /// Rows of each table to read, spread over all of it (TABLESAMPLE BERNOULLI), masked as the
    /// producer masks them, its egress guard included.
    #[arg(long, value_name = "N", default_value_t = maskbus_policy::sample::Sample::DEFAULT_ROWS, conflicts_with = "full")]
    sample: u32,
    /// Read every row of every table instead of a sample (and match against every real value
    /// of the masked columns, as a producer does).
    #[arg(long)]
    full: bool,
    /// The reviewed-columns file the producer is given (`reviewed_columns`): columns the egress
    /// guard does not read.
    #[arg(long, value_name = "FILE", env = "MASKBUS_REVIEWED_COLUMNS")]
    reviewed: Option<PathBuf>,
}

pub async fn run(command: PolicyCommand) -> Result<ExitCode> {
    match command {
        PolicyCommand::Init(args) => {
            let source = args.source.database()?;
            let schemas = if args.schemas.is_empty() {
                vec![maskbus_pg::model::DEFAULT_SCHEMA.to_string()]
            } else {
                args.schemas
            };
            let mut text = maskbus_policy::init(&source, &schemas).await?;
            if let Some(file) = &args.update {
                let current = std::fs::read_to_string(file)
                    .map_err(|e| anyhow::anyhow!("reading {}: {e}", file.display()))?;
                let (updated, summary) =
                    maskbus_policy::update::update(&file.display().to_string(), &current, &text)?;
                for (what, names) in [
                    ("new table", &summary.new_tables),
                    ("new column", &summary.new_columns),
                    ("gone column (its rule marked)", &summary.gone_columns),
                    ("gone table (its section marked)", &summary.gone_tables),
                ] {
                    for name in names {
                        eprintln!("{what}: {}", maskbus_pg::model::shorten(name));
                    }
                }
                if summary.is_empty() {
                    eprintln!("{} is up to date with the schema", file.display());
                }
                text = updated;
                let path = args.output.clone().unwrap_or_else(|| file.clone());
                std::fs::write(&path, &text)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                eprintln!(
                    "wrote {}; review the lines marked new, then run `maskbus policy check --policy {}`",
                    path.display(),
                    path.display()
                );
                return Ok(Exit::Ok.into());
            }
            match args.output {
                Some(path) => {
                    std::fs::write(&path, text)
                        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                    eprintln!(
                        "wrote {}; review it, then run `maskbus policy check --policy {}`",
                        path.display(),
                        path.display()
                    );
                }
                None => print!("{text}"),
            }
            Ok(Exit::Ok.into())
        }
        PolicyCommand::Check(args) => {
            let source = args.source.database()?;
            let policy = maskbus_policy::load(&args.policy.path, None)?;
            let sample = match (args.full, args.sample) {
                (true, _) => maskbus_policy::sample::Sample::Full,
                (false, 0) => maskbus_policy::sample::Sample::Off,
                (false, n) => maskbus_policy::sample::Sample::Rows(n),
            };
            let reviewed = match &args.reviewed {
                None => maskbus_mask::egress::Reviewed::default(),
                Some(path) => {
                    let text = std::fs::read_to_string(path).map_err(|e| {
                        anyhow::anyhow!("reading the reviewed columns {}: {e}", path.display())
                    })?;
                    maskbus_mask::egress::Reviewed::parse(&text)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
                }
            };
            let mut lines = maskbus_policy::check(&source, &policy).await?;
            let (sampled, read) =
                maskbus_policy::sample::judge_reviewed(&source, &policy, sample, reviewed).await?;
            lines.extend(sampled);
            lines.extend(maskbus_policy::check_key_lengths(&source, &policy).await?);
            println!(
                "rows: read {} rows of {} tables ({}), masked as the producer masks them, its egress guard included",
                read.rows,
                read.tables,
                match sample {
                    maskbus_policy::sample::Sample::Full => "every row".to_string(),
                    maskbus_policy::sample::Sample::Off => "none: --sample 0".to_string(),
                    maskbus_policy::sample::Sample::Rows(n) =>
                        format!("up to {n} of each table, spread over it"),
                }
            );
            println!(
                "limits: a row crosses the bus if its JSON text is at most {} MiB; a key value at most {} MiB",
                maskbus_protocol::MAX_ROW_BYTES >> 20,
                maskbus_protocol::MAX_KEY_VALUE_BYTES >> 20
            );
            print!("{}", maskbus_mask::fit::render(policy.name(), &lines));
            let (mut errors, _) = maskbus_mask::fit::tally(&lines);
            if let Some(path) = &args.subsets {
                let file = maskbus_producer::subset::SubsetFile::load(path)?;
                let problems = maskbus_producer::subset::check(&source, &policy, &file).await?;
                for problem in &problems {
                    println!("subsets: error: {problem}");
                }
                println!(
                    "subsets {}: {} subsets, {} errors",
                    path.display(),
                    file.subsets.len(),
                    problems.len()
                );
                errors += problems.len();
            }
            Ok(if errors > 0 {
                Exit::Findings.into()
            } else {
                Exit::Ok.into()
            })
        }
    }
}
