//! Named seeding sizes, kept as TOML files in `seeds/` and compiled in so the binary carries them.

use serde::Deserialize;

/// How much data to seed.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub customers: u64,
    /// Transactions are spread over all accounts; this sets their total relative to customers.
    pub transactions_per_customer: u64,
}

const BUILT_IN: &[(&str, &str)] = &[
    ("demo", include_str!("../../../seeds/demo.toml")),
    ("tiny", include_str!("../../../seeds/tiny.toml")),
    ("small", include_str!("../../../seeds/small.toml")),
    ("medium", include_str!("../../../seeds/medium.toml")),
    ("large", include_str!("../../../seeds/large.toml")),
];

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("unknown seed profile {name:?}: use one of {known} or the path of a TOML file")]
    Unknown { name: String, known: String },
    #[error("seed profile {name}: {reason}")]
    Invalid { name: String, reason: String },
}

impl Profile {
    /// The names of the profiles shipped in `seeds/`.
    pub fn built_in_names() -> Vec<&'static str> {
        BUILT_IN.iter().map(|(name, _)| *name).collect()
    }

    /// A shipped profile by name.
    pub fn built_in(name: &str) -> Result<Self, ProfileError> {
        let (_, text) =
            BUILT_IN
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| ProfileError::Unknown {
                    name: name.to_string(),
                    known: Self::built_in_names().join(", "),
                })?;
        Self::from_toml(name, text)
    }

    pub fn from_toml(name: &str, text: &str) -> Result<Self, ProfileError> {
        let profile: Profile = toml::from_str(text).map_err(|e| ProfileError::Invalid {
            name: name.to_string(),
            reason: e.to_string(),
        })?;
        Ok(profile)
    }

    pub fn transactions(&self) -> u64 {
        self.customers * self.transactions_per_customer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_profile_parses() {
        for name in Profile::built_in_names() {
            let profile = Profile::built_in(name).unwrap();
            assert_eq!(profile.name, name);
            assert!(profile.customers > 0);
        }
        assert_eq!(Profile::built_in("demo").unwrap().customers, 80);
        assert_eq!(
            Profile::built_in("large").unwrap().transactions(),
            1_000_000
        );
    }

    #[test]
    fn unknown_profile_names_the_known_ones() {
        let err = Profile::built_in("huge").unwrap_err().to_string();
        assert!(err.contains("demo, tiny, small, medium, large"), "{err}");
    }
}
