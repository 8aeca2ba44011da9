//! Policies: which rule masks which column of which entity, read from TOML.
//!
//! A policy is data a reviewer reads (`policies/bank.toml`), parsed strictly: an unknown rule, a
//! name that is not a plain SQL identifier, or a pseudonym without a kind is an error naming the
//! entity and the column. Deny by default happens in [`Policy::masker`]: asking to mask a column
//! the policy does not name is refused.

use crate::pseudonym::PseudonymKey;
use crate::row::Masker;
use crate::rule_spec::{is_rule_table, parse_rule, RuleSpec};
use crate::rules::Rule;
use crate::MaskError;
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
    #[error("policy {policy}: {name:?} is not a plain SQL identifier (letters, digits, _ or $, not starting with a digit; at most 63 bytes; a table may be schema.table)")]
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

/// The schema of a table named without one.
pub use maskbus_model::{is_entity_name, is_identifier, qualify, DEFAULT_SCHEMA};

/// The name of the policy's own section (`[maskbus.keys]`): `maskbus` is maskbus' own schema in
/// every database it writes to, so no table of a user's is ever synced from it.
pub const SETTINGS_SECTION: &str = "maskbus";

/// A parsed policy, with the pseudonym key if one was supplied. Entities are schema-qualified
/// (`public.customers`); lookups accept a name without a schema as one in [`DEFAULT_SCHEMA`].
#[derive(Clone, Debug)]
pub struct Policy {
    name: String,
    entities: BTreeMap<String, EntityPolicy>,
    /// Key columns named in `[maskbus.keys]`, for tables whose own keys do not serve.
    keys: BTreeMap<String, Vec<String>>,
    /// What of the schema may cross (`[maskbus.schema]`).
    schema: crate::schema::SchemaRules,
    key: Option<PseudonymKey>,
    /// What every masker checks its output against before a row may exist ([`crate::egress`]).
    guard: crate::egress::Guard,
}

/// A value that reads as an entity's column rules (strings or rule tables), not a schema's tables.
fn is_entity_body(table: &toml::Table) -> bool {
    table
        .values()
        .all(|v| v.is_str() || is_rule_table(v) || !v.is_table())
}

impl Policy {
    /// The bank policy compiled in from `policies/bank.toml`.
    pub fn bank() -> Result<Self, PolicyError> {
        Self::from_toml("policies/bank.toml", BANK_POLICY_TOML)
    }

    /// Parses a policy file. `name` only labels errors (use the file's path).
    ///
    /// `[orders]` is table `public.orders`; `[sales.orders]` (or `["sales.orders"]`) is table
    /// `orders` of schema `sales`. `[maskbus.keys]` names key columns for tables without a usable
    /// primary key or unique index: `"sales.orders" = ["region", "number"]`.
    pub fn from_toml(name: &str, text: &str) -> Result<Self, PolicyError> {
        let syntax = |reason: String| PolicyError::Syntax {
            policy: name.to_string(),
            reason,
        };
        let raw: toml::Table = toml::from_str(text)
            .map_err(|e| syntax(maskbus_model::locate_in_text(text, e.span(), e.message())))?;
        let mut bodies: Vec<(String, toml::Table)> = Vec::new();
        let mut keys = BTreeMap::new();
        let mut schema = crate::schema::SchemaRules::default();
        for (top, value) in raw {
            let toml::Value::Table(table) = value else {
                return Err(syntax(format!(
                    "{top} must be a table: [{top}] followed by column = \"rule\" lines"
                )));
            };
            if top == SETTINGS_SECTION {
                (keys, schema) = parse_settings(name, table)?;
            } else if top.contains('.') || is_entity_body(&table) {
                bodies.push((top, table));
            } else {
                // [schema.table]: a schema holding entities.
                for (entity, body) in table {
                    let toml::Value::Table(body) = body else {
                        return Err(syntax(format!(
                            "[{top}] mixes column rules with tables; write [{top}.{entity}] for a table of schema {top}"
                        )));
                    };
                    if !is_entity_body(&body) {
                        return Err(syntax(format!(
                            "[{top}.{entity}] holds tables; a policy names schema.table, no deeper"
                        )));
                    }
                    check_identifier(name, &top)?;
                    bodies.push((format!("{top}.{entity}"), body));
                }
            }
        }
        if bodies.is_empty() {
            return Err(PolicyError::Empty {
                policy: name.to_string(),
            });
        }
        let mut entities = BTreeMap::new();
        for (entity, columns) in bodies {
            check_entity_name(name, &entity)?;
            let entity = qualify(&entity);
            let mut rules = BTreeMap::new();
            for (column, spec) in columns {
                check_identifier(name, &column)?;
                let spec: RuleSpec = spec.try_into().map_err(|_| PolicyError::BadRule {
                    policy: name.to_string(),
                    entity: entity.clone(),
                    column: column.clone(),
                    reason: format!(
                        "a rule is a name or a table; the rules are {}",
                        crate::catalog::names()
                    ),
                })?;
                let rule = parse_rule(spec).map_err(|reason| PolicyError::BadRule {
                    policy: name.to_string(),
                    entity: entity.clone(),
                    column: column.clone(),
                    reason,
                })?;
                rules.insert(column, rule);
            }
            if entities
                .insert(entity.clone(), EntityPolicy { columns: rules })
                .is_some()
            {
                return Err(syntax(format!(
                    "{entity} is named twice (once with its schema, once without)"
                )));
            }
        }
        for entity in keys.keys() {
            if !entities.contains_key(entity) {
                return Err(syntax(format!(
                    "[maskbus.keys] names {entity}, which the policy has no rules for"
                )));
            }
        }
        Ok(Self {
            name: name.to_string(),
            entities,
            keys,
            schema,
            key: None,
            guard: crate::egress::Guard::default(),
        }
        .with_guard(crate::egress::Guard::default()))
    }

