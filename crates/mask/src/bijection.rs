//! Keyed bijections over strings of decimal digits: what makes a pseudonym of an SSN, an account
//! or a card number unique by construction (distinct inputs, distinct fakes), so a UNIQUE column
//! or a key can carry it.
//!
//! Six digits and more go through FF1 (NIST SP 800-38G, format-preserving encryption) with
//! AES-256, from the `fpe` crate, the pseudonym kind as the tweak. Shorter strings, below FF1's
//! least domain of a million, use FF1 on six digits with cycle walking (five digits) or a keyed
//! shuffle of the whole domain (one to four digits, ten thousand values at most, drawn once per
//! key, kind and length). A class of values is kept (an SSN that could
//! have been issued gets a fake that could have been, and one that could not, one that could
//! not; a Luhn-valid card number a Luhn-valid fake; an integer an integer of its type's range,
//! without a leading zero) by cycle walking, which keeps each class's permutation a permutation.
//!
//! The same key decrypts: a fake can be traced to its real value by whoever holds the pseudonym
//! key, which is how the wire audit tells a fake from a leak (and why the key stays on the
//! producer's side; a keyed hash over a space of a billion SSNs gave no more protection, since
//! the key holder could try them all).

use aes::Aes256;
use fpe::ff1::{FlexibleNumeralString, FF1};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A class of digit strings a fake stays in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Any digits, in the same [`number_shape`].
    Any,
    /// Nine digits that could have been issued as an SSN stay issuable; others stay not.
    Ssn,
    /// Luhn-valid digits stay Luhn-valid; others stay invalid.
    Luhn,
}

/// What a string of digits is as a number, which its fake keeps: whether it has a leading zero
/// (`042` is not the integer 42, so a fake of an integer never has one), and for the lengths at
/// which Postgres' integer types end (5, 10 and 19 digits) whether it is within each type's
/// bound (`i16::MAX`, `i32::MAX`, `i64::MAX`; one more for a `negative` value, whose magnitude
/// may reach `-i16::MIN`). So a masked `smallint`, `integer` or `bigint` key always fits its
/// column, and a text value's fake keeps its zeros. Each class is a large part of its length's
/// strings (a fifth at the least), so cycle walking stays a few steps.
///
/// A lone `0` is a class of its own (it maps to itself): `-9` may not become `-0`, which is the
/// integer 0.
fn number_shape(digits: &[u8], negative: bool) -> u8 {
    if digits == [0] {
        return 4;
    }
    let leading_zero = digits.len() > 1 && digits[0] == 0;
    let bound: Option<u64> = match digits.len() {
        5 => Some(32_767),
        10 => Some(2_147_483_647),
        19 => Some(9_223_372_036_854_775_807),
        _ => None,
    };
    let within = bound.is_some_and(|max| {
        let value = digits
            .iter()
            .fold(0u64, |a, d| a.wrapping_mul(10).wrapping_add(u64::from(*d)));
        value <= max + u64::from(negative)
    });
    u8::from(leading_zero) | (u8::from(within) << 1)
}

impl Class {
    /// Which part of the class `digits` is in: a fake has the same signature as its value.
    fn signature(self, digits: &[u8], negative: bool) -> u8 {
        let member = match self {
            Class::Any => false,
            Class::Ssn => {
                let n = |r: std::ops::Range<usize>| {
                    digits[r].iter().fold(0u32, |a, d| a * 10 + u32::from(*d))
                };
                digits.len() == 9
                    && maskbus_pii::ssn_is_issuable(n(0..3) as u16, n(3..5) as u8, n(5..9) as u16)
            }
            Class::Luhn => {
                let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
                maskbus_pii::luhn_valid(&text)
            }
        };
        // A value that could not be issued as an SSN (area 000, 666, 900 and up) keeps only
        // that: with its zeros' shape too, area 000 would be a class of a fifth of a percent,
        // hundreds of FF1 calls a value. (Such a value in an integer column may get a fake with a
        // leading zero, which verify then reads as another number.)
        if self == Class::Ssn && digits.len() == 9 && !member {
            return 0;
        }
        number_shape(digits, negative) | (u8::from(member) << 7)
    }
}

/// FF1 under one key, and the key for the shuffle of short domains.
pub(crate) struct DigitCipher {
    ff1: FF1<Aes256>,
    shuffle_key: [u8; 32],
    /// The shuffles drawn so far, by tweak and length: each is a thousand keyed hashes and a
    /// sort, drawn once (there are a few tweaks and four lengths).
    shuffles: Mutex<Shuffles>,
}

/// The shuffles drawn, by tweak and length.
type Shuffles = HashMap<(Vec<u8>, usize), Arc<Shuffle>>;

