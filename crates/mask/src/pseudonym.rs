//! Deterministic keyed pseudonyms: the same input and key always give the same fake value, so a
//! value that appears in two tables is replaced consistently and joins across them survive.
//!
//! The key comes from configuration, never from this crate; without a key the input could be
//! recovered by hashing guesses (a dictionary of names or the whole SSN space). BLAKE3 in keyed
//! mode is the PRF, with the kind as domain separation so one input gives unrelated fakes for
//! different kinds.

/// The secret that makes pseudonyms unguessable. Its Debug output never shows it.
#[derive(Clone)]
pub struct PseudonymKey([u8; 32]);

/// The shortest pseudonym key a configuration may give: 32 bytes (a 2-letter key was recovered
/// from one known pair in under a millisecond; `maskbus key new` prints a random one).
pub const MIN_KEY_BYTES: usize = 32;

/// The fewest distinct bytes a configured key must hold (`aaaa...` is long and guessable).
pub const MIN_KEY_DISTINCT_BYTES: usize = 10;

/// Why a configured key is refused. Never shows the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WeakKey {
    #[error("the pseudonym key has {got} bytes; it needs at least {MIN_KEY_BYTES}: make one with `maskbus key new` and keep it secret")]
    TooShort { got: usize },
    #[error("the pseudonym key repeats a few characters ({distinct} distinct; at least {MIN_KEY_DISTINCT_BYTES}): make one with `maskbus key new`")]
    TooPlain { distinct: usize },
}

impl PseudonymKey {
    /// The key of a configuration: refused when shorter than [`MIN_KEY_BYTES`] or made of
    /// fewer than [`MIN_KEY_DISTINCT_BYTES`] distinct bytes.
    pub fn from_config(secret: &[u8]) -> Result<Self, WeakKey> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(WeakKey::TooShort { got: secret.len() });
        }
        let mut seen = [false; 256];
        for &b in secret {
            seen[b as usize] = true;
        }
        let distinct = seen.iter().filter(|s| **s).count();
        if distinct < MIN_KEY_DISTINCT_BYTES {
            return Err(WeakKey::TooPlain { distinct });
        }
        Ok(Self::new(secret))
    }

    /// Derives a 32-byte key from any secret text (a passphrase or random bytes). Tests and
    /// benchmarks only: a configured key goes through [`PseudonymKey::from_config`].
    pub fn new(secret: &[u8]) -> Self {
        Self(blake3::derive_key("maskbus 2026 pseudonym key v1", secret))
    }

    /// A tag that changes when the key does and tells nothing of it (a keyed hash of a fixed
    /// text): what a fingerprint of masking rules mixes in, so a new key re-masks every table.
    pub(crate) fn tag(&self) -> [u8; 32] {
        *blake3::keyed_hash(&self.0, b"maskbus rules fingerprint v1").as_bytes()
    }

    fn hash(&self, kind: PseudonymKind, input: &str) -> [u8; 32] {
        let mut hasher = blake3::Hasher::new_keyed(&self.0);
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

/// What kind of fake a pseudonym rule produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PseudonymKind {
    /// A first name from a fixed list.
    FirstName,
    /// A last name from a fixed list.
    LastName,
    /// `first.last.<12 letters>@example.com`: 56 bits of the hash keep it unique in practice.
    Email,
    /// `9XX-XX-XXXX`: SSN-shaped, but area 900-999 was never issued, so it can never be a real one.
    Ssn,
    /// Every ASCII digit replaced by a keyed digit; other characters and the length kept.
    Digits,
}

