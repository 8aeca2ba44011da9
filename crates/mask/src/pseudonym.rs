//! Deterministic keyed pseudonyms: the same input and key always give the same fake value, so a
//! value that appears in two tables is replaced consistently and joins across them survive.
//!
//! The key comes from configuration, never from this crate; without a key the input could be
//! recovered by hashing guesses (a dictionary of names or the whole SSN space). BLAKE3 in keyed
//! mode is the PRF of names, emails and tokens, with the kind as domain separation so one input
//! gives unrelated fakes for different kinds. SSNs and digits go through a keyed bijection
//! ([`crate::bijection`], FF1), so distinct values keep distinct fakes by construction.
//!
//! Each kind's [`RuleClass`] says what the check may rely on; it is written here once.

use crate::alnum::{AlnumCipher, Refusal};
use crate::bijection::{Class, DigitCipher};
use crate::rules::{RuleClass, RuleError};
use std::sync::Arc;

/// The secret that makes pseudonyms unguessable. Its Debug output never shows it.
///
/// **How the key is derived.** The configured secret is never used as it is: BLAKE3 in its key
/// derivation mode (`blake3::derive_key`, a standard KDF with a context string per purpose)
/// turns it into the 32-byte key of the PRF of names, emails and tokens (the kind is its domain
/// separation), and that key into the FF1 (AES-256) key of the digits' bijection
/// (`bijection::DigitCipher`, a context of its own). No derived key shows anything of the
/// secret, and no function of it crosses the bus but the fakes (the rules fingerprint holds
/// none: [`crate::Policy::rules_fingerprint`]).
///
/// **Why no stretching** (PBKDF2, Argon2). Stretching makes each guess of a weak secret cost
/// more: 600,000 PBKDF2 rounds add about 19 bits, Argon2 a little more. It cannot save a key a
/// person can guess (a 40-bit key stays weak at 60 bits), and it would cost every start of the
/// producer, of `policy check` and of the audit a good part of a second. So maskbus refuses
/// guessable keys instead ([`PseudonymKey::from_config`]): a configured key must show at least
/// [`MIN_KEY_BITS`] bits by [`estimate_key_bits`], which every `maskbus key new` key (256 random
/// bits, 190 and more by the estimate) passes and the patterns people type fail. At 128 bits, an
/// offline search is out of reach whatever each guess costs.
#[derive(Clone)]
pub struct PseudonymKey {
    key: [u8; 32],
    digits: Option<Arc<DigitCipher>>,
    alnum: Option<Arc<AlnumCipher>>,
}

/// The shortest pseudonym key a configuration may give: 32 bytes (a 2-letter key was recovered
/// from one known pair in under a millisecond; `maskbus key new` prints a random one).
pub const MIN_KEY_BYTES: usize = 32;

/// The fewest bits of entropy a configured key must show by [`estimate_key_bits`]: out of reach
/// of any offline search.
pub const MIN_KEY_BITS: u32 = 128;

/// Why a configured key is refused. Never shows the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WeakKey {
    #[error("the pseudonym key has {got} bytes; it needs at least {MIN_KEY_BYTES}: make one with `maskbus key new` and keep it secret")]
    TooShort { got: usize },
    #[error("the pseudonym key is guessable: about {bits} bits of entropy by maskbus's estimate, under the {MIN_KEY_BITS} a key needs (runs, sequences, repeats and words count for little); make one with `maskbus key new` and keep it secret")]
    Guessable { bits: u32 },
}

impl PseudonymKey {
    /// The key of a configuration: refused when shorter than [`MIN_KEY_BYTES`], or when it
    /// shows fewer than [`MIN_KEY_BITS`] bits by [`estimate_key_bits`] (a key a person typed:
    /// `0123456789abcdef...`, a repeated word, a sentence of common words).
    pub fn from_config(secret: &[u8]) -> Result<Self, WeakKey> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(WeakKey::TooShort { got: secret.len() });
        }
        let bits = estimate_key_bits(&String::from_utf8_lossy(secret));
        if bits < f64::from(MIN_KEY_BITS) {
            return Err(WeakKey::Guessable {
                bits: bits.floor() as u32,
            });
        }
        Ok(Self::new(secret))
    }

    /// Derives the key from any secret text (a passphrase or random bytes) with BLAKE3's key
    /// derivation mode. Tests and benchmarks only: a configured key goes through
    /// [`PseudonymKey::from_config`], which refuses a guessable one first.
    pub fn new(secret: &[u8]) -> Self {
        let key = blake3::derive_key("maskbus 2026 pseudonym key v1", secret);
        Self {
            key,
            digits: DigitCipher::new(&key).map(Arc::new),
            alnum: AlnumCipher::new(&key).map(Arc::new),
        }
    }

    fn hash(&self, kind: PseudonymKind, input: &str) -> [u8; 32] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(kind.name().as_bytes());
        hasher.update(&[0]);
        hasher.update(input.as_bytes());
        *hasher.finalize().as_bytes()
    }
}

impl std::fmt::Debug for PseudonymKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PseudonymKey(..)")
    }
}

/// The characters of a key [`estimate_key_bits`] reads; a longer key is judged by these.
const MAX_ESTIMATED_CHARS: usize = 256;

