//! Keyed bijections over strings of decimal digits: what makes a pseudonym of an SSN, an account
//! or a card number unique by construction (distinct inputs, distinct fakes), so a UNIQUE column
//! or a key can carry it.
//!
//! Six digits and more go through FF1 (NIST SP 800-38G, format-preserving encryption) with
//! AES-256, from the `fpe` crate, the pseudonym kind as the tweak. Shorter strings, below FF1's
//! least domain of a million, use FF1 on six digits with cycle walking (four and five digits) or
//! a keyed shuffle of the whole domain (one to three digits, a thousand values at most). A class
//! of values can be kept (an SSN that could have been issued gets a fake that could have been,
//! and one that could not, one that could not; a Luhn-valid card number a Luhn-valid fake): again
//! by cycle walking, which keeps each class's permutation a permutation.
//!
//! The same key decrypts: a fake can be traced to its real value by whoever holds the pseudonym
//! key, which is how the wire audit tells a fake from a leak (and why the key stays on the
//! producer's side; a keyed hash over a space of a billion SSNs gave no more protection, since
//! the key holder could try them all).

use aes::Aes256;
use fpe::ff1::{FlexibleNumeralString, FF1};

/// A class of digit strings a fake stays in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Any digits.
    Any,
    /// Nine digits that could have been issued as an SSN stay issuable; others stay not.
    Ssn,
    /// Luhn-valid digits stay Luhn-valid; others stay invalid.
    Luhn,
}

impl Class {
    fn holds(self, digits: &[u8]) -> bool {
        match self {
            Class::Any => true,
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
        }
    }
}

/// FF1 under one key, and the key for the shuffle of short domains.
pub(crate) struct DigitCipher {
    ff1: FF1<Aes256>,
    shuffle_key: [u8; 32],
}

/// FF1's least length in decimal digits (a domain of a million).
const FF1_MIN_DIGITS: usize = 6;

impl DigitCipher {
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        let aes_key = blake3::derive_key("maskbus 2026 ff1 aes-256 key v1", key);
        Some(DigitCipher {
            ff1: FF1::<Aes256>::new(&aes_key, 10).ok()?,
            shuffle_key: blake3::derive_key("maskbus 2026 short digit shuffle v1", key),
        })
    }

    /// The fake of `digits` (values 0 to 9) under `tweak`, in the same `class`.
    pub(crate) fn encrypt(&self, tweak: &[u8], digits: &[u8], class: Class) -> Option<Vec<u8>> {
        let member = class.holds(digits);
        let mut out = self.permute(tweak, digits, true)?;
        while class.holds(&out) != member {
            out = self.permute(tweak, &out, true)?;
        }
        Some(out)
    }

    /// The real digits whose fake is `digits`.
    pub(crate) fn decrypt(&self, tweak: &[u8], digits: &[u8], class: Class) -> Option<Vec<u8>> {
        let member = class.holds(digits);
        let mut out = self.permute(tweak, digits, false)?;
        while class.holds(&out) != member {
            out = self.permute(tweak, &out, false)?;
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
        if n >= 4 {
            // Cycle walking on six digits: the numbers below 10^n are permuted among themselves.
            let mut padded = vec![0u8; FF1_MIN_DIGITS - n];
            padded.extend_from_slice(digits);
            loop {
                padded = self.ff1(tweak, &padded, forward)?;
                if padded[..FF1_MIN_DIGITS - n].iter().all(|d| *d == 0) {
                    return Some(padded[FF1_MIN_DIGITS - n..].to_vec());
                }
            }
        }
        // One to three digits: every value of the domain ranked by a keyed hash.
        let size = 10u32.pow(n as u32);
        let value = digits.iter().fold(0u32, |a, d| a * 10 + u32::from(*d));
        let mut ranked: Vec<(u64, u32)> = (0..size).map(|v| (self.rank(tweak, n, v), v)).collect();
        ranked.sort_unstable();
        let fake = if forward {
            ranked.get(value as usize)?.1
        } else {
            ranked.iter().position(|(_, v)| *v == value)? as u32
        };
        Some(
            (0..n)
                .rev()
                .map(|i| ((fake / 10u32.pow(i as u32)) % 10) as u8)
                .collect(),
        )
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
        // Every value of the short domains; a slice of the four-digit one (cycle walking).
        for n in 1..=4u32 {
            let size = if n < 4 { 10u32.pow(n) } else { 300 };
            let fakes: HashSet<Vec<u8>> = (0..size)
                .map(|v| {
                    let real = digits(&format!("{v:0width$}", width = n as usize));
                    let fake = c.encrypt(b"t", &real, Class::Any).unwrap();
                    assert_eq!(fake.len(), real.len());
                    assert_eq!(c.decrypt(b"t", &fake, Class::Any).unwrap(), real);
                    fake
                })
                .collect();
            assert_eq!(fakes.len(), size as usize, "{n} digits");
        }
        let real = digits("4111111111111111");
        let fake = c.encrypt(b"t", &real, Class::Luhn).unwrap();
        assert!(Class::Luhn.holds(&fake) && fake != real);
        assert_eq!(c.decrypt(b"t", &fake, Class::Luhn).unwrap(), real);
    }

    #[test]
    fn an_issuable_ssn_gets_an_issuable_fake_and_the_tweak_matters() {
        let c = cipher();
        for real in ["224308280", "000000000", "900123456", "123456789"] {
            let real = digits(real);
            let fake = c.encrypt(b"ssn", &real, Class::Ssn).unwrap();
            assert_eq!(Class::Ssn.holds(&fake), Class::Ssn.holds(&real));
            assert_eq!(c.decrypt(b"ssn", &fake, Class::Ssn).unwrap(), real);
            assert_ne!(c.encrypt(b"digits", &real, Class::Ssn).unwrap(), fake);
        }
    }
}
