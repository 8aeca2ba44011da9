//! The masking rules, each a pure function from one text value to its masked text.
//!
//! Values arrive as Postgres prints them (`col::text`, DateStyle ISO) and leave as text that casts
//! back into the same column type. Every rule here is idempotent (masking a masked value changes
//! nothing) and reveals at most what its doc says it keeps. A rule that cannot make sense of its
//! input refuses it ([`RuleError`]) rather than pass it through; errors never quote the value.

use crate::pseudonym::{PseudonymKey, PseudonymKind};

/// What a policy can say about one column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Pass unchanged. Must be written out: nothing is kept by default.
    Keep,
    /// SQL NULL.
    Null,
    /// The fixed text [`REDACTED`].
    Redact,
    /// First character and `***`: Johnson becomes `J***`.
    FirstLetter,
    /// `***-**-` and the last four digits, whatever the separators: `***-**-8280`.
    Ssn,
    /// First and last four digits: `4111 **** **** 1234`.
    Card,
    /// First character of the local part, `***@`, the domain: `d***@yahoo.com`.
    Email,
    /// A date's year with month and day set to 01-01: still a valid DATE (a timestamp's, at
    /// midnight, its zone kept).
    YearOnly,
    /// Every digit but the last four becomes `*`; other characters stay, so the length does not
    /// change: `(212) 555-0143` becomes `(***) ***-0143`.
    LastFour,
    /// Free text: every PII span inside it is replaced and the rest kept. The text is read as
    /// the wire audit reads it ([`maskbus_pii::read`]: NFKC, digits of every script and
    /// superscripts, no invisible characters), digit groups joined by what a reader skips (up
    /// to four separators, an `x`, a joining word, a month name). Runs of six or more digits
    /// (SSNs, cards, phones, account numbers, dates) and dates with a month's name become `#`s;
    /// every email keeps only the first letter of its local part. `called about SSN
    /// 224-30-8280` becomes `called about SSN ###-##-####`. Whatever the audit's detectors flag,
    /// scrub hides (`crates/audit/tests/scrub_covers.rs`).
    Scrub,
    /// A JSON document: a rule per path, and every other leaf scrubbed or nulled
    /// ([`crate::json`]).
    Json(crate::json::JsonRule),
    /// This text in place of any non-NULL value.
    Constant(String),
    /// A deterministic keyed fake of the given kind.
    Pseudonym(PseudonymKind),
}

/// What a rule does to distinct values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleClass {
    /// Distinct inputs give distinct outputs by construction, and the key undoes it: fits a
    /// UNIQUE column and a key.
    Bijective,
    /// Distinct inputs give distinct outputs but by a collision chance below 2^-50 at a billion
    /// values (a keyed hash of 56 bits and more): fits a UNIQUE column, not a key.
    Unique,
    /// The same input gives the same output, but different inputs may meet (a fake first name
    /// from a list): joins survive, a UNIQUE column would collide.
    Deterministic,
    /// Many inputs give one output (`J***`, `[REDACTED]`, NULL).
    Lossy,
}

impl RuleClass {
    /// Masked values stay distinct: the rule may mask a UNIQUE column.
    pub fn keeps_distinct(self) -> bool {
        matches!(self, RuleClass::Bijective | RuleClass::Unique)
    }

    pub fn name(self) -> &'static str {
        match self {
            RuleClass::Bijective => "bijective",
            RuleClass::Unique => "unique",
            RuleClass::Deterministic => "deterministic",
            RuleClass::Lossy => "lossy",
        }
    }
}

/// What a rule needs to know of the column a cell comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellShape {
    /// The column's length limit (`varchar(n)`): pseudonyms shorten to fit it.
    pub max_chars: Option<usize>,
    /// The column is an array: the rule applies to each element.
    pub array: bool,
}

impl CellShape {
    /// The shape of a column the catalog describes by its `information_schema` type
    /// (`ARRAY` for arrays) and length limit.
    pub fn of(data_type: &str, max_chars: Option<usize>) -> Self {
        CellShape {
            max_chars,
            array: data_type == "ARRAY",
        }
    }
}

/// The text every redacted value becomes.
pub const REDACTED: &str = "[REDACTED]";

