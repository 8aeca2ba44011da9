//! Masking policies on the production side: loading one (with its pseudonym key, refused when
//! weak), checking it against the live source schema (`maskbus policy check`), and proposing one
//! (`maskbus policy init`).
//!
//! - [`schema_check`]: will the sync work on this schema (keys, foreign keys, cycles, sampled
//!   `keep` columns); pure over the catalog's model.
//! - [`propose`]: the rule proposed for each column, and the file written by `toml_edit` (pure).
//! - [`sample`]: rows spread over each table, masked as the producer masks them (its egress
//!   guard too): what `maskbus policy check` reads.
//! - [`rule_fit`]: a rule whose output still holds the input on that sample (`card` on a card
//!   expiry, `digits` on an id of letters), refused with a rule that fits.
//! - [`constraints`]: the target's constraints (types, lengths, NOT NULL, unique keys, CHECKs)
//!   evaluated on the rules' output over that sample, and what the served schema leaves out.
//! - [`real_values`]: production's real values as keyed hashes, for the exact matcher of the
//!   producer's egress guard and of the wire audit.
//! - [`update`]: a reviewed policy brought up to date with the schema (`policy init --update`),
//!   its reviewed lines untouched (pure).
//!
//! The column-by-column decisions live in `maskbus_mask::fit`; this crate reads the file, the
//! catalog and samples of values (run through the audit's detectors here; only counts come out).

pub mod constraints;
pub mod propose;
pub mod real_values;
pub mod rule_fit;
pub mod sample;
pub mod schema_check;
pub mod update;

