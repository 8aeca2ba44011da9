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
//! used as the field-name hint for the values under it.
//!
//! This crate is pure: no I/O, no clock, no randomness (the exact matcher's key comes from the
//! caller). Findings carry evidence that never reveals the value: detector, length, last two
//! characters.

pub mod detect;
pub mod exact;
pub mod normalize;

pub use detect::{Detector, Hit};
pub use exact::ExactMatcher;

use detect::{detect, detect_run, digit_runs, is_benign};
use serde_json::Value;
use std::collections::HashSet;

/// What a scan looks for beyond the patterns.
#[derive(Clone, Copy, Default)]
pub struct Context<'a> {
    /// Real values of the source, for the exact match.
    pub exact: Option<&'a ExactMatcher>,
    /// (entity, column) pairs the policy passes unchanged. Their cells in page replies are not
    /// searched for real values: a surname that is also a merchant's name is there by policy.
    /// The pattern detectors still read them.
    pub kept: Option<&'a HashSet<(String, String)>>,
}

/// One finding in one message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Where in the body: `$.rows[3][4]`, `$.a + $.b` for a value split over fields.
    pub path: String,
    pub hit: Hit,
}

/// Everything suspicious in one message body.
pub fn scan(body: &Value, context: Context<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut path = Vec::new();
    walk(body, "", context.exact, context, &mut path, &mut findings);
    findings
}

/// A body too large to parse into a tree at little cost (a JSON tree takes many times its text),
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
        let piece = Value::String(text[start..end].to_string());
        for mut finding in scan(&piece, context) {
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

/// One step of a JSON path. Kept as borrowed pieces and rendered only for a finding: most
/// strings of clean traffic never need their path spelled out.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    /// A key that is itself a finding, named by its position so the report never spells it out.
    KeyAt(usize),
    Index(usize),
}

