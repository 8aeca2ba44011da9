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
pub mod tree;

pub use detect::{Detector, Hint, Hit};
pub use exact::ExactMatcher;
pub use tree::Tape;

use detect::{detect, detect_run, digit_runs, is_benign};
use std::collections::HashSet;
use tree::Node;

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

/// Everything suspicious in one parsed message body.
pub fn scan(body: &serde_json::Value, context: Context<'_>) -> Vec<Finding> {
    scan_tape(&Tape::from_value(body), context)
}

/// Everything suspicious in one message body, parsed here into a tree that borrows from the
/// text (the audit's fast path). Fails when the text is not JSON the parser accepts (nested past
/// its limit, say): the caller then reads it with [`scan_text_in_windows`].
pub fn scan_text(body: &str, context: Context<'_>) -> Result<Vec<Finding>, serde_json::Error> {
    Scanner::default().scan_text(body, context)
}

/// Scans bodies one after another, each parsed into the memory of the one before.
#[derive(Default)]
pub struct Scanner {
    spare: Vec<tree::Node<'static>>,
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
        let tape = Tape::parse_reusing(body, std::mem::take(&mut self.spare))?;
        let findings = scan_tape(&tape, context);
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
    let mut findings = Vec::new();
    let mut path = Vec::new();
    walk(
        tape,
        0,
        Hint::NONE,
        context.exact,
        context,
        &mut path,
        &mut findings,
    );
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
/// number is the shortest), an `@`, or a birth-date field. Most strings stop here, after one
/// pass over their bytes.
fn worth_detecting(text: &str, hint: Hint) -> bool {
    if hint.birth {
        return true;
    }
    let bytes = text.as_bytes();
    let Some(digits) = ascii_digits_without_at(bytes) else {
        return true;
    };
    digits >= 6
        && !is_plain_timestamp(bytes)
        && detect::plain_number_may_be_pii(text, hint) != Some(false)
}

/// The number of ASCII digits in `bytes`, or `None` when they hold an `@` or a non-ASCII byte.
/// Eight bytes at a time (this is the audit's innermost loop): with every byte below 0x80,
/// adding 0x50 sets a byte's high bit when it is at least `0`, adding 0x46 when it is past `9`,
/// and no addition carries into the next byte.
fn ascii_digits_without_at(bytes: &[u8]) -> Option<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut digits = 0u32;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let w = u64::from_le_bytes(eight);
        let at = w ^ (ONES * u64::from(b'@'));
        let has_at = at.wrapping_sub(ONES) & !at & HIGH != 0;
        if w & HIGH != 0 || has_at {
            return None;
        }
        let from_zero = w + ONES * 0x50;
        let past_nine = w + ONES * 0x46;
        digits += (from_zero & !past_nine & HIGH).count_ones();
    }
    for &b in words.remainder() {
        if b == b'@' || b >= 0x80 {
            return None;
        }
        digits += u32::from(b.is_ascii_digit());
    }
    Some(digits)
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
    hint: Hint,
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
    tape: &'a Tape<'a>,
    at: usize,
    hint: Hint,
    exact: Option<&ExactMatcher>,
    context: Context<'_>,
    path: &mut Vec<Step<'a>>,
    findings: &mut Vec<Finding>,
) {
    match tape.node(at) {
        Node::String(text) | Node::Key(text) => {
            check_string(text, hint, exact, path, findings);
        }
        // Numbers are scanned too: an SSN sent as 224308280 is still an SSN.
        Node::Number(n) => {
            check_string(&n.to_string(), hint, exact, path, findings);
        }
        Node::Array { .. } => {
            for (i, item) in tape.items(at).enumerate() {
                path.push(Step::Index(i));
                walk(tape, item, hint, exact, context, path, findings);
                path.pop();
            }
        }
        Node::Object { .. } => walk_object(tape, at, exact, context, path, findings),
        Node::Bool(_) | Node::Null => {}
    }
}

