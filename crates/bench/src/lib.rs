//! Benchmarks of maskbus. `benches/` holds criterion micro-benchmarks of the pure crates;
//! `src/bin/` holds whole-system measurements that print every figure next to a baseline measured
//! in the same run (these machines are noisy, so only ratios travel). `scripts/bench` runs them.

use std::time::Duration;

/// The median of a few timings.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
