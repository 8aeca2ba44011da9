//! Masked changes cut into the replies of one answer, bounded by rows and by bytes. Pure.
//!
//! Consecutive rows of one entity and operation make a set; a set is cut into replies of at most
//! [`MAX_PAGE_ROWS`] rows and [`MAX_PAGE_BYTES`] of row text (at least one row, however large),
//! and the last reply of each source transaction is marked `commit` and names where the
//! transaction ends. Each reply is numbered as it is cut.
//!
//! An answer is sent whole ([`Parts::finish`]: every reply knows how many there are), or, for a
//! large source transaction, in the order it is masked ([`Parts::take_ready`]: replies cut
//! before the transaction's end go with `parts = 0`, "more follow", and without the position,
//! which only its commit tells; the last replies are numbered with the count). The reply being
//! filled is always held back, so the one that carries `commit` is never gone before the commit
//! is read.

use crate::page_cut::row_json_len;
use crate::reply::ChangeReply;
use maskbus_mask::MaskedRow;
use maskbus_protocol::{ChangeOp, Lsn, Position, MAX_PAGE_BYTES, MAX_PAGE_ROWS, VERSION};
use std::collections::HashMap;

/// What a set of rows is: the entity, the operation and the columns its rows hold.
#[derive(Clone, Copy, Debug)]
pub struct SetOf<'a> {
    pub entity: &'a str,
    pub op: ChangeOp,
    pub key: &'a [String],
    pub columns: &'a [String],
}

/// The replies of one answer, as they are cut.
#[derive(Debug, Default)]
pub struct Parts {
    /// Cut, not yet taken.
    held: Vec<ChangeReply>,
    /// Being filled, and the bytes of its rows.
    open: Option<(ChangeReply, usize)>,
    /// `held[transaction..]` (and `open`) are of the transaction being masked.
    transaction: usize,
    /// Replies numbered so far (taken, held and open).
    made: u32,
    /// Replies taken (numbered from 0).
    taken: u32,
    /// The source transaction being masked (its 32-bit id), named on its replies.
    xid: Option<maskbus_protocol::TxId>,
    /// Changes of one table without a key met in a row, not cut yet ([`Parts::push_whole`]).
    run: Option<WholeRun>,
}

/// The changes of one table without a key met in a row (a multi-row update arrives as a delete
/// of each old row and an insert of its new one, in turn): held until a change of another set,
/// the transaction's end or [`MAX_PAGE_ROWS`] of them, then cut as its deletes and its inserts,
/// two sets rather than two per row. The same multiset: the source deletes only rows it holds,
/// so each delete takes away one row the target holds, or one inserted earlier in the run (that
/// insert is dropped instead), and the rest commute.
#[derive(Debug)]
struct WholeRun {
    entity: String,
    key: Vec<String>,
    columns: Vec<String>,
    deletes: Vec<MaskedRow>,
    /// Inserted rows, `None` once a later delete took them back.
    inserts: Vec<Option<MaskedRow>>,
    /// Where each row's inserts not taken back are in `inserts`.
    inserted: HashMap<Vec<Option<String>>, Vec<usize>>,
    /// Rows held.
    held: usize,
}

impl Parts {
    /// Adds a row to the reply being filled, or to a new one when it is of another set or full.
    pub fn push(&mut self, set: SetOf<'_>, row: MaskedRow) {
        self.cut_run();
        self.cut(set, row);
    }

    /// [`Parts::push`] for a change of a table without a key (an insert, or a delete of one
    /// copy of a whole row), held in a run of that table's changes ([`WholeRun`]).
    pub fn push_whole(&mut self, set: SetOf<'_>, row: MaskedRow) {
        if self.run.as_ref().is_some_and(|run| {
            run.entity != set.entity || run.key != set.key || run.columns != set.columns
        }) {
            self.cut_run();
        }
        let run = self.run.get_or_insert_with(|| WholeRun {
            entity: set.entity.to_string(),
            key: set.key.to_vec(),
            columns: set.columns.to_vec(),
            deletes: Vec::new(),
            inserts: Vec::new(),
            inserted: HashMap::new(),
            held: 0,
        });
        if set.op == ChangeOp::Delete {
            let earlier = run.inserted.get_mut(row.values()).and_then(|at| at.pop());
            match earlier.and_then(|at| run.inserts.get_mut(at)) {
                Some(taken_back) => {
                    *taken_back = None;
                    run.held -= 1;
                }
                None => {
                    run.deletes.push(row);
                    run.held += 1;
                }
            }
        } else {
            run.inserted
                .entry(row.values().to_vec())
                .or_default()
                .push(run.inserts.len());
            run.inserts.push(Some(row));
            run.held += 1;
        }
        if run.held >= MAX_PAGE_ROWS as usize {
            self.cut_run();
        }
    }

