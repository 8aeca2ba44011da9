//! What a walsender has sent and the consumer has not yet confirmed: the pure half of a live
//! replication stream.
//!
//! A walsender sends each transaction once, so the producer keeps it until the consumer
//! confirms a position past its commit: an answer the consumer never got (a lost reply, a
//! consumer killed mid-apply) is served again from here. A large transaction, served as it
//! arrives, is the exception: its messages are let go of as they are masked, so that the
//! producer's memory does not grow with the size of a source transaction, and a consumer that
//! did not commit it gets it from a new walsender, which sends again what the slot was not told
//! is done ([`Confirmed::LetGo`]). A relation is described once per session, before its first
//! change, so the descriptions of the transactions let go of are kept and served ahead of what
//! is left.

use maskbus_pg::pgoutput::{Lsn, Message};
use maskbus_pg::slot::SlotChange;
use maskbus_pg::walsender::Streamed;
use std::collections::{BTreeMap, VecDeque};

/// The messages received after a position, and how far the walsender has decoded.
#[derive(Debug)]
pub struct Backlog {
    /// Relation and type descriptions, as they stood before the first message kept.
    described: BTreeMap<(bool, u32), SlotChange>,
    messages: VecDeque<SlotChange>,
    /// `messages[..complete]` are whole transactions.
    complete: usize,
    /// Every transaction committed after this is in `messages` or still to come, but for one
    /// taken as it arrived (`let_go`).
    from: Lsn,
    /// The walsender has decoded up to here: every transaction committed before it is in
    /// `messages[..complete]`, confirmed, or taken as it arrived.
    stands_at: Lsn,
    /// A transaction is arriving: its `Begin` has come and its `Commit` not yet.
    arriving: bool,
    /// The end of a transaction taken as it arrived ([`Backlog::take_first`]) that the consumer
    /// has not confirmed yet; `Lsn(u64::MAX)` while its commit has not been taken.
    let_go: Option<Lsn>,
}

/// What confirming a position leaves a backlog able to serve.
#[derive(Debug, PartialEq, Eq)]
pub enum Confirmed {
    /// What follows the position: it is held or still to come.
    Serves,
    /// Nothing: the position is before one the consumer confirmed, and the slot has been told
    /// to move past it, so the changes between are gone.
    Behind,
    /// Nothing: a transaction after the position was let go of as it was served, and the
    /// consumer has not committed it. The slot was not told to move past it: a new walsender
    /// started from the position sends it again.
    LetGo,
}

impl Backlog {
    /// The backlog of a stream started after `from`.
    pub fn new(from: Lsn) -> Self {
        Self {
            described: BTreeMap::new(),
            messages: VecDeque::new(),
            complete: 0,
            from,
            stands_at: from,
            arriving: false,
            let_go: None,
        }
    }

    pub fn push(&mut self, streamed: Streamed) {
        match streamed {
            Streamed::Change(change) => {
                let commit = matches!(change.message, Message::Commit { .. });
                if matches!(change.message, Message::Begin { .. }) {
                    self.arriving = true;
                }
                self.messages.push_back(change);
                if commit {
                    self.complete = self.messages.len();
                    self.arriving = false;
                }
            }
            // Mid-transaction, the position says nothing of that transaction.
            Streamed::StandsAt(lsn) => {
                if !self.arriving {
                    self.stands_at = self.stands_at.max(lsn);
                }
            }
            // Never held: the producer ends the answer ([`crate::changes::ChangeFeed`]).
            Streamed::Unwound { .. } => {}
        }
    }

    /// Takes the first message held, for an answer that serves the first transaction as it
    /// arrives and keeps none of it: descriptions stay described for what follows, and until
    /// the consumer confirms the transaction's end, confirming a position before it says
    /// [`Confirmed::LetGo`].
    pub fn take_first(&mut self) -> Option<SlotChange> {
        let change = self.messages.pop_front()?;
        self.complete = self.complete.saturating_sub(1);
        self.describe(&change);
        self.let_go = Some(match change.message {
            Message::Commit { end_lsn, .. } => end_lsn,
            _ => Lsn(u64::MAX),
        });
        Some(change)
    }

    /// Keeps a relation or type description let go of, for what follows it in the session.
    fn describe(&mut self, change: &SlotChange) {
        let key = match &change.message {
            Message::Relation { oid, .. } => (true, *oid),
            Message::Type { oid, .. } => (false, *oid),
            _ => return,
        };
        self.described.insert(key, change.clone());
    }

    /// Messages of whole transactions held.
    pub fn whole(&self) -> usize {
        self.complete
    }

    /// Messages held, whole transactions and the one arriving.
    pub fn held(&self) -> usize {
        self.messages.len()
    }

    /// The id of the first transaction held (its `Begin`), if one is.
    pub fn first_xid(&self) -> Option<u32> {
        self.messages
            .iter()
            .find_map(|change| match change.message {
                Message::Begin { xid, .. } => Some(xid),
                _ => None,
            })
    }

