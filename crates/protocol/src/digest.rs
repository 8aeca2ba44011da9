//! Hashes of rows, the same on both sides of a verify: the producer hashes its masked rows (as
//! the target will print them once stored), the consumer hashes the target's rows, and only
//! ranges whose hashes differ are looked at row by row. Pure.
//!
//! A row's hash is XXH3-64 over its cells, each written as a tag (NULL or text) and, for text,
//! its length and bytes, so no two different rows write the same bytes. A range's hash is the
//! wrapping sum of its rows' hashes: it does not depend on the order the rows were read in.
//!
//! Why not a cryptographic hash: what is hashed is masked rows, which the bus carries in the
//! clear during a sync anyway, so a hash reveals nothing a page would not; and drift is made by
//! accident (a hand edit, a lost delete), not crafted to collide. XXH3 costs a tenth of BLAKE3 on
//! rows this short, and hashing was the largest single cost of both agents in a verify.

use crate::{Bucket, KeyCursor};
use std::collections::HashMap;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

/// The hash of one row's cells, in column order.
pub fn row_hash<'a>(cells: impl IntoIterator<Item = Option<&'a str>>) -> u64 {
    RowHasher::default().hash(cells)
}

/// [`row_hash`] with a buffer kept from row to row: the cells are framed into it and hashed in
/// one call, which costs a third of feeding the hasher cell by cell.
#[derive(Default)]
pub struct RowHasher {
    framed: Vec<u8>,
}

impl RowHasher {
    pub fn hash<'a>(&mut self, cells: impl IntoIterator<Item = Option<&'a str>>) -> u64 {
        self.framed.clear();
        for cell in cells {
            match cell {
                None => self.framed.push(0),
                Some(text) => {
                    self.framed.push(1);
                    self.framed
                        .extend_from_slice(&(text.len() as u64).to_le_bytes());
                    self.framed.extend_from_slice(text.as_bytes());
                }
            }
        }
        xxh3_64(&self.framed)
    }
}

/// A hash as it travels: 16 letters `a` to `p`, one per nibble. No digits, so no run of a hash
/// can ever look like an SSN or a card number to the wire audit.
pub fn hex(hash: u64) -> String {
    (0..16)
        .rev()
        .map(|i| char::from(b'a' + ((hash >> (i * 4)) & 0xF) as u8))
        .collect()
}

/// The number [`hex`] wrote, or `None` for anything but 16 letters `a` to `p`.
pub fn unhex(text: &str) -> Option<u64> {
    if text.len() != 16 {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| match b {
        b'a'..=b'p' => Some((n << 4) | u64::from(b - b'a')),
        _ => None,
    })
}

/// Rows counted and hashed together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: u64,
    pub sum: u64,
}

impl Tally {
    pub fn add(&mut self, hash: u64) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(hash);
    }

    pub fn bucket(&self, last: KeyCursor) -> Bucket {
        Bucket {
            last,
            count: self.count,
            hash: hex(self.sum),
        }
    }

    pub fn matches(&self, bucket: &Bucket) -> bool {
        self.count == bucket.count && hex(self.sum) == bucket.hash
    }
}

/// Puts the target's rows, read in key order, into the producer's buckets. A row whose key is
/// a bucket's last key closes that bucket; rows go to the first bucket not closed yet. When the
/// target lacks a bucket's last row, that bucket and the next both differ, and both are looked
/// at row by row: never a false "equal".
pub struct Bucketing<'b> {
    buckets: &'b [Bucket],
    /// The buckets (by index) whose last key has this [`key_hash`].
    closing: HashMap<u64, Vec<usize>>,
    tallies: Vec<Tally>,
    open: usize,
    /// Rows after the last bucket (the source has none there).
    pub beyond: Tally,
}

/// A key's cells hashed, framed as in [`RowHasher`], without allocating: the target's every row
/// is looked up by it.
fn key_hash<'k>(key: impl IntoIterator<Item = &'k str>) -> u64 {
    let mut hasher = Xxh3::new();
    for cell in key {
        hasher.update(&(cell.len() as u64).to_le_bytes());
        hasher.update(cell.as_bytes());
    }
    hasher.digest()
}

/// The spread bucket of a masked key: its hash modulo [`crate::SPREAD_BUCKETS`], the same on
/// both sides of a verify whatever order each reads its rows in.
pub fn spread_of<'k>(key: impl IntoIterator<Item = &'k str>) -> u32 {
    (key_hash(key) % u64::from(crate::SPREAD_BUCKETS)) as u32
}

