//! How every transient failure is retried, in one place: a bounded number of tries, a pause that
//! doubles up to a cap. Only failures `is_transient` calls transient (a restart, a dropped
//! connection, a serialization failure) are retried; the caller decides that, this counts and
//! waits.

use std::time::Duration;

/// The tries left and the next pause.
#[derive(Clone, Debug)]
pub struct Retry {
    left: u32,
    pause: Duration,
    first: Duration,
    cap: Duration,
    tries: u32,
}

impl Retry {
    /// What the agents use for a database or the bus restarting under them: 40 tries, from
    /// 200 ms doubling to 3 s (about two minutes in all).
    pub fn transient() -> Self {
        Self::new(40, Duration::from_millis(200), Duration::from_secs(3))
    }

    /// `tries` tries, pausing `first`, then twice as long each time up to `cap`.
    pub fn new(tries: u32, first: Duration, cap: Duration) -> Self {
        Self {
            left: tries,
            pause: first,
            first,
            cap,
            tries,
        }
    }

    /// Waits before the next try and says whether one remains (false: give up, nothing waited).
    pub async fn pause(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        tokio::time::sleep(self.pause).await;
        self.pause = (self.pause * 2).min(self.cap);
        true
    }

    /// The pause the next try waits.
    pub fn next_pause(&self) -> Duration {
        self.pause
    }

    /// After a success: the full count of tries again, from the first pause.
    pub fn reset(&mut self) {
        self.left = self.tries;
        self.pause = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tries_are_counted_and_pauses_double_to_the_cap() {
        let mut retry = Retry::new(3, Duration::from_millis(1), Duration::from_micros(2500));
        let mut pauses = Vec::new();
        loop {
            pauses.push(retry.next_pause());
            if !retry.pause().await {
                break;
            }
        }
        assert_eq!(
            pauses,
            [1000, 2000, 2500, 2500].map(Duration::from_micros).to_vec()
        );
        retry.reset();
        assert!(retry.pause().await);
    }
}
