//! One row read as the audit reads a page's row, before it is sent: the producer's egress guard.
//!
//! A page reply's row is checked by the audit cell by cell, each with the hint of its column,
//! each string also read as an embedded JSON document, and adjacent cells joined when their
//! digits make a card or an SSN (`walk::row_splits`). [`RowCheck`] applies exactly those
//! checks to one row of cells whose columns are known in advance, so what the producer refuses
//! to send is what the wire audit would have found on the bus: the same detectors, the same
//! hints, the same exact matcher, the same reviewed columns left unread.

use crate::walk::{check_embedded_json, check_string, row_splits, PageColumns, Step};
use crate::{Context, Finding, Hit};

/// The checks of one entity's rows, in a fixed column order.
pub struct RowCheck<'c> {
    columns: PageColumns,
    context: Context<'c>,
    /// Per column: a kept column whose name speaks of no identifier (see [`is_plain_number`]).
    counts: Vec<bool>,
}

/// Words of a column's name that say its numbers identify a person or an account.
const IDENTIFIER_WORDS: [&str; 22] = [
    "ssn", "social", "tax", "tin", "card", "pan", "cc", "passport", "licen", "national", "nin",
    "iban", "acct", "account", "routing", "aba", "phone", "tel", "mobile", "fax", "dob", "birth",
];

/// Whether `column`'s name speaks of an identifier of a person or an account.
fn names_an_identifier(column: &str) -> bool {
    column
        .to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            IDENTIFIER_WORDS
                .iter()
                .any(|w| word == *w || (w.len() > 3 && word.starts_with(w)))
        })
}

/// A plain number: digits, a sign, one decimal point. In a kept column not named for an
/// identifier (an id, an order number, a snowflake, a count) it is no SSN or card because of
/// its digits alone: one in nine 9-digit ids passes an SSN's checks, one in ten 16-digit ones a
/// card's. It is still matched against production's real values, as a whole.
fn is_plain_number(text: &str) -> bool {
    let body = text.trim().trim_start_matches(['-', '+']);
    let mut points = 0;
    !body.is_empty()
        && body.bytes().all(|b| {
            points += usize::from(b == b'.');
            b.is_ascii_digit() || b == b'.'
        })
        && points <= 1
}

/// What one row carries that the audit would flag: the hit, and the columns it sits in (two to
/// four for a value split over adjacent cells).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowFinding {
    pub columns: Vec<usize>,
    pub hit: Hit,
}

impl<'c> RowCheck<'c> {
    /// The checks of `entity`'s rows with these `columns`. `context.kept` is honoured as the
    /// audit honours it (a kept column's cells not searched for real values); the producer's
    /// guard passes none, so every cell is.
    pub fn new<'n>(
        entity: &str,
        columns: impl IntoIterator<Item = &'n str>,
        context: Context<'c>,
    ) -> Self {
        let names: Vec<&str> = columns.into_iter().collect();
        let counts = names
            .iter()
            .map(|c| {
                let pair = (entity.to_string(), c.to_lowercase());
                context.kept.is_some_and(|k| k.contains(&pair)) && !names_an_identifier(c)
            })
            .collect();
        Self {
            columns: PageColumns::of_names(entity, names.into_iter(), context),
            context,
            counts,
        }
    }

    /// Whether column `c` was reviewed as holding no PII: its cells are not read.
    pub fn reviewed(&self, c: usize) -> bool {
        self.columns.reviewed(c)
    }

    /// What the audit would find in one row (`None` is a cell left unread: SQL NULL, or a cell
    /// the caller knows to be a fake). Empty for a clean row, which is nearly every row.
    pub fn check(&self, cells: &[Option<&str>]) -> Vec<RowFinding> {
        let mut out = Vec::new();
        let mut found = Vec::new();
        let mut pieces = Vec::with_capacity(cells.len());
        for (c, cell) in cells.iter().enumerate() {
            let Some(text) = cell.filter(|_| !self.columns.reviewed(c)) else {
                pieces.push(None);
                continue;
            };
            let (hint, exact) = self.columns.cell(c, self.context.exact);
            let path = [Step::Index(c)];
            if self.counts.get(c).copied().unwrap_or(false) && is_plain_number(text) {
                // A kept number: production's real values only, as a whole run.
                if let Some(hit) = exact.and_then(|m| m.find_distinctive(text)) {
                    out.push(RowFinding {
                        columns: vec![c],
                        hit,
                    });
                }
                pieces.push(self.columns.piece(c, text));
                continue;
            }
            check_string(text, hint, exact, &path, &mut found);
            check_embedded_json(text, exact, &path, &mut found);
            out.extend(found.drain(..).map(|f| RowFinding {
                columns: vec![c],
                hit: f.hit,
            }));
            pieces.push(self.columns.piece(c, text));
        }
        row_splits(&pieces, String::new, &mut found);
        out.extend(found.drain(..).map(|f| RowFinding {
            columns: columns_of(&f),
            hit: f.hit,
        }));
        out
    }
}