    /// The egress guard every masker of this policy runs ([`crate::egress`]): the pattern
    /// detectors always; the producer adds production's real values and the reviewed columns.
    pub fn with_guard(mut self, guard: crate::egress::Guard) -> Self {
        let kept = self
            .entities
            .iter()
            .flat_map(|(entity, rules)| {
                rules
                    .columns
                    .iter()
                    .filter(|(_, rule)| **rule == Rule::Keep)
                    .map(move |(column, _)| (entity.clone(), column.to_lowercase()))
            })
            .collect();
        self.guard = guard.keeping(kept);
        self
    }

    pub fn guard(&self) -> &crate::egress::Guard {
        &self.guard
    }

    /// Supplies the secret for pseudonym rules.
    pub fn with_key(mut self, key: PseudonymKey) -> Self {
        self.key = Some(key);
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pseudonym key, when one was supplied.
    pub fn key(&self) -> Option<&PseudonymKey> {
        self.key.as_ref()
    }

    /// What of the schema may cross the boundary (`[maskbus.schema]`).
    pub fn schema_rules(&self) -> &crate::schema::SchemaRules {
        &self.schema
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
        self.entities.get(&qualify(entity))
    }

    /// A fingerprint of how `entity` is masked: an unkeyed hash of its rules and its key
    /// columns. When it changes, rows synced before were masked another way, and the table is
    /// written again.
    ///
    /// The pseudonym key is not in it: the fingerprint crosses the bus, and any function of the
    /// key there would let whoever reads the bus test guesses of the key offline. A new key is
    /// therefore not seen by the consumer; after changing it, `maskbus run --once --repair`
    /// (or `maskbus verify --repair`) rewrites what was masked with the old one.
    pub fn rules_fingerprint(&self, entity: &str) -> Option<String> {
        let rules = self.entity(entity)?;
        let mut hasher = blake3::Hasher::new();
        hasher.update(format!("{:?}", rules.columns).as_bytes());
        hasher.update(&[0]);
        hasher.update(format!("{:?}", self.key_columns(entity)).as_bytes());
        Some(crate::schema::fingerprint_text(
            hasher.finalize().as_bytes(),
        ))
    }

    /// The key columns `[maskbus.keys]` names for `entity`, if any.
    pub fn key_columns(&self, entity: &str) -> Option<&[String]> {
        self.keys.get(&qualify(entity)).map(Vec::as_slice)
    }

    /// The schemas the policy's entities live in, each once.
    pub fn schemas(&self) -> Vec<String> {
        let mut schemas: Vec<String> = self
            .entities
            .keys()
            .filter_map(|e| e.split_once('.').map(|(s, _)| s.to_string()))
            .collect();
        schemas.dedup();
        schemas.sort();
        schemas.dedup();
        schemas
    }

    /// Entities (schema-qualified) in name order (the sync orders them by foreign keys).
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
                .get_key_value(&qualify(entity))
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
            &self.guard,
        ))
    }
}

fn check_entity_name(policy: &str, name: &str) -> Result<(), PolicyError> {
    if is_entity_name(name) {
        Ok(())
    } else {
        Err(PolicyError::BadName {
            policy: policy.to_string(),
            name: crate::shorten(name),
        })
    }
}

