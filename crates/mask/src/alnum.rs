//! The keyed bijection of `{ pseudonym = "alnum" }`: every letter and digit of a value through
//! FF1, each character keeping its class (an uppercase letter stays an uppercase letter, a
//! lowercase one lowercase, a digit a digit) and every other character (`-`, `/`, a space)
//! staying where it is: under some key `PTC11962M` becomes `XQA40537K`, `ab-12345` `rw-80931`.
//!
//! **One domain over the classes.** The value's letters and digits are read together as one
//! number in mixed radix (26 for a letter, 10 for a digit, in their order), so the domain is the
//! count of every value of the same shape (`PTC11962M`: 26^4 x 10^5, 4.6 x 10^10). That number
//! goes through FF1 (NIST SP 800-38G, AES-256, the `fpe` crate) over its bits, with cycle walking
//! back into the domain: a permutation of the values of one shape. Folding the classes together
//! is what lets a short run of letters be hidden: its four initials alone (26^4, under half a
//! million) would be below FF1's least domain, and would stay readable.
//!
//! **NIST's least domain.** A value whose shape has fewer than a million values ([`MIN_DOMAIN`],
//! SP 800-38G's floor: five letters, six digits, `AB123` is 676,000) is refused, never passed or
//! shuffled: a fake of so few values hides little, and a table of them is a codebook.
//!
//! **Long values.** Letters and digits are taken in groups of at least 2^64 values (a group of
//! under a million at the end joins the one before); each group's tweak holds the value's shape
//! and the previous group's fake, so a change anywhere before reaches every group after it. The
//! whole stays a bijection: the previous fake is known when undoing.
//!
//! **What it refuses.** Letters and digits outside ASCII (`Ø`, `٣`, a superscript): a map of
//! them is not defined here, and they must not cross unchanged.

use aes::Aes256;
use fpe::ff1::{FlexibleNumeralString, FF1};

/// NIST SP 800-38G's least domain for FF1: a shape with fewer values is refused.
pub const MIN_DOMAIN: u128 = 1_000_000;

/// A group of letters and digits closes once it has this many values.
const GROUP_DOMAIN: u128 = 1 << 64;

/// Why a value has no alnum fake. Carries counts, never the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Fewer than [`MIN_DOMAIN`] values of its shape.
    TooSmall { letters: usize, digits: usize },
    /// A letter or digit outside ASCII, in a value of `len` characters.
    NotAscii { len: usize },
    /// FF1 failed (it cannot on a valid length): nothing of the value is written.
    Cipher { len: usize },
}

/// The class a character keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Upper,
    Lower,
    Digit,
}

impl Slot {
    fn of(c: char) -> Option<Slot> {
        match c {
            'A'..='Z' => Some(Slot::Upper),
            'a'..='z' => Some(Slot::Lower),
            '0'..='9' => Some(Slot::Digit),
            _ => None,
        }
    }

    fn radix(self) -> u128 {
        match self {
            Slot::Upper | Slot::Lower => 26,
            Slot::Digit => 10,
        }
    }

    fn base(self) -> u8 {
        match self {
            Slot::Upper => b'A',
            Slot::Lower => b'a',
            Slot::Digit => b'0',
        }
    }

    fn value(self, c: char) -> u128 {
        u128::from(c as u8 - self.base())
    }

    fn char(self, v: u128) -> char {
        char::from(self.base() + v as u8)
    }
}

/// FF1 over bits under its own key.
pub(crate) struct AlnumCipher {
    ff1: FF1<Aes256>,
}

impl AlnumCipher {
    pub(crate) fn new(key: &[u8; 32]) -> Option<Self> {
        let aes_key = blake3::derive_key("maskbus 2026 ff1 alnum aes-256 key v1", key);
        Some(AlnumCipher {
            ff1: FF1::<Aes256>::new(&aes_key, 2).ok()?,
        })
    }

