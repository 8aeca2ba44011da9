//! Policies: which rule masks which column of which entity, read from TOML.
//!
//! A policy is data a reviewer reads (`policies/bank.toml`), parsed strictly: an unknown rule, a
//! name that is not a plain SQL identifier, or a pseudonym without a kind is an error naming the
//! entity and the column. Deny by default happens in [`Policy::masker`]: asking to mask a column
//! the policy does not name is refused.

use crate::pseudonym::{PseudonymKey, PseudonymKind};
use crate::row::Masker;
use crate::rules::Rule;
use crate::MaskError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The bank policy that ships with maskbus, as a reviewer reads it.
pub const BANK_POLICY_TOML: &str = include_str!("../../../policies/bank.toml");

/// Why a policy file was refused.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("policy {policy}: not valid TOML of the form [entity] column = \"rule\": {reason}")]
    Syntax { policy: String, reason: String },
    #[error("policy {policy}: {entity}.{column}: {reason}")]
    BadRule {
        policy: String,
        entity: String,
        column: String,
        reason: String,
    },
    #[error("policy {policy}: {name:?} is not a plain SQL identifier (lowercase letters, digits, _; at most 63 bytes)")]
    BadName { policy: String, name: String },
    #[error("policy {policy} names no entity")]
    Empty { policy: String },
}

/// The rules of one entity (table), by column.
#[derive(Clone, Debug, Default)]
pub struct EntityPolicy {
    columns: BTreeMap<String, Rule>,
}

impl EntityPolicy {
    pub fn rule(&self, column: &str) -> Option<&Rule> {
        self.columns.get(column)
    }

    pub fn columns(&self) -> impl Iterator<Item = (&str, &Rule)> {
        self.columns.iter().map(|(c, r)| (c.as_str(), r))
    }
}

/// A parsed policy, with the pseudonym key if one was supplied.
#[derive(Clone, Debug)]
pub struct Policy {
    name: String,
    entities: BTreeMap<String, EntityPolicy>,
    key: Option<PseudonymKey>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RuleSpec {
    Name(String),
    Table(BTreeMap<String, toml::Value>),
}

impl Policy {
    /// The bank policy compiled in from `policies/bank.toml`.
    pub fn bank() -> Result<Self, PolicyError> {
        Self::from_toml("policies/bank.toml", BANK_POLICY_TOML)
    }

    /// Parses a policy file. `name` only labels errors (use the file's path).
    pub fn from_toml(name: &str, text: &str) -> Result<Self, PolicyError> {
        let raw: BTreeMap<String, BTreeMap<String, RuleSpec>> =
            toml::from_str(text).map_err(|e| PolicyError::Syntax {
                policy: name.to_string(),
                reason: e.message().to_string(),
            })?;
        if raw.is_empty() {
            return Err(PolicyError::Empty {
                policy: name.to_string(),
            });
        }
        let mut entities = BTreeMap::new();
        for (entity, columns) in raw {
            check_identifier(name, &entity)?;
            let mut rules = BTreeMap::new();
            for (column, spec) in columns {
                check_identifier(name, &column)?;
                let rule = parse_rule(spec).map_err(|reason| PolicyError::BadRule {
                    policy: name.to_string(),
                    entity: entity.clone(),
                    column: column.clone(),
                    reason,
                })?;
                rules.insert(column, rule);
            }
            entities.insert(entity, EntityPolicy { columns: rules });
        }
        Ok(Self {
            name: name.to_string(),
            entities,
            key: None,
        })
    }

