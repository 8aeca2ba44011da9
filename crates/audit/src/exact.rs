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
}

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
