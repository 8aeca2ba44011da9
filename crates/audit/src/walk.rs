//! The walk over a parsed body: every string, key and number is read by the detectors with the
//! field-name hint of where it sits, page rows with their column's hint, and digits split over
//! the fields of an object are read joined.

use crate::detect::{self, detect, detect_run, digit_runs, is_benign, Detector, Hint};
use crate::tree::{Node, Tape, View};
use crate::{normalize, Context, ExactMatcher, Finding};

/// One step of a JSON path. Kept as borrowed pieces and rendered only for a finding: most
/// strings of clean traffic never need their path spelled out.
#[derive(Clone, Copy)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    /// A key that is itself a finding, named by its position so the report never spells it out.
    KeyAt(usize),
    Index(usize),
}

pub(crate) fn render_path(path: &[Step<'_>]) -> String {
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
    // An at sign written as an entity, an escape or a word (`&#64;`, `(at)`) is one.
    if digits < 6 {
        return maskbus_pii::read::has_encoded_at(text);
    }
    digits >= 6
        && !is_plain_timestamp(bytes)
        && detect::plain_number_may_be_pii(text, hint) != Some(false)
}

/// The number of ASCII digits in `bytes`, or `None` when they hold an `@` or a non-ASCII byte.
/// Eight bytes at a time (this is the audit's innermost loop): with every byte below 0x80,
/// adding 0x50 sets a byte's high bit when it is at least `0`, adding 0x46 when it is past `9`,
/// and no addition carries into the next byte.
pub(crate) fn ascii_digits_without_at(bytes: &[u8]) -> Option<u32> {
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

/// Reads one string (a value or a key) under `hint`: the pattern detectors, and the exact
/// matcher when given (where the values are distinctive only, in a kept field: `hint.kept`).
/// A string that is a number in exponent form (`2.2430828e8`, as a spreadsheet writes one) is
/// read by its digits too, as the same number written plainly is. Whether anything was found.
pub(crate) fn check_string(
    text: &str,
    hint: Hint,
    exact: Option<&ExactMatcher>,
    path: &[Step<'_>],
    findings: &mut Vec<Finding>,
) -> bool {
    let detect_patterns = worth_detecting(text, hint);
    let plain = exponent_digits(text);
    // A plain timestamp is no real value either: dates are not loaded, and its digits are
    // compared whole with values of its own length only (the most common cell there is).
    let exact = exact.filter(|_| !is_plain_timestamp(text.as_bytes()));
    if !detect_patterns && exact.is_none() && plain.is_none() {
        return false;
    }
    let mut normalized = normalize::normalize(text);
    if let Some(matcher) = exact {
        normalized = matcher.clear_fakes(normalized);
    }
    let mut hits = Vec::new();
    if detect_patterns {
        detect(&without_hex_tokens(&normalized), hint, &mut hits);
    }
    let find = |m: &ExactMatcher, text: &str| match hint.kept {
        true => m.find_distinctive(text),
        false => m.find(text),
    };
    if let Some(hit) = exact.and_then(|m| find(m, &normalized)) {
        hits.push(hit);
    }
    if let Some(plain) = plain.filter(|_| hits.is_empty()) {
        let plain = match exact {
            Some(matcher) => matcher.clear_fakes(plain.into()).into_owned(),
            None => plain,
        };
        detect(&plain, hint, &mut hits);
        if let Some(hit) = exact.and_then(|m| find(m, &plain)) {
            hits.push(hit);
        }
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

/// The shortest run of hexadecimal characters read as a hash or a token, not as words and
/// numbers: an MD5 digest (or a UUID without its dashes) has 32. Shorter runs of hex letters and
/// digits are read: an IBAN (`DE89370400440532013000`) is one.
const HEX_TOKEN: usize = 32;

/// `text` with every hex token (a run of 32 or more hexadecimal characters of one case,
/// letters and digits mixed: a digest, a key, a checksum) blanked: the digits inside one are no
/// number a person wrote, and an MD5 repeated read as an SSN is a false alarm. A number beside
/// a word (`ssn219099999`), or of digits alone, is still read.
fn without_hex_tokens(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    let is_hex_upper = |b: u8| b.is_ascii_digit() || (b'A'..=b'F').contains(&b);
    let mut spans = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let upper = bytes[at].is_ascii_uppercase();
        let of_case = |b: u8| if upper { is_hex_upper(b) } else { is_hex(b) };
        if !of_case(bytes[at]) {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && of_case(bytes[at]) {
            at += 1;
        }
        let token = &bytes[start..at];
        let bounded = |i: Option<&u8>| i.is_none_or(|b| !b.is_ascii_alphanumeric());
        if token.len() >= HEX_TOKEN
            && token.iter().any(u8::is_ascii_digit)
            && token.iter().any(u8::is_ascii_alphabetic)
            && bounded(start.checked_sub(1).and_then(|i| bytes.get(i)))
            && bounded(bytes.get(at))
        {
            spans.push(start..at);
        }
    }
    if spans.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_string().into_bytes();
    for span in spans {
        out[span].fill(b' ');
    }
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_default())
}

pub(crate) fn key_segment(key: &str) -> String {
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

/// A number as its digits are read: an integral float (`2.2430828e8`, which serde prints
/// `224308280.0`) as the integer it is, any other number as serde prints it.
pub(crate) fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 1e19 => {
            format!("{f:.0}")
        }
        _ => n.to_string(),
    }
}

/// The digits of a string that is nothing but an integral number in exponent form
/// (`2.2430828e8`, `2.2430828E+08`, `-4.111111111111111e15`): `224308280`. `None` for any other
/// text, a number that is not integral (`2.5e-3`), or one of more than 19 digits. Told by the
/// `e` and the first byte, most strings stop at once.
pub(crate) fn exponent_digits(text: &str) -> Option<String> {
    let t = text.trim().as_bytes();
    if t.len() < 3 || t.len() > 48 || !matches!(t[0], b'0'..=b'9' | b'+' | b'-' | b'.') {
        return None;
    }
    let e = t.iter().position(|b| matches!(b, b'e' | b'E'))?;
    let (mantissa, exponent) = (&t[..e], &t[e + 1..]);
    let mantissa = mantissa
        .strip_prefix(b"-")
        .or_else(|| mantissa.strip_prefix(b"+"))
        .unwrap_or(mantissa);
    let exponent_digits = exponent.strip_prefix(b"+").unwrap_or(exponent);
    let (negative, exponent_digits) = match exponent_digits.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, exponent_digits),
    };
    if exponent_digits.is_empty()
        || exponent_digits.len() > 3
        || !exponent_digits.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let shift: i64 = std::str::from_utf8(exponent_digits).ok()?.parse().ok()?;
    let shift = if negative { -shift } else { shift };
    let (whole, fraction) = match mantissa.iter().position(|b| *b == b'.') {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, &mantissa[..0]),
    };
    let digit = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    if (whole.is_empty() && fraction.is_empty()) || !digit(whole) || !digit(fraction) {
        return None;
    }
    // The value is `whole fraction` (as one integer) times ten to `shift - fraction.len()`.
    let mut digits: Vec<u8> = whole.iter().chain(fraction).copied().collect();
    let mut scale = shift - fraction.len() as i64;
    while scale < 0 && digits.last() == Some(&b'0') {
        digits.pop();
        scale += 1;
    }
    if scale < 0 {
        return None;
    }
    let first = digits
        .iter()
        .position(|d| *d != b'0')
        .unwrap_or(digits.len());
    let significant = digits.len() - first;
    if significant == 0 || significant as i64 + scale > 19 {
        return None;
    }
    let mut out: String = digits[first..].iter().map(|d| char::from(*d)).collect();
    out.extend(std::iter::repeat_n('0', scale as usize));
    Some(out)
}

