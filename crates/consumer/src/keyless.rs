//! Tables without a usable key (no primary key, no unique index over NOT NULL columns, none in
//! the policy): synced whole each pass as a multiset of masked rows, duplicates kept.
//!
//! The pass reads every masked row of the table in its window (the producer pages it by row
//! location, which never crosses as a value), stages them in a temporary table of the target
//! table's column types, and compares both sides' counts of each row (by a hash of the row as
//! the server prints it). Only differing rows are written: surplus copies are deleted, missing
//! copies inserted, and the watermark recorded, in one transaction. Masking is deterministic
//! (keyed pseudonyms), so an unchanged table stages the same multiset and writes nothing.
//! Chosen over replacing the whole table when it differs: a pass that finds one row changed
//! writes two rows, not the table, and the target's rows that did not change keep their place.

use super::client::Asker;
use super::pages::{self, EntityPlan};
use super::ConsumerError;
use maskbus_protocol::{KeyCursor, ReceivedPage, Request, Snapshot, VERSION};

/// How a keyless table's rows in the target differ from the source's, row by row count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Multiset {
    pub source_rows: u64,
    pub target_rows: u64,
    /// Each row (by its hash) the target has fewer copies of, once per missing copy.
    pub missing: Vec<KeyCursor>,
    /// Each row (by its hash) the target has more copies of, once per extra copy.
    pub extra: Vec<KeyCursor>,
    /// Rows deleted and inserted to make the target equal (when asked to).
    pub deleted: u64,
    pub inserted: u64,
}

impl Multiset {
    pub fn is_equal(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty()
    }
}

/// Every masked row of `plan`'s table visible in `until` (the producer's current snapshot
/// without one), a page at a time: each page is staged as it comes
/// ([`crate::writer::PageWriter::converge_keyless`]), so a large table is never held whole.
pub struct WholeFetch<'a> {
    asker: &'a Asker,
    entity: String,
    next: Option<Request>,
    columns: Option<Vec<String>>,
    until: Option<Snapshot>,
    pages: u64,
}

impl<'a> WholeFetch<'a> {
    pub fn new(
        asker: &'a Asker,
        plan: &EntityPlan,
        until: Option<Snapshot>,
        limit: u32,
        pages_per_request: u32,
        subset: Option<String>,
    ) -> Self {
        WholeFetch {
            asker,
            entity: plan.entity.clone(),
            next: Some(Request::Page {
                v: VERSION,
                entity: plan.entity.clone(),
                since: None,
                until,
                after: None,
                after_tag: None,
                through: None,
                through_tag: None,
                limit,
                pages: Some(pages_per_request),
                subset,
            }),
            columns: None,
            until: None,
            pages: 0,
        }
    }

    /// The next page, checked against `plan` and against the columns of the pages before it;
    /// `None` once the producer said no more.
    pub async fn next(&mut self, plan: &EntityPlan) -> Result<Option<ReceivedPage>, ConsumerError> {
        let Some(request) = self.next.take() else {
            return Ok(None);
        };
        let what = format!("a page of {}", self.entity);
        let replies = self.asker.ask_patiently(&request, &what).await?;
        let page = pages::merge_pages(&plan.entity, replies)?;
        pages::page_columns(plan, &page)?;
        match &self.columns {
            Some(columns) if *columns != page.columns => {
                return Err(ConsumerError::BadReply {
                    entity: plan.entity.clone(),
                    reason: "the pages of one window name different columns".into(),
                })
            }
            Some(_) => {}
            None => self.columns = Some(page.columns.clone()),
        }
        self.pages += u64::from(page.part) + 1;
        self.until = page.until.clone();
        self.next = pages::next_request(&request, &page);
        Ok(Some(page))
    }

    /// The snapshot the pages were read in, once the last has come.
    pub fn until(&self) -> Result<Snapshot, ConsumerError> {
        match (&self.next, &self.until) {
            (None, Some(until)) => Ok(until.clone()),
            _ => Err(ConsumerError::BadReply {
                entity: self.entity.clone(),
                reason: "a page reply without the snapshot that closes its window".into(),
            }),
        }
    }

    /// The pages read so far (each part counted).
    pub fn pages(&self) -> u64 {
        self.pages
    }
}

/// The multiset difference of `drift` rows (hash, source count, target count).
pub(crate) fn multiset_of(rows: &[(String, i64, i64)], source_rows: u64) -> Multiset {
    let mut set = Multiset {
        source_rows,
        ..Multiset::default()
    };
    let mut target_rows = source_rows as i64;
    for (hash, source, target) in rows {
        target_rows += target - source;
        let (side, copies) = if source > target {
            (&mut set.missing, source - target)
        } else {
            (&mut set.extra, target - source)
        };
        side.extend((0..copies).map(|_| vec![hash.clone()]));
    }
    set.target_rows = target_rows.max(0) as u64;
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_duplicate_is_a_difference() {
        let equal = multiset_of(&[], 60);
        assert!(equal.is_equal());
        assert_eq!(equal.target_rows, 60);
        let one_short = multiset_of(&[("h".into(), 2, 1)], 60);
        assert!(!one_short.is_equal());
        assert_eq!(one_short.missing, vec![vec!["h".to_string()]]);
        assert_eq!(one_short.target_rows, 59);
        let two_over = multiset_of(&[("a".into(), 1, 3), ("b".into(), 0, 1)], 4);
        assert_eq!(two_over.extra.len(), 3);
        assert_eq!(two_over.target_rows, 7);
    }
}
