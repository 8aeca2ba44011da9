//! The whole-system view: maskbus sync against the physical limit of moving the same rows, at
//! several sizes, with the agents' peak memory, and the wire audit over the bus the largest sync
//! produced.
//!
//! For each size profile: seed a fresh source; copy every bank table into an empty copy of the
//! schema with `COPY ... TO STDOUT` streamed into `COPY ... FROM STDIN` (unmasked, no bus: the
//! baseline); then run the real `maskbus` binary, producer in the background and consumer
//! `--once`, into an empty target through an empty bus. Peak RSS (VmHWM) of both processes is
//! read from /proc while they run. Prints one JSON object per line.
//!
//! The full copy and its baseline (`pg_dump | pg_restore`) are run `--repeats` times, one after
//! the other, and compared by their medians: these machines' speed drifts by a third within
//! minutes, and a ratio of two single runs taken a minute apart says more about the drift. So
//! are the no-change delta passes, with the check for deletes that ends each watermark pass and
//! without it (`follow_deletes = false`).

use anyhow::Result;
use bytes::Bytes;
use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use maskbus_bench::{fresh_database, url_for};
use maskbus_bench::{BANK_POLICY, BENCH_KEY};
use maskbus_pg::{apply_migrations, Database};
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
    /// How many times the full copy and pg_dump | pg_restore run, in turn (medians are kept).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
}

/// The middle value (the upper one of an even count).
fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs.get(runs.len() / 2).copied().unwrap_or_default()
}

