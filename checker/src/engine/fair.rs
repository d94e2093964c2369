//! Liveness on the explicit state graph: fair cycles found with strongly connected components.
//!
//! [`graph`] explores the whole reachable space breadth-first (both cores expand a level's
//! states; one thread numbers the successors in frontier order, so the numbering, and every
//! stem and cycle built on it, does not depend on the thread count) and keeps every
//! transition with who took it: an agent (and whether the step was a live commit) or the
//! environment (registry changes, retractions). The checks then run on that graph:
//!
//! * *starvation* of agent `x`: a fair infinite run on which `x` has an op in flight
//!   infinitely often and, from some point on, never commits one live: every op it begins
//!   aborts (and is retried by the next begin) or stays in flight forever;
//! * *livelock*: a fair infinite run on which agents step infinitely often and, from some
//!   point on, none commits live.
//!
//! Fairness is per agent, over all of its actions (begins and commits), as TLA+'s
//! `WF_vars(Agent(a))` / `SF_vars(Agent(a))`; the environment is not fair. *Weak*: an agent
//! enabled at every state of the cycle steps in it. *Strong*: an agent enabled at some state
//! of the cycle steps in it. *None*: any run, stuttering included. A run may stutter forever
//! at a state where no agent is enabled (TLA+ allows it; it is fair there).
//!
//! An infinite run ends in a strongly connected component (SCC) of the transitions it keeps
//! taking. For weak fairness an SCC holds a fair cycle iff the tour of all its states and
//! edges is fair: every agent steps inside it or is disabled at one of its states. For strong
//! fairness the states where an agent is enabled but never steps inside are removed and the
//! rest split again (the Emerson–Lei refinement for Streett conditions). Tarjan's algorithm
//! (iterative) finds the SCCs; each property costs a few linear passes over the graph, cheap
//! next to generating it.
//!
//! A state at the model's bound (a full log) ends every run through it: such a run is cut,
//! not infinite, so those states take part in no cycle, and a search that met one and found
//! no fair cycle cannot tell (the bound may have cut the only ones).

use crate::engine::space::{IdentityHasher, Space};
pub use agentsim_models::fair::{fair_lasso, sccs, Edge, Fairness, Goal, Graph, Lasso, AGENTS_MAX};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Who took a step and what it did, as the liveness checks need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The agent whose action it was; `None` for the environment.
    pub agent: Option<u8>,
    /// The step committed the agent's op live (not aborted).
    pub commits: bool,
}

/// What a model offers beyond [`Space`] to be checked for liveness.
pub trait Fair: Space {
    /// Who takes `action` from `state`, and whether it commits live (`next` is its
    /// successor).
    fn step(&self, state: &Self::State, action: Self::Action, next: &Self::State) -> Step;
    /// The agents with an op in flight (bit per agent).
    fn busy(&self, state: &Self::State) -> u8;
    /// Whether `state` is at the model's bound (no run continues past it).
    fn at_bound(&self, state: &Self::State) -> bool;
}

/// A liveness property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LiveProperty {
    /// No agent starves.
    Starvation,
    /// The agents as a whole do not livelock.
    Livelock,
}

impl LiveProperty {
    pub const ALL: [LiveProperty; 2] = [LiveProperty::Starvation, LiveProperty::Livelock];