    /// The fake of `input` (`forward`) or the value whose fake it is.
    pub(crate) fn map(&self, input: &str, forward: bool) -> Result<String, Refusal> {
        let mut chars: Vec<char> = input.chars().collect();
        if chars.iter().any(|c| c.is_alphanumeric() && !c.is_ascii()) {
            return Err(Refusal::NotAscii { len: chars.len() });
        }
        let slots: Vec<(usize, Slot)> = chars
            .iter()
            .enumerate()
            .filter_map(|(at, c)| Slot::of(*c).map(|s| (at, s)))
            .collect();
        let domain = slots
            .iter()
            .try_fold(1u128, |d, (_, s)| d.checked_mul(s.radix()));
        if domain.is_some_and(|d| d < MIN_DOMAIN) {
            let digits = slots.iter().filter(|(_, s)| *s == Slot::Digit).count();
            return Err(Refusal::TooSmall {
                letters: slots.len() - digits,
                digits,
            });
        }
        // Groups of at least 2^64 values; a last one under the floor joins the one before.
        let mut groups: Vec<(usize, usize, u128)> = Vec::new();
        let (mut start, mut size) = (0usize, 1u128);
        for (i, (_, slot)) in slots.iter().enumerate() {
            size *= slot.radix();
            if size >= GROUP_DOMAIN {
                groups.push((start, i + 1, size));
                (start, size) = (i + 1, 1);
            }
        }
        if start < slots.len() {
            match groups.last_mut() {
                Some(last) if size < MIN_DOMAIN => {
                    last.1 = slots.len();
                    last.2 *= size;
                }
                _ => groups.push((start, slots.len(), size)),
            }
        }
        let shape: Vec<u8> = chars
            .iter()
            .flat_map(|c| {
                let mut buf = [0u8; 4];
                let text = match Slot::of(*c) {
                    Some(slot) => char::from(slot.base()).encode_utf8(&mut buf),
                    None => c.encode_utf8(&mut buf),
                };
                text.as_bytes().to_vec()
            })
            .collect();
        let mut chain = [0u8; 16];
        for (index, (from, to, size)) in groups.into_iter().enumerate() {
            let group = &slots[from..to];
            let value = group.iter().fold(0u128, |n, (at, slot)| {
                n * slot.radix() + slot.value(chars[*at])
            });
            let mut tweak = Vec::with_capacity(shape.len() + 24);
            tweak.extend_from_slice(&(index as u32).to_le_bytes());
            tweak.extend_from_slice(&chain);
            tweak.extend_from_slice(&shape);
            let fake = self
                .walk(&tweak, value, size, forward)
                .ok_or(Refusal::Cipher { len: chars.len() })?;
            // The next group's tweak holds this group's output when masking, its input when
            // undoing: the fake either way.
            chain = if forward { fake } else { value }.to_le_bytes();
            let mut rest = fake;
            for (at, slot) in group.iter().rev() {
                chars[*at] = slot.char(rest % slot.radix());
                rest /= slot.radix();
            }
        }
        Ok(chars.into_iter().collect())
    }

    /// FF1 over the bits of numbers below `size`, walked until it comes back below `size`: a
    /// permutation of `0..size`.
    fn walk(&self, tweak: &[u8], value: u128, size: u128, forward: bool) -> Option<u128> {
        let bits = 128 - (size - 1).leading_zeros();
        let mut x = value;
        loop {
            let numerals: Vec<u16> = (0..bits).rev().map(|b| ((x >> b) & 1) as u16).collect();
            let numerals = FlexibleNumeralString::from(numerals);
            let out = if forward {
                self.ff1.encrypt(tweak, &numerals).ok()?
            } else {
                self.ff1.decrypt(tweak, &numerals).ok()?
            };
            x = Vec::<u16>::from(out)
                .into_iter()
                .fold(0u128, |n, b| (n << 1) | u128::from(b));
            if x < size {
                return Some(x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn cipher() -> AlnumCipher {
        AlnumCipher::new(&[9; 32]).unwrap()
    }

    #[test]
    fn a_shape_is_permuted_and_undone() {
        let c = cipher();
        // A slice of the million six-digit values: distinct fakes, each undone.
        let fakes: HashSet<String> = (0..20_000u32)
            .map(|i| {
                let real = format!("{:06}", i * 37 % 1_000_000);
                let fake = c.map(&real, true).unwrap();
                assert_eq!(c.map(&fake, false).unwrap(), real);
                fake
            })
            .collect();
        assert_eq!(fakes.len(), 20_000);
    }

    #[test]
    fn long_values_go_in_groups_and_a_change_reaches_the_end() {
        let c = cipher();
        let real = "ABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789-abcdefghijklmnopqrstuvwxyz-99";
        let fake = c.map(real, true).unwrap();
        assert_eq!(fake.len(), real.len());
        assert_eq!(c.map(&fake, false).unwrap(), real);
        let other = c.map(&real.replacen('A', "B", 1), true).unwrap();
        assert_ne!(
            other[60..],
            fake[60..],
            "the first letter reaches the last group"
        );
    }

    #[test]
    fn too_small_and_not_ascii_are_refused() {
        let c = cipher();
        assert_eq!(
            c.map("AB-123", true),
            Err(Refusal::TooSmall {
                letters: 2,
                digits: 3
            })
        );
        assert_eq!(
            c.map("12345", true),
            Err(Refusal::TooSmall {
                letters: 0,
                digits: 5
            })
        );
        assert!(c.map("123456", true).is_ok());
        assert!(c.map("ABCDE", true).is_ok(), "26^5 is over a million");
        assert_eq!(
            c.map("Øster-123456", true),
            Err(Refusal::NotAscii { len: 12 })
        );
        assert_eq!(c.map("١٢٣٤٥٦٧", true), Err(Refusal::NotAscii { len: 7 }));
    }
}
