//! Pattern detectors over one string (already normalized), with the name of the field it sits
//! in as a hint.
//!
//! Digits are read in runs, as `scrub` reads them ([`maskbus_pii::read`]): digit groups joined by
//! what a reader skips (one to four characters that are neither letters, digits, `*` nor `@`, an
//! `x`, a joining word or a month name), so `4111 1111-1111.1111`, `224/30/8280`, `224x30x8280`
//! and `2 2 4 3 0 8 2 8 0` are each one run. A `*` ends a run, which is why masked values
//! (`4111 **** **** 1234`, `***-**-8280`) never add up to a number. Runs shaped like timestamps,
//! times and Postgres snapshots are benign and skipped.

use maskbus_pii::{aba_checksum_ok, is_issuable_ssn_text, luhn_valid};

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Detector {
    Ssn,
    Card,
    Email,
    AccountNumber,
    RoutingNumber,
    Phone,
    BirthDate,
    /// A real value of the source database, found by exact match.
    SourceValue,
}

impl Detector {
    pub fn name(self) -> &'static str {
        match self {
            Detector::Ssn => "ssn",
            Detector::Card => "card",
            Detector::Email => "email",
            Detector::AccountNumber => "account_number",
            Detector::RoutingNumber => "routing_number",
            Detector::Phone => "phone",
            Detector::BirthDate => "birth_date",
            Detector::SourceValue => "source_value",
        }
    }
}

/// Evidence that does not reveal the value: its length and last two characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub detector: Detector,
    pub length: usize,
    pub last_two: String,
    /// Set when the value was split over adjacent fields.
    pub split: bool,
}

impl Hit {
    pub fn new(detector: Detector, shown: &str) -> Self {
        let chars: Vec<char> = shown.chars().collect();
        Hit {
            detector,
            length: chars.len(),
            last_two: chars[chars.len().saturating_sub(2)..].iter().collect(),
            split: false,
        }
    }
}

pub use maskbus_pii::read::{digit_runs, DigitRun};

/// Timestamps, dates, times and Postgres snapshots: digits that identify no one.
pub fn is_benign(run: &DigitRun) -> bool {
    let seps: Vec<&str> = run.separators.iter().map(|s| s.trim()).collect();
    let g = &run.groups;
    // 2024-03-05, 2024-03-05 12:34:56.123+00, 2024-03-05T12:34:56Z
    if g.len() >= 3 && g[0] == 4 && g[1] == 2 && g[2] == 2 && seps[0] == "-" && seps[1] == "-" {
        return g[3..].iter().all(|n| *n <= 6);
    }
    // 12:34, 12:34:56
    if (2..=3).contains(&g.len()) && g.iter().all(|n| *n == 2) && seps.iter().all(|s| *s == ":") {
        return true;
    }
    // An IPv4 address, with or without a prefix length: 10.12.0.12, 10.12.0.12/32.
    let numbers = || {
        let mut start = 0;
        g.iter()
            .map(move |n| {
                let value = run.digits[start..start + n]
                    .parse::<u32>()
                    .unwrap_or(u32::MAX);
                start += n;
                value
            })
            .collect::<Vec<_>>()
    };
    if (g.len() == 4 || (g.len() == 5 && seps[3] == "/"))
        && seps[..3].iter().all(|s| *s == ".")
        && g.iter().all(|n| *n <= 3)
        && numbers()[..4].iter().all(|n| *n <= 255)
    {
        return true;
    }
    // A compact timestamp: 20240101123456 (a migration's version), with milliseconds or not.
    if g.len() == 1 && matches!(run.digits.len(), 12 | 14 | 17) && is_compact_timestamp(&run.digits)
    {
        return true;
    }
    // A decimal number with one point: 33.333333333333336 (a float as Postgres prints it).
    if g.len() == 2 && run.separators[0] == "." {
        return true;
    }
    // A ZIP+4 code: 12345-6789.
    if g.as_slice() == [5, 4] && seps == ["-"] {
        return true;
    }
    // A decimal amount: 1234567.89, 2,243,082.80 (cents after a point, thousands by commas).
    if g.len() >= 2
        && g.last() == Some(&2)
        && run.separators.last().map(String::as_str) == Some(".")
        && seps[..seps.len() - 1].iter().all(|s| *s == ",")
        && g[1..g.len() - 1].iter().all(|n| *n == 3)
    {
        return true;
    }
    // xmin:xmax:xip,... with xmin <= every xip < xmax
    if g.len() >= 2
        && run.separators.first().map(String::as_str) == Some(":")
        && run.separators.get(1).is_none_or(|s| s == ":")
    {
        let mut numbers = Vec::new();
        let mut start = 0;
        for n in g {
            numbers.push(run.digits[start..start + n].parse::<u128>().unwrap_or(0));
            start += n;
        }
        let (xmin, xmax) = (numbers[0], numbers[1]);
        let xip_ok = run.separators.iter().skip(2).all(|s| s == ",")
            && numbers[2..].iter().all(|x| (xmin..xmax).contains(x));
        // Transaction ids start at 3, and a snapshot spans the transactions in flight, never
        // billions: `0:224308280` or `1:4111111111111111` is a number behind a prefix.
        return xmin >= 3 && xmin <= xmax && xmax - xmin <= 10_000_000 && xip_ok;
    }
    false
}

