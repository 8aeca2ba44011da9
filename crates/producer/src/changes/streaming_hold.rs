//! Whether the next walsender may stream transactions while they are written.
//!
//! After an unwind ([`Streamed::Unwound`](maskbus_pg::walsender::Streamed::Unwound)) the
//! transactions that were being sent while written would be streamed again, from their first
//! change, by any streaming walsender that reads their WAL while they still run, and unwound
//! again: a savepoint rolled back stays in their WAL, a writer that paused pauses again. So a
//! walsender is opened without streaming while any of them runs, and then until the consumer has
//! confirmed a position past their end (a walsender started there finds none of their WAL
//! after its start, and streams nothing of them). Pure: the source's running set and WAL
//! position come from the caller.

use maskbus_protocol::Lsn;

/// What keeps the next walsender from streaming.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Hold {
    /// Nothing: it streams.
    #[default]
    Free,
    /// These transactions (ids as the walsender names them) were unwound and may still run.
    While(Vec<u32>),
    /// They ended before this WAL position: no streaming until the consumer is past it.
    Until(Lsn),
}

impl Hold {
    /// `xids` were being sent while written and were unwound.
    pub fn unwound(&mut self, xids: &[u32]) {
        let mut held = match std::mem::take(self) {
            Hold::While(held) => held,
            Hold::Free | Hold::Until(_) => Vec::new(),
        };
        for xid in xids {
            if !held.contains(xid) {
                held.push(*xid);
            }
        }
        *self = Hold::While(held);
    }

    /// Whether a walsender started after `after` (what the consumer confirmed) may stream, with
    /// the source showing which transactions run (`running`) and, read after that, where its
    /// WAL ends (`inserted`).
    pub fn streams(&mut self, after: Lsn, running: impl Fn(u32) -> bool, inserted: Lsn) -> bool {
        if let Hold::While(xids) = self {
            if xids.iter().any(|xid| running(*xid)) {
                return false;
            }
            // Every one of them ended, their last record before `inserted`.
            *self = Hold::Until(inserted);
        }
        if let Hold::Until(past) = self {
            if after < *past {
                return false;
            }
            *self = Hold::Free;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Hold, Lsn};

    #[test]
    fn streaming_waits_for_the_unwound_transactions_to_end_and_the_consumer_to_pass_them() {
        let mut hold = Hold::default();
        assert!(hold.streams(Lsn(10), |_| true, Lsn(20)));
        hold.unwound(&[7]);
        hold.unwound(&[7, 8]);
        assert_eq!(hold, Hold::While(vec![7, 8]));
        // While one of them runs, however far the consumer is.
        assert!(!hold.streams(Lsn(1000), |xid| xid == 8, Lsn(2000)));
        assert_eq!(hold, Hold::While(vec![7, 8]));
        // Both ended: the consumer must pass the WAL as it stood then.
        assert!(!hold.streams(Lsn(1000), |_| false, Lsn(2000)));
        assert_eq!(hold, Hold::Until(Lsn(2000)));
        assert!(!hold.streams(Lsn(1999), |_| true, Lsn(3000)));
        assert!(hold.streams(Lsn(2000), |_| true, Lsn(3000)));
        assert_eq!(hold, Hold::Free);
        // An unwind while waiting for the consumer waits for the new one again.
        hold.unwound(&[9]);
        assert!(!hold.streams(Lsn(5000), |xid| xid == 9, Lsn(6000)));
        let mut waiting = Hold::Until(Lsn(100));
        waiting.unwound(&[3]);
        assert_eq!(waiting, Hold::While(vec![3]));
    }
}
