//! The sync on a schema it was not built for: the schema zoo (tests/fixtures/zoo: composite,
//! uuid, text and policy-named keys, a 10,000-deep self-reference, cycles, a partitioned table,
//! two schemas, every column type), against `COPY | COPY` of the same tables in the same run.
//!
//! The baseline copies every table of the zoo policy, unmasked and without a bus, into an empty
//! copy of the schema in one transaction with `session_replication_role = replica` (foreign-key
//! triggers off, as `pg_restore --disable-triggers` does: table-by-table COPY cannot load a
//! cycle otherwise). maskbus then runs for real, producer in the background and consumer
//! `--once`, into an empty target through an empty bus. Prints one JSON line, median of runs.
//!
//! And the schema alone: an empty test database made from the zoo's schema through the bus
//! (the producer serves it, the consumer creates it; the source holds no rows, so the pass after
//! moves none), against `pg_dump --schema-only | psql` of the same source, in the same run.

use anyhow::Result;
use bytes::Bytes;
use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use maskbus_bench::BENCH_KEY;
use maskbus_bench::{fresh_database, median, url_for};
use maskbus_pg::{Database, TableRef};
use serde_json::json;
use std::time::{Duration, Instant};

const SCHEMA: &str = include_str!("../../../../tests/fixtures/zoo/schema.sql");
const DATA: &str = include_str!("../../../../tests/fixtures/zoo/data.sql");
const POLICY: &str = include_str!("../../../../tests/fixtures/zoo/policy.toml");

#[derive(Parser)]
struct Args {
    #[arg(long, env = "DATABASE_URL")]
    url: String,
    /// The maskbus binary to measure (a release build).
    #[arg(long)]
    maskbus: String,
    /// Runs of each path; the median is printed.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    #[arg(long, default_value = "target/bench")]
    work: String,
}

