//! How long a nacked message waits before its next attempt.

use std::time::Duration;

/// `base * 2^(attempts - 1)`, capped: 1 s, 2 s, 4 s ... for a base of one second. Pure, so the
/// schedule is the same on every receiver and easy to test.
pub fn backoff(attempts: u32, base: Duration, cap: Duration) -> Duration {
    let doublings = attempts.saturating_sub(1).min(30);
    base.saturating_mul(1u32 << doublings).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_then_caps() {
        let s = Duration::from_secs;
        let schedule: Vec<_> = (1..=8).map(|n| backoff(n, s(1), s(60))).collect();
        assert_eq!(
            schedule,
            [s(1), s(2), s(4), s(8), s(16), s(32), s(60), s(60)]
        );
        assert_eq!(backoff(0, s(1), s(60)), s(1));
        assert_eq!(backoff(u32::MAX, s(1), s(60)), s(60));
    }
}
