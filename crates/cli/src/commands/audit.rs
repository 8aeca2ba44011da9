//! `maskbus wire-audit`: prove that no PII crossed the bus.

use crate::exit::Exit;
use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use maskbus_agents::wire_audit::{self, MessageFinding};
use maskbus_pg::Target;
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

/// `--ack` and `--findings`: triage on the bus, no scan.
async fn triage(bus: &Target, args: &AuditArgs) -> Result<ExitCode> {
    use maskbus_mailbox::audit;
    let client = bus.connect().await?;
    if let (Some(id), Some(reason)) = (args.ack, &args.reason) {
        return Ok(if audit::ack_finding(bus, &client, id, reason).await? {
            println!("finding {id} acknowledged");
            Exit::Ok.into()
        } else {
            eprintln!("no open finding {id}: `maskbus wire-audit --findings` lists them");
            Exit::Findings.into()
        });
    }
    let findings = audit::list_findings(bus, &client).await?;
    let one_line = maskbus_mask::escape::one_line;
    println!(
        "{:>7}  {:>9}  {:<18} {:<15} {:<28} acknowledged",
        "finding", "message", "mailbox", "detector", "path"
    );
    for f in &findings {
        let acked = match (&f.acked_by, &f.ack_reason) {
            (Some(by), Some(reason)) => format!("by {}: {}", one_line(by), one_line(reason)),
            _ => "OPEN".to_string(),
        };
        println!(
            "{:>7}  {:>9}  {:<18} {:<15} {:<28} {acked}",
            f.id,
            f.message_id,
            one_line(&f.mailbox),
            f.detector,
            one_line(&f.path)
        );
    }
    let open = findings.iter().filter(|f| f.acked_by.is_none()).count();
    println!("{} findings: {open} open", findings.len());
    Ok(if open == 0 {
        Exit::Ok.into()
    } else {
        Exit::Findings.into()
    })
}

/// The auditor's reviewed columns: `[columns]` with `"schema.table.column" = "reason"` (a table
/// of schema public may be named without it). Every line needs a reason.
fn reviewed_columns(path: &std::path::Path) -> Result<std::collections::HashSet<(String, String)>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading the reviewed columns {}: {e}", path.display()))?;
    let doc: toml::Table = text.parse().map_err(|e| {
        anyhow::anyhow!("the reviewed columns {} are not TOML: {e}", path.display())
    })?;
    let mut out = std::collections::HashSet::new();
    let Some(columns) = doc.get("columns").and_then(|c| c.as_table()) else {
        anyhow::bail!(
            "{} has no [columns] table of \"schema.table.column\" = \"reason\" lines",
            path.display()
        );
    };
    for (name, reason) in columns {
        let reason = reason.as_str().unwrap_or_default().trim();
        anyhow::ensure!(
            !reason.is_empty(),
            "{}: {} needs a reason (why it holds no PII)",
            path.display(),
            maskbus_mask::shorten(name)
        );
        let Some((table, column)) = name.rsplit_once('.') else {
            anyhow::bail!(
                "{}: {} is not table.column or schema.table.column",
                path.display(),
                maskbus_mask::shorten(name)
            );
        };
        out.insert((maskbus_mask::qualify(table), column.to_lowercase()));
    }
    Ok(out)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