/// Why a rule refused a value. Carries shapes, never the value itself.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("is not an ISO date (YYYY-MM-DD), {0} characters long")]
    NotADate(usize),
    #[error("needs a pseudonym key, and the policy was loaded without one")]
    NoPseudonymKey,
    #[error("is not a JSON document, {0} characters long")]
    NotJson(usize),
    #[error("is not an array as Postgres prints one, {0} characters long")]
    NotAnArray(usize),
    #[error("has {letters} letters and {digits} digits: fewer than a million values of its shape, under NIST SP 800-38G's least domain for FF1, so a fake would hide next to nothing; give the column {{ pseudonym = \"token\" }} (unique, not a key), redact or null")]
    DomainTooSmall { letters: usize, digits: usize },
    #[error("holds letters or digits outside ASCII ({0} characters long), which the alnum pseudonym does not map; give the column {{ pseudonym = \"token\" }} or {{ pseudonym = \"digits\" }}")]
    NotAsciiAlnum(usize),
    #[error("could not be enciphered ({0} characters long); nothing of it is written")]
    CipherFailed(usize),
    #[error("is a JSON document nested deeper than the budget of {0} (crates/mask/src/json.rs, DEPTH_BUDGET); mask the column with null or redact, or flatten the documents")]
    TooDeep(usize),
}

impl Rule {
    /// The rule's name as written in a policy file.
    pub fn name(&self) -> String {
        match self {
            Rule::Keep => "keep".into(),
            Rule::Null => "null".into(),
            Rule::Redact => "redact".into(),
            Rule::FirstLetter => "first_letter".into(),
            Rule::Ssn => "ssn".into(),
            Rule::Card => "card".into(),
            Rule::Email => "email".into(),
            Rule::YearOnly => "year_only".into(),
            Rule::LastFour => "last_four".into(),
            Rule::Scrub => "scrub".into(),
            Rule::Json(_) => "json".into(),
            Rule::Constant(text) => format!("constant {text:?}"),
            Rule::Pseudonym(kind) => format!("pseudonym {}", kind.name()),
        }
    }

    /// What distinct inputs become under this rule: the one place `policy check` reads
    /// uniqueness from (a pseudonym's class is its kind's, [`PseudonymKind::class`]).
    pub fn class(&self) -> RuleClass {
        match self {
            Rule::Keep => RuleClass::Bijective,
            Rule::Pseudonym(kind) => kind.class(),
            _ => RuleClass::Lossy,
        }
    }

    /// The value whose masked form is `masked`, for the rules that can be undone: `keep` (the
    /// value itself) and the bijective pseudonyms under the key (`None` without one). What a
    /// key column's rule must allow, so the sync can page and look up by masked keys.
    pub fn reveal(&self, key: Option<&PseudonymKey>, masked: &str) -> Option<String> {
        match self {
            Rule::Keep => Some(masked.to_string()),
            Rule::Pseudonym(kind) if kind.class() == RuleClass::Bijective => {
                kind.reveal(key?, masked)
            }
            _ => None,
        }
    }

    /// Whether a key column may carry the rule: it keeps values distinct by construction and
    /// the key undoes it ([`Rule::reveal`]), so pages, lookups and deletes by the masked key
    /// find the source's row, and the same rule at both ends of a foreign key keeps the link.
    pub fn fits_a_key(&self) -> bool {
        self.class() == RuleClass::Bijective
    }

    /// Whether the rule, on an array column, applies to each element (every rule but `keep` and
    /// `null`, which apply to the whole value).
    pub fn masks_elements(&self) -> bool {
        !matches!(self, Rule::Keep | Rule::Null)
    }

    /// Applies the rule to one cell of a column of this shape: to each element of an array
    /// ([`crate::array`]), fitted to a length limit ([`Rule::apply_within`]).
    pub fn apply_to(
        &self,
        value: Option<String>,
        key: Option<&PseudonymKey>,
        shape: CellShape,
    ) -> Result<Option<String>, RuleError> {
        match value {
            Some(text) if shape.array && self.masks_elements() => {
                let each = crate::array::apply_each(self, &text, key, shape.max_chars)?;
                // A number split over elements (`{224,30,8280}`) is read joined, as the audit
                // reads adjacent cells: the array's text is scrubbed once more as a whole. Scrub
                // writes `#` for digits and keeps an email's shape, neither of which a quoted
                // element needs escaped, so the literal stays an array of as many elements.
                Ok(Some(match self {
                    Rule::Scrub => scrub(&each),
                    _ => each,
                }))
            }
            value => self.apply_within(value, key, shape.max_chars),
        }
    }

