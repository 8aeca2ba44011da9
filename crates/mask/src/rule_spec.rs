//! One rule as a policy file writes it: a name (`"ssn"`) or a table (`{ pseudonym = "email" }`,
//! `{ json = { "$.path" = rule } }`), parsed strictly into a [`Rule`], with errors that list
//! the rules there are.

use crate::pseudonym::PseudonymKind;
use crate::rules::Rule;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum RuleSpec {
    Name(String),
    Table(BTreeMap<String, toml::Value>),
}

/// A rule written as a table: exactly one of these keys, with a string.
const RULE_TABLE_KEYS: [&str; 4] = ["constant", "pseudonym", "json", "others"];

pub(crate) fn is_rule_table(value: &toml::Value) -> bool {
    match value {
        toml::Value::Table(t) => {
            !t.is_empty() && t.keys().all(|k| RULE_TABLE_KEYS.contains(&k.as_str()))
        }
        _ => false,
    }
}

pub(crate) fn parse_rule(spec: RuleSpec) -> Result<Rule, String> {
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
            "scrub" => Rule::Scrub,
            other => {
                return Err(format!(
                    "unknown rule {other:?}; the rules are {}",
                    crate::catalog::names()
                ))
            }
        }),
        RuleSpec::Table(table) if table.contains_key("json") => parse_json_rule(table),
        RuleSpec::Table(table) => {
            let mut entries = table.into_iter();
            let (Some((key, value)), None) = (entries.next(), entries.next()) else {
                return Err(format!(
                    "a rule table takes exactly one key; the rules are {}",
                    crate::catalog::names()
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
                            PseudonymKind::all_names()
                        )
                    }),
                other => Err(format!(
                    "unknown rule {other:?}; the rules are {}",
                    crate::catalog::names()
                )),
            }
        }
    }
}

/// `{ json = { "$.path" = rule, ... }, others = "scrub" | "null" }`.
fn parse_json_rule(table: BTreeMap<String, toml::Value>) -> Result<Rule, String> {
    use crate::json::{JsonPath, JsonRule, Others};
    let mut paths: Vec<(JsonPath, Rule)> = Vec::new();
    let mut others = Others::Scrub;
    for (key, value) in table {
        match key.as_str() {
            "json" => {
                let toml::Value::Table(entries) = value else {
                    return Err("json takes a table of \"$.path\" = rule".into());
                };
                for (text, spec) in entries {
                    let path = JsonPath::parse(&text)?;
                    if paths.iter().any(|(p, _)| *p == path) {
                        return Err(format!(
                            "JSON path {:?} is written twice (as two spellings of one path)",
                            crate::shorten(&text)
                        ));
                    }
                    let spec: RuleSpec = spec
                        .try_into()
                        .map_err(|_| format!("the rule for {path} is a name or a table"))?;
                    let rule = parse_rule(spec)?;
                    if matches!(rule, Rule::Json(_)) {
                        return Err("a json rule cannot hold another".into());
                    }
                    paths.push((path, rule));
                }
            }
            "others" => {
                others = match value.as_str() {
                    Some("scrub") => Others::Scrub,
                    Some("null") => Others::Null,
                    _ => return Err("others takes \"scrub\" or \"null\"".into()),
                }
            }
            other => {
                return Err(format!(
                    "a json rule takes json and others, not {:?}",
                    crate::shorten(other)
                ))
            }
        }
    }
    Ok(Rule::Json(JsonRule::new(paths, others)))
}
