//! Partial-order reduction: the independence relation of engine steps and the persistent sets
//! it gives (Godefroid 1996, "Partial-Order Methods for the Verification of Concurrent
//! Systems", ch. 4; the persistent-set half of Flanagan and Godefroid's DPOR, POPL 2005).
//!
//! The relation, on the steps of two *different* agents (steps of one agent are always
//! dependent):
//! - a [`Footprint::Local`] step is independent of every step of another agent: it reads and
//!   writes only its own agent's state (program counter, open operation, latest read) and
//!   draws only on the trial's stream, whose draws no history depends on in abstract time;
//! - two [`Footprint::Shared`] steps are dependent, always. This is deliberately coarse: the
//!   runtime keeps a commit clock, locks, a log and a registry whose order a history shows,
//!   so even two begins on disjoint cells may not commute under every runtime.
//!
//! A local step stays enabled until its agent takes it (no other agent can disable it; the
//! step budget counts only the agent's own steps), so at a state where some enabled agent's
//! next step is local, that agent alone is a persistent set; otherwise every enabled agent is.
//! Every terminal history reachable in the full tree is then reachable in the reduced one
//! (the search is acyclic: the budget and `events_max` bound every path, so no cycle proviso
//! is needed). The test `independent_steps_commute` checks the first clause on random states
//! of the engine; `reduced_and_plain_agree` compares both searches on a generated family.
//! What the relation does not buy: sleep sets and source sets only help where shared steps
//! are independent, which this relation never declares; a finer relation (begins on
//! disjoint cells, commits on disjoint cells under a given runtime) is where they would.

use crate::scheduler::{ChoicePoint, Footprint};

/// The alternatives to explore at an agent choice point: the first enabled agent whose next
/// step is local, alone; else all.
pub(super) fn persistent(p: &ChoicePoint<'_>) -> Vec<u32> {
    assert_eq!(p.next.len(), p.n, "a footprint per enabled agent");
    match p.next.iter().position(|&f| f == Footprint::Local) {
        Some(i) => vec![i as u32],
        None => (0..p.n as u32).collect(),
    }
}

/// Whether steps with these footprints, of two different agents, are declared independent.
pub fn independent(a: Footprint, b: Footprint) -> bool {
    a == Footprint::Local || b == Footprint::Local
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::ChoiceKind;

    #[test]
    fn a_local_step_is_a_persistent_set_alone() {
        let enabled = [0, 2, 5];
        let next = [Footprint::Shared, Footprint::Local, Footprint::Local];
        let p = ChoicePoint {
            kind: ChoiceKind::Agent,
            n: 3,
            agent: 0,
            enabled: &enabled,
            next: &next,
        };
        assert_eq!(persistent(&p), vec![1]);
        let all = [Footprint::Shared; 3];
        let p = ChoicePoint { next: &all, ..p };
        assert_eq!(persistent(&p), vec![0, 1, 2]);
        assert!(independent(Footprint::Local, Footprint::Shared));
        assert!(!independent(Footprint::Shared, Footprint::Shared));
    }
}