    /// Cuts the run held ([`WholeRun`]): its deletes, then its inserts.
    fn cut_run(&mut self) {
        let Some(run) = self.run.take() else { return };
        for (op, rows) in [
            (ChangeOp::Delete, run.deletes),
            (
                ChangeOp::Upsert,
                run.inserts.into_iter().flatten().collect(),
            ),
        ] {
            let set = SetOf {
                entity: &run.entity,
                op,
                key: &run.key,
                columns: &run.columns,
            };
            for row in rows {
                self.cut(set, row);
            }
        }
    }

    fn cut(&mut self, set: SetOf<'_>, row: MaskedRow) {
        let bytes = row_json_len(&row);
        let fits = self.open.as_ref().is_some_and(|(open, held)| {
            open.entity == set.entity
                && open.op == set.op
                && open.rows.len() < MAX_PAGE_ROWS as usize
                && held + bytes <= MAX_PAGE_BYTES
        });
        if !fits {
            self.close();
            self.open = Some((self.reply(set), 0));
        }
        if let Some((open, held)) = self.open.as_mut() {
            open.rows.push(row);
            *held += bytes;
        }
    }

    /// The source transaction `xid` begins: its replies name it.
    pub fn begin(&mut self, xid: u32) {
        self.cut_run();
        self.xid = Some(maskbus_protocol::TxId(xid));
    }

    /// A set without rows (a truncate): a reply of its own.
    pub fn push_empty(&mut self, set: SetOf<'_>) {
        self.cut_run();
        self.close();
        let reply = self.reply(set);
        self.held.push(reply);
    }

    /// The transaction being masked ends at `end`: its replies name it, its last is `commit`.
    pub fn commit(&mut self, end: Lsn) {
        self.cut_run();
        self.close();
        let first = self.transaction.min(self.held.len());
        let ours = &mut self.held[first..];
        for reply in ours.iter_mut() {
            reply.lsn = Some(Position(end));
        }
        if let Some(last) = ours.last_mut() {
            last.commit = true;
        }
        self.transaction = self.held.len();
    }

    /// Drops what is held of the transaction being masked (it does not go out after all).
    pub fn abandon(&mut self) {
        self.run = None;
        self.open = None;
        self.held.truncate(self.transaction.min(self.held.len()));
        // The next reply takes the first number left free: the consumer waits for each.
        self.made = self.taken + self.held.len() as u32;
    }

    /// The replies cut so far that may go before the answer is whole, standing at `through`:
    /// all but the one being filled, and but the last cut when none is (it may be the one to
    /// carry `commit`).
    pub fn take_ready(&mut self, through: Lsn) -> Vec<ChangeReply> {
        let keep = usize::from(self.open.is_none() && !self.held.is_empty());
        let ready = self.held.len() - keep;
        let taken: Vec<ChangeReply> = self
            .held
            .drain(..ready)
            .map(|mut reply| {
                reply.through = Position(through);
                reply
            })
            .collect();
        self.transaction = self.transaction.saturating_sub(taken.len());
        self.taken += taken.len() as u32;
        taken
    }

    /// The rest of the answer, standing at `through`, each reply numbered with the count of
    /// them all; one reply with no change when nothing is left to send.
    pub fn finish(mut self, through: Lsn, more: bool) -> Vec<ChangeReply> {
        self.cut_run();
        self.close();
        if self.held.is_empty() {
            let mut idle = ChangeReply::standing_at(Position(through), more, false);
            idle.part = self.made;
            self.made += 1;
            self.held.push(idle);
        }
        let parts = self.made;
        for reply in &mut self.held {
            reply.through = Position(through);
            reply.more = more;
            reply.parts = parts;
        }
        self.held
    }

