//! `maskbus wire-audit`: prove that no PII crossed the bus. What it looks for is planned by
//! `maskbus_wire_audit::plan`, its output written by `maskbus_wire_audit::report`; this parses
//! the arguments and prints.

use crate::exit::Exit;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use maskbus_pg::Database;
use maskbus_wire_audit::{report, AuditInputs, AuditPlan, FindingTally, MessageFinding};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AuditArgs {
    /// The bus database.
    #[arg(long, env = "MASKBUS_BUS_URL")]
    bus: String,
    /// One JSON object per finding per line, then a JSON summary line (`--format json`).
    #[arg(long)]
    json: bool,
    /// `text` (the default: each finding located, then a summary), `json` (one object per
    /// finding per line, then a summary line), or `markdown` (a summary a CI job can publish:
    /// counts by detector and mailbox, never a value).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also look for the real sensitive values of this (production) database, whatever their
    /// shape; they are held as keyed hashes in memory only. Run this on the production side.
    #[arg(long, env = "MASKBUS_SOURCE_URL")]
    source: Option<String>,
    /// The policy that says which source columns are sensitive (with --source).
    #[arg(long, env = "MASKBUS_POLICY")]
    policy: Option<PathBuf>,
    /// Take the source and the policy from the producer's config (run on the production side);
    /// --source and --policy, when given, win over it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Columns the auditor has reviewed as holding no PII, each with a reason: a TOML file of
    /// `"schema.table.column" = "why"` lines under `[columns]`. Their cells are not read.
    #[arg(long, value_name = "FILE")]
    reviewed: Option<PathBuf>,
    /// With --source: draw the real values from the columns the producer's policy masks only,
    /// without the audit's own judgement of which columns are personal.
    #[arg(long)]
    policy_only: bool,
    /// Also run the design's one-line SQL grep and print its count beside ours.
    #[arg(long)]
    compare_sql: bool,
    /// Acknowledge the recorded finding with this id (see the audit's "open findings"), with
    /// --reason; nothing is scanned. Purge may then delete its message, and the audit passes
    /// without it.
    #[arg(long, value_name = "ID", requires = "reason")]
    ack: Option<i64>,
    /// Why the finding is no leak (1 to 500 characters), recorded with the auditor's role.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// List every recorded finding (open first, then acknowledged with their reasons) and exit:
    /// 0 when none is open, 1 otherwise. Nothing is scanned.
    #[arg(long, conflicts_with = "ack")]
    findings: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// `--ack` and `--findings`: triage on the bus, no scan.
async fn triage(bus: &Database, args: &AuditArgs) -> Result<ExitCode> {
    use maskbus_mailbox::audit;
    let client = bus.connect().await?;
    if let (Some(id), Some(reason)) = (args.ack, &args.reason) {
        if audit::ack_finding(bus, &client, id, reason).await? {
            println!("finding {id} acknowledged");
            return Ok(Exit::Ok.into());
        }
        eprintln!("no open finding {id}: `maskbus wire-audit --findings` lists them");
        return Ok(Exit::Findings.into());
    }
    let findings = audit::list_findings(bus, &client).await?;
    print!("{}", report::findings_table(&findings));
    Ok(Exit::findings_if(
        findings.iter().any(|f| f.acked_by.is_none()),
    ))
}

pub async fn run(args: AuditArgs) -> Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    let bus = Database::parse("bus", &args.bus)?;
    if args.ack.is_some() || args.findings {
        return triage(&bus, &args).await;
    }
    let plan = AuditPlan::prepare(&AuditInputs {
        source: args.source,
        policy: args.policy,
        config: args.config,
        reviewed: args.reviewed,
        policy_only: args.policy_only,
    })
    .await?;
    for note in plan.notes() {
        eprintln!("{note}");
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("scanning [{bar:30}] {pos}/{len} messages {per_sec} {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut last_log = std::time::Instant::now();
    let mut on_progress = |scanned: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(scanned);
        // The bar is hidden when stderr is not a terminal; a line every few seconds shows progress.
        if last_log.elapsed().as_secs() >= 5 {
            tracing::info!(scanned, total, "wire audit");
            last_log = std::time::Instant::now();
        }
    };
    let (mut tally, mut printed_header) = (FindingTally::default(), false);
    let mut on_finding = |f: &MessageFinding| match format {
        Format::Markdown => tally.add(f),
        Format::Json => println!("{}", report::finding_json(f)),
        Format::Text => bar.suspend(|| {
            if !std::mem::replace(&mut printed_header, true) {
                println!("{}", report::finding_header());
            }
            println!("{}", report::finding_line(f));
        }),
    };
    let report = maskbus_wire_audit::run(
        &bus,
        plan.context(),
        args.compare_sql,
        &mut on_progress,
        &mut on_finding,
    )
    .await?;
    bar.finish_and_clear();
    match format {
        Format::Markdown => print!("{}", tally.markdown(&report, plan.exact_match())),
        Format::Json => println!("{}", report::summary_json(&report, plan.exact_match())),
        Format::Text => print!("{}", report::summary_text(&report)),
    }
    Ok(Exit::findings_if(!report.open.is_empty()))
}
