//! Whether each masked column's rule hides what it claims to hide, judged on the sample `policy
//! check` reads ([`crate::sample`]): every sampled value goes through its column's rule as the
//! producer applies it, and a rule whose output still holds the input is refused, with the
//! reason and a rule that fits. A line names the table, the column and the rule, and counts;
//! never a value.
//!
//! What is refused, on a column's sample:
//! - a value the rule refuses (`year_only` on what is not a date, `alnum` on a shape of under a
//!   million values): the producer refuses its row, and the table is not synced;
//! - `card` on values that are not card numbers (fewer than 12 digits: a card expiry `2012/06`
//!   keeps its last four digits, so all of it);
//! - `last_four` on values of four digits or fewer (all of them kept);
//! - `first_letter` on values of one or two characters (half or all of each kept), when they are
//!   a pattern of the column ([`SHORT_SHARE`]), not a stray `Ed` among first names;
//! - `{ pseudonym = "digits" }` (or `ssn`) on values with letters: the letters are kept as they
//!   are (`PTC11962M`'s initials); `{ pseudonym = "alnum" }` fits a key of letters and digits;
//! - any rule whose output equals its input on [`UNCHANGED_SHARE`] of the sample.
//!
//! The narrow cases refuse at [`LEAK_SHARE`] of the sample: a pattern, not one dirty value.

use maskbus_mask::fit::{Line, Verdict};
use maskbus_mask::{CellShape, Policy, PseudonymKind, Rule};
use maskbus_pg::TableInfo;
use std::collections::HashSet;

/// The share of a sample whose output keeps its input that refuses a narrow case (a card rule
/// on short values, `last_four` on four digits, a digit pseudonym on letters).
pub const LEAK_SHARE: f64 = 0.10;

/// The share of one- and two-character values that makes `first_letter` keep what it hides.
pub const SHORT_SHARE: f64 = 0.50;

/// The share of a sample a rule leaves unchanged that refuses it, whatever the rule.
pub const UNCHANGED_SHARE: f64 = 0.50;

const ALNUM: &str = "{ pseudonym = \"alnum\" }";
const DIGITS: &str = "{ pseudonym = \"digits\" }";
const TOKEN: &str = "{ pseudonym = \"token\" }";

/// The fewest digits of a card number (as the `card` rule reads one).
const CARD_MIN_DIGITS: usize = 12;

/// The lines for one sampled table: its `rows`, in the order of `columns`, masked by the rules
/// of `policy` (which holds a key).
pub fn judge(
    policy: &Policy,
    info: &TableInfo,
    columns: &[String],
    rows: &[Vec<Option<String>>],
) -> Vec<Line> {
    misfits(policy, info, columns, rows)
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

/// For each column whose rule keeps what it claims to hide on the sample, the rule that
/// hides it (as a policy writes it): what `policy init` proposes instead, so its output passes
/// `policy check`.
pub fn fits(
    policy: &Policy,
    info: &TableInfo,
    columns: &[String],
    rows: &[Vec<Option<String>>],
) -> Vec<(String, String)> {
    misfits(policy, info, columns, rows)
        .into_iter()
        .filter_map(|(line, fit)| fit.map(|rule| (line.column, rule.to_string())))
        .collect()
}

/// The lines of [`judge`], each with the rule [`fits`] takes.
fn misfits(
    policy: &Policy,
    info: &TableInfo,
    columns: &[String],
    rows: &[Vec<Option<String>>],
) -> Vec<(Line, Option<&'static str>)> {
    let entity = info.table.to_string();
    let Some(rules) = policy.entity(&entity) else {
        return Vec::new();
    };
    let keyed: HashSet<String> = info
        .key(policy.key_columns(&entity))
        .map(|k| k.names().into_iter().collect())
        .unwrap_or_default();
    let mut lines = Vec::new();
    for (at, column) in columns.iter().enumerate() {
        let Some(rule) = rules.rule(column) else {
            continue;
        };
        if matches!(
            rule,
            Rule::Keep | Rule::Null | Rule::Redact | Rule::Constant(_) | Rule::Json(_)
        ) {
            continue;
        }
        let Some(meta) = info.columns.iter().find(|c| &c.name == column) else {
            continue;
        };
        let shape = CellShape::of(&meta.data_type, meta.max_length);
        let values: Vec<&str> = rows
            .iter()
            .filter_map(|row| row.get(at).and_then(|v| v.as_deref()))
            .collect();
        if values.is_empty() {
            continue;
        }
        let column_fit = ColumnFit {
            key: keyed.contains(column),
            nullable: meta.nullable,
            uuid: meta.data_type == "uuid",
        };
        if let Some((why, fit)) = judge_column(rule, &values, shape, policy, column_fit) {
            lines.push((
                Line {
                    entity: entity.clone(),
                    column: column.clone(),
                    column_type: meta.sql_type.clone(),
                    rule: rule.name(),
                    verdict: Verdict::Error(why),
                },
                fit,
            ));
        }
    }
    lines
}

/// What a suggestion needs to know of the column.
#[derive(Clone, Copy)]
struct ColumnFit {
    /// Part of the key the sync pages by: only a bijective rule fits.
    key: bool,
    nullable: bool,
    /// A uuid: its hex letters stay under a digit pseudonym by design (docs/policies.md).
    uuid: bool,
}

impl ColumnFit {
    /// The rule [`ColumnFit::hiding`] names first, as a policy writes it.
    fn hiding_rule(self) -> &'static str {
        if self.key {
            ALNUM
        } else if self.nullable {
            "\"null\""
        } else {
            "\"redact\""
        }
    }

    /// A lossy rule that hides the whole value, for this column.
    fn hiding(self) -> &'static str {
        if self.key {
            "{ pseudonym = \"alnum\" } (a key needs a bijective rule)"
        } else if self.nullable {
            "\"redact\" or \"null\""
        } else {
            "\"redact\" or a { constant = \"...\" }"
        }
    }
}

