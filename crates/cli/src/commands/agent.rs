//! `maskbus run` and `maskbus tools`: one binary, the role from the config.

use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::Args;
use maskbus_config::{self as config, AgentConfig};
use maskbus_tools::{Agent, Tool};
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::sync::watch;

#[derive(Args)]
pub struct RunArgs {
    /// The agent's config (TOML): role = "producer" or "consumer", and its URLs.
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
    /// Consumer: sync every entity until caught up, then exit 0 (for CI scripts).
    #[arg(long)]
    once: bool,
    /// Consumer: take this target although it already holds rows (the first run refuses a
    /// database that is not empty, so production is never written into by a typo).
    #[arg(long)]
    init_target: bool,
    /// Consumer, with --once: then compare the target with the masked source (exit 4 if they
    /// differ), as `maskbus verify` does.
    #[arg(long, requires = "once")]
    verify: bool,
    /// Consumer, with --once: then make the target equal to the masked source (deletes
    /// included), as `maskbus verify --repair` does.
    #[arg(long, requires = "once")]
    repair: bool,
}

#[derive(Args)]
pub struct ToolsArgs {
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
    /// Print each tool's JSON input schema too, one JSON object per line.
    #[arg(long)]
    json: bool,
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub async fn run(args: RunArgs) -> Result<ExitCode> {
    let mut config = config::load(&args.config)?;
    match &mut config {
        AgentConfig::Producer(_) if args.once || args.init_target || args.verify || args.repair => {
            anyhow::bail!("--once and --init-target are for the consumer; the producer serves until SIGTERM or SIGINT")
        }
        AgentConfig::Consumer(consumer) => consumer.init_target = args.init_target,
        AgentConfig::Producer(_) => {}
    }
    let agent = Agent::start(&config).await.with_context(|| {
        format!(
            "starting the {} from {}",
            config.role(),
            args.config.display()
        )
    })?;
    let agent = std::sync::Arc::new(agent);
    if let Some(addr) = config.metrics_addr() {
        // The listener's thread asks the agent on this runtime: the bus's depth at each scrape,
        // the databases at each health check.
        let runtime = tokio::runtime::Handle::current();
        let (counted, checked, scrape) = (agent.clone(), agent.clone(), runtime.clone());
        let max_age = config.audit_max_age();
        maskbus_telemetry::serve(
            addr,
            move || scrape.block_on(counted.count_bus()),
            move || runtime.block_on(checked.health(max_age)),
        )?;
    }
    match &*agent {
        Agent::Producer(producer) => {
            tracing::info!(mailbox = %producer.inbox(), "producer serving");
            let served = producer.serve(shutdown_signal()).await?;
            tracing::info!(served, "producer stopped");
        }
        Agent::Consumer(consumer) => {
            let (stop, stopped) = watch::channel(false);
            let signalled = stopped.clone();
            tokio::spawn(async move {
                shutdown_signal().await;
                let _ = stop.send(true);
            });
            match consumer.run(args.once, stopped).await {
                // A run with --once that a signal cut short is not a finished sync: CI must not
                // take it for one.
                Ok(rows) if args.once && *signalled.borrow() => {
                    println!("synced {rows} rows");
                    eprintln!("maskbus: error: stopped by a signal before the sync was done; run it again to finish");
                    return Ok(Exit::Failed.into());
                }
                Ok(rows) => {
                    println!("synced {rows} rows");
                    if args.verify || args.repair {
                        let report = consumer.verify(args.repair).await?;
                        super::verify::print(&report, false);
                        return Ok(super::verify::exit_code(&report, args.repair));
                    }
                }
                // Some tables synced, some could not: say which, and exit 3 so CI can tell.
                // With --verify or --repair, the tables that synced are still compared (and
                // repaired); those that did not are named as not verified, with why.
                Err(e @ maskbus_consumer::ConsumerError::Partial { .. }) => {
                    eprintln!("maskbus: error: {e}");
                    if let maskbus_consumer::ConsumerError::Partial { failed, .. } = &e {
                        if args.verify || args.repair {
                            let report = maskbus_consumer::verify::Verifier::connect(consumer)
                                .await?
                                .run_except(failed, args.repair)
                                .await?;
                            super::verify::print(&report, false);
                            let unrepaired: Vec<&str> = report
                                .not_verified
                                .iter()
                                .chain(&report.not_repaired)
                                .map(|t| t.entity.as_str())
                                .collect();
                            eprintln!(
                                "maskbus: error: not {}: {} (each named above with why); the other tables were",
                                if args.repair { "repaired" } else { "verified" },
                                unrepaired.join(", ")
                            );
                        }
                    }
                    return Ok(Exit::Partial.into());
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(Exit::Ok.into())
}

pub async fn tools(args: ToolsArgs) -> Result<ExitCode> {
    let config = config::load(&args.config)?;
    for tool in Tool::of(config.role()) {
        if args.json {
            println!(
                "{}",
                serde_json::json!({"name": tool.name(), "description": tool.description(config.role()), "input_schema": tool.input_schema(config.role())})
            );
        } else {
            println!("{}\t{}", tool.name(), tool.description(config.role()));
        }
    }
    Ok(Exit::Ok.into())
}

#[derive(Args)]
pub struct McpArgs {
    /// The agent's config; its role decides which tools are served.
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
}

/// `maskbus mcp`: the role's tools over MCP on stdio. Logs stay on stderr.
pub async fn mcp(args: McpArgs) -> Result<ExitCode> {
    let config = config::load(&args.config)?;
    let agent = Agent::start(&config).await.with_context(|| {
        format!(
            "starting the {} from {}",
            config.role(),
            args.config.display()
        )
    })?;
    maskbus_mcp::serve_stdio(agent).await?;
    Ok(Exit::Ok.into())
}
