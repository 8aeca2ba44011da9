//! Benchmarks of maskbus. `benches/` holds criterion micro-benchmarks of the pure crates;
//! `src/bin/` holds whole-system measurements that print every figure next to a baseline measured
//! in the same run (these machines are noisy, so only ratios travel). `scripts/bench` runs them.
//!
//! `chart` draws the ratios as an SVG chart for BENCHMARKS.md.

pub mod chart;

/// The benchmarks' pseudonym key (32 bytes or more, like every configured key; not the demo's).
pub const BENCH_KEY: &str = "c855a427190403e266ce806f8e87cf3fcc7dac7049d469ffff04fc138cf2f62f";

/// The bank's policy, the demo's file, which the benchmarks' producers serve.
pub const BANK_POLICY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../policies/bank.toml");

use futures_util::StreamExt;
use maskbus_pg::Database;
use std::time::{Duration, Instant};

/// Starts `maskbus run --config CONFIG [extra]` with warnings only on stderr, or the filter
/// `MASKBUS_BENCH_LOG` names (`debug`, say, for the agents' own timings of a run).
pub fn spawn_agent(
    maskbus: &str,
    config: &str,
    extra: &[&str],
) -> anyhow::Result<std::process::Child> {
    use anyhow::Context;
    std::process::Command::new(maskbus)
        .args(["run", "--config", config])
        .args(extra)
        .env(
            "MASKBUS_LOG",
            std::env::var("MASKBUS_BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {maskbus}"))
}

/// SIGTERM to an agent, then waits for it (the producer finishes the request in flight).
/// `maskbus ARGS` run to its end and timed (warnings only, stdout dropped); fails unless it
/// exits 0.
pub fn timed(maskbus: &str, args: &[&str]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = std::process::Command::new(maskbus)
        .args(args)
        .env("MASKBUS_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .status()?;
    anyhow::ensure!(status.success(), "maskbus {} failed", args.join(" "));
    Ok(started.elapsed())
}

pub fn stop_agent(mut agent: std::process::Child) -> anyhow::Result<()> {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &agent.id().to_string()])
        .status();
    agent.wait()?;
    Ok(())
}

/// The median of a few timings.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The URL of database `db` on the server of `url`.
pub fn url_for(url: &str, db: &str) -> String {
    let (head, _) = url.rsplit_once('/').unwrap_or((url, ""));
    format!("{head}/{db}")
}

/// Drops and creates `db`, returning its target.
pub async fn fresh_database(url: &str, db: &str) -> anyhow::Result<Database> {
    let admin = Database::parse("bench", &url_for(url, "postgres"))?
        .connect()
        .await?;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await?;
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await?;
    Ok(Database::parse("bench", &url_for(url, db))?)
}

/// Seeds the bank into `source` (its schema applied already) with `profile` and seed 42, then
/// vacuums it as a long-lived production table would be. Returns the rows written.
pub async fn seed_bank(source: &Database, profile: &str) -> anyhow::Result<u64> {
    let seeded = maskbus_bank::seed(
        source,
        &maskbus_bank::SeedOptions {
            profile: maskbus_bank::Profile::built_in(profile)?,
            seed: 42,
            append: false,
            reset: false,
        },
        &mut |_| {},
    )
    .await?;
    source
        .connect()
        .await?
        .batch_execute("VACUUM ANALYZE")
        .await?;
    Ok(seeded.rows.iter().map(|(_, n)| n).sum())
}

/// Writes an agent's config into `work`, returning its path.
pub fn write_config(work: &str, file: &str, text: String) -> anyhow::Result<String> {
    let path = format!("{work}/{file}");
    std::fs::write(&path, text)?;
    Ok(path)
}

pub async fn drop_database(url: &str, db: &str) -> anyhow::Result<()> {
    let admin = Database::parse("bench", &url_for(url, "postgres"))?
        .connect()
        .await?;
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await?;
    Ok(())
}

/// The audit's figures on one bus: body bytes, and the median seconds of reading the bodies
/// (COPY to stdout), of the design's SQL one-liner, and of the wire audit.
pub struct AuditTrio {
    pub bytes: u64,
    pub messages: u64,
    pub read: Duration,
    pub sql: Duration,
    pub audit: Duration,
}

impl AuditTrio {
    pub fn mb_per_s(&self, d: Duration) -> f64 {
        self.bytes as f64 / 1e6 / d.as_secs_f64()
    }
}

pub async fn measure_audit(bus: &Database, runs: usize) -> anyhow::Result<AuditTrio> {
    let client = bus.connect().await?;
    let (mut read, mut sql, mut audit) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bytes, mut messages) = (0u64, 0u64);
    for _ in 0..runs {
        let started = Instant::now();
        let stream = client
            .copy_out("COPY (SELECT body::text FROM mq.messages UNION ALL SELECT body::text FROM mq.archive UNION ALL SELECT body::text FROM mq.dead_letters) TO STDOUT")
            .await?;
        futures_util::pin_mut!(stream);
        while let Some(chunk) = stream.next().await {
            chunk?;
        }
        read.push(started.elapsed());

        let started = Instant::now();
        let _: i64 = client
            .query_one(maskbus_wire_audit::SQL_ONE_LINER, &[])
            .await?
            .get(0);
        sql.push(started.elapsed());

        let started = Instant::now();
        let report = maskbus_wire_audit::run(
            bus,
            maskbus_audit::Context::default(),
            false,
            &mut |_, _| {},
            &mut |_| {},
        )
        .await?;
        audit.push(started.elapsed());
        anyhow::ensure!(
            report.findings == 0,
            "the audit found {} findings on clean traffic",
            report.findings
        );
        bytes = report.bytes;
        messages = report.scanned;
    }
    Ok(AuditTrio {
        bytes,
        messages,
        read: median(read),
        sql: median(sql),
        audit: median(audit),
    })
}
