//! `maskbus db init`: create whichever of the three databases is missing and apply its schema.

use anyhow::Result;
use clap::{Args, Subcommand};
use maskbus_pg::{apply_migrations, ensure_database, Migration, Target};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum DbCommand {
    /// Create the source, target and bus databases if missing and apply the schema from sql/.
    Init(InitArgs),
    /// Print the row count of every bank table in the source and the target.
    Status(StatusArgs),
    /// Show the first rows of a table in the source next to the same rows in the target.
    Compare(CompareArgs),
}

#[derive(Args)]
pub struct CompareArgs {
    #[arg(long, env = "MASKBUS_SOURCE_URL")]
    source: String,
    #[arg(long, env = "MASKBUS_TARGET_URL")]
    target: String,
    #[arg(long, default_value = "customers")]
    table: String,
    #[arg(long, default_value_t = 3)]
    limit: i64,
    #[arg(long, default_value = "public")]
    schema: String,
}

#[derive(Args)]
pub struct StatusArgs {
    #[arg(long, env = "MASKBUS_SOURCE_URL")]
    source: String,
    #[arg(long, env = "MASKBUS_TARGET_URL")]
    target: String,
}

#[derive(Args)]
pub struct InitArgs {
    /// The production database (seeded), e.g. postgres://postgres@127.0.0.1:55432/fintechp
    #[arg(long, env = "MASKBUS_SOURCE_URL")]
    source: String,
    /// The test database (same schema, filled by sync), e.g. .../fintecht
    #[arg(long, env = "MASKBUS_TARGET_URL")]
    target: String,
    /// The bus database that holds mq.messages, e.g. .../bus
    #[arg(long, env = "MASKBUS_BUS_URL")]
    bus: String,
}

pub async fn run(command: DbCommand) -> Result<ExitCode> {
    match command {
        DbCommand::Init(args) => init(args).await,
        DbCommand::Status(args) => status(args).await,
        DbCommand::Compare(args) => compare(args).await,
    }
}

async fn status(args: StatusArgs) -> Result<ExitCode> {
    let source = Target::parse("source", &args.source)?;
    let target = Target::parse("target", &args.target)?;
    let source_counts = maskbus_bank::row_counts(&source).await?;
    let target_counts = maskbus_bank::row_counts(&target).await?;
    println!(
        "{:<14} {:>12} {:>12}",
        "table",
        source.dbname(),
        target.dbname()
    );
    for ((table, in_source), (_, in_target)) in source_counts.iter().zip(&target_counts) {
        println!("{table:<14} {in_source:>12} {in_target:>12}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn init(args: InitArgs) -> Result<ExitCode> {
    // Parse all three first so a typo in the last URL does not leave the first two half done.
    let plan: [(Target, &[Migration]); 3] = [
        (
            Target::parse("source", &args.source)?,
            maskbus_bank::MIGRATIONS,
        ),
        (
            Target::parse("target", &args.target)?,
            maskbus_bank::MIGRATIONS,
        ),
        (
            Target::parse("bus", &args.bus)?,
            maskbus_mailbox::MIGRATIONS,
        ),
    ];
    // Masked rows must never land back in production, nor the bus share a database with either.
    for (i, (a, _)) in plan.iter().enumerate() {
        for (b, _) in &plan[i + 1..] {
            if a.endpoint() == b.endpoint() {
                anyhow::bail!(
                    "the {} and {} URLs name the same database ({}); give each its own database",
                    a.role,
                    b.role,
                    a.endpoint()
                );
            }
        }
    }
    let mut changed = false;
    for (target, migrations) in &plan {
        let created = ensure_database(target).await?;
        let applied = apply_migrations(target, migrations).await?;
        let what = match (created, applied.is_empty()) {
            (true, _) => format!("created, applied {}", applied.join(", ")),
            (false, false) => format!("applied {}", applied.join(", ")),
            (false, true) => "up to date".to_string(),
        };
        changed |= created || !applied.is_empty();
        println!(
            "{:<6} {:<40} {what}",
            target.role,
            target.endpoint().to_string()
        );
    }
    if !changed {
        println!("nothing to do: all three databases exist and their schemas are up to date");
    }
    Ok(ExitCode::SUCCESS)
}

async fn compare(args: CompareArgs) -> Result<ExitCode> {
    let source = Target::parse("source", &args.source)?;
    let target = Target::parse("target", &args.target)?;
    let limit = args.limit.clamp(1, 50);
    let (columns, source_rows) = maskbus_pg::catalog::first_rows(
        &source,
        &source.connect().await?,
        &args.schema,
        &args.table,
        limit,
    )
    .await?;
    let (_, target_rows) = maskbus_pg::catalog::first_rows(
        &target,
        &target.connect().await?,
        &args.schema,
        &args.table,
        limit,
    )
    .await?;
    let width = columns.iter().map(|c| c.len()).max().unwrap_or(6).max(6);
    let show = |v: Option<&Option<String>>| match v {
        Some(Some(text)) => text.clone(),
        Some(None) => "NULL".to_string(),
        None => "(missing)".to_string(),
    };
    for (n, row) in source_rows.iter().enumerate() {
        println!("{} row {}:", args.table, n + 1);
        println!(
            "  {:<width$}  {:<32}  {}",
            "column",
            source.dbname(),
            target.dbname()
        );
        for (i, column) in columns.iter().enumerate() {
            let theirs = target_rows.get(n).map(|r| &r[i]);
            println!(
                "  {column:<width$}  {:<32}  {}",
                show(Some(&row[i])),
                show(theirs)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
