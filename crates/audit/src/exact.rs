//! Exact match against the source: is any real sensitive value of production on the bus,
//! whatever its shape?
//!
//! The matcher holds only keyed 64-bit hashes of the real values (SipHash-2-4 under a key
//! derived with BLAKE3 from one the caller draws at random for each run and never stores), never
//! the values. A value with six or more
//! digits is matched by its digits inside any digit run of a bus string (so `224-30-8280`,
//! `224308280` and full-width forms all match); other values by their words, lowercased,
//! against every run of consecutive words of a bus string (so `Lockman` matches
//! `Dear Mr LOCKMAN,` but not `Lockmanning`).

use crate::detect::{digit_runs, is_benign, Detector, Hit};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Values shorter than this (in characters, or digits) are too common to mean anything.
pub const MIN_TEXT_CHARS: usize = 4;
pub const MIN_DIGITS: usize = 6;
pub const MAX_WORDS: usize = 8;

pub struct ExactMatcher {
    /// SipHash's two key words, derived from the caller's 32-byte key.
    sip: (u64, u64),
    digits: HashSet<u64>,
    digit_lengths: BTreeSet<usize>,
    /// Word values, each with whether it is distinctive ([`is_distinctive`]).
    words: HashMap<u64, bool>,
    /// Word values as written ([`form`]): what a kept cell must hold to hold one.
    forms: HashSet<u64>,
    /// The first word of every word value: a run of a text's words is looked up only from a
    /// word that starts one (one lookup per word of clean text, not one per run).
    first_words: HashSet<u64>,
    max_words: usize,
    reveal: Option<Reveal>,
}

/// What real digits a run of digits on the wire could be the fake of, under each bijective
/// pseudonym the policy writes (the pseudonym key decrypts them; the caller holds it).
pub type Reveal = Box<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// How a real value is matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matchable {
    Digits(String),
    Words(Vec<String>),
    /// Too short or too common to match meaningfully.
    TooShort,
}

/// Lowercased words of a normalized text.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How `value` (normalized) would be matched.
pub fn matchable(value: &str) -> Matchable {
    let digits: String = value.chars().filter(char::is_ascii_digit).collect();
    let alphanumerics = value.chars().filter(|c| c.is_alphanumeric()).count();
    if digits.len() * 2 >= alphanumerics && alphanumerics > 0 {
        // Mostly digits: a number, matched by its digits, or not at all when short.
        return if digits.len() >= MIN_DIGITS {
            Matchable::Digits(digits)
        } else {
            Matchable::TooShort
        };
    }
    let words = words(value);
    let chars: usize = words.iter().map(|w| w.chars().count()).sum();
    if chars < MIN_TEXT_CHARS || words.is_empty() || words.len() > MAX_WORDS {
        return Matchable::TooShort;
    }
    Matchable::Words(words)
}

/// The byte spans of the words of `text`, as [`words`] cuts them.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

/// A value as written, less case and spacing: lowercased, each run of spaces one space.
fn form(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a real value is told apart wherever it stands, in free text or inside a longer
/// name: one with a digit (`jdoe42`), a space (`Eleanora Lockman`), or any sign but those that
/// join the parts of one name (`jane_doe`, `j.doe`, an address). A value of letters alone,
/// with at most an apostrophe or a hyphen (`Lockman`, `O'Conner`, `Smith-Jones`), reads as
/// one name, which a merchant's or a street's name may hold by chance.
pub fn is_distinctive(value: &str) -> bool {
    !value
        .trim()
        .chars()
        .all(|c| c.is_alphabetic() || matches!(c, '\'' | '\u{2019}' | '-'))
}

/// The names of a source's tables and columns, which every page (`columns`) and schema reply
/// carries by design: a real value that is one of them, or a run of the words of one
/// (`password` in column `password`, `Password`, `PASS_WORD`; `Name`, a word of `first_name`),
/// is on the bus in every message whether it leaks or not, and no secret. The wire audit leaves
/// such values out of the exact match.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Every run of consecutive words of a name, joined by a space.
    runs: HashSet<String>,
    /// Each name's words joined without a space (`pass_word` is `password`).
    squeezed: HashSet<String>,
}

