//! Witnesses for the 16 lattice points (SPEC §4, extension; issue 5, item 5): for each subset S
//! of {A1, A2, A3, A6}, a reachable history whose anomaly set is *exactly* S, shortest first.
//!
//! The search is a deterministic single-threaded BFS over the vanilla composed model
//! ([`RuntimeModel`] over `vanilla`) with canonical writes (extension 1: same anomalies, fewer
//! states), provenance (extension 2) and retraction (extension 3), so A3 is the **preds form**
//! (a surviving record with an aborted predecessor), as `agentsim detect` reports it. Every
//! visited state's log is classified by the fast detectors; the first state (in BFS order)
//! of each target set is that set's witness, so its step count is the shortest at those bounds.
//!
//! One bound for all 16 points explodes (2 agents, 2 cells, MaxOps 3 is needed by the points
//! with A1 ∧ A3 ∧ A6 and has tens of millions of states below depth 8), so each point is searched
//! at the smallest bounds its members need ([`bounds_for`]): a second agent for A1, a second
//! cell for A6, a tool for A2, provenance and retraction for A3, and one record per op the
//! anomalies need ([`records_needed`]). Points with equal bounds share one search.
//!
//! Shortest *at those bounds* is made bound-independent by [`lower_bound`]: in the vanilla
//! model every record costs a StartRead and a CompleteWrite, A2 needs a registry change and A3
//! a Retract (vanilla never aborts), so no history at any bounds is shorter. A witness whose
//! length equals it is globally shortest; the tests require that of all 16. Nothing here
//! says which runtime *excludes* a point; that is the matrix's business.

use crate::action::Action;
use crate::composed::RuntimeModel;
use crate::config::{Bounds, Extensions};
use crate::render;
use crate::space::{IdentityHasher, Space};
use crate::trace::{replay, Trace};
use agentsim_models::detect::write_index::WriteIndex;
use agentsim_models::detect::{fast, spec, Anomaly};
use agentsim_models::history::History;
use agentsim_models::lattice::{self, Point};
use agentsim_models::names::Names;
use agentsim_models::record::OpRecord;
use agentsim_models::runtime::{Runtime, RuntimeKind, Store};
use stateright::Model as _;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// The lattice point of a log: the exact set of anomalies the fast detectors find in it.
pub fn point_of(log: &[OpRecord]) -> Point {
    let index = WriteIndex::build(log);
    let mut found = Vec::new();
    if !fast::a1(log, &index, fast::Tuning::default()).is_empty() {
        found.push(Anomaly::A1);
    }
    if !fast::a2(log).is_empty() {
        found.push(Anomaly::A2);
    }
    if !fast::a3(log).is_empty() {
        found.push(Anomaly::A3);
    }
    if !fast::a6(log).is_empty() {
        found.push(Anomaly::A6);
    }
    Point::of(&found)
}

/// The fewest records a history exhibiting exactly `p` needs. A1 needs a reader and a writer
/// (both live); A3 a live record and its aborted predecessor, which with A1 is a third record
/// (A1's two records must be live); A2 and A6 are each one record's property.
pub fn records_needed(p: Point) -> u32 {
    let (a1, a3) = (p.contains(Anomaly::A1), p.contains(Anomaly::A3));
    match (a1, a3) {
        (true, true) => 3,
        (true, false) | (false, true) => 2,
        _ => u32::from(!p.is_empty()),
    }
}

/// A bound-independent lower bound on a witness's steps: two per record, one registry change
/// for A2, one Retract for A3.
pub fn lower_bound(p: Point) -> usize {
    let extra = [Anomaly::A2, Anomaly::A3]
        .iter()
        .filter(|&&a| p.contains(a))
        .count();
    2 * records_needed(p) as usize + extra
}

/// The smallest bounds that contain a witness for `p` (one value, so A1 reads NULL and sees v1
/// written, or the reverse).
pub fn bounds_for(p: Point) -> Bounds {
    Bounds {
        agents: if p.contains(Anomaly::A1) { 2 } else { 1 },
        cells: if p.contains(Anomaly::A6) { 2 } else { 1 },
        values: 1,
        tools: u32::from(p.contains(Anomaly::A2)),
        max_ops: records_needed(p).max(1),
        external: 0,
        skew: false,
    }
}

/// The extensions every search runs with.
pub fn extensions() -> Extensions {
    Extensions {
        canonical_writes: true,
        provenance: true,
        retraction: true,
        ..Extensions::default()
    }
}