    pub fn name(self) -> &'static str {
        match self {
            LiveProperty::Starvation => "starvation",
            LiveProperty::Livelock => "livelock",
        }
    }

    pub fn parse(s: &str) -> Option<LiveProperty> {
        LiveProperty::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// Per level, what one worker computed for one state: its successors' fingerprints, states
/// and labels, and its enabled and busy masks.
struct Expanded<St> {
    enabled: u8,
    busy: u8,
    cut: bool,
    succ: Vec<(u64, Option<St>, Step, u32)>,
}

/// Explores every reachable state (up to `max_states`) on `threads` workers and keeps the
/// labelled transitions.
pub fn graph<S: Fair>(space: &S, threads: usize, max_states: u64) -> Graph {
    type Ids = HashMap<u64, u32, BuildHasherDefault<IdentityHasher>>;
    let agents = space.bounds().agents as usize;
    let mut ids: Ids = HashMap::default();
    let mut g = Graph::new(agents);
    let mut frontier = Vec::new();
    let inits = space.init_states();
    g.generated = inits.len() as u64;
    for s in inits {
        let fp = space.fingerprint(&s);
        if let std::collections::hash_map::Entry::Vacant(e) = ids.entry(fp) {
            e.insert(g.add_state(None));
            frontier.push(s);
        }
    }
    // States are numbered in BFS order, so a level's states are a contiguous id range and
    // their edge lists are appended in id order.
    let mut next_id = frontier.len() as u64;
    while !frontier.is_empty() {
        let first = g.expanded() as u32;
        let chunk = frontier.len().div_ceil(threads.max(1)).max(1);
        let expanded: Vec<Vec<Expanded<S::State>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = frontier
                .chunks(chunk)
                .map(|part| {
                    let ids = &ids;
                    scope.spawn(move || part.iter().map(|s| expand(space, s, ids)).collect())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a liveness worker panicked"))
                .collect()
        });
        let mut next = Vec::new();
        for (k, e) in expanded.into_iter().flatten().enumerate() {
            let src = first + k as u32;
            g.generated += e.succ.len() as u64;
            let mut out = Vec::with_capacity(e.succ.len());
            for (fp, st, step, action) in e.succ {
                let id = match ids.get(&fp) {
                    Some(&id) => id,
                    None => {
                        if next_id >= max_states {
                            g.complete = false;
                            continue;
                        }
                        next_id += 1;
                        let id = g.add_state(Some((src, action)));
                        ids.insert(fp, id);
                        next.push(st.expect("a state no earlier level numbered is kept"));
                        id
                    }
                };
                out.push((id, step.agent, step.commits, action));
            }
            g.expand(e.enabled, e.busy, e.cut, out);
        }
        frontier = next;
    }
    g
}

/// Expands `s`; a successor whose fingerprint an earlier level numbered is kept without
/// its state (most successors are: this keeps a level's memory near the new states').
fn expand<S: Fair, H: std::hash::BuildHasher>(
    space: &S,
    s: &S::State,
    known: &HashMap<u64, u32, H>,
) -> Expanded<S::State> {
    let cut = space.at_bound(s);
    let busy = space.busy(s);
    let mut actions = Vec::new();
    stateright::Model::actions(space, s, &mut actions);
    let mut enabled = 0u8;
    let mut succ = Vec::with_capacity(actions.len());
    for (k, &a) in actions.iter().enumerate() {
        let Some(n) = space.next_state(s, a) else {
            continue;
        };
        let step = space.step(s, a, &n);
        if let Some(x) = step.agent {
            enabled |= 1 << x;
        }
        let fp = space.fingerprint(&n);
        let n = (!known.contains_key(&fp)).then_some(n);
        succ.push((fp, n, step, k as u32));
    }
    Expanded {
        enabled,
        busy,
        cut,
        succ,
    }
}

/// A liveness verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveVerdict {
    Holds,
    /// The agent (starvation) and a lasso.
    Violated {
        agent: Option<u8>,
        lasso: Lasso,
    },
    /// Why not.
    CannotTell(String),
}