/// Why `rule` does not hide `values` (the non-NULL sampled values of one column), with the
/// rule that does (when one is sure to), or `None`.
fn judge_column(
    rule: &Rule,
    values: &[&str],
    shape: CellShape,
    policy: &Policy,
    fit: ColumnFit,
) -> Option<(String, Option<&'static str>)> {
    let name = rule.name();
    let n = values.len();
    let share = |count: usize| count as f64 / n as f64;
    let said = |count: usize| format!("{count} of {n} sampled values");
    let mut refused = 0;
    let mut unchanged = 0;
    for value in values {
        match rule.apply_to(Some(value.to_string()), policy.key(), shape) {
            Err(_) => refused += 1,
            Ok(Some(out)) if out == *value => unchanged += 1,
            Ok(_) => {}
        }
    }
    if refused > 0 {
        // The reason of one refusal, which names shapes, never the value.
        let reason = values
            .iter()
            .find_map(|v| {
                rule.apply_to(Some(v.to_string()), policy.key(), shape)
                    .err()
            })
            .map(|e| e.to_string())
            .unwrap_or_default();
        let (fits, rule_that_fits) = match rule {
            Rule::YearOnly => (
                format!(
                    "a rule for what the column holds: {}, or \"first_letter\"",
                    fit.hiding()
                ),
                Some(fit.hiding_rule()),
            ),
            Rule::Pseudonym(PseudonymKind::Alnum) if fit.key => (
                "a key of longer values, or name other key columns in [maskbus.keys]".to_string(),
                None,
            ),
            Rule::Pseudonym(PseudonymKind::Alnum) => (
                "{ pseudonym = \"token\" } (unique), \"redact\" or \"null\"".to_string(),
                Some(TOKEN),
            ),
            _ => (fit.hiding().to_string(), Some(fit.hiding_rule())),
        };
        return Some((
            format!(
                "{name} refuses {} (one: {reason}): the producer refuses such a row, and the table is not synced; use {fits}",
                said(refused)
            ),
            rule_that_fits,
        ));
    }
    // Narrow cases, by what the rule keeps of a value.
    let leaking = |test: &dyn Fn(&str) -> bool| values.iter().filter(|v| test(v)).count();
    let digits = |v: &str| v.chars().filter(|c| c.is_numeric()).count();
    let narrow = match rule {
        Rule::Card => Some((
            leaking(&|v| !is_masked_card(v) && digits(v) > 0 && digits(v) < CARD_MIN_DIGITS),
            LEAK_SHARE,
            "are not card numbers (fewer than 12 digits): card keeps the last four digits, which is most or all of such a value (a card expiry YYYY/MM keeps all of it)".to_string(),
            format!("{{ pseudonym = \"digits\" }} (keeps the format, hides every digit) or {}", fit.hiding()),
            DIGITS,
        )),
        Rule::LastFour => Some((
            leaking(&|v| (1..=4).contains(&digits(v))),
            LEAK_SHARE,
            "have four digits or fewer: last_four keeps every one of them".to_string(),
            format!("{{ pseudonym = \"digits\" }} or {}", fit.hiding()),
            DIGITS,
        )),
        Rule::FirstLetter => Some((
            leaking(&|v| (1..=2).contains(&v.chars().count())),
            SHORT_SHARE,
            "are one or two characters long: first_letter keeps half or all of each (an initial, a code)".to_string(),
            fit.hiding().to_string(),
            fit.hiding_rule(),
        )),
        Rule::Pseudonym(PseudonymKind::Digits | PseudonymKind::Ssn) if !fit.uuid => Some((
            leaking(&|v| v.chars().any(char::is_alphabetic)),
            LEAK_SHARE,
            format!("hold letters: {name} changes digits only, and keeps the letters as they are (initials in an id)"),
            if fit.key {
                "{ pseudonym = \"alnum\" } (letters and digits through one keyed bijection; fits a key)".to_string()
            } else {
                "{ pseudonym = \"alnum\" } (a bijection of letters and digits) or { pseudonym = \"token\" }".to_string()
            },
            ALNUM,
        )),
        _ => None,
    };
    if let Some((count, floor, why, fits, rule_that_fits)) = narrow {
        if count > 0 && share(count) >= floor {
            return Some((
                format!(
                    "{} {why}; the rule does not fit the values: use {fits}",
                    said(count)
                ),
                Some(rule_that_fits),
            ));
        }
    }
    // Any rule: the output is the input. (A year on the first of January and free text without
    // PII are what year_only and scrub leave by design; a digit pseudonym's values without a
    // digit are judged by the detectors, `crate::schema_check::judge_digitless_sample`.)
    let by_design = matches!(
        rule,
        Rule::YearOnly | Rule::Scrub | Rule::Pseudonym(PseudonymKind::Digits | PseudonymKind::Ssn)
    );
    if !by_design && unchanged > 0 && share(unchanged) >= UNCHANGED_SHARE {
        return Some((
            format!(
                "{name} leaves {} unchanged: its output still holds the input; use a rule for what the column holds: {}",
                said(unchanged),
                fit.hiding()
            ),
            Some(fit.hiding_rule()),
        ));
    }
    None
}