/// What a letter of a word is worth: about what a word of a dictionary carries per letter (a
/// word of a 7,776-word list is 12.9 bits for five or six letters).
const WORD_LETTER_BITS: f64 = 2.0;

/// The entropy maskbus ascribes to a key as it is written, in bits: a deliberately low estimate
/// of the guesses an attacker who knows how people make keys would need, not the key's length.
///
/// How it is estimated, over the first 256 characters:
/// - **Alphabet.** Each class of characters the key uses adds its size: lowercase 26,
///   uppercase 26, digits 10, ASCII punctuation and space 33, anything else 100. A character
///   costs log2 of the sum (64 hex digits: log2(36) = 5.17 bits each).
/// - **Words.** A letter of a word costs at most 2 bits, about what a dictionary word carries
///   per letter. Words are runs of three or more letters of one case (`secret`, `KEY`), a
///   capital before two or more small letters (`Secret`), and any run of letters between
///   spaces or signs (`My`, the `s` of `company's`). A space or sign beside a word costs at
///   most 2 bits too (people put `-`, `_`, `.` or a space there).
/// - **Numbers.** A digit after a digit costs at most log2(10) = 3.32 bits.
/// - **Runs and sequences.** A character that goes on by the step of the two before it (`aaa`,
///   `123`, `cba`, `aceg`: a step of -2 to 2) costs 1 bit.
/// - **Repeats.** A stretch of three or more characters seen before (`abcabc`, `key-key-`)
///   costs what pointing back at it costs, log2(position) + log2(length) + 1 bits, when that is
///   less than its characters.
///
/// What it does not see (keyboard walks, dates, leet speak, a famous line) makes it generous,
/// never strict: the floor ([`MIN_KEY_BITS`]) is set so that a random key passes by a wide
/// margin (`maskbus key new`'s 64 hex digits: 190 bits and more) and the patterns people type
/// do not (the 34-byte `0123456789abcdef...` key: under 64 bits).
pub fn estimate_key_bits(key: &str) -> f64 {
    let chars: Vec<char> = key.chars().take(MAX_ESTIMATED_CHARS).collect();
    let n = chars.len();
    let is_sign = |c: char| c.is_ascii() && !c.is_ascii_alphanumeric();
    let classes = [
        (chars.iter().any(char::is_ascii_lowercase), 26u32),
        (chars.iter().any(char::is_ascii_uppercase), 26),
        (chars.iter().any(char::is_ascii_digit), 10),
        (chars.iter().any(|c| is_sign(*c)), 33),
        (chars.iter().any(|c| !c.is_ascii()), 100),
    ];
    let alphabet: u32 = classes.iter().filter(|(has, _)| *has).map(|(_, n)| n).sum();
    let full = f64::from(alphabet.max(1)).log2();
    // Letters read as words.
    let mut in_word = vec![false; n];
    let mut start = 0;
    while start < n {
        let case = letter_case(chars[start]);
        if case.is_none() {
            start += 1;
            continue;
        }
        // A run of one case, or a capital and a run of small letters after it.
        let mut end = start + 1;
        let run_case = match (case, chars.get(start + 1).copied().and_then(letter_case)) {
            (Some(Case::Upper), Some(Case::Lower)) => Some(Case::Lower),
            _ => case,
        };
        while end < n && letter_case(chars[end]) == run_case {
            end += 1;
        }
        let between_signs = (start == 0 || is_sign(chars[start - 1]))
            && (end == n || is_sign(chars[end]))
            && chars[start..end].iter().all(|c| letter_case(*c).is_some());
        if end - start >= 3 || between_signs {
            in_word[start..end].fill(true);
        }
        start = end;
    }
    let cost: Vec<f64> = (0..n)
        .map(|i| {
            let mut bits = full;
            let beside_word = (i > 0 && in_word[i - 1]) || in_word.get(i + 1) == Some(&true);
            if in_word[i] || (is_sign(chars[i]) && beside_word) {
                bits = bits.min(WORD_LETTER_BITS);
            }
            if i > 0 && chars[i].is_ascii_digit() && chars[i - 1].is_ascii_digit() {
                bits = bits.min(10f64.log2());
            }
            if i >= 2 {
                let (a, b, c) = (
                    i64::from(u32::from(chars[i - 2])),
                    i64::from(u32::from(chars[i - 1])),
                    i64::from(u32::from(chars[i])),
                );
                if c - b == b - a && (c - b).abs() <= 2 {
                    bits = bits.min(1.0);
                }
            }
            bits
        })
        .collect();
    // Repeats, left to right: the longest earlier occurrence of what starts here.
    let mut total = 0.0;
    let mut i = 0;
    while i < n {
        let longest = (0..i)
            .map(|j| {
                (0..n - i)
                    .take_while(|&l| chars[j + l] == chars[i + l])
                    .count()
            })
            .max()
            .unwrap_or(0);
        if longest >= 3 {
            let pointer = (i as f64).log2() + (longest as f64).log2() + 1.0;
            let literal: f64 = cost[i..i + longest].iter().sum();
            if pointer < literal {
                total += pointer;
                i += longest;
                continue;
            }
        }
        total += cost[i];
        i += 1;
    }
    total
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Lower,
    Upper,
}

