//! The wire audit's shell: streams every message that ever crossed the bus (pending, leased,
//! archived, dead) through the detectors of `maskbus_audit`, and records how far it scanned.
//!
//! Memory stays flat: messages arrive in pages of a few thousand, fetched while the previous
//! page is scanned. With a source, the real sensitive values of production (every column whose
//! rule is not `keep`) are loaded as keyed hashes only, with a key drawn at random for this run
//! and never written anywhere.
//!
//! - [`plan`]: what the audit looks for (the exact matcher, the reviewed columns, the
//!   audit's own judgement), decided before the scan.
//! - [`report`]: the audit as the auditor reads it (text, JSON, or Markdown a CI job can
//!   publish).

pub mod plan;
pub mod report;
pub use plan::{AuditInputs, AuditPlan};
pub use report::FindingTally;

use maskbus_audit::exact::{matchable, Matchable};
use maskbus_audit::{scan_text_in_windows, Context, ExactMatcher, Finding, Hit, Scanner};
use maskbus_mailbox::audit::{self, AuditedMessage};
use maskbus_mask::{Policy, Rule};
use maskbus_pg::READ_ONLY_CANONICAL;
use maskbus_pg::{Database, PgError};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Bodies larger than this are scanned as text in windows instead of being parsed.
const LARGE_BODY: usize = 4 << 20;
const WINDOW: usize = 1 << 20;
const WINDOW_OVERLAP: usize = 256;

/// One finding, located.
#[derive(Clone, Debug)]
pub struct MessageFinding {
    pub message_id: i64,
    /// pending (includes leased and delayed), archived or dead
    pub table: String,
    pub mailbox: String,
    pub path: String,
    pub hit: Hit,
}

