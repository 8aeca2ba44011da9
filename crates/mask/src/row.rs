//! `MaskedRow`: the only kind of row that may leave the producer.
//!
//! Its field is private, it has no public constructor and it implements `Serialize` but not
//! `Deserialize`, so outside this crate the only way to hold one is [`Masker::mask`], which runs
//! every value through its column's rule. The producer's send path takes `MaskedRow`s and nothing
//! else: an unmasked row cannot reach the bus by construction, and the compiler checks it.

use crate::egress::{self, Guard};
use crate::pseudonym::PseudonymKey;
use crate::rules::{CellShape, Rule};
use crate::MaskError;
use maskbus_audit::RowCheck;
use serde::Serialize;
use std::borrow::Cow;

/// One row after masking: its values in the column order of the [`Masker`] that made it.
/// `None` is SQL NULL. Serialises as a JSON array of strings and nulls.
///
/// Outside this crate a `MaskedRow` cannot be written by hand:
///
/// ```compile_fail
/// let forged = maskbus_mask::MaskedRow { values: vec![Some("224-30-8280".to_string())] };
/// ```
///
/// nor read back from JSON (a consumer receives rows as plain values, never as `MaskedRow`):
///
/// ```compile_fail
/// let forged: maskbus_mask::MaskedRow = serde_json::from_str(r#"["224-30-8280"]"#).unwrap();
/// ```
///
/// The only way in is a masker:
///
/// ```
/// use maskbus_mask::{Policy, PseudonymKey};
/// let policy = Policy::bank().unwrap().with_key(PseudonymKey::new(b"k"));
/// let masker = policy.masker("customers", &["ssn".to_string()]).unwrap();
/// let row = masker.mask(vec![Some("224-30-8280".to_string())]).unwrap();
/// assert_eq!(row.values(), [Some("***-**-8280".to_string())]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MaskedRow {
    values: Vec<Option<String>>,
}

impl MaskedRow {
    pub fn values(&self) -> &[Option<String>] {
        &self.values
    }
}

/// One row after masking, borrowing its `keep` cells from the row it was masked from: what a
/// verify hashes, without copying every kept value. Like [`MaskedRow`] it can only be made by a
/// [`Masker`]; unlike it, it cannot be serialised, so it never travels: only its hash does.
///
/// ```compile_fail
/// let forged = maskbus_mask::row::MaskedCells { cells: vec![Some("224-30-8280".into())] };
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaskedCells<'v> {
    cells: Vec<Option<Cow<'v, str>>>,
}

impl MaskedCells<'_> {
    pub fn cells(&self) -> &[Option<Cow<'_, str>>] {
        &self.cells
    }
}

/// Masks rows of one entity whose values arrive in a fixed column order. Made by
/// [`crate::Policy::masker`], which has already checked that every column has a rule.
pub struct Masker<'p> {
    entity: &'p str,
    columns: Vec<String>,
    rules: Vec<&'p Rule>,
    key: Option<&'p PseudonymKey>,
    /// Each column's length limit and whether it is an array, in column order.
    shapes: Vec<CellShape>,
    /// The egress guard's checks of a masked row ([`crate::egress`]).
    guard: RowCheck<'p>,
    /// Whether the guard reads each column's output (not a fake, NULL or `[REDACTED]`).
    guarded: Vec<bool>,
    /// For a json column with pseudonyms at paths, the view of its output the guard reads.
    json_views: Vec<Option<crate::json::JsonRule>>,
}