    fn close(&mut self) {
        if let Some((reply, _)) = self.open.take() {
            self.held.push(reply);
        }
    }

    fn reply(&mut self, set: SetOf<'_>) -> ChangeReply {
        let part = self.made;
        self.made += 1;
        ChangeReply {
            v: VERSION,
            entity: set.entity.to_string(),
            op: set.op,
            key: set.key.to_vec(),
            columns: set.columns.to_vec(),
            rows: Vec::new(),
            lsn: None,
            commit: false,
            through: Position::default(),
            more: false,
            started: false,
            schema_changed: false,
            closed: Vec::new(),
            unpublished: Vec::new(),
            xid: self.xid,
            part,
            parts: 0,
            attempt: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn push_rows(parts: &mut Parts, entity: &str, op: ChangeOp, sizes: &[usize]) {
        let (key, columns) = (names(&["id"]), names(&["id", "body"]));
        let set = SetOf {
            entity,
            op,
            key: &key,
            columns: &columns,
        };
        for row in crate::page_cut::rows_of_sizes(sizes) {
            parts.push(set, row);
        }
    }

    #[test]
    fn a_run_of_a_keyless_tables_changes_goes_as_its_deletes_then_its_inserts() {
        let (key, columns) = (names(&["tableoid", "ctid"]), names(&["id", "body"]));
        let set = |op| SetOf {
            entity: "public.log",
            op,
            key: &key,
            columns: &columns,
        };
        let rows = crate::page_cut::rows_of_sizes(&[1, 2, 3, 4, 5]);
        let r = |i: usize| rows[i].clone();
        let mut parts = Parts::default();
        parts.begin(7);
        // A deleted; B inserted and deleted again (a row updated twice in one transaction);
        // C inserted; D inserted twice and one copy deleted.
        for (op, row) in [
            (ChangeOp::Delete, 0),
            (ChangeOp::Upsert, 1),
            (ChangeOp::Delete, 1),
            (ChangeOp::Upsert, 2),
            (ChangeOp::Upsert, 3),
            (ChangeOp::Upsert, 3),
            (ChangeOp::Delete, 3),
        ] {
            parts.push_whole(set(op), r(row));
        }
        // Another table's change cuts the run: the order around it is kept.
        push_rows(&mut parts, "public.other", ChangeOp::Upsert, &[1]);
        parts.push_whole(set(ChangeOp::Delete), r(4));
        parts.commit(Lsn(9));
        // A transaction abandoned takes its run with it.
        parts.begin(8);
        parts.push_whole(set(ChangeOp::Upsert), r(4));
        parts.abandon();
        let out = parts.finish(Lsn(9), false);
        let got: Vec<(&str, ChangeOp, Vec<MaskedRow>)> = out
            .iter()
            .map(|reply| (reply.entity.as_str(), reply.op, reply.rows.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("public.log", ChangeOp::Delete, vec![r(0)]),
                ("public.log", ChangeOp::Upsert, vec![r(2), r(3)]),
                (
                    "public.other",
                    ChangeOp::Upsert,
                    crate::page_cut::rows_of_sizes(&[1])
                ),
                ("public.log", ChangeOp::Delete, vec![r(4)]),
            ]
        );
        assert!(out.last().is_some_and(|last| last.commit));
        assert!(out.iter().all(|reply| reply.columns == columns));
    }

    fn shape(replies: &[ChangeReply]) -> Vec<(usize, bool, Option<u64>, u32, u32)> {
        replies
            .iter()
            .map(|r| {
                (
                    r.rows.len(),
                    r.commit,
                    r.lsn.map(|p| p.0 .0),
                    r.part,
                    r.parts,
                )
            })
            .collect()
    }

    #[test]
    fn a_transaction_is_cut_by_rows_and_by_bytes_its_last_reply_marked_commit() {
        let mut parts = Parts::default();
        push_rows(&mut parts, "public.t", ChangeOp::Upsert, &[10; 4500]);
        parts.commit(Lsn(7));
        let many = parts.finish(Lsn(7), false);
        assert_eq!(
            shape(&many),
            vec![
                (2000, false, Some(7), 0, 3),
                (2000, false, Some(7), 1, 3),
                (500, true, Some(7), 2, 3)
            ]
        );
        // 3 MiB rows: two fit in a reply's 8 MiB, and a row larger than that still travels.
        let mut parts = Parts::default();
        push_rows(
            &mut parts,
            "public.t",
            ChangeOp::Upsert,
            &[3 << 20, 3 << 20, 3 << 20, 9 << 20],
        );
        parts.commit(Lsn(9));
        let large = parts.finish(Lsn(9), false);
        let sizes: Vec<usize> = large.iter().map(|r| r.rows.len()).collect();
        assert_eq!(sizes, vec![2, 1, 1]);
        assert!(large.iter().all(|r| r.parts == 3) && large[2].commit && !large[1].commit);
    }

    #[test]
    fn sets_of_several_transactions_each_end_with_their_commit() {
        let mut parts = Parts::default();
        push_rows(&mut parts, "public.a", ChangeOp::Upsert, &[10; 3]);
        push_rows(&mut parts, "public.a", ChangeOp::Delete, &[10; 2]);
        parts.commit(Lsn(20));
        let (key, columns) = (names(&["id"]), Vec::new());
        parts.push_empty(SetOf {
            entity: "public.b",
            op: ChangeOp::Truncate,
            key: &key,
            columns: &columns,
        });
        parts.commit(Lsn(30));
        let out = parts.finish(Lsn(40), true);
        assert_eq!(
            shape(&out),
            vec![
                (3, false, Some(20), 0, 3),
                (2, true, Some(20), 1, 3),
                (0, true, Some(30), 2, 3)
            ]
        );
        assert!(out.iter().all(|r| r.through == Position(Lsn(40)) && r.more));
        // Nothing to send: one reply that says where the stream stands.
        let idle = Parts::default().finish(Lsn(50), false);
        assert_eq!(shape(&idle), vec![(0, false, None, 0, 1)]);
        assert_eq!(idle[0].op, ChangeOp::None);
    }

    #[test]
    fn a_transaction_goes_as_it_is_masked_and_its_commit_is_held_back_to_the_end() {
        let mut parts = Parts::default();
        push_rows(&mut parts, "public.t", ChangeOp::Upsert, &[10; 4000]);
        // The reply being filled stays: it may be the last.
        let first = parts.take_ready(Lsn(5));
        assert_eq!(shape(&first), vec![(2000, false, None, 0, 0)]);
        assert_eq!(first[0].through, Position(Lsn(5)));
        assert!(parts.take_ready(Lsn(5)).is_empty());
        push_rows(&mut parts, "public.t", ChangeOp::Upsert, &[10; 1]);
        let (key, columns) = (names(&["id"]), Vec::new());
        parts.push_empty(SetOf {
            entity: "public.t",
            op: ChangeOp::Truncate,
            key: &key,
            columns: &columns,
        });
        // Nothing is being filled: the last reply cut stays back.
        let second = parts.take_ready(Lsn(5));
        assert_eq!(
            shape(&second),
            vec![(2000, false, None, 1, 0), (1, false, None, 2, 0)]
        );
        parts.commit(Lsn(60));
        let last = parts.finish(Lsn(60), false);
        assert_eq!(shape(&last), vec![(0, true, Some(60), 3, 4)]);
    }

    #[test]
    fn an_abandoned_transaction_leaves_a_reply_that_says_where_the_stream_stands() {
        let mut parts = Parts::default();
        push_rows(&mut parts, "public.t", ChangeOp::Upsert, &[10; 2500]);
        assert_eq!(parts.take_ready(Lsn(5)).len(), 1);
        parts.abandon();
        let out = parts.finish(Lsn(5), false);
        assert_eq!(shape(&out), vec![(0, false, None, 1, 2)]);
        assert_eq!(out[0].op, ChangeOp::None);
    }
}
