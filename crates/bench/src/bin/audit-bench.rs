//! The wire audit's speed on a bus of at least 100 MB of message bodies, against two baselines
//! measured in the same run on the same bus: merely reading the bodies out of Postgres (COPY
//! to stdout), and the design's one-line SQL grep.
//!
//! The bus is filled with real traffic: bank rows from the seeder, masked by the bank policy,
//! in the producer's page-reply shape.

use anyhow::Result;
use bytes::Bytes;
use clap::Parser;
use futures_util::SinkExt;
use maskbus_bench::url_for;
use maskbus_mask::{Policy, PseudonymKey};
use maskbus_pg::Database;
use serde_json::{json, Value};
use std::time::Instant;

#[derive(Parser)]
struct Args {
    #[arg(long, env = "DATABASE_URL")]
    url: String,
    /// Size of the bus to scan, in MB of message bodies.
    #[arg(long, default_value_t = 100)]
    megabytes: u64,
    #[arg(long)]
    json: bool,
    /// Leave the bus database (maskbus_bench_audit) in place afterwards, to profile against it.
    #[arg(long)]
    keep: bool,
}

/// Masked page replies of customers and transactions, as the producer sends them.
fn pages() -> Vec<String> {
    let policy = Policy::bank()
        .unwrap()
        .with_key(PseudonymKey::new(b"bench"));
    let columns = maskbus_bank::generate::Customer::COLUMNS;
    let masker = policy
        .masker("customers", &columns.map(String::from))
        .unwrap();
    let mut pages = Vec::new();
    let customers: Vec<_> = maskbus_bank::generate::customers(7, 1, 4000).collect();
    for chunk in customers.chunks(200) {
        let rows: Vec<Value> = chunk
            .iter()
            .map(|c| serde_json::to_value(masker.mask(c.text_values()).unwrap()).unwrap())
            .collect();
        pages.push(json!({"type": "page", "v": 1, "entity": "customers", "key": "id", "columns": columns, "rows": rows,
            "next_after": chunk.last().unwrap().id, "more": true, "since": null, "until": "812:820:812,815"}).to_string());
    }
    let tx_columns = [
        "id",
        "account_id",
        "card_id",
        "amount",
        "posted_at",
        "merchant",
        "description",
    ];
    let summaries: Vec<_> = customers
        .iter()
        .map(|c| maskbus_bank::generate::AccountSummary {
            id: c.id,
            account_type: maskbus_bank::generate::AccountType::Checking,
            opened_at: c.created_at,
            first_card_id: c.id,
            card_count: 1,
        })
        .collect();
    let transactions: Vec<_> =
        maskbus_bank::generate::transactions(7, 1, 20_000, &summaries).collect();
    for chunk in transactions.chunks(200) {
        let rows: Vec<Value> = chunk
            .iter()
            .map(|t| {
                json!([
                    t.id.to_string(),
                    t.account_id.to_string(),
                    t.card_id.map(|c| c.to_string()),
                    maskbus_bank::generate::cents_text(t.amount_cents),
                    t.posted_at.format("%Y-%m-%d %H:%M:%S+00").to_string(),
                    t.merchant,
                    t.description
                ])
            })
            .collect();
        pages.push(json!({"type": "page", "v": 1, "entity": "transactions", "key": "id", "columns": tx_columns, "rows": rows,
            "next_after": chunk.last().unwrap().id, "more": true, "since": null, "until": "812:820:812,815"}).to_string());
    }
    pages
}

fn copy_escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let admin = Database::parse("bench", &url_for(&args.url, "postgres"))?
        .connect()
        .await?;
    admin
        .batch_execute("DROP DATABASE IF EXISTS maskbus_bench_audit WITH (FORCE)")
        .await?;
    admin
        .batch_execute("CREATE DATABASE maskbus_bench_audit")
        .await?;
    let bus = Database::parse("bus", &url_for(&args.url, "maskbus_bench_audit"))?;
    maskbus_mailbox::install(&bus).await?;
    let client = bus.connect().await?;

    // Fill the bus with acked messages (what mq.archive shows) by COPY until the bodies add up to the size asked for.
    let pages = pages();
    let target_bytes = args.megabytes * 1_000_000;
    let sink = client
        .copy_in::<_, Bytes>(
            "COPY mq.mail (id, mailbox, sender, kind, body, created_at, attempts, visible_at, acked_at) FROM STDIN",
        )
        .await?;
    futures_util::pin_mut!(sink);
    let (mut bytes, mut id) = (0u64, 0i64);
    let mut chunk = String::new();
    while bytes < target_bytes {
        let page = &pages[id as usize % pages.len()];
        id += 1;
        bytes += page.len() as u64;
        chunk.push_str(&format!(
            "{id}\tmaskbus.consumer\tproducer\tpage\t{}\t2026-01-01 00:00:00+00\t1\tinfinity\t2026-01-01 00:00:01+00\n",
            copy_escape(page)
        ));
        if chunk.len() > 1 << 20 {
            sink.send(Bytes::from(std::mem::take(&mut chunk))).await?;
        }
    }
    sink.send(Bytes::from(chunk)).await?;
    sink.finish().await?;
    client.batch_execute("VACUUM ANALYZE mq.mail").await?;
    eprintln!(
        "bus filled: {id} messages, {:.1} MB of bodies",
        bytes as f64 / 1e6
    );

    let mb = bytes as f64 / 1e6;
    // The client's share alone: parse and scan the same bodies from memory.
    let started = Instant::now();
    let mut scanned_bytes = 0usize;
    while scanned_bytes < 20_000_000 {
        for page in &pages {
            anyhow::ensure!(
                maskbus_audit::scan_text(page, maskbus_audit::Context::default())?.is_empty()
            );
            scanned_bytes += page.len();
        }
    }
    let scan_only = scanned_bytes as f64 / 1e6 / started.elapsed().as_secs_f64();
    let trio = maskbus_bench::measure_audit(&bus, 3).await?;
    anyhow::ensure!(
        trio.messages as i64 == id,
        "the audit scanned {} of {id} messages",
        trio.messages
    );
    let (raw, sql, audit) = (
        trio.mb_per_s(trio.read),
        trio.mb_per_s(trio.sql),
        trio.mb_per_s(trio.audit),
    );
    println!("{:<34} {:>10}", "wire audit over", format!("{mb:.0} MB"));
    println!(
        "{:<34} {:>10.1} MB/s",
        "read the bodies (COPY TO STDOUT)", raw
    );
    println!("{:<34} {:>10.1} MB/s", "design's SQL one-liner", sql);
    println!("{:<34} {:>10.1} MB/s", "maskbus wire-audit", audit);
    println!(
        "{:<34} {:>10.1} MB/s",
        "  its client side alone (memory)", scan_only
    );
    println!(
        "{:<34} {:>10.2}  (goal >= 10)",
        "audit / one-liner",
        audit / sql
    );
    println!(
        "{:<34} {:>10.2}  (goal >= 0.8)",
        "audit / reading",
        audit / raw
    );
    if args.json {
        println!(
            "{}",
            json!({"bench": "wire_audit", "megabytes": mb, "read_mb_s": raw, "sql_mb_s": sql, "audit_mb_s": audit})
        );
    }
    if !args.keep {
        admin
            .batch_execute("DROP DATABASE IF EXISTS maskbus_bench_audit WITH (FORCE)")
            .await?;
    }
    Ok(())
}