fn render_path(path: &[Step<'_>]) -> String {
    let mut out = String::from("$");
    for step in path {
        match step {
            Step::Key(key) => out.push_str(&key_segment(key)),
            Step::KeyAt(i) => out.push_str(&format!("{{key #{i}}}")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Whether the pattern detectors could find anything at all: they need six digits (an account
/// number is the shortest), an `@`, or a birth-date field. Most strings stop here.
fn worth_detecting(text: &str, hint: &str) -> bool {
    let bytes = text.as_bytes();
    if !text.is_ascii() {
        return true;
    }
    if is_plain_timestamp(bytes) {
        return false;
    }
    bytes.iter().filter(|b| b.is_ascii_digit()).count() >= 6
        || bytes.contains(&b'@')
        || hint.contains("birth")
        || hint.contains("dob")
}

/// `YYYY-MM-DD HH:MM:SS` with optional fraction and zone, as Postgres prints timestamps: the
/// commonest digits on the bus, recognised without tokenising.
fn is_plain_timestamp(b: &[u8]) -> bool {
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let date = b.len() >= 19
        && (0..4).all(digit)
        && b[4] == b'-'
        && digit(5)
        && digit(6)
        && b[7] == b'-'
        && digit(8)
        && digit(9)
        && (b[10] == b' ' || b[10] == b'T')
        && digit(11)
        && digit(12)
        && b[13] == b':'
        && digit(14)
        && digit(15)
        && b[16] == b':'
        && digit(17)
        && digit(18);
    date && b[19..]
        .iter()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'+' | b'-' | b':' | b'Z'))
        && b[19..].iter().filter(|c| c.is_ascii_digit()).count() <= 10
}

fn check_string(
    text: &str,
    hint: &str,
    exact: Option<&ExactMatcher>,
    path: &[Step<'_>],
    findings: &mut Vec<Finding>,
) -> bool {
    let detect_patterns = worth_detecting(text, hint);
    if !detect_patterns && exact.is_none() {
        return false;
    }
    let normalized = normalize::normalize(text);
    let mut hits = Vec::new();
    if detect_patterns {
        detect(&normalized, hint, &mut hits);
    }
    if let Some(hit) = exact.and_then(|m| m.find(&normalized)) {
        hits.push(hit);
    }
    if hits.is_empty() {
        return false;
    }
    let at = render_path(path);
    findings.extend(hits.into_iter().map(|hit| Finding {
        path: at.clone(),
        hit,
    }));
    true
}

fn key_segment(key: &str) -> String {
    if !key.is_empty()
        && key.len() <= 64
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        format!(".{key}")
    } else {
        // Shown as a JSON string, shortened: a long or odd key is data, not a field name.
        let short: String = key.chars().take(24).collect();
        format!("[{}]", serde_json::to_string(&short).unwrap_or_default())
    }
}

fn walk<'a>(
    value: &'a Value,
    hint: &str,
    exact: Option<&ExactMatcher>,
    context: Context<'_>,
    path: &mut Vec<Step<'a>>,
    findings: &mut Vec<Finding>,
) {
    match value {
        Value::String(text) => {
            check_string(text, hint, exact, path, findings);
        }
        // Numbers are scanned too: an SSN sent as 224308280 is still an SSN.
        Value::Number(n) => {
            check_string(&n.to_string(), hint, exact, path, findings);
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(item, hint, exact, context, path, findings);
                path.pop();
            }
        }
        Value::Object(map) => {
            // A page reply: the hint for rows[r][c] is columns[c].
            let columns: Option<Vec<String>> =
                map.get("columns").and_then(Value::as_array).map(|cs| {
                    cs.iter()
                        .map(|c| c.as_str().unwrap_or_default().to_lowercase())
                        .collect()
                });
            let entity = map
                .get("entity")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kept = |column: &str| {
                context
                    .kept
                    .is_some_and(|k| k.contains(&(entity.to_string(), column.to_string())))
            };
            let kept_cells: Vec<bool> = columns
                .as_ref()
                .map(|cs| cs.iter().map(|c| kept(c)).collect())
                .unwrap_or_default();
            for (index, (key, item)) in map.iter().enumerate() {
                // Keys are data too. A key that is itself a finding is named by its position.
                path.push(Step::KeyAt(index));
                let key_is_finding = check_string(key, "", exact, path, findings);
                path.pop();
                path.push(if key_is_finding {
                    Step::KeyAt(index)
                } else {
                    Step::Key(key)
                });
                match (key.as_str(), &columns, item) {
                    ("rows", Some(columns), Value::Array(rows)) => {
                        for (r, row) in rows.iter().enumerate() {
                            path.push(Step::Index(r));
                            match row {
                                Value::Array(cells) => {
                                    for (c, cell) in cells.iter().enumerate() {
                                        path.push(Step::Index(c));
                                        let column = columns.get(c).map_or("", String::as_str);
                                        let exact = if kept_cells.get(c).copied().unwrap_or(false) {
                                            None
                                        } else {
                                            exact
                                        };
                                        walk(cell, column, exact, context, path, findings);
                                        path.pop();
                                    }
                                }
                                other => walk(other, "", exact, context, path, findings),
                            }
                            path.pop();
                        }
                    }
                    _ => walk(item, &key.to_lowercase(), exact, context, path, findings),
                }
                path.pop();
            }
            split_values(map, path, findings);
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// The most digit-only values of one object (with its nested objects) combined when looking for
/// a value split over fields: enough for any real form, few enough to stay cheap.
const SPLIT_PIECES: usize = 10;

/// A string value that is nothing but one run of 2 to 8 digits: a piece of a split number.
fn digit_piece(value: &Value) -> Option<String> {
    match value {
        Value::String(text) if text.len() <= 64 => {
            let normalized = normalize::normalize(text);
            let runs = digit_runs(&normalized);
            match runs.as_slice() {
                [run] if run.whole && !is_benign(run) && (2..=8).contains(&run.digits.len()) => {
                    Some(run.digits.clone())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The digit pieces of an object and of the objects nested in it (two levels), in document
/// order, each with its path relative to the object.
fn pieces_of(
    map: &serde_json::Map<String, Value>,
    prefix: &str,
    depth: u8,
    out: &mut Vec<(String, String)>,
) {
    for (key, value) in map {
        let at = format!("{prefix}{}", key_segment(key));
        match value {
            Value::Object(inner) if depth > 0 => pieces_of(inner, &at, depth - 1, out),
            _ => {
                if let Some(digits) = digit_piece(value) {
                    out.push((at, digits));
                }
            }
        }
    }
}

/// Digits spread over 2 to 4 string values of one object, adjacent or not, its nested objects
/// included (a card in four fields of a `payment` object, an SSN split around a name): each
/// combination in document order is read as one number, and only a card or an SSN that passes
/// its own checks (Luhn, issuance) counts.
fn split_values(
    map: &serde_json::Map<String, Value>,
    path: &[Step<'_>],
    findings: &mut Vec<Finding>,
) {
    let mut pieces = Vec::new();
    pieces_of(map, "", 2, &mut pieces);
    pieces.truncate(SPLIT_PIECES);
    if pieces.len() < 2 {
        return;
    }
    let base = render_path(path);
    let n = pieces.len();
    let mut combination = Vec::with_capacity(4);
    // Every combination of 2 to 4 pieces, in order (at most 385 for 10 pieces).
    fn each(start: usize, n: usize, combination: &mut Vec<usize>, visit: &mut dyn FnMut(&[usize])) {
        if combination.len() >= 2 {
            visit(combination);
        }
        if combination.len() == 4 {
            return;
        }
        for i in start..n {
            combination.push(i);
            each(i + 1, n, combination, visit);
            combination.pop();
        }
    }
    let mut seen = std::collections::HashSet::new();
    each(0, n, &mut combination, &mut |chosen: &[usize]| {
        let digits: String = chosen.iter().map(|&i| pieces[i].1.as_str()).collect();
        if !matches!(digits.len(), 9 | 13..=19) {
            return;
        }
        let run = detect::DigitRun {
            groups: vec![digits.len()],
            digits,
            separators: Vec::new(),
            whole: true,
        };
        let mut hits = Vec::new();
        detect_run(&run, "", &mut hits);
        for mut hit in hits
            .into_iter()
            .filter(|h| matches!(h.detector, Detector::Card | Detector::Ssn))
        {
            // One finding per split value, however many ways it can be read.
            if !seen.insert(run.digits.clone()) {
                continue;
            }
            hit.split = true;
            findings.push(Finding {
                path: chosen
                    .iter()
                    .map(|&i| format!("{base}{}", pieces[i].0))
                    .collect::<Vec<_>>()
                    .join(" + "),
                hit,
            });
        }
    });
}

/// One line of evidence that never reveals the value.
pub fn evidence(hit: &Hit) -> String {
    let split = if hit.split { ", split over fields" } else { "" };
    format!(
        "{} characters, ending {:?}{split}",
        hit.length, hit.last_two
    )
}
