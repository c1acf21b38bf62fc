//! The command line: its flags and environment variables ([`config`]) and the sub-commands
//! they run ([`commands`]); `main.rs` holds the table from one to the other.

pub mod commands;
pub mod config;
pub mod start;