impl Names {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut out = Names::default();
        for name in names {
            let words = words(name);
            for start in 0..words.len() {
                for end in start + 1..=words.len() {
                    out.runs.insert(words[start..end].join(" "));
                }
            }
            if !words.is_empty() {
                out.squeezed.insert(words.concat());
            }
        }
        out
    }

    /// Whether `value` is one of the names, or a run of the words of one, in any case or
    /// spelling.
    pub fn holds(&self, value: &str) -> bool {
        let words = words(value);
        !words.is_empty()
            && (self.runs.contains(&words.join(" ")) || self.squeezed.contains(&words.concat()))
    }
}

/// Whether a real value is its column's own name, or a run of its words, in any case or
/// spelling ([`Names`] of that one column).
pub fn is_its_column_name(column: &str, value: &str) -> bool {
    Names::new([column]).holds(value)
}

impl ExactMatcher {
    pub fn new(key: [u8; 32]) -> Self {
        let derived = blake3::derive_key("maskbus exact matcher v2", &key);
        let word = |at: usize| u64::from_le_bytes(derived[at..at + 8].try_into().unwrap_or([0; 8]));
        Self {
            sip: (word(0), word(8)),
            digits: HashSet::new(),
            digit_lengths: BTreeSet::new(),
            words: HashMap::new(),
            forms: HashSet::new(),
            first_words: HashSet::new(),
            max_words: 0,
            reveal: None,
        }
    }

    /// The same matcher, telling fakes of bijective pseudonyms from real values: a digit run
    /// whose revealed value is a real value of the source is a fake of it, and is read as
    /// masked (`#`s) by the pattern detectors and the match alike. A real value leaked as it is
    /// reveals to a real value only by a 1-in-10^9 chance for an SSN.
    pub fn with_reveal(mut self, reveal: Reveal) -> Self {
        self.reveal = Some(reveal);
        self
    }

    /// Whether these digits (ASCII, nothing else) are those of a real value.
    pub fn has_digits(&self, digits: &str) -> bool {
        self.digits.contains(&self.hash(b'd', digits))
    }

