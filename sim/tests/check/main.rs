//! The `check` test binary: `agentsim check`, `matrix` and `lattice --realize` end to end
//! (bounds, limits, replicas, skew, stacks) and the typed choices of every command, one module
//! per subject.

#[path = "../util/mod.rs"]
mod util;

mod check_abstract_cli;
mod check_cli;
mod check_limits;
mod check_liveness_cli;
mod check_replicas;
mod check_skew;
mod check_stack_cli;
mod check_vacuity;
mod realize_cli;
mod typed_choices;