/// `YYYYMMDDhhmm`, `YYYYMMDDhhmmss` or with three digits of milliseconds, from 1970 to 2099,
/// every field in its range.
fn is_compact_timestamp(digits: &str) -> bool {
    let n = |r: std::ops::Range<usize>| digits.get(r).and_then(|d| d.parse::<u32>().ok());
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute)) =
        (n(0..4), n(4..6), n(6..8), n(8..10), n(10..12))
    else {
        return false;
    };
    let second_ok = digits.len() == 12 || n(12..14).is_some_and(|s| s < 60);
    (1970..2100).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && hour < 24
        && minute < 60
        && second_ok
}

/// What the name of the field a value sits under says it may hold. Read once per field (a
/// page reply names its columns once), not once per value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hint {
    pub birth: bool,
    pub routing: bool,
    pub phone: bool,
    /// An account *number*, not a key that points at an account (`account_id`) or its kind.
    pub account: bool,
    /// A measure (`bytes`, `milliseconds`, `amount`, `count`): a plain number under it is a
    /// quantity, not an identifier, whatever its digits.
    pub quantity: bool,
    /// Not what the name says but what the policy does: the field's values cross unchanged
    /// (a kept column). Real values of the source are looked for in it where they are
    /// distinctive ([`crate::ExactMatcher::find_distinctive`]); the patterns read it as any.
    pub kept: bool,
}

impl Hint {
    /// No field name (a key, a value split over fields, a body read as text).
    pub const NONE: Hint = Hint {
        birth: false,
        routing: false,
        phone: false,
        account: false,
        quantity: false,
        kept: false,
    };

    /// The hint of a field name, in any case. A hash a framework appends to a generated name
    /// (`account_emailaddress_user_id_2c513194`) is no part of it: the name is read without it.
    pub fn of(name: &str) -> Hint {
        let name = crate::names::without_hash_suffix(name);
        let lower = if name.bytes().any(|b| b.is_ascii_uppercase()) || !name.is_ascii() {
            std::borrow::Cow::Owned(name.to_lowercase())
        } else {
            std::borrow::Cow::Borrowed(name)
        };
        let name = lower.as_ref();
        let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
        Hint {
            birth: has(&["birth", "dob", "born", "bday"]),
            routing: has(&["routing", "aba", "rtn"]),
            phone: has(&["phone", "tel", "mobile", "fax"]),
            account: has(&["account", "acct", "iban"])
                && !name.ends_with("_id")
                && !name.ends_with("id")
                && !name.contains("type"),
            quantity: has(&[
                "bytes",
                "size",
                "count",
                "length",
                "duration",
                "millis",
                "seconds",
                "minutes",
                "amount",
                "total",
                "price",
                "cost",
                "quantity",
                "qty",
                "weight",
                "height",
                "width",
                "population",
                "views",
                "likes",
                "score",
                "points",
                "balance",
                "revenue",
                "sum",
            ]),
            kept: false,
        }
    }
}

/// A North American number: area code and exchange start with 2-9.
fn nanp_valid(digits: &str) -> bool {
    let d = digits
        .strip_prefix('1')
        .filter(|d| d.len() == 10)
        .unwrap_or(digits);
    let b = d.as_bytes();
    d.len() == 10 && (b'2'..=b'9').contains(&b[0]) && (b'2'..=b'9').contains(&b[3])
}

/// Every pattern finding in one normalized string, under a field whose name gave `hint`.
pub fn detect(text: &str, hint: Hint, hits: &mut Vec<Hit>) {
    // A bytea as Postgres prints it (`\x` and hex): its bytes are not text, and hex digits
    // broken by letters only ever add up to noise.
    if let Some(hex) = text.strip_prefix("\\x") {
        if hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return;
        }
    }
    if is_uuid(text.trim()) {
        return;
    }
    // A date as Postgres prints it is one benign digit run and nothing else: only a birth date
    // can be read in it.
    if is_iso_date(text) {
        if hint.birth {
            detect_birth_date(text, hits);
        }
        return;
    }
    // A plain number under a measure's name is that measure (a 9-digit byte count is no SSN).
    let quantity = hint.quantity && !hint.account && !hint.phone && !hint.routing;
    if plain_number_may_be_pii(text, hint) == Some(false)
        || (quantity && plain_number_digits(text).is_some())
    {
        if hint.birth {
            detect_birth_date(text, hits);
        }
        return;
    }
    detect_tokenised(text, hint, hits);
}

