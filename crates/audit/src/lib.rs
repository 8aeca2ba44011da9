//! The wire audit's detectors: does a bus message carry PII?
//!
//! [`scan`] walks a message body (parsed JSON, so `\u0034` is already `4`), keys as well as
//! values, nested arrays and objects, reads every string as a person would
//! ([`normalize::normalize`]), and runs the pattern detectors of [`mod@detect`]: SSNs that could have
//! been issued, Luhn-valid cards, unmasked emails, bank account and ABA routing numbers, phone
//! numbers, and birth dates that keep their month or day. It also joins the digits of adjacent
//! string values of one object (a card split over two fields), and, given an
//! [`exact::ExactMatcher`], looks for real values of the source whatever their shape.
//!
//! Page replies name their columns once (`columns`) and carry rows as arrays; the column name is
//! used as the field-name hint for the values under it. The walk is in `walk`; a page's rows,
//! nearly every byte on the bus, are checked while they are parsed (`rows`), with the same
//! findings in the same order as the walk over a whole tape.
//!
//! This crate is pure: no I/O, no clock, no randomness (the exact matcher's key comes from the
//! caller). Findings carry evidence that never reveals the value: detector, length, last two
//! characters.
//!
//! Modules: `detect` (the pattern detectors), `exact` (the exact matcher over keyed hashes of
//! real values), `normalize` (text read as a person would), `tree` (a body parsed into a flat tape),
//! `names` (identifiers read as names, hash suffixes dropped: [`name_looks_like_pii`],
//! [`sql_looks_like_pii`]), `walk` (the tape walked, keys and values), `rows` (a page's rows
//! checked while parsed),
//! `row_check` (one row checked before it is sent: the producer's egress guard).

pub mod detect;
pub mod exact;
mod names;
pub mod normalize;
mod row_check;
mod rows;
pub mod tree;
mod walk;

pub use detect::{Detector, Hint, Hit};
pub use exact::ExactMatcher;
pub use names::{name_looks_like_pii, sql_looks_like_pii};
pub use row_check::{RowCheck, RowFinding};
pub use tree::Tape;

use std::collections::HashSet;

/// What a scan looks for beyond the patterns.
#[derive(Clone, Copy, Default)]
pub struct Context<'a> {
    /// Real values of the source, for the exact match.
    pub exact: Option<&'a ExactMatcher>,
    /// (entity, column) pairs the policy passes unchanged. Their cells in page replies are
    /// searched for real values where these are distinctive
    /// ([`ExactMatcher::find_distinctive`]: by their digits, of two words or more, or a word of
    /// letters and digits anywhere; a word of letters only as the whole cell): a username that
    /// is a kept log's whole cell is a leak, a surname inside a merchant's name is there by
    /// policy. The pattern detectors read them as any cell.
    pub kept: Option<&'a HashSet<(String, String)>>,
    /// (entity, column) pairs an auditor has reviewed and holds to carry no PII (a file the
    /// auditor keeps, each with a reason): their cells in page replies are not read at all.
    pub reviewed: Option<&'a HashSet<(String, String)>>,
}

/// One finding in one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where in the body: `$.rows[3][4]`, `$.a + $.b` for a value split over fields.
    pub path: String,
    pub hit: Hit,
}

/// Everything suspicious in one parsed message body.
pub fn scan(body: &serde_json::Value, context: Context<'_>) -> Vec<Finding> {
    scan_tape(&Tape::from_value(body), context)
}

/// Everything suspicious in one message body, parsed here into a tree that borrows from the
/// text (the audit's fast path; a page's rows are read while parsed, so a page of any size
/// takes the memory of its envelope). Fails when the text is not JSON the parser accepts
/// (nested past its limit, say, or structure past [`tree::MAX_TAPE_NODES`] outside a page's
/// rows): the caller then reads it with [`scan_text_in_windows`].
pub fn scan_text(body: &str, context: Context<'_>) -> Result<Vec<Finding>, serde_json::Error> {
    Scanner::default().scan_text(body, context)
}

/// Scans bodies one after another, each parsed into the memory of the one before.
#[derive(Default)]
pub struct Scanner {
    spare: Vec<tree::Node<'static>>,
    /// The last page's columns, with the context they were read in (by address).
    last_columns: Option<rows::LastColumns>,
    last_context: Option<(usize, usize)>,
}

impl Scanner {
    /// The most nodes a spare tape keeps (8 MB).
    const SPARE_NODES: usize = 1 << 18;