    /// Applies the rule. `None` is SQL NULL, and every rule maps it to NULL.
    pub fn apply(
        &self,
        value: Option<String>,
        key: Option<&PseudonymKey>,
    ) -> Result<Option<String>, RuleError> {
        self.apply_within(value, key, None)
    }

    /// Applies the rule for a column of at most `max_chars` characters: pseudonyms shorten to
    /// fit (see [`PseudonymKind::apply_within`]); other rules are judged against the limit by
    /// `fit` before anything is masked.
    pub fn apply_within(
        &self,
        value: Option<String>,
        key: Option<&PseudonymKey>,
        max_chars: Option<usize>,
    ) -> Result<Option<String>, RuleError> {
        let Some(value) = value else {
            return Ok(None);
        };
        Ok(match self {
            Rule::Keep => Some(value),
            Rule::Null => None,
            Rule::Redact => Some(REDACTED.to_string()),
            Rule::FirstLetter => Some(first_letter(&value)),
            Rule::Ssn => Some(ssn(&value)),
            Rule::Card => Some(card(&value)),
            Rule::Email => Some(email(&value)),
            Rule::YearOnly => Some(year_only(&value)?),
            Rule::LastFour => Some(last_four(&value)),
            Rule::Scrub => Some(scrub(&value)),
            Rule::Json(rule) => Some(rule.apply(&value, key)?),
            Rule::Constant(text) => Some(text.clone()),
            Rule::Pseudonym(kind) => Some(kind.try_apply_within(
                key.ok_or(RuleError::NoPseudonymKey)?,
                &value,
                max_chars,
            )?),
        })
    }
}

/// `Johnson` → `J***`; empty stays empty. Counts characters, not bytes, so `Øster` → `Ø***`.
pub fn first_letter(value: &str) -> String {
    let mut chars = value.chars();
    match chars.next() {
        None => String::new(),
        Some(first) => {
            let mut out = String::with_capacity(first.len_utf8() + 3);
            out.push(first);
            out.push_str("***");
            out
        }
    }
}

/// Every decimal digit of `value`, in any script, as its ASCII value (`٢` is `b'2'`).
fn digits_of(value: &str) -> Vec<u8> {
    value
        .chars()
        .filter_map(maskbus_pii::decimal_value)
        .map(|d| b'0' + d)
        .collect()
}

/// The last `n` decimal digits of `value` (any script), as ASCII, in order (fewer when it has
/// fewer).
fn last_digits(value: &str, n: usize) -> String {
    let digits = digits_of(value);
    String::from_utf8(digits[digits.len().saturating_sub(n)..].to_vec()).unwrap_or_default()
}

/// `224-30-8280`, `224308280` or `224 30 8280` → `***-**-8280`. With fewer than four digits,
/// `***-**-****`.
pub fn ssn(value: &str) -> String {
    let last = last_digits(value, 4);
    if last.len() < 4 {
        return "***-**-****".to_string();
    }
    format!("***-**-{last}")
}

/// `4111111111111111` (any separators, 12 to 19 digits) → `4111 **** **** 1111`. Shorter digit
/// runs keep only the last four; a value already in the masked shape is returned as it is, which
/// makes the rule idempotent. The output never holds more than eight digits.
pub fn card(value: &str) -> String {
    if is_masked_card(value) {
        return value.to_string();
    }
    let digits = digits_of(value);
    let text = |d: &[u8]| String::from_utf8_lossy(d).into_owned();
    match digits.len() {
        n if n >= 12 => format!(
            "{} **** **** {}",
            text(&digits[..4]),
            text(&digits[n - 4..])
        ),
        n if n >= 4 => format!("**** **** **** {}", text(&digits[n - 4..])),
        _ => "**** **** **** ****".to_string(),
    }
}

fn is_masked_card(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() == 19
        && b[..4].iter().all(u8::is_ascii_digit)
        && &b[4..15] == b" **** **** "
        && b[15..].iter().all(u8::is_ascii_digit)
}

