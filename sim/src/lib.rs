//! `agentsim`: the deterministic simulator and the command-line front end.
//!
//! The binary's subcommands live one per file under [`cmd`]; the simulator's engine, its
//! schedulers and generators live beside them. Everything here is seeded and runs on virtual
//! time: the same seed gives the same bytes, whatever the thread count.

pub mod checker_steps;
pub mod cmd;
pub mod deployed;
pub mod experiments;
pub mod figures;
pub mod output;
pub mod reproduce;
pub mod sim;
pub mod tables;
