//! `maskbus seed`: fill the source database with the bank, drawing progress bars as it goes.

use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use maskbus_bank::{Profile, SeedEvent, SeedOptions};
use std::collections::HashMap;
use std::process::ExitCode;

#[derive(Args)]
pub struct SeedArgs {
    /// The production database to fill.
    #[command(flatten)]
    source: super::args::Source,
    /// A profile from seeds/ (demo, small, medium, large) or the path of a profile TOML file.
    #[arg(long, default_value = "demo")]
    profile: String,
    /// Number of customers (overrides the profile's).
    #[arg(long)]
    customers: Option<u64>,
    /// Transactions per customer (overrides the profile's).
    #[arg(long)]
    transactions_per_customer: Option<u64>,
    /// The random seed: the same seed gives the same data, byte for byte.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Empty the bank tables first.
    #[arg(long, conflicts_with = "append")]
    reset: bool,
    /// Add to the rows already there (new ids continue after the largest).
    #[arg(long)]
    append: bool,
}

fn load_profile(name: &str) -> Result<Profile> {
    if name.ends_with(".toml") || std::path::Path::new(name).is_file() {
        let text = std::fs::read_to_string(name)
            .with_context(|| format!("reading seed profile {name}"))?;
        return Ok(Profile::from_toml(name, &text)?);
    }
    Ok(Profile::built_in(name)?)
}

pub async fn run(args: SeedArgs) -> Result<ExitCode> {
    let mut profile = load_profile(&args.profile)?;
    if let Some(customers) = args.customers {
        profile.customers = customers;
    }
    if let Some(per_customer) = args.transactions_per_customer {
        profile.transactions_per_customer = per_customer;
    }
    let source = args.source.database()?;
    let options = SeedOptions {
        profile: profile.clone(),
        seed: args.seed,
        append: args.append,
        reset: args.reset,
    };

    let bars = MultiProgress::new();
    let style = ProgressStyle::with_template(
        "{prefix:>12} [{bar:30}] {pos:>9}/{len:9} {per_sec:>12} {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    let mut open: HashMap<&'static str, ProgressBar> = HashMap::new();
    let mut on_event = |event: SeedEvent| match event {
        SeedEvent::TableStarted { table, rows } => {
            let bar = bars.add(ProgressBar::new(rows));
            bar.set_style(style.clone());
            bar.set_prefix(table);
            open.insert(table, bar);
        }
        SeedEvent::RowsWritten { table, rows } => {
            if let Some(bar) = open.get(table) {
                bar.inc(rows);
            }
        }
        SeedEvent::TableFinished { table, rows } => {
            if let Some(bar) = open.remove(table) {
                bar.set_length(rows);
                bar.finish();
            }
            // Bars are hidden when stderr is not a terminal (CI); a line per table still shows
            // that the work moves.
            tracing::info!(table, rows, "seeded");
        }
    };
    tracing::info!(
        profile = %profile.name,
        customers = profile.customers,
        transactions = profile.transactions(),
        seed = args.seed,
        "seeding {}",
        source.endpoint()
    );
    let report = maskbus_bank::seed(&source, &options, &mut on_event).await?;
    let total: u64 = report.rows.iter().map(|(_, n)| n).sum();
    println!(
        "seeded {} (profile {}, seed {}):",
        source.endpoint(),
        profile.name,
        args.seed
    );
    for (table, rows) in &report.rows {
        println!("  {table:<13} {rows:>10}");
    }
    println!(
        "  {:<13} {total:>10} rows in {:.2} s ({:.0} rows/s)",
        "total",
        report.elapsed.as_secs_f64(),
        total as f64 / report.elapsed.as_secs_f64().max(1e-9)
    );
    Ok(Exit::Ok.into())
}