/// `YYYY-MM-DD`, nothing before or after.
fn is_iso_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// For a plain number (an id, a count, an amount), whether the digit detectors could fire on
/// it, decided without tokenising; `None` for any other text. A number is one run, or two
/// joined by a point (benign); only the lengths below can be anything but a number.
pub fn plain_number_may_be_pii(text: &str, hint: Hint) -> Option<bool> {
    let may_be_pii = |n: usize| matches!(n, 9..=11 | 13..=19) || (n >= 6 && hint.account);
    plain_number_digits(text).map(|digits| digits.is_some_and(may_be_pii))
}

/// [`detect`] without its shortcuts: every digit run, every `@`.
fn detect_tokenised(text: &str, hint: Hint, hits: &mut Vec<Hit>) {
    for run in digit_runs(text) {
        if is_benign(&run) {
            continue;
        }
        detect_run(&run, hint, hits);
        // A number behind a prefix (`0:224308280`) or in a list (`12,4111111111111111`) is
        // read on its own too: the parts between separators that rarely sit inside a number.
        for part in split_at_unusual_separators(&run) {
            if !is_benign(&part) {
                detect_run(&part, hint, hits);
            }
        }
    }
    detect_email(text, hits);
    if hint.birth {
        detect_birth_date(text, hits);
    }
    if (hint.birth || speaks_of_birth(text)) && text.bytes().any(|b| b.is_ascii_alphabetic()) {
        detect_month_name_date(text, hits);
    }
}

/// A date written with its month's name (`July 23, 1984`, `23 Jul 1984`, `Jul 23rd 1984`,
/// [`maskbus_pii::read::month_name_date`]) that keeps its month and day.
fn detect_month_name_date(text: &str, hits: &mut Vec<Hit>) {
    let chars: Vec<char> = text.chars().collect();
    for run in maskbus_pii::read::runs_of(&chars) {
        if let Some((month, day)) = maskbus_pii::read::month_name_date(&chars, &run) {
            if (month, day) != (1, 1) {
                hits.push(Hit::new(Detector::BirthDate, &run.digits));
            }
        }
    }
}

/// Free text that says a date in it is a birth date (`born July 23, 1984`, `DOB: 23 Jul 1984`).
fn speaks_of_birth(text: &str) -> bool {
    let bytes = text.as_bytes();
    ["born", "birth", "dob", "b-day", "bday"].iter().any(|w| {
        bytes
            .windows(w.len())
            .any(|window| window.eq_ignore_ascii_case(w.as_bytes()))
    })
}

/// A plain ASCII number: `Some(Some(n))` for an optionally signed integer of `n` digits,
/// `Some(None)` for one with a fraction (`-12.50`, two groups joined by a point, which
/// [`is_benign`] passes), `None` for anything else.
fn plain_number_digits(text: &str) -> Option<Option<usize>> {
    let b = text.as_bytes();
    let b = b.strip_prefix(b"-").unwrap_or(b);
    let point = b.iter().position(|c| *c == b'.');
    let (whole, fraction) = match point {
        Some(p) => (&b[..p], Some(&b[p + 1..])),
        None => (b, None),
    };
    let digits = |part: &[u8]| !part.is_empty() && part.iter().all(u8::is_ascii_digit);
    match fraction {
        None if digits(whole) => Some(Some(whole.len())),
        Some(fraction) if digits(whole) && digits(fraction) => Some(None),
        _ => None,
    }
}