/// A string that holds a JSON document itself (a json column's cell, a payload in a log line):
/// scanned as one, so a card split over its fields is read joined. One level deep: a document
/// inside a document inside a cell is read as text. Only what the text scan of the cell could
/// not read is reported: values split over fields, numbers in another notation (`2.2430828e8`),
/// strings and keys written with escapes (`\u0032\u0032\u0034-30-8280`); what the document
/// holds as written the cell's own scan has already found.
pub(crate) fn check_embedded_json(
    text: &str,
    exact: Option<&ExactMatcher>,
    path: &[Step<'_>],
    findings: &mut Vec<Finding>,
) {
    // Most strings are not documents: told by their first byte, without trimming them.
    match text.as_bytes().first() {
        Some(b'{' | b'[' | b' ' | b'\t' | b'\n' | b'\r') => {}
        _ => return,
    }
    let t = text.trim();
    let shaped =
        (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'));
    if !shaped || t.len() < 8 || t.len() > EMBEDDED_JSON_MAX {
        return;
    }
    EMBEDDED.with(|depth| {
        if depth.get() > 0 {
            return;
        }
        let Ok(tape) = Tape::parse(t) else {
            return;
        };
        depth.set(1);
        let context = Context {
            exact,
            kept: None,
            reviewed: None,
        };
        let mut walker = Walker::new(&tape, context, Vec::new());
        walker.document = true;
        let inner = walker.findings_at(0, Hint::NONE, exact, &[]);
        depth.set(0);
        let at = render_path(path);
        for finding in inner {
            findings.push(Finding {
                path: format!("{at} (JSON) {}", finding.path),
                hit: finding.hit,
            });
        }
    });
}

/// The longest string read as an embedded document.
const EMBEDDED_JSON_MAX: usize = 1 << 16;

thread_local! {
    /// How deep the scan is inside embedded documents.
    static EMBEDDED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Digits spread over 2 to 4 adjacent cells of one row (`224-30` | `8280`, a card in four
/// columns `c1..c4`): each window of adjacent pieces is read as one number when its digit groups
/// are those a card or an SSN is written in (4-4-4-4, 4-6-5, 3-2-4), and only a card or an SSN
/// that passes its own checks counts; a ZIP code beside a PIN (5-4) is neither. `pieces` is each
/// cell's digit groups when the cell is nothing but a short run of them and its column is no
/// key (`id`, `..._id`), by column.
pub(crate) fn row_splits(
    pieces: &[Option<Vec<String>>],
    row: impl Fn() -> String,
    findings: &mut Vec<Finding>,
) {
    // Most rows have fewer than two pieces: nothing to join.
    if pieces.iter().filter(|p| p.is_some()).count() < 2 {
        return;
    }
    let row = row();
    for start in 0..pieces.len() {
        let mut groups: Vec<&str> = Vec::new();
        for (end, piece) in pieces.iter().enumerate().skip(start).take(4) {
            let Some(piece) = piece else {
                break;
            };
            groups.extend(piece.iter().map(String::as_str));
            let shape: Vec<usize> = groups.iter().map(|g| g.len()).collect();
            if end == start || !in_card_or_ssn_groups(&shape) {
                continue;
            }
            if let Some(hit) = split_hit(groups.concat()) {
                findings.push(Finding {
                    path: (start..=end)
                        .map(|c| format!("{row}[{c}]"))
                        .collect::<Vec<_>>()
                        .join(" + "),
                    hit,
                });
            }
        }
    }
}

/// The groups a card or an SSN is written in, when the pieces of a split number are numbers
/// or cells (4-4-4-4, 4-6-5, 3-2-4).
fn in_card_or_ssn_groups(shape: &[usize]) -> bool {
    matches!(shape, [4, 4, 4, 4] | [4, 6, 5] | [3, 2, 4])
}

/// What digits joined from the pieces of a split value are: a card or an SSN that passes its
/// own checks, marked as split, or nothing.
fn split_hit(digits: String) -> Option<crate::Hit> {
    let run = detect::DigitRun {
        groups: vec![digits.len()],
        digits,
        separators: Vec::new(),
        whole: true,
        span: 0..0,
    };
    let mut hits = Vec::new();
    detect_run(&run, Hint::NONE, &mut hits);
    let mut hit = hits
        .into_iter()
        .find(|h| matches!(h.detector, Detector::Card | Detector::Ssn))?;
    hit.split = true;
    Some(hit)
}

/// The digit groups of a cell that is a piece of a split number (see [`row_splits`]): nothing
/// but one run of 2 to 8 digits.
pub(crate) fn cell_piece(text: &str) -> Option<Vec<String>> {
    let bytes = text.as_bytes();
    if bytes.len() > 64 || bytes.len() < 2 {
        return None;
    }
    if text.is_ascii() {
        // The common case, read without allocating but for the piece itself: digits, with dashes
        // or single spaces between their groups, 2 to 8 of them; dates, times and amounts are
        // none.
        let mut digits = 0;
        for b in bytes {
            match b {
                b'0'..=b'9' => digits += 1,
                b'-' | b' ' => {}
                // Most cells stop at their first byte.
                _ => return None,
            }
        }
        // A date as Postgres prints it (`1985-01-01`) is no piece: its groups are benign.
        let iso_date = bytes.len() == 10 && bytes[4] == b'-' && bytes[7] == b'-';
        if !(2..=8).contains(&digits) || iso_date {
            return None;
        }
        let separators_ok = text.trim() == text && !text.contains("--") && !text.contains("  ");
        let groups: Vec<String> = text
            .split(['-', ' '])
            .filter(|g| !g.is_empty())
            .map(String::from)
            .collect();
        return (separators_ok && !groups.is_empty()).then_some(groups);
    }
    if bytes
        .iter()
        .any(|b| b.is_ascii_alphabetic() || *b == b'*' || *b == b'@')
    {
        return None;
    }
    let normalized = normalize::normalize(text);
    let runs = digit_runs(&normalized);
    match runs.as_slice() {
        [run] if run.whole && !is_benign(run) && (2..=8).contains(&run.digits.len()) => {
            let mut at = 0;
            Some(
                run.groups
                    .iter()
                    .map(|n| {
                        let group = run.digits[at..at + n].to_string();
                        at += n;
                        group
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// Walks a parsed body, checking every string, key and number, and collects the findings.
pub(crate) struct Walker<'t, 'a, 'c> {
    tape: &'t Tape<'a>,
    context: Context<'c>,
    path: Vec<Step<'t>>,
    findings: Vec<Finding>,
    /// The findings of each [`Node::Taken`] value, in document order, read while parsing.
    taken: std::vec::IntoIter<Vec<Finding>>,
    /// The tape is a document inside a string whose text was scanned already
    /// ([`check_embedded_json`]): strings and keys as written and integers are not read again.
    document: bool,
}

impl<'t, 'a, 'c> Walker<'t, 'a, 'c> {
    pub(crate) fn new(tape: &'t Tape<'a>, context: Context<'c>, taken: Vec<Vec<Finding>>) -> Self {
        Walker {
            tape,
            context,
            path: Vec::new(),
            findings: Vec::new(),
            taken: taken.into_iter(),
            document: false,
        }
    }

    /// Whether this string or key is read here: in a document inside a scanned string, only
    /// one whose text the parser changed (escapes decoded).
    fn reads(&self, node: &Node<'_>) -> bool {
        match node {
            Node::String(text) | Node::Key(text) => {
                !self.document || matches!(text, std::borrow::Cow::Owned(_))
            }
            _ => true,
        }
    }

    /// The findings of the subtree at `at` read under `path`, the value's field named by `hint`.
    pub(crate) fn findings_at(
        mut self,
        at: usize,
        hint: Hint,
        exact: Option<&ExactMatcher>,
        path: &[Step<'t>],
    ) -> Vec<Finding> {
        self.path.extend_from_slice(path);
        self.walk(at, hint, exact);
        self.findings
    }

    fn walk(&mut self, at: usize, hint: Hint, exact: Option<&ExactMatcher>) {
        let tape = self.tape;
        match tape.node(at) {
            node @ Node::String(text) => {
                if self.reads(node) {
                    check_string(text, hint, exact, &self.path, &mut self.findings);
                }
                check_embedded_json(text, exact, &self.path, &mut self.findings);
            }
            node @ Node::Key(text) => {
                if self.reads(node) {
                    check_string(text, hint, exact, &self.path, &mut self.findings);
                }
            }
            // Numbers are scanned too: an SSN sent as 224308280 is still an SSN, and so is one
            // sent as 2.2430828e8.
            Node::Number(n) => {
                if !self.document || !(n.is_u64() || n.is_i64()) {
                    check_string(&number_text(n), hint, exact, &self.path, &mut self.findings);
                }
            }
            Node::Array { .. } => {
                for (i, item) in tape.items(at).enumerate() {
                    self.path.push(Step::Index(i));
                    self.walk(item, hint, exact);
                    self.path.pop();
                }
            }
            Node::Object { .. } => self.walk_object(at, exact),
            Node::Taken => {
                if let Some(found) = self.taken.next() {
                    self.findings.extend(found);
                }
            }
            Node::Bool(_) | Node::Null => {}
        }
    }

    fn walk_object(&mut self, at: usize, exact: Option<&ExactMatcher>) {
        let tape = self.tape;
        // A page reply: the hint for rows[r][c] is columns[c], and kept columns are searched for
        // distinctive real values only.
        let mut page: Option<Option<PageColumns>> = None;
        for (index, (key, item)) in tape.members(at).enumerate() {
            // Keys are data too. A key that is itself a finding is named by its position.
            self.path.push(Step::KeyAt(index));
            let key_is_finding = match tape.node(item - 1) {
                node @ Node::Key(_) if !self.reads(node) => false,
                _ => check_string(key, Hint::NONE, exact, &self.path, &mut self.findings),
            };
            self.path.pop();
            self.path.push(if key_is_finding {
                Step::KeyAt(index)
            } else {
                Step::Key(key)
            });
            let rows = key == "rows" && matches!(tape.node(item), Node::Array { .. });
            let page = match rows {
                true => page.get_or_insert_with(|| PageColumns::of(tape.view(), at, self.context)),
                false => &None,
            };
            match page {
                Some(page) => {
                    for (r, row) in tape.items(item).enumerate() {
                        self.path.push(Step::Index(r));
                        if let Node::Array { .. } = tape.node(row) {
                            let mut pieces = Vec::new();
                            for (c, cell) in tape.items(row).enumerate() {
                                if page.reviewed(c) {
                                    pieces.push(None);
                                    continue;
                                }
                                let (hint, exact) = page.cell(c, exact);
                                self.path.push(Step::Index(c));
                                // Most cells are strings: checked here, without a walk.
                                match tape.node(cell) {
                                    node @ Node::String(text) => {
                                        if self.reads(node) {
                                            check_string(
                                                text,
                                                hint,
                                                exact,
                                                &self.path,
                                                &mut self.findings,
                                            );
                                        }
                                        check_embedded_json(
                                            text,
                                            exact,
                                            &self.path,
                                            &mut self.findings,
                                        );
                                        pieces.push(page.piece(c, text));
                                    }
                                    _ => {
                                        self.walk(cell, hint, exact);
                                        pieces.push(None);
                                    }
                                }
                                self.path.pop();
                            }
                            let path = &self.path;
                            row_splits(&pieces, || render_path(path), &mut self.findings);
                        } else {
                            self.walk(row, Hint::NONE, exact);
                        }
                        self.path.pop();
                    }
                }
                _ => self.walk(item, Hint::of(key), exact),
            }
            self.path.pop();
        }
        split_values(tape, at, &self.path, &mut self.findings);
    }
}

/// What a page reply's `columns` say about its cells: the field-name hint of each column, and
/// whether the policy keeps it (its cells are then searched for real values where they are
/// distinctive: [`ExactMatcher::find_distinctive`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct PageColumns {
    cells: Vec<(Hint, bool)>,
    /// Columns named like keys (`id`, `..._id`): their cells are no piece of a split number.
    keys: Vec<bool>,
    /// Columns an auditor reviewed as holding no PII: their cells are not read.
    reviewed: Vec<bool>,
}

impl PageColumns {
    /// As [`PageColumns::of`], reusing the last page's reading when it named the same entity
    /// and columns (a scan reads page after page of one table).
    pub(crate) fn of_cached(
        view: View<'_, '_>,
        at: usize,
        context: Context<'_>,
        last: &mut Option<(String, Vec<String>, PageColumns)>,
    ) -> Option<Self> {
        let columns = view.member(at, "columns")?;
        let entity = view
            .member(at, "entity")
            .and_then(|e| view.str_at(e))
            .unwrap_or_default();
        if let Some((last_entity, last_columns, page)) = last {
            let mut items = view.array_items(columns)?;
            let same = *last_entity == entity
                && last_columns.iter().all(|c| {
                    items
                        .next()
                        .is_some_and(|i| view.str_at(i).unwrap_or_default() == c)
                })
                && items.next().is_none();
            if same {
                return Some(page.clone());
            }
        }
        let page = Self::of(view, at, context)?;
        let names = view
            .array_items(columns)?
            .map(|i| view.str_at(i).unwrap_or_default().to_string())
            .collect();
        *last = Some((entity.to_string(), names, page.clone()));
        Some(page)
    }

    /// The columns of the object at `at`, when it has a `columns` array (the last one, as a
    /// reader keeping one value per key sees it); `entity` names the table.
    pub(crate) fn of(view: View<'_, '_>, at: usize, context: Context<'_>) -> Option<Self> {
        let columns = view.member(at, "columns")?;
        let columns = view.array_items(columns)?;
        let entity = view
            .member(at, "entity")
            .and_then(|e| view.str_at(e))
            .unwrap_or_default();
        Some(Self::of_names(
            entity,
            columns.map(|c| view.str_at(c).unwrap_or_default()),
            context,
        ))
    }

    /// The columns of `entity`, named in order (a page's `columns`, or the row a producer is
    /// about to send: [`crate::RowCheck`]).
    pub(crate) fn of_names<'n>(
        entity: &str,
        columns: impl Iterator<Item = &'n str>,
        context: Context<'_>,
    ) -> Self {
        let (mut keys, mut reviewed) = (Vec::new(), Vec::new());
        let cells = columns
            .map(|c| {
                let column = c.to_lowercase();
                let pair = (entity.to_string(), column.clone());
                let kept = context.kept.is_some_and(|k| k.contains(&pair));
                reviewed.push(context.reviewed.is_some_and(|r| r.contains(&pair)));
                // `id`, `customer_id`, `customerid`: a key's name ends in `id`.
                keys.push(column.ends_with("id"));
                (Hint::of(&column), kept)
            })
            .collect();
        PageColumns {
            cells,
            keys,
            reviewed,
        }
    }

    /// Whether an auditor reviewed column `c` as holding no PII (its cells are not read).
    pub(crate) fn reviewed(&self, c: usize) -> bool {
        self.reviewed.get(c).copied().unwrap_or(false)
    }

    /// The digit groups of cell `c` when it may be a piece of a number split over the row's
    /// cells.
    pub(crate) fn piece(&self, c: usize, text: &str) -> Option<Vec<String>> {
        if self.keys.get(c).copied().unwrap_or(false) {
            return None;
        }
        cell_piece(text)
    }

    /// The hint of column `c` (with [`Hint::kept`] set for a kept column, whose cells the exact
    /// matcher reads for distinctive values), and the exact matcher to use on its cells.
    pub(crate) fn cell<'m>(
        &self,
        c: usize,
        exact: Option<&'m ExactMatcher>,
    ) -> (Hint, Option<&'m ExactMatcher>) {
        let (hint, kept) = self.cells.get(c).copied().unwrap_or((Hint::NONE, false));
        (Hint { kept, ..hint }, exact)
    }
}

/// The most digit-only values of one object (with its nested objects) combined when looking for
/// a value split over fields: enough for any real form, few enough to stay cheap.
const SPLIT_PIECES: usize = 10;

/// A string value that is nothing but one run of 2 to 8 digits: a piece of a split number.
fn digit_piece(value: &Node<'_>) -> Option<String> {
    match value {
        Node::Number(n) if n.is_u64() => {
            let digits = n.to_string();
            (2..=8).contains(&digits.len()).then_some(digits)
        }
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
    out: &mut Vec<(String, String, bool)>,
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
                    let numeric = matches!(tape.node(value), Node::Number(_));
                    out.push((format!("{prefix}{}", key_segment(key)), digits, numeric));
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
        // Numbers in fields are counts and limits more often than pieces: they count only in
        // the groups a card or an SSN is written in (4-4-4-4, 4-6-5, 3-2-4), all of them numbers.
        if chosen.iter().any(|&i| pieces[i].2) {
            let shape: Vec<usize> = chosen.iter().map(|&i| pieces[i].1.len()).collect();
            if !in_card_or_ssn_groups(&shape) || !chosen.iter().all(|&i| pieces[i].2) {
                return;
            }
        }
        // One finding per split value, however many ways it can be read.
        if let Some(hit) = split_hit(digits.clone()).filter(|_| seen.insert(digits)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A digest repeated (a long key of hex) holds runs of digits no one wrote: not an SSN.
    /// The same digits written as a number, or glued to a word, still are.
    #[test]
    fn digits_inside_a_hex_token_are_no_number() {
        let digest = "c4ca4238a0b9238219099999f75849b";
        let mut findings = Vec::new();
        let hint = Hint::of("k");
        assert!(!check_string(
            &digest.repeat(3),
            hint,
            None,
            &[],
            &mut findings
        ));
        assert!(check_string(
            "ssn 219-09-9999",
            hint,
            None,
            &[],
            &mut findings
        ));
        assert!(check_string(
            &format!("{} 219-09-9999", digest.repeat(2)),
            hint,
            None,
            &[],
            &mut findings
        ));
    }

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

    #[test]
    fn digits_an_at_and_other_scripts_in_every_position() {
        assert_eq!(ascii_digits_without_at(b"id 1234567 / 89"), Some(9));
        assert_eq!(ascii_digits_without_at(b"0123456789:;/"), Some(10));
        assert_eq!(ascii_digits_without_at(b"abcdefg@"), None);
        assert_eq!(ascii_digits_without_at(b"abcdefgh@"), None);
        assert_eq!(ascii_digits_without_at("12345678\u{0664}".as_bytes()), None);
    }
}
