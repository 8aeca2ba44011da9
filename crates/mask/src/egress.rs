//! The egress guard: what a rule leaves of a value is checked before it may leave, whatever
//! the policy says.
//!
//! A policy can be wrong: a `keep` on a column that holds SSNs in some rows, `scrub` leaving a
//! customer's surname, a card rule on a value that is no card. Every [`crate::Masker`] carries
//! a [`Guard`]; after the rules ran, each cell a rule passes on whole or in part (everything
//! but the fakes of `pseudonym`, NULL and `[REDACTED]`) goes through the wire audit's own
//! checks of a page's row ([`maskbus_audit::RowCheck`]: the pattern detectors with the column's
//! name as hint, digits split over adjacent cells, JSON inside a cell) and, when the producer
//! loaded them, the exact matcher of production's real values (keyed hashes of the masked
//! columns' values, as `wire-audit --source` loads them). A hit refuses the row
//! ([`crate::MaskError::Egress`], naming the column and the detector, never the value): no
//! [`crate::MaskedRow`] holding it exists, so it cannot be sent.
//!
//! The way out for a column that truly holds no personal data is the reviewed-columns file the
//! wire audit already takes ([`Reviewed`]): its cells are not read, by the guard or the audit.
//! Or a rule that hides what the guard found.

use crate::rules::Rule;
use maskbus_audit::{Context, ExactMatcher, RowCheck};
use std::collections::HashSet;
use std::sync::Arc;

/// What the guard checks against besides the pattern detectors. The default guard has the
/// detectors alone: what `policy check` and tests mask with.
#[derive(Clone, Default)]
pub struct Guard {
    exact: Option<Arc<ExactMatcher>>,
    reviewed: Reviewed,
    /// The (entity, column) pairs the policy keeps: in their cells the exact matcher finds a
    /// distinctive real value anywhere, a one-word name only as the whole cell (a surname inside
    /// a kept merchant's name is there by policy; a username that is the whole cell is a leak).
    kept: HashSet<(String, String)>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("exact", &self.exact.is_some())
            .field("reviewed", &self.reviewed.0.len())
            .finish()
    }
}

impl Guard {
    /// Adds the exact matcher of production's real values.
    pub fn with_exact(mut self, exact: Arc<ExactMatcher>) -> Self {
        self.exact = Some(exact);
        self
    }

    /// The same guard, told which columns the policy keeps (see the field).
    pub(crate) fn keeping(mut self, kept: HashSet<(String, String)>) -> Self {
        self.kept = kept;
        self
    }

    /// Adds the columns an auditor reviewed as holding no personal data.
    pub fn with_reviewed(mut self, reviewed: Reviewed) -> Self {
        self.reviewed = reviewed;
        self
    }

    pub fn exact(&self) -> Option<&ExactMatcher> {
        self.exact.as_deref()
    }

    pub fn reviewed(&self) -> &Reviewed {
        &self.reviewed
    }

    /// The audit's checks of `entity`'s rows in this column order, with this guard's matcher
    /// and reviewed columns. Every cell is searched for real values, kept or masked (a kept
    /// one for distinctive values, see the field `kept`).
    pub(crate) fn rows<'g>(&'g self, entity: &str, columns: &[String]) -> RowCheck<'g> {
        RowCheck::new(
            entity,
            columns.iter().map(String::as_str),
            Context {
                exact: self.exact.as_deref(),
                kept: Some(&self.kept),
                reviewed: Some(&self.reviewed.0),
            },
        )
    }

    /// The detector that fires on a text of the schema (a name, a label, a default, a bound)
    /// read under `field`, if any: the pattern detectors and the exact matcher.
    ///
    /// Schema text is read as a kept cell is: a real value of words as it is written, a one-word
    /// one only as the whole text (an enum label `Lockmanova` beside a customer of that name, not
    /// `gold` beside a customer called Gold), numbers as whole runs.
    pub fn text(&self, field: &str, text: &str) -> Option<&'static str> {
        let column = [field.to_string()];
        let kept: HashSet<(String, String)> = [(String::new(), field.to_lowercase())].into();
        let check = RowCheck::new(
            "",
            column.iter().map(String::as_str),
            Context {
                exact: self.exact.as_deref(),
                kept: Some(&kept),
                reviewed: None,
            },
        );
        check
            .check(&[Some(text)])
            .first()
            .map(|f| f.hit.detector.name())
    }
}