/// Whether `c` is a lowercase letter, an uppercase one, or neither (a digit, a sign, a letter
/// of a script without case).
fn letter_case(c: char) -> Option<Case> {
    if c.is_lowercase() {
        Some(Case::Lower)
    } else if c.is_uppercase() {
        Some(Case::Upper)
    } else {
        None
    }
}

/// What kind of fake a pseudonym rule produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PseudonymKind {
    /// A first name from a fixed list.
    FirstName,
    /// A last name from a fixed list.
    LastName,
    /// `first.last.<12 letters>@example.com`: 56 bits of the hash keep it unique in practice.
    Email,
    /// The nine digits of an SSN through a keyed bijection: an SSN that could have been issued
    /// gets a fake that could have been, every other character stays (`224-30-8280` becomes
    /// `517-62-0391`); distinct SSNs keep distinct fakes, so a UNIQUE column or a key can carry
    /// it. The wire audit tells these fakes from real SSNs by the key.
    Ssn,
    /// Every decimal digit (any script) through a keyed bijection over the value's digits, other
    /// characters and the length kept; a Luhn-valid card number gets a Luhn-valid fake. Distinct
    /// values keep distinct fakes.
    Digits,
    /// Every ASCII letter and digit through a keyed bijection ([`crate::alnum`], FF1 over one
    /// domain of the value's letters and digits): letters stay letters in their case, digits
    /// digits, every other character in its place (`PTC11962M` becomes, say, `XQA40537K`). For keys
    /// and identifiers of letters and digits. A value with fewer than a million values of its
    /// shape (NIST SP 800-38G's least domain), or with letters or digits outside ASCII, is
    /// refused ([`RuleError::DomainTooSmall`], [`RuleError::NotAsciiAlnum`]).
    Alnum,
    /// A secret (an API key, a token, a password hash): a keyed fake of letters, as long as the
    /// secret (twenty letters at the least), in its case: unique in practice (94 bits and more),
    /// and nothing of the secret.
    Token,
}

