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
        Self {
            columns: PageColumns::of_names(entity, columns.into_iter(), context),
            context,
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
