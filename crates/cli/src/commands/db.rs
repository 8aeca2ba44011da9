//! `maskbus db status` and `maskbus db compare`: the tables of a policy, side by side in the
//! source and the target. Read-only on both.

use crate::exit::Exit;
use anyhow::Result;
use clap::{Args, Subcommand};
use maskbus_pg::TableRef;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum DbCommand {
    /// Row counts of every table of the policy in the source and the target.
    Status(StatusArgs),
    /// Show the first rows of a table in the source next to the same rows in the target.
    Compare(CompareArgs),
}

#[derive(Args)]
pub struct CompareArgs {
    #[command(flatten)]
    source: super::args::Source,
    #[command(flatten)]
    target: super::args::TestDb,
    /// `table` (in schema public) or `schema.table`.
    #[arg(long, default_value = "customers")]
    table: String,
    #[arg(long, default_value_t = 3)]
    limit: i64,
}

#[derive(Args)]
pub struct StatusArgs {
    #[command(flatten)]
    source: super::args::Source,
    #[command(flatten)]
    target: super::args::TestDb,
    /// Whose tables to count.
    #[command(flatten)]
    policy: super::args::PolicyFile,
}

pub async fn run(command: DbCommand) -> Result<ExitCode> {
    match command {
        DbCommand::Status(args) => status(args).await,
        DbCommand::Compare(args) => compare(args).await,
    }
}

async fn status(args: StatusArgs) -> Result<ExitCode> {
    let (source, target) = (args.source.database()?, args.target.database()?);
    let policy = maskbus_policy::load(&args.policy.path, None)?;
    let (source_client, target_client) = (source.connect().await?, target.connect().await?);
    let tables: Vec<TableRef> = policy
        .entities()
        .map(|(name, _)| TableRef::parse(name))
        .collect();
    let width = tables
        .iter()
        .map(|t| t.to_string().len())
        .max()
        .unwrap_or(5)
        .max(5);
    println!(
        "{:<width$} {:>12} {:>12}",
        "table",
        source.dbname(),
        target.dbname()
    );
    for table in &tables {
        let count = |n: Result<i64, maskbus_pg::PgError>| match n {
            Ok(n) => n.to_string(),
            Err(_) => "(missing)".to_string(),
        };
        let in_source =
            count(maskbus_pg::catalog::count_rows(&source, &source_client, table).await);
        let in_target =
            count(maskbus_pg::catalog::count_rows(&target, &target_client, table).await);
        println!(
            "{:<width$} {in_source:>12} {in_target:>12}",
            table.to_string()
        );
    }
    Ok(Exit::Ok.into())
}

async fn compare(args: CompareArgs) -> Result<ExitCode> {
    let (source, target) = (args.source.database()?, args.target.database()?);
    if !maskbus_mask::is_entity_name(&args.table) {
        anyhow::bail!(
            "--table {:?} is not a table name (table or schema.table)",
            args.table
        );
    }
    let table = TableRef::parse(&args.table);
    let limit = args.limit.clamp(1, 50);
    let (columns, source_rows) =
        maskbus_pg::catalog::first_rows(&source, &source.connect().await?, &table, limit).await?;
    let (_, target_rows) =
        maskbus_pg::catalog::first_rows(&target, &target.connect().await?, &table, limit).await?;
    let width = columns.iter().map(|c| c.len()).max().unwrap_or(6).max(6);
    let show = |v: Option<&Option<String>>| match v {
        Some(Some(text)) => text.clone(),
        Some(None) => "NULL".to_string(),
        None => "(missing)".to_string(),
    };
    for (n, row) in source_rows.iter().enumerate() {
        println!("{} row {}:", table.name, n + 1);
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
    Ok(Exit::Ok.into())
}
