//! `maskbus key new`: a random pseudonym key, for the producer's `pseudonym_key` (or
//! MASKBUS_PSEUDONYM_KEY). 32 bytes from the operating system's generator, printed as 64 hex
//! digits; a configured key must have at least `maskbus_mask::MIN_KEY_BYTES` bytes and show
//! `maskbus_mask::MIN_KEY_BITS` bits by `maskbus_mask::estimate_key_bits`, which every key
//! printed here does (190 bits and more: `crates/mask/src/pseudonym.rs` tests 20,000 of them).

use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::Subcommand;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum KeyCommand {
    /// Print a new random pseudonym key (64 hex digits) on standard output.
    New,
}

pub fn run(command: KeyCommand) -> Result<ExitCode> {
    match command {
        KeyCommand::New => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("drawing a random key from the operating system")?;
            let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            println!("{key}");
            Ok(Exit::Ok.into())
        }
    }
}