/// `[maskbus]`: `keys = { "schema.table" = ["col", ...] }` and `schema = { comments = "keep" }`.
fn parse_settings(
    policy: &str,
    table: toml::Table,
) -> Result<(BTreeMap<String, Vec<String>>, crate::schema::SchemaRules), PolicyError> {
    let syntax = |reason: String| PolicyError::Syntax {
        policy: policy.to_string(),
        reason,
    };
    let mut keys = BTreeMap::new();
    let mut schema = crate::schema::SchemaRules::default();
    for (setting, value) in table {
        if setting == "schema" {
            schema = crate::schema::SchemaRules::parse(value).map_err(syntax)?;
            continue;
        }
        if setting != "keys" {
            return Err(syntax(format!(
                "[maskbus] has no setting {}; it takes keys (table = [key columns]) and schema (what of the schema may cross)",
                crate::escape::one_line(&setting)
            )));
        }
        let toml::Value::Table(entries) = value else {
            return Err(syntax("[maskbus.keys] must be a table".into()));
        };
        for (entity, columns) in entries {
            check_entity_name(policy, &entity)?;
            let columns: Vec<String> = columns.try_into().map_err(|_| {
                syntax(format!(
                    "[maskbus.keys] {entity} takes a list of column names"
                ))
            })?;
            if columns.is_empty() {
                return Err(syntax(format!("[maskbus.keys] {entity} names no column")));
            }
            for column in &columns {
                check_identifier(policy, column)?;
            }
            keys.insert(qualify(&entity), columns);
        }
    }
    Ok((keys, schema))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_rule_parses_with_paths_and_others() {
        let policy = Policy::from_toml(
            "p",
            r#"[t]
            doc = { json = { "$.contact.email" = "email", "$.id" = "keep" }, others = "null" }"#,
        )
        .unwrap();
        let Some(Rule::Json(rule)) = policy.entity("t").unwrap().rule("doc") else {
            panic!("a json rule")
        };
        assert_eq!(rule.paths().len(), 2);
        assert_eq!(rule.others(), crate::json::Others::Null);
        for bad in [
            "[t]\ndoc = { json = { \"contact\" = \"email\" } }",
            "[t]\ndoc = { json = {}, others = \"keep\" }",
            "[t]\ndoc = { json = { \"$.a\" = \"hide\" } }",
        ] {
            assert!(Policy::from_toml("p", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_bank_policy_parses_and_names_every_bank_table() {
        let policy = Policy::bank().unwrap();
        let names: Vec<_> = policy.entities().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "public.accounts",
                "public.addresses",
                "public.cards",
                "public.customers",
                "public.transactions"
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
    fn tables_of_several_schemas_and_declared_keys() {
        let policy = Policy::from_toml(
            "p",
            r#"
            [orders]
            id = "keep"
            [sales.orders]
            id = "keep"
            note = { constant = "x" }
            ["hr.Staff"]
            Name = "redact"
            [maskbus.keys]
            "sales.orders" = ["id"]
            "#,
        )
        .unwrap();
        let names: Vec<_> = policy.entities().map(|(n, _)| n).collect();
        assert_eq!(names, ["hr.Staff", "public.orders", "sales.orders"]);
        assert_eq!(policy.schemas(), ["hr", "public", "sales"]);
        assert!(policy.entity("orders").is_some());
        assert_eq!(
            policy.entity("sales.orders").unwrap().rule("note"),
            Some(&Rule::Constant("x".into()))
        );
        assert_eq!(
            policy.key_columns("sales.orders"),
            Some(&["id".to_string()][..])
        );
        assert_eq!(policy.key_columns("orders"), None);
        for bad in [
            "[a.b.c]\nid = \"keep\"",
            "[maskbus.keys]\n\"t\" = [\"id\"]\n[u]\nid = \"keep\"",
            "[maskbus]\nwhat = 1\n[u]\nid = \"keep\"",
            "[t]\nid = \"keep\"\n[public.t]\nid = \"keep\"",
        ] {
            assert!(Policy::from_toml("p", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_column_without_a_rule_is_refused_never_passed() {
        let policy = Policy::from_toml("p", "[customers]\nid = \"keep\"").unwrap();
        let err = policy
            .masker("customers", &["id".into(), "ssn".into()])
            .unwrap_err();
        assert_eq!(err.to_string(), "public.customers.ssn has no masking rule: deny by default refuses it; add a rule (or \"keep\") to the policy");
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