async fn copy_tables(source: &Database, copy: &Database) -> Result<u64> {
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

/// `pg_dump -Fc -Z0 source | pg_restore -d empty`: what users compare a full copy with
/// (schema, data, indexes and foreign keys; unmasked). Returns the seconds it took.
fn dump_restore(url: &str, source: &str, empty: &str) -> Result<Duration> {
    let started = Instant::now();
    let status = std::process::Command::new("bash")
        .args([
            "-o",
            "pipefail",
            "-c",
            "pg_dump -Fc -Z0 \"$1\" | pg_restore --no-owner -d \"$2\"",
            "dump-restore",
            &url_for(url, source),
            &url_for(url, empty),
        ])
        .status()?;
    anyhow::ensure!(status.success(), "pg_dump | pg_restore failed");
    Ok(started.elapsed())
}

/// Runs the agents until every consumer exits (producers in the background, SIGTERM after),
/// reading their peak RSS meanwhile. Returns the time and (producer, consumer) peaks in kB.
fn run_agents(
    maskbus: &str,
    producers: &[String],
    consumers: &[String],
) -> Result<(Duration, u64, u64)> {
    let mut running_producers = producers
        .iter()
        .map(|c| maskbus_bench::spawn_agent(maskbus, c, &[]))
        .collect::<Result<Vec<_>>>()?;
    let started = Instant::now();
    let mut running = consumers
        .iter()
        .map(|c| maskbus_bench::spawn_agent(maskbus, c, &["--once"]))
        .collect::<Result<Vec<_>>>()?;
    let (mut producer_peak, mut consumer_peak) = (0, 0);
    let mut done = vec![None; running.len()];
    while done.iter().any(Option::is_none) {
        for (i, consumer) in running.iter_mut().enumerate() {
            if done[i].is_none() {
                consumer_peak = consumer_peak.max(peak_rss_kb(consumer.id()).unwrap_or(0));
                if let Some(status) = consumer.try_wait()? {
                    done[i] = Some((status, started.elapsed()));
                }
            }
        }
        for producer in &running_producers {
            producer_peak = producer_peak.max(peak_rss_kb(producer.id()).unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for producer in running_producers.drain(..) {
        maskbus_bench::stop_agent(producer)?;
    }
    let mut elapsed = Duration::ZERO;
    for (status, took) in done.into_iter().flatten() {
        anyhow::ensure!(status.success(), "a consumer failed");
        elapsed = elapsed.max(took);
    }
    Ok((elapsed, producer_peak, consumer_peak))
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
        let source = fresh_database(&args.url, "mbb_source").await?;
        let copy = fresh_database(&args.url, "mbb_copy").await?;
        let target = fresh_database(&args.url, "mbb_target").await?;
        let bus = fresh_database(&args.url, &format!("mbb_bus_{name}")).await?;
        for db in [&source, &copy, &target] {
            apply_migrations(db, maskbus_bank::MIGRATIONS).await?;
        }
        maskbus_mailbox::install(&bus).await?;
        let rows = maskbus_bench::seed_bank(&source, name).await?;

        let started = Instant::now();
        let copied = copy_tables(&source, &copy).await?;
        let copy_time = started.elapsed();
        anyhow::ensure!(copied == rows, "copied {copied} of {rows} rows");

        let bus_name = format!("mbb_bus_{name}");
        let agent_config =
            |file: &str, text: String| maskbus_bench::write_config(&args.work, file, text);
        let producer_config = agent_config("producer.toml", format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{BANK_POLICY}\"\npseudonym_key = \"{BENCH_KEY}\"\n",
            url_for(&args.url, &bus_name), url_for(&args.url, "mbb_source")))?;
        let consumer_config_with = |target: &str, workers: u32, worker: u32, extra: &str| {
            agent_config(
                &format!("consumer-{target}-{worker}.toml"),
                format!(
                    "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nallow_superuser_target = true\nworkers = {workers}\nworker = {worker}\n{extra}",
                    url_for(&args.url, &bus_name),
                    url_for(&args.url, target)
                ),
            )
        };
        let consumer_config = |target: &str, workers: u32, worker: u32| {
            consumer_config_with(target, workers, worker, "")
        };
        // One range per table: what the sync did before it read a table in ranges.
        let one = consumer_config_with("mbb_target", 1, 1, "streams = 1\n")?;
        // In turn: what users compare a full copy with (pg_dump | pg_restore into an empty
        // database), then the sync into an empty target through an empty bus.
        let (mut dumps, mut syncs) = (Vec::new(), Vec::new());
        let (mut producer_peak, mut consumer_peak) = (0, 0);
        for repeat in 0..args.repeats.max(1) {
            let dumped = fresh_database(&args.url, "mbb_dump").await?;
            drop(dumped);
            dumps.push(dump_restore(&args.url, "mbb_source", "mbb_dump")?);
            maskbus_bench::drop_database(&args.url, "mbb_dump").await?;
            if repeat > 0 {
                let target = fresh_database(&args.url, "mbb_target").await?;
                apply_migrations(&target, maskbus_bank::MIGRATIONS).await?;
                let bus = fresh_database(&args.url, &bus_name).await?;
                maskbus_mailbox::install(&bus).await?;
            }
            let (took, producer, consumer) = run_agents(
                &args.maskbus,
                std::slice::from_ref(&producer_config),
                std::slice::from_ref(&one),
            )?;
            syncs.push(took);
            producer_peak = producer_peak.max(producer);
            consumer_peak = consumer_peak.max(consumer);
        }
        let runs = |d: &[Duration]| d.iter().map(Duration::as_secs_f64).collect::<Vec<_>>();
        let (dump_runs, sync_runs) = (runs(&dumps), runs(&syncs));
        let (dump_time, sync_time) = (median(dumps), median(syncs));
        let synced: i64 = maskbus_bank::row_counts(&target)
            .await?
            .iter()
            .map(|(_, n)| n)
            .sum();
        anyhow::ensure!(synced as u64 == rows, "synced {synced} of {rows} rows");
        // A delta pass with no change at all: what a follow loop pays every interval, with the
        // check for deletes that ends it (the default) and without it (`follow_deletes = false`),
        // in turn, medians of `--repeats`.
        let unchecked = agent_config(
            "consumer-mbb_target-no-delete-check.toml",
            format!(
                "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nallow_superuser_target = true\nstreams = 1\nfollow_deletes = false\n",
                url_for(&args.url, &bus_name),
                url_for(&args.url, "mbb_target")
            ),
        )?;
        let (mut checked_runs, mut unchecked_runs) = (Vec::new(), Vec::new());
        for _ in 0..args.repeats.max(1) {
            for (config, runs) in [(&unchecked, &mut unchecked_runs), (&one, &mut checked_runs)] {
                let (took, _, _) = run_agents(
                    &args.maskbus,
                    std::slice::from_ref(&producer_config),
                    std::slice::from_ref(config),
                )?;
                runs.push(took);
            }
        }
        let delta_time = median(checked_runs);
        let delta_unchecked_time = median(unchecked_runs);

        // Scale-out: two producers on one mailbox, two consumer workers on one target.
        let scaled = fresh_database(&args.url, "mbb_target2").await?;
        apply_migrations(&scaled, maskbus_bank::MIGRATIONS).await?;
        let workers = [
            consumer_config("mbb_target2", 2, 1)?,
            consumer_config("mbb_target2", 2, 2)?,
        ];
        let (scaled_time, _, _) = run_agents(
            &args.maskbus,
            &[producer_config.clone(), producer_config.clone()],
            &workers,
        )?;
        let scaled_rows: i64 = maskbus_bank::row_counts(&scaled)
            .await?
            .iter()
            .map(|(_, n)| n)
            .sum();
        anyhow::ensure!(
            scaled_rows as u64 == rows,
            "two workers synced {scaled_rows} of {rows} rows"
        );
        maskbus_bench::drop_database(&args.url, "mbb_target2").await?;

        // Each large table in two key ranges side by side, one producer and one consumer.
        let ranged = fresh_database(&args.url, "mbb_target3").await?;
        apply_migrations(&ranged, maskbus_bank::MIGRATIONS).await?;
        let two_streams = consumer_config_with("mbb_target3", 1, 1, "streams = 2\n")?;
        let (ranged_time, _, _) = run_agents(
            &args.maskbus,
            std::slice::from_ref(&producer_config),
            &[two_streams],
        )?;
        maskbus_bench::drop_database(&args.url, "mbb_target3").await?;

        println!(
            "{}",
            json!({
                "bench": "sync", "profile": name, "rows": rows,
                "copy_seconds": copy_time.as_secs_f64(), "sync_seconds": sync_time.as_secs_f64(),
                "dump_restore_seconds": dump_time.as_secs_f64(),
                "sync_runs": sync_runs, "dump_restore_runs": dump_runs,
                "dump_restore_rows_per_s": rows as f64 / dump_time.as_secs_f64(),
                "delta_seconds": delta_time.as_secs_f64(),
                "delta_no_delete_check_seconds": delta_unchecked_time.as_secs_f64(),
                "two_workers_seconds": scaled_time.as_secs_f64(),
                "two_streams_seconds": ranged_time.as_secs_f64(),
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
        let bus = Database::parse("bus", &url_for(&args.url, &format!("mbb_bus_{name}")))?;
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
