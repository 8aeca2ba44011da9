//! The change stream and verify against what they replace, in the same run.
//!
//! On one seeded profile: copy the source into an empty target in stream mode, then
//! - time a watermark pass with no change at all (what a watermark follow loop pays each time),
//! - with a follower running, time from committing 3 new customers (3 source transactions) on
//!   the source to their arrival in the target, then 300 (the cost of a change must grow with
//!   the change, not with production),
//! - time `maskbus verify` on the two equal databases against reading every table of each side
//!   once: `COPY ... TO STDOUT`, source then target (the goal's baseline), and the producer's
//!   masked read of the source (its page path, in process, to nowhere) then the target's COPY:
//!   the least any verify must do, since the source can only be compared masked.
//!
//! Prints one JSON object.

use anyhow::Result;
use clap::Parser;
use futures_util::StreamExt;
use maskbus_bench::{fresh_database, timed, url_for};
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
    #[arg(long, default_value = "large")]
    profile: String,
    #[arg(long, default_value = "target/bench")]
    work: String,
    /// Leave the three databases (and the configs in `work`) for a closer look.
    #[arg(long)]
    keep: bool,
}

const SLOT: &str = "maskbus_stream_bench";

/// Reads every bank table of `db` once, as text, to nowhere.
async fn read_all(db: &Database) -> Result<Duration> {
    let client = db.connect().await?;
    let started = Instant::now();
    for table in maskbus_bank::TABLES {
        let out = client.copy_out(&format!("COPY {table} TO STDOUT")).await?;
        futures_util::pin_mut!(out);
        while let Some(chunk) = out.next().await {
            chunk?;
        }
    }
    Ok(started.elapsed())
}

/// Reads every bank table of the source once as the producer does for a copy (pages of 1,000
/// masked rows, ten per call, in key order), to nowhere.
async fn masked_read(source_url: &str) -> Result<Duration> {
    let policy = maskbus_mask::Policy::bank()?.with_key(maskbus_mask::PseudonymKey::new(b"bench"));
    let source = maskbus_producer::source::Source::new(
        Database::parse("source", source_url)?,
        std::sync::Arc::new(policy),
        4,
    )?;
    let started = Instant::now();
    for table in maskbus_bank::TABLES {
        let (mut after, mut after_tag) = (None, None);
        'table: loop {
            for reply in source
                .page(maskbus_producer::source::PageAsk {
                    entity: table,
                    after: after.take(),
                    after_tag: after_tag.take(),
                    limit: 1000,
                    pages: 10,
                    ..Default::default()
                })
                .await
            {
                match reply {
                    maskbus_producer::reply::Reply::Page(page) => {
                        after = page.next_after;
                        after_tag = page.next_after_tag;
                        if !page.more {
                            break 'table;
                        }
                    }
                    other => anyhow::bail!("reading {table} masked: {other:?}"),
                }
            }
        }
    }
    Ok(started.elapsed())
}

/// Adds `n` customers with an account each, one source transaction per customer, committed
/// synchronously (a slot decodes flushed WAL only).
async fn add_customers(source: &Database, n: usize, first_id: i64) -> Result<()> {
    let client = source.connect().await?;
    client.batch_execute("SET synchronous_commit = on").await?;
    for i in 0..n as i64 {
        let id = first_id + i;
        client
            .batch_execute(&format!(
                "BEGIN;
                 INSERT INTO customers (id, first_name, last_name, email, ssn, date_of_birth, phone, created_at)
                      VALUES ({id}, 'Bench', 'Stream', 'bench{id}@example.com', '123-45-6789', '1980-01-01', '555-0100', now());
                 INSERT INTO accounts (id, customer_id, account_number, routing_number, account_type, balance, opened_at)
                      VALUES ({id}, {id}, '12345678901', '021000021', 'checking', 1.00, now());
                 COMMIT;"
            ))
            .await?;
    }
    Ok(())
}

