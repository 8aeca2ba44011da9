//! `maskbus policy init`'s recall and precision on schemas labelled by hand: which columns hold
//! personal data or secrets (`bench/init-labels.toml`: the zoo, the bank, and two public sample
//! databases). A column counts as
//! masked when init proposes any rule but `keep`. Also runs `policy check` on each proposal,
//! which must pass. Prints one JSON line per schema and one for all of them, and the misses and
//! false alarms by name on standard error.
//!
//! Sample databases are not in the repository (their licences are their own): pass
//! `--samples DIR` with `chinook.sql`, `chinook_camel.sql` (Chinook 1.4, CamelCase names) and
//! `northwind.sql` (pthom/northwind_psql) to include them.

use anyhow::{Context as _, Result};
use clap::Parser;
use maskbus_bench::{fresh_database, url_for};
use maskbus_mask::{Policy, Rule};
use serde_json::json;
use std::collections::BTreeSet;

const ZOO_SCHEMA: &str = include_str!("../../../../tests/fixtures/zoo/schema.sql");
const ZOO_DATA: &str = include_str!("../../../../tests/fixtures/zoo/data.sql");
const LABELS: &str = include_str!("../../../../bench/init-labels.toml");

#[derive(Parser)]
struct Args {
    /// The cluster to make the databases in.
    #[arg(long, env = "DATABASE_URL")]
    url: String,
    /// The maskbus binary (it makes and seeds the bank).
    #[arg(long, default_value = "target/release/maskbus")]
    maskbus: String,
    /// A folder with the sample databases' SQL (chinook.sql, chinook_camel.sql, northwind.sql).
    #[arg(long)]
    samples: Option<String>,
}

