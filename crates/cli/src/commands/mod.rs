//! One module per subcommand: argument structs and the call into the library that does the work.

pub mod agent;
pub mod args;
pub mod audit;
pub mod bank;
pub mod bus;
pub mod config;
pub mod db;
pub mod key;
pub mod policy;
pub mod seed;
pub mod slot;
pub mod status;
pub mod subset;
pub mod verify;
