//! Rules inside JSON documents: `{ json = { "$.contact.email" = "email" } }`.
//!
//! A json or jsonb column holds documents whose shape the schema does not fix, so deny by default
//! applies inside them too: a string leaf at a path the rule names gets that path's rule; every
//! other string leaf is scrubbed (or nulled, with `others = "null"`), and every other number
//! of six or more digits likewise, so a key added to the documents tomorrow cannot carry PII
//! through. Paths are `$` for the root, `.name` for an object member and `[*]` for any array
//! element: `$.phones[*].number`. Object keys, booleans and nulls pass unchanged.

use crate::pseudonym::PseudonymKey;
use crate::rules::{scrub, Rule, RuleError};
use serde_json::Value;
use std::collections::BTreeMap;

/// What happens to the leaves no path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Others {
    Scrub,
    Null,
}

/// The rules of one JSON column, by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonRule {
    pub paths: BTreeMap<String, Rule>,
    pub others: Others,
}

/// The fewest digits a number needs before it is treated like a run of digits in free text.
const NUMBER_DIGITS: usize = 6;

impl JsonRule {
    /// Masks one document given as JSON text; returns JSON text.
    pub fn apply(&self, text: &str, key: Option<&PseudonymKey>) -> Result<String, RuleError> {
        let mut document: Value =
            serde_json::from_str(text).map_err(|_| RuleError::NotJson(text.chars().count()))?;
        let mut path = String::from("$");
        self.walk(&mut document, &mut path, key)?;
        serde_json::to_string(&document).map_err(|_| RuleError::NotJson(text.chars().count()))
    }

    fn walk(
        &self,
        value: &mut Value,
        path: &mut String,
        key: Option<&PseudonymKey>,
    ) -> Result<(), RuleError> {
        match value {
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    let len = path.len();
                    path.push('.');
                    path.push_str(name);
                    self.walk(member, path, key)?;
                    path.truncate(len);
                }
            }
            Value::Array(items) => {
                let len = path.len();
                path.push_str("[*]");
                for item in items.iter_mut() {
                    self.walk(item, path, key)?;
                }
                path.truncate(len);
            }
            Value::String(text) => {
                *value = match self.paths.get(path.as_str()) {
                    Some(rule) => match rule.apply(Some(std::mem::take(text)), key)? {
                        Some(masked) => Value::String(masked),
                        None => Value::Null,
                    },
                    None => match self.others {
                        Others::Scrub => Value::String(scrub(text)),
                        Others::Null => Value::Null,
                    },
                };
            }
            Value::Number(number) => {
                let digits = number.to_string();
                *value = match self.paths.get(path.as_str()) {
                    Some(Rule::Keep) => return Ok(()),
                    Some(rule) => match rule.apply(Some(digits), key)? {
                        Some(masked) => Value::String(masked),
                        None => Value::Null,
                    },
                    None if digits.bytes().filter(u8::is_ascii_digit).count() < NUMBER_DIGITS => {
                        return Ok(())
                    }
                    None => match self.others {
                        Others::Scrub => Value::String(scrub(&digits)),
                        Others::Null => Value::Null,
                    },
                };
            }
            Value::Bool(_) | Value::Null => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(paths: &[(&str, Rule)], others: Others) -> JsonRule {
        JsonRule {
            paths: paths
                .iter()
                .map(|(p, r)| (p.to_string(), r.clone()))
                .collect(),
            others,
        }
    }

    #[test]
    fn named_paths_get_their_rule_and_every_other_leaf_is_scrubbed() {
        let r = rule(
            &[("$.contact.email", Rule::Email), ("$.tier", Rule::Keep)],
            Others::Scrub,
        );
        let masked = r
            .apply(
                r#"{"contact": {"email": "dave@yahoo.com", "phone": "(212) 555-0143"},
                    "tier": "gold", "notes": ["SSN 224-30-8280", "ok"], "card": 4111111111111111,
                    "count": 12, "vip": true, "gone": null}"#,
                None,
            )
            .unwrap();
        let v: Value = serde_json::from_str(&masked).unwrap();
        assert_eq!(v["contact"]["email"], "d***@yahoo.com");
        assert_eq!(
            v["contact"]["phone"], "(###) ###-####",
            "a key no path names: scrubbed"
        );
        assert_eq!(v["tier"], "gold");
        assert_eq!(v["notes"][0], "SSN ###-##-####");
        assert_eq!(v["notes"][1], "ok");
        assert_eq!(v["card"], "################");
        assert_eq!(v["count"], 12);
        assert_eq!(
            (v["vip"].clone(), v["gone"].clone()),
            (Value::Bool(true), Value::Null)
        );
        assert_eq!(r.apply(&masked, None).unwrap(), masked, "idempotent");
    }

    #[test]
    fn others_null_and_arrays_by_star() {
        let r = rule(&[("$.phones[*]", Rule::LastFour)], Others::Null);
        let masked = r
            .apply(r#"{"phones": ["212-555-0143"], "name": "Dave"}"#, None)
            .unwrap();
        assert_eq!(masked, r#"{"name":null,"phones":["***-***-0143"]}"#);
        assert!(matches!(
            r.apply("not json", None),
            Err(RuleError::NotJson(_))
        ));
    }
}
