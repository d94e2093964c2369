//! The search behind [`super`]: for one target lattice point, a shortest path to a
//! state whose log exhibits exactly that point, by a depth cap raised from
//! [`lower_bound`](super::point::lower_bound) and pruning with an admissible estimate of
//! the steps still needed ([`Progress::h`]), in depth-first (IDA*) or breadth-first order.
//!
//! Both orders keep only fingerprints and (parent, action) pairs, so memory stays at tens of
//! bytes per state; BFS rebuilds a frontier state by replaying its actions. Admissibility is
//! argued per term in [`Progress::h`] and relies on the vanilla runtime (no aborts at commit,
//! no drops); with another runtime the estimate may prune real witnesses. A found path is
//! only a candidate: `witnesses` replays it and re-checks its anomalies.

use super::point::{lower_bound, point_of, records_needed};
use crate::engine::space::{IdentityHasher, Space};
use crate::models::action::Action;
use crate::models::composed::RuntimeModel;
use agentsim_models::detect::Anomaly;
use agentsim_models::lattice::Point;
use agentsim_models::runtime::{Guarded, Runtime, Store};
use stateright::Model as _;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// What the heuristic reads off a state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Progress {
    records: u32,
    pending: u32,
    /// A tool has left the registry.
    removed: bool,
    /// Some record is aborted.
    aborted: bool,
    /// Some record or pending op has a predecessor.
    linked: bool,
}

impl Progress {
    fn of(st: &Store, tools: u32) -> Progress {
        Progress {
            records: st.log().len() as u32,
            pending: st.inflight().len() as u32,
            removed: st.registry().entries().len() < tools as usize,
            aborted: st.log().iter().any(|r| r.aborted),
            linked: st.log().iter().any(|r| !r.preds.is_empty())
                || st.inflight().values().any(|p| !p.snapshot.preds.is_empty()),
        }
    }

    /// A lower bound on the steps from this state to a log exhibiting exactly `target`
    /// (admissible, so pruning `depth + h > cap` never loses a history of length ≤ cap).
    /// Reads and writes: each missing record needs a CompleteWrite and, unless already
    /// pending, a StartRead; a missing A2 or A6 needs a new commit; a missing A1 a commit by a
    /// reader that is pending, or else two new ops (the writer's commit falls inside the
    /// reader's window); a missing A3 with no preds anywhere a new op that reads. Those steps
    /// may be shared, so they combine by `max`. Then a missing A2 needs a tool removed if none
    /// was, and a missing A3 an aborted record (only `Retract` aborts in vanilla), as does an
    /// exhibited anomaly outside the target: records are immutable but for `aborted`, and the
    /// registry only shrinks.
    fn h(self, now: Point, target: Point) -> usize {
        let lacks = |a| target.contains(a) && !now.contains(a);
        let pending = self.pending as usize;
        let need = records_needed(target).saturating_sub(self.records) as usize;
        let fresh = if pending > 0 { 1 } else { 2 };
        let mut rw = need + need.saturating_sub(pending);
        if lacks(Anomaly::A1) {
            rw = rw.max(if pending > 0 { 1 } else { 4 });
        }
        if lacks(Anomaly::A2) || lacks(Anomaly::A6) {
            rw = rw.max(fresh);
        }
        if lacks(Anomaly::A3) && !self.linked {
            rw = rw.max(2);
        }
        let remove = lacks(Anomaly::A2) && !self.removed;
        let retract = (lacks(Anomaly::A3) && !self.aborted) || !now.subset_of(target);
        rw + usize::from(remove) + usize::from(retract)
    }
}

/// A node of the search tree: its parent and the action that reached it.
#[derive(Clone, Copy, Debug)]
struct Node {
    parent: u32,
    action: Option<Action>,
}

/// The order a round visits states in; both prune by the same admissible bound, so both find
/// a witness of the same (shortest) length, not always the same witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Depth-first (IDA*): the first hit in depth-first order; visits few states.
    #[default]
    Depth,
    /// Breadth-first: the first hit in BFS order, as `trace::shortest` would find it; must
    /// finish every level below the witness's, which at 2 agents, 2 cells, MaxOps 3 means
    /// millions of states.
    Breadth,
}