impl PseudonymKind {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "first_name" => Self::FirstName,
            "last_name" => Self::LastName,
            "email" => Self::Email,
            "ssn" => Self::Ssn,
            "digits" => Self::Digits,
            "alnum" => Self::Alnum,
            "token" => Self::Token,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::FirstName => "first_name",
            Self::LastName => "last_name",
            Self::Email => "email",
            Self::Ssn => "ssn",
            Self::Digits => "digits",
            Self::Alnum => "alnum",
            Self::Token => "token",
        }
    }

    /// Every kind.
    pub const ALL: [PseudonymKind; 7] = [
        Self::FirstName,
        Self::LastName,
        Self::Email,
        Self::Ssn,
        Self::Digits,
        Self::Alnum,
        Self::Token,
    ];

    /// Every kind's name, for an error that lists them.
    pub fn all_names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }

    /// What distinct inputs become: the one place `policy check` reads it from.
    pub fn class(self) -> RuleClass {
        match self {
            Self::Ssn | Self::Digits | Self::Alnum => RuleClass::Bijective,
            Self::Email | Self::Token => RuleClass::Unique,
            Self::FirstName | Self::LastName => RuleClass::Deterministic,
        }
    }

    /// Whether `value` is something this kind could have produced. A real value that could also
    /// be a fake cannot be told apart from one on the wire; the exact-match audit skips those.
    pub fn could_produce(self, value: &str) -> bool {
        match self {
            // The matcher reads words case-insensitively; so does this, or a real `SMITH`
            // would be taken for a leak of the fake `Smith`.
            Self::FirstName => is_one_of(FIRST_NAMES, value),
            Self::LastName => is_one_of(LAST_NAMES, value) || is_composed_last_name(value),
            // A fake email spells a first and a last name as words of its local part.
            Self::Email => {
                value.to_ascii_lowercase().ends_with("@example.com")
                    || is_one_of(FIRST_NAMES, value)
                    || is_one_of(LAST_NAMES, value)
            }
            // Fakes of digits are told from real values by the key ([`PseudonymKind::reveal`]);
            // a token's letters equal a real secret only by a 26^-20 coincidence.
            Self::Ssn | Self::Digits | Self::Alnum | Self::Token => false,
        }
    }

    /// The fewest characters a fake of this kind can be written in: fit checks a column's
    /// length limit against it ([`PseudonymKind::apply_within`] shortens to the limit).
    pub fn min_width(self) -> usize {
        match self {
            // The tag alone carries the uniqueness: eight letters at the least.
            Self::Email => 8 + "@example.com".len(),
            // The letters alone carry the uniqueness: twelve at the least (56 bits).
            Self::Token => 12,
            // As long as the value: it always fits.
            Self::Ssn | Self::Digits | Self::Alnum | Self::FirstName | Self::LastName => 1,
        }
    }

    /// As [`PseudonymKind::apply_within`], refusing a value this kind cannot hide: an `alnum`
    /// value of too few letters and digits, or of letters outside ASCII. What masking calls.
    pub fn try_apply_within(
        self,
        key: &PseudonymKey,
        input: &str,
        max_chars: Option<usize>,
    ) -> Result<String, RuleError> {
        if self != Self::Alnum {
            return Ok(self.apply_within(key, input, max_chars));
        }
        // As long as the value: cut only when the value itself would not fit.
        let fake = key.alnum_through(input, true)?;
        Ok(match max_chars {
            Some(max) if fake.chars().count() > max => fake.chars().take(max).collect(),
            _ => fake,
        })
    }

    /// The fake for `input`, at most `max_chars` characters long when the column has a limit:
    /// a fake email drops its names and then shortens its tag (never below eight letters, so it
    /// stays unique), a fake SSN drops its dashes, a fake name is cut. The same input and key
    /// give the same fake in every table whose limit allows the full form.
    pub fn apply_within(self, key: &PseudonymKey, input: &str, max_chars: Option<usize>) -> String {
        let full = self.apply(key, input);
        let Some(max) = max_chars else {
            return full;
        };
        if full.chars().count() <= max {
            return full;
        }
        match self {
            Self::Email => {
                let h = key.hash(self, input);
                let room = max.saturating_sub("@example.com".len()).clamp(8, 24);
                let tag: String = h[..room]
                    .iter()
                    .map(|b| char::from(b'a' + b % 26))
                    .collect();
                format!("{tag}@example.com")
            }
            Self::Token => full.chars().take(max.max(self.min_width())).collect(),
            Self::FirstName | Self::LastName | Self::Ssn | Self::Digits | Self::Alnum => {
                full.chars().take(max).collect()
            }
        }
    }

    /// The fake for `input`.
    pub fn apply(self, key: &PseudonymKey, input: &str) -> String {
        let h = key.hash(self, input);
        let pick = |list: &[&'static str], bytes: [u8; 8]| {
            list[(u64::from_le_bytes(bytes) % list.len() as u64) as usize]
        };
        let eight = |at: usize| -> [u8; 8] { h[at..at + 8].try_into().unwrap_or([0; 8]) };
        match self {
            Self::FirstName => pick(FIRST_NAMES, eight(0)).to_string(),
            // A stem and an ending: 1,600 surnames, so a few hundred real ones keep their
            // distinctness (40 made 61 real names into 34 fakes).
            Self::LastName => {
                let stem = pick(SURNAME_STEMS, eight(0));
                let ending = pick(SURNAME_ENDINGS, eight(8));
                format!("{stem}{ending}")
            }
            Self::Email => {
                let first = pick(FIRST_NAMES, eight(0)).to_ascii_lowercase();
                let last = pick(LAST_NAMES, eight(8)).to_ascii_lowercase();
                // Letters only: a digit tag could spell an SSN or card the audit would flag.
                let tag: String = h[16..28]
                    .iter()
                    .map(|b| char::from(b'a' + b % 26))
                    .collect();
                format!("{first}.{last}.{tag}@example.com")
            }
            Self::Ssn => key.digits_through(
                self,
                input,
                |d| {
                    if d.len() == 9 {
                        Class::Ssn
                    } else {
                        Class::Any
                    }
                },
                true,
            ),
            Self::Digits => key.digits_through(self, input, digits_class, true),
            // What masking writes goes through `try_apply_within`, which refuses; here a value
            // with no fake becomes stars in place of its letters and digits, never itself.
            Self::Alnum => key.alnum_through(input, true).unwrap_or_else(|_| {
                input
                    .chars()
                    .map(|c| if c.is_alphanumeric() { '*' } else { c })
                    .collect()
            }),
            Self::Token => {
                let length = input.chars().count().max(20);
                let upper = input.chars().any(|c| c.is_uppercase());
                let lower = input.chars().any(|c| c.is_lowercase()) || !upper;
                let mut out = String::with_capacity(length);
                let mut block = 0u64;
                while out.len() < length {
                    let mut hasher = blake3::Hasher::new_keyed(&key.key);
                    hasher.update(b"token\0");
                    hasher.update(&block.to_le_bytes());
                    hasher.update(input.as_bytes());
                    for b in hasher.finalize().as_bytes() {
                        if out.len() == length {
                            break;
                        }
                        let letter = b % 26;
                        let c = match (upper, lower) {
                            (true, true) if b & 0x80 != 0 => b'A' + letter,
                            (true, false) => b'A' + letter,
                            _ => b'a' + letter,
                        };
                        out.push(char::from(c));
                    }
                    block += 1;
                }
                out
            }
        }
    }

    /// The real value a fake of this kind was made from, for the kinds that are bijections
    /// (`ssn`, `digits`): what the wire audit checks a digit run it meets against.
    pub fn reveal(self, key: &PseudonymKey, fake: &str) -> Option<String> {
        match self {
            Self::Ssn => Some(key.digits_through(
                self,
                fake,
                |d| {
                    if d.len() == 9 {
                        Class::Ssn
                    } else {
                        Class::Any
                    }
                },
                false,
            )),
            Self::Digits => Some(key.digits_through(self, fake, digits_class, false)),
            Self::Alnum => key.alnum_through(fake, false).ok(),
            _ => None,
        }
    }
}

