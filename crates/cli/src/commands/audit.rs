//! `maskbus wire-audit`: prove that no PII crossed the bus. What it looks for is planned by
//! `maskbus_wire_audit::plan`, its output written by `maskbus_wire_audit::report`; this parses
//! the arguments and prints.

use crate::exit::Exit;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use maskbus_pg::{Database, PgError};
use maskbus_wire_audit::triage::{self, Selection};
use maskbus_wire_audit::{plan, report, AuditInputs, AuditPlan, FindingTally, MessageFinding};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AuditArgs {
    /// The bus database, as the bus's auditor. Without it, the `bus_url` of --config.
    #[arg(long, env = "MASKBUS_BUS_URL")]
    bus: Option<String>,
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
    /// Take the bus, the source, the policy and the pseudonym key from the producer's config
    /// (run on the production side): the key tells the fakes of the `ssn` and `digits`
    /// pseudonyms from real values. --bus, --source and --policy, when given, win over it (the
    /// config's bus_url is the producer's role: give --bus when the auditor is another role).
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
    /// Acknowledge recorded findings by id (see the audit's "open findings"), all with one
    /// --reason, in one call: `--ack 3 --ack 5` or `--ack 3,5`. Nothing is scanned. Purge may
    /// then delete their messages, and the audit passes without them; exit 1 names the ids that
    /// are no open finding.
    #[arg(long, value_name = "ID", value_delimiter = ',', requires = "reason")]
    ack: Vec<i64>,
    /// Acknowledge every open finding of this detector (`ssn`, `card`, `email`, `phone`,
    /// `account_number`, `routing_number`, `birth_date`, `source_value`) at --ack-path or in
    /// --ack-column, with one --reason; exit 1 when none matches.
    #[arg(
        long,
        value_name = "DETECTOR",
        requires = "reason",
        conflicts_with = "ack"
    )]
    ack_detector: Option<String>,
    /// With --ack-detector: the findings at this path, as `--findings` lists it; `[*]` stands
    /// for any index (`$.rows[*][4]`).
    #[arg(
        long,
        value_name = "PATH",
        requires = "ack_detector",
        conflicts_with = "ack_column"
    )]
    ack_path: Option<String>,
    /// With --ack-detector: the findings in this column of the producer's page replies
    /// (`schema.table.column`, or `table.column` in schema public).
    #[arg(long, value_name = "COLUMN", requires = "ack_detector")]
    ack_column: Option<String>,
    /// Why the findings are no leak, recorded with the auditor's role: words (2 letters or more
    /// once spaces, invisible and format characters are left out), at most 500 characters, on
    /// one line, and nothing the audit's detectors flag (no SSN, card, email, ...).
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
    /// List every recorded finding (open first, then acknowledged with their reasons) and exit:
    /// 0 when none is open, 1 otherwise. Nothing is scanned.
    #[arg(long, conflicts_with_all = ["ack", "ack_detector"])]
    findings: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// What `--ack` or `--ack-detector` with `--ack-path` or `--ack-column` name, if anything.
fn selection(args: &AuditArgs) -> Result<Option<Selection>> {
    if !args.ack.is_empty() {
        return Ok(Some(Selection::Ids(args.ack.clone())));
    }
    let Some(detector) = &args.ack_detector else {
        if args.reason.is_some() {
            anyhow::bail!("--reason goes with --ack ID or --ack-detector NAME: say which findings it acknowledges");
        }
        return Ok(None);
    };
    Ok(Some(match (&args.ack_path, &args.ack_column) {
        (Some(path), _) => Selection::Path {
            detector: detector.clone(),
            path: path.clone(),
        },
        (None, Some(column)) => Selection::column(detector, column)?,
        (None, None) => anyhow::bail!(
            "--ack-detector {detector} needs --ack-path PATH or --ack-column SCHEMA.TABLE.COLUMN: where its findings are"
        ),
    }))
}

/// `--ack`, `--ack-detector` and `--findings`: triage on the bus, no scan.
async fn triage(
    bus: &Database,
    args: &AuditArgs,
    selection: Option<Selection>,
) -> Result<ExitCode> {
    use maskbus_mailbox::audit;
    if let Some(selection) = selection {
        let reason = args.reason.as_deref().unwrap_or_default();
        let done = triage::acknowledge(bus, &selection, reason).await?;
        let ids = |ids: &[i64]| {
            ids.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match done.acked.as_slice() {
            [] => {}
            [one] => println!("finding {one} acknowledged"),
            many => println!("{} findings acknowledged: {}", many.len(), ids(many)),
        }
        if !done.not_open.is_empty() {
            eprintln!(
                "no open finding {}: `maskbus wire-audit --findings` lists them",
                ids(&done.not_open)
            );
            return Ok(Exit::Findings.into());
        }
        if done.acked.is_empty() {
            eprintln!(
                "no open {}: `maskbus wire-audit --findings` lists them",
                selection.describe()
            );
            return Ok(Exit::Findings.into());
        }
        return Ok(Exit::Ok.into());
    }
    let client = bus.connect().await?;
    let findings = audit::list_findings(bus, &client).await?;
    print!("{}", report::findings_table(&findings));
    Ok(Exit::findings_if(
        findings.iter().any(|f| f.acked_by.is_none()),
    ))
}

/// An error of the bus whose URL came from --config: that is the producer's role, which may
/// not be the bus's auditor.
fn from_config_bus(e: anyhow::Error, config: &std::path::Path) -> anyhow::Error {
    let refused = e.chain().any(|cause| {
        cause.downcast_ref::<PgError>().is_some_and(|pg| match pg {
            PgError::Connect { role, .. } => *role == "bus",
            PgError::Query { role, .. } => *role == "bus" && pg.sqlstate() == Some("42501"),
            PgError::BadUrl { .. } => false,
        })
    });
    if !refused {
        return e;
    }
    e.context(format!(
        "the bus is the bus_url of {} (the producer's role); the audit runs as the bus's auditor: pass --bus with the auditor's role, or grant that role the part (`maskbus bus grant --auditor ROLE`)",
        config.display()
    ))
}

pub async fn run(args: AuditArgs) -> Result<ExitCode> {
    let config = args.config.clone();
    let bus_from_config = args.bus.is_none() && config.is_some();
    match (run_on_the_bus(args).await, config) {
        (Err(e), Some(config)) if bus_from_config => Err(from_config_bus(e, &config)),
        (result, _) => result,
    }
}

async fn run_on_the_bus(args: AuditArgs) -> Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    let selection = selection(&args)?;
    let url = match (&args.bus, &args.config) {
        (Some(url), _) => url.clone(),
        (None, Some(config)) => plan::bus_url_of(config)?,
        (None, None) => anyhow::bail!(
            "no bus database given: pass --bus URL (as the bus's auditor), set MASKBUS_BUS_URL, or give --config with the producer's config"
        ),
    };
    let bus = Database::parse("bus", &url)?;
    if selection.is_some() || args.findings {
        return triage(&bus, &args, selection).await;
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
