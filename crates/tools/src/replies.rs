//! The replies a producer's tools built, kept by handle until `mailbox_send` sends them: the
//! producer's side of `mailbox_send` takes a handle, never a body, so what a model makes the
//! producer send is always a [`Reply`] the producer's own code built (tracker issue 51).

use maskbus_producer::reply::Reply;
use std::collections::VecDeque;
use std::sync::Mutex;

/// The most replies kept at once: past it, the oldest is dropped (its handle then names
/// nothing). Each holds at most `MAX_TOOL_ROWS` masked rows.
pub const MAX_HELD_REPLIES: usize = 64;

/// Replies by handle, oldest first; a handle is sent once (taken out when sent).
#[derive(Default)]
pub(crate) struct Replies {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// The number of the next handle: handles are never reused within a process.
    next: u64,
    replies: VecDeque<(String, Reply)>,
}

impl Replies {
    /// Keeps `reply` and returns its new handle, dropping the oldest past [`MAX_HELD_REPLIES`].
    pub(crate) fn keep(&self, reply: Reply) -> String {
        let mut held = self.lock();
        held.next += 1;
        let handle = format!("r-{}", held.next);
        held.push(handle.clone(), reply);
        handle
    }

    /// Takes the reply under `handle` out: it is sent once. `None` if the handle was never
    /// given, was sent already, or was dropped as the oldest.
    pub(crate) fn take(&self, handle: &str) -> Option<Reply> {
        let mut held = self.lock();
        let at = held.replies.iter().position(|(h, _)| h == handle)?;
        held.replies.remove(at).map(|(_, reply)| reply)
    }

    /// Puts a taken reply back under its handle, as the newest (its send failed on the bus).
    pub(crate) fn put_back(&self, handle: String, reply: Reply) {
        self.lock().push(handle, reply);
    }

    /// How many replies are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        // A panic while holding the lock leaves the queue whole: every change is one push or
        // one remove.
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Held {
    fn push(&mut self, handle: String, reply: Reply) {
        while self.replies.len() >= MAX_HELD_REPLIES {
            self.replies.pop_front();
        }
        self.replies.push_back((handle, reply));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A reply that says which it is.
    fn reply(name: &str) -> Reply {
        Reply::Entities {
            v: maskbus_protocol::VERSION,
            entities: vec![name.to_string()],
            keys: BTreeMap::new(),
            schema: None,
            rules: BTreeMap::new(),
        }
    }

    fn name(reply: &Reply) -> &str {
        match reply {
            Reply::Entities { entities, .. } => &entities[0],
            other => panic!("not a test reply: {other:?}"),
        }
    }

    #[test]
    fn a_handle_gives_back_its_own_reply_once() {
        let replies = Replies::default();
        let a = replies.keep(reply("a"));
        let b = replies.keep(reply("b"));
        assert_ne!(a, b);
        assert_eq!(name(&replies.take(&b).unwrap()), "b");
        assert!(replies.take(&b).is_none(), "a handle is sent once");
        assert_eq!(name(&replies.take(&a).unwrap()), "a");
        assert_eq!(replies.len(), 0);
    }

    #[test]
    fn unknown_handles_name_nothing() {
        let replies = Replies::default();
        let kept = replies.keep(reply("a"));
        for unknown in ["", "r-0", "r-2", "r-1 ", "R-1", "{\"type\":\"schema\"}"] {
            assert!(replies.take(unknown).is_none(), "{unknown:?}");
        }
        assert!(replies.take(&kept).is_some());
    }

    #[test]
    fn the_oldest_is_dropped_past_the_bound() {
        let replies = Replies::default();
        let handles: Vec<String> = (0..MAX_HELD_REPLIES + 3)
            .map(|i| replies.keep(reply(&i.to_string())))
            .collect();
        assert_eq!(replies.len(), MAX_HELD_REPLIES);
        for dropped in &handles[..3] {
            assert!(replies.take(dropped).is_none(), "{dropped} was evicted");
        }
        let newest = handles.last().unwrap();
        assert_eq!(
            name(&replies.take(newest).unwrap()),
            (MAX_HELD_REPLIES + 2).to_string()
        );
        assert_eq!(name(&replies.take(&handles[3]).unwrap()), "3");
    }

    #[test]
    fn a_reply_put_back_is_kept_as_the_newest() {
        let replies = Replies::default();
        let first = replies.keep(reply("first"));
        let taken = replies.take(&first).unwrap();
        for i in 0..MAX_HELD_REPLIES - 1 {
            replies.keep(reply(&i.to_string()));
        }
        replies.put_back(first.clone(), taken);
        // The next keep drops the oldest other reply, not the one put back.
        replies.keep(reply("last"));
        assert_eq!(replies.len(), MAX_HELD_REPLIES);
        assert_eq!(name(&replies.take(&first).unwrap()), "first");
    }

    #[test]
    fn handles_are_never_reused() {
        let replies = Replies::default();
        let a = replies.keep(reply("a"));
        replies.take(&a).unwrap();
        let b = replies.keep(reply("b"));
        assert_ne!(a, b);
        assert!(replies.take(&a).is_none());
    }
}