/// `dave@yahoo.com` → `d***@yahoo.com`. The local part is everything before the last `@`; a
/// value without `@` is treated as all local part (`dave` → `d***`).
pub fn email(value: &str) -> String {
    match value.rfind('@') {
        Some(at) => {
            let (local, domain) = value.split_at(at);
            // An empty local part still gets a masked one, `*` standing in for the missing first
            // character, so that masking the result again changes nothing.
            let mut out = if local.is_empty() {
                "****".to_string()
            } else {
                first_letter(local)
            };
            out.push_str(domain);
            out
        }
        None => first_letter(value),
    }
}

/// `1985-03-14` → `1985-01-01`, also for years past 9999 and BC dates (`0044-03-15 BC`); a
/// timestamp keeps its year too, at midnight, with its zone (`1962-02-18 08:30:00+02` →
/// `1962-01-01 00:00:00+02`). `infinity` and `-infinity` pass: they carry nothing. Anything else
/// is refused.
pub fn year_only(value: &str) -> Result<String, RuleError> {
    if value == "infinity" || value == "-infinity" {
        return Ok(value.to_string());
    }
    let (value_ad, era) = match value.strip_suffix(" BC") {
        Some(date) => (date, " BC"),
        None => (value, ""),
    };
    let not_a_date = || RuleError::NotADate(value.chars().count());
    let (date, time) = match value_ad.find([' ', 'T']) {
        Some(at) => (&value_ad[..at], Some(&value_ad[at + 1..])),
        None => (value_ad, None),
    };
    let (year, month_day) = date.split_once('-').ok_or_else(not_a_date)?;
    let md = month_day.as_bytes();
    let shape_ok = year.len() >= 4
        && year.bytes().all(|b| b.is_ascii_digit())
        && md.len() == 5
        && md[2] == b'-'
        && md[..2].iter().chain(&md[3..]).all(u8::is_ascii_digit);
    if !shape_ok {
        return Err(not_a_date());
    }
    let Some(time) = time else {
        return Ok(format!("{year}-01-01{era}"));
    };
    // A time of day (hh:mm:ss with a fraction), then its zone if any: the zone stays.
    let zone_at = time
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, '+' | '-' | 'Z'))
        .map_or(time.len(), |(i, _)| i);
    let (clock, zone) = time.split_at(zone_at);
    let clock_ok = clock.len() >= 5
        && clock
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b':' || b == b'.');
    let zone_ok = zone
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b':' | b'Z'));
    if !clock_ok || !zone_ok {
        return Err(not_a_date());
    }
    Ok(format!("{year}-01-01 00:00:00{zone}{era}"))
}

/// Every decimal digit (in any script: full-width, Arabic-Indic, ...) except the last four
/// becomes `*`; everything else stays.
pub fn last_four(value: &str) -> String {
    let total = value
        .chars()
        .filter(|c| maskbus_pii::is_decimal_digit(*c))
        .count();
    let hide = total.saturating_sub(4);
    let mut seen = 0;
    value
        .chars()
        .map(|c| {
            if maskbus_pii::is_decimal_digit(c) {
                seen += 1;
                if seen <= hide {
                    return '*';
                }
            }
            c
        })
        .collect()
}

/// The fewest digits a run in free text needs to be scrubbed: fewer identify no one (a house
/// number, a quantity), six and more may be a date, a phone, an account, an SSN or a card.
const SCRUB_MIN_DIGITS: usize = 6;

/// What `scrub` does to one character of the original text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scrubbed {
    Same,
    /// A digit of a run: `#`.
    Hash,
    /// A character of an email's local part after its first: gone.
    Gone,
    /// The `@` of an email: `***` before it.
    StarsBefore,
}

