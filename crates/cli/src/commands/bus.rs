//! `maskbus bus ...`: operator commands on the mailbox.

use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use maskbus_mailbox::{Mailbox, Outgoing, Settings};
use maskbus_pg::Database;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct BusArgs {
    // Read by hand (`run`), not by clap's `env`: a global argument with an environment default
    // lets the variable override a `--bus` given before the subcommand.
    /// The bus database (else the environment's MASKBUS_BUS_URL).
    #[arg(long, global = true)]
    bus: Option<String>,
    #[command(subcommand)]
    command: BusCommand,
}

#[derive(Subcommand)]
enum BusCommand {
    /// Create the bus database if missing and apply the mailbox schema (schema mq); touches no
    /// other database.
    Init,
    /// Give database roles their parts on the bus (run as the bus's owner): each participant is
    /// its own role with the least privilege it needs.
    Grant {
        /// The producer's role: owns (claims from) the producer mailbox.
        #[arg(long)]
        producer: Option<String>,
        /// The consumer's role: owns the consumer mailbox, and the two `maskbus status` and
        /// `maskbus verify` take their replies on (`<mailbox>.status`, `<mailbox>.verify`).
        #[arg(long)]
        consumer: Option<String>,
        /// The auditor's role: reads every message, records the audit watermark.
        #[arg(long)]
        auditor: Option<String>,
        /// The operator's role: stats, redrive, purge, send.
        #[arg(long)]
        operator: Option<String>,
        #[arg(long, default_value = maskbus_config::DEFAULT_PRODUCER_MAILBOX)]
        producer_mailbox: String,
        #[arg(long, default_value = maskbus_config::DEFAULT_CONSUMER_MAILBOX)]
        consumer_mailbox: String,
    },
    /// Put one message on the bus. Its sender is the database role you connect as.
    Send {
        /// The recipient mailbox.
        #[arg(long)]
        to: String,
        /// The message body: one JSON value.
        #[arg(
            long,
            conflicts_with = "body_file",
            required_unless_present = "body_file"
        )]
        body: Option<String>,
        /// Read the body from a file, or from standard input with `-`.
        #[arg(long)]
        body_file: Option<std::path::PathBuf>,
        /// The message kind.
        #[arg(long, default_value = "note")]
        kind: String,
        /// Where replies should go.
        #[arg(long)]
        reply_to: Option<String>,
        #[arg(long)]
        correlation_id: Option<String>,
    },
    /// Per mailbox: pending, leased, delayed, archived and dead counts, and the oldest pending
    /// age; then how far the wire audit is, and STALE when a message waited too long for it.
    Stats {
        /// How long a message may wait for the wire audit before the audit is called stale.
        #[arg(long, env = "MASKBUS_AUDIT_MAX_AGE", value_parser = humantime::parse_duration, default_value = "24h")]
        audit_max_age: std::time::Duration,
    },
    /// Move the dead letters of a mailbox back to pending.
    Redrive {
        #[arg(long)]
        mailbox: String,
    },
    /// Delete archived messages older than a duration that a wire audit has already scanned.
    Purge {
        /// e.g. 7d, 12h, 30m.
        #[arg(long, value_parser = humantime::parse_duration)]
        older_than: Duration,
        /// Also delete audited dead letters (they can no longer be redriven).
        #[arg(long)]
        dead_letters: bool,
    },
}

