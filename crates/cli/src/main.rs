//! The `maskbus` binary: parses arguments and hands each command to the library crate that does
//! the work. Nothing here decides anything about masking, the bus or the sync.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "maskbus",
    version,
    about = "Move production rows to a test database through a Postgres mailbox, masked before they leave."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The tables of a policy side by side in the source and the target (read-only).
    #[command(subcommand)]
    Db(commands::db::DbCommand),
    /// The demo bank: create its schema in the databases named (demo, benchmarks, tests only).
    #[command(subcommand)]
    Bank(commands::bank::BankCommand),
    /// Run as producer or consumer, as the config says.
    Run(commands::agent::RunArgs),
    /// Serve the config's role's tools to an LLM agent host over MCP (stdio).
    Mcp(commands::agent::McpArgs),
    /// List the tools of the config's role.
    Tools(commands::agent::ToolsArgs),
    /// Scan every message that crossed the bus for SSNs, cards and other PII.
    WireAudit(commands::audit::AuditArgs),
    /// Operate the mailbox: init, send, stats, redrive, purge.
    Bus(commands::bus::BusArgs),
    /// Check a masking policy against the live source schema.
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// Fill the source (production) database with realistic fake bank data.
    Seed(commands::seed::SeedArgs),
    /// Compare the target with the masked source by key ranges; --repair makes them equal.
    Verify(commands::verify::VerifyArgs),
    /// The change stream's replication slots on the source: list, drop.
    #[command(subcommand)]
    Slot(commands::slot::SlotCommand),
    /// Subsets defined on the producer: plan (rows per table, before anything moves).
    #[command(subcommand)]
    Subset(commands::subset::SubsetCommand),
}

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("maskbus: error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Db(command) => commands::db::run(command).await,
            Command::Bank(command) => commands::bank::run(command).await,
            Command::Seed(args) => commands::seed::run(args).await,
            Command::Policy(command) => commands::policy::run(command).await,
            Command::Bus(args) => commands::bus::run(args).await,
            Command::WireAudit(args) => commands::audit::run(args).await,
            Command::Run(args) => commands::agent::run(args).await,
            Command::Tools(args) => commands::agent::tools(args).await,
            Command::Mcp(args) => commands::agent::mcp(args).await,
            Command::Verify(args) => commands::verify::run(args).await,
            Command::Slot(command) => commands::slot::run(command).await,
            Command::Subset(command) => commands::subset::run(command).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("maskbus: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Logs go to stderr (stdout carries results, and later the MCP protocol). `MASKBUS_LOG` takes
/// an EnvFilter directive; the default shows maskbus' own info lines and others' warnings.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MASKBUS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,maskbus=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .compact()
        .init();
}