/// The class a `digits` fake keeps: Luhn validity for a card's length.
fn digits_class(digits: &[u8]) -> Class {
    if (12..=19).contains(&digits.len()) {
        Class::Luhn
    } else {
        Class::Any
    }
}

impl PseudonymKey {
    /// `input` through the alnum bijection (or its inverse): see [`crate::alnum`].
    fn alnum_through(&self, input: &str, forward: bool) -> Result<String, RuleError> {
        let Some(cipher) = self.alnum.as_ref() else {
            // The cipher is built from any 32 bytes; if it ever were not, nothing crosses.
            return Err(RuleError::CipherFailed(input.chars().count()));
        };
        cipher.map(input, forward).map_err(|refusal| match refusal {
            Refusal::TooSmall { letters, digits } => RuleError::DomainTooSmall { letters, digits },
            Refusal::NotAscii { len } => RuleError::NotAsciiAlnum(len),
            Refusal::Cipher { len } => RuleError::CipherFailed(len),
        })
    }

    /// `input` with its decimal digits (any script) replaced by their keyed bijection (or its
    /// inverse), written as ASCII digits; every other character stays.
    fn digits_through(
        &self,
        kind: PseudonymKind,
        input: &str,
        class: impl Fn(&[u8]) -> Class,
        forward: bool,
    ) -> String {
        let real: Vec<u8> = input
            .chars()
            .filter_map(maskbus_pii::decimal_value)
            .collect();
        let tweak = kind.name().as_bytes();
        // A number's sign decides its type's bound (`-32768` is a smallint, `32768` is not).
        let negative = input.trim_start().starts_with('-');
        let fake = self.digits.as_ref().and_then(|cipher| {
            if forward {
                cipher.encrypt(tweak, &real, class(&real), negative)
            } else {
                cipher.decrypt(tweak, &real, class(&real), negative)
            }
        });
        // The cipher cannot fail on digits; if it ever did, hashed digits stand in (never the
        // real ones).
        let fake = fake.unwrap_or_else(|| {
            let h = self.hash(kind, input);
            (0..real.len()).map(|i| h[i % 32] % 10).collect()
        });
        let mut fresh = fake.into_iter();
        input
            .chars()
            .map(|c| match maskbus_pii::decimal_value(c) {
                Some(d) => match fresh.next() {
                    Some(f) => in_script_of(c, d, f),
                    None => c,
                },
                None => c,
            })
            .collect()
    }
}

/// The digit `fake` written as `c` (whose value is `d`) is: in the same script when `c` is one
/// of a run of ten (Arabic-Indic `٣` gives Arabic-Indic, full-width `３` full-width), so values
/// that differ only in their digits' script keep distinct fakes; otherwise ASCII (a superscript,
/// a circled numeral).
fn in_script_of(c: char, d: u8, fake: u8) -> char {
    let zero = u32::from(c).checked_sub(u32::from(d));
    let same = zero
        .and_then(|z| char::from_u32(z + u32::from(fake)))
        .filter(|f| maskbus_pii::decimal_value(*f) == Some(fake))
        .filter(|_| {
            zero.and_then(char::from_u32)
                .is_some_and(|z| maskbus_pii::decimal_value(z) == Some(0))
        });
    same.unwrap_or(char::from(b'0' + fake))
}

/// `value` (trimmed) is a stem and an ending of a fake surname, whatever its case.
fn is_composed_last_name(value: &str) -> bool {
    let value = value.trim().to_lowercase();
    SURNAME_STEMS.iter().any(|stem| {
        value
            .strip_prefix(&stem.to_lowercase())
            .is_some_and(|rest| SURNAME_ENDINGS.contains(&rest))
    })
}

const SURNAME_STEMS: &[&str] = &[
    "Ash", "Bell", "Black", "Brad", "Brook", "Cald", "Carr", "Clay", "Cold", "Cran", "Dal", "Dun",
    "East", "Fair", "Fen", "Gal", "Grey", "Hal", "Hart", "Hol", "Ing", "Kel", "King", "Lang",
    "Lock", "Mar", "Mer", "Nor", "Oak", "Pem", "Ray", "Red", "Ross", "Sand", "Stan", "Thorn",
    "Under", "Wake", "West", "Whit",
];

const SURNAME_ENDINGS: &[&str] = &[
    "ley", "ton", "worth", "wood", "field", "ford", "by", "well", "more", "dale", "hurst", "combe",
    "stead", "wick", "bridge", "brook", "croft", "gate", "mont", "ridge", "shaw", "land", "ham",
    "bury", "den", "holm", "thorpe", "mere", "cott", "fold", "grave", "hill", "kirk", "low",
    "marsh", "ney", "ock", "ster", "vale", "win",
];

/// `value` (trimmed) is one of `names`, whatever its case.
fn is_one_of(names: &[&str], value: &str) -> bool {
    let value = value.trim();
    names.iter().any(|n| n.eq_ignore_ascii_case(value))
}

