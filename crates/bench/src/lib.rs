//! Benchmarks only: see `benches/`. Run them with `cargo bench -p maskbus-bench` or `scripts/bench`.