/// Copies each table's columns (those the policy names: generated ones are computed again, and a
/// partitioned table is read through a query).
async fn copy_tables(
    source: &Database,
    copy: &Database,
    tables: &[(TableRef, Vec<String>)],
) -> Result<u64> {
    let from = source.connect().await?;
    let mut to = copy.connect().await?;
    let tx = to.transaction().await?;
    tx.batch_execute("SET LOCAL session_replication_role = replica")
        .await?;
    let mut rows = 0;
    for (table, columns) in tables {
        let list = columns
            .iter()
            .map(|c| maskbus_pg::quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ");
        let out = from
            .copy_out(&format!(
                "COPY (SELECT {list} FROM {}) TO STDOUT",
                table.sql()
            ))
            .await?;
        let sink = tx
            .copy_in::<_, Bytes>(&format!("COPY {} ({list}) FROM STDIN", table.sql()))
            .await?;
        futures_util::pin_mut!(out);
        futures_util::pin_mut!(sink);
        while let Some(chunk) = out.next().await {
            sink.send(chunk?).await?;
        }
        rows += sink.finish().await?;
    }
    tx.commit().await?;
    Ok(rows)
}

/// The producer's and the consumer's configs, named `{name}-producer.toml` and
/// `{name}-consumer.toml`, over bus `mbz_bus`.
fn write_configs(
    args: &Args,
    name: &str,
    policy_path: &str,
    source: &str,
    target: &str,
) -> Result<(String, String)> {
    let producer = format!("{}/{name}-producer.toml", args.work);
    let consumer = format!("{}/{name}-consumer.toml", args.work);
    std::fs::write(
        &producer,
        format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{policy_path}\"\npseudonym_key = \"{BENCH_KEY}\"\n",
            url_for(&args.url, "mbz_bus"),
            url_for(&args.url, source)
        ),
    )?;
    std::fs::write(
        &consumer,
        format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nallow_superuser_target = true\nall_or_nothing = true\n",
            url_for(&args.url, "mbz_bus"),
            url_for(&args.url, target)
        ),
    )?;
    Ok((producer, consumer))
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.work)?;
    let policy = maskbus_mask::Policy::from_toml("zoo", POLICY)?;
    let tables: Vec<(TableRef, Vec<String>)> = policy
        .entities()
        .map(|(n, rules)| {
            (
                TableRef::parse(n),
                rules.columns().map(|(c, _)| c.to_string()).collect(),
            )
        })
        .collect();
    let source = fresh_database(&args.url, "mbz_source").await?;
    {
        let client = source.connect().await?;
        client.batch_execute(SCHEMA).await?;
        client.batch_execute(DATA).await?;
        client.batch_execute("VACUUM ANALYZE").await?;
    }
    let policy_path = format!("{}/zoo-policy.toml", args.work);
    std::fs::write(&policy_path, POLICY)?;
    let (mut copies, mut syncs, mut rows) = (Vec::new(), Vec::new(), 0);
    for _ in 0..args.runs.max(1) {
        let copy = fresh_database(&args.url, "mbz_copy").await?;
        copy.connect().await?.batch_execute(SCHEMA).await?;
        let started = Instant::now();
        rows = copy_tables(&source, &copy, &tables).await?;
        copies.push(started.elapsed());

        let target = fresh_database(&args.url, "mbz_target").await?;
        target.connect().await?.batch_execute(SCHEMA).await?;
        let bus = fresh_database(&args.url, "mbz_bus").await?;
        maskbus_mailbox::install(&bus).await?;
        let (producer_config, consumer_config) =
            write_configs(&args, "zoo", &policy_path, "mbz_source", "mbz_target")?;
        let spawn =
            |extra: &[&str], config: &str| maskbus_bench::spawn_agent(&args.maskbus, config, extra);
        let producer = spawn(&[], &producer_config)?;
        let started = Instant::now();
        let status = spawn(&["--once"], &consumer_config)?.wait()?;
        syncs.push(started.elapsed());
        maskbus_bench::stop_agent(producer)?;
        anyhow::ensure!(status.success(), "the consumer failed on the zoo");
        let client = target.connect().await?;
        let mut synced = 0;
        for (table, _) in &tables {
            synced += maskbus_pg::catalog::count_rows(&target, &client, table).await? as u64;
        }
        anyhow::ensure!(synced == rows, "synced {synced} of {rows} zoo rows");
    }
    // The schema alone, through the bus and through pg_dump | psql.
    let schema_source = fresh_database(&args.url, "mbz_schema_source").await?;
    schema_source.connect().await?.batch_execute(SCHEMA).await?;
    let (mut by_bus, mut by_dump) = (Vec::new(), Vec::new());
    for _ in 0..args.runs.max(1) {
        let copy = fresh_database(&args.url, "mbz_schema_copy").await?;
        let started = Instant::now();
        let dump = std::process::Command::new("pg_dump")
            .args([
                "--schema-only",
                "--no-owner",
                &url_for(&args.url, "mbz_schema_source"),
            ])
            .output()?;
        anyhow::ensure!(dump.status.success(), "pg_dump failed");
        let mut psql = std::process::Command::new("psql")
            .args([
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                &url_for(&args.url, "mbz_schema_copy"),
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()?;
        {
            use std::io::Write;
            let mut stdin = psql
                .stdin
                .take()
                .ok_or_else(|| anyhow::anyhow!("psql stdin"))?;
            stdin.write_all(&dump.stdout)?;
        }
        anyhow::ensure!(psql.wait()?.success(), "psql failed");
        by_dump.push(started.elapsed());
        drop(copy);

        let _target = fresh_database(&args.url, "mbz_schema_target").await?;
        let bus = fresh_database(&args.url, "mbz_bus").await?;
        maskbus_mailbox::install(&bus).await?;
        let (producer_config, consumer_config) = write_configs(
            &args,
            "zoo-schema",
            &policy_path,
            "mbz_schema_source",
            "mbz_schema_target",
        )?;
        let producer = maskbus_bench::spawn_agent(&args.maskbus, &producer_config, &[])?;
        let started = Instant::now();
        let status =
            maskbus_bench::spawn_agent(&args.maskbus, &consumer_config, &["--once"])?.wait()?;
        by_bus.push(started.elapsed());
        maskbus_bench::stop_agent(producer)?;
        anyhow::ensure!(
            status.success(),
            "the consumer failed making the zoo's schema"
        );
    }
    let (schema_bus, schema_dump) = (median(by_bus), median(by_dump));
    let (copy, sync): (Duration, Duration) = (median(copies), median(syncs));
    println!(
        "{}",
        json!({
            "bench": "zoo", "rows": rows, "tables": tables.len(),
            "copy_seconds": copy.as_secs_f64(), "sync_seconds": sync.as_secs_f64(),
            "copy_rows_per_s": rows as f64 / copy.as_secs_f64(),
            "sync_rows_per_s": rows as f64 / sync.as_secs_f64(),
            "schema_bus_seconds": schema_bus.as_secs_f64(),
            "schema_dump_seconds": schema_dump.as_secs_f64(),
        })
    );
    for db in [
        "mbz_source",
        "mbz_copy",
        "mbz_target",
        "mbz_bus",
        "mbz_schema_source",
        "mbz_schema_copy",
        "mbz_schema_target",
    ] {
        maskbus_bench::drop_database(&args.url, db).await?;
    }
    Ok(())
}
