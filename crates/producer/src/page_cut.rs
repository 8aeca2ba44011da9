//! Cutting masked rows into the pages of one answer, bounded by rows and by bytes. Pure.
//!
//! A page holds at most `limit` rows and at most [`MAX_PAGE_BYTES`] of JSON text, but always at
//! least one row, however large, up to [`MAX_ROW_BYTES`]; an answer holds at most `pages` pages
//! and [`MAX_ANSWER_BYTES`] in all. A row past a bound is left for the next request (the
//! cursor is the last row taken), so legal data of any size moves, a page at a time, and no
//! reply outgrows what a consumer reads (`max_body_bytes`, 64 MiB). A row over
//! [`MAX_ROW_BYTES`], or a key value longer than a cursor may carry, is refused by name instead
//! of being sent and lost.

use maskbus_mask::MaskedRow;
use maskbus_protocol::{
    KeyCursor, MAX_ANSWER_BYTES, MAX_KEY_VALUE_BYTES, MAX_PAGE_BYTES, MAX_ROW_BYTES,
};

/// The length of `text` as a JSON string, quotes included.
fn json_len(text: &str) -> usize {
    2 + text
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// The masked key of `row`: its values at `key_positions`, what a consumer sends back.
pub fn cursor_of(row: &MaskedRow, key_positions: &[usize]) -> KeyCursor {
    key_positions
        .iter()
        .map(|&i| row.values().get(i).cloned().flatten().unwrap_or_default())
        .collect()
}

/// The length of a row as the page writes it: `[cell,cell,...]`.
pub fn row_json_len(row: &MaskedRow) -> usize {
    2 + row
        .values()
        .iter()
        .map(|v| v.as_deref().map_or(4, json_len) + 1)
        .sum::<usize>()
}

/// Why a row cannot travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsendable {
    RowTooLarge { bytes: usize },
    KeyTooLong { bytes: usize },
}

/// Rows taken so far, cut into pages.
pub struct PageCut {
    limit: usize,
    pages: usize,
    key_positions: Vec<usize>,
    chunks: Vec<Vec<MaskedRow>>,
    keys: Vec<KeyCursor>,
    current: Vec<MaskedRow>,
    current_bytes: usize,
    total_bytes: usize,
    cut: bool,
    /// The cursor of the last row taken, when it is not the row's own (a keyless table's row
    /// location, read beside the row: see [`PageCut::push_located`]).
    located: Option<KeyCursor>,
}

impl PageCut {
    /// Pages of at most `limit` rows, at most `pages` of them; `key_positions` are where the
    /// key's columns sit in a row (they are kept, so the cursor is the masked row's).
    pub fn new(limit: usize, pages: usize, key_positions: Vec<usize>) -> Self {
        Self {
            limit: limit.max(1),
            pages: pages.max(1),
            key_positions,
            chunks: Vec::new(),
            keys: Vec::new(),
            current: Vec::new(),
            current_bytes: 0,
            total_bytes: 0,
            cut: false,
            located: None,
        }
    }

    fn cursor(&self, row: &MaskedRow) -> KeyCursor {
        cursor_of(row, &self.key_positions)
    }

    fn close(&mut self) {
        if let Some(last) = self.current.last() {
            let key = self.located.clone().unwrap_or_else(|| self.cursor(last));
            self.keys.push(key);
            self.chunks.push(std::mem::take(&mut self.current));
            self.current_bytes = 0;
        }
    }

    /// Takes `row` if the answer has room: `Ok(true)` taken, `Ok(false)` full (the row is left
    /// for the next request; stop reading). Refuses a row no page could carry.
    pub fn push(&mut self, row: MaskedRow) -> Result<bool, Unsendable> {
        let bytes = row_json_len(&row);
        if bytes > MAX_ROW_BYTES {
            return Err(Unsendable::RowTooLarge { bytes });
        }
        let key_bytes = self
            .key_positions
            .iter()
            .filter_map(|&i| row.values().get(i).cloned().flatten())
            .map(|v| v.len())
            .sum::<usize>();
        if key_bytes > MAX_KEY_VALUE_BYTES {
            return Err(Unsendable::KeyTooLong { bytes: key_bytes });
        }
        if self.cut {
            return Ok(false);
        }
        let taken_any = !self.chunks.is_empty() || !self.current.is_empty();
        if taken_any && self.total_bytes + bytes > MAX_ANSWER_BYTES {
            self.cut = true;
            return Ok(false);
        }
        if !self.current.is_empty()
            && (self.current.len() == self.limit || self.current_bytes + bytes > MAX_PAGE_BYTES)
        {
            self.close();
            if self.chunks.len() == self.pages {
                self.cut = true;
                return Ok(false);
            }
        }
        self.current_bytes += bytes;
        self.total_bytes += bytes;
        self.current.push(row);
        Ok(true)
    }

