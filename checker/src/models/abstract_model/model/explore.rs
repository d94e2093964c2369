//! How the explorer sees the abstract model ([`Space`]): the canonical fingerprint (memoized
//! per thread), the action list reduced under agent symmetry, the property verdicts and the
//! view a trace prints. A child of [`super`] so it reads the model's private fields without
//! widening them.

use super::{codec, memo, registry_of, value_map, AbsState, AbstractModel};
use crate::config::Bounds;
use crate::engine::space::{fingerprint_of, PendingView, Space, StateView};
use crate::models::action::Action;
use crate::property::PropSet;

impl Space for AbstractModel {
    fn bounds(&self) -> Bounds {
        self.cfg.bounds
    }

    fn fingerprint(&self, s: &AbsState) -> u64 {
        thread_local! {
            static BUF: std::cell::RefCell<(Vec<u8>, codec::Scratch)> =
                std::cell::RefCell::new((Vec::new(), codec::Scratch::new()));
        }
        memo::fingerprint(self.memo_id, s, |s| {
            BUF.with(|b| {
                let (b, scratch) = &mut *b.borrow_mut();
                b.clear();
                codec::encode_with(s, self.cfg.symmetry, &self.cell_perms, scratch, b);
                fingerprint_of(&b[..])
            })
        })
    }

    /// With symmetry, only the actions of the first of the agents whose slots are equal:
    /// swapping two agents with equal slots maps the state onto itself (nothing else names
    /// an agent), so agent `j`'s action leads to the swap of what agent `i`'s same action
    /// leads to, and agent `i < j` comes first in the enumeration. The symmetry tests check
    /// that the distinct states and depth match the unreduced exploration.
    fn explore_actions(&self, s: &AbsState, actions: &mut Vec<Action>) {
        let start = actions.len();
        stateright::Model::actions(self, s, actions);
        if !self.cfg.symmetry {
            return;
        }
        let pending = &s.summary.pending;
        let mut shadowed = 0u32;
        for j in 1..pending.len() {
            if pending[..j].contains(&pending[j]) {
                shadowed |= 1 << j;
            }
        }
        if shadowed == 0 {
            return;
        }
        let mut k = start;
        for i in start..actions.len() {
            let agent = match actions[i] {
                Action::StartRead { agent, .. } | Action::CompleteWrite { agent, .. } => {
                    Some(agent)
                }
                _ => None,
            };
            if agent.is_none_or(|a| shadowed & (1 << a) == 0) {
                actions[k] = actions[i];
                k += 1;
            }
        }
        actions.truncate(k);
    }

    // Frontiers use the generic serde encoding (the default): it keeps the state as it is,
    // while `codec` writes a representative (record order, symmetry), and the trace search
    // replays action indices (a `Retract(k)` names a record by position) from decoded states.

    fn violations(&self, s: &AbsState, check: PropSet) -> PropSet {
        self.verdict(s, check)
    }

    /// In-flight reads, registry and memory; no log (there is none: concretize a trace to
    /// see one).
    fn view(&self, s: &AbsState) -> StateView {
        let b = &self.cfg.bounds;
        let registry = registry_of(s, b.tools);
        StateView {
            log: Vec::new(),
            inflight: s
                .summary
                .pending
                .iter()
                .map(|p| {
                    p.map(|p| PendingView {
                        read_set: (0..b.cells).filter(|c| p.rs & (1 << c) != 0).collect(),
                        read_values: value_map(p.rv, b.cells),
                        read_registry: registry.clone(),
                        planned_tool: p.tool.checked_sub(1).map(u32::from),
                        read_time: 0,
                        preds: Vec::new(),
                    })
                })
                .collect(),
            registry,
            memory: value_map(s.memory, b.cells),
        }
    }
}

/// Liveness: an agent's action is its step; a commit is live unless the stack aborts it
/// (decided on the summary before the commit, as `commit` decides it).
impl crate::engine::fair::Fair for AbstractModel {
    fn step(&self, s: &AbsState, action: Action, _next: &AbsState) -> crate::engine::fair::Step {
        use super::super::mechanism::Policies;
        use crate::engine::fair::Step;
        use crate::models::action::seq_mask;
        match action {
            Action::StartRead { agent, .. } => Step {
                agent: Some(agent),
                commits: false,
            },
            Action::CompleteWrite { agent, io, .. } => Step {
                agent: Some(agent),
                commits: !self.cfg.stack.aborts(
                    &self.need,
                    &s.summary,
                    agent.into(),
                    seq_mask(io) as u8,
                ),
            },
            _ => Step {
                agent: None,
                commits: false,
            },
        }
    }

    fn busy(&self, s: &AbsState) -> u8 {
        s.summary
            .pending
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_some())
            .fold(0, |m, (k, _)| m | 1 << k)
    }

    fn at_bound(&self, s: &AbsState) -> bool {
        self.full(s.ops)
    }
}
