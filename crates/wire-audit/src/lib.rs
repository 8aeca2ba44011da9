//! The wire audit's shell: streams every message that ever crossed the bus (pending, leased,
//! archived, dead) through the detectors of `maskbus_audit`, and records how far it scanned.
//!
//! Memory stays flat: messages arrive in pages of a few thousand, fetched while the previous
//! page is scanned, and each body is read with its structure in bounded memory (a page's rows
//! while they are parsed), whatever its size. With a source, the real sensitive values of
//! production (every column whose rule is not `keep`) are loaded as keyed hashes only, with a
//! key drawn at random for this run and never written anywhere, and looked for in every cell,
//! kept or masked: the audit does not take the policy's word for what a kept column holds.
//!
//! - [`plan`]: what the audit looks for (the exact matcher, the reviewed columns, the
//!   audit's own judgement), decided before the scan.
//! - [`report`]: the audit as the auditor reads it (text, JSON, or Markdown a CI job can
//!   publish).
//! - [`triage`]: acknowledging recorded findings, by id or by detector and place, with a reason
//!   that says why in words and holds nothing the detectors flag.

pub mod plan;
pub mod report;
pub mod triage;
pub use plan::{AuditInputs, AuditPlan};
pub use report::FindingTally;

use maskbus_audit::{scan_text_in_windows, Context, ExactMatcher, Finding, Hit, Scanner};
use maskbus_mailbox::audit::{self, AuditedMessage};
use maskbus_mask::{Policy, Rule};
use maskbus_pg::READ_ONLY_CANONICAL;
use maskbus_pg::{Database, PgError};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// A body that does not parse with its structure is scanned as text in windows of this size.
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

/// What the exact match loaded from the source, in counts ([`maskbus_policy::real_values`]).
pub use maskbus_policy::real_values::{real_value, LoadStats as ExactStats, RealValue};

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

/// The findings in one body, read with its structure whatever its size: a page's rows are
/// checked while they are parsed, so one page of 60,000 rows takes the memory of its envelope
/// and one row, and is read as the same rows in many small pages are (values split over cells
/// or JSON fields included). A body the parser refuses (not JSON, nested past its limit, or
/// one whose structure outside a page's rows would take more than
/// [`maskbus_audit::tree::MAX_TAPE_NODES`]) is scanned as text, a window at a time, so memory
/// stays flat whatever one message weighs.
fn scan_body(scanner: &mut Scanner, text: &str, context: Context<'_>) -> Vec<Finding> {
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
    maskbus_policy::real_values::random_key()
}