impl Guard {
    /// The detector that fires on the name of a schema object (a table, a constraint, an index,
    /// a sequence, a label's type), judged as a name ([`maskbus_audit::name_looks_like_pii`]:
    /// hash segments frameworks append, `account_emailaddress_user_id_2c513194`, are no value),
    /// or the exact matcher when the name's words or digits are a real value of production.
    pub fn name(&self, name: &str) -> Option<&'static str> {
        maskbus_audit::name_looks_like_pii(name)
            .map(|d| d.name())
            .or_else(|| self.exact_in(&name.replace('_', " ")))
    }

    /// The detector that fires on a SQL text of the schema (a default, a check, a bound, an
    /// index's definition) read under `field`: its identifiers judged as names, its literals and
    /// numbers as values by their role ([`maskbus_audit::sql_looks_like_pii`]: a pattern or a
    /// format mask by its fixed characters, a range's numeric bound not at all), and the exact
    /// matcher over the whole text, whatever the role (a real value written as a pattern is
    /// still found).
    pub fn sql(&self, field: &str, sql: &str) -> Option<&'static str> {
        maskbus_audit::sql_looks_like_pii(field, sql)
            .map(|d| d.name())
            .or_else(|| self.exact_in(sql))
    }

    /// A real value of production inside `text`, by the exact matcher alone, read as
    /// [`Guard::text`] reads.
    fn exact_in(&self, text: &str) -> Option<&'static str> {
        let matcher = self.exact.as_deref()?;
        matcher
            .find_distinctive(&maskbus_audit::normalize::normalize(text))
            .map(|hit| hit.detector.name())
    }
}

/// For a json rule with pseudonyms at some paths: the view the guard reads of its output, those
/// leaves nulled (fakes, made not left: an SSN pseudonym's fake passes an SSN's checks) and the
/// rest as the rule left it. `None` for any other rule.
pub(crate) fn json_view(rule: &Rule) -> Option<crate::json::JsonRule> {
    let Rule::Json(json) = rule else {
        return None;
    };
    if !json
        .paths()
        .iter()
        .any(|(_, r)| matches!(r, Rule::Pseudonym(_)))
    {
        return None;
    }
    let paths = json
        .paths()
        .iter()
        .map(|(path, r)| {
            let seen = if matches!(r, Rule::Pseudonym(_)) {
                Rule::Null
            } else {
                Rule::Keep
            };
            (path.clone(), seen)
        })
        .collect();
    Some(crate::json::JsonRule::new(paths, json.others()))
}

/// What a digit pseudonym (`digits`, `ssn`) passes of a value as it is: everything but its
/// digits, which it changes (`Eleanora Lockman, 555-0143` keeps the name). `None` for any other
/// rule, or an output without a letter (a fake alone, nothing left to read).
pub(crate) fn what_digits_leave(rule: &Rule, output: &str) -> Option<String> {
    if !matches!(
        rule,
        Rule::Pseudonym(crate::PseudonymKind::Digits | crate::PseudonymKind::Ssn)
    ) || !output.chars().any(char::is_alphabetic)
    {
        return None;
    }
    Some(
        output
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect(),
    )
}

/// Whether the guard reads what `rule` outputs: every rule but those whose output is made, not
/// left, or leaves too little to hold anything: a keyed fake, NULL, the fixed `[REDACTED]`, a
/// first letter and `***`, `***-**-` and four digits, a date's year on the first of January
/// (`year_only` refuses what is not a date). A fake is no value of production; its digits would
/// read as an SSN to a detector that cannot tell it from one.
pub fn reads(rule: &Rule) -> bool {
    !matches!(
        rule,
        Rule::Pseudonym(_)
            | Rule::Null
            | Rule::Redact
            | Rule::FirstLetter
            | Rule::Ssn
            | Rule::YearOnly
    )
}