/// Decides `p` under `f` on the explored graph.
pub fn decide(g: &Graph, p: LiveProperty, f: Fairness) -> LiveVerdict {
    let found = match p {
        LiveProperty::Starvation => (0..g.agents as u8).find_map(|x| {
            let keep = |e: &Edge| !(e.progress && e.agent == Some(x));
            fair_lasso(g, f, &keep, Goal::Marked(&g.busy, x)).map(|l| (Some(x), l))
        }),
        LiveProperty::Livelock => {
            let keep = |e: &Edge| !e.progress;
            fair_lasso(g, f, &keep, Goal::AgentStep).map(|l| (None, l))
        }
    };
    if let Some((agent, lasso)) = found {
        return LiveVerdict::Violated { agent, lasso };
    }
    if !g.complete {
        return LiveVerdict::CannotTell(format!(
            "the search stopped at {} states without exhausting the space, and found no \
             fair cycle in them",
            g.len()
        ));
    }
    let cut = g.cut.iter().filter(|&&c| c).count();
    if cut > 0 {
        return LiveVerdict::CannotTell(format!(
            "no fair cycle below the bound, but every run through the {cut} states at the \
             bound is cut there, not infinite: liveness needs a model whose runs do not end \
             at a bound (the abstract model without --max-ops)"
        ));
    }
    LiveVerdict::Holds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph_of(
        n: usize,
        agents: usize,
        busy: &[u8],
        edges: &[(u32, u32, Option<u8>, bool)],
    ) -> Graph {
        Graph::from_edges(n, agents, busy, edges)
    }

    /// Agent 0 begins (0 -> 1) and commits (1 -> 0); agent 1 loops on its own at 0 and 1
    /// (begin/abort, never committing). Agent 0 is always enabled.
    fn retry_loop() -> Graph {
        // states: 0 idle, 1 agent 0 busy, 2 agent 1 busy (from 0), 3 both busy.
        graph_of(
            4,
            2,
            &[0, 1, 2, 3],
            &[
                (0, 1, Some(0), false),
                (0, 2, Some(1), false),
                (1, 0, Some(0), true),
                (1, 3, Some(1), false),
                (2, 0, Some(1), false),
                (2, 3, Some(0), false),
                (3, 2, Some(0), true),
                (3, 1, Some(1), false),
            ],
        )
    }

    #[test]
    fn an_agent_whose_every_commit_aborts_starves_under_every_fairness() {
        let g = retry_loop();
        for f in Fairness::ALL {
            match decide(&g, LiveProperty::Starvation, f) {
                // Without fairness agent 0 starves first: it may never be scheduled again.
                LiveVerdict::Violated { agent, .. } if f == Fairness::None => {
                    assert_eq!(agent, Some(0));
                }
                LiveVerdict::Violated { agent, lasso } => {
                    assert_eq!(agent, Some(1), "{f:?}");
                    // The cycle is real, closes at its entry and has no live commit of agent 1.
                    let mut at = lasso.entry;
                    for (s, e) in &lasso.cycle {
                        assert_eq!(*s, at);
                        assert!(g.out(*s).any(|x| x == *e));
                        assert!(!(e.progress && e.agent == Some(1)));
                        at = e.to;
                    }
                    assert_eq!(at, lasso.entry);
                    if f != Fairness::None {
                        assert_eq!(lasso.stepping, 0b11, "{f:?}: both agents step");
                    }
                }
                v => panic!("{f:?}: {v:?}"),
            }
        }
        // Agent 0 always commits: not a livelock, under fairness.
        assert_eq!(
            decide(&g, LiveProperty::Livelock, Fairness::Weak),
            LiveVerdict::Holds
        );
    }

    #[test]
    fn weak_fairness_forces_an_enabled_commit_and_none_does_not() {
        // 0 -> 1 (agent 0 begins), 1 -> 0 (agent 0 commits), and agent 1 spins at 1 with
        // no commit (1 -> 2 -> 1), agent 0 enabled at 1 and 2.
        let g = graph_of(
            3,
            2,
            &[0, 1, 1],
            &[
                (0, 1, Some(0), false),
                (1, 0, Some(0), true),
                (1, 2, Some(1), false),
                (2, 1, Some(1), false),
                (2, 0, Some(0), true),
            ],
        );
        assert!(matches!(
            decide(&g, LiveProperty::Starvation, Fairness::None),
            LiveVerdict::Violated { agent: Some(0), .. }
        ));
        assert_eq!(
            decide(&g, LiveProperty::Starvation, Fairness::Weak),
            LiveVerdict::Holds
        );
        assert_eq!(
            decide(&g, LiveProperty::Starvation, Fairness::Strong),
            LiveVerdict::Holds
        );
    }

    #[test]
    fn strong_fairness_removes_states_where_a_non_stepping_agent_is_enabled() {
        // Agent 0 spins without committing through 1, 2 and 3. Agent 1 is enabled only at 2,
        // and its step leaves the spin (to 4, whence agent 0 commits): weakly fair to pass 2
        // now and then without taking it, strongly not; the spin 1 <-> 3 alone is fair.
        let g = graph_of(
            5,
            2,
            &[0, 1, 1, 1, 1],
            &[
                (0, 1, Some(0), false),
                (1, 2, Some(0), false),
                (2, 1, Some(0), false),
                (2, 4, Some(1), false),
                (4, 0, Some(0), true),
                (1, 3, Some(0), false),
                (3, 1, Some(0), false),
            ],
        );
        let v = decide(&g, LiveProperty::Starvation, Fairness::Strong);
        let LiveVerdict::Violated {
            agent: Some(0),
            lasso,
        } = v
        else {
            panic!("{v:?}")
        };
        assert!(
            lasso.cycle.iter().all(|(s, _)| *s != 2),
            "SF avoids state 2"
        );
        assert!(matches!(
            decide(&g, LiveProperty::Starvation, Fairness::Weak),
            LiveVerdict::Violated { agent: Some(0), .. }
        ));
    }

    #[test]
    fn a_deadlock_with_an_op_in_flight_is_a_fair_stutter_and_a_bound_is_not() {
        // 0 -> 1 (agent 0 begins), nothing enabled at 1.
        let mut g = graph_of(2, 1, &[0, 1], &[(0, 1, Some(0), false)]);
        let v = decide(&g, LiveProperty::Starvation, Fairness::Strong);
        let LiveVerdict::Violated { lasso, .. } = v else {
            panic!("{v:?}")
        };
        assert!(lasso.cycle.is_empty() && lasso.entry == 1 && lasso.stem == [0]);
        g.cut[1] = true;
        assert!(matches!(
            decide(&g, LiveProperty::Starvation, Fairness::Strong),
            LiveVerdict::CannotTell(_)
        ));
    }
}
