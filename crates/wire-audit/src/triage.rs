//! Triage of the findings the audit recorded on the bus: acknowledging them with a reason, by id
//! or by detector and place, in one call to the bus.
//!
//! A reason is kept for good (`mq.audit_findings.ack_reason`) and read by every auditor after,
//! so it must say why in words and hold nothing the audit would itself flag:
//! - **Words**: at least [`MIN_REASON_LETTERS`] letters once the text is read as NFKC and what
//!   shows nothing is left out: separators (Unicode Z*: U+0020, U+00A0, U+3000, ...), format
//!   characters (Cf: U+200B, U+200D, U+FEFF, ...), control characters, and the blank letters
//!   (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0; the braille blank U+2800). A letter is
//!   a character of general category L. The bus checks the same in SQL (`mq.check_reason`,
//!   `crates/mailbox/sql/0008_triage_and_owners.sql`), so a participant calling
//!   `mq.ack_findings` by hand meets the rule too.
//! - **No findings**: the reason is run through the audit's detectors as `{"reason": TEXT}`
//!   and refused when they find anything (an SSN, a card, an email, ...), naming the detector,
//!   never the value.

use maskbus_audit::{scan, Context};
use maskbus_mailbox::audit;
use maskbus_pg::{Database, PgError};
use std::collections::{BTreeMap, BTreeSet};
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// The fewest letters a reason holds.
pub const MIN_REASON_LETTERS: usize = 2;

/// The longest reason, in characters (the bus's limit too).
pub const MAX_REASON_CHARS: usize = 500;

/// Why a reason is refused. Never quotes the reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReasonError {
    #[error("a finding's reason has at most {MAX_REASON_CHARS} characters (this one has {0}): say why in a sentence")]
    TooLong(usize),
    #[error(
        "a finding's reason holds a control character (a line break, a tab): write it on one line"
    )]
    Control,
    #[error("a finding's reason must say why in words: it holds {letters} letters once spaces, invisible and format characters are left out, and needs {MIN_REASON_LETTERS} or more (e.g. --reason \"the operator's test note, a published example number\")")]
    NoWords { letters: usize },
    #[error("a finding's reason holds what the audit reads as {detectors}: a reason is kept for good and read by every auditor, so write it without the value (name the column or the message instead)")]
    HoldsFinding { detectors: String },
}

/// Characters that are letters, or read as one after NFKC, and show nothing.
fn is_blank_letter(c: char) -> bool {
    matches!(
        c,
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
    )
}

/// The letters of `reason` as a person reads it: NFKC, without what shows nothing (separators,
/// format and control characters are no letters; the blank letters are left out).
pub fn reason_letters(reason: &str) -> usize {
    reason
        .nfkc()
        .filter(|c| !is_blank_letter(*c))
        .filter(|c| c.general_category_group() == GeneralCategoryGroup::Letter)
        .count()
}

