//! Production's real values, loaded as keyed hashes for the exact matcher: what the producer's
//! egress guard and `maskbus wire-audit --source` look for, whatever shape a leak takes.
//!
//! Each table is read once, its columns to load side by side, streamed: client memory is the
//! matcher, never a table. The matcher holds 64-bit keyed hashes (BLAKE3, a key drawn at random
//! for each load and never stored), never a value; at most `cap` of them, so a 100 GB source
//! costs a bounded, stated amount (docs/scaling.md). Values a rule leaves unchanged, that a
//! pseudonym of the policy could write, that are the name of a table or column, or too short to
//! mean anything are not loaded: a match on them would be no leak ([`real_value`]).

use maskbus_audit::exact::{matchable, Matchable, Names};
use maskbus_audit::ExactMatcher;
use maskbus_mask::{Policy, Rule};
use maskbus_pg::{Database, PgError, TableRef};
use std::collections::HashSet;

/// What a load read and held, in counts (never a value).
#[derive(Clone, Debug, Default)]
pub struct LoadStats {
    /// Columns read.
    pub columns: usize,
    /// Values held (as hashes; a value met twice is held once).
    pub loaded: usize,
    /// Values their own rule leaves unchanged (a birth date on 1 January): not secret by policy.
    pub unchanged_by_rule: usize,
    /// Values a pseudonym rule could also produce: a fake and a leak look the same.
    pub possible_pseudonyms: usize,
    /// Too short or too common to match meaningfully (under 4 characters, or 6 digits, or a
    /// date).
    pub too_short: usize,
    /// Values that are the name of a column or a table of the policy, or words of one
    /// (`password` in column `password`, `Name` beside `first_name`): every page names its
    /// columns, so such a value is on the bus by design, and no secret.
    pub names_of_columns: usize,
    /// Columns an auditor reviewed as holding no PII: their values are not looked for.
    pub reviewed_left_out: usize,
    /// Tables not read, or read in part, because the cap was reached: their values past it are
    /// not matched (the load stops there, so the cap bounds its time as well as its memory).
    pub over_cap: usize,
    /// The policy writes bijective pseudonyms (`ssn`, `digits`) whose fakes are told from real
    /// values by the pseudonym key: `Some(true)` when the key was there to do it.
    pub fakes_verified: Option<bool>,
    /// Columns the policy keeps that the caller's judgement holds personal: loaded too.
    pub kept_but_judged_personal: Vec<String>,
}

/// Which columns a load reads.
pub enum Columns<'a> {
    /// Every column the policy masks (any rule but `keep`): the producer's guard.
    Masked,
    /// Those, and these kept ones too (the wire audit's own judgement of kept columns).
    MaskedAnd(&'a HashSet<(String, String)>),
}

impl Columns<'_> {
    fn reads(&self, entity: &str, column: &str, rule: &Rule) -> bool {
        match self {
            Columns::Masked => *rule != Rule::Keep,
            Columns::MaskedAnd(also) => {
                *rule != Rule::Keep || also.contains(&(entity.to_string(), column.to_string()))
            }
        }
    }
}

/// What the exact match makes of one real value of a column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RealValue {
    /// Looked for, in this normalized form.
    Load(String),
    /// Its own rule leaves it unchanged: not secret by policy. A json rule that keeps every
    /// leaf leaves its document unchanged, whatever the whitespace or the order of its keys.
    UnchangedByRule,
    /// The name of a column or a table (its own column's above all), or a run of the words of
    /// one, in any case or spelling: every message carries it ([`maskbus_audit::exact::Names`]).
    AColumnsName,
    /// A pseudonym rule of the policy could also produce it: a fake and a leak look the same.
    PossiblePseudonym,
    /// Too short to match meaningfully.
    TooShort,
}

/// What the exact match makes of `value`, a real value of `column` whose rule is `rule` (`keep`
/// for a kept column the caller's judgement holds personal), under a policy writing these
/// pseudonyms and naming these tables and columns.
pub fn real_value(
    column: &str,
    rule: &Rule,
    value: &str,
    pseudonyms: &[maskbus_mask::PseudonymKind],
    names: &Names,
) -> RealValue {
    if names.holds(value) || maskbus_audit::exact::is_its_column_name(column, value) {
        return RealValue::AColumnsName;
    }
    if *rule != Rule::Keep {
        let masked = rule.apply(Some(value.to_string()), None).ok().flatten();
        let unchanged = match (rule, masked.as_deref()) {
            (_, Some(masked)) if masked == value => true,
            // A document as the rule writes it loses its whitespace: compared as JSON.
            (Rule::Json(_), Some(masked)) => {
                let read = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok();
                read(masked).is_some_and(|m| Some(m) == read(value))
            }
            _ => false,
        };
        if unchanged {
            return RealValue::UnchangedByRule;
        }
    }
    if pseudonyms.iter().any(|kind| kind.could_produce(value)) {
        return RealValue::PossiblePseudonym;
    }
    let normalized = maskbus_audit::normalize::normalize(value).into_owned();
    match matchable(&normalized) {
        Matchable::TooShort => RealValue::TooShort,
        // A date or a time is one of a few tens of thousands: a real birth date equals every
        // hire date of that day. The detectors judge dates by their field's name instead.
        Matchable::Digits(_) if is_a_date(&normalized) => RealValue::TooShort,
        _ => RealValue::Load(normalized),
    }
}

/// Whether every run of digits of `text` is a date, a time or a timestamp.
fn is_a_date(text: &str) -> bool {
    let runs = maskbus_audit::detect::digit_runs(text);
    !runs.is_empty() && runs.iter().all(maskbus_audit::detect::is_benign)
}

