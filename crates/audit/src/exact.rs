//! Exact match against the source: is any real sensitive value of production on the bus,
//! whatever its shape?
//!
//! The matcher holds only keyed 64-bit hashes of the real values (BLAKE3, with a key the caller
//! draws at random for each run and never stores), never the values. A value with six or more
//! digits is matched by its digits inside any digit run of a bus string (so `224-30-8280`,
//! `224308280` and full-width forms all match); other values by their words, lowercased,
//! against every run of consecutive words of a bus string (so `Lockman` matches
//! `Dear Mr LOCKMAN,` but not `Lockmanning`).

use crate::detect::{digit_runs, is_benign, Detector, Hit};
use std::collections::{BTreeSet, HashSet};

/// Values shorter than this (in characters, or digits) are too common to mean anything.
pub const MIN_TEXT_CHARS: usize = 4;
pub const MIN_DIGITS: usize = 6;
const MAX_WORDS: usize = 8;

pub struct ExactMatcher {
    key: [u8; 32],
    digits: HashSet<u64>,
    digit_lengths: BTreeSet<usize>,
    words: HashSet<u64>,
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

impl ExactMatcher {
    pub fn new(key: [u8; 32]) -> Self {
        Self {
            key,
            digits: HashSet::new(),
            digit_lengths: BTreeSet::new(),
            words: HashSet::new(),
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

    fn hash(&self, domain: u8, text: &str) -> u64 {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(&[domain]);
        hasher.update(text.as_bytes());
        let bytes = hasher.finalize();
        u64::from_le_bytes(bytes.as_bytes()[..8].try_into().unwrap_or([0; 8]))
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
                self.words.insert(h);
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
        if !self.digits.is_empty() {
            for run in digit_runs(text) {
                let n = run.digits.len();
                // Timestamps and the like are compared whole, not searched inside: their digits
                // are many and would meet a nine-digit value by chance.
                let lengths: Vec<usize> = if is_benign(&run) {
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
        if !self.words.is_empty() {
            let words = words(text);
            for start in 0..words.len() {
                let mut joined = String::new();
                for (k, word) in words[start..].iter().take(self.max_words).enumerate() {
                    if k > 0 {
                        joined.push(' ');
                    }
                    joined.push_str(word);
                    if self.words.contains(&self.hash(b'w', &joined)) {
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
    fn the_evidence_never_holds_the_value() {
        let m = matcher(&["224-30-8280"]);
        let hit = m.find("224308280").unwrap();
        assert_eq!((hit.length, hit.last_two.as_str()), (9, "80"));
    }
}