fn run_maskbus(bin: &str, args: &[&str]) -> Result<()> {
    let out = std::process::Command::new(bin).args(args).output()?;
    anyhow::ensure!(
        out.status.success(),
        "maskbus {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// `table.column`, lowercased, without underscores: `Customer.FirstName` and
/// `customer.first_name` are one column of two spellings of one schema.
fn spelling(table: &str, column: &str) -> String {
    format!("{table}.{column}").to_lowercase().replace('_', "")
}

/// The columns of a policy whose rule passes `filter`, by their spelling.
fn columns_where(policy: &Policy, filter: impl Fn(&Rule) -> bool) -> BTreeSet<String> {
    policy
        .entities()
        .flat_map(|(entity, rules)| {
            let table = entity
                .split_once('.')
                .map_or(entity, |(_, t)| t)
                .to_string();
            rules
                .columns()
                .filter(|(_, rule)| filter(rule))
                .map(|(column, _)| spelling(&table, column))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The columns a policy masks (any rule but keep).
fn masked_by(policy: &Policy) -> BTreeSet<String> {
    columns_where(policy, |rule| *rule != Rule::Keep)
}

/// Every column of a policy, by its spelling.
fn columns_of(policy: &Policy) -> BTreeSet<String> {
    columns_where(policy, |_| true)
}

/// Loads a sample's SQL into `db`, leaving out the lines that make or switch databases.
fn load_sample(url: &str, db: &str, path: &str) -> Result<()> {
    let sql = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let kept: String = sql
        .lines()
        .filter(|l| {
            let t = l.trim_start().to_ascii_uppercase();
            !(t.starts_with("DROP DATABASE")
                || t.starts_with("CREATE DATABASE")
                || t.starts_with("\\C"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let file = std::env::temp_dir().join(format!("maskbus-init-quality-{db}.sql"));
    std::fs::write(&file, kept)?;
    let status = std::process::Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", "-d", &url_for(url, db), "-f"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .status()?;
    anyhow::ensure!(status.success(), "loading {path} into {db} failed");
    Ok(())
}

struct Score {
    name: String,
    labelled: usize,
    masked: usize,
    found: usize,
    check_errors: usize,
}

async fn score(
    url: &str,
    db: &str,
    name: &str,
    schemas: &[String],
    labels: &BTreeSet<String>,
) -> Result<Score> {
    let target = maskbus_pg::Database::parse("source", &url_for(url, db))?;
    let text = maskbus_policy::init(&target, schemas).await?;
    let proposed = Policy::from_toml("init", &text)?;
    let masked = masked_by(&proposed);
    let all = columns_of(&proposed);
    let found = labels.intersection(&masked).count();
    for miss in labels.difference(&masked) {
        eprintln!("init-quality {name}: missed {miss}");
    }
    for extra in masked.difference(labels) {
        eprintln!("init-quality {name}: masked, not labelled {extra}");
    }
    for unknown in labels.difference(&all) {
        eprintln!("init-quality {name}: label names no column of the schema: {unknown}");
    }
    let (lines, _) = maskbus_policy::check_with(&target, &proposed, Default::default()).await?;
    let check_errors = lines
        .iter()
        .filter(|l| matches!(l.verdict, maskbus_mask::fit::Verdict::Error(_)))
        .inspect(|l| {
            eprintln!(
                "init-quality {name}: policy check error on {}.{}",
                l.entity, l.column
            )
        })
        .count();
    Ok(Score {
        name: name.to_string(),
        labelled: labels.len(),
        masked: masked.len(),
        found,
        check_errors,
    })
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let labels: toml::Table = LABELS.parse().context("bench/init-labels.toml")?;
    let label_set = |name: &str| -> BTreeSet<String> {
        labels
            .get(name)
            .and_then(|t| t.get("personal"))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str())
                    .filter_map(|s| s.split_once('.'))
                    .map(|(t, c)| spelling(t, c))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut scores = Vec::new();

    let zoo = fresh_database(&args.url, "mbq_zoo").await?;
    {
        let client = zoo.connect().await?;
        client.batch_execute(ZOO_SCHEMA).await?;
        client.batch_execute(ZOO_DATA).await?;
    }
    let zoo_schemas: Vec<String> = labels
        .get("zoo")
        .and_then(|t| t.get("schemas"))
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    scores.push(score(&args.url, "mbq_zoo", "zoo", &zoo_schemas, &label_set("zoo")).await?);

    fresh_database(&args.url, "mbq_bank").await?;
    let bank_url = url_for(&args.url, "mbq_bank");
    run_maskbus(&args.maskbus, &["bank", "init", "--source", &bank_url])?;
    run_maskbus(
        &args.maskbus,
        &["seed", "--source", &bank_url, "--customers", "200"],
    )?;
    let public = ["public".to_string()];
    scores.push(score(&args.url, "mbq_bank", "bank", &public, &label_set("bank")).await?);

    if let Some(dir) = &args.samples {
        for (db, file, labels_of) in [
            ("mbq_chinook", "chinook.sql", "chinook"),
            ("mbq_chinook_camel", "chinook_camel.sql", "chinook"),
            ("mbq_northwind", "northwind.sql", "northwind"),
        ] {
            let path = format!("{dir}/{file}");
            if !std::path::Path::new(&path).exists() {
                eprintln!("init-quality: {path} not found, left out");
                continue;
            }
            fresh_database(&args.url, db).await?;
            load_sample(&args.url, db, &path)?;
            let name = db.trim_start_matches("mbq_");
            scores.push(score(&args.url, db, name, &public, &label_set(labels_of)).await?);
        }
    }

    let (mut labelled, mut masked, mut found, mut errors) = (0, 0, 0, 0);
    for s in &scores {
        labelled += s.labelled;
        masked += s.masked;
        found += s.found;
        errors += s.check_errors;
        println!(
            "{}",
            json!({
                "bench": "init-quality",
                "schema": s.name,
                "labelled": s.labelled,
                "masked": s.masked,
                "found": s.found,
                "recall": ratio(s.found, s.labelled),
                "precision": ratio(s.found, s.masked),
                "check_errors": s.check_errors,
            })
        );
    }
    println!(
        "{}",
        json!({
            "bench": "init-quality",
            "schema": "all",
            "labelled": labelled,
            "masked": masked,
            "found": found,
            "recall": ratio(found, labelled),
            "precision": ratio(found, masked),
            "check_errors": errors,
        })
    );
    Ok(())
}
