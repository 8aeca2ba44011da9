//! The wire audit as a Markdown summary a CI job can publish: what was scanned, and findings
//! counted by detector and by mailbox. Never a value, nor any part of one: a published report
//! is read by more people than the bus is. Pure.

use super::{AuditReport, MessageFinding};
use std::collections::BTreeMap;
use std::fmt::Write;

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