    /// Supplies the secret for pseudonym rules.
    pub fn with_key(mut self, key: PseudonymKey) -> Self {
        self.key = Some(key);
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// True when some rule is a keyed pseudonym, so the policy cannot mask without a key.
    pub fn needs_key(&self) -> bool {
        self.entities
            .values()
            .flat_map(|e| e.columns.values())
            .any(|r| matches!(r, Rule::Pseudonym(_)))
    }

    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    pub fn entity(&self, entity: &str) -> Option<&EntityPolicy> {
        self.entities.get(entity)
    }

    /// Entities in name order (the sync orders them by foreign keys, not here).
    pub fn entities(&self) -> impl Iterator<Item = (&str, &EntityPolicy)> {
        self.entities.iter().map(|(n, e)| (n.as_str(), e))
    }

    /// A masker for rows of `entity` whose values come in the order of `columns`.
    ///
    /// This is where deny by default happens: every column must have a rule, or the whole
    /// request is refused naming the first column without one.
    pub fn masker(&self, entity: &str, columns: &[String]) -> Result<Masker<'_>, MaskError> {
        let (entity_name, policy) =
            self.entities
                .get_key_value(entity)
                .ok_or_else(|| MaskError::UnknownEntity {
                    entity: crate::shorten(entity),
                    known: self.entities.keys().cloned().collect::<Vec<_>>().join(", "),
                })?;
        let mut rules = Vec::with_capacity(columns.len());
        for column in columns {
            let rule = policy
                .columns
                .get(column)
                .ok_or_else(|| MaskError::NoRule {
                    entity: entity_name.clone(),
                    column: crate::shorten(column),
                })?;
            if matches!(rule, Rule::Pseudonym(_)) && self.key.is_none() {
                return Err(MaskError::NoKey {
                    entity: entity_name.clone(),
                    column: column.clone(),
                });
            }
            rules.push(rule);
        }
        Ok(Masker::new(
            entity_name,
            columns.to_vec(),
            rules,
            self.key.as_ref(),
        ))
    }
}

/// True for a plain lowercase SQL identifier (letters, digits, `_`; at most 63 bytes): the only
/// names a policy, and a request naming an entity, may carry.
pub fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn check_identifier(policy: &str, name: &str) -> Result<(), PolicyError> {
    let ok = is_identifier(name);
    if ok {
        Ok(())
    } else {
        Err(PolicyError::BadName {
            policy: policy.to_string(),
            name: crate::shorten(name),
        })
    }
}

const RULE_NAMES: &str =
    "keep, null, redact, first_letter, ssn, card, email, year_only, last_four, { constant = \"...\" }, { pseudonym = \"...\" }";

fn parse_rule(spec: RuleSpec) -> Result<Rule, String> {
    match spec {
        RuleSpec::Name(name) => Ok(match name.as_str() {
            "keep" => Rule::Keep,
            "null" => Rule::Null,
            "redact" => Rule::Redact,
            "first_letter" => Rule::FirstLetter,
            "ssn" => Rule::Ssn,
            "card" => Rule::Card,
            "email" => Rule::Email,
            "year_only" => Rule::YearOnly,
            "last_four" => Rule::LastFour,
            other => {
                return Err(format!(
                    "unknown rule {other:?}; the rules are {RULE_NAMES}"
                ))
            }
        }),
        RuleSpec::Table(table) => {
            let mut entries = table.into_iter();
            let (Some((key, value)), None) = (entries.next(), entries.next()) else {
                return Err(format!(
                    "a rule table takes exactly one key; the rules are {RULE_NAMES}"
                ));
            };
            let text = value
                .as_str()
                .ok_or_else(|| format!("{key} takes a string"))?
                .to_string();
            match key.as_str() {
                "constant" => Ok(Rule::Constant(text)),
                "pseudonym" => PseudonymKind::parse(&text)
                    .map(Rule::Pseudonym)
                    .ok_or_else(|| {
                        format!(
                            "unknown pseudonym kind {text:?}; the kinds are {}",
                            PseudonymKind::ALL_NAMES
                        )
                    }),
                other => Err(format!(
                    "unknown rule {other:?}; the rules are {RULE_NAMES}"
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bank_policy_parses_and_names_every_bank_table() {
        let policy = Policy::bank().unwrap();
        let names: Vec<_> = policy.entities().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "accounts",
                "addresses",
                "cards",
                "customers",
                "transactions"
            ]
        );
        assert_eq!(
            policy.entity("customers").unwrap().rule("ssn"),
            Some(&Rule::Ssn)
        );
        assert!(policy.needs_key());
    }

    #[test]
    fn unknown_rules_and_bad_names_are_refused_with_their_place() {
        let err = Policy::from_toml("p.toml", "[customers]\nssn = \"hide\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("customers.ssn") && err.contains("unknown rule \"hide\""),
            "{err}"
        );
        let err = Policy::from_toml("p.toml", "[customers]\nssn = { pseudonym = \"dog\" }")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown pseudonym kind"), "{err}");
        let err = Policy::from_toml("p.toml", "[\"customers; DROP TABLE x\"]\nid = \"keep\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a plain SQL identifier"), "{err}");
        let err = Policy::from_toml("p.toml", "").unwrap_err().to_string();
        assert!(err.contains("names no entity"), "{err}");
        let err = Policy::from_toml(
            "p.toml",
            "[t]\nc = { constant = \"a\", pseudonym = \"ssn\" }",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("exactly one key"), "{err}");
    }

    #[test]
    fn a_column_without_a_rule_is_refused_never_passed() {
        let policy = Policy::from_toml("p", "[customers]\nid = \"keep\"").unwrap();
        let err = policy
            .masker("customers", &["id".into(), "ssn".into()])
            .unwrap_err();
        assert_eq!(err.to_string(), "customers.ssn has no masking rule: deny by default refuses it; add a rule (or \"keep\") to the policy");
        let err = policy.masker("users", &["id".into()]).unwrap_err();
        assert!(
            err.to_string().contains("unknown entity \"users\""),
            "{err}"
        );
    }

    #[test]
    fn pseudonym_rules_without_a_key_are_refused_up_front() {
        let policy = Policy::bank().unwrap();
        let err = policy
            .masker("customers", &["first_name".into()])
            .unwrap_err();
        assert!(err.to_string().contains("pseudonym key"), "{err}");
        let policy = policy.with_key(PseudonymKey::new(b"k"));
        assert!(policy.masker("customers", &["first_name".into()]).is_ok());
    }
}
