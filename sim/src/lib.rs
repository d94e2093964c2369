//! `agentsim`: the command-line front end over the simulator (`agentsim-sim`), the checker
//! (`agentsim-checker`) and the formal core (`agentsim-models`).
//!
//! Stacked one way, each layer importing only those below it: [`cmd`] (one file per
//! subcommand: parse flags, validate into a typed config, call one function, print) →
//! [`experiments`] (each owns its scenario loading, its run and its tables and figures) and
//! [`bench`] (the benchmarks) → [`artifacts`] (tables, figures, atomic output files and the
//! `reproduce` driver) → the library crates. Everything is seeded and runs on virtual time:
//! the same seed gives the same bytes, whatever the thread count. [`limits`], the limits of
//! the numbers every command takes, sits below them all.

pub mod artifacts;
pub mod bench;
pub mod cmd;
pub mod experiments;
pub mod limits;
pub mod verdicts;
pub mod view;