    /// The relation and type descriptions sent before the first message held, which what is
    /// held may name.
    pub fn described(&self) -> impl Iterator<Item = &SlotChange> {
        self.described.values()
    }

    /// Every transaction committed after this is here or still to come.
    pub fn from(&self) -> Lsn {
        self.from
    }

    pub fn stands_at(&self) -> Lsn {
        self.stands_at
    }

    /// The consumer has committed everything up to `after`: the transactions that ended by then
    /// are let go of, unless the backlog cannot serve what follows `after` ([`Confirmed`]).
    pub fn confirm(&mut self, after: Lsn) -> Confirmed {
        if after < self.from {
            return Confirmed::Behind;
        }
        match self.let_go {
            Some(end) if after < end => return Confirmed::LetGo,
            _ => self.let_go = None,
        }
        while let Some(end) = self.first_end() {
            if end > after {
                break;
            }
            while let Some(change) = self.messages.pop_front() {
                self.complete -= 1;
                self.describe(&change);
                if matches!(change.message, Message::Commit { .. }) {
                    break;
                }
            }
        }
        self.from = after;
        self.stands_at = self.stands_at.max(after);
        Confirmed::Serves
    }

    /// The end of the first whole transaction held.
    fn first_end(&self) -> Option<Lsn> {
        self.messages
            .iter()
            .take(self.complete)
            .find_map(|change| match change.message {
                Message::Commit { end_lsn, .. } => Some(end_lsn),
                _ => None,
            })
    }

    /// The descriptions, then whole transactions from the first, stopping once `budget` messages
    /// are reached (at a commit, as the SQL interface does) or before a transaction of `large`
    /// messages or more that is not the first; true when that is every whole transaction held.
    pub fn served(&self, budget: usize, large: usize) -> (Vec<SlotChange>, bool) {
        let mut out: Vec<SlotChange> = self.described.values().cloned().collect();
        let mut taken = 0;
        while taken < self.complete {
            let len = self.transaction_len(taken);
            if taken > 0 && (taken >= budget || len >= large) {
                break;
            }
            out.extend(self.messages.range(taken..taken + len).cloned());
            taken += len;
        }
        (out, taken == self.complete)
    }

    /// Messages of the first transaction held, whole or arriving.
    pub fn first_len(&self) -> usize {
        self.transaction_len(0)
    }

    /// Messages of the transaction held from `at` on: up to its commit, or all held.
    fn transaction_len(&self, at: usize) -> usize {
        self.messages
            .range(at..)
            .position(|change| matches!(change.message, Message::Commit { .. }))
            .map_or(self.messages.len() - at, |commit| commit + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_pg::pgoutput::RelationColumn;

    fn change(message: Message) -> Streamed {
        Streamed::Change(SlotChange {
            lsn: Lsn(0),
            xid: 0,
            message,
        })
    }

    fn begin(xid: u32) -> Streamed {
        change(Message::Begin {
            final_lsn: Lsn(0),
            commit_time: 0,
            xid,
        })
    }

    fn commit(end: u64) -> Streamed {
        change(Message::Commit {
            commit_lsn: Lsn(end - 1),
            end_lsn: Lsn(end),
            commit_time: 0,
        })
    }

    fn relation(oid: u32, name: &str) -> Streamed {
        change(Message::Relation {
            oid,
            schema: "public".into(),
            name: name.into(),
            columns: Vec::<RelationColumn>::new(),
        })
    }

    fn insert(oid: u32) -> Streamed {
        change(Message::Insert {
            relation: oid,
            new: Vec::new(),
        })
    }

    fn kinds(messages: &[SlotChange]) -> String {
        messages
            .iter()
            .map(|m| match &m.message {
                Message::Begin { xid, .. } => format!("B{xid}"),
                Message::Commit { end_lsn, .. } => format!("C{}", end_lsn.0),
                Message::Relation { name, .. } => format!("R{name}"),
                Message::Insert { .. } => "I".into(),
                _ => "?".into(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn whole_transactions_are_served_until_confirmed_and_their_relations_stay_described() {
        let mut backlog = Backlog::new(Lsn(10));
        for s in [begin(1), relation(5, "a"), insert(5), commit(20)] {
            backlog.push(s);
        }
        for s in [begin(2), insert(5), commit(30), begin(3), insert(5)] {
            backlog.push(s);
        }
        // The open transaction is not served; both whole ones are, again and again.
        assert_eq!(backlog.whole(), 7);
        let (served, whole) = backlog.served(1000, usize::MAX);
        assert_eq!(kinds(&served), "B1 Ra I C20 B2 I C30");
        assert!(whole);
        assert_eq!(kinds(&backlog.served(1000, usize::MAX).0), kinds(&served));
        // A budget stops at the commit after it.
        let (cut, whole) = backlog.served(2, usize::MAX);
        assert_eq!((kinds(&cut).as_str(), whole), ("B1 Ra I C20", false));
        // Confirming the first lets it go; its relation is still described for the second.
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(20)));
        assert_eq!(kinds(&backlog.served(1000, usize::MAX).0), "Ra B2 I C30");
        // A position inside a transaction confirms only what ended by then.
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(25)));
        assert_eq!(kinds(&backlog.served(1000, usize::MAX).0), "Ra B2 I C30");
        backlog.push(commit(40));
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(40)));
        assert_eq!(kinds(&backlog.served(1000, usize::MAX).0), "Ra");
        assert_eq!(backlog.whole(), 0);
        // A position before what the backlog holds cannot be served from it.
        assert_eq!(backlog.confirm(Lsn(39)), Confirmed::Behind);
    }