/// The columns a split finding's path names (`[1] + [2]`).
fn columns_of(finding: &Finding) -> Vec<usize> {
    finding
        .path
        .split(" + ")
        .filter_map(|p| p.trim_start_matches('[').trim_end_matches(']').parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Detector, ExactMatcher};

    fn columns(names: &[&'static str]) -> Vec<&'static str> {
        names.to_vec()
    }

    #[test]
    fn a_kept_cell_with_an_ssn_is_found_in_its_column() {
        let check = RowCheck::new(
            "public.transactions",
            columns(&["id", "description"]),
            Context::default(),
        );
        let found = check.check(&[
            Some("7"),
            Some("paid by 4532 0151 1283 0366, ssn 219-09-9999"),
        ]);
        let detectors: Vec<_> = found.iter().map(|f| f.hit.detector).collect();
        assert!(detectors.contains(&Detector::Card), "{detectors:?}");
        assert!(detectors.contains(&Detector::Ssn), "{detectors:?}");
        assert!(found.iter().all(|f| f.columns == [1]));
        assert!(check.check(&[Some("7"), Some("coffee")]).is_empty());
    }

    #[test]
    fn a_kept_id_is_a_number_not_an_ssn_or_a_card_unless_it_is_a_real_value() {
        let kept = [
            ("public.orders".to_string(), "id".to_string()),
            ("public.orders".to_string(), "tracking_number".to_string()),
            ("public.orders".to_string(), "ssn".to_string()),
        ]
        .into_iter()
        .collect();
        let mut matcher = ExactMatcher::new([1; 32]);
        matcher.add("219099999");
        let context = Context {
            exact: Some(&matcher),
            kept: Some(&kept),
            reviewed: None,
        };
        let check = RowCheck::new("public.orders", ["id", "tracking_number", "ssn"], context);
        // A 9-digit id that passes an SSN's checks, a Luhn-valid 16-digit tracking number.
        assert!(check
            .check(&[Some("224308280"), Some("4111111111111111"), None])
            .is_empty());
        // A real SSN kept as an id is a real value; a kept column named for one is read.
        assert_eq!(check.check(&[Some("219099999"), None, None]).len(), 1);
        assert_eq!(check.check(&[None, None, Some("224308280")]).len(), 1);
    }

    #[test]
    fn an_ssn_split_over_two_cells_names_both() {
        let check = RowCheck::new("t", columns(&["a", "b"]), Context::default());
        let found = check.check(&[Some("219-09"), Some("9999")]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].columns, [0, 1]);
        assert_eq!(found[0].hit.detector, Detector::Ssn);
    }

    #[test]
    fn a_reviewed_column_is_not_read_and_the_exact_matcher_reads_the_rest() {
        let mut matcher = ExactMatcher::new([7; 32]);
        matcher.add("lockman");
        let reviewed = [("public.t".to_string(), "note".to_string())]
            .into_iter()
            .collect();
        let context = Context {
            exact: Some(&matcher),
            kept: None,
            reviewed: Some(&reviewed),
        };
        let check = RowCheck::new("public.t", columns(&["note", "memo"]), context);
        assert!(check.check(&[Some("Dear Mr LOCKMAN"), None]).is_empty());
        let found = check.check(&[None, Some("Dear Mr LOCKMAN")]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].columns, [1]);
        assert_eq!(found[0].hit.detector, Detector::SourceValue);
    }
}