/// Waits until the slot's restart point has passed `lsn` (for at most a minute). An idle
/// follower's long polls confirm the flush position; the restart point follows at the server's
/// next snapshot record.
async fn settle(source: &Database, lsn: &str) -> Result<()> {
    let client = source.connect().await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let passed: bool = client
            .query_one(
                "SELECT coalesce(restart_lsn >= $2::text::pg_lsn, false) FROM pg_replication_slots WHERE slot_name = $1",
                &[&SLOT, &lsn],
            )
            .await?
            .get(0);
        if passed || Instant::now() >= deadline {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until customers `first_id..first_id + n` are all in the target (polling every 2 ms,
/// for at most a minute).
async fn arrival(target: &Database, first_id: i64, n: usize) -> Result<()> {
    let client = target.connect().await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let arrived: i64 = client
            .query_one(
                "SELECT count(*) FROM customers WHERE id >= $1 AND id < $2",
                &[&first_id, &(first_id + n as i64)],
            )
            .await?
            .get(0);
        if arrived == n as i64 {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "{arrived} of {n} customers arrived in a minute"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Rows of one update, how much it adds to `amount` (the bank policy keeps it), and the least
/// amount an updated row then has (amounts are far smaller, of either sign).
const BIG_UPDATE: i64 = 10_000;
/// How many such updates each side applies, each on rows of its own; the median is kept
/// (`medium` holds 100,000 transactions: ten updates of 10,000).
const UPDATES: i64 = 5;
const BUMP: &str = "100000000";
const BUMPED: &str = "50000000";

/// The times of one big update, from the start of its `UPDATE`.
#[derive(Clone, Copy)]
struct Update {
    /// To its commit on the source (what the writer waits for).
    committed: Duration,
    /// To the last of its rows applied.
    applied: Duration,
}

/// The medians of a few updates: both figures, each its own median.
fn medians(updates: &[Update]) -> Update {
    Update {
        committed: maskbus_bench::median(updates.iter().map(|u| u.committed).collect()),
        applied: maskbus_bench::median(updates.iter().map(|u| u.applied).collect()),
    }
}

/// Updates transactions `first..first + BIG_UPDATE` in one source transaction (committed
/// synchronously), then waits until `applied` (a database holding transactions) shows every
/// one of them: the time from the write to its commit and to the last row applied.
async fn big_update(source: &Database, applied: &Database, first: i64) -> Result<Update> {
    let writer = source.connect().await?;
    // Each update starts on a vacuumed table right after a checkpoint, so each finds the same
    // table and writes the same full-page images (the first change to a page after a
    // checkpoint logs the whole page). Without the checkpoint, an update that happens to
    // follow one writes several times the WAL of one that does not, and the side measured
    // first (right after the copy's WAL) pays for it; without the vacuum, each update finds
    // the dead rows of all the updates before it (the stream's five, then pgoutput's five)
    // and where pruning by the reads in between left room, so the two sides write into
    // different tables.
    // VACUUM runs alone: not in a string of statements, which is one transaction.
    writer.batch_execute("VACUUM transactions").await?;
    writer
        .batch_execute("SET synchronous_commit = on; CHECKPOINT")
        .await?;
    let reader = applied.connect().await?;
    let last = first + BIG_UPDATE;
    let started = Instant::now();
    writer
        .execute(
            &format!("UPDATE transactions SET amount = amount + {BUMP} WHERE id >= $1 AND id < $2"),
            &[&first, &last],
        )
        .await?;
    let committed = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Both sides apply a source transaction in one target transaction, so the watch is on one
    // row of it, a lookup by key every millisecond: counting the 10,000 rows every few
    // milliseconds took a good part of a core from the apply it was timing. The count is
    // taken once that row shows the update.
    let watched = last - 1;
    loop {
        let shows: bool = reader
            .query_one(
                &format!("SELECT coalesce((SELECT amount >= {BUMPED} FROM transactions WHERE id = $1), false)"),
                &[&watched],
            )
            .await?
            .get(0);
        let applied = started.elapsed();
        if shows {
            let done: i64 = reader
                .query_one(
                    &format!("SELECT count(*) FROM transactions WHERE id >= $1 AND id < $2 AND amount >= {BUMPED}"),
                    &[&first, &last],
                )
                .await?
                .get(0);
            anyhow::ensure!(
                done == BIG_UPDATE,
                "{done} of {BIG_UPDATE} updated rows applied when the last one was: the update was not applied in one transaction"
            );
            return Ok(Update { committed, applied });
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "the update was not applied in two minutes"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Postgres' own logical replication of the same kind of update, unmasked: a subscriber
/// database holding a copy of `transactions` with the bank's indexes (the target's: an update
/// that cannot stay on its page writes every index; no foreign keys, which an unchanged key
/// does not check) subscribed through pgoutput on the same server. The slot is made first: a subscription cannot make its slot on its
/// own server in the same command.
async fn pgoutput_update(url: &str, source: &Database, first: i64) -> Result<Update> {
    let subscriber = fresh_database(url, "mbb_stream_sub").await?;
    let sub = subscriber.connect().await?;
    sub.batch_execute(
        "CREATE TABLE transactions (id bigint PRIMARY KEY, account_id bigint NOT NULL, card_id bigint,
           amount numeric(12,2) NOT NULL, posted_at timestamptz NOT NULL, merchant varchar(120) NOT NULL,
           description text NOT NULL);
         CREATE INDEX transactions_account_id_idx ON transactions (account_id);
         CREATE INDEX transactions_card_id_idx ON transactions (card_id)",
    )
    .await?;
    let src = source.connect().await?;
    let out = src.copy_out("COPY transactions TO STDOUT").await?;
    let sink = sub.copy_in("COPY transactions FROM STDIN").await?;
    futures_util::pin_mut!(out, sink);
    while let Some(chunk) = out.next().await {
        futures_util::SinkExt::send(&mut sink, chunk?).await?;
    }
    sink.finish().await?;
    // Two statements: a slot cannot be made in a transaction that wrote.
    src.batch_execute("CREATE PUBLICATION mbb_pub FOR TABLE transactions")
        .await?;
    src.batch_execute("SELECT pg_create_logical_replication_slot('mbb_sub', 'pgoutput')")
        .await?;
    let connection = url_for(url, "mbb_stream_source");
    sub.batch_execute(&format!(
        "CREATE SUBSCRIPTION mbb_sub CONNECTION '{}' PUBLICATION mbb_pub
           WITH (create_slot = false, slot_name = 'mbb_sub', copy_data = false)",
        connection.replace('\'', "''")
    ))
    .await?;
    // Five updates, each on rows of its own, the median kept; the subscription is dropped
    // whatever happened.
    let took = async {
        let mut all = Vec::new();
        for n in 0..UPDATES {
            all.push(big_update(source, &subscriber, first + n * BIG_UPDATE).await?);
        }
        anyhow::Ok(medians(&all))
    }
    .await;
    sub.batch_execute(
        "ALTER SUBSCRIPTION mbb_sub DISABLE; ALTER SUBSCRIPTION mbb_sub SET (slot_name = NONE); DROP SUBSCRIPTION mbb_sub",
    )
    .await?;
    src.batch_execute("SELECT pg_drop_replication_slot('mbb_sub')")
        .await?;
    src.batch_execute("DROP PUBLICATION mbb_pub").await?;
    drop(sub);
    maskbus_bench::drop_database(url, "mbb_stream_sub").await?;
    took
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.work)?;
    // A slot left by an earlier run keeps its database from being dropped: it goes first.
    let admin = Database::parse("bench", &url_for(&args.url, "postgres"))?
        .connect()
        .await?;
    admin
        .execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", &[&SLOT])
        .await?;
    let source = fresh_database(&args.url, "mbb_stream_source").await?;
    let target = fresh_database(&args.url, "mbb_stream_target").await?;
    let bus = fresh_database(&args.url, "mbb_stream_bus").await?;
    for db in [&source, &target] {
        apply_migrations(db, maskbus_bank::MIGRATIONS).await?;
    }
    maskbus_mailbox::install(&bus).await?;
    let rows = maskbus_bench::seed_bank(&source, &args.profile).await?;
    let write = |file: &str, text: String| maskbus_bench::write_config(&args.work, file, text);
    let bus_url = url_for(&args.url, "mbb_stream_bus");
    let producer = write(
        "stream-producer.toml",
        format!(
            "role = \"producer\"\nbus_url = \"{bus_url}\"\nsource_url = \"{}\"\npolicy = \"{BANK_POLICY}\"\npseudonym_key = \"{BENCH_KEY}\"\nslot = \"{SLOT}\"\n",
            url_for(&args.url, "mbb_stream_source")
        ),
    )?;
    let consumer = |mode: &str| {
        write(
            &format!("stream-consumer-{mode}.toml"),
            format!(
                "role = \"consumer\"\nbus_url = \"{bus_url}\"\ntarget_url = \"{}\"\nallow_superuser_target = true\nmode = \"{mode}\"\nfollow_interval = \"5s\"\n",
                url_for(&args.url, "mbb_stream_target")
            ),
        )
    };
    let (stream, watermark) = (consumer("stream")?, consumer("watermark")?);
    let running = maskbus_bench::spawn_agent(&args.maskbus, &producer, &[])?;
    let outcome = async {
        let copy = timed(&args.maskbus, &["run", "--config", &stream, "--once"])?;
        // Caught up: a stream round with nothing to apply, then a watermark pass with no change.
        let idle = timed(&args.maskbus, &["run", "--config", &stream, "--once"])?;
        let no_change = timed(&args.maskbus, &["run", "--config", &watermark, "--once"])?;
        // A follower in steady state: its idle rounds are long polls, answered as soon as a
        // change commits. One customer first, so the slot has moved past the copy's WAL.
        let follower = maskbus_bench::spawn_agent(&args.maskbus, &stream, &[])?;
        let followed = async {
            // Right after the copy, each look at the slot decodes the WAL written since it was
            // made: here that holds the target's whole load too, as all three databases share
            // one server. The slot lets go of it at the server's next snapshot record (every
            // 15 s); the figures below are taken once it has (a follower's steady state).
            let started = Instant::now();
            add_customers(&source, 1, 40_000_000).await?;
            arrival(&target, 40_000_000, 1).await?;
            let first = started.elapsed();
            let end_of_copy: String = source
                .connect()
                .await?
                .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
                .await?
                .get(0);
            settle(&source, &end_of_copy).await?;
            let mut changes = vec![(first, Duration::ZERO)];
            for (n, first_id) in [(3usize, 50_000_000i64), (300, 60_000_000)] {
                let started = Instant::now();
                add_customers(&source, n, first_id).await?;
                let committed = started.elapsed();
                arrival(&target, first_id, n).await?;
                changes.push((started.elapsed(), committed));
            }
            // One transaction updating 10,000 rows, masked through the bus; five of them,
            // each on rows of its own, and the median kept.
            let mut updates = Vec::new();
            for n in 0..UPDATES {
                updates.push(big_update(&source, &target, 1 + n * BIG_UPDATE).await?);
            }
            let update = medians(&updates);
            anyhow::Ok((changes, update))
        }
        .await;
        maskbus_bench::stop_agent(follower)?;
        let (changes, update) = followed?;
        let verify = timed(&args.maskbus, &["verify", "--config", &stream])?;
        let read_source = read_all(&source).await?;
        let read_target = read_all(&target).await?;
        let read_masked = masked_read(&url_for(&args.url, "mbb_stream_source")).await?;
        // The same update, unmasked, by Postgres' own apply (after verify: the target does
        // not follow it).
        let pgoutput = pgoutput_update(&args.url, &source, 1 + UPDATES * BIG_UPDATE).await?;
        anyhow::Ok((
            copy,
            idle,
            no_change,
            (changes, update, pgoutput),
            verify,
            read_source,
            read_target,
            read_masked,
        ))
    }
    .await;
    maskbus_bench::stop_agent(running)?;
    let dropped = timed(
        &args.maskbus,
        &["slot", "drop", SLOT, "--config", &producer],
    );
    let (
        copy,
        idle,
        no_change,
        (changes, update, pgoutput),
        verify,
        read_source,
        read_target,
        read_masked,
    ) = outcome?;
    dropped?;
    println!(
        "{}",
        json!({
            "bench": "stream", "profile": args.profile, "rows": rows,
            "copy_seconds": copy.as_secs_f64(),
            "stream_idle_seconds": idle.as_secs_f64(),
            "watermark_no_change_seconds": no_change.as_secs_f64(),
            "stream_first_change_seconds": changes[0].0.as_secs_f64(),
            "stream_3_customers_seconds": changes[1].0.as_secs_f64(),
            "source_3_customers_seconds": changes[1].1.as_secs_f64(),
            "stream_300_customers_seconds": changes[2].0.as_secs_f64(),
            "source_300_customers_seconds": changes[2].1.as_secs_f64(),
            "update_rows": BIG_UPDATE,
            "stream_update_seconds": update.applied.as_secs_f64(),
            "stream_update_commit_seconds": update.committed.as_secs_f64(),
            "pgoutput_update_seconds": pgoutput.applied.as_secs_f64(),
            "pgoutput_update_commit_seconds": pgoutput.committed.as_secs_f64(),
            "verify_seconds": verify.as_secs_f64(),
            "read_source_seconds": read_source.as_secs_f64(),
            "read_target_seconds": read_target.as_secs_f64(),
            "read_source_masked_seconds": read_masked.as_secs_f64(),
        })
    );
    if args.keep {
        return Ok(());
    }
    for db in ["mbb_stream_source", "mbb_stream_target", "mbb_stream_bus"] {
        maskbus_bench::drop_database(&args.url, db).await?;
    }
    Ok(())
}