/// The model a search runs on.
pub fn model(b: Bounds) -> RuntimeModel<agentsim_models::runtime::AnyRuntime> {
    RuntimeModel::of_kind(b, extensions(), RuntimeKind::Vanilla).expect("valid witness bounds")
}

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
            records: st.log.len() as u32,
            pending: st.inflight.len() as u32,
            removed: st.registry.entries().len() < tools as usize,
            aborted: st.log.iter().any(|r| r.aborted),
            linked: st.log.iter().any(|r| !r.preds.is_empty())
                || st.inflight.values().any(|p| !p.snapshot.preds.is_empty()),
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
    cap_max: usize,
    max_states: u64,
) -> Outcome {
    let mut explored = 0;
    let mut cap = lower_bound(target);
    loop {
        let (found, visited) = round(space, target, cap, max_states);
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

/// The state of `node`, replayed from the initial state.
fn rebuild<S: Space>(space: &S, init: &S::State, nodes: &[Node], node: u32) -> S::State
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
fn path_of<S: Space>(space: &S, actions: &[Action]) -> Vec<u32>
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

/// A witness history for one lattice point, with how it was found.
#[derive(Clone, Debug)]
pub struct Witness {
    pub point: Point,
    pub bounds: Bounds,
    /// The replay line (`0/4/17`) in the model of [`model`]`(bounds)`.
    pub path: String,
    /// Readable steps, one per action.
    pub steps: Vec<String>,
    /// The final state's log, with synthetic names.
    pub history: History,
    /// Distinct states its search visited.
    pub explored: u64,
}

impl Witness {
    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it is the empty history.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether its length meets [`lower_bound`], i.e. no history at any bounds is shorter.
    pub fn optimal(&self) -> bool {
        self.len() == lower_bound(self.point)
    }

    /// File name of its JSONL history: `L{A1 A2 A3 A6 as 0/1}-{members}.jsonl`.
    pub fn file_name(&self) -> String {
        let bits: String = Anomaly::ALL
            .iter()
            .map(|&a| if self.point.contains(a) { '1' } else { '0' })
            .collect();
        let names: Vec<&str> = self.point.members().iter().map(|a| a.name()).collect();
        let tail = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join("-")
        };
        format!("L{bits}-{tail}.jsonl")
    }
}

/// How far past [`lower_bound`] a search may raise its depth cap.
pub const SLACK_MAX: usize = 2;

/// The witness for `p` at [`bounds_for`]`(p)`, or an error naming the point and the states
/// visited when none is found within `max_states` per round and [`SLACK_MAX`] extra steps.
pub fn find(p: Point, max_states: u64) -> Result<Witness, String> {
    let m = model(bounds_for(p));
    let o = search(&m, p, lower_bound(p) + SLACK_MAX, max_states);
    match o.actions {
        Some(actions) => Ok(witness(&m, p, &actions, o.explored)),
        None => Err(format!(
            "{}: no witness within {} steps ({} states visited, at most {max_states} per round)",
            p.label(),
            o.cap,
            o.explored
        )),
    }
}

/// Every point's witness, in [`lattice::points`] order.
pub fn find_all(max_states: u64) -> Result<Vec<Witness>, String> {
    lattice::points()
        .into_iter()
        .map(|p| find(p, max_states))
        .collect()
}

/// Replays a witness and checks it: the spec and fast detectors agree on its history, which
/// is well-formed and exhibits exactly `p`.
fn witness<S: Space>(m: &S, p: Point, actions: &[Action], explored: u64) -> Witness
where
    S::State: Clone + Send + Sync,
{
    let trace: Trace<S::State> = replay(m, &path_of(m, actions)).expect("a found path replays");
    let b = m.bounds();
    let log = m.view(trace.states.last().expect("a trace has states")).log;
    let history = History {
        records: log,
        names: Names::synthetic(b.agents, b.cells, b.tools, b.values),
    };
    assert!(history.validate().is_ok(), "a reachable log is well-formed");
    let reference = spec::detect(&history);
    assert_eq!(reference, fast::detect(&history), "spec and fast agree");
    assert_eq!(
        Point::of(&reference.anomalies()),
        p,
        "the witness exhibits exactly p"
    );
    Witness {
        point: p,
        bounds: b,
        path: trace.path_string(),
        steps: render::steps(m, &trace),
        history,
        explored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_bounds_by_hand() {
        let lb = |a: &[Anomaly]| lower_bound(Point::of(a));
        assert_eq!(lb(&[]), 0);
        assert_eq!(lb(&[Anomaly::A6]), 2);
        assert_eq!(lb(&[Anomaly::A2]), 3);
        assert_eq!(lb(&[Anomaly::A1]), 4);
        assert_eq!(lb(&[Anomaly::A3]), 5);
        assert_eq!(lb(&[Anomaly::A1, Anomaly::A3]), 7);
        assert_eq!(lb(&Anomaly::ALL), 8);
    }

    #[test]
    fn bounds_grow_with_members() {
        let all = bounds_for(Point::of(&Anomaly::ALL));
        assert_eq!(
            (all.agents, all.cells, all.tools, all.max_ops),
            (2, 2, 1, 3)
        );
        let none = bounds_for(Point(0));
        assert_eq!(
            (none.agents, none.cells, none.tools, none.max_ops),
            (1, 1, 0, 1)
        );
    }

    /// At 1 agent, 1 cell, no tool, MaxOps 2 the A3 witness is the 5-step one of item 4.
    #[test]
    fn a3_alone_in_five_steps() {
        let p = Point::of(&[Anomaly::A3]);
        let w = find(p, 1_000_000).unwrap();
        assert_eq!(w.len(), 5);
        assert!(w.optimal());
        assert_eq!(w.history.records.len(), 2);
    }

    /// Without a second agent A1 is unreachable: the capped search exhausts and says so.
    #[test]
    fn a1_needs_two_agents() {
        let p = Point::of(&[Anomaly::A1]);
        let m = model(Bounds {
            agents: 1,
            ..bounds_for(p)
        });
        let o = search(&m, p, lower_bound(p) + 1, 1_000_000);
        assert_eq!(o.actions, None);
        assert_eq!(o.cap, 5);
    }

    #[test]
    fn heuristic_counts_missing_work() {
        let all = Point::of(&Anomaly::ALL);
        assert_eq!(Progress::default().h(Point(0), all), lower_bound(all));
        let busy = Progress {
            records: 1,
            pending: 1,
            removed: true,
            aborted: false,
        };
        assert_eq!(busy.h(Point(0), all), 2 + 1 + 1);
    }
}