/// Whether `reason` may be recorded with an acknowledgement (see the module's docs).
pub fn check_reason(reason: &str) -> Result<(), ReasonError> {
    let chars = reason.chars().count();
    if chars > MAX_REASON_CHARS {
        return Err(ReasonError::TooLong(chars));
    }
    if reason.chars().any(char::is_control) {
        return Err(ReasonError::Control);
    }
    let letters = reason_letters(reason);
    if letters < MIN_REASON_LETTERS {
        return Err(ReasonError::NoWords { letters });
    }
    let found: BTreeSet<&'static str> =
        scan(&serde_json::json!({ "reason": reason }), Context::default())
            .iter()
            .map(|f| f.hit.detector.name())
            .collect();
    if !found.is_empty() {
        return Err(ReasonError::HoldsFinding {
            detectors: found.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    Ok(())
}

/// Which recorded findings an acknowledgement covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// These findings, by id.
    Ids(Vec<i64>),
    /// Every open finding of `detector` whose path matches `path`, where `[*]` stands for any
    /// index (`$.rows[*][4]`).
    Path { detector: String, path: String },
    /// Every open finding of `detector` in one column of the producer's page replies: a cell
    /// `$.rows[R][C]` of a page whose `entity` is `entity` and whose column C is `column`.
    Column {
        detector: String,
        entity: String,
        column: String,
    },
}

impl Selection {
    /// `--ack-column`'s `schema.table.column` (or `table.column` in schema public).
    pub fn column(detector: &str, column: &str) -> Result<Selection, TriageError> {
        let Some((table, name)) = column.trim().rsplit_once('.') else {
            return Err(TriageError::BadColumn(maskbus_mask::shorten(column)));
        };
        if table.is_empty() || name.is_empty() || !maskbus_mask::is_entity_name(table) {
            return Err(TriageError::BadColumn(maskbus_mask::shorten(column)));
        }
        Ok(Selection::Column {
            detector: detector.to_string(),
            entity: maskbus_mask::qualify(table),
            column: name.to_lowercase(),
        })
    }

    /// What the selection names, for a message.
    pub fn describe(&self) -> String {
        match self {
            Selection::Ids(ids) => format!(
                "finding {}",
                ids.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Selection::Path { detector, path } => format!("{detector} finding at {path}"),
            Selection::Column {
                detector,
                entity,
                column,
            } => format!("{detector} finding in {entity}.{column}"),
        }
    }
}

/// Why an acknowledgement failed.
#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(transparent)]
    Reason(#[from] ReasonError),
    #[error("--ack-column {0}: give schema.table.column (or table.column for schema public)")]
    BadColumn(String),
    #[error(transparent)]
    Pg(#[from] PgError),
}

/// What an acknowledgement did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Acknowledged {
    /// The findings acknowledged, by id.
    pub acked: Vec<i64>,
    /// Ids the selection named that are no open finding (never recorded, or acknowledged
    /// already).
    pub not_open: Vec<i64>,
}

/// Whether a finding's `path` matches `pattern`, where `[*]` stands for any index.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let mut parts = pattern.split("[*]");
    let Some(mut rest) = parts.next().and_then(|first| path.strip_prefix(first)) else {
        return false;
    };
    for part in parts {
        let Some(index) = rest.strip_prefix('[') else {
            return false;
        };
        let digits = index.bytes().take_while(u8::is_ascii_digit).count();
        let after = index[digits..].strip_prefix(']');
        match after.and_then(|a| a.strip_prefix(part)) {
            Some(r) if digits > 0 => rest = r,
            _ => return false,
        }
    }
    rest.is_empty()
}

/// The row and column of a page cell's path, `$.rows[R][C]`.
pub fn page_cell(path: &str) -> Option<(usize, usize)> {
    let inner = path.strip_prefix("$.rows[")?.strip_suffix(']')?;
    let (row, column) = inner.split_once("][")?;
    Some((row.parse().ok()?, column.parse().ok()?))
}

/// Acknowledges the findings `selection` names with `reason`, checked first here
/// ([`check_reason`]) and again by the bus: one call to `mq.ack_findings` for all of them.
pub async fn acknowledge(
    bus: &Database,
    selection: &Selection,
    reason: &str,
) -> Result<Acknowledged, TriageError> {
    check_reason(reason)?;
    let client = bus.connect().await?;
    let ids: Vec<i64> = match selection {
        Selection::Ids(ids) => {
            let mut ids = ids.clone();
            ids.sort_unstable();
            ids.dedup();
            ids
        }
        Selection::Path { detector, path } => audit::list_findings(bus, &client)
            .await?
            .into_iter()
            .filter(|f| f.acked_by.is_none() && &f.detector == detector)
            .filter(|f| path_matches(path, &f.path))
            .map(|f| f.id)
            .collect(),
        Selection::Column {
            detector,
            entity,
            column,
        } => {
            let open: Vec<(i64, i64, usize)> = audit::list_findings(bus, &client)
                .await?
                .into_iter()
                .filter(|f| f.acked_by.is_none() && &f.detector == detector)
                .filter_map(|f| page_cell(&f.path).map(|(_, c)| (f.id, f.message_id, c)))
                .collect();
            let messages: BTreeSet<i64> = open.iter().map(|(_, m, _)| *m).collect();
            let messages: Vec<i64> = messages.into_iter().collect();
            let pages: BTreeMap<i64, (String, Vec<String>)> =
                audit::page_columns(bus, &client, &messages)
                    .await?
                    .into_iter()
                    .map(|(id, entity, columns)| (id, (entity, columns)))
                    .collect();
            open.into_iter()
                .filter(|(_, message, c)| {
                    pages.get(message).is_some_and(|(e, columns)| {
                        maskbus_mask::qualify(e) == *entity
                            && columns.get(*c).is_some_and(|n| n.to_lowercase() == *column)
                    })
                })
                .map(|(id, _, _)| id)
                .collect()
        }
    };
    if ids.is_empty() {
        return Ok(Acknowledged::default());
    }
    let acked = audit::ack_findings(bus, &client, &ids, reason).await?;
    let not_open = ids
        .iter()
        .copied()
        .filter(|id| acked.binary_search(id).is_err())
        .collect();
    Ok(Acknowledged { acked, not_open })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_of_invisible_characters_is_refused() {
        for blank in [
            "\u{200B}",
            "\u{3000}",
            "\u{00A0}",
            "\u{2800}",
            "\u{200B}\u{3000}\u{00A0}\u{2800}",
            "\u{3164}\u{3164}\u{FFA0}\u{115F}\u{1160}",
            "\u{FEFF}\u{2060}\u{200D} \u{202F}\u{205F}",
            "   ",
            "",
            "12345 !!! 42",
            "x",
        ] {
            assert!(
                matches!(check_reason(blank), Err(ReasonError::NoWords { .. })),
                "{blank:?}"
            );
        }
        let said = check_reason("\u{200B}").unwrap_err().to_string();
        assert!(said.contains("in words"), "{said}");
        // Letters in any script, and full-width ones (NFKC reads them as ASCII).
        for words in [
            "the operator's test note",
            "误报",
            "тест",
            "\u{FF54}\u{FF45}\u{FF53}\u{FF54}",
            "ok",
        ] {
            assert_eq!(check_reason(words), Ok(()), "{words:?}");
        }
        assert_eq!(
            check_reason(&"a".repeat(501)),
            Err(ReasonError::TooLong(501))
        );
        assert_eq!(
            check_reason("two\nlines of words"),
            Err(ReasonError::Control)
        );
    }

    #[test]
    fn a_reason_holding_a_finding_is_refused_without_showing_it() {
        for (reason, detector) in [
            ("a test note, 224-30-8280 is the example", "ssn"),
            ("card 4111 1111 1111 1111 of the test shop", "card"),
            ("mail from jane.doe@corp.com is ours", "email"),
        ] {
            let refused = check_reason(reason).unwrap_err();
            let said = refused.to_string();
            assert!(said.contains(detector), "{reason}: {said}");
            for digits in ["224-30-8280", "4111", "jane.doe"] {
                assert!(!said.contains(digits), "{said}");
            }
        }
    }

    #[test]
    fn paths_match_with_any_index() {
        assert!(path_matches("$.note", "$.note"));
        assert!(!path_matches("$.note", "$.notes"));
        assert!(path_matches("$.rows[*][4]", "$.rows[17][4]"));
        assert!(!path_matches("$.rows[*][4]", "$.rows[17][40]"));
        assert!(!path_matches("$.rows[*][4]", "$.rows[][4]"));
        assert!(path_matches("$.rows[*][*]", "$.rows[0][12]"));
        assert!(!path_matches("$.rows[*]", "$.rows[0][12]"));
        assert_eq!(page_cell("$.rows[3][4]"), Some((3, 4)));
        assert_eq!(page_cell("$.rows[3]"), None);
        assert_eq!(page_cell("$.rows[3][4].x"), None);
    }

    #[test]
    fn a_column_is_named_with_its_table() {
        assert_eq!(
            Selection::column("phone", "public.users.phone").unwrap(),
            Selection::Column {
                detector: "phone".into(),
                entity: "public.users".into(),
                column: "phone".into()
            }
        );
        assert_eq!(
            Selection::column("phone", "users.Phone").unwrap(),
            Selection::column("phone", "public.users.phone").unwrap()
        );
        assert!(Selection::column("phone", "phone").is_err());
    }
}
