//! Mailbox round trips per second (send + claim + ack) with ~2 KB bodies, single and batched,
//! against pgmq's own SQL functions on the same server, in the same run.
//!
//! Each system gets a database of its own; the runs alternate (maskbus, pgmq, maskbus, ...) and
//! the median of three is kept, so a noisy neighbour hurts both alike.

use anyhow::{Context, Result};
use clap::Parser;
use maskbus_bench::fresh_database;
use maskbus_mailbox::{Mailbox, Settings};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_postgres::types::Json;

#[derive(Parser)]
struct Args {
    /// The server's maintenance database URL (scripts/dev-db prints it).
    #[arg(long, env = "DATABASE_URL")]
    url: String,
    /// pgmq's SQL (pgmq.sql from the PyPI package `pgmq`); without it only maskbus is measured.
    #[arg(long)]
    pgmq_sql: Option<std::path::PathBuf>,
    /// Messages per run.
    #[arg(long, default_value_t = 3000)]
    messages: usize,
    /// Batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,50")]
    batches: Vec<usize>,
    /// Print one JSON object per result line as well.
    #[arg(long)]
    json: bool,
    /// Concurrent writer/reader pairs to measure the bus's throughput at, with page-sized
    /// bodies (each pair its own mailbox and connection).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pairs: Vec<usize>,
    /// Page-sized messages each pair moves.
    #[arg(long, default_value_t = 400)]
    pages: usize,
}

/// A page reply's body as a consumer receives one in a full sync: 200 transaction rows,
/// about 40 KB of JSON.
fn page_body() -> Value {
    let rows: Vec<Value> = (0..200)
        .map(|i| {
            json!([
                format!("{}", 1_000_000 + i),
                "184467",
                "93112",
                "-42.17",
                "2024-03-05 12:34:56+00",
                "Springfield Grocery Co-op",
                "card purchase at Springfield Grocery Co-op, aisle 7"
            ])
        })
        .collect();
    json!({ "type": "page", "v": 2, "entity": "public.transactions", "key": ["id"],
            "columns": ["id", "account_id", "card_id", "amount", "posted_at", "merchant", "description"],
            "rows": rows, "next_after": ["1000199"], "more": true, "since": null, "until": "1:2:",
            "part": 0, "parts": 8 })
}

/// `pairs` writer/reader pairs at once, each on its own connection and mailbox: sends `pages`
/// page bodies in batches of 8 (a request's answer) and claims and acks them. Returns the time
/// and the bytes moved.
async fn run_pairs(
    bus: &maskbus_pg::Database,
    pairs: usize,
    pages: usize,
) -> Result<(Duration, usize)> {
    let body = maskbus_mailbox::body_of(&page_body())?;
    let bytes = body.get().len();
    let mut boxes = Vec::new();
    for _ in 0..pairs {
        boxes.push(
            Mailbox::connect(
                bus.clone(),
                Settings {
                    pool_size: 1,
                    ..Settings::default()
                },
            )
            .await?,
        );
    }
    let started = Instant::now();
    let runs = boxes.iter().enumerate().map(|(n, mailbox)| {
        let body = body.clone();
        async move {
            let name = format!("bench.pair{n}");
            let mut done = 0;
            while done < pages {
                let batch = 8.min(pages - done);
                let bodies = (0..batch).map(|_| (None, body.clone())).collect();
                mailbox.send_batch(&name, "page", None, bodies).await?;
                let claimed = mailbox.claim(&name, batch as u32).await?;
                let leases: Vec<_> = claimed.iter().map(|m| m.lease).collect();
                let acked = mailbox.ack_batch(&leases).await?;
                anyhow::ensure!(acked.len() == batch, "acked {} of {batch}", acked.len());
                done += batch;
            }
            anyhow::Ok(())
        }
    });
    for outcome in futures_util::future::join_all(runs).await {
        outcome?;
    }
    Ok((started.elapsed(), bytes * pages * pairs))
}

fn body(n: usize) -> Value {
    // About 2 KB: the size of a page of a few masked customer rows.
    let rows: Vec<Value> = (0..12)
        .map(|i| {
            json!([
                format!("{}", n * 100 + i),
                "Avery",
                "J***",
                "d***@yahoo.com",
                "***-**-8280",
                "1985-01-01",
                "(***) ***-0143",
                "2024-03-05 12:34:56+00",
                "Springfield",
                "IL",
                "62704"
            ])
        })
        .collect();
    json!({ "v": 1, "entity": "customers", "rows": rows, "next_cursor": n, "more": true })
}