/// How one search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The actions of the first shortest witness, if one was found within the cap.
    pub actions: Option<Vec<Action>>,
    /// Distinct states visited (kept after pruning), over every depth cap tried.
    pub explored: u64,
    /// The depth cap of the last round.
    pub cap: usize,
}

/// Breadth-first search for the first state exhibiting exactly `target`, pruned by the
/// admissible [`Progress::h`] under a depth cap that starts at [`lower_bound`] and grows to
/// `cap_max`. States are kept as (parent, action) nodes and rebuilt by replaying from the
/// initial state, so memory is a few tens of bytes per state; `max_states` bounds each round.
pub fn search<R: Runtime>(
    space: &RuntimeModel<R>,
    target: Point,
    order: Order,
    cap_max: usize,
    max_states: u64,
) -> Outcome {
    let mut explored = 0;
    let mut cap = lower_bound(target);
    loop {
        let (found, visited) = match order {
            Order::Depth => round_dfs(space, target, cap, max_states),
            Order::Breadth => round(space, target, cap, max_states),
        };
        explored += visited;
        if found.is_some() || cap >= cap_max || visited >= max_states {
            return Outcome {
                actions: found,
                explored,
                cap,
            };
        }
        cap += 1;
    }
}

type Seen = HashSet<u64, BuildHasherDefault<IdentityHasher>>;

/// One BFS round under depth cap `cap`: the first hit's actions, and the states visited.
fn round<R: Runtime>(
    space: &RuntimeModel<R>,
    target: Point,
    cap: usize,
    max_states: u64,
) -> (Option<Vec<Action>>, u64) {
    let tools = space.bounds().tools;
    let init = space
        .init_states()
        .into_iter()
        .next()
        .expect("an initial state");
    let mut seen = Seen::default();
    seen.insert(space.fingerprint(&init));
    let mut nodes = vec![Node {
        parent: u32::MAX,
        action: None,
    }];
    let now = point_of(init.log());
    if now == target {
        return (Some(Vec::new()), 1);
    }
    let mut frontier = vec![(0u32, now)];
    let mut actions = Vec::new();
    for depth in 1..=cap {
        let mut next = Vec::new();
        for &(node, now) in &frontier {
            let state = rebuild(space, &init, &nodes, node);
            actions.clear();
            space.actions(&state, &mut actions);
            for &a in &actions {
                let Some(n) = space.next_state(&state, a) else {
                    continue;
                };
                // Only appending or retracting a record changes the log's anomalies.
                let q = match a {
                    Action::CompleteWrite { .. } | Action::Retract(_) => point_of(n.log()),
                    _ => now,
                };
                let h = Progress::of(n.store(), tools).h(q, target);
                if depth + h > cap || !seen.insert(space.fingerprint(&n)) {
                    continue;
                }
                let id = u32::try_from(nodes.len()).expect("fewer than 2^32 states");
                nodes.push(Node {
                    parent: node,
                    action: Some(a),
                });
                if q == target {
                    return (Some(actions_to(&nodes, id)), nodes.len() as u64);
                }
                if nodes.len() as u64 >= max_states {
                    return (None, nodes.len() as u64);
                }
                next.push((id, q));
            }
        }
        frontier = next;
    }
    (None, nodes.len() as u64)
}

/// One depth-first round under depth cap `cap` (IDA*): a state is entered again only when
/// reached at a smaller depth than before. Returns the first hit in depth-first order.
fn round_dfs<R: Runtime>(
    space: &RuntimeModel<R>,
    target: Point,
    cap: usize,
    max_states: u64,
) -> (Option<Vec<Action>>, u64) {
    let init = space
        .init_states()
        .into_iter()
        .next()
        .expect("an initial state");
    let mut dfs = Dfs {
        space,
        target,
        cap,
        best: Default::default(),
        path: Vec::new(),
        max_states,
    };
    dfs.best.insert(space.fingerprint(&init), 0);
    let now = point_of(init.log());
    let found = dfs.enter(&init, now, 0);
    (found.then_some(dfs.path), dfs.best.len() as u64)
}