/// The columns an auditor reviewed as holding no personal data, each with a reason: a TOML
/// file of `[columns]` with `"schema.table.column" = "reason"` lines (a table of schema public
/// may be named without it). The producer's guard and the wire audit read the same file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reviewed(HashSet<(String, String)>);

/// Why a reviewed-columns file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewedError {
    #[error("the reviewed columns are not TOML: {0}")]
    NotToml(String),
    #[error("no [columns] table of \"schema.table.column\" = \"reason\" lines")]
    NoColumns,
    #[error("{0} needs a reason (why it holds no personal data)")]
    NoReason(String),
    #[error("{0} is not table.column or schema.table.column")]
    NotAColumn(String),
}

impl Reviewed {
    /// Reads a reviewed-columns file's text.
    pub fn parse(text: &str) -> Result<Self, ReviewedError> {
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ReviewedError::NotToml(e.message().to_string()))?;
        let Some(columns) = doc.get("columns").and_then(|c| c.as_table()) else {
            return Err(ReviewedError::NoColumns);
        };
        let mut out = HashSet::new();
        for (name, reason) in columns {
            let reason = reason.as_str().unwrap_or_default().trim();
            if reason.is_empty() {
                return Err(ReviewedError::NoReason(crate::shorten(name)));
            }
            let Some((table, column)) = name.rsplit_once('.') else {
                return Err(ReviewedError::NotAColumn(crate::shorten(name)));
            };
            out.insert((crate::qualify(table), column.to_lowercase()));
        }
        Ok(Self(out))
    }

    /// The (entity, column) pairs, entity schema-qualified, column lowercased.
    pub fn columns(&self) -> &HashSet<(String, String)> {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MaskError, Policy, PseudonymKey};

    const POLICY: &str = r#"