impl<'b> Bucketing<'b> {
    pub fn new(buckets: &'b [Bucket]) -> Self {
        let mut closing: HashMap<u64, Vec<usize>> = HashMap::with_capacity(buckets.len());
        for (i, b) in buckets.iter().enumerate() {
            closing
                .entry(key_hash(b.last.iter().map(String::as_str)))
                .or_default()
                .push(i);
        }
        Self {
            buckets,
            closing,
            tallies: vec![Tally::default(); buckets.len()],
            open: 0,
            beyond: Tally::default(),
        }
    }

    pub fn add(&mut self, key: &[&str], hash: u64) {
        if self.open >= self.buckets.len() {
            self.beyond.add(hash);
            return;
        }
        let closes = self
            .closing
            .get(&key_hash(key.iter().copied()))
            .and_then(|found| {
                found.iter().copied().find(|&i| {
                    i >= self.open
                        && self.buckets[i]
                            .last
                            .iter()
                            .map(String::as_str)
                            .eq(key.iter().copied())
                })
            });
        match closes {
            // A bucket's last key (a later one when the last rows of those before are missing).
            Some(index) => {
                self.tallies[index].add(hash);
                self.open = index + 1;
            }
            None => self.tallies[self.open].add(hash),
        }
    }

    /// The indexes of the buckets whose rows differ.
    pub fn differing(&self) -> Vec<usize> {
        (0..self.buckets.len())
            .filter(|&i| !self.tallies[i].matches(&self.buckets[i]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket_of(rows: &[(&str, &str)]) -> Bucket {
        let mut tally = Tally::default();
        for (_, v) in rows {
            tally.add(row_hash([Some(*v)]));
        }
        tally.bucket(vec![rows.last().unwrap().0.to_string()])
    }

    #[test]
    fn hashes_travel_as_letters_only() {
        for n in [0, 1, 0x0123_4567_89ab_cdef, u64::MAX] {
            assert_eq!(unhex(&hex(n)), Some(n));
        }
        for bad in [
            "",
            "aaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaaq",
            "0/1914527A",
            "AAAAAAAAAAAAAAAA",
        ] {
            assert_eq!(unhex(bad), None, "{bad}");
        }
        assert_eq!(hex(0), "aaaaaaaaaaaaaaaa");
        assert_eq!(hex(0x0123_4567_89ab_cdef), "abcdefghijklmnop");
        assert_eq!(hex(u64::MAX), "pppppppppppppppp");
    }

    #[test]
    fn cells_are_framed_so_different_rows_hash_differently() {
        assert_ne!(
            row_hash([Some("ab"), Some("c")]),
            row_hash([Some("a"), Some("bc")])
        );
        assert_ne!(row_hash([None]), row_hash([Some("")]));
        assert_eq!(row_hash([Some("x"), None]), row_hash([Some("x"), None]));
    }

    #[test]
    fn only_the_buckets_that_differ_are_named() {
        let source = [
            bucket_of(&[("1", "a"), ("2", "b")]),
            bucket_of(&[("3", "c"), ("4", "d")]),
            bucket_of(&[("5", "e"), ("6", "f")]),
        ];
        let read = |rows: &[(&str, &str)]| {
            let mut b = Bucketing::new(&source);
            for (k, v) in rows {
                b.add(&[k], row_hash([Some(*v)]));
            }
            (b.differing(), b.beyond.count)
        };
        let equal = [
            ("1", "a"),
            ("2", "b"),
            ("3", "c"),
            ("4", "d"),
            ("5", "e"),
            ("6", "f"),
        ];
        assert_eq!(read(&equal), (vec![], 0));
        let changed = [
            ("1", "a"),
            ("2", "b"),
            ("3", "X"),
            ("4", "d"),
            ("5", "e"),
            ("6", "f"),
        ];
        assert_eq!(read(&changed), (vec![1], 0));
        // The last row of bucket 0 is missing: its rows and bucket 1's run together.
        let missing = [("1", "a"), ("3", "c"), ("4", "d"), ("5", "e"), ("6", "f")];
        assert_eq!(read(&missing), (vec![0, 1], 0));
        let extra = [
            ("1", "a"),
            ("2", "b"),
            ("3", "c"),
            ("4", "d"),
            ("5", "e"),
            ("6", "f"),
            ("7", "g"),
        ];
        assert_eq!(read(&extra), (vec![], 1));
        let extra_inside = [
            ("1", "a"),
            ("15", "z"),
            ("2", "b"),
            ("3", "c"),
            ("4", "d"),
            ("5", "e"),
            ("6", "f"),
        ];
        assert_eq!(read(&extra_inside), (vec![0], 0));
    }
}
