//! The engine's buffer pool: the vectors an operation or a trial would otherwise allocate
//! afresh, kept for the next one. It exists for speed only (the simulator's operations-per-second target): in steady
//! state the hot path then allocates just what the runtime's records keep.
//!
//! Reuse is invisible in results because every buffer is cleared or overwritten before it is
//! read; the determinism tests (same bytes whatever the threads, replay = original) check it.
//! A passing run does not prove the pool is small: it holds at most the high-water mark of one
//! trial's buffers.

use super::AgentState;
use agentsim_models::names::Cell;

/// Buffers reused across operations and, through [`super::run_trial_in`], across trials, so that in
/// steady state the hot path allocates only what the runtime's records keep. Reuse never
/// changes what a buffer holds when it is read: each is cleared (or overwritten) before use,
/// so a trial's result is the same with a fresh pool or a used one.
#[derive(Default)]
pub struct Pool {
    /// `Engine::select`'s output; a read set comes back here after its begin.
    pub(super) cells: Vec<Cell>,
    /// `Engine::select`'s draw pool when it picks at random.
    pub(super) pick: Vec<Cell>,
    /// The read cells a write adds (`include_read`).
    pub(super) extra: Vec<Cell>,
    /// Effect latencies of one issue.
    pub(super) latencies: Vec<u64>,
    /// The enabled agents of one event.
    pub(super) enabled: Vec<usize>,
    /// The previous trial's agent states, each with its operation's buffers (reset before
    /// reuse), and token tallies (emptied, capacity kept).
    pub(super) agents: Vec<AgentState>,
    pub(super) record_tokens: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use crate::engine::{run_trial, run_trial_in, TrialRun, TrialSetup};
    use crate::runner::{generator, trial_seed};
    use crate::scenario::Scenario;
    use crate::scheduler::SchedulerSpec;
    use agentsim_models::runtime::Stack;
    use std::path::Path;

    fn trial(sc: &Scenario, rt: Stack, k: u64, pool: Option<&mut Pool>) -> TrialRun {
        let generator = generator(sc, None);
        let mut sched = SchedulerSpec::Random.build();
        let setup = TrialSetup {
            scenario: sc,
            trial_seed: trial_seed(sc.seed, k),
            generator: generator.as_ref(),
            scheduler: sched.as_mut(),
            stop: None,
            trace: true,
            record: false,
        };
        let runtime = rt.build(sc.registry(), sc.provenance);
        match pool {
            Some(p) => run_trial_in(runtime, setup, p),
            None => run_trial(runtime, setup),
        }
        .expect("stub generation never fails")
    }

    /// One pool carried through many trials (aborts, retries, random picks, several
    /// runtimes) gives each trial exactly the run a fresh pool gives.
    #[test]
    fn a_used_pool_changes_nothing() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples");
        let mut pool = Pool::default();
        for name in ["edit-review.toml", "triage.toml", "plan-execute.toml"] {
            let sc = Scenario::load(&root.join(name)).expect("shipped scenario");
            for rt in ["vanilla", "ssi", "pessimistic", "registry"] {
                let rt = Stack::parse(rt).expect("known runtime");
                for k in 0..40 {
                    let fresh = trial(&sc, rt, k, None);
                    let reused = trial(&sc, rt, k, Some(&mut pool));
                    assert_eq!(fresh.records, reused.records, "{name} trial {k}");
                    assert_eq!(fresh.counters, reused.counters, "{name} trial {k}");
                    assert_eq!(fresh.schedule, reused.schedule, "{name} trial {k}");
                    assert_eq!(fresh.trace, reused.trace, "{name} trial {k}");
                }
            }
        }
        assert!(!pool.agents.is_empty(), "agent states were pooled");
    }
}