/// Loads the real values of `columns` of `policy`'s tables in `source` into a matcher keyed by
/// `key`, holding at most `cap` values; never a `reviewed` column's. Each value is judged by
/// [`real_value`]. Progress goes to the log, a line per table. With the policy's key, fakes of
/// its bijective pseudonyms are told from real values ([`ExactMatcher::with_reveal`]).
pub async fn load(
    source: &Database,
    policy: &Policy,
    columns: Columns<'_>,
    reviewed: &HashSet<(String, String)>,
    cap: usize,
    key: [u8; 32],
) -> Result<(ExactMatcher, LoadStats), PgError> {
    use futures_util::StreamExt;
    let client = source.connect().await?;
    let mut stats = LoadStats::default();
    let mut matcher = ExactMatcher::new(key);
    // Any pseudonym the policy writes, in any column, could equal a real value of another column
    // (a fake first name that is also a real surname): such values cannot be told apart.
    let pseudonyms: Vec<_> = policy
        .entities()
        .flat_map(|(_, rules)| {
            rules.columns().filter_map(|(_, rule)| match rule {
                Rule::Pseudonym(kind) => Some(*kind),
                _ => None,
            })
        })
        .collect();
    // The names every page and schema reply carries: a value that is one is no secret.
    let names = Names::new(policy.entities().flat_map(|(entity, rules)| {
        std::iter::once(entity).chain(rules.columns().map(|(column, _)| column))
    }));
    for (entity, rules) in policy.entities() {
        if matcher.len() >= cap {
            stats.over_cap += 1;
            continue;
        }
        let mut read: Vec<(&str, &Rule)> = Vec::new();
        for (column, rule) in rules.columns() {
            if !columns.reads(entity, column, rule) {
                continue;
            }
            if reviewed.contains(&(entity.to_string(), column.to_lowercase())) {
                stats.reviewed_left_out += 1;
                continue;
            }
            if *rule == Rule::Keep {
                stats
                    .kept_but_judged_personal
                    .push(format!("{entity}.{column}"));
            }
            read.push((column, rule));
        }
        if read.is_empty() {
            continue;
        }
        stats.columns += read.len();
        let list: Vec<String> = read.iter().map(|(c, _)| c.to_string()).collect();
        let sql = maskbus_pg::statements::column_texts(&TableRef::parse(entity), &list);
        let what = || format!("reading the masked columns of {entity} for the exact match");
        let rows = client
            .query_raw(&sql, std::iter::empty::<&str>())
            .await
            .map_err(|e| source.query_error(what(), &e))?;
        futures_util::pin_mut!(rows);
        let before = matcher.len();
        while let Some(row) = rows.next().await {
            if matcher.len() >= cap {
                stats.over_cap += 1;
                break;
            }
            let row = row.map_err(|e| source.query_error(what(), &e))?;
            for (at, (column, rule)) in read.iter().enumerate() {
                let Some(value) = row.get::<_, Option<String>>(at) else {
                    continue;
                };
                match real_value(column, rule, &value, &pseudonyms, &names) {
                    RealValue::Load(normalized) => {
                        matcher.add(&normalized);
                    }
                    RealValue::UnchangedByRule => stats.unchanged_by_rule += 1,
                    RealValue::AColumnsName => stats.names_of_columns += 1,
                    RealValue::PossiblePseudonym => stats.possible_pseudonyms += 1,
                    RealValue::TooShort => stats.too_short += 1,
                }
            }
        }
        tracing::info!(%entity, columns = read.len(), values = matcher.len() - before, "loaded real values for the exact match (keyed hashes)");
    }
    stats.loaded = matcher.len();
    // Fakes of bijective pseudonyms look like real SSNs and card numbers: the key tells them
    // from real ones, by revealing what they were made from.
    let mut bijective: Vec<maskbus_mask::PseudonymKind> = pseudonyms
        .iter()
        .copied()
        .filter(|k| k.class() == maskbus_mask::RuleClass::Bijective)
        .collect();
    bijective.sort_by_key(|k| k.name());
    bijective.dedup();
    if !bijective.is_empty() {
        stats.fakes_verified = Some(policy.key().is_some());
        if let Some(key) = policy.key().cloned() {
            matcher = matcher.with_reveal(Box::new(move |digits: &str| {
                bijective
                    .iter()
                    .filter_map(|kind| kind.reveal(&key, digits))
                    .collect()
            }));
        }
    }
    Ok((matcher, stats))
}

/// A key for one load's hashes: 32 bytes from the system's random source, never stored.
pub fn random_key() -> [u8; 32] {
    use std::io::Read;
    let mut key = [0u8; 32];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .is_err()
    {
        // No /dev/urandom: mix what the process has; the key only has to differ between runs.
        use std::hash::{BuildHasher, Hasher};
        for chunk in key.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or_default(),
            );
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(column: &str, rule: &Rule, value: &str) -> RealValue {
        let names = Names::new(["public.people", "date_of_birth", "password"]);
        real_value(column, rule, value, &[], &names)
    }

    #[test]
    fn dates_names_and_values_a_rule_leaves_are_not_looked_for() {
        // A birth date equals every hire date of that day: judged by the detectors instead.
        assert_eq!(
            judged("date_of_birth", &Rule::YearOnly, "1985-03-14"),
            RealValue::TooShort
        );
        assert_eq!(
            judged("password", &Rule::Redact, "Password"),
            RealValue::AColumnsName
        );
        assert_eq!(
            judged("born", &Rule::YearOnly, "1985-01-01"),
            RealValue::UnchangedByRule
        );
        assert_eq!(
            judged("ssn", &Rule::Ssn, "219-09-9999"),
            RealValue::Load("219-09-9999".into())
        );
    }
}
