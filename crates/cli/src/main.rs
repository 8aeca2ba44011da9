//! The `maskbus` binary: parses arguments and hands each command to the library crate that does
//! the work. Nothing here decides anything about masking, the bus or the sync.

mod commands;
mod exit;
mod reference;

use exit::Exit;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
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
    /// The tables of a policy side by side in the source and the target (read-only)
    #[command(subcommand)]
    Db(commands::db::DbCommand),
    /// The demo bank's schema, in the databases named (demo, benchmarks, tests only)
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
    /// Operate the mailbox
    Bus(commands::bus::BusArgs),
    /// Masking policies, read against the live source schema
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// Fill the source (production) database with realistic fake bank data.
    Seed(commands::seed::SeedArgs),
    /// Compare the target with the masked source by key ranges; --repair makes them equal.
    Verify(commands::verify::VerifyArgs),
    /// The change stream's replication slots on the source
    #[command(subcommand)]
    Slot(commands::slot::SlotCommand),
    /// Where the consumer's target stands: per table rows, watermark, lag; the bus; exit 0
    /// caught up, 6 behind, 7 unknown.
    Status(commands::status::StatusArgs),
    /// Subsets defined on the producer, planned before anything moves
    #[command(subcommand)]
    Subset(commands::subset::SubsetCommand),
    /// The config keys and environment variables, from the tables that define them
    #[command(subcommand)]
    Config(commands::config::ConfigCommand),
    /// The reference pages generated from definitions (docs/commands.md, docs/rules.md)
    #[command(subcommand, hide = true)]
    Docs(DocsCommand),
    /// Pseudonym keys for the producer's config
    #[command(subcommand)]
    Key(commands::key::KeyCommand),
}

/// The CLI's definition, each group's summary ending with the list of its subcommands (`Operate
/// the mailbox: init, grant, send, ...`), made from the subcommands themselves so that the list
/// cannot leave one out. Parsing, `--help` and docs/commands.md all read this.
fn cli() -> clap::Command {
    Cli::command().mut_subcommands(list_subcommands)
}

/// A group command (one with subcommands) with their names appended to its summary; every
/// group below it too.
fn list_subcommands(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    if names.is_empty() {
        return command;
    }
    let about = command
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let about = format!("{}: {}", about.trim_end_matches('.'), names.join(", "));
    command.about(about).mut_subcommands(list_subcommands)
}

/// A closed standard output (`maskbus db status | head`) ends the program quietly with exit 0,
/// as Unix tools do, instead of a panic: Rust ignores SIGPIPE, so `println!` panics on EPIPE.
/// Any other panic is reported as before.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Pages of docs/ that are generated.
#[derive(Subcommand)]
enum DocsCommand {
    /// docs/commands.md: every command, its arguments and the exit codes.
    Commands,
    /// docs/rules.md: every masking rule, its class and what it does.
    Rules,
}

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let log_format = init_tracing();
    let cli = match Cli::from_arg_matches(&cli().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("maskbus: error: cannot start the async runtime: {e}");
            return Exit::Failed.into();
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
            Command::Status(args) => commands::status::run(args).await,
            Command::Key(command) => commands::key::run(command),
            Command::Config(command) => commands::config::run(command),
            Command::Docs(DocsCommand::Commands) => {
                print!("{}", reference::commands_markdown());
                Ok(Exit::Ok.into())
            }
            Command::Docs(DocsCommand::Rules) => {
                print!("{}", maskbus_mask::catalog::markdown());
                Ok(Exit::Ok.into())
            }
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            match log_format {
                // A log pipeline reads the failure as one more event.
                LogFormat::Json => tracing::error!(error = %format!("{e:#}"), "maskbus failed"),
                LogFormat::Text => eprintln!("maskbus: error: {e:#}"),
            }
            Exit::Failed.into()
        }
    }
}

/// How log lines are written: for people (the default) or one JSON object a line, for a log
/// pipeline (`MASKBUS_LOG_FORMAT=json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LogFormat {
    Text,
    Json,
}

