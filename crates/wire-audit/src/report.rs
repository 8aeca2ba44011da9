//! The wire audit as the auditor reads it: a line or a JSON object per finding, a summary (text,
//! JSON, or Markdown a CI job can publish, with findings counted by detector and by mailbox),
//! and the recorded findings for triage. Never a value, nor any part of one beyond the located
//! evidence the detectors give: a published report is read by more people than the bus is. Pure.

use super::{AuditReport, MessageFinding};
use maskbus_mailbox::audit::ListedFinding;
use maskbus_mask::escape::one_line;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The header of the text findings, above [`finding_line`]s.
pub fn finding_header() -> String {
    format!(
        "{:>9}  {:<9} {:<18} {:<28} {:<15} evidence",
        "message", "table", "mailbox", "path", "detector"
    )
}

/// One finding, as a line of text.
pub fn finding_line(f: &MessageFinding) -> String {
    format!(
        "{:>9}  {:<9} {:<18} {:<28} {:<15} {}",
        f.message_id,
        f.table,
        f.mailbox,
        f.path,
        f.hit.detector.name(),
        maskbus_audit::evidence(&f.hit)
    )
}

/// One finding, as a JSON object.
pub fn finding_json(f: &MessageFinding) -> Value {
    json!({
        "message": f.message_id, "table": f.table, "mailbox": f.mailbox, "path": f.path,
        "detector": f.hit.detector.name(), "length": f.hit.length, "last_two": f.hit.last_two, "split": f.hit.split
    })
}

/// The scan's summary, as the JSON line that ends `--format json`.
pub fn summary_json(report: &AuditReport, exact_match: bool) -> Value {
    json!({
        "summary": true, "scanned": report.scanned, "bytes": report.bytes,
        "seconds": report.elapsed.as_secs_f64(),
        "findings": report.findings, "horizon": report.horizon,
        "open_findings": report.open.iter().map(|f| f.id).collect::<Vec<_>>(),
        "acknowledged": report.acknowledged,
        "sql_one_liner": report.sql_one_liner.map(|(n, _)| n),
        "exact_match": exact_match,
    })
}

/// How many open findings the text summary names; `--findings` lists them all.
const OPEN_SHOWN: usize = 50;

/// The scan's summary, as text: the SQL one-liner's count, the open findings, the totals.
pub fn summary_text(report: &AuditReport) -> String {
    let mut out = String::new();
    if let Some((matches, took)) = report.sql_one_liner {
        let _ = writeln!(
            out,
            "design's SQL one-liner: {matches} messages match in {:.2} s (this audit: {} findings in {} messages)",
            took.as_secs_f64(),
            report.findings,
            report.messages_with_findings
        );
    }
    if !report.open.is_empty() {
        out.push_str("open findings, kept on the bus as evidence until acknowledged (`maskbus wire-audit --ack ID --reason TEXT`):\n");
        for f in report.open.iter().take(OPEN_SHOWN) {
            let _ = writeln!(
                out,
                "  finding {}: message {} {} at {}",
                f.id,
                f.message_id,
                f.detector,
                one_line(&f.path)
            );
        }
        if report.open.len() > OPEN_SHOWN {
            let _ = writeln!(
                out,
                "  ... {} more: `maskbus wire-audit --findings`",
                report.open.len() - OPEN_SHOWN
            );
        }
    }
    if report.acknowledged > 0 {
        let _ = writeln!(
            out,
            "{} findings of this scan were acknowledged earlier (with their reasons: `--findings`)",
            report.acknowledged
        );
    }
    let _ = writeln!(
        out,
        "scanned {} messages ({} bytes) in {:.2} s: {} findings",
        report.scanned,
        report.bytes,
        report.elapsed.as_secs_f64(),
        report.findings
    );
    out
}

/// Every recorded finding (open first, then acknowledged with who and why), and how many are
/// open, as `--findings` prints them.
pub fn findings_table(findings: &[ListedFinding]) -> String {
    let mut out = format!(
        "{:>7}  {:>9}  {:<18} {:<15} {:<28} acknowledged\n",
        "finding", "message", "mailbox", "detector", "path"
    );
    for f in findings {
        let acked = match (&f.acked_by, &f.ack_reason) {
            (Some(by), Some(reason)) => format!("by {}: {}", one_line(by), one_line(reason)),
            _ => "OPEN".to_string(),
        };
        let _ = writeln!(
            out,
            "{:>7}  {:>9}  {:<18} {:<15} {:<28} {acked}",
            f.id,
            f.message_id,
            one_line(&f.mailbox),
            f.detector,
            one_line(&f.path)
        );
    }
    let open = findings.iter().filter(|f| f.acked_by.is_none()).count();
    let _ = writeln!(out, "{} findings: {open} open", findings.len());
    out
}