/// A value already in the card rule's masked shape (`4111 **** **** 1234`): nothing to judge.
fn is_masked_card(value: &str) -> bool {
    value.contains("****")
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_mask::PseudonymKey;

    fn why(rule: &str, values: &[&str], key: bool) -> Option<String> {
        let Ok(policy) = Policy::from_toml("p", &format!("[t]\nc = {rule}\n")) else {
            panic!("{rule} does not parse");
        };
        let policy = policy.with_key(PseudonymKey::new(b"k"));
        let Some(rule) = policy.entity("t").and_then(|e| e.rule("c")).cloned() else {
            panic!("no rule");
        };
        judge_column(
            &rule,
            values,
            CellShape::default(),
            &policy,
            ColumnFit {
                key,
                nullable: true,
                uuid: false,
            },
        )
        .map(|(why, _)| why)
    }

    #[test]
    fn rules_that_keep_the_value_are_refused_with_a_rule_that_fits() {
        let expiry = why("\"card\"", &["2012/06", "2015/11", "2019/01"], false).unwrap();
        assert!(
            expiry.contains("3 of 3") && expiry.contains("pseudonym = \"digits\""),
            "{expiry}"
        );
        assert!(!expiry.contains("2012"), "{expiry}");
        assert!(why(
            "\"card\"",
            &["4111 1111 1111 1111", "5500000000000004"],
            false
        )
        .is_none());
        let short = why("\"last_four\"", &["1234", "0042", "7"], false).unwrap();
        assert!(short.contains("four digits or fewer"), "{short}");
        assert!(why("\"last_four\"", &["(212) 555-0143"], false).is_none());
        let dates = why("\"year_only\"", &["March 1985", "1985-03-14"], false).unwrap();
        assert!(
            dates.contains("refuses 1 of 2") && dates.contains("not an ISO date"),
            "{dates}"
        );
        assert!(!dates.contains("March"), "{dates}");
        let initials = why("\"first_letter\"", &["J", "K", "Smith"], false).unwrap();
        assert!(initials.contains("2 of 3"), "{initials}");
        assert!(why(
            "\"first_letter\"",
            &["Ed", "Johnson", "Smith", "Jones"],
            false
        )
        .is_none());
        let ids = why(
            "{ pseudonym = \"digits\" }",
            &["PTC11962M", "ARD03371F"],
            true,
        )
        .unwrap();
        assert!(
            ids.contains("hold letters") && ids.contains("alnum"),
            "{ids}"
        );
        assert!(!ids.contains("PTC"), "{ids}");
        assert!(why(
            "{ pseudonym = \"alnum\" }",
            &["PTC11962M", "ARD03371F"],
            true
        )
        .is_none());
        let small = why("{ pseudonym = \"alnum\" }", &["AB-12", "CD-34"], true).unwrap();
        assert!(small.contains("million"), "{small}");
        let kept = why("\"email\"", &["d***@yahoo.com", "a***@b.org"], false).unwrap();
        assert!(kept.contains("unchanged"), "{kept}");
        assert!(why("\"email\"", &["dave@yahoo.com"], false).is_none());
    }
}