/// A keyed permutation of the numbers below `10^n` and its inverse.
struct Shuffle {
    forward: Vec<u32>,
    inverse: Vec<u32>,
}

/// FF1's least length in decimal digits (a domain of a million).
const FF1_MIN_DIGITS: usize = 6;

impl DigitCipher {
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        let aes_key = blake3::derive_key("maskbus 2026 ff1 aes-256 key v1", key);
        Some(DigitCipher {
            ff1: FF1::<Aes256>::new(&aes_key, 10).ok()?,
            shuffle_key: blake3::derive_key("maskbus 2026 short digit shuffle v1", key),
            shuffles: Mutex::new(HashMap::new()),
        })
    }

    /// The fake of `digits` (values 0 to 9, of a `negative` number or not) under `tweak`, in
    /// the same `class`.
    pub(crate) fn encrypt(
        &self,
        tweak: &[u8],
        digits: &[u8],
        class: Class,
        negative: bool,
    ) -> Option<Vec<u8>> {
        self.walk(tweak, digits, class, negative, true)
    }

    /// The real digits whose fake is `digits`.
    pub(crate) fn decrypt(
        &self,
        tweak: &[u8],
        digits: &[u8],
        class: Class,
        negative: bool,
    ) -> Option<Vec<u8>> {
        self.walk(tweak, digits, class, negative, false)
    }

    /// The permutation (or its inverse), walked until it comes back into `digits`' part of
    /// `class`: a permutation of that part.
    fn walk(
        &self,
        tweak: &[u8],
        digits: &[u8],
        class: Class,
        negative: bool,
        forward: bool,
    ) -> Option<Vec<u8>> {
        let member = class.signature(digits, negative);
        let mut out = self.permute(tweak, digits, forward)?;
        while class.signature(&out, negative) != member {
            out = self.permute(tweak, &out, forward)?;
        }
        Some(out)
    }

    /// The permutation of all strings of `digits.len()` digits (or its inverse).
    fn permute(&self, tweak: &[u8], digits: &[u8], forward: bool) -> Option<Vec<u8>> {
        let n = digits.len();
        if n >= FF1_MIN_DIGITS {
            return self.ff1(tweak, digits, forward);
        }
        if n == 0 {
            return Some(Vec::new());
        }
        if n == FF1_MIN_DIGITS - 1 {
            // Five digits: cycle walking on six, the numbers below 10^5 permuted among
            // themselves (ten FF1 calls on average; a shuffle would be 100,000 hashes a key).
            let mut padded = vec![0u8; 1];
            padded.extend_from_slice(digits);
            loop {
                padded = self.ff1(tweak, &padded, forward)?;
                if padded[0] == 0 {
                    return Some(padded[1..].to_vec());
                }
            }
        }
        // One to four digits: every value of the domain ranked by a keyed hash.
        let value = digits.iter().fold(0u32, |a, d| a * 10 + u32::from(*d));
        let shuffle = self.shuffle(tweak, n);
        let table = if forward {
            &shuffle.forward
        } else {
            &shuffle.inverse
        };
        let fake = *table.get(value as usize)?;
        Some(
            (0..n)
                .rev()
                .map(|i| ((fake / 10u32.pow(i as u32)) % 10) as u8)
                .collect(),
        )
    }

    /// The shuffle of `n`-digit strings under `tweak`, drawn at its first use.
    fn shuffle(&self, tweak: &[u8], n: usize) -> Arc<Shuffle> {
        let draw = || {
            let size = 10u32.pow(n as u32);
            let mut ranked: Vec<(u64, u32)> =
                (0..size).map(|v| (self.rank(tweak, n, v), v)).collect();
            ranked.sort_unstable();
            let forward: Vec<u32> = ranked.iter().map(|(_, v)| *v).collect();
            let mut inverse = vec![0u32; size as usize];
            for (rank, v) in forward.iter().enumerate() {
                inverse[*v as usize] = rank as u32;
            }
            Arc::new(Shuffle { forward, inverse })
        };
        // A poisoned lock only means another thread panicked while drawing: draw again.
        match self.shuffles.lock() {
            Ok(mut drawn) => drawn
                .entry((tweak.to_vec(), n))
                .or_insert_with(draw)
                .clone(),
            Err(_) => draw(),
        }
    }

    fn rank(&self, tweak: &[u8], n: usize, value: u32) -> u64 {
        let mut hasher = blake3::Hasher::new_keyed(&self.shuffle_key);
        hasher.update(tweak);
        hasher.update(&[0, n as u8]);
        hasher.update(&value.to_le_bytes());
        let bytes = hasher.finalize();
        u64::from_le_bytes(bytes.as_bytes()[..8].try_into().unwrap_or([0; 8]))
    }

    fn ff1(&self, tweak: &[u8], digits: &[u8], forward: bool) -> Option<Vec<u8>> {
        let numerals =
            FlexibleNumeralString::from(digits.iter().map(|d| u16::from(*d)).collect::<Vec<u16>>());
        let out = if forward {
            self.ff1.encrypt(tweak, &numerals).ok()?
        } else {
            self.ff1.decrypt(tweak, &numerals).ok()?
        };
        Some(Vec::<u16>::from(out).into_iter().map(|d| d as u8).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn cipher() -> DigitCipher {
        DigitCipher::new(&[7; 32]).unwrap()
    }

    fn digits(text: &str) -> Vec<u8> {
        text.bytes().map(|b| b - b'0').collect()
    }

    #[test]
    fn every_length_is_a_permutation_that_decrypts() {
        let c = cipher();
        // Every value of the short domains; a slice of the five- and six-digit ones (FF1).
        for n in 1..=6u32 {
            let size = if n < 5 { 10u32.pow(n) } else { 500 };
            let fakes: HashSet<Vec<u8>> = (0..size)
                .map(|v| {
                    let real = digits(&format!("{v:0width$}", width = n as usize));
                    let fake = c.encrypt(b"t", &real, Class::Any, false).unwrap();
                    assert_eq!(fake.len(), real.len());
                    assert_eq!(c.decrypt(b"t", &fake, Class::Any, false).unwrap(), real);
                    fake
                })
                .collect();
            assert_eq!(fakes.len(), size as usize, "{n} digits");
        }
        let real = digits("4111111111111111");
        let fake = c.encrypt(b"t", &real, Class::Luhn, false).unwrap();
        assert!(
            Class::Luhn.signature(&fake, false) == Class::Luhn.signature(&real, false)
                && fake != real
        );
        assert!(maskbus_pii::luhn_valid("4111111111111111"));
        assert_eq!(c.decrypt(b"t", &fake, Class::Luhn, false).unwrap(), real);
    }

    #[test]
    fn an_issuable_ssn_gets_an_issuable_fake_and_the_tweak_matters() {
        let c = cipher();
        for real in ["224308280", "000000000", "900123456", "123456789"] {
            let real = digits(real);
            let fake = c.encrypt(b"ssn", &real, Class::Ssn, false).unwrap();
            assert_eq!(
                Class::Ssn.signature(&fake, false),
                Class::Ssn.signature(&real, false)
            );
            assert_eq!(c.decrypt(b"ssn", &fake, Class::Ssn, false).unwrap(), real);
            assert_ne!(
                c.encrypt(b"digits", &real, Class::Ssn, false).unwrap(),
                fake
            );
        }
    }

    #[test]
    fn a_fake_integer_is_an_integer_of_the_same_type() {
        let c = cipher();
        let number = |d: &[u8]| d.iter().fold(0u64, |a, d| a * 10 + u64::from(*d));
        let mut values: Vec<u64> = (1..1200)
            .chain(9990..10010)
            .chain(99_990..100_010)
            .collect();
        values.extend([32_767, 32_766, 32_768, 10_000, 2_147_483_647, 2_147_483_648]);
        values.extend([
            1_000_000_000,
            9_223_372_036_854_775_807,
            1_000_000_000_000_000_000,
        ]);
        for value in values {
            let real = digits(&value.to_string());
            let fake = c.encrypt(b"digits", &real, Class::Any, false).unwrap();
            assert!(fake.len() == 1 || fake[0] != 0, "{value}: a leading zero");
            for max in [i16::MAX as u64, i32::MAX as u64, i64::MAX as u64] {
                let same_length = max.to_string().len() == real.len();
                if same_length && value <= max {
                    assert!(number(&fake) <= max, "{value} left its type");
                }
            }
            assert_eq!(
                c.decrypt(b"digits", &fake, Class::Any, false).unwrap(),
                real
            );
        }
        // Zero is its own class: no negative number becomes -0.
        assert_eq!(c.encrypt(b"digits", &[0], Class::Any, false).unwrap(), [0]);
        for d in 1..10u8 {
            assert_ne!(c.encrypt(b"digits", &[d], Class::Any, true).unwrap(), [0]);
        }
        // The least value of each type: its magnitude is one past the greatest.
        for magnitude in ["32768", "2147483648", "9223372036854775808"] {
            let real = digits(magnitude);
            let fake = c.encrypt(b"digits", &real, Class::Any, true).unwrap();
            assert!(number(&fake) <= number(&real), "-{magnitude} left its type");
            assert_eq!(c.decrypt(b"digits", &fake, Class::Any, true).unwrap(), real);
        }
    }
}