/// Findings counted as they stream in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FindingTally {
    /// (detector, mailbox) → (findings, the first message ids with one).
    by_detector_and_mailbox: BTreeMap<(String, String), (u64, Vec<i64>)>,
}

/// How many message ids a row of the report names.
const IDS_SHOWN: usize = 5;

impl FindingTally {
    pub fn add(&mut self, finding: &MessageFinding) {
        let entry = self
            .by_detector_and_mailbox
            .entry((
                finding.hit.detector.name().to_string(),
                finding.mailbox.clone(),
            ))
            .or_default();
        entry.0 += 1;
        if entry.1.len() < IDS_SHOWN && !entry.1.contains(&finding.message_id) {
            entry.1.push(finding.message_id);
        }
    }

    /// The report, in Markdown.
    pub fn markdown(&self, report: &AuditReport, exact_match: bool) -> String {
        let mut out = String::new();
        let verdict = if report.findings == 0 {
            "**clean**: no PII found on the bus"
        } else {
            "**PII found on the bus**"
        };
        let _ = writeln!(out, "## maskbus wire audit\n\n{verdict}\n");
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(out, "| messages scanned | {} |", report.scanned);
        let _ = writeln!(out, "| bytes scanned | {} |", report.bytes);
        let _ = writeln!(out, "| seconds | {:.2} |", report.elapsed.as_secs_f64());
        let _ = writeln!(out, "| findings | {} |", report.findings);
        let _ = writeln!(
            out,
            "| messages with findings | {} |",
            report.messages_with_findings
        );
        let _ = writeln!(
            out,
            "| real values of production also searched | {} |",
            if exact_match { "yes" } else { "no" }
        );
        if let Some((matches, _)) = report.sql_one_liner {
            let _ = writeln!(
                out,
                "| the design's SQL one-liner matched | {matches} messages |"
            );
        }
        if self.by_detector_and_mailbox.is_empty() {
            return out;
        }
        let _ = writeln!(
            out,
            "\n### Findings by detector and mailbox\n\n| detector | mailbox | findings | first messages |\n|---|---|---:|---|"
        );
        for ((detector, mailbox), (count, ids)) in &self.by_detector_and_mailbox {
            let ids: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
            let _ = writeln!(
                out,
                "| {detector} | `{}` | {count} | {} |",
                mailbox.replace('|', "\\|").replace('`', "'"),
                ids.join(", ")
            );
        }
        let _ = writeln!(
            out,
            "\nThe messages stay on the bus as evidence; `maskbus wire-audit --bus URL` shows where in each one."
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_audit::{detect, Hint};

    fn finding(id: i64, mailbox: &str, text: &str) -> MessageFinding {
        let mut hits = Vec::new();
        detect::detect(text, Hint::default(), &mut hits);
        let hit = hits.into_iter().next().expect("a hit");
        MessageFinding {
            message_id: id,
            table: "archived".into(),
            mailbox: mailbox.into(),
            path: "$.rows[0][1]".into(),
            hit,
        }
    }

    #[test]
    fn a_report_counts_by_detector_and_mailbox_and_never_shows_a_value() {
        let mut tally = FindingTally::default();
        for id in 1..=7 {
            tally.add(&finding(id, "maskbus.consumer", "ssn 224-30-8280"));
        }
        tally.add(&finding(9, "ops|x", "dave.smith@yahoo.com"));
        let report = AuditReport {
            scanned: 40,
            findings: 8,
            messages_with_findings: 8,
            ..AuditReport::default()
        };
        let text = tally.markdown(&report, true);
        assert!(text.contains("**PII found on the bus**"), "{text}");
        assert!(text.contains("| messages scanned | 40 |"));
        assert!(
            text.contains("| `maskbus.consumer` | 7 | #1, #2, #3, #4, #5 |"),
            "{text}"
        );
        assert!(
            text.contains("`ops\\|x`"),
            "a mailbox cannot break the table: {text}"
        );
        for secret in ["8280", "224", "dave", "yahoo"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let clean = FindingTally::default().markdown(&AuditReport::default(), false);
        assert!(clean.contains("**clean**"));
        assert!(!clean.contains("### Findings"));
    }
}