[transactions]
id = "keep"
description = "keep"
memo = "scrub"
"#;

    fn policy() -> Policy {
        Policy::from_toml("t.toml", POLICY)
            .unwrap()
            .with_key(PseudonymKey::new(b"k"))
    }

    fn columns() -> Vec<String> {
        ["id", "description", "memo"].map(String::from).to_vec()
    }

    #[test]
    fn a_kept_value_a_detector_recognises_is_refused_by_column_and_detector() {
        let policy = policy();
        let masker = policy.masker("transactions", &columns()).unwrap();
        let row = |d: &str| vec![Some("1".into()), Some(d.into()), None];
        assert!(masker.mask(row("coffee at the corner")).is_ok());
        let refused = masker
            .mask(row("paid by 4532 0151 1283 0366, ssn 219-09-9999"))
            .unwrap_err();
        match &refused {
            MaskError::Egress {
                entity,
                column,
                detector,
                ..
            } => {
                assert_eq!(entity, "public.transactions");
                assert_eq!(column, "description");
                assert!(["card", "ssn"].contains(detector), "{detector}");
            }
            other => panic!("{other:?}"),
        }
        let shown = refused.to_string();
        assert!(
            !shown.contains("9999") && !shown.contains("0366"),
            "{shown}"
        );
    }

    #[test]
    fn what_scrub_leaves_is_matched_against_real_values() {
        let mut matcher = ExactMatcher::new([3; 32]);
        matcher.add("lockman");
        let policy = policy().with_guard(Guard::default().with_exact(Arc::new(matcher)));
        let masker = policy.masker("transactions", &columns()).unwrap();
        let refused = masker
            .mask(vec![
                Some("1".into()),
                Some("x".into()),
                Some("called Mr Lockman".into()),
            ])
            .unwrap_err();
        assert!(
            matches!(&refused, MaskError::Egress { column, detector, .. } if column == "memo" && *detector == "source_value"),
            "{refused:?}"
        );
    }

    #[test]
    fn what_a_digit_pseudonym_passes_as_it_is_is_read() {
        let policy = Policy::from_toml(
            "t.toml",
            "[notes]\nid = \"keep\"\nbody = { pseudonym = \"digits\" }\n",
        )
        .unwrap()
        .with_key(PseudonymKey::new(b"k"));
        let columns = ["id", "body"].map(String::from).to_vec();
        let masker = policy.masker("notes", &columns).unwrap();
        assert!(masker
            .mask(vec![Some("1".into()), Some("555-0143".into())])
            .is_ok());
        let refused = masker
            .mask(vec![
                Some("1".into()),
                Some("Eleanora, jdoe@gmail.com, 555-0143".into()),
            ])
            .unwrap_err();
        assert!(
            matches!(&refused, MaskError::Egress { column, detector, .. } if column == "body" && *detector == "email"),
            "{refused:?}"
        );
    }

    #[test]
    fn a_json_rule_s_fakes_are_not_read_what_it_keeps_is() {
        let toml = r#"
[profiles]
id = "keep"
doc = { json = { "$.ssn" = { pseudonym = "ssn" }, "$.memo" = "keep" }, others = "scrub" }
"#;
        let policy = Policy::from_toml("t.toml", toml)
            .unwrap()
            .with_key(PseudonymKey::new(b"k"));
        let columns = ["id", "doc"].map(String::from).to_vec();
        let masker = policy.masker("profiles", &columns).unwrap();
        let row = |doc: &str| vec![Some("1".to_string()), Some(doc.to_string())];
        assert!(masker
            .mask(row(r#"{"ssn":"224-30-8280","memo":"gold member"}"#))
            .is_ok());
        let refused = masker
            .mask(row(r#"{"ssn":"224-30-8280","memo":"old ssn 219-09-9999"}"#))
            .unwrap_err();
        assert!(
            matches!(&refused, MaskError::Egress { column, detector, .. } if column == "doc" && *detector == "ssn"),
            "{refused:?}"
        );
    }

    #[test]
    fn names_are_judged_as_names_hash_suffixes_are_not_values() {
        let guard = Guard::default();
        assert_eq!(guard.name("account_emailaddress_user_id_2c513194"), None);
        assert_eq!(guard.name("orders_customer_id_fk_5f9c3a1e"), None);
        assert!(guard.name("chk_219_09_9999").is_some() || guard.name("ssn_219-09-9999").is_some());
        let mut matcher = ExactMatcher::new([9; 32]);
        matcher.add("Eleanora Lockman");
        matcher.add("Gold");
        let guard = guard.with_exact(Arc::new(matcher));
        assert_eq!(guard.name("status_eleanora_lockman"), Some("source_value"));
        // One word of a name inside another name is no value of it.
        assert_eq!(guard.name("gold_members"), None);
    }

    #[test]
    fn a_reviewed_column_passes_and_a_file_without_a_reason_is_refused() {
        let reviewed =
            Reviewed::parse("[columns]\n\"transactions.description\" = \"merchant texts\"\n")
                .unwrap();
        let policy = policy().with_guard(Guard::default().with_reviewed(reviewed));
        let masker = policy.masker("transactions", &columns()).unwrap();
        assert!(masker
            .mask(vec![Some("1".into()), Some("ssn 219-09-9999".into()), None])
            .is_ok());
        assert_eq!(
            Reviewed::parse("[columns]\n\"t.c\" = \"  \"\n"),
            Err(ReviewedError::NoReason("t.c".into()))
        );
    }

    #[test]
    fn a_pattern_is_judged_by_its_role_and_still_matched_against_real_values() {
        let format = "CHECK ((au_id ~ '^[0-9]{3}-[0-9]{2}-[0-9]{4}$'::text))";
        assert_eq!(Guard::default().sql("authors_au_id_check", format), None);
        let mut matcher = ExactMatcher::new([5; 32]);
        matcher.add("Eleanora Lockman");
        let guard = Guard::default().with_exact(Arc::new(matcher));
        assert_eq!(guard.sql("authors_au_id_check", format), None);
        // A real value written as a pattern is still a real value.
        assert_eq!(
            guard.sql("c", "CHECK ((name !~ '^Eleanora Lockman$'::text))"),
            Some("source_value")
        );
    }
}
