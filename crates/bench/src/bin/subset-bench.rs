//! Subsets beside the full sync, in the same run, on one seeded profile.
//!
//! Into three empty targets, each through its own bus: the whole source; 1% of customers (a
//! keyed-hash fraction) with everything they own and everything that points to; the customers of
//! one state likewise. Also times `maskbus subset plan` (the closure counted on the source,
//! nothing moved). Prints one JSON object.

use anyhow::Result;
use clap::Parser;
use maskbus_bench::{fresh_database, timed, url_for};
use maskbus_bench::{BANK_POLICY, BENCH_KEY};
use maskbus_pg::apply_migrations;
use serde_json::json;
use std::time::Duration;

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
}

const SOURCE: &str = "mbb_subset_source";

/// A full sync (`subset` None) or a subset sync into a fresh target through a fresh bus:
/// (seconds, rows in the target).
async fn sync(
    args: &Args,
    subsets: &str,
    name: &str,
    subset: Option<&str>,
) -> Result<(Duration, i64)> {
    let (target_db, bus_db) = (
        format!("mbb_subset_{name}"),
        format!("mbb_subset_{name}_bus"),
    );
    let target = fresh_database(&args.url, &target_db).await?;
    let bus = fresh_database(&args.url, &bus_db).await?;
    apply_migrations(&target, maskbus_bank::MIGRATIONS).await?;
    maskbus_mailbox::install(&bus).await?;
    let write = |file: &str, text: String| maskbus_bench::write_config(&args.work, file, text);
    let producer = write(
        &format!("subset-producer-{name}.toml"),
        format!(
            "role = \"producer\"\nbus_url = \"{}\"\nsource_url = \"{}\"\npolicy = \"{BANK_POLICY}\"\npseudonym_key = \"{BENCH_KEY}\"\nsubsets = \"{subsets}\"\n",
            url_for(&args.url, &bus_db),
            url_for(&args.url, SOURCE)
        ),
    )?;
    let consumer = write(
        &format!("subset-consumer-{name}.toml"),
        format!(
            "role = \"consumer\"\nbus_url = \"{}\"\ntarget_url = \"{}\"\nallow_superuser_target = true\n{}",
            url_for(&args.url, &bus_db),
            url_for(&args.url, &target_db),
            subset.map_or(String::new(), |s| format!("subset = \"{s}\"\n"))
        ),
    )?;
    let running = maskbus_bench::spawn_agent(&args.maskbus, &producer, &[])?;
    let took = timed(&args.maskbus, &["run", "--config", &consumer, "--once"]);
    maskbus_bench::stop_agent(running)?;
    let took = took?;
    let client = target.connect().await?;
    let mut rows = 0i64;
    for table in maskbus_bank::TABLES {
        let n: i64 = client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await?
            .get(0);
        rows += n;
    }
    drop(client);
    for db in [&target_db, &bus_db] {
        maskbus_bench::drop_database(&args.url, db).await?;
    }
    Ok((took, rows))
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.work)?;
    let source = fresh_database(&args.url, SOURCE).await?;
    apply_migrations(&source, maskbus_bank::MIGRATIONS).await?;
    let rows = maskbus_bench::seed_bank(&source, &args.profile).await?;
    let state: String = source
        .connect()
        .await?
        .query_one(
            "SELECT state FROM addresses GROUP BY state ORDER BY count(*) DESC, state LIMIT 1",
            &[],
        )
        .await?
        .get(0);
    let subsets = maskbus_bench::write_config(
        &args.work,
        "subsets.toml",
        format!(
            "[subsets.one_percent]\nfraction = {{ customers = 0.01 }}\n\n[subsets.one_state]\nwhere = {{ customers = \"EXISTS (SELECT 1 FROM addresses a WHERE a.customer_id = customers.id AND a.state = '{state}')\" }}\n"
        ),
    )?;
    let full = sync(&args, &subsets, "full", None).await?;
    let percent = sync(&args, &subsets, "percent", Some("one_percent")).await?;
    let one_state = sync(&args, &subsets, "state", Some("one_state")).await?;
    let plan_config = format!("{}/subset-producer-full.toml", args.work);
    let plan = timed(&args.maskbus, &["subset", "plan", "--config", &plan_config])?;
    println!(
        "{}",
        json!({
            "bench": "subset", "profile": args.profile, "rows": rows,
            "full_seconds": full.0.as_secs_f64(), "full_rows": full.1,
            "percent_seconds": percent.0.as_secs_f64(), "percent_rows": percent.1,
            "state_seconds": one_state.0.as_secs_f64(), "state_rows": one_state.1,
            "plan_seconds": plan.as_secs_f64(),
        })
    );
    maskbus_bench::drop_database(&args.url, SOURCE).await?;
    Ok(())
}