const FIRST_NAMES: &[&str] = &[
    "Avery", "Blake", "Casey", "Dana", "Elliot", "Finley", "Harper", "Jordan", "Kendall", "Logan",
    "Morgan", "Parker", "Quinn", "Reese", "Riley", "Rowan", "Sawyer", "Skyler", "Taylor",
    "Emerson", "Alice", "Bruno", "Clara", "Diego", "Elena", "Felix", "Greta", "Hugo", "Iris",
    "Jonas", "Katya", "Leon", "Maya", "Nico", "Olga", "Pablo", "Rosa", "Sven", "Tara", "Umar",
    "Vera", "Wanda", "Xavier", "Yara", "Zane", "Amara", "Bodhi", "Cleo", "Darius", "Esme", "Farah",
    "Gideon", "Hana", "Idris", "Juno", "Kai", "Lena", "Milo", "Nadia", "Otto",
];

const LAST_NAMES: &[&str] = &[
    "Abernathy",
    "Bellweather",
    "Castellan",
    "Draycott",
    "Everhart",
    "Fairbanks",
    "Galloway",
    "Hollister",
    "Ingram",
    "Jessup",
    "Kingsley",
    "Lockwood",
    "Merriweather",
    "Northcott",
    "Oakhurst",
    "Pemberton",
    "Quenby",
    "Ravensworth",
    "Stanhope",
    "Thackeray",
    "Underhill",
    "Vantongeren",
    "Whitlock",
    "Yardley",
    "Ashcombe",
    "Brightwater",
    "Coldridge",
    "Dunmore",
    "Eastwick",
    "Fennimore",
    "Greywood",
    "Hartwell",
    "Ivesdale",
    "Kettering",
    "Larkspur",
    "Moorcroft",
    "Nettlefold",
    "Ormsby",
    "Pennington",
    "Redgrave",
];