/// What the exact-match load kept and why it left values out.
#[derive(Clone, Debug, Default)]
pub struct ExactStats {
    pub columns: usize,
    pub loaded: usize,
    /// Values their own rule leaves unchanged (a birth date on 1 January): not secret by policy.
    pub unchanged_by_rule: usize,
    /// Values a pseudonym rule could also produce: a fake and a leak look the same.
    pub possible_pseudonyms: usize,
    /// Too short to match meaningfully (under 4 characters, or 6 digits).
    pub too_short: usize,
    /// The policy writes bijective pseudonyms (`ssn`, `digits`) whose fakes are told from real
    /// values by the pseudonym key: `Some(true)` when the key was there to do it.
    pub fakes_verified: Option<bool>,
    /// Columns the policy keeps that the audit's own judgement holds personal: loaded too.
    pub kept_but_judged_personal: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct AuditReport {
    pub scanned: u64,
    pub bytes: u64,
    pub elapsed: Duration,
    pub findings: u64,
    pub messages_with_findings: u64,
    pub horizon: i64,
    /// The count of the design's one-line SQL grep, when asked for.
    pub sql_one_liner: Option<(i64, Duration)>,
    pub exact: Option<ExactStats>,
    /// The audit watermark was moved to this id: every message up to it is scanned and its
    /// findings recorded.
    pub recorded_through: Option<i64>,
    /// Findings recorded on the bus and not acknowledged (this scan's and earlier ones'):
    /// the audit fails while there are any.
    pub open: Vec<maskbus_mailbox::audit::RecordedFinding>,
    /// Findings of this scan an auditor has acknowledged (with a reason).
    pub acknowledged: u64,
}

pub use maskbus_mailbox::audit::SQL_ONE_LINER;

/// Scans the bus. `on_progress` gets (messages scanned, of total); `on_finding` each finding as
/// it is found, so output streams too.
pub async fn run(
    bus: &Database,
    context: Context<'_>,
    compare_sql: bool,
    on_progress: &mut (dyn FnMut(u64, u64) + Send),
    on_finding: &mut (dyn FnMut(&MessageFinding) + Send),
) -> Result<AuditReport, PgError> {
    let started = Instant::now();
    let client = bus.connect().await?;
    let horizon = audit::horizon(bus, &client).await?;
    let total = audit::count_through(bus, &client, horizon).await?;

    // Read on a second connection while this task scans.
    let (batches, mut incoming) = tokio::sync::mpsc::channel(4);
    let fetcher = tokio::spawn(audit::stream_through(bus.clone(), horizon, batches));

    let mut report = AuditReport {
        horizon,
        ..AuditReport::default()
    };
    // One scanner per core, kept from batch to batch with its memory and the last page's columns.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut scanners: Vec<Scanner> = (0..threads).map(|_| Scanner::default()).collect();
    // (message, mailbox, detector, path) of every finding, to record on the bus.
    let mut found: Vec<(i64, String, &'static str, String)> = Vec::new();
    while let Some(page) = incoming.recv().await {
        let page = page?;
        // The detectors run on every core while the next page is read.
        let scanned = scan_page(&mut scanners, &page, context);
        for (message, findings) in page.iter().zip(scanned) {
            report.scanned += 1;
            report.bytes += message.body.len() as u64;
            if !findings.is_empty() {
                report.messages_with_findings += 1;
            }
            for finding in findings {
                report.findings += 1;
                found.push((
                    message.id,
                    message.mailbox.clone(),
                    finding.hit.detector.name(),
                    finding.path.clone(),
                ));
                on_finding(&MessageFinding {
                    message_id: message.id,
                    table: message.table.to_string(),
                    mailbox: message.mailbox.clone(),
                    path: finding.path,
                    hit: finding.hit,
                });
            }
        }
        on_progress(report.scanned, total as u64);
    }
    // The reading task must have read everything: if it died, nothing may be marked scanned.
    if fetcher.await.is_err() {
        return Err(bus.refusal(
            "reading messages for the audit",
            "the reading task stopped before the end; nothing was recorded, run the audit again",
        ));
    }
    report.elapsed = started.elapsed();

    if compare_sql {
        let sql_started = Instant::now();
        let matches = audit::sql_one_liner(bus, &client).await?;
        report.sql_one_liner = Some((matches, sql_started.elapsed()));
    }
    // Findings are recorded first, then the watermark moves past them: purge keeps the
    // messages of open findings as evidence, and an auditor acknowledges each with a reason.
    let new: Vec<audit::NewFinding<'_>> = found
        .iter()
        .map(|(message_id, mailbox, detector, path)| audit::NewFinding {
            message_id: *message_id,
            mailbox,
            detector,
            path,
        })
        .collect();
    let recorded = audit::record_findings(bus, &client, &new).await?;
    report.acknowledged = recorded.iter().filter(|f| f.acked).count() as u64;
    audit::record(bus, &client, horizon).await?;
    report.recorded_through = Some(horizon);
    // Open findings of earlier scans whose messages are still kept count too.
    report.open = audit::list_findings(bus, &client)
        .await?
        .into_iter()
        .filter(|f| f.acked_by.is_none())
        .map(|f| audit::RecordedFinding {
            id: f.id,
            message_id: f.message_id,
            detector: f.detector,
            path: f.path,
            acked: false,
        })
        .collect();
    Ok(report)
}

/// The findings in one body.
fn scan_body(scanner: &mut Scanner, text: &str, context: Context<'_>) -> Vec<Finding> {
    if text.len() > LARGE_BODY {
        // A parsed tree takes many times its text: read a huge body as text, a window at a
        // time, so memory stays flat whatever one message weighs.
        return scan_text_in_windows(text, context, WINDOW, WINDOW_OVERLAP);
    }
    // A body that does not parse (nested past the parser's limit) is scanned as text.
    scanner
        .scan_text(text, context)
        .unwrap_or_else(|_| scan_text_in_windows(text, context, WINDOW, WINDOW_OVERLAP))
}

/// The findings of each body of a page, in order, the page split between the scanners (one per
/// core, each on its own thread).
fn scan_page(
    scanners: &mut [Scanner],
    page: &[AuditedMessage],
    context: Context<'_>,
) -> Vec<Vec<Finding>> {
    let threads = scanners.len().min(page.len());
    if threads <= 1 {
        let Some(scanner) = scanners.first_mut() else {
            return Vec::new();
        };
        return page
            .iter()
            .map(|m| scan_body(scanner, &m.body, context))
            .collect();
    }
    let sizes: Vec<usize> = page.iter().map(|m| m.body.len()).collect();
    let mut start = 0;
    let parts: Vec<&[AuditedMessage]> = byte_balanced_ends(&sizes, threads)
        .into_iter()
        .map(|end| {
            let part = &page[start..end];
            start = end;
            part
        })
        .collect();
    std::thread::scope(|scope| {
        let parts: Vec<_> = parts
            .into_iter()
            .zip(scanners.iter_mut())
            .map(|(part, scanner)| {
                scope.spawn(move || {
                    part.iter()
                        .map(|m| scan_body(scanner, &m.body, context))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|part| {
                // A detector that panics is a bug; it stops the audit as it would on one core.
                part.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Where to cut items of these sizes into `parts` consecutive runs of about the same total size
/// (the scanning time follows the bytes, not the count of bodies): the end index of each
/// non-empty run, the last one `sizes.len()`.
fn byte_balanced_ends(sizes: &[usize], parts: usize) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    let parts = parts.max(1);
    let mut ends = Vec::with_capacity(parts);
    let (mut sum, mut next) = (0usize, 1usize);
    for (i, size) in sizes.iter().enumerate() {
        sum += size;
        if next < parts && sum * parts >= total * next {
            ends.push(i + 1);
            next += 1;
        }
    }
    if ends.last() != Some(&sizes.len()) {
        ends.push(sizes.len());
    }
    ends.dedup();
    ends.retain(|&e| e > 0);
    ends
}

/// 32 random bytes for this run's hashing key, from the operating system.
pub fn random_key() -> [u8; 32] {
    use std::io::Read;
    let mut key = [0u8; 32];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .is_err()
    {
        // No /dev/urandom: mix what the process has; the key only has to differ between runs.
        use std::hash::{BuildHasher, Hasher};
        for chunk in key.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(Instant::now().elapsed().as_nanos());
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    key
}

/// The (entity, column) pairs a policy passes unchanged, but those the audit's own judgement
/// (`judged`) holds personal: their cells are searched for real values like any masked column's.
pub fn kept_columns(
    policy: &Policy,
    judged: &HashSet<(String, String)>,
) -> HashSet<(String, String)> {
    policy
        .entities()
        .flat_map(|(entity, rules)| {
            rules
                .columns()
                .filter(|(_, rule)| **rule == Rule::Keep)
                .map(move |(column, _)| (entity.to_string(), column.to_string()))
        })
        .filter(|pair| !judged.contains(pair))
        .collect()
}

/// The (entity, column) pairs a proposal masks (any rule but keep): what the audit judges
/// personal on its own, from `maskbus policy init`'s reading of the source (names, types and
/// sampled values), whatever the producer's policy says.
pub fn masked_columns(proposal: &Policy) -> HashSet<(String, String)> {
    proposal
        .entities()
        .flat_map(|(entity, rules)| {
            rules
                .columns()
                .filter(|(_, rule)| **rule != Rule::Keep)
                .map(move |(column, _)| (entity.to_string(), column.to_string()))
        })
        .collect()
}

/// Loads the real sensitive values of the source into an exact matcher, as keyed hashes only:
/// every column the policy masks, and every column the audit's own judgement (`judged`) holds
/// personal though the policy keeps it, so a column the policy wrongly keeps is caught.
pub async fn load_source_values(
    source: &Database,
    policy: &Policy,
    judged: &HashSet<(String, String)>,
) -> Result<(ExactMatcher, ExactStats), PgError> {
    let mut source = source.clone();
    source.config.options(READ_ONLY_CANONICAL);
    let client = source.connect().await?;
    let mut stats = ExactStats::default();
    let mut matcher = ExactMatcher::new(random_key());
    // Any pseudonym the policy writes, in any column, could equal a real value of another column
    // (a fake first name that is also a real surname): such values cannot be told apart.
    let pseudonyms: Vec<_> = policy
        .entities()
        .flat_map(|(_, rules)| {
            rules.columns().filter_map(|(_, rule)| match rule {
                Rule::Pseudonym(kind) => Some(*kind),
                _ => None,
            })
        })
        .collect();
    for (entity, rules) in policy.entities() {
        for (column, rule) in rules.columns() {
            let judged_personal = judged.contains(&(entity.to_string(), column.to_string()));
            if *rule == Rule::Keep && !judged_personal {
                continue;
            }
            if *rule == Rule::Keep {
                stats
                    .kept_but_judged_personal
                    .push(format!("{entity}.{column}"));
            }
            stats.columns += 1;
            let sql = maskbus_pg::statements::distinct_values(
                &maskbus_pg::TableRef::parse(entity),
                column,
            );
            let rows = client.query(&sql, &[]).await.map_err(|e| {
                source.query_error(format!("reading {entity}.{column} for the exact match"), &e)
            })?;
            for row in rows {
                let value: String = row.get(0);
                if *rule != Rule::Keep
                    && rule
                        .apply(Some(value.clone()), None)
                        .ok()
                        .flatten()
                        .as_deref()
                        == Some(value.as_str())
                {
                    stats.unchanged_by_rule += 1;
                    continue;
                }
                if pseudonyms.iter().any(|kind| kind.could_produce(&value)) {
                    stats.possible_pseudonyms += 1;
                    continue;
                }
                let normalized = maskbus_audit::normalize::normalize(&value).into_owned();
                if matches!(matchable(&normalized), Matchable::TooShort) {
                    stats.too_short += 1;
                } else {
                    matcher.add(&normalized);
                    stats.loaded += 1;
                }
            }
        }
    }
    // Fakes of bijective pseudonyms look like real SSNs and card numbers: the key tells them
    // from real ones, by revealing what they were made from.
    let mut bijective: Vec<maskbus_mask::PseudonymKind> = pseudonyms
        .iter()
        .copied()
        .filter(|k| k.class() == maskbus_mask::RuleClass::Bijective)
        .collect();
    bijective.sort_by_key(|k| k.name());
    bijective.dedup();
    if !bijective.is_empty() {
        stats.fakes_verified = Some(policy.key().is_some());
        if let Some(key) = policy.key().cloned() {
            matcher = matcher.with_reveal(Box::new(move |digits: &str| {
                bijective
                    .iter()
                    .filter_map(|kind| kind.reveal(&key, digits))
                    .collect()
            }));
        }
    }
    Ok((matcher, stats))
}

#[cfg(test)]
mod tests {
    use super::byte_balanced_ends;

    #[test]
    fn bodies_are_shared_out_by_bytes() {
        assert_eq!(byte_balanced_ends(&[10, 10, 10, 10], 2), [2, 4]);
        // One large body and many small ones: the large one is a part of its own.
        assert_eq!(byte_balanced_ends(&[100, 1, 1, 1, 1], 2), [1, 5]);
        assert_eq!(byte_balanced_ends(&[1, 1, 1, 1, 100], 2), [5]);
        assert_eq!(byte_balanced_ends(&[5], 4), [1]);
        assert_eq!(byte_balanced_ends(&[0, 0, 0], 2), [1, 3]);
        for (sizes, parts) in [(vec![3, 1, 4, 1, 5, 9, 2, 6], 3), (vec![7; 9], 4)] {
            let ends = byte_balanced_ends(&sizes, parts);
            assert_eq!(*ends.last().unwrap(), sizes.len());
            assert!(ends.len() <= parts && ends.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