/// The (entity, column) pairs a policy passes unchanged, but those the audit's own judgement
/// (`judged`) holds personal (their cells are searched like any masked column's). A kept
/// column's cells are searched for real values too, where those are distinctive
/// ([`maskbus_audit::ExactMatcher::find_distinctive`]): a username that is a kept log's whole
/// cell is found, a surname inside a merchant's name is not.
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
/// personal though the policy keeps it, so a column the policy wrongly keeps is caught; never
/// a column an auditor `reviewed` as holding no PII. Each value is judged by [`real_value`].
pub async fn load_source_values(
    source: &Database,
    policy: &Policy,
    judged: &HashSet<(String, String)>,
    reviewed: &HashSet<(String, String)>,
) -> Result<(ExactMatcher, ExactStats), PgError> {
    let mut source = source.clone();
    source.config.options(READ_ONLY_CANONICAL);
    maskbus_policy::real_values::load(
        &source,
        policy,
        maskbus_policy::real_values::Columns::MaskedAnd(judged),
        reviewed,
        usize::MAX,
        random_key(),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::{byte_balanced_ends, scan_body, WINDOW, WINDOW_OVERLAP};
    use maskbus_audit::{scan_text_in_windows, Context, Detector, Finding, Scanner};

    const COLUMNS: &str =
        r#"["id","customer_name","ssn_a","ssn_b","c1","c2","c3","c4","note","created_at"]"#;

    /// Row `i` of a table of 60,000: clean but for an SSN in two cells (row 12,345), a card in
    /// four (row 45,678), and an SSN and a card split over the fields of a JSON document in a
    /// cell (rows 50,000 and 59,999).
    fn row(i: usize) -> String {
        let (mut ssn, mut card) = (["n/a"; 2], ["-"; 4]);
        let mut note = format!("\"order {i} shipped to the north warehouse\"");
        match i {
            12_345 => ssn = ["224-30", "8280"],
            45_678 => card = ["4111", "1111", "1111", "1111"],
            50_000 => note = r#""{\"part\":\"224-30\",\"rest\":\"8280\"}""#.to_string(),
            59_999 => {
                note =
                    r#""{\"a\":\"4111\",\"b\":\"1111\",\"c\":\"1111\",\"d\":\"1111\"}""#.to_string()
            }
            _ => {}
        }
        format!(
            r#"["{i}","Customer {i}","{}","{}","{}","{}","{}","{}",{note},"2025-03-0{} 10:11:12+00"]"#,
            ssn[0],
            ssn[1],
            card[0],
            card[1],
            card[2],
            card[3],
            1 + i % 9
        )
    }

    fn page(rows: std::ops::Range<usize>) -> String {
        let rows: Vec<String> = rows.map(row).collect();
        format!(
            r#"{{"type":"page","v":2,"entity":"public.orders","key":["id"],"columns":{COLUMNS},"rows":[{}],"next_after":null,"more":false,"since":null,"until":"812:820:"}}"#,
            rows.join(",")
        )
    }

    /// What a finding is, without where: detector and whether it was split.
    fn kinds(findings: &[Finding]) -> Vec<(Detector, bool)> {
        let mut kinds: Vec<_> = findings
            .iter()
            .map(|f| (f.hit.detector, f.hit.split))
            .collect();
        kinds.sort();
        kinds
    }

    /// Issue 52, item 4: one page over 4 MiB (the producer makes such pages at its default page
    /// size) is read with its structure, and finds what the same rows find in small pages.
    #[test]
    fn one_big_page_finds_what_the_same_rows_find_in_small_pages() {
        let big = page(0..60_000);
        assert!(big.len() > 4 << 20, "{} bytes", big.len());
        let mut scanner = Scanner::default();
        let context = Context::default();
        let in_one = scan_body(&mut scanner, &big, context);
        let in_many: Vec<Finding> = (0..100)
            .flat_map(|p| scan_body(&mut scanner, &page(p * 600..(p + 1) * 600), context))
            .collect();
        let expected = [
            (Detector::Ssn, true),
            (Detector::Ssn, true),
            (Detector::Card, true),
            (Detector::Card, true),
        ];
        assert_eq!(kinds(&in_many), expected, "{in_many:?}");
        assert_eq!(kinds(&in_one), kinds(&in_many), "{in_one:?}");
        let paths: Vec<&str> = in_one.iter().map(|f| f.path.as_str()).collect();
        for at in [
            "$.rows[12345][2] + $.rows[12345][3]",
            "$.rows[45678][4] + $.rows[45678][5]",
        ] {
            assert!(paths.iter().any(|p| p.starts_with(at)), "{paths:?}");
        }
        // Before, a body over 4 MiB was read as text in windows: the values split over the
        // fields of a JSON document were not found, and no value was known as split.
        let as_text = scan_text_in_windows(&big, context, WINDOW, WINDOW_OVERLAP);
        assert!(as_text.iter().all(|f| !f.hit.split), "{as_text:?}");
        assert!(as_text.len() < in_many.len(), "{as_text:?}");
    }

    /// The rules of `column` in a policy of one table.
    fn rule_of(toml: &str, column: &str) -> maskbus_mask::Rule {
        let policy = maskbus_mask::Policy::from_toml("test", toml).unwrap();
        let (_, rules) = policy.entities().next().unwrap();
        rules.rule(column).unwrap().clone()
    }

    /// Issue 52, item 6: a value that is its column's own name, and a document a json rule keeps
    /// leaf by leaf, are not real values to look for; every other value of a masked column is.
    #[test]
    fn a_columns_own_name_and_a_document_kept_leaf_by_leaf_are_not_looked_for() {
        use super::{real_value, RealValue};
        let names = maskbus_audit::exact::Names::new(["public.accounts", "password", "first_name"]);
        let policy = r#"[accounts]
            password = "redact"
            settings = { json = { "$.theme" = "keep", "$.lang" = "keep" } }
            profile = { json = { "$.theme" = "keep" } }
            username = "redact"
        "#;
        let password = rule_of(policy, "password");
        for value in ["password", "Password", "PASSWORD", "pass_word"] {
            assert_eq!(
                real_value("password", &password, value, &[], &names),
                RealValue::AColumnsName,
                "{value}"
            );
        }
        // A first name that is a word of a column's name is on the bus in every page.
        assert_eq!(
            real_value("first_name", &password, "Name", &[], &names),
            RealValue::AColumnsName
        );
        assert_eq!(
            real_value("password", &password, "hunter22", &[], &names),
            RealValue::Load("hunter22".into())
        );
        // Postgres prints jsonb with spaces; the rule writes it without: the same document.
        let settings = rule_of(policy, "settings");
        assert_eq!(
            real_value(
                "settings",
                &settings,
                r#"{"lang": "en", "theme": "dark"}"#,
                &[],
                &names
            ),
            RealValue::UnchangedByRule
        );
        // A leaf the rule scrubs changes the document: it is looked for. One scrub leaves as it
        // is leaves the document unchanged.
        let profile = rule_of(policy, "profile");
        assert!(matches!(
            real_value(
                "profile",
                &profile,
                r#"{"theme": "dark", "ssn": "224-30-8280"}"#,
                &[],
                &names
            ),
            RealValue::Load(_)
        ));
        assert_eq!(
            real_value(
                "profile",
                &profile,
                r#"{"theme": "dark", "nick": "jdoe"}"#,
                &[],
                &names
            ),
            RealValue::UnchangedByRule
        );
        let username = rule_of(policy, "username");
        assert_eq!(
            real_value("username", &username, "jdoe42", &[], &names),
            RealValue::Load("jdoe42".into())
        );
    }

    /// A body the parser refuses is still read, as text in windows.
    #[test]
    fn a_body_that_is_not_json_is_read_as_text() {
        let mut scanner = Scanner::default();
        let cut = format!("{}ssn 224-30-8280", "[".repeat(300));
        let found = scan_body(&mut scanner, &cut, Context::default());
        assert_eq!(kinds(&found), [(Detector::Ssn, false)]);
        assert!(found[0].path.contains("as text"), "{}", found[0].path);
    }

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