impl PseudonymKey {
    /// The key of the tags on the cursors the producer issues ([`crate::cursor_tag`]): derived
    /// from this one for that use alone, so a tag tells nothing of the pseudonyms' key.
    pub(crate) fn cursor_key(&self) -> [u8; 32] {
        blake3::derive_key("maskbus cursor v1", &self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_keys_are_long_and_varied() {
        assert!(matches!(
            PseudonymKey::from_config(b"k"),
            Err(WeakKey::TooShort { got: 1 })
        ));
        assert!(matches!(
            PseudonymKey::from_config(&[b'a'; 64]),
            Err(WeakKey::Guessable { .. })
        ));
        let shown = PseudonymKey::from_config(b"k").unwrap_err().to_string();
        assert!(!shown.contains("\"k\""), "{shown}");
    }

    /// 32 bytes a `maskbus key new` would print, drawn from `seed` (this crate has no
    /// randomness: BLAKE3's output stands in for the operating system's).
    fn key_new_like(seed: u32) -> String {
        blake3::hash(&seed.to_le_bytes()).as_bytes()[..32]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn every_random_key_passes_and_typed_patterns_are_refused_without_being_shown() {
        let lowest = (0..20_000)
            .map(|seed| estimate_key_bits(&key_new_like(seed)))
            .fold(f64::MAX, f64::min);
        assert!(
            lowest > 180.0,
            "a random 64-hex-digit key was estimated at {lowest:.0} bits"
        );
        for seed in 0..500 {
            assert!(PseudonymKey::from_config(key_new_like(seed).as_bytes()).is_ok());
        }
        // Other random keys people make: `openssl rand -base64 32`, a UUID, 32 hex digits.
        for key in [
            "q3Zr8+Xk1vP0dW7mN2bT9yLcF4hJ6sA5eGuKoRiQ/xM=",
            "9f1c2b7e-4d3a-4e8b-a5c6-0d2f7e1b9a83-5c4e7d",
            "7c2e91f04ab35d68e1c07b9f2a4d6e35",
        ] {
            assert!(estimate_key_bits(key) >= f64::from(MIN_KEY_BITS), "{key}");
        }
        let typed = [
            "0123456789abcdef0123456789abcdef01",
            "0123456789abcdefghijklmnopqrstuvwx",
            "integration-test-key-0123456789-abcdef",
            "bench-key-0123456789-abcdefghijklmnop",
            "passwordpasswordpasswordpassword",
            "correct horse battery staple and more words",
            "abababababababababababababababababab",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "My company's pseudonym key for 2026!",
            "zyxwvutsrqponmlkjihgfedcba9876543210",
        ];
        for key in typed {
            let bits = estimate_key_bits(key);
            assert!(bits < f64::from(MIN_KEY_BITS), "{key}: {bits:.0} bits");
            let refused = PseudonymKey::from_config(key.as_bytes()).unwrap_err();
            assert!(matches!(refused, WeakKey::Guessable { .. }), "{key}");
            let said = refused.to_string();
            assert!(said.contains("maskbus key new"), "{said}");
            assert!(!said.contains(key), "{said}");
        }
        // The 34-byte key of the issue: far below the floor.
        assert!(estimate_key_bits("0123456789abcdef0123456789abcdef01") < 64.0);
    }

    #[test]
    fn same_input_and_key_same_fake_other_key_other_fake() {
        let a = PseudonymKey::new(b"key one");
        let b = PseudonymKey::new(b"key two");
        for kind in [
            PseudonymKind::FirstName,
            PseudonymKind::Email,
            PseudonymKind::Ssn,
            PseudonymKind::Digits,
        ] {
            assert_eq!(kind.apply(&a, "224-30-8280"), kind.apply(&a, "224-30-8280"));
        }
        let emails_a: Vec<_> = (0..50)
            .map(|i| PseudonymKind::Email.apply(&a, &format!("user{i}@x.com")))
            .collect();
        let emails_b: Vec<_> = (0..50)
            .map(|i| PseudonymKind::Email.apply(&b, &format!("user{i}@x.com")))
            .collect();
        assert_ne!(emails_a, emails_b);
    }

    #[test]
    fn email_pseudonyms_stay_unique() {
        let key = PseudonymKey::new(b"k");
        let fakes: std::collections::HashSet<_> = (0..100_000)
            .map(|i| PseudonymKind::Email.apply(&key, &format!("person{i}@mail.com")))
            .collect();
        assert_eq!(fakes.len(), 100_000);
    }

    #[test]
    fn ssn_and_digit_pseudonyms_are_unique_keep_their_shape_and_reveal_by_the_key() {
        let key = PseudonymKey::new(b"k");
        // 100,000 SSNs sync with 100,000 distinct fakes in tests/integration (the zoo); here a
        // slice of them.
        let fakes: std::collections::HashSet<String> = (0..20_000u32)
            .map(|i| {
                let real = format!("{:03}-{:02}-{:04}", 1 + i % 665, 1 + i % 99, 1 + i % 9999);
                let fake = PseudonymKind::Ssn.apply(&key, &real);
                assert_eq!(fake.len(), 11);
                assert_eq!((&fake[3..4], &fake[6..7]), ("-", "-"));
                assert!(maskbus_pii::is_issuable_ssn_text(&fake), "{fake}");
                if i % 1000 == 0 {
                    assert_eq!(
                        PseudonymKind::Ssn.reveal(&key, &fake).as_deref(),
                        Some(real.as_str())
                    );
                }
                fake
            })
            .collect();
        assert_eq!(fakes.len(), 20_000, "20,000 SSNs, 20,000 fakes");
        let card = PseudonymKind::Digits.apply(&key, "4111 1111 1111 1111");
        assert!(maskbus_pii::luhn_valid(&card.replace(' ', "")), "{card}");
        assert_eq!(
            PseudonymKind::Digits.reveal(&key, &card).as_deref(),
            Some("4111 1111 1111 1111")
        );
        assert_eq!(PseudonymKind::FirstName.reveal(&key, "Ann"), None);
    }

    #[test]
    fn tokens_are_letters_as_long_as_the_secret_and_unique() {
        let key = PseudonymKey::new(b"k");
        let secret = "sk_live_51H8xYzAbCdEf0123456789abcdefGHIJ";
        let fake = PseudonymKind::Token.apply(&key, secret);
        assert_eq!(fake.chars().count(), secret.len());
        assert!(fake.chars().all(|c| c.is_ascii_alphabetic()), "{fake}");
        assert_eq!(PseudonymKind::Token.apply(&key, "abc").len(), 20);
        assert!(PseudonymKind::Token
            .apply(&key, "abcdef0123")
            .chars()
            .all(|c| c.is_ascii_lowercase()));
        let fakes: std::collections::HashSet<String> = (0..50_000)
            .map(|i| PseudonymKind::Token.apply_within(&key, &format!("{i:x}"), Some(12)))
            .collect();
        assert_eq!(fakes.len(), 50_000);
    }

    #[test]
    fn what_a_pseudonym_could_produce_is_read_as_the_matcher_reads_it() {
        let name = FIRST_NAMES[0];
        assert!(PseudonymKind::FirstName.could_produce(&name.to_uppercase()));
        assert!(PseudonymKind::FirstName.could_produce(&format!(" {} ", name.to_lowercase())));
        // Fake emails spell names: a real surname could be one of their words.
        assert!(PseudonymKind::Email.could_produce(&LAST_NAMES[0].to_uppercase()));
        assert!(PseudonymKind::Email.could_produce("X.Y.Z@EXAMPLE.COM"));
        assert!(!PseudonymKind::FirstName.could_produce("Zzyzx-Qwerty"));
    }

    #[test]
    fn fakes_shorten_to_a_column_limit_and_emails_stay_unique() {
        let key = PseudonymKey::new(b"k");
        let fakes: std::collections::HashSet<String> = (0..20_000)
            .map(|i| {
                let fake =
                    PseudonymKind::Email.apply_within(&key, &format!("user{i}@corp.com"), Some(24));
                assert!(fake.len() <= 24, "{fake}");
                fake
            })
            .collect();
        assert_eq!(fakes.len(), 20_000, "no two fakes collide");
        assert_eq!(
            PseudonymKind::Ssn
                .apply_within(&key, "224308280", Some(9))
                .len(),
            9
        );
        let full = PseudonymKind::Email.apply(&key, "a@b.com");
        assert_eq!(
            PseudonymKind::Email.apply_within(&key, "a@b.com", Some(200)),
            full
        );
        assert_eq!(
            PseudonymKind::Email.apply_within(&key, "a@b.com", None),
            full
        );
    }

    #[test]
    fn digits_keep_their_script_so_values_of_other_scripts_stay_apart() {
        let key = PseudonymKey::new(b"k");
        let fakes: std::collections::HashSet<String> =
            ["123", "１２３", "१२३", "12٣", "١٢٣-٤٥-٦٧٨٩"]
                .iter()
                .map(|v| PseudonymKind::Digits.apply(&key, v))
                .collect();
        assert_eq!(fakes.len(), 5, "{fakes:?}");
        for v in ["１２３", "१२३", "12٣"] {
            let fake = PseudonymKind::Digits.apply(&key, v);
            assert_eq!(
                PseudonymKind::Digits.reveal(&key, &fake).as_deref(),
                Some(v),
                "{fake}"
            );
        }
    }

    #[test]
    fn digits_keep_the_shape() {
        let key = PseudonymKey::new(b"k");
        let fake = PseudonymKind::Digits.apply(&key, "(212) 555-0143");
        assert_eq!(fake.len(), 14);
        assert_eq!(
            fake.chars()
                .filter(|c| !c.is_ascii_digit())
                .collect::<String>(),
            "() -"
        );
    }

    #[test]
    fn fake_surnames_are_many_so_real_ones_stay_apart() {
        let key = PseudonymKey::new(b"k");
        let fakes: std::collections::HashSet<String> = (0..61)
            .map(|i| PseudonymKind::LastName.apply(&key, &format!("Surname{i}")))
            .collect();
        assert!(
            fakes.len() >= 57,
            "61 real surnames became {} fakes",
            fakes.len()
        );
        let fake = PseudonymKind::LastName.apply(&key, "Corkery");
        assert!(
            PseudonymKind::LastName.could_produce(&fake.to_uppercase()),
            "{fake}"
        );
    }

    #[test]
    fn alnum_is_a_bijection_that_keeps_each_class_and_case() {
        let key = PseudonymKey::new(b"k");
        let class = |c: char| match c {
            'A'..='Z' => 'A',
            'a'..='z' => 'a',
            '0'..='9' => '0',
            other => other,
        };
        let mut fakes = std::collections::HashSet::new();
        for i in 0..5_000u32 {
            let l = |n: u32| char::from(b'A' + (n % 26) as u8);
            let real = format!(
                "{}{}{}{:05}{}",
                l(i),
                l(i / 26),
                l(i / 676),
                i * 7 % 100_000,
                l(i / 3)
            );
            let fake = PseudonymKind::Alnum.apply(&key, &real);
            assert_eq!(
                fake.chars().map(class).collect::<String>(),
                "AAA00000A",
                "{fake}"
            );
            assert_eq!(
                PseudonymKind::Alnum.apply(&key, &real),
                fake,
                "deterministic"
            );
            assert_eq!(
                PseudonymKind::Alnum.reveal(&key, &fake).as_deref(),
                Some(real.as_str())
            );
            fakes.insert(fake);
        }
        assert_eq!(fakes.len(), 5_000, "5,000 ids, 5,000 fakes");
        // The id: no initial kept in place, case and punctuation kept.
        let fake = PseudonymKind::Alnum.apply(&key, "PTC11962M");
        assert_ne!(&fake[..3], "PTC", "{fake}");
        let mixed = PseudonymKind::Alnum.apply(&key, "ab-Cd/12 345");
        assert_eq!(mixed.chars().map(class).collect::<String>(), "aa-Aa/00 000");
        // Another key, another fake.
        assert_ne!(
            PseudonymKind::Alnum.apply(&PseudonymKey::new(b"other"), "PTC11962M"),
            fake
        );
    }

    #[test]
    fn alnum_refuses_a_domain_too_small_by_column_and_rule_never_the_value() {
        let key = PseudonymKey::new(b"k");
        for small in ["AB-123", "12345", "abcd", "X9"] {
            let refused = PseudonymKind::Alnum.try_apply_within(&key, small, None);
            assert!(
                matches!(refused, Err(RuleError::DomainTooSmall { .. })),
                "{small}: {refused:?}"
            );
        }
        assert!(matches!(
            PseudonymKind::Alnum.try_apply_within(&key, "Øster-123456", None),
            Err(RuleError::NotAsciiAlnum(12))
        ));
        assert!(PseudonymKind::Alnum
            .try_apply_within(&key, "AB-1234", None)
            .is_ok());
        // The infallible form never passes a refused value through.
        assert_eq!(PseudonymKind::Alnum.apply(&key, "AB-123"), "**-***");
        let policy = crate::Policy::from_toml(
            "p",
            "[t]
id = { pseudonym = \"alnum\" }
",
        )
        .unwrap()
        .with_key(key);
        let masker = policy.masker("t", &["id".to_string()]).unwrap();
        let error = masker.mask(vec![Some("QZ-771".into())]).unwrap_err();
        let said = error.to_string();
        assert!(
            said.contains("id") && said.contains("pseudonym alnum"),
            "{said}"
        );
        assert!(said.contains("million"), "{said}");
        assert!(!said.contains("QZ") && !said.contains("771"), "{said}");
        assert!(masker.mask(vec![Some("PTC11962M".into())]).is_ok());
    }

    #[test]
    fn the_key_never_shows() {
        assert_eq!(
            format!("{:?}", PseudonymKey::new(b"hunter2")),
            "PseudonymKey(..)"
        );
    }
}