/// Replaces every PII span of free text (see [`Rule::Scrub`]); everything else stays.
///
/// It decides on the text as the wire audit reads it ([`maskbus_pii::read`]: NFKC, every
/// script's digits, no invisible characters; digit groups joined by what a reader skips) and
/// replaces in the original, so the rest of the text keeps its own characters.
pub fn scrub(value: &str) -> String {
    use maskbus_pii::read::{emails, month_name_date, runs_of, Reading};
    let reading = Reading::of(value);
    let chars = reading.chars();
    let original: Vec<char> = value.chars().collect();
    let mut what = vec![Scrubbed::Same; original.len()];
    let mut set = |at: usize, to: Scrubbed| {
        if let Some(slot) = what.get_mut(reading.origin(at)) {
            *slot = to;
        }
    };
    for run in runs_of(chars) {
        if run.digits.len() >= SCRUB_MIN_DIGITS || month_name_date(chars, &run).is_some() {
            for p in run.span.filter(|&p| chars[p].is_ascii_digit()) {
                set(p, Scrubbed::Hash);
            }
        }
    }
    // Every email, wherever it stands, with or without a dot in its host: the local part keeps
    // its first letter or digit.
    for email in emails(chars) {
        let has_host = chars[email.domain.clone()]
            .iter()
            .any(|c| c.is_alphanumeric());
        let Some(lead) = email.local.clone().find(|&p| chars[p].is_alphanumeric()) else {
            continue;
        };
        if !has_host {
            continue;
        }
        // Up to the character after the local part: the `@`, or a space before it.
        let (lead, at) = (reading.origin(lead), reading.origin(email.local.end));
        for o in lead + 1..at {
            if let Some(slot) = what.get_mut(o) {
                *slot = Scrubbed::Gone;
            }
        }
        if let Some(slot) = what.get_mut(at) {
            *slot = Scrubbed::StarsBefore;
        }
    }
    let mut out = String::with_capacity(value.len());
    for (c, what) in original.into_iter().zip(what) {
        match what {
            Scrubbed::Same => out.push(c),
            Scrubbed::Hash => out.push('#'),
            Scrubbed::Gone => {}
            Scrubbed::StarsBefore => {
                out.push_str("***");
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_replaces_pii_inside_text_and_keeps_the_rest() {
        assert_eq!(
            scrub("customer said SSN 224-30-8280, call (212) 555-0143"),
            "customer said SSN ###-##-####, call (###) ###-####"
        );
        assert_eq!(
            scrub("card 4111 1111 1111 1111 exp 12/27"),
            "card #### #### #### #### exp 12/27"
        );
        assert_eq!(
            scrub("mail dave.smith@yahoo.com today"),
            "mail d***@yahoo.com today"
        );
        assert_eq!(
            scrub("born 04/04/1987 in room 12"),
            "born ##/##/#### in room 12"
        );
        assert_eq!(scrub("２２４-３０-８２８０"), "###-##-####");
        assert_eq!(
            scrub("224\u{200B}30\u{200B}8280"),
            "###\u{200B}##\u{200B}####"
        );
        assert_eq!(scrub("order 12345 of 3 items"), "order 12345 of 3 items");
        let once = scrub("SSN 224-30-8280 <dave@x.org>");
        assert_eq!(scrub(&once), once, "idempotent");
    }

    #[test]
    fn scrub_hides_the_forms_a_careful_reader_still_reads() {
        // Separators of every kind, a letter x, a joining word; superscript digits.
        for ssn in [
            "224\n30\n8280",
            "224#30#8280",
            "224 -- 30 -- 8280",
            "224x30x8280",
            "224-30 and 8280",
            "²²⁴-³⁰-⁸²⁸⁰",
        ] {
            let scrubbed = scrub(&format!("SSN {ssn} on file"));
            assert!(
                !scrubbed
                    .chars()
                    .any(|c| maskbus_pii::decimal_value(c).is_some()),
                "{ssn:?} became {scrubbed:?}"
            );
            assert!(scrubbed.starts_with("SSN ") && scrubbed.ends_with(" on file"));
        }
        assert_eq!(last_four("(²¹²) ⁵⁵⁵-⁰¹⁴³"), "(***) ***-⁰¹⁴³");
        // Every email, wherever it stands.
        assert_eq!(
            scrub("a@b.co,dave.smith@yahoo.com"),
            "a***@b.co,d***@yahoo.com"
        );
        assert_eq!(scrub("note\ndave.smith@yahoo.com"), "note\nd***@yahoo.com");
        assert_eq!(scrub("dave.smith＠yahoo.com"), "d***＠yahoo.com");
        assert_eq!(scrub("dave.smith@yahoo．com"), "d***@yahoo．com");
        assert_eq!(
            scrub("ask dave.smith@intranet now"),
            "ask d***@intranet now"
        );
        // What is not a number of a person stays.
        assert_eq!(scrub("order 12345 of 3 items"), "order 12345 of 3 items");
        assert_eq!(scrub("@here see room 12"), "@here see room 12");
        for text in ["224 -- 30 -- 8280 a@b.co", "x²²⁴-³⁰-⁸²⁸⁰ dave@intranet"] {
            let once = scrub(text);
            assert_eq!(scrub(&once), once, "idempotent on {text:?}");
        }
    }

    #[test]
    fn scrub_hides_what_an_attacker_wrote_next() {
        // Separators drawn as dashes, marks, fillers, stars, wide gaps, wrapped lines.
        for ssn in [
            "224\u{640}30\u{640}8280",
            "224ー30ー8280",
            "224ｰ30ｰ8280",
            "224ˍ30ˍ8280",
            "224\u{5B0}30\u{5B0}8280",
            "2\u{3164}2\u{3164}4\u{3164}3\u{3164}0\u{3164}8\u{3164}2\u{3164}8\u{3164}0",
            "224*30*8280",
            "2\u{301}\u{302}\u{303}\u{304}\u{305}\u{306}24308280",
            "224-30-\n        8280",
            "二二四-三〇-八二八〇",
            "⓶⓶⓸-⓷⓪-⓼⓶⓼⓪",
            "፪፪፬-፫፩-፭፪፰፩",
        ] {
            let scrubbed = scrub(&format!("SSN {ssn} on file"));
            assert!(
                !scrubbed
                    .chars()
                    .any(|c| maskbus_pii::decimal_value(c).is_some()),
                "{ssn:?} became {scrubbed:?}"
            );
        }
        assert_eq!(
            scrub("Tel (212)     555     0143"),
            "Tel (###)     ###     ####"
        );
        assert_eq!(scrub("❹❶❶❶ ❶❶❶❶ ❶❶❶❶ ❶❶❶❶"), "#### #### #### ####");
        // An at sign spelled as an entity or escape, a space around it, an address literal.
        for (text, masked) in [
            ("dave.smith&#64;yahoo.com", "d***&#64;yahoo.com"),
            ("dave.smith%40yahoo.com", "d***%40yahoo.com"),
            ("dave.smith @ yahoo.com", "d*** @ yahoo.com"),
            ("dave.smith@[192.168.0.1]", "d***@[###.###.#.#]"),
        ] {
            assert_eq!(scrub(text), masked, "{text}");
        }
        assert_eq!(scrub("meet @ noon at 12"), "meet @ noon at 12");
        // Circled digits are digits to the digit pseudonym too.
        let key = PseudonymKey::new(b"k");
        let card = "④①①①①①①①①①①①①①①①";
        assert_ne!(PseudonymKind::Digits.apply(&key, card), card);
        assert!(PseudonymKind::Digits
            .apply(&key, card)
            .chars()
            .all(|c| c.is_ascii_digit()));
    }

    fn apply(rule: Rule, value: &str) -> String {
        rule.apply(Some(value.to_string()), None).unwrap().unwrap()
    }

    #[test]
    fn every_rule_maps_null_to_null() {
        let key = PseudonymKey::new(b"k");
        for rule in [
            Rule::Keep,
            Rule::Null,
            Rule::Redact,
            Rule::FirstLetter,
            Rule::Ssn,
            Rule::Card,
            Rule::Email,
            Rule::YearOnly,
            Rule::LastFour,
            Rule::Constant("x".into()),
            Rule::Pseudonym(PseudonymKind::Email),
        ] {
            assert_eq!(rule.apply(None, Some(&key)), Ok(None), "{}", rule.name());
        }
    }

    #[test]
    fn last_names() {
        assert_eq!(first_letter("Johnson"), "J***");
        assert_eq!(first_letter("J"), "J***");
        assert_eq!(first_letter(""), "");
        assert_eq!(first_letter("Øster"), "Ø***");
        assert_eq!(first_letter("王小明"), "王***");
        assert_eq!(first_letter("J***"), "J***");
    }

    #[test]
    fn ssns_whatever_their_separators() {
        assert_eq!(ssn("224-30-8280"), "***-**-8280");
        assert_eq!(ssn("224308280"), "***-**-8280");
        assert_eq!(ssn("224 30 8280"), "***-**-8280");
        assert_eq!(ssn("224.30.8280"), "***-**-8280");
        assert_eq!(ssn("***-**-8280"), "***-**-8280");
        assert_eq!(ssn("12"), "***-**-****");
        assert_eq!(ssn(""), "***-**-****");
    }

    #[test]
    fn cards_of_every_length_and_format() {
        assert_eq!(card("4111111111111234"), "4111 **** **** 1234");
        assert_eq!(card("4111 1111 1111 1234"), "4111 **** **** 1234");
        assert_eq!(card("4111-1111-1111-1234"), "4111 **** **** 1234");
        assert_eq!(card("378282246310005"), "3782 **** **** 0005"); // 15-digit Amex
        assert_eq!(card("6011000990139424123"), "6011 **** **** 4123"); // 19 digits
        assert_eq!(card("4111 **** **** 1234"), "4111 **** **** 1234");
        assert_eq!(card("12345678"), "**** **** **** 5678");
        assert_eq!(card("12"), "**** **** **** ****");
        assert_eq!(card(""), "**** **** **** ****");
    }

    #[test]
    fn emails() {
        assert_eq!(email("dave@yahoo.com"), "d***@yahoo.com");
        assert_eq!(email("d@yahoo.com"), "d***@yahoo.com");
        assert_eq!(email("@yahoo.com"), "****@yahoo.com");
        assert_eq!(email("no-at-sign"), "n***");
        assert_eq!(email(""), "");
        assert_eq!(email("\"a@b\"@example.org"), "\"***@example.org");
        assert_eq!(email("élodie@exemple.fr"), "é***@exemple.fr");
    }

    #[test]
    fn dates_keep_their_year() {
        assert_eq!(year_only("1985-03-14"), Ok("1985-01-01".into()));
        assert_eq!(year_only("2000-02-29"), Ok("2000-01-01".into()));
        assert_eq!(year_only("1999-12-31"), Ok("1999-01-01".into()));
        assert_eq!(year_only("0001-12-31 BC"), Ok("0001-01-01 BC".into()));
        assert_eq!(year_only("12345-06-07"), Ok("12345-01-01".into()));
        assert_eq!(year_only("infinity"), Ok("infinity".into()));
        assert_eq!(year_only("1985-01-01"), Ok("1985-01-01".into()));
        assert_eq!(
            year_only("1962-02-18 08:30:00"),
            Ok("1962-01-01 00:00:00".into())
        );
        assert_eq!(
            year_only("1962-02-18 08:30:00.25+02:30"),
            Ok("1962-01-01 00:00:00+02:30".into())
        );
        assert_eq!(
            year_only("1962-01-01 00:00:00-05"),
            Ok("1962-01-01 00:00:00-05".into())
        );
        assert_eq!(year_only("1985-03-14 lunch"), Err(RuleError::NotADate(16)));
        assert_eq!(year_only("14/03/1985"), Err(RuleError::NotADate(10)));
        assert_eq!(year_only("1985-3-14"), Err(RuleError::NotADate(9)));
        assert_eq!(year_only(""), Err(RuleError::NotADate(0)));
    }

    #[test]
    fn digits_of_every_script_are_masked() {
        assert_eq!(last_four("٠١٢٣٤٥٦٧٨٩"), "******٦٧٨٩");
        assert_eq!(last_four("(２１２) ５５５-０１４３"), "(***) ***-０１４３");
        assert_eq!(ssn("２２４-３０-８２８０"), "***-**-8280");
        assert_eq!(card("४१११ १११११११११११११"), "4111 **** **** 1111");
    }

    #[test]
    fn last_four_keeps_format_and_length() {
        assert_eq!(last_four("123456789"), "*****6789");
        assert_eq!(last_four("(212) 555-0143"), "(***) ***-0143");
        assert_eq!(last_four("021000021"), "*****0021");
        assert_eq!(last_four("12"), "12");
        assert_eq!(last_four(""), "");
    }

    #[test]
    fn redact_constant_keep_null() {
        assert_eq!(apply(Rule::Redact, "12 Main Street"), REDACTED);
        assert_eq!(apply(Rule::Constant("n/a".into()), "secret"), "n/a");
        assert_eq!(apply(Rule::Keep, "Springfield"), "Springfield");
        assert_eq!(Rule::Null.apply(Some("x".into()), None), Ok(None));
    }

    #[test]
    fn pseudonyms_need_a_key() {
        let rule = Rule::Pseudonym(PseudonymKind::FirstName);
        assert_eq!(
            rule.apply(Some("Ann".into()), None),
            Err(RuleError::NoPseudonymKey)
        );
    }
}