    #[test]
    fn a_large_transaction_after_the_first_waits_for_an_answer_of_its_own() {
        let mut backlog = Backlog::new(Lsn(10));
        for s in [begin(1), relation(5, "a"), insert(5), commit(20)] {
            backlog.push(s);
        }
        for s in [begin(2), insert(5), insert(5), insert(5), commit(30)] {
            backlog.push(s);
        }
        backlog.push(begin(3));
        backlog.push(insert(5));
        assert_eq!(backlog.first_len(), 4);
        // Five messages make a large transaction: the first goes alone.
        let (served, whole) = backlog.served(1000, 5);
        assert_eq!((kinds(&served).as_str(), whole), ("B1 Ra I C20", false));
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(20)));
        // Now first, it is served (the feed sends it as it is masked); the one arriving counts
        // what is held of it.
        assert_eq!(backlog.first_len(), 5);
        assert_eq!(kinds(&backlog.served(1000, 5).0), "Ra B2 I I I C30");
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(30)));
        assert_eq!(backlog.first_len(), 2);
        assert_eq!(backlog.first_xid(), Some(3));
    }

    #[test]
    fn a_transaction_taken_as_it_arrives_is_not_kept_and_must_be_confirmed_or_sent_again() {
        let mut backlog = Backlog::new(Lsn(10));
        for s in [begin(1), relation(5, "a"), insert(5), insert(5)] {
            backlog.push(s);
        }
        // Taken as it is masked: nothing of it stays held but its description.
        let taken: Vec<SlotChange> = std::iter::from_fn(|| backlog.take_first()).collect();
        assert_eq!(kinds(&taken), "B1 Ra I I");
        assert_eq!(backlog.held(), 0);
        // Still arriving: the walsender's position says nothing of it.
        backlog.push(Streamed::StandsAt(Lsn(50)));
        assert_eq!(backlog.stands_at(), Lsn(10));
        // Not committed by the consumer (its end not even taken): it cannot be served again.
        assert_eq!(backlog.confirm(Lsn(10)), Confirmed::LetGo);
        for s in [insert(5), commit(20), begin(2), insert(5), commit(30)] {
            backlog.push(s);
        }
        assert_eq!(
            kinds(&[backlog.take_first(), backlog.take_first()].map(Option::unwrap)),
            "I C20"
        );
        assert_eq!(backlog.whole(), 3);
        // Before its end, still not servable; a position before the stream's is behind.
        assert_eq!(backlog.confirm(Lsn(19)), Confirmed::LetGo);
        assert_eq!(backlog.confirm(Lsn(9)), Confirmed::Behind);
        // Once committed, what followed it is served as usual, its relation described.
        assert_eq!(backlog.confirm(Lsn(20)), Confirmed::Serves);
        assert_eq!(kinds(&backlog.served(1000, usize::MAX).0), "Ra B2 I C30");
        assert_eq!(backlog.confirm(Lsn(30)), Confirmed::Serves);
        assert_eq!(backlog.whole(), 0);
    }

    #[test]
    fn the_walsenders_position_counts_only_between_transactions() {
        let mut backlog = Backlog::new(Lsn(10));
        backlog.push(Streamed::StandsAt(Lsn(15)));
        assert_eq!(backlog.stands_at(), Lsn(15));
        backlog.push(begin(1));
        backlog.push(Streamed::StandsAt(Lsn(50)));
        assert_eq!(backlog.stands_at(), Lsn(15));
        backlog.push(commit(60));
        backlog.push(Streamed::StandsAt(Lsn(70)));
        assert_eq!(backlog.stands_at(), Lsn(70));
        // A newer description replaces the older once both are let go of.
        let mut backlog = Backlog::new(Lsn(0));
        for s in [begin(1), relation(5, "old"), commit(20)] {
            backlog.push(s);
        }
        for s in [begin(2), relation(5, "new"), commit(30)] {
            backlog.push(s);
        }
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(20)));
        assert_eq!(kinds(&backlog.served(10, usize::MAX).0), "Rold B2 Rnew C30");
        assert_eq!(Confirmed::Serves, backlog.confirm(Lsn(30)));
        assert_eq!(kinds(&backlog.served(10, usize::MAX).0), "Rnew");
    }
}
