//! The `simulate` test binary: the simulator (determinism, guards, replay, scenarios), the
//! experiments (twins, workloads, sweep) and sharded runs merged, one module per subject.

#[path = "../util/mod.rs"]
mod util;

mod exp_mcp;
mod exp_twins;
mod exp_workloads;
mod fit_fix;
mod shard_merge;
mod sim_determinism;
mod sim_gates;
mod sim_guards;
mod sim_replay;
mod sim_scenarios;