/// The parts of `run` between separators that are not spaces, dashes or dots (none when it
/// has no such separator).
fn split_at_unusual_separators(run: &DigitRun) -> Vec<DigitRun> {
    let usual = |s: &str| s.chars().all(|c| matches!(c, ' ' | '-' | '.'));
    if run.separators.iter().all(|s| usual(s)) {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut current = DigitRun {
        digits: String::new(),
        groups: Vec::new(),
        separators: Vec::new(),
        whole: false,
        span: 0..0,
    };
    let mut start = 0;
    for (i, n) in run.groups.iter().enumerate() {
        current.digits.push_str(&run.digits[start..start + n]);
        current.groups.push(*n);
        start += n;
        match run.separators.get(i) {
            Some(sep) if usual(sep) => current.separators.push(sep.clone()),
            _ => {
                let done = std::mem::replace(
                    &mut current,
                    DigitRun {
                        digits: String::new(),
                        groups: Vec::new(),
                        separators: Vec::new(),
                        whole: false,
                        span: 0..0,
                    },
                );
                parts.push(done);
            }
        }
    }
    parts
}

/// A UUID as Postgres prints it (8-4-4-4-12 hex digits): random, identifies no person, and its
/// digits broken by hex letters add up to noise.
fn is_uuid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The detectors that look at digits only (also used on digits joined across fields).
pub fn detect_run(run: &DigitRun, hint: Hint, hits: &mut Vec<Hit>) {
    let d = run.digits.as_str();
    let n = d.len();
    if n == 9 && is_issuable_ssn_text(d) {
        hits.push(Hit::new(Detector::Ssn, d));
    }
    if n == 9 {
        let mut digits = [0u8; 9];
        for (slot, b) in digits.iter_mut().zip(d.bytes()) {
            *slot = b - b'0';
        }
        let federal_prefix =
            matches!(d[..2].parse::<u8>().unwrap_or(99), 0..=12 | 21..=32 | 61..=72 | 80);
        if aba_checksum_ok(&digits) && (federal_prefix || hint.routing) {
            hits.push(Hit::new(Detector::RoutingNumber, d));
        }
    }
    if (13..=19).contains(&n) && luhn_valid(d) {
        hits.push(Hit::new(Detector::Card, d));
    }
    let phone_shape = matches!(run.groups.as_slice(), [3, 3, 4] | [1, 3, 3, 4]);
    if (n == 10 || n == 11) && nanp_valid(d) && (phone_shape || hint.phone) {
        hits.push(Hit::new(Detector::Phone, d));
    }
    if n >= 6 && hint.account {
        hits.push(Hit::new(Detector::AccountNumber, d));
    }
}

/// Domains reserved for examples and tests (RFC 2606, RFC 6761): never a real person's.
fn reserved_domain(domain: &str) -> bool {
    let domain = domain.to_ascii_lowercase();
    ["example.com", "example.org", "example.net"].contains(&domain.as_str())
        || [
            ".example",
            ".test",
            ".invalid",
            ".localhost",
            ".example.com",
            ".example.org",
            ".example.net",
        ]
        .iter()
        .any(|suffix| domain.ends_with(suffix))
}

/// Every address of a person in `text`, read as `scrub` reads them
/// ([`maskbus_pii::read::emails`]): a local part that is not masked and a host that is not
/// reserved for examples; a host without a dot (`dave.smith@intranet`) counts when the local
/// part reads like a person's (it has a `.`, `_` or `-`), so `@here` and `me@home` do not.
fn detect_email(text: &str, hits: &mut Vec<Hit>) {
    if !text.contains('@') {
        return;
    }
    if text.is_ascii() {
        for span in maskbus_pii::read::emails(text.as_bytes()) {
            email_hit(&text[span.local], &text[span.domain], hits);
        }
    } else {
        let chars: Vec<char> = text.chars().collect();
        for span in maskbus_pii::read::emails(&chars) {
            let local: String = chars[span.local].iter().collect();
            let domain: String = chars[span.domain].iter().collect();
            email_hit(&local, &domain, hits);
        }
    }
}

fn email_hit(local: &str, domain: &str, hits: &mut Vec<Hit>) {
    let local = local.trim_matches('"');
    let personal = domain.contains('.') || local.contains(['.', '_', '-']);
    if !local.chars().any(char::is_alphanumeric)
        || !personal
        || !domain.chars().any(char::is_alphanumeric)
        || reserved_domain(domain)
    {
        return;
    }
    hits.push(Hit::new(Detector::Email, local));
}

fn detect_birth_date(text: &str, hits: &mut Vec<Hit>) {
    // Bytes, not string slices: text from the wire may put a multi-byte character anywhere.
    let b = text.trim().as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        if part.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(part).ok()?.parse().ok()
        } else {
            None
        }
    };
    let is_sep = |i: usize| matches!(b.get(i), Some(b'-' | b'/' | b'.'));
    // YYYY-MM-DD (ISO), then DD/MM/YYYY or MM/DD/YYYY (and with - or .), then YYYY/MM/DD.
    let (month, day) = if is_sep(4) && is_sep(7) {
        match (number(0..4), number(5..7), number(8..10)) {
            (Some(_), Some(m), Some(d)) => (m, d),
            _ => return,
        }
    } else if is_sep(2) && is_sep(5) {
        match (number(0..2), number(3..5), number(6..10)) {
            // Either order: a birth date that keeps anything but 1 January leaks.
            (Some(a), Some(c), Some(_)) if a <= 12 => (a, c),
            (Some(a), Some(c), Some(_)) => (c, a),
            _ => return,
        }
    } else {
        return;
    };
    if (1..=12).contains(&month) && (1..=31).contains(&day) && (month, day) != (1, 1) {
        hits.push(Hit::new(
            Detector::BirthDate,
            &String::from_utf8_lossy(&b[..10.min(b.len())]),
        ));
    }
}

#[cfg(test)]
mod tests;
