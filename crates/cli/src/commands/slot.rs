//! `maskbus slot`: the change stream's replication slots on the source. They keep WAL on
//! production for as long as they exist, so they are listed loudly and can be dropped.

use crate::exit::Exit;
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use maskbus_config::{self as config, AgentConfig};
use maskbus_pg::Database;
use maskbus_producer::changes::{drop_slot, slot_report, SLOT_PREFIX};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SlotCommand {
    /// Every maskbus slot on the source, with the WAL it keeps. Exits 5 when a slot is not this
    /// producer's (abandoned, unless another producer names it).
    List(SlotArgs),
    /// Drop a maskbus slot and its publication (its consumer must start its stream again).
    Drop {
        /// The slot's name (maskbus_...).
        name: String,
        #[command(flatten)]
        args: SlotArgs,
    },
}

#[derive(Args)]
pub struct SlotArgs {
    /// The producer's config (its source URL, and the slot it names).
    #[arg(long, env = "MASKBUS_CONFIG")]
    config: PathBuf,
}

fn producer(args: &SlotArgs) -> Result<(Database, Option<String>)> {
    let AgentConfig::Producer(producer) = config::load(&args.config)? else {
        bail!("maskbus slot runs with the producer's config (slots live on the source)");
    };
    Ok((
        Database::parse("source", &producer.source_url.0)?,
        producer.slot,
    ))
}

pub async fn run(command: SlotCommand) -> Result<ExitCode> {
    match command {
        SlotCommand::List(args) => {
            let (source, own) = producer(&args)?;
            let report = slot_report(&source, own.as_deref()).await?;
            println!(
                "{:<40} {:<20} {:>12}  state",
                "slot", "database", "WAL kept"
            );
            for slot in &report {
                println!(
                    "{:<40} {:<20} {:>9} MB  {}",
                    slot.name,
                    slot.database,
                    slot.retained_bytes / (1 << 20),
                    if slot.own {
                        "this producer's"
                    } else {
                        "ABANDONED: not this producer's slot; drop it unless another producer names it"
                    }
                );
            }
            if report.is_empty() {
                println!("no {SLOT_PREFIX}* slots on the source");
            }
            Ok(if report.iter().any(|s| s.abandoned()) {
                Exit::AbandonedSlot.into()
            } else {
                Exit::Ok.into()
            })
        }
        SlotCommand::Drop { name, args } => {
            let (source, _) = producer(&args)?;
            if drop_slot(&source, &name).await? {
                println!("dropped slot {name} and its publication");
            } else {
                println!("no slot {name}; its publication, if any, is gone too");
            }
            Ok(Exit::Ok.into())
        }
    }
}