pub async fn run(args: AuditArgs) -> Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    let bus = Target::parse("bus", &args.bus)?;
    if args.ack.is_some() || args.findings {
        return triage(&bus, &args).await;
    }
    let (mut source_url, mut policy_path) = (args.source.clone(), args.policy.clone());
    let mut pseudonym_key = None;
    let reviewed = match &args.reviewed {
        Some(path) => reviewed_columns(path)?,
        None => Default::default(),
    };
    if let Some(path) = &args.config {
        match maskbus_agents::config::load(path)? {
            maskbus_agents::config::AgentConfig::Producer(producer) => {
                source_url = source_url.or(Some(producer.source_url.0));
                policy_path = policy_path.or(Some(producer.policy));
                pseudonym_key = producer.pseudonym_key.map(|k| k.0);
            }
            maskbus_agents::config::AgentConfig::Consumer(_) => anyhow::bail!(
                "--config {} is a consumer's: the audit takes the source and policy from the producer's config",
                path.display()
            ),
        }
    }
    let exact = match &source_url {
        Some(url) => {
            let source = Target::parse("source", url)?;
            let policy_path = policy_path.ok_or_else(|| {
                anyhow::anyhow!(
                    "--source needs --policy (or --config with the producer's config): the policy says which source columns are sensitive"
                )
            })?;
            let policy = maskbus_agents::policy::load(&policy_path, pseudonym_key.as_deref())?;
            // The audit's own judgement of which columns are personal: policy init's reading of
            // the source, independent of the producer's policy.
            let mut judged = if args.policy_only {
                Default::default()
            } else {
                let proposal = maskbus_agents::policy::init(&source, &policy.schemas()).await?;
                wire_audit::masked_columns(&maskbus_mask::Policy::from_toml(
                    "the audit's judgement",
                    &proposal,
                )?)
            };
            judged.retain(|pair| !reviewed.contains(pair));
            let (matcher, stats) =
                wire_audit::load_source_values(&source, &policy, &judged).await?;
            if !stats.kept_but_judged_personal.is_empty() {
                eprintln!(
                    "the audit's own judgement holds {} columns personal that the policy keeps, and looks for their real values too: {}",
                    stats.kept_but_judged_personal.len(),
                    stats.kept_but_judged_personal.join(", ")
                );
            }
            if stats.fakes_verified == Some(false) {
                eprintln!(
                    "warning: the policy's ssn and digits pseudonyms write fakes shaped like real values; \
                     only the pseudonym key tells them apart: audit with --config <the producer's config> to verify them"
                );
            }
            eprintln!(
                "exact match: {} real values from {} columns of {} held as keyed hashes; left out {} unchanged by their rule, \
                 {} that a pseudonym could also produce, {} too short to mean anything",
                stats.loaded,
                stats.columns,
                source.endpoint(),
                stats.unchanged_by_rule,
                stats.possible_pseudonyms,
                stats.too_short
            );
            Some((matcher, wire_audit::kept_columns(&policy, &judged)))
        }
        None => None,
    };
    let context = maskbus_audit::Context {
        exact: exact.as_ref().map(|(m, _)| m),
        kept: exact.as_ref().map(|(_, k)| k),
        reviewed: (!reviewed.is_empty()).then_some(&reviewed),
    };

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
    let json = format == Format::Json;
    let mut printed_header = false;
    let mut tally = wire_audit::FindingTally::default();
    let mut on_finding = |f: &MessageFinding| {
        if format == Format::Markdown {
            tally.add(f);
        } else if json {
            println!(
                "{}",
                serde_json::json!({
                    "message": f.message_id, "table": f.table, "mailbox": f.mailbox, "path": f.path,
                    "detector": f.hit.detector.name(), "length": f.hit.length, "last_two": f.hit.last_two, "split": f.hit.split
                })
            );
        } else {
            if !printed_header {
                bar.suspend(|| {
                    println!(
                        "{:>9}  {:<9} {:<18} {:<28} {:<15} evidence",
                        "message", "table", "mailbox", "path", "detector"
                    )
                });
                printed_header = true;
            }
            bar.suspend(|| {
                println!(
                    "{:>9}  {:<9} {:<18} {:<28} {:<15} {}",
                    f.message_id,
                    f.table,
                    f.mailbox,
                    f.path,
                    f.hit.detector.name(),
                    maskbus_audit::evidence(&f.hit)
                )
            });
        }
    };
    let report = wire_audit::run(
        &bus,
        context,
        args.compare_sql,
        &mut on_progress,
        &mut on_finding,
    )
    .await?;
    bar.finish_and_clear();
    let seconds = report.elapsed.as_secs_f64();
    if format == Format::Markdown {
        print!("{}", tally.markdown(&report, exact.is_some()));
    } else if json {
        println!(
            "{}",
            serde_json::json!({
                "summary": true, "scanned": report.scanned, "bytes": report.bytes, "seconds": seconds,
                "findings": report.findings, "horizon": report.horizon,
                "open_findings": report.open.iter().map(|f| f.id).collect::<Vec<_>>(),
                "acknowledged": report.acknowledged,
                "sql_one_liner": report.sql_one_liner.map(|(n, _)| n),
                "exact_match": exact.is_some(),
            })
        );
    } else {
        if let Some((matches, took)) = report.sql_one_liner {
            println!(
                "design's SQL one-liner: {matches} messages match in {:.2} s (this audit: {} findings in {} messages)",
                took.as_secs_f64(),
                report.findings,
                report.messages_with_findings
            );
        }
        if !report.open.is_empty() {
            println!(
                "open findings, kept on the bus as evidence until acknowledged (`maskbus wire-audit --ack ID --reason TEXT`):"
            );
            for f in report.open.iter().take(50) {
                println!(
                    "  finding {}: message {} {} at {}",
                    f.id,
                    f.message_id,
                    f.detector,
                    maskbus_mask::escape::one_line(&f.path)
                );
            }
            if report.open.len() > 50 {
                println!(
                    "  ... {} more: `maskbus wire-audit --findings`",
                    report.open.len() - 50
                );
            }
        }
        if report.acknowledged > 0 {
            println!(
                "{} findings of this scan were acknowledged earlier (with their reasons: `--findings`)",
                report.acknowledged
            );
        }
        println!(
            "scanned {} messages ({} bytes) in {seconds:.2} s: {} findings",
            report.scanned, report.bytes, report.findings
        );
    }
    Ok(if report.open.is_empty() {
        Exit::Ok.into()
    } else {
        Exit::Findings.into()
    })
}
