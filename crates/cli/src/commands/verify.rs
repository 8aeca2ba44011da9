//! `maskbus verify`: compares the consumer's target with the masked source, table by table, and
//! with `--repair` makes them equal. Needs the producer running (it hashes the source).

use crate::exit::Exit;
use anyhow::{bail, Context, Result};
use clap::Args;
use maskbus_config::{self as config, AgentConfig};
use maskbus_consumer::verify::VerifyReport;
use maskbus_consumer::Consumer;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct VerifyArgs {
    /// The consumer's config (its target and bus).
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
    /// Make the target equal: delete rows the source does not have (children first), fetch the
    /// missing and different ones.
    #[arg(long)]
    repair: bool,
    /// Print the report as JSON (counts and keys, never values).
    #[arg(long)]
    json: bool,
}

pub async fn run(args: VerifyArgs) -> Result<ExitCode> {
    let AgentConfig::Consumer(consumer) = config::load(&args.config)? else {
        bail!("maskbus verify runs with the consumer's config (it reads the target); the producer must be running to hash the source");
    };
    // Replies on a mailbox of verify's own: a follower of this config may keep running.
    let consumer = Consumer::start_verifier(consumer)
        .await
        .with_context(|| format!("starting the consumer from {}", args.config.display()))?;
    let report = consumer.verify(args.repair).await?;
    print(&report, args.json);
    Ok(exit_code(&report, args.repair))
}

/// 0 when every served table is equal (or was repaired), [`Exit::Drift`] when not, or when a
/// served table was left out (not compared, or not repaired).
pub fn exit_code(report: &VerifyReport, repaired: bool) -> ExitCode {
    if report.is_equal() || (repaired && report.all_repaired()) {
        Exit::Ok.into()
    } else {
        Exit::Drift.into()
    }
}

/// A table per line; keys shown for the first few rows of each kind.
pub fn print(report: &VerifyReport, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(report).unwrap_or_default()
        );
        return;
    }
    let keys = |keys: &[Vec<String>]| {
        let shown: Vec<String> = keys
            .iter()
            .take(5)
            .map(|k| format!("({})", k.join(", ")))
            .collect();
        let more = keys.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} and {more} more", shown.join(" "))
        } else {
            shown.join(" ")
        }
    };
    println!(
        "{:<32} {:>10} {:>10} {:>8} {:>8} {:>9}",
        "table", "source", "target", "missing", "extra", "different"
    );
    for t in &report.tables {
        println!(
            "{:<32} {:>10} {:>10} {:>8} {:>8} {:>9}",
            t.entity,
            t.source_rows,
            t.target_rows,
            t.missing.len(),
            t.extra.len(),
            t.different.len()
        );
        for (kind, list) in [
            ("missing", &t.missing),
            ("extra", &t.extra),
            ("different", &t.different),
        ] {
            if !list.is_empty() {
                println!("  {kind}: {}", keys(list));
            }
        }
    }
    for t in &report.not_verified {
        println!("not verified: {} ({})", t.entity, t.reason);
    }
    for t in &report.not_repaired {
        println!("not repaired: {} ({})", t.entity, t.reason);
    }
    let left_out = report.not_verified.len() + report.not_repaired.len();
    if report.is_equal() {
        println!("the target equals the masked source");
    } else if report.deleted + report.written > 0 {
        println!(
            "repaired: {} rows deleted, {} rows written",
            report.deleted, report.written
        );
    } else if report.tables_equal() {
        println!("the tables compared equal the masked source");
    } else {
        println!(
            "the target differs from the masked source: `maskbus verify --repair` makes it equal"
        );
    }
    if left_out > 0 {
        println!(
            "NOT EQUAL: {left_out} served table(s) left out, named above: {}",
            report
                .not_verified
                .iter()
                .chain(&report.not_repaired)
                .map(|t| t.entity.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
