//! `agentsim-sim`: the deterministic simulator as a library — scenarios, the
//! discrete-event engine, schedulers, generators, the runner, per-trial metrics and their
//! aggregate with Wilson intervals, shrinking and replay lines.
//!
//! It depends on the formal core (`agentsim-models`) only; the `agentsim` front end (commands,
//! experiments, tables and figures) sits above it, and Cargo keeps it from reaching up.
//!
//! Data flows one way: [`scenario::Scenario`] → [`runner::run`] (trials on threads, each an
//! [`engine::run_trial`] with its own seed) → histories → detectors → [`metrics`]. The same
//! seed gives byte-identical results whatever the thread count. A simulation estimates how
//! often an anomaly occurs under the modelled timing; it proves nothing about schedules it
//! did not sample (that is the exhaustive checker's job).

pub mod bounds;
pub mod digest;
pub mod dist;
pub mod engine;
pub mod explore;
pub mod fit;
pub mod generator;
pub mod metrics;
pub mod replay_line;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod schedule;
pub mod scheduler;
pub mod shard;
pub mod shrink;
pub mod source;
pub mod stats;
pub mod vacuity;

pub use runner::{run, run_one, RunConfig, RunResult, TrialResult};
pub use scenario::Scenario;