struct Dfs<'a, R: Runtime> {
    space: &'a RuntimeModel<R>,
    target: Point,
    cap: usize,
    /// Fingerprint → the smallest depth it was entered at.
    best: HashMap<u64, u8, BuildHasherDefault<IdentityHasher>>,
    path: Vec<Action>,
    max_states: u64,
}

impl<R: Runtime> Dfs<'_, R> {
    fn enter(&mut self, state: &Guarded<R>, now: Point, depth: usize) -> bool {
        if now == self.target {
            return true;
        }
        if depth == self.cap || self.best.len() as u64 >= self.max_states {
            return false;
        }
        let mut actions = Vec::new();
        self.space.actions(state, &mut actions);
        let tools = self.space.bounds().tools;
        for a in actions {
            let Some(n) = self.space.next_state(state, a) else {
                continue;
            };
            let q = match a {
                Action::CompleteWrite { .. } | Action::Retract(_) => point_of(n.log()),
                _ => now,
            };
            let d = depth + 1;
            if d + Progress::of(n.store(), tools).h(q, self.target) > self.cap {
                continue;
            }
            let fp = self.space.fingerprint(&n);
            if self.best.get(&fp).is_some_and(|&b| usize::from(b) <= d) {
                continue;
            }
            self.best.insert(fp, d as u8);
            self.path.push(a);
            if self.enter(&n, q, d) {
                return true;
            }
            self.path.pop();
        }
        false
    }
}

/// The state of `node`, replayed from the initial state.
fn rebuild<S: Space<Action = Action>>(
    space: &S,
    init: &S::State,
    nodes: &[Node],
    node: u32,
) -> S::State
where
    S::State: Clone + Send + Sync,
{
    let mut state = init.clone();
    for a in actions_to(nodes, node) {
        state = space
            .next_state(&state, a)
            .expect("a recorded action stays enabled");
    }
    state
}

fn actions_to(nodes: &[Node], mut node: u32) -> Vec<Action> {
    let mut out = Vec::new();
    while let Some(a) = nodes[node as usize].action {
        out.push(a);
        node = nodes[node as usize].parent;
    }
    out.reverse();
    out
}

/// The replay path (initial-state index, then action indices) of an action sequence.
pub(crate) fn path_of<S: Space<Action = Action>>(space: &S, actions: &[Action]) -> Vec<u32>
where
    S::State: Clone + Send + Sync,
{
    let mut state = space
        .init_states()
        .into_iter()
        .next()
        .expect("an initial state");
    let mut path = vec![0];
    let mut enabled = Vec::new();
    for &a in actions {
        enabled.clear();
        space.actions(&state, &mut enabled);
        let k = enabled
            .iter()
            .position(|&e| e == a)
            .expect("the action is enabled");
        path.push(k as u32);
        state = space.next_state(&state, a).expect("enabled");
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Bounds;
    use crate::jobs::lattice_witnesses::{bounds_for, model};

    /// Without a second agent A1 is unreachable: the capped search exhausts and says so.
    #[test]
    fn a1_needs_two_agents() {
        let p = Point::of(&[Anomaly::A1]);
        let m = model(Bounds {
            agents: 1,
            ..bounds_for(p)
        });
        for order in [Order::Depth, Order::Breadth] {
            let o = search(&m, p, order, lower_bound(p) + 1, 1_000_000);
            assert_eq!(o.actions, None);
            assert_eq!(o.cap, 5);
        }
    }

    #[test]
    fn heuristic_counts_missing_work() {
        let all = Point::of(&Anomaly::LATTICE);
        assert_eq!(Progress::default().h(Point(0), all), lower_bound(all));
        let busy = Progress {
            records: 1,
            pending: 1,
            removed: true,
            aborted: false,
            linked: false,
        };
        assert_eq!(busy.h(Point(0), all), 2 + 1 + 1);
    }
}
