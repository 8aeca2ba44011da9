//! `maskbus status`: where the consumer's target stands, for people (a table) or scripts
//! (`--json`), with an exit code CI can wait on: 0 caught up, 6 behind, 7 unknown (the
//! producer did not answer). Reads only.

use crate::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use maskbus_config::{self as config, AgentConfig};
use maskbus_consumer::status::{status, StatusReport, Verdict};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct StatusArgs {
    /// The consumer's config (its target and bus).
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
    /// How long to wait for the producer's answers.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    wait: Duration,
    /// Print the status as JSON.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: StatusArgs) -> Result<ExitCode> {
    let AgentConfig::Consumer(consumer) = config::load(&args.config)? else {
        bail!("maskbus status runs with the consumer's config (it reads the target)");
    };
    let report = status(&consumer, args.wait).await?;
    let verdict = report.verdict();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["verdict"] = serde_json::json!(match &verdict {
            Verdict::CaughtUp => "caught_up",
            Verdict::Behind(_) => "behind",
            Verdict::Unknown(_) => "unknown",
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print(&report, &verdict);
    }
    Ok(match verdict {
        Verdict::CaughtUp => Exit::Ok.into(),
        Verdict::Behind(_) => Exit::Behind.into(),
        Verdict::Unknown(_) => Exit::Unknown.into(),
    })
}

/// A watermark (a source snapshot, `xmin:xmax:xip`) as a person reads it: the source
/// transaction every row before which is in (`source txn 1081`), and how many were still
/// running then, if any. Not a snapshot's text.
fn watermark_words(watermark: &str) -> String {
    let mut parts = watermark.split(':');
    let (_, xmax, running) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
    match xmax.and_then(|x| x.parse::<u64>().ok()) {
        Some(xmax) => match running.split(',').filter(|x| !x.is_empty()).count() {
            0 => format!("source txn {xmax}"),
            n => format!("source txn {xmax} ({n} open)"),
        },
        None => "a source snapshot".to_string(),
    }
}

fn print(report: &StatusReport, verdict: &Verdict) {
    let subset = report
        .subset
        .as_deref()
        .map_or("the whole source".to_string(), |s| format!("subset {s}"));
    println!("mode {}, {subset}", report.mode);
    if !report.tables.is_empty() {
        println!(
            "{:<32} {:>10}  {:<20} {:<20}  source",
            "table", "rows", "synced up to", "moved"
        );
    }
    for t in &report.tables {
        let watermark = match (&t.watermark, t.pass_running) {
            (_, true) => "pass under way".to_string(),
            (Some(w), false) => watermark_words(w),
            (None, false) => "never synced".to_string(),
        };
        let source = match t.behind {
            Some(true) => "rows after the watermark",
            Some(false) => "no rows after it",
            None => "not asked",
        };
        println!(
            "{:<32} {:>10}  {:<20} {:<20}  {source}",
            t.entity,
            t.rows,
            watermark,
            t.last_moved.as_deref().unwrap_or("-")
        );
    }
    for c in &report.closed {
        println!("{} FAILS CLOSED: {}", c.entity, c.reason);
    }
    for c in &report.not_created {
        println!("{}: not created: {}", c.entity, c.reason);
    }
    if let Some(stream) = &report.stream {
        println!(
            "change stream: applied through {} ({} transactions, {} rows), moved {}{}",
            stream.applied,
            stream.transactions_applied,
            stream.rows_applied,
            stream.last_moved,
            match report.stream_behind {
                Some(true) => "; changes wait on the source",
                Some(false) => "; nothing waits on the source",
                None => "",
            }
        );
    }
    if let Some(xids) = report.xids_since_watermark {
        println!("source: {xids} transaction ids handed out since the oldest watermark");
    }
    for m in &report.mailboxes {
        println!(
            "bus {}: {} pending, {} leased, {} dead",
            m.mailbox, m.pending, m.leased, m.dead
        );
    }
    if let Some(audit) = &report.audit {
        let waiting =
            audit
                .oldest_unaudited_secs
                .map_or("every message audited".to_string(), |s| {
                    format!(
                        "the oldest unaudited message waits {}",
                        maskbus_pg::model::human_duration(std::time::Duration::from_secs_f64(
                            s.max(0.0)
                        ))
                    )
                });
        println!(
            "wire audit: through message {}, {waiting}, {} open findings{}",
            audit.scanned_through,
            audit.open_findings,
            if audit.stale {
                "; STALE: older than audit_max_age, run `maskbus wire-audit`"
            } else {
                ""
            }
        );
    }
    match verdict {
        Verdict::CaughtUp => println!("caught up"),
        Verdict::Behind(why) => println!("behind: {}", why.join("; ")),
        Verdict::Unknown(why) => println!("unknown: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::watermark_words;

    #[test]
    fn a_watermark_reads_as_the_source_transaction_it_reached() {
        assert_eq!(watermark_words("1081:1081:"), "source txn 1081");
        assert_eq!(
            watermark_words("1079:1085:1079,1082"),
            "source txn 1085 (2 open)"
        );
        assert_eq!(watermark_words("garbage"), "a source snapshot");
    }
}