use maskbus_mask::fit::{Line, Verdict};
use maskbus_mask::{Policy, PolicyError, PseudonymKey};
use maskbus_pg::{Database, PgError};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum PolicyLoadError {
    #[error("cannot read policy file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error(transparent)]
    Invalid(#[from] PolicyError),
    #[error(transparent)]
    WeakKey(#[from] maskbus_mask::WeakKey),
}

/// The policy at `path`, with the pseudonym key if given (refused when weak). There is no
/// default: a policy nobody named is a policy nobody reviewed.
pub fn load(path: &Path, key: Option<&str>) -> Result<Policy, PolicyLoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| PolicyLoadError::Read {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let policy = Policy::from_toml(&path.display().to_string(), &text)?;
    Ok(match key {
        Some(key) if !key.is_empty() => policy.with_key(PseudonymKey::from_config(key.as_bytes())?),
        _ => policy,
    })
}

/// Judges `policy` against the tables of its schemas in the source database: every column
/// ([`maskbus_mask::fit`]) and every table's key, foreign keys and cycles
/// ([`crate::schema_check`]); with a `sample`, rows of every table too, spread over it, masked
/// as the producer masks them, its egress guard included ([`crate::sample`]).
pub async fn check_with(
    source: &Database,
    policy: &Policy,
    sample: sample::Sample,
) -> Result<(Vec<Line>, sample::SampleRead), PgError> {
    let mut lines = check(source, policy).await?;
    let (more, read) = sample::judge(source, policy, sample).await?;
    lines.extend(more);
    Ok((lines, read))
}

/// The catalog half of [`check_with`]: what a producer checks at every start (its egress guard
/// judges every row it sends, so it reads no sample).
pub async fn check(source: &Database, policy: &Policy) -> Result<Vec<Line>, PgError> {
    let client = source.connect().await?;
    let schemas = policy.schemas();
    let tables = maskbus_pg::catalog::tables(source, &client, &schemas).await?;
    let fks = maskbus_pg::catalog::foreign_keys(source, &client, &schemas).await?;
    let mut lines = crate::schema_check::check(policy, &tables, &fks);
    // A key named in the policy has no constraint behind it: check the data keeps it unique.
    for info in &tables {
        let entity = info.table.to_string();
        let Some(columns) = policy.key_columns(&entity) else {
            continue;
        };
        let Ok(key) = info.key(Some(columns)) else {
            continue; // schema_check already said why
        };
        if key.is_constraint() {
            continue;
        }
        let duplicated = client
            .query_opt(
                &maskbus_pg::statements::duplicate_key(&info.table, &key),
                &[],
            )
            .await
            .map_err(|e| {
                source.query_error(format!("checking that the key of {entity} is unique"), &e)
            })?
            .is_some();
        if duplicated {
            lines.push(Line {
                entity: entity.clone(),
                column: "(key)".into(),
                column_type: "-".into(),
                rule: "-".into(),
                verdict: Verdict::Error(format!(
                    "rows of {entity} share a value of the key ({}) named in [maskbus.keys]; the sync pages and writes by it, so it must be unique: name more columns, or add a unique index",
                    columns.join(", ")
                )),
            });
        }
    }
    Ok(lines)
}

/// Tables whose key holds a value longer than a key cursor carries (`maskbus policy check`
/// only: it reads every key of every table, which a producer does not do at each start; a
/// producer meeting such a key refuses that table by name, `key_too_long`).
pub async fn check_key_lengths(source: &Database, policy: &Policy) -> Result<Vec<Line>, PgError> {
    let client = source.connect().await?;
    let tables = maskbus_pg::catalog::tables(source, &client, &policy.schemas()).await?;
    let mut lines = Vec::new();
    for info in &tables {
        let entity = info.table.to_string();
        if policy.entity(&entity).is_none() {
            continue;
        }
        let Ok(key) = info.key(policy.key_columns(&entity)) else {
            continue;
        };
        let limit = maskbus_protocol::MAX_KEY_VALUE_BYTES as i32;
        let overlong = client
            .query_opt(
                &maskbus_pg::statements::overlong_key(&info.table, &key),
                &[&limit],
            )
            .await
            .map_err(|e| source.query_error(format!("measuring the key of {entity}"), &e))?
            .is_some();
        if overlong {
            lines.push(Line {
                entity: entity.clone(),
                column: "(key)".into(),
                column_type: "-".into(),
                rule: "-".into(),
                verdict: Verdict::Error(format!(
                    "a key value of {entity} ({}) is longer than the {limit} bytes a key cursor carries; the sync cannot page by it: key the table by shorter columns ([maskbus.keys])",
                    key.names().join(", ")
                )),
            });
        }
    }
    Ok(lines)
}

/// Which text columns of `info` hold, row by row, one of the same row's names (first, last or
/// full name columns by their names), as evidence counts: read on a sample of rows, here on the
/// production side.
async fn spelled_names(
    source: &Database,
    client: &maskbus_pg::tokio_postgres::Client,
    info: &maskbus_pg::TableInfo,
) -> Result<std::collections::HashMap<String, String>, PgError> {
    use crate::propose;
    let names: Vec<&str> = info
        .columns
        .iter()
        .filter(|c| propose::is_person_name_column(&c.name))
        .map(|c| c.name.as_str())
        .collect();
    let others: Vec<&str> = info
        .columns
        .iter()
        .filter(|c| {
            !propose::is_person_name_column(&c.name)
                && crate::schema_check::is_sampled_type(&c.data_type)
                && !c.generated
        })
        .map(|c| c.name.as_str())
        .collect();
    let mut found = std::collections::HashMap::new();
    if names.is_empty() || others.is_empty() {
        return Ok(found);
    }
    let columns: Vec<String> = names.iter().chain(&others).map(|c| c.to_string()).collect();
    let rows = client
        .query(
            &maskbus_pg::statements::sample_rows(&info.table, &columns),
            &[&200i64],
        )
        .await
        .map_err(|e| source.query_error(format!("sampling rows of {}", info.table), &e))?;
    for (i, column) in others.iter().enumerate() {
        let pairs: Vec<(Vec<String>, String)> = rows
            .iter()
            .filter_map(|r| {
                let value: Option<String> = r.try_get(names.len() + i).ok().flatten();
                let row_names: Vec<String> = (0..names.len())
                    .filter_map(|k| r.try_get::<_, Option<String>>(k).ok().flatten())
                    .collect();
                value.map(|v| (row_names, v))
            })
            .collect();
        if let Some(evidence) = propose::spells_the_person(&pairs) {
            found.insert(column.to_string(), evidence);
        }
    }
    Ok(found)
}

/// `maskbus policy init`: a complete policy for every table of `schemas` in the source, each
/// column's rule proposed from its name, type, constraints and a sample of its values run
/// through the audit's detectors here, on the production side (only counts reach the output).
/// The proposal is checked like any policy; a column it still gets wrong falls back to the safe
/// rule with the reason as a comment.
/// A foreign key column whose parent column got a pseudonym (a key made of a person's number)
/// gets the same rule, or the link would break in the target.
fn same_rule_at_both_ends(
    proposed: &mut [(maskbus_pg::TableRef, Vec<crate::propose::Proposal>)],
    fks: &[maskbus_pg::ForeignKey],
) {
    // A kept key whose foreign keys hold a person's number (`notes.account` pointing at
    // `accounts.number`) is one: it gets a bijective fake, and its foreign keys the same below.
    for fk in fks {
        for (column, parent_column) in fk.columns.iter().zip(&fk.parent_columns) {
            let number = proposed
                .iter()
                .find(|(t, _)| *t == fk.table)
                .and_then(|(_, ps)| ps.iter().find(|p| p.column == *column))
                .is_some_and(|p| p.number);
            let parent = proposed
                .iter_mut()
                .find(|(t, _)| *t == fk.parent)
                .and_then(|(_, ps)| ps.iter_mut().find(|p| p.column == *parent_column));
            if let Some(parent) = parent.filter(|p| number && p.rule == "\"keep\"") {
                parent.rule = "{ pseudonym = \"digits\" }".to_string();
                parent.why = format!(
                    "key whose foreign key {} holds a person's number: a bijective fake of its digits, so the sync still pages and links by it",
                    fk.name
                );
            }
        }
    }
    // Parents first, in rounds, so a chain of links (a child that is another's parent) follows.
    for _ in 0..proposed.len().max(1) {
        let mut changed = false;
        for fk in fks {
            for (column, parent_column) in fk.columns.iter().zip(&fk.parent_columns) {
                let parent_rule = proposed
                    .iter()
                    .find(|(t, _)| *t == fk.parent)
                    .and_then(|(_, ps)| ps.iter().find(|p| p.column == *parent_column))
                    .filter(|p| p.rule.contains("pseudonym"))
                    .map(|p| p.rule.clone());
                let Some(rule) = parent_rule else { continue };
                let child = proposed
                    .iter_mut()
                    .find(|(t, _)| *t == fk.table)
                    .and_then(|(_, ps)| ps.iter_mut().find(|p| p.column == *column));
                if let Some(child) = child {
                    if child.rule != rule {
                        child.rule = rule;
                        child.why = format!(
                            "foreign key {} to {}.{parent_column}: the same rule as the key it points at",
                            fk.name, fk.parent
                        );
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// The rounds in which `init` mends its own proposal, as `policy check` would judge it.
#[derive(Clone, Copy)]
enum Fits {
    /// Rules that keep what they hide on the sample (`crate::rule_fit`).
    Values,
    /// Rules whose output the target's constraints refuse (`crate::constraints`).
    Constraints,
}

pub async fn init(source: &Database, schemas: &[String]) -> Result<String, PgError> {
    use crate::propose::{self, ColumnFacts, Proposal};
    use std::collections::HashSet;
    let client = source.connect().await?;
    let tables = maskbus_pg::catalog::tables(source, &client, schemas).await?;
    let fks = maskbus_pg::catalog::foreign_keys(source, &client, schemas).await?;
    let mut proposed: Vec<(maskbus_pg::TableRef, Vec<Proposal>)> = Vec::new();
    let mut keys: Vec<(maskbus_pg::TableRef, Vec<String>)> = Vec::new();
    let mut skipped = Vec::new();
    // Tables with a column kept though its sample looks like PII (no rule fits its type).
    let mut kept_pii: std::collections::BTreeSet<String> = Default::default();
    // Tables keyed by a secret (a session key): no bijective rule hides it (`propose`).
    let mut secret_keyed: std::collections::BTreeSet<String> = Default::default();
    // Tables without a key the sync can page by: no primary key, no unique NOT NULL columns.
    let mut keyless: std::collections::BTreeSet<String> = Default::default();
    for info in &tables {
        if !propose::writable(info) {
            skipped.push((
                info.table.clone(),
                "whose name (or a column's) is not a plain identifier a policy can hold"
                    .to_string(),
            ));
            continue;
        }
        let key: HashSet<String> = match info.key(None) {
            Ok(k) if !k.is_keyless() => k.names().into_iter().collect(),
            // No key of its own: its NOT NULL columns together, if the data keeps them unique
            // (a key makes each pass move only what changed, and the stream can follow it);
            // else it syncs whole, as a multiset.
            _ => {
                let columns: Vec<String> = info
                    .columns
                    .iter()
                    .filter(|c| !c.nullable && !c.generated && c.orderable)
                    .map(|c| c.name.clone())
                    .collect();
                match info.key(Some(&columns)) {
                    Ok(candidate) if !columns.is_empty() => {
                        let duplicated = client
                            .query_opt(
                                &maskbus_pg::statements::duplicate_key(&info.table, &candidate),
                                &[],
                            )
                            .await
                            .map_err(|e| {
                                source.query_error(format!("probing a key for {}", info.table), &e)
                            })?
                            .is_some();
                        if duplicated {
                            keyless.insert(info.table.to_string());
                            HashSet::new()
                        } else {
                            keys.push((info.table.clone(), columns.clone()));
                            columns.into_iter().collect()
                        }
                    }
                    _ => {
                        keyless.insert(info.table.to_string());
                        HashSet::new()
                    }
                }
            }
        };
        let linked: HashSet<&str> = fks
            .iter()
            .filter(|fk| fk.table == info.table)
            .flat_map(|fk| fk.columns.iter().map(String::as_str))
            .collect();
        let people = propose::is_people_table(&info.table.name)
            || info
                .columns
                .iter()
                .any(|c| propose::is_person_name_column(&c.name));
        let spelled = spelled_names(source, &client, info).await?;
        let mut proposals = Vec::new();
        for column in &info.columns {
            let mut facts = ColumnFacts {
                key: key.contains(&column.name),
                foreign_key: linked.contains(column.name.as_str()),
                people,
                spells_the_person: spelled.get(&column.name).cloned(),
                table: info.table.name.clone(),
                ..ColumnFacts::default()
            };
            // A key is sampled too, whatever its type (an SSN or an account number may be an
            // integer): made of a person's number, it gets a bijective fake.
            // So is a foreign key: holding a person's number, the key it points at is one.
            let integer_key = (facts.key || facts.foreign_key)
                && matches!(
                    column.data_type.as_str(),
                    "smallint" | "integer" | "bigint" | "numeric"
                );
            if integer_key || crate::schema_check::is_sampled_type(&column.data_type) {
                let values: Vec<String> = client
                    .query(
                        &maskbus_pg::statements::sample(&info.table, &column.name),
                        &[&200i64],
                    )
                    .await
                    .map_err(|e| {
                        source.query_error(format!("sampling {}.{}", info.table, column.name), &e)
                    })?
                    .iter()
                    .filter_map(|r| r.try_get(0).ok())
                    .collect();
                facts.evidence = crate::schema_check::sample_evidence(&column.name, &values);
                facts.secret_shape = propose::secret_shaped(&values);
                facts.alnum_shape = propose::alnum_shaped(&values);
                facts.letters_and_digits = propose::letters_and_digits(&values);
                facts.some_secrets = propose::some_secret_shaped(&values);
                if matches!(column.data_type.as_str(), "json" | "jsonb") {
                    facts.json_rule = propose::json_leaf_rule(people, &info.table.name, &values);
                }
            }
            let proposal = propose::propose(column, &facts);
            if proposal.secret_key {
                secret_keyed.insert(info.table.to_string());
            }
            // `keep` on values that look like PII is what policy check refuses: no rule fitted.
            if proposal.rule == "\"keep\""
                && facts.evidence.is_some()
                && !facts.key
                && !facts.foreign_key
            {
                kept_pii.insert(info.table.to_string());
            }
            proposals.push(proposal);
        }
        proposed.push((info.table.clone(), proposals));
    }
    same_rule_at_both_ends(&mut proposed, &fks);
    // Check the proposal as policy check would; a column it still gets wrong takes the safe rule.
    let mut text = propose::render(source.dbname(), &proposed, &keys, &skipped);
    if let Ok(policy) = Policy::from_toml("policy init", &text) {
        let lines = crate::schema_check::check(&policy, &tables, &fks);
        let mut changed = false;
        for line in lines {
            let Verdict::Error(reason) = &line.verdict else {
                continue;
            };
            let Some((_, proposals)) = proposed
                .iter_mut()
                .find(|(t, _)| t.to_string() == maskbus_mask::qualify(&line.entity))
            else {
                continue;
            };
            let Some(p) = proposals.iter_mut().find(|p| p.column == line.column) else {
                continue;
            };
            let column = tables
                .iter()
                .find(|t| t.table.to_string() == maskbus_mask::qualify(&line.entity))
                .and_then(|t| t.column(&line.column));
            if let Some(column) = column {
                p.rule = if column.nullable {
                    "\"null\""
                } else {
                    "\"keep\""
                }
                .into();
                p.why = format!(
                    "policy check: {}; review by hand",
                    maskbus_pg::excerpt(reason, 120)
                );
                changed = true;
            }
        }
        // A rule that keeps what it claims to hide on the sample (the card rule on a card's
        // expiry, by its name), then one whose output the target's own constraints refuse (a
        // CHECK on a format, a length), gives way to the rule that fits, as policy check names
        // it.
        for round in [Fits::Values, Fits::Constraints] {
            if changed {
                text = propose::render(source.dbname(), &proposed, &keys, &skipped);
            }
            let Ok(policy) = Policy::from_toml("policy init", &text) else {
                break;
            };
            let fits = match round {
                Fits::Values => crate::sample::rule_fits(source, &policy).await?,
                Fits::Constraints => crate::sample::constraint_fits(source, &policy).await?,
            };
            for (entity, column, rule) in fits {
                let fitted = proposed
                    .iter_mut()
                    .find(|(t, _)| t.to_string() == maskbus_mask::qualify(&entity))
                    .and_then(|(_, ps)| ps.iter_mut().find(|p| p.column == column));
                if let Some(p) = fitted {
                    p.why = format!(
                        "{}; {} {}, this rule fits",
                        p.why,
                        p.rule.trim_matches('"'),
                        match round {
                            Fits::Values => "would keep what it hides on the sample",
                            Fits::Constraints => "would break a constraint of the table",
                        }
                    );
                    p.rule = rule;
                    changed = true;
                }
            }
        }
        if changed {
            text = propose::render(source.dbname(), &proposed, &keys, &skipped);
        }
        // What no rule can mend (a NOT NULL enum whose labels look like PII, say) leaves its
        // table out, said in a comment: the output always passes policy check, and the table is
        // not synced until a reviewer decides.
        if let Ok(policy) = Policy::from_toml("policy init", &text) {
            let mut stuck: std::collections::BTreeSet<String> =
                crate::schema_check::check(&policy, &tables, &fks)
                    .into_iter()
                    .filter(|l| matches!(l.verdict, Verdict::Error(_)))
                    .map(|l| maskbus_mask::qualify(&l.entity))
                    .collect();
            stuck.extend(kept_pii.iter().cloned());
            stuck.extend(secret_keyed.iter().cloned());
            if !stuck.is_empty() {
                proposed.retain(|(t, _)| {
                    let name = t.to_string();
                    let out = stuck.contains(&name);
                    if out {
                        let why = if secret_keyed.contains(&name) {
                            "its key is a secret (a session or API key) no bijective rule hides: decide by hand"
                        } else if keyless.contains(&name) {
                            "it has no key the sync can page by (no primary key, no unique NOT NULL columns; see policy check): add one, or name one in [maskbus.keys]"
                        } else {
                            "a column of it no rule fits (see policy check): decide by hand"
                        };
                        skipped.push((t.clone(), why.to_string()));
                    }
                    !out
                });
                text = propose::render(source.dbname(), &proposed, &keys, &skipped);
            }
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weak_pseudonym_key_is_refused_and_never_shown() {
        let dir = std::env::temp_dir().join(format!("maskbus-policy-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.toml");
        std::fs::write(&path, "[t]\nid = \"keep\"\n").unwrap();
        for weak in ["k", "hunter2", "demo-key-not-a-secret", &"ab".repeat(20)] {
            let refused = load(&path, Some(weak)).unwrap_err().to_string();
            assert!(refused.contains("maskbus key new"), "{refused}");
            assert!(
                weak.len() < 4 || !refused.contains(weak),
                "the key shows in: {refused}"
            );
        }
        // Long enough, but typed: refused as guessable (issue 52).
        for typed in [
            "0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef01",
            "integration-test-key-0123456789-abcdef",
        ] {
            let refused = load(&path, Some(typed)).unwrap_err().to_string();
            assert!(refused.contains("guessable"), "{refused}");
            assert!(refused.contains("maskbus key new"), "{refused}");
            assert!(!refused.contains(typed), "the key shows in: {refused}");
        }
        // As `maskbus key new` prints one.
        assert!(load(
            &path,
            Some("5a674aa616e1b0bd708f9ce6a9dbd8e9f0472d677828ebf49795a9015920a358")
        )
        .is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
