//! A received page's rows, with the text of every cell in one buffer.
//!
//! A page of 200 rows of 7 columns read as `Vec<Vec<Option<String>>>` costs 1,600 allocations,
//! and freeing them again: on a large sync that was a third of the consumer's CPU. [`Rows`]
//! reads the same JSON (an array of rows, each an array of strings or nulls) into one `String`
//! and a list of cell ranges, so a page costs a few allocations whatever its size.

use serde::de::{DeserializeSeed, Deserializer, Error as _, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;

/// Rows of text cells (`None` is SQL NULL).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    text: String,
    cells: Vec<Option<Range<usize>>>,
    /// Where each row's cells end in `cells`.
    row_ends: Vec<usize>,
}

/// One row of [`Rows`].
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    text: &'a str,
    cells: &'a [Option<Range<usize>>],
}

impl<'a> Row<'a> {
    /// How many cells the row has.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Cell `i`, or `None` when it is NULL. Panics when `i` is out of range, like indexing.
    pub fn get(&self, i: usize) -> Option<&'a str> {
        self.cells[i].clone().map(|r| &self.text[r])
    }

    /// The cells in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<&'a str>> + 'a {
        let text = self.text;
        self.cells.iter().map(move |c| c.clone().map(|r| &text[r]))
    }
}

impl Rows {
    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.row_ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.row_ends.is_empty()
    }

    /// Row `i`. Panics when `i` is out of range, like indexing.
    pub fn row(&self, i: usize) -> Row<'_> {
        let start = if i == 0 { 0 } else { self.row_ends[i - 1] };
        Row {
            text: &self.text,
            cells: &self.cells[start..self.row_ends[i]],
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = Row<'_>> {
        (0..self.len()).map(|i| self.row(i))
    }

    /// Appends a row.
    pub fn push<'s>(&mut self, row: impl IntoIterator<Item = Option<&'s str>>) {
        for cell in row {
            let cell = cell.map(|text| self.push_text(text));
            self.cells.push(cell);
        }
        self.row_ends.push(self.cells.len());
    }

    /// Appends the rows of `other`.
    pub fn extend(&mut self, other: Rows) {
        if self.is_empty() {
            *self = other;
            return;
        }
        let (shift, cells_before) = (self.text.len(), self.cells.len());
        self.text.push_str(&other.text);
        self.cells.extend(
            other
                .cells
                .into_iter()
                .map(|c| c.map(|r| r.start + shift..r.end + shift)),
        );
        self.row_ends
            .extend(other.row_ends.into_iter().map(|e| e + cells_before));
    }

    /// Removes the last cell of the last row (tests build malformed pages with it).
    pub fn pop_cell(&mut self) {
        let n = self.row_ends.len();
        let start = n.checked_sub(2).map_or(0, |i| self.row_ends[i]);
        if let Some(end) = self.row_ends.last_mut() {
            if *end > start {
                *end -= 1;
                self.cells.pop();
            }
        }
    }

    fn push_text(&mut self, text: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(text);
        start..self.text.len()
    }
}

impl<S: AsRef<str>> FromIterator<Vec<Option<S>>> for Rows {
    fn from_iter<I: IntoIterator<Item = Vec<Option<S>>>>(rows: I) -> Self {
        let mut out = Rows::default();
        for row in rows {
            out.push(row.iter().map(|c| c.as_ref().map(AsRef::as_ref)));
        }
        out
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RowsVisitor;
        impl<'de> Visitor<'de> for RowsVisitor {
            type Value = Rows;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of rows")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rows, A::Error> {
                let mut rows = Rows::default();
                while seq.next_element_seed(RowSeed(&mut rows))?.is_some() {}
                Ok(rows)
            }
        }
        deserializer.deserialize_seq(RowsVisitor)
    }
}

/// Reads one row (an array of cells) into the rows.
struct RowSeed<'r>(&'r mut Rows);

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row: an array of strings and nulls")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let rows = self.0;
        while let Some(cell) = seq.next_element_seed(CellSeed(&mut rows.text))? {
            rows.cells.push(cell);
        }
        rows.row_ends.push(rows.cells.len());
        Ok(())
    }
}

/// Reads one cell (a string or null) onto the end of the text.
struct CellSeed<'t>(&'t mut String);

impl<'de> DeserializeSeed<'de> for CellSeed<'_> {
    type Value = Option<Range<usize>>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CellSeed<'_> {
    type Value = Option<Range<usize>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a cell: a string or null")
    }
    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        let start = self.0.len();
        self.0.push_str(text);
        Ok(Some(start..self.0.len()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(E::custom("a cell is a string or null, not a boolean"))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(E::custom("a cell is a string or null, not a number"))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(E::custom("a cell is a string or null, not a number"))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(E::custom("a cell is a string or null, not a number"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(A::Error::custom("a cell is a string or null, not an array"))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(A::Error::custom(
            "a cell is a string or null, not an object",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_vecs(rows: &Rows) -> Vec<Vec<Option<String>>> {
        rows.iter()
            .map(|r| r.iter().map(|c| c.map(String::from)).collect())
            .collect()
    }

    #[test]
    fn reads_what_nested_vectors_read() {
        let text = r#"[["1", null, "a\"b\\c\u00e9\ud83d\ude00"], [], [null], ["", "x"]]"#;
        let rows: Rows = serde_json::from_str(text).unwrap();
        let expected: Vec<Vec<Option<String>>> = serde_json::from_str(text).unwrap();
        assert_eq!(as_vecs(&rows), expected);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows.row(0).get(2), Some("a\"b\\c\u{e9}\u{1f600}"));
        assert!(rows.row(1).is_empty());
        assert_eq!(rows.row(2).get(0), None);
    }

    #[test]
    fn refuses_cells_that_are_not_text() {
        for bad in [
            r#"[[1]]"#,
            r#"[[true]]"#,
            r#"[[["x"]]]"#,
            r#"[[{"a": "b"}]]"#,
            r#"["x"]"#,
            "{}",
        ] {
            assert!(serde_json::from_str::<Rows>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn extend_and_push_keep_every_cell() {
        let mut a: Rows = vec![vec![Some("1"), None]].into_iter().collect();
        let b: Rows = vec![vec![Some("2"), Some("two")], vec![None, Some("3")]]
            .into_iter()
            .collect();
        a.extend(b);
        a.push([Some("4"), Some("")]);
        assert_eq!(
            as_vecs(&a),
            vec![
                vec![Some("1".into()), None],
                vec![Some("2".into()), Some("two".into())],
                vec![None, Some("3".into())],
                vec![Some("4".into()), Some("".into())],
            ]
        );
        a.pop_cell();
        assert_eq!(a.row(3).len(), 1);
        let mut empty = Rows::default();
        empty.extend(a.clone());
        assert_eq!(empty, a);
    }
}