async fn run_maskbus(mailbox: &Mailbox, messages: usize, batch: usize) -> Result<Duration> {
    let started = Instant::now();
    let mut done = 0;
    while done < messages {
        let batch_bodies = (0..batch)
            .map(|i| Ok((None, maskbus_mailbox::body_of(&body(done + i))?)))
            .collect::<Result<Vec<_>>>()?;
        mailbox
            .send_batch("bench", "page", None, batch_bodies)
            .await?;
        let claimed = mailbox.claim("bench", batch as u32).await?;
        let leases: Vec<_> = claimed.iter().map(|m| m.lease).collect();
        let acked = mailbox.ack_batch(&leases).await?;
        anyhow::ensure!(
            acked.len() == batch,
            "maskbus acked {} of {batch}",
            acked.len()
        );
        done += batch;
    }
    Ok(started.elapsed())
}

async fn run_pgmq(
    client: &tokio_postgres::Client,
    messages: usize,
    batch: usize,
) -> Result<Duration> {
    let started = Instant::now();
    let mut done = 0;
    while done < messages {
        let bodies: Vec<Json<Value>> = (0..batch).map(|i| Json(body(done + i))).collect();
        client
            .query(
                "SELECT * FROM pgmq.send_batch('bench', $1::jsonb[])",
                &[&bodies],
            )
            .await?;
        let rows = client
            .query(
                "SELECT msg_id, message FROM pgmq.read('bench', 30, $1)",
                &[&(batch as i32)],
            )
            .await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let _bodies: Vec<Json<Value>> = rows.iter().map(|r| r.get(1)).collect();
        let archived = client
            .query("SELECT * FROM pgmq.archive('bench', $1::bigint[])", &[&ids])
            .await?;
        anyhow::ensure!(
            archived.len() == batch,
            "pgmq archived {} of {batch}",
            archived.len()
        );
        done += batch;
    }
    Ok(started.elapsed())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let bus = fresh_database(&args.url, "maskbus_bench_bus").await?;
    maskbus_mailbox::install(&bus).await?;
    let mailbox = Mailbox::connect(
        bus,
        Settings {
            pool_size: 1,
            ..Settings::default()
        },
    )
    .await?;
    let pgmq = match &args.pgmq_sql {
        Some(path) => {
            let sql = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let target = fresh_database(&args.url, "maskbus_bench_pgmq").await?;
            let client = target.connect().await?;
            client
                .batch_execute(&sql)
                .await
                .context("installing pgmq's SQL")?;
            client.batch_execute("SELECT pgmq.create('bench')").await?;
            Some(client)
        }
        None => None,
    };
    println!(
        "{:<8} {:>16} {:>16} {:>8}",
        "batch", "maskbus msg/s", "pgmq msg/s", "ratio"
    );
    for &batch in &args.batches {
        let messages = (args.messages / batch).max(1) * batch;
        // Warm both up once (plan caches, buffers), then alternate three measured runs.
        run_maskbus(&mailbox, batch * 10, batch).await?;
        if let Some(client) = &pgmq {
            run_pgmq(client, batch * 10, batch).await?;
        }
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            ours.push(run_maskbus(&mailbox, messages, batch).await?);
            if let Some(client) = &pgmq {
                theirs.push(run_pgmq(client, messages, batch).await?);
            }
        }
        let rate = |d: Duration| messages as f64 / d.as_secs_f64();
        let ours = rate(maskbus_bench::median(ours));
        let theirs = (!theirs.is_empty()).then(|| rate(maskbus_bench::median(theirs)));
        match theirs {
            Some(theirs) => println!(
                "{batch:<8} {ours:>16.0} {theirs:>16.0} {:>8.2}",
                ours / theirs
            ),
            None => println!("{batch:<8} {ours:>16.0} {:>16} {:>8}", "-", "-"),
        }
        if args.json {
            println!(
                "{}",
                json!({ "bench": "mailbox", "batch": batch, "maskbus_msgs_per_s": ours, "pgmq_msgs_per_s": theirs })
            );
        }
    }
    // The bus alone at 1, 2, 4 pairs: what page traffic it carries as writers are added.
    let scaling_bus = fresh_database(&args.url, "maskbus_bench_pairs").await?;
    maskbus_mailbox::install(&scaling_bus).await?;
    println!("{:<8} {:>16}", "pairs", "bus MB/s");
    for &pairs in &args.pairs {
        run_pairs(&scaling_bus, pairs, 16).await?;
        let mut runs = Vec::new();
        let mut moved = 0;
        for _ in 0..3 {
            let (took, bytes) = run_pairs(&scaling_bus, pairs, args.pages).await?;
            runs.push(took);
            moved = bytes;
        }
        let mb_s = moved as f64 / 1e6 / maskbus_bench::median(runs).as_secs_f64();
        println!("{pairs:<8} {mb_s:>16.1}");
        if args.json {
            println!(
                "{}",
                json!({ "bench": "bus_pairs", "pairs": pairs, "mb_per_s": mb_s })
            );
        }
    }
    maskbus_bench::drop_database(&args.url, "maskbus_bench_pairs").await?;
    Ok(())
}
