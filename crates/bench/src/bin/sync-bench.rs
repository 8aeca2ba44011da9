//! The whole-system view: maskbus sync against the physical limit of moving the same rows, at
//! several sizes, with the agents' peak memory, and the wire audit over the bus the largest sync
//! produced.
//!
//! For each size profile: seed a fresh source; copy every bank table into an empty copy of the
//! schema with `COPY ... TO STDOUT` streamed into `COPY ... FROM STDIN` (unmasked, no bus: the
//! baseline); then run the real `maskbus` binary, producer in the background and consumer
//! `--once`, into an empty target through an empty bus. Peak RSS (VmHWM) of both processes is
//! read from /proc while they run. Prints one JSON object per line.

use anyhow::Result;
use bytes::Bytes;
use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use maskbus_bank::{Profile, SeedOptions};
use maskbus_bench::{fresh_database, url_for};
use maskbus_pg::{apply_migrations, Target};
use serde_json::json;
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    #[arg(long, env = "DATABASE_URL")]
    url: String,
    /// The maskbus binary to measure (a release build).
    #[arg(long)]
    maskbus: String,
    /// Seed profiles, smallest first.
    #[arg(long, value_delimiter = ',', default_value = "small,medium,large")]
    profiles: Vec<String>,
    /// Where to write the agents' configs.
    #[arg(long, default_value = "target/bench")]
    work: String,
}

async fn copy_tables(source: &Target, copy: &Target) -> Result<u64> {
    let from = source.connect().await?;
    let to = copy.connect().await?;
    let mut rows = 0;
    for table in maskbus_bank::TABLES {
        let out = from.copy_out(&format!("COPY {table} TO STDOUT")).await?;
        let sink = to
            .copy_in::<_, Bytes>(&format!("COPY {table} FROM STDIN"))
            .await?;
        futures_util::pin_mut!(out);
        futures_util::pin_mut!(sink);
        while let Some(chunk) = out.next().await {
            sink.send(chunk?).await?;
        }
        rows += sink.finish().await?;
    }
    Ok(rows)
}

/// Peak resident set (VmHWM) of a running process, in kB.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.work)?;
    let mut last_bus = None;
    for name in &args.profiles {
        let profile = Profile::built_in(name)?;
        let source = fresh_database(&args.url, "mbb_source").await?;
        let copy = fresh_database(&args.url, "mbb_copy").await?;
        let target = fresh_database(&args.url, "mbb_target").await?;
        let bus = fresh_database(&args.url, &format!("mbb_bus_{name}")).await?;
        for db in [&source, &copy, &target] {
            apply_migrations(db, maskbus_bank::MIGRATIONS).await?;
        }
        apply_migrations(&bus, maskbus_mailbox::MIGRATIONS).await?;
        let seeded = maskbus_bank::seed(
            &source,
            &SeedOptions {
                profile,
                seed: 42,
                append: false,
                reset: false,
            },
            &mut |_| {},
        )
        .await?;
        let rows: u64 = seeded.rows.iter().map(|(_, n)| n).sum();
        source
            .connect()
            .await?
            .batch_execute("VACUUM ANALYZE")
            .await?;

        let started = Instant::now();
        let copied = copy_tables(&source, &copy).await?;
        let copy_time = started.elapsed();
        anyhow::ensure!(copied == rows, "copied {copied} of {rows} rows");

        let producer_config = format!("{}/producer.toml", args.work);
        let consumer_config = format!("{}/consumer.toml", args.work);
        std::fs::write(&producer_config, format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npseudonym_key = \"bench\"\n",
            url_for(&args.url, &format!("mbb_bus_{name}")), url_for(&args.url, "mbb_source")))?;
        std::fs::write(
            &consumer_config,
            format!(
                "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\n",
                url_for(&args.url, &format!("mbb_bus_{name}")),
                url_for(&args.url, "mbb_target")
            ),
        )?;
        let spawn =
            |extra: &[&str], config: &str| maskbus_bench::spawn_agent(&args.maskbus, config, extra);
        let producer = spawn(&[], &producer_config)?;
        let started = Instant::now();
        let mut consumer = spawn(&["--once"], &consumer_config)?;
        let (mut producer_peak, mut consumer_peak) = (0, 0);
        let status = loop {
            if let Some(status) = consumer.try_wait()? {
                break status;
            }
            consumer_peak = consumer_peak.max(peak_rss_kb(consumer.id()).unwrap_or(0));
            producer_peak = producer_peak.max(peak_rss_kb(producer.id()).unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let sync_time = started.elapsed();
        producer_peak = producer_peak.max(peak_rss_kb(producer.id()).unwrap_or(0));
        maskbus_bench::stop_agent(producer)?;
        anyhow::ensure!(status.success(), "the consumer failed");
        let synced: i64 = maskbus_bank::row_counts(&target)
            .await?
            .iter()
            .map(|(_, n)| n)
            .sum();
        anyhow::ensure!(synced as u64 == rows, "synced {synced} of {rows} rows");

        println!(
            "{}",
            json!({
                "bench": "sync", "profile": name, "rows": rows,
                "copy_seconds": copy_time.as_secs_f64(), "sync_seconds": sync_time.as_secs_f64(),
                "copy_rows_per_s": rows as f64 / copy_time.as_secs_f64(),
                "sync_rows_per_s": rows as f64 / sync_time.as_secs_f64(),
                "sync_us_per_row": sync_time.as_secs_f64() * 1e6 / rows as f64,
                "producer_peak_rss_mb": producer_peak as f64 / 1024.0,
                "consumer_peak_rss_mb": consumer_peak as f64 / 1024.0,
            })
        );
        if let Some(previous) = last_bus.replace(name.clone()) {
            maskbus_bench::drop_database(&args.url, &format!("mbb_bus_{previous}")).await?;
        }
    }
    // The wire audit over the bus the largest sync produced.
    if let Some(name) = last_bus {
        let bus = Target::parse("bus", &url_for(&args.url, &format!("mbb_bus_{name}")))?;
        let trio = maskbus_bench::measure_audit(&bus, 3).await?;
        println!(
            "{}",
            json!({
                "bench": "wire_audit", "profile": name, "messages": trio.messages, "megabytes": trio.bytes as f64 / 1e6,
                "read_mb_s": trio.mb_per_s(trio.read), "sql_mb_s": trio.mb_per_s(trio.sql), "audit_mb_s": trio.mb_per_s(trio.audit),
            })
        );
        for db in [
            "mbb_source",
            "mbb_copy",
            "mbb_target",
            &format!("mbb_bus_{name}"),
        ] {
            maskbus_bench::drop_database(&args.url, db).await?;
        }
    }
    Ok(())
}
