//! The deterministic simulator (issue 4): scenarios, the discrete-event engine, schedulers,
//! generators, per-trial metrics and their aggregate with Wilson intervals.
//!
//! Data flows one way: [`scenario::Scenario`] → [`runner::run`] (trials on threads, each an
//! [`engine::run_trial`] with its own seed) → histories → detectors → [`metrics`]. The same
//! seed gives byte-identical results whatever the thread count. A simulation estimates how
//! often an anomaly occurs under the modelled timing; it proves nothing about schedules it
//! did not sample (that is the exhaustive checker's job).

pub mod cpl_twin;
pub mod digest;
pub mod dist;
pub mod engine;
pub mod generator;
pub mod metrics;
pub mod replay_line;
pub mod runner;
pub mod runtime_choice;
pub mod scenario;
pub mod schedule;
pub mod scheduler;
pub mod shrink;
pub mod stats;

pub use runner::{run, run_one, RunConfig, RunResult, TrialResult};
pub use scenario::Scenario;