    /// As [`scan_text`].
    pub fn scan_text(
        &mut self,
        body: &str,
        context: Context<'_>,
    ) -> Result<Vec<Finding>, serde_json::Error> {
        // A page's rows are checked while they are parsed (see `rows`).
        let this_context = (
            context.exact.map_or(0, |e| e as *const _ as usize),
            context.kept.map_or(0, |k| k as *const _ as usize),
        );
        if self.last_context != Some(this_context) {
            self.last_columns = None;
            self.last_context = Some(this_context);
        }
        let mut rows = rows::PageRows::new(context, &mut self.last_columns);
        let mut tape = Tape::parse_intercepting(body, std::mem::take(&mut self.spare), &mut rows)?;
        let mut taken = rows.taken;
        if rows.stale {
            // Columns named again after the rows: read the rows again under the last ones.
            let page = walk::PageColumns::of(tape.view(), 0, context);
            let mut last = None;
            let mut again = rows::PageRows::fixed(context, &mut last, page);
            tape = Tape::parse_intercepting(body, tape.recycle(), &mut again)?;
            taken = again.taken;
        }
        let findings =
            walk::Walker::new(&tape, context, taken).findings_at(0, Hint::NONE, context.exact, &[]);
        self.spare = tape.recycle();
        // One huge body should not pin its tape's memory for the rest of the scan.
        if self.spare.capacity() > Self::SPARE_NODES {
            self.spare = Vec::new();
        }
        Ok(findings)
    }
}

/// Everything suspicious in one parsed body.
pub fn scan_tape(tape: &Tape<'_>, context: Context<'_>) -> Vec<Finding> {
    walk::Walker::new(tape, context, Vec::new()).findings_at(0, Hint::NONE, context.exact, &[])
}

/// A body the parser refuses (not JSON, nested past its limit, or structure outside a page's
/// rows past [`tree::MAX_TAPE_NODES`]: a page of any size parses, its rows read while parsed),
/// scanned as plain text in windows of `window` bytes that overlap by `overlap`, so a value
/// across a boundary is still read whole and memory stays a window, whatever the body's size.
/// Field names are not known here, so the detectors that need them do not fire; every pattern
/// and exact-match detector does. A hit inside an overlap may be reported twice.
pub fn scan_text_in_windows(
    text: &str,
    context: Context<'_>,
    window: usize,
    overlap: usize,
) -> Vec<Finding> {
    let window = window.max(overlap * 2).max(1);
    let mut findings = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + window).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        for mut finding in scan_tape(&Tape::of_string(&text[start..end]), context) {
            finding.path = format!("$ (as text, bytes {start}..{end})");
            findings.push(finding);
        }
        if end == text.len() {
            break;
        }
        let mut next = end.saturating_sub(overlap).max(start + 1);
        while !text.is_char_boundary(next) {
            next += 1;
        }
        start = next;
    }
    findings
}

/// One line of evidence that never reveals the value.
pub fn evidence(hit: &Hit) -> String {
    let split = if hit.split { ", split over fields" } else { "" };
    format!(
        "{} characters, ending {:?}{split}",
        hit.length, hit.last_two
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hostile body that says a key twice: a reader keeping one value per key sees only the
    /// last; the audit reads every copy.
    #[test]
    fn a_leak_hidden_under_a_repeated_key_is_found() {
        let body = r#"{"note":"card 4111 1111 1111 1111","note":"nothing here"}"#;
        let findings = scan_text(body, Context::default()).unwrap();
        assert_eq!(
            findings.iter().map(|f| f.hit.detector).collect::<Vec<_>>(),
            [Detector::Card]
        );
        assert_eq!(findings[0].path, "$.note");
    }

    /// A streamed delete of a table without a key carries the whole masked row (it is found by
    /// all its values), keyed by row location no column holds: read as a page's rows are.
    #[test]
    fn a_keyless_delete_is_read_as_a_page() {
        let body = r#"{"type":"changes","v":2,"entity":"public.history","op":"delete","key":["tableoid","ctid"],"columns":["customer","note"],"rows":[["3","fine"],["4","card 4111 1111 1111 1111"]],"lsn":"aaaaaaaaaaaaaabc","commit":true,"through":"aaaaaaaaaaaaaabc","part":0,"parts":1}"#;
        let findings = scan_text(body, Context::default()).unwrap();
        assert_eq!(
            findings
                .iter()
                .map(|f| (f.hit.detector, f.path.as_str()))
                .collect::<Vec<_>>(),
            [(Detector::Card, "$.rows[1][1]")]
        );
    }
}