    /// `text` (normalized) with the digits of every run that is a verified fake written as `#`.
    pub fn clear_fakes<'t>(&self, text: std::borrow::Cow<'t, str>) -> std::borrow::Cow<'t, str> {
        let Some(reveal) = &self.reveal else {
            return text;
        };
        if text.bytes().filter(u8::is_ascii_digit).count() < MIN_DIGITS {
            return text;
        }
        let mut chars: Vec<char> = text.chars().collect();
        let mut cleared = false;
        for run in maskbus_pii::read::runs_of(&chars.clone()) {
            if run.digits.len() < MIN_DIGITS {
                continue;
            }
            if reveal(&run.digits).iter().any(|real| self.has_digits(real)) {
                for p in run.span.clone() {
                    if chars[p].is_ascii_digit() {
                        chars[p] = '#';
                    }
                }
                cleared = true;
            }
        }
        if cleared {
            std::borrow::Cow::Owned(chars.into_iter().collect())
        } else {
            text
        }
    }

    /// Whether any word of `text` (normalized) is the first word of a real word value: read
    /// without allocating for lowercase ASCII words, the most of clean text; only then are its
    /// runs of words looked up.
    fn may_start_a_value(&self, text: &str) -> bool {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .any(|w| {
                let h = if w
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                {
                    self.hash(b'w', w)
                } else {
                    self.hash(b'w', &w.to_lowercase())
                };
                self.first_words.contains(&h)
            })
    }

    /// A keyed 64-bit hash of `text` in `domain`: SipHash-2-4, the keyed function hash tables
    /// are made of, keyed by the caller's 32 bytes (its first 16 as SipHash's key, after a
    /// BLAKE3 derivation of all 32). A lookup costs tens of nanoseconds, which the egress guard
    /// pays for every word of every cell it reads; the hashes live in memory only, for one run.
    fn hash(&self, domain: u8, text: &str) -> u64 {
        use std::hash::Hasher;
        #[allow(deprecated)] // SipHash-2-4 with a key: std's, still the function this needs
        let mut hasher = std::hash::SipHasher::new_with_keys(self.sip.0, self.sip.1);
        hasher.write_u8(domain);
        hasher.write(text.as_bytes());
        hasher.finish()
    }

    /// Remembers a real value (normalized). Returns false when it is too short to match.
    pub fn add(&mut self, value: &str) -> bool {
        match matchable(value) {
            Matchable::Digits(digits) => {
                self.digit_lengths.insert(digits.len());
                let h = self.hash(b'd', &digits);
                self.digits.insert(h);
                true
            }
            Matchable::Words(words) => {
                self.max_words = self.max_words.max(words.len());
                let h = self.hash(b'w', &words.join(" "));
                *self.words.entry(h).or_default() |= is_distinctive(value);
                let first = self.hash(b'w', &words[0]);
                self.first_words.insert(first);
                let f = self.hash(b'f', &form(value));
                self.forms.insert(f);
                true
            }
            Matchable::TooShort => false,
        }
    }

    pub fn len(&self) -> usize {
        self.digits.len() + self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first real value inside `text` (normalized), as evidence that does not reveal it.
    pub fn find(&self, text: &str) -> Option<Hit> {
        self.find_where(text, false)
    }

    /// As [`ExactMatcher::find`], in a cell the policy passes unchanged (a kept column): a real
    /// value by its digits when they are a whole run of the cell, and a value of words as it is written (in any case and spacing), a
    /// distinctive one ([`is_distinctive`]: several words, a username, an address) wherever it
    /// sits, one that reads as one name (`Lockman`, `O'Conner`) only when it is the whole of
    /// `text`. A username that is the whole cell of a kept admin log is a leak; a surname inside
    /// a merchant's name (`O'Conner and Sons`) is there by policy, and so are words that only
    /// meet a real value's once punctuation is dropped (`'keeper':1` in a text search vector
    /// is no `Keeper 1`).
    pub fn find_distinctive(&self, text: &str) -> Option<Hit> {
        self.find_where(text, true)
    }

    fn find_where(&self, text: &str, distinctive: bool) -> Option<Hit> {
        // A text with fewer digits (of any script) than the shortest real value holds none:
        // told without reading its runs.
        let shortest = self.digit_lengths.first().copied().unwrap_or(usize::MAX);
        if !self.digits.is_empty() && text.chars().filter(|c| c.is_numeric()).count() >= shortest {
            for run in digit_runs(text) {
                let n = run.digits.len();
                // Timestamps and the like are compared whole, not searched inside: their digits
                // are many and would meet a nine-digit value by chance. So is every number of a
                // kept cell: a 12-digit order number holds some nine-digit SSN's digits by chance
                // once in ten thousand rows, while a real value written there is a run of its own.
                let lengths: Vec<usize> = if is_benign(&run) || distinctive {
                    self.digit_lengths
                        .contains(&n)
                        .then_some(n)
                        .into_iter()
                        .collect()
                } else {
                    self.digit_lengths.range(..=n).copied().collect()
                };
                for len in lengths {
                    for start in 0..=n - len {
                        let window = &run.digits[start..start + len];
                        if self.digits.contains(&self.hash(b'd', window)) {
                            return Some(Hit::new(Detector::SourceValue, window));
                        }
                    }
                }
            }
        }
        if !self.words.is_empty() && self.may_start_a_value(text) {
            let words = words(text);
            // Where the words stand, read once a kept cell's words meet a real value's.
            let mut spans: Option<Vec<(usize, usize)>> = None;
            for start in 0..words.len() {
                if !self.first_words.contains(&self.hash(b'w', &words[start])) {
                    continue;
                }
                let mut joined = String::new();
                for (k, word) in words[start..].iter().take(self.max_words).enumerate() {
                    if k > 0 {
                        joined.push(' ');
                    }
                    joined.push_str(word);
                    let Some(told) = self.words.get(&self.hash(b'w', &joined)) else {
                        continue;
                    };
                    let whole = start == 0 && k + 1 == words.len();
                    if !distinctive {
                        return Some(Hit::new(Detector::SourceValue, &joined));
                    }
                    if !(*told || whole) {
                        continue;
                    }
                    let spans = spans.get_or_insert_with(|| word_spans(text));
                    let (from, to) = (spans[start].0, spans[start + k].1);
                    if self
                        .forms
                        .contains(&self.hash(b'f', &form(&text[from..to])))
                    {
                        return Some(Hit::new(Detector::SourceValue, &joined));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matcher(values: &[&str]) -> ExactMatcher {
        let mut m = ExactMatcher::new([7; 32]);
        for v in values {
            m.add(v);
        }
        m
    }

    #[test]
    fn finds_real_values_whatever_their_shape() {
        let m = matcher(&["224-30-8280", "Lockman", "eleanora_lockman1@gmail.com"]);
        for leak in [
            "224308280",
            "ssn: 224 30 8280!",
            "x2243082801",
            "Dear Mr LOCKMAN,",
            "ELEANORA_LOCKMAN1@GMAIL.COM",
            "mail eleanora.lockman1@gmail.com now",
        ] {
            assert!(m.find(leak).is_some(), "{leak}");
        }
        for clean in [
            "***-**-8280",
            "L***",
            "Lockmanning",
            "e***@gmail.com",
            "2022-11-07 07:35:19+00",
        ] {
            assert!(m.find(clean).is_none(), "{clean}");
        }
    }

    #[test]
    fn short_values_are_not_matched() {
        let mut m = ExactMatcher::new([0; 32]);
        assert!(!m.add("Li"));
        assert!(!m.add("12345"));
        assert!(m.is_empty());
    }

    #[test]
    fn a_kept_cell_holds_a_one_word_value_only_as_the_whole_cell() {
        let m = matcher(&[
            "Lockman",
            "O'Conner",
            "jdoe42",
            "jane_doe",
            "224-30-8280",
            "Eleanora Lockman",
            "Keeper 1",
        ]);
        for leak in [
            "LOCKMAN",
            " lockman ",
            "O'CONNER",
            "jdoe42",
            "user jdoe42 logged in",
            "changed by jane_doe",
            "ssn 224308280",
            "to Eleanora LOCKMAN",
            "to eleanora   lockman",
            "seen by keeper 1",
        ] {
            assert!(m.find_distinctive(leak).is_some(), "{leak}");
        }
        for by_policy in [
            "Lockman Group",
            "POS PURCHASE LOCKMAN GROUP",
            "Lockman-Schuster",
            "Franecki and O'Conner LLC",
            "'feeds':4 'keeper':1 'lions':6",
        ] {
            assert!(m.find(by_policy).is_some(), "{by_policy}");
            assert!(m.find_distinctive(by_policy).is_none(), "{by_policy}");
        }
    }

    #[test]
    fn a_value_that_is_its_columns_name_is_told() {
        for value in [
            "password",
            "Password",
            "PASSWORD",
            "pass_word",
            " password ",
        ] {
            assert!(is_its_column_name("password", value), "{value}");
        }
        assert!(is_its_column_name("user_name", "Username"));
        let names = Names::new(["public.customers", "first_name", "last_name", "password"]);
        for value in ["Name", "first name", "LAST_NAME", "Customers", "Password"] {
            assert!(names.holds(value), "{value}");
        }
        for value in ["Lockman", "name first", "firstname x", ""] {
            assert!(!names.holds(value), "{value}");
        }
        for value in ["password1", "hunter2", "", "pass"] {
            assert!(!is_its_column_name("password", value), "{value}");
        }
        assert!(!is_its_column_name("", ""));
    }

    #[test]
    fn the_evidence_never_holds_the_value() {
        let m = matcher(&["224-30-8280"]);
        let hit = m.find("224308280").unwrap();
        assert_eq!((hit.length, hit.last_two.as_str()), (9, "80"));
    }
}