impl std::fmt::Debug for Masker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Masker")
            .field("entity", &self.entity)
            .field("columns", &self.columns)
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl<'p> Masker<'p> {
    pub(crate) fn new(
        entity: &'p str,
        columns: Vec<String>,
        rules: Vec<&'p Rule>,
        key: Option<&'p PseudonymKey>,
        guard: &'p Guard,
    ) -> Self {
        let shapes = vec![CellShape::default(); columns.len()];
        let guarded = rules.iter().map(|r| egress::reads(r)).collect();
        let json_views = rules.iter().map(|r| egress::json_view(r)).collect();
        Self {
            entity,
            guard: guard.rows(entity, &columns),
            columns,
            rules,
            key,
            shapes,
            guarded,
            json_views,
        }
    }

    /// The same masker, told each column's shape (in column order): its length limit, so that
    /// pseudonyms write fakes that fit (`varchar(24)` gets a 24-character fake email, still
    /// unique), and whether it is an array, whose elements each get the rule.
    pub fn with_shapes(mut self, shapes: Vec<CellShape>) -> Self {
        if shapes.len() == self.columns.len() {
            self.shapes = shapes;
        }
        self
    }

    pub fn entity(&self) -> &str {
        self.entity
    }

    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The source's value whose masked form in `column` is `masked`: the value itself for a
    /// `keep` column, the key's inverse for a bijective pseudonym ([`Rule::reveal`]); `None` for
    /// a column this masker does not have, an array, or a rule that cannot be undone. This is
    /// how a consumer that holds only masked keys pages, looks up and verifies by them: the
    /// producer turns the masked key it is sent back into the source's, and what it answers is
    /// masked again. Knowing the fake tells nothing of the value without the key.
    pub fn reveal(&self, column: &str, masked: &str) -> Option<String> {
        let at = self.columns.iter().position(|c| c == column)?;
        if self.shapes[at].array {
            return None;
        }
        self.rules[at].reveal(self.key, masked)
    }

    /// Masks one row. The values are taken by value so that `keep` columns move instead of
    /// being copied. A value a rule refuses fails the whole row: no partly masked row exists.
    /// So does a value the egress guard recognises in what a rule left ([`crate::egress`]).
    pub fn mask(&self, mut values: Vec<Option<String>>) -> Result<MaskedRow, MaskError> {
        if values.len() != self.rules.len() {
            return Err(MaskError::Arity {
                entity: self.entity.to_string(),
                expected: self.rules.len(),
                got: values.len(),
            });
        }
        for (((value, rule), column), shape) in values
            .iter_mut()
            .zip(&self.rules)
            .zip(&self.columns)
            .zip(&self.shapes)
        {
            if matches!(rule, Rule::Keep) {
                continue;
            }
            *value = rule
                .apply_to(value.take(), self.key, *shape)
                .map_err(|reason| MaskError::Rule {
                    entity: self.entity.to_string(),
                    column: column.clone(),
                    rule: rule.name(),
                    reason,
                })?;
        }
        self.guard_row(&values)?;
        Ok(MaskedRow { values })
    }

    /// The egress guard over one masked row: the first hit refuses it, by column and detector.
    fn guard_row(&self, values: &[Option<String>]) -> Result<(), MaskError> {
        self.guard_cells(values.iter().map(Option::as_deref))
    }

    fn guard_cells<'a>(
        &self,
        values: impl Iterator<Item = Option<&'a str>>,
    ) -> Result<(), MaskError> {
        // A digit pseudonym changes digits only: what else its value holds crosses as it is,
        // and is read with the fake's digits blanked.
        let mut blanked: Vec<Option<String>> = Vec::new();
        let values: Vec<Option<&str>> = values.collect();
        for ((v, rule), view) in values.iter().zip(&self.rules).zip(&self.json_views) {
            blanked.push(v.and_then(|v| match view {
                // A document the view cannot read is read whole.
                Some(view) => view.apply(v, None).ok(),
                None => egress::what_digits_leave(rule, v),
            }));
        }
        let cells: Vec<Option<&str>> = values
            .iter()
            .zip(&self.guarded)
            .zip(&blanked)
            .map(|((v, guarded), blank)| match blank {
                Some(blank) => Some(blank.as_str()),
                None => v.filter(|_| *guarded),
            })
            .collect();
        let Some(found) = self.guard.check(&cells).into_iter().next() else {
            return Ok(());
        };
        let at = found.columns.first().copied().unwrap_or(0);
        Err(MaskError::Egress {
            entity: self.entity.to_string(),
            column: self.columns.get(at).cloned().unwrap_or_default(),
            rule: self.rules.get(at).map(|r| r.name()).unwrap_or_default(),
            detector: found.hit.detector.name(),
            split: found.columns.len() > 1,
        })
    }

    /// Masks one row borrowed from where it was read: `keep` cells stay borrowed, every other
    /// cell goes through its rule exactly as in [`Masker::mask`] (the same values come out, and
    /// the same rows are refused by the egress guard).
    pub fn mask_cells<'v>(&self, values: &[Option<&'v str>]) -> Result<MaskedCells<'v>, MaskError> {
        if values.len() != self.rules.len() {
            return Err(MaskError::Arity {
                entity: self.entity.to_string(),
                expected: self.rules.len(),
                got: values.len(),
            });
        }
        let mut cells = Vec::with_capacity(values.len());
        for (((value, rule), column), shape) in values
            .iter()
            .zip(&self.rules)
            .zip(&self.columns)
            .zip(&self.shapes)
        {
            if matches!(rule, Rule::Keep) {
                cells.push(value.map(Cow::Borrowed));
                continue;
            }
            let masked = rule
                .apply_to(value.map(str::to_string), self.key, *shape)
                .map_err(|reason| MaskError::Rule {
                    entity: self.entity.to_string(),
                    column: column.clone(),
                    rule: rule.name(),
                    reason,
                })?;
            cells.push(masked.map(Cow::Owned));
        }
        self.guard_cells(cells.iter().map(|c| c.as_deref()))?;
        Ok(MaskedCells { cells })
    }
}