pub async fn run(args: BusArgs) -> Result<ExitCode> {
    let url = args
        .bus
        .or_else(|| {
            std::env::var("MASKBUS_BUS_URL")
                .ok()
                .filter(|v| !v.is_empty())
        })
        .context("no bus database given: pass --bus URL or set MASKBUS_BUS_URL")?;
    let target = Database::parse("bus", &url)?;
    match args.command {
        BusCommand::Init => {
            let created = maskbus_pg::ensure_database(&target).await?;
            let applied = maskbus_mailbox::install(&target).await?;
            let what = match (created, applied.is_empty()) {
                (true, _) => format!("created, applied {}", applied.join(", ")),
                (false, false) => format!("applied {}", applied.join(", ")),
                (false, true) => "up to date: nothing to do".to_string(),
            };
            println!("bus {} {what}", target.endpoint());
        }
        BusCommand::Grant {
            producer,
            consumer,
            auditor,
            operator,
            producer_mailbox,
            consumer_mailbox,
        } => {
            let parts = [
                (producer, "producer", Some(producer_mailbox)),
                (consumer, "consumer", Some(consumer_mailbox)),
                (auditor, "auditor", None),
                (operator, "operator", None),
            ];
            if parts.iter().all(|(role, _, _)| role.is_none()) {
                anyhow::bail!(
                    "name at least one role: --producer, --consumer, --auditor or --operator"
                );
            }
            let mailbox = Mailbox::connect(target, Settings::default()).await?;
            for (role, part, owned) in parts {
                let Some(role) = role else { continue };
                // A consumer also owns the mailboxes `maskbus status` and `maskbus verify` take
                // their replies on.
                let owns: Vec<String> = match (&owned, part) {
                    (Some(owned), "consumer") => maskbus_config::consumer_mailboxes(owned).to_vec(),
                    _ => owned.iter().cloned().collect(),
                };
                if owns.is_empty() {
                    mailbox.grant(&role, part, None).await?;
                }
                for owned in &owns {
                    mailbox.grant(&role, part, Some(owned)).await?;
                }
                match owns.as_slice() {
                    [] => println!("{role}: {part}"),
                    [one] => println!("{role}: {part}, owns mailbox {one}"),
                    owns => println!("{role}: {part}, owns mailboxes {}", owns.join(", ")),
                }
            }
        }
        BusCommand::Send {
            to,
            body,
            body_file,
            kind,
            reply_to,
            correlation_id,
        } => {
            let body = match (body, body_file) {
                (Some(body), _) => body,
                (None, Some(path)) if path.as_os_str() == "-" => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                        .context("reading the body from standard input")?;
                    text
                }
                (None, Some(path)) => std::fs::read_to_string(&path)
                    .with_context(|| format!("reading the body from {}", path.display()))?,
                (None, None) => anyhow::bail!("give the body with --body or --body-file"),
            };
            // Parse before connecting: a malformed body never reaches the bus.
            let body: maskbus_mailbox::Body = serde_json::from_str(&body).map_err(|e| {
                anyhow::anyhow!("the body is not valid JSON ({e}); give one JSON value, e.g. '{{\"entity\":\"customers\"}}'")
            })?;
            let mailbox = Mailbox::connect(target, Settings::default()).await?;
            let id = mailbox
                .send(Outgoing {
                    to: to.clone(),
                    kind,
                    correlation_id,
                    reply_to,
                    body,
                })
                .await?;
            println!("sent message {id} to {to}");
        }
        BusCommand::Stats { audit_max_age } => {
            let mailbox = Mailbox::connect(target, Settings::default()).await?;
            let stats = mailbox.stats().await?;
            println!(
                "{:<24} {:>8} {:>8} {:>8} {:>9} {:>6} {:>14}",
                "mailbox", "pending", "leased", "delayed", "archived", "dead", "oldest pending"
            );
            for s in &stats {
                let age = s
                    .oldest_pending_age_secs
                    .map(|a| format!("{a:.1} s"))
                    .unwrap_or_else(|| "-".into());
                println!(
                    "{:<24} {:>8} {:>8} {:>8} {:>9} {:>6} {:>14}",
                    s.mailbox, s.pending, s.leased, s.delayed, s.archived, s.dead, age
                );
            }
            if stats.is_empty() {
                println!("(no messages on the bus)");
            }
            let audit = mailbox.audit_status().await?;
            let waiting = audit
                .oldest_unaudited_secs
                .map_or("every message audited".to_string(), |s| {
                    format!("the oldest unaudited message waits {s:.0} s")
                });
            println!(
                "wire audit: through message {}, {waiting}; {} open findings, {} acknowledged",
                audit.scanned_through, audit.open_findings, audit.acked_findings
            );
            if audit.is_stale(audit_max_age) {
                println!(
                    "STALE: a message has waited over {} for the wire audit; run `maskbus wire-audit`",
                    humantime::format_duration(audit_max_age)
                );
            }
        }
        BusCommand::Redrive { mailbox: name } => {
            let mailbox = Mailbox::connect(target, Settings::default()).await?;
            let moved = mailbox.redrive(&name).await?;
            println!("moved {moved} dead letters of {name} back to pending");
        }
        BusCommand::Purge {
            older_than,
            dead_letters,
        } => {
            let mailbox = Mailbox::connect(target, Settings::default()).await?;
            let report = mailbox.purge(older_than, dead_letters).await?;
            println!(
                "purged {} archived and {} dead messages older than {} (audited through id {})",
                report.deleted_archived,
                report.deleted_dead,
                humantime::format_duration(older_than),
                report.audited_through
            );
            if report.kept_unaudited > 0 {
                println!(
                    "kept back {} old messages: no wire audit has scanned them yet (run `maskbus wire-audit`)",
                    report.kept_unaudited
                );
            }
            if report.kept_in_flight > 0 {
                println!(
                    "kept back {} old messages still pending, delayed or leased",
                    report.kept_in_flight
                );
            }
            if report.kept_evidence > 0 {
                println!(
                    "kept back {} old messages as the evidence of open findings (`maskbus wire-audit --findings`)",
                    report.kept_evidence
                );
            }
            if report.kept_dead > 0 {
                println!(
                    "kept back {} old dead letters (pass --dead-letters to purge them)",
                    report.kept_dead
                );
            }
        }
    }
    Ok(Exit::Ok.into())
}