fn walk_object<'a>(
    tape: &'a Tape<'a>,
    at: usize,
    exact: Option<&ExactMatcher>,
    context: Context<'_>,
    path: &mut Vec<Step<'a>>,
    findings: &mut Vec<Finding>,
) {
    // A page reply: the hint for rows[r][c] is columns[c], and kept columns are not searched
    // for real values.
    let columns: Option<Vec<&str>> = tape
        .member(at, "columns")
        .filter(|c| matches!(tape.node(*c), Node::Array { .. }))
        .map(|c| {
            tape.items(c)
                .map(|i| tape.str_at(i).unwrap_or_default())
                .collect()
        });
    let entity = tape
        .member(at, "entity")
        .and_then(|e| tape.str_at(e))
        .unwrap_or_default();
    let cells: Vec<(Hint, bool)> = columns
        .iter()
        .flatten()
        .map(|column| {
            let column = column.to_lowercase();
            let kept = context
                .kept
                .is_some_and(|k| k.contains(&(entity.to_string(), column.clone())));
            (Hint::of(&column), kept)
        })
        .collect();
    for (index, (key, item)) in tape.members(at).enumerate() {
        // Keys are data too. A key that is itself a finding is named by its position.
        path.push(Step::KeyAt(index));
        let key_is_finding = check_string(key, Hint::NONE, exact, path, findings);
        path.pop();
        path.push(if key_is_finding {
            Step::KeyAt(index)
        } else {
            Step::Key(key)
        });
        if key == "rows" && columns.is_some() && matches!(tape.node(item), Node::Array { .. }) {
            for (r, row) in tape.items(item).enumerate() {
                path.push(Step::Index(r));
                if let Node::Array { .. } = tape.node(row) {
                    for (c, cell) in tape.items(row).enumerate() {
                        let (hint, kept) = cells.get(c).copied().unwrap_or((Hint::NONE, false));
                        let exact = if kept { None } else { exact };
                        path.push(Step::Index(c));
                        // Most cells are strings: checked here, without a walk.
                        match tape.node(cell) {
                            Node::String(text) => {
                                check_string(text, hint, exact, path, findings);
                            }
                            _ => walk(tape, cell, hint, exact, context, path, findings),
                        }
                        path.pop();
                    }
                } else {
                    walk(tape, row, Hint::NONE, exact, context, path, findings);
                }
                path.pop();
            }
        } else {
            walk(tape, item, Hint::of(key), exact, context, path, findings);
        }
        path.pop();
    }
    split_values(tape, at, path, findings);
}

/// The most digit-only values of one object (with its nested objects) combined when looking for
/// a value split over fields: enough for any real form, few enough to stay cheap.
const SPLIT_PIECES: usize = 10;

/// A string value that is nothing but one run of 2 to 8 digits: a piece of a split number.
fn digit_piece(value: &Node<'_>) -> Option<String> {
    match value {
        Node::String(text) if text.len() <= 64 => {
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
    tape: &Tape<'_>,
    object: usize,
    prefix: &str,
    depth: u8,
    out: &mut Vec<(String, String)>,
) {
    for (key, value) in tape.members(object) {
        if out.len() >= SPLIT_PIECES {
            return;
        }
        match tape.node(value) {
            Node::Object { .. } if depth > 0 => {
                let at = format!("{prefix}{}", key_segment(key));
                pieces_of(tape, value, &at, depth - 1, out)
            }
            _ => {
                if let Some(digits) = digit_piece(tape.node(value)) {
                    out.push((format!("{prefix}{}", key_segment(key)), digits));
                }
            }
        }
    }
}

/// Digits spread over 2 to 4 string values of one object, adjacent or not, its nested objects
/// included (a card in four fields of a `payment` object, an SSN split around a name): each
/// combination in document order is read as one number, and only a card or an SSN that passes
/// its own checks (Luhn, issuance) counts.
fn split_values(tape: &Tape<'_>, object: usize, path: &[Step<'_>], findings: &mut Vec<Finding>) {
    let mut pieces = Vec::new();
    pieces_of(tape, object, "", 2, &mut pieces);
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
        detect_run(&run, Hint::NONE, &mut hits);
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The eight-at-a-time count agrees with reading byte by byte.
        #[test]
        fn digits_are_counted_as_byte_by_byte(text in "[ -~]{0,40}|.{0,12}") {
            let bytes = text.as_bytes();
            let plain = (!bytes.iter().any(|b| *b == b'@' || *b >= 0x80))
                .then(|| bytes.iter().filter(|b| b.is_ascii_digit()).count() as u32);
            proptest::prop_assert_eq!(ascii_digits_without_at(bytes), plain);
        }
    }

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

    #[test]
    fn digits_an_at_and_other_scripts_in_every_position() {
        assert_eq!(ascii_digits_without_at(b"id 1234567 / 89"), Some(9));
        assert_eq!(ascii_digits_without_at(b"0123456789:;/"), Some(10));
        assert_eq!(ascii_digits_without_at(b"abcdefg@"), None);
        assert_eq!(ascii_digits_without_at(b"abcdefgh@"), None);
        assert_eq!(ascii_digits_without_at("12345678\u{0664}".as_bytes()), None);
    }
}