    /// [`PageCut::push`] for a row whose cursor is not in it (a keyless table's row location,
    /// which never crosses as a value of the row).
    pub fn push_located(&mut self, row: MaskedRow, cursor: KeyCursor) -> Result<bool, Unsendable> {
        let taken = self.push(row)?;
        if taken {
            self.located = Some(cursor);
        }
        Ok(taken)
    }

    /// The pages (at least one, maybe empty), the cursor after each, and whether rows were
    /// left out for want of room (so more remain whatever the source said).
    pub fn finish(mut self) -> (Vec<Vec<MaskedRow>>, Vec<KeyCursor>, bool) {
        self.close();
        if self.chunks.is_empty() {
            self.chunks.push(Vec::new());
        }
        (self.chunks, self.keys, self.cut)
    }
}

/// Rows of a two-column table (`id`, `body` kept), the bodies `sizes` bytes long: for tests.
#[cfg(test)]
pub(crate) fn rows_of_sizes(sizes: &[usize]) -> Vec<MaskedRow> {
    let policy =
        maskbus_mask::Policy::from_toml("t", "[t]\nid = \"keep\"\nbody = \"keep\"\n").unwrap();
    let masker = policy
        .masker("t", &["id".to_string(), "body".to_string()])
        .unwrap();
    sizes
        .iter()
        .enumerate()
        .map(|(n, &size)| {
            masker
                .mask(vec![Some(n.to_string()), Some("x".repeat(size))])
                .unwrap()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_by_rows_and_by_bytes_and_hold_at_least_one_row() {
        let mut cut = PageCut::new(200, 64, vec![0]);
        // Ten 7 MB rows: one page of one row each after the first page fills.
        for row in rows_of_sizes(&[7 << 20; 10]) {
            if !cut.push(row).unwrap() {
                break;
            }
        }
        let (pages, keys, left) = cut.finish();
        assert!(left, "32 MiB of answer cannot hold ten 7 MB rows");
        assert_eq!(pages.iter().map(Vec::len).sum::<usize>(), 4);
        assert!(
            pages.iter().all(|p| p.len() == 1),
            "8 MiB a page: one row each"
        );
        assert_eq!(keys.last().unwrap(), &vec!["3".to_string()]);

        let mut cut = PageCut::new(3, 2, vec![0]);
        let mut taken = 0;
        for row in rows_of_sizes(&[10; 10]) {
            if !cut.push(row).unwrap() {
                break;
            }
            taken += 1;
        }
        let (pages, keys, left) = cut.finish();
        assert_eq!((taken, pages.len(), left), (6, 2, true));
        assert_eq!(keys, vec![vec!["2".to_string()], vec!["5".to_string()]]);
        // One huge row alone is still a page.
        let mut cut = PageCut::new(200, 1, vec![0]);
        assert!(cut.push(rows_of_sizes(&[20 << 20]).remove(0)).unwrap());
        assert_eq!(cut.finish().0[0].len(), 1);
    }

    #[test]
    fn a_row_or_key_no_page_can_carry_is_refused() {
        let mut cut = PageCut::new(200, 1, vec![0]);
        assert!(matches!(
            cut.push(rows_of_sizes(&[MAX_ROW_BYTES]).remove(0)),
            Err(Unsendable::RowTooLarge { .. })
        ));
        let mut cut = PageCut::new(200, 1, vec![1]);
        assert!(matches!(
            cut.push(rows_of_sizes(&[MAX_KEY_VALUE_BYTES + 1]).remove(0)),
            Err(Unsendable::KeyTooLong { .. })
        ));
        let escaped = rows_of_sizes(&[0]).remove(0);
        assert_eq!(row_json_len(&escaped), r#"["0",""]"#.len() + 1);
    }
}