impl PseudonymKind {
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "first_name" => Self::FirstName,
            "last_name" => Self::LastName,
            "email" => Self::Email,
            "ssn" => Self::Ssn,
            "digits" => Self::Digits,
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
        }
    }

    pub const ALL_NAMES: &'static str = "first_name, last_name, email, ssn, digits";

    /// Whether `value` is something this kind could have produced. A real value that could also
    /// be a fake cannot be told apart from one on the wire; the exact-match audit skips those.
    pub fn could_produce(self, value: &str) -> bool {
        match self {
            // The matcher reads words case-insensitively; so does this, or a real `SMITH`
            // would be taken for a leak of the fake `Smith`.
            Self::FirstName => is_one_of(FIRST_NAMES, value),
            Self::LastName => is_one_of(LAST_NAMES, value),
            // A fake email spells a first and a last name as words of its local part.
            Self::Email => {
                value.to_ascii_lowercase().ends_with("@example.com")
                    || is_one_of(FIRST_NAMES, value)
                    || is_one_of(LAST_NAMES, value)
            }
            Self::Ssn => value.len() == 11 && value.starts_with('9'),
            // Fresh keyed digits equal a given real value only by a 10^-n coincidence: a real
            // value seen on the wire is treated as the leak it almost surely is.
            Self::Digits => false,
        }
    }

    /// Whether distinct inputs stay distinct (in practice): only the email carries enough hash.
    pub fn stays_unique(self) -> bool {
        matches!(self, Self::Email)
    }

    /// The fewest characters a fake of this kind can be written in: fit checks a column's
    /// length limit against it ([`PseudonymKind::apply_within`] shortens to the limit).
    pub fn min_width(self) -> usize {
        match self {
            // The tag alone carries the uniqueness: eight letters at the least.
            Self::Email => 8 + "@example.com".len(),
            // Digits only: 9xxxxxxxx.
            Self::Ssn => 9,
            Self::FirstName | Self::LastName | Self::Digits => 1,
        }
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
            Self::Ssn => full.chars().filter(char::is_ascii_digit).collect(),
            Self::FirstName | Self::LastName | Self::Digits => full.chars().take(max).collect(),
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
            Self::LastName => pick(LAST_NAMES, eight(0)).to_string(),
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
            Self::Ssn => {
                let n = u64::from_le_bytes(eight(0));
                let area = 900 + n % 100;
                let group = 1 + (n / 100) % 99;
                let serial = 1 + (n / 9_900) % 9_999;
                format!("{area}-{group:02}-{serial:04}")
            }
            Self::Digits => {
                // Every decimal digit, in any script, is replaced; the fake writes ASCII digits.
                let count = input
                    .chars()
                    .filter(|c| maskbus_pii::is_decimal_digit(*c))
                    .count();
                let mut digits: Vec<u8> = (0..count).map(|i| h[i % 32] % 10).collect();
                defuse(&mut digits);
                let mut fresh = digits.into_iter();
                input
                    .chars()
                    .map(|c| {
                        match maskbus_pii::is_decimal_digit(c)
                            .then(|| fresh.next())
                            .flatten()
                        {
                            Some(d) => char::from(b'0' + d),
                            None => c,
                        }
                    })
                    .collect()
            }
        }
    }
}

/// `value` (trimmed) is one of `names`, whatever its case.
fn is_one_of(names: &[&str], value: &str) -> bool {
    let value = value.trim();
    names.iter().any(|n| n.eq_ignore_ascii_case(value))
}

/// A fake must never look like a real identifier to the wire audit: nine digits get area 9xx
/// (never issued as an SSN), and 13 to 19 digits that happen to pass Luhn get their last digit
/// moved so they fail it.
fn defuse(digits: &mut [u8]) {
    match digits.len() {
        9 => digits[0] = 9,
        13..=19 => {
            let text: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
            if maskbus_pii::luhn_valid(&text) {
                let last = digits.len() - 1;
                digits[last] = (digits[last] + 1) % 10;
            }
        }
        _ => {}
    }
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
            Err(WeakKey::TooPlain { distinct: 1 })
        ));
        assert!(PseudonymKey::from_config(b"0123456789abcdefghijklmnopqrstuv").is_ok());
        let shown = PseudonymKey::from_config(b"k").unwrap_err().to_string();
        assert!(!shown.contains("\"k\""), "{shown}");
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
    fn ssn_pseudonyms_are_never_issuable() {
        let key = PseudonymKey::new(b"k");
        for i in 0..10_000 {
            let fake = PseudonymKind::Ssn.apply(&key, &format!("{i:09}"));
            assert!(fake.starts_with('9'), "{fake}");
            assert_eq!(fake.len(), 11);
        }
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
                .apply_within(&key, "224-30-8280", Some(9))
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
    fn the_key_never_shows() {
        assert_eq!(
            format!("{:?}", PseudonymKey::new(b"hunter2")),
            "PseudonymKey(..)"
        );
    }
}