/// The format `MASKBUS_LOG_FORMAT` asks for, or why it cannot be had.
fn log_format(value: Option<&str>) -> Result<LogFormat, String> {
    match value.map(str::trim) {
        None | Some("") | Some("text") => Ok(LogFormat::Text),
        Some("json") => Ok(LogFormat::Json),
        Some(other) => Err(format!(
            "MASKBUS_LOG_FORMAT={:?}: use \"text\" (the default) or \"json\"; logging as text",
            other.chars().take(32).collect::<String>()
        )),
    }
}

/// Logs go to stderr (stdout carries results, and the MCP protocol). `MASKBUS_LOG` takes an
/// EnvFilter directive; the default shows maskbus' own info lines and others' warnings.
fn init_tracing() -> LogFormat {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MASKBUS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,maskbus=info"));
    // tokio-postgres logs statements' parameters at debug and server notices at info: values,
    // whatever MASKBUS_LOG asks for. Its warnings are all it may say.
    let filter = match "tokio_postgres=warn".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    // The replication client logs the server's own error text when its stream ends: maskbus
    // reports that end itself, by SQLSTATE (`maskbus_pg::walsender`).
    let filter = [
        "pgwire_replication=off",
        "pgwire_replication::client::tokio_client=off",
    ]
    .iter()
    .filter_map(|d| d.parse().ok())
    .fold(filter, |filter, directive| filter.add_directive(directive));
    let requested = std::env::var("MASKBUS_LOG_FORMAT").ok();
    let format = log_format(requested.as_deref());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        Ok(LogFormat::Json) => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init(),
        _ => builder
            .with_target(false)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .compact()
            .init(),
    }
    match format {
        Ok(format) => format,
        Err(warning) => {
            tracing::warn!("{warning}");
            LogFormat::Text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        // clap's own checks (unique argument ids, valid defaults), for every subcommand.
        cli().debug_assert();
    }

    #[test]
    fn every_group_summary_lists_every_subcommand() {
        fn check(command: &clap::Command, path: &str) {
            for child in command.get_subcommands() {
                let names: Vec<&str> = child
                    .get_subcommands()
                    .filter(|c| !c.is_hide_set())
                    .map(|c| c.get_name())
                    .collect();
                let about = child.get_about().map(|a| a.to_string()).unwrap_or_default();
                for name in &names {
                    assert!(
                        about.contains(&format!(" {name}")),
                        "`{path} {}`'s summary {about:?} leaves out {name}",
                        child.get_name()
                    );
                }
                check(child, &format!("{path} {}", child.get_name()));
            }
        }
        let root = cli();
        check(&root, "maskbus");
        let bus = root.find_subcommand("bus").unwrap();
        assert!(
            bus.get_about()
                .unwrap()
                .to_string()
                .ends_with(": init, grant, send, stats, redrive, purge"),
            "{:?}",
            bus.get_about()
        );
    }

    #[test]
    fn the_rules_reference_is_generated_from_the_catalog() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/rules.md");
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == maskbus_mask::catalog::markdown(),
            "docs/rules.md is not what crates/mask/src/catalog.rs says: run `maskbus docs rules > docs/rules.md`"
        );
    }

    #[test]
    fn the_commands_reference_is_generated_from_the_cli() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/commands.md");
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == reference::commands_markdown(),
            "docs/commands.md is not what the CLI says: run `maskbus docs commands > docs/commands.md`"
        );
        for command in [
            "maskbus run",
            "maskbus verify",
            "maskbus status",
            "maskbus slot list",
            "maskbus subset plan",
            "maskbus mcp",
            "maskbus tools",
            "maskbus key new",
        ] {
            assert!(
                written.contains(&format!("## {command}\n")),
                "{command} is missing"
            );
        }
    }

    #[test]
    fn the_log_format_is_text_unless_json_is_asked_for() {
        assert_eq!(log_format(None), Ok(LogFormat::Text));
        assert_eq!(log_format(Some("text")), Ok(LogFormat::Text));
        assert_eq!(log_format(Some(" json ")), Ok(LogFormat::Json));
        assert!(log_format(Some("xml")).unwrap_err().contains("\"json\""));
    }
}
