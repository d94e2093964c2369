//! Shortest counterexamples: a deterministic single-threaded BFS, replayable paths, and the
//! two renderings (a readable step list and Apalache's ITF JSON).
//!
//! The search visits states in a fixed order (initial states, then actions in enumeration
//! order), so the counterexample for a property is the first shortest one in that order and
//! is byte-identical across runs and thread counts. A path is written `0/4/17`: the initial
//! state's index, then one action index per step; [`replay`] turns it back into states. A
//! trace shows one way to violate a property; it does not show every way.

use crate::engine::control::{rss_bytes, Phase, Progress, Stopped, TICK};
use crate::engine::fpset::FpTable;
use crate::engine::frontier::{pack, Level, Storage, CHUNK};
use crate::engine::space::Space;
use crate::property::{PropSet, Property};
use std::collections::BTreeMap;
use std::time::Instant;
use thiserror::Error;

/// A run from an initial state: `states[k + 1]` is `states[k]` after `actions[k]`.
#[derive(Clone, Debug)]
pub struct Trace<S, A> {
    /// Initial-state index, then action indices.
    pub path: Vec<u32>,
    pub actions: Vec<A>,
    pub states: Vec<S>,
}

impl<S, A> Trace<S, A> {
    /// Number of steps (actions); the trace has one more state.
    pub fn steps(&self) -> usize {
        self.actions.len()
    }

    /// The replay line, e.g. `0/4/17`.
    pub fn path_string(&self) -> String {
        let parts: Vec<String> = self.path.iter().map(u32::to_string).collect();
        parts.join("/")
    }
}

/// Why a replay path cannot be followed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PathError {
    #[error("path `{path}`: `{part}` is not an index")]
    NotAnIndex { path: String, part: String },
    #[error("empty path")]
    Empty,
    #[error("no initial state {0}")]
    NoInit(u32),
    #[error("step {step}: no action {index}")]
    NoAction { step: usize, index: u32 },
    #[error("step {step}: action {index} is disabled")]
    Disabled { step: usize, index: u32 },
}

/// Parses a replay line such as `0/4/17`.
pub fn parse_path(s: &str) -> Result<Vec<u32>, PathError> {
    s.split('/')
        .map(|p| {
            p.trim().parse::<u32>().map_err(|_| PathError::NotAnIndex {
                path: s.to_owned(),
                part: p.to_owned(),
            })
        })
        .collect()
}

/// Replays a path; fails on an index out of range or a disabled action.
pub fn replay<S: Space>(space: &S, path: &[u32]) -> Result<Trace<S::State, S::Action>, PathError> {
    let (&first, rest) = path.split_first().ok_or(PathError::Empty)?;
    let inits = space.init_states();
    let mut state = inits
        .get(first as usize)
        .cloned()
        .ok_or(PathError::NoInit(first))?;
    let mut trace = Trace {
        path: path.to_vec(),
        actions: Vec::new(),
        states: vec![state.clone()],
    };
    let mut actions = Vec::new();
    for (step, &k) in rest.iter().enumerate() {
        actions.clear();
        space.actions(&state, &mut actions);
        let step = step + 1;
        let a = *actions
            .get(k as usize)
            .ok_or(PathError::NoAction { step, index: k })?;
        state = space
            .next_state(&state, a)
            .ok_or(PathError::Disabled { step, index: k })?;
        trace.actions.push(a);
        trace.states.push(state.clone());
    }
    Ok(trace)
}

/// The properties of `check` that some state of `t` violates (the properties are invariants:
/// a path violates one when any state on it does).
pub fn violated_on<S: Space>(space: &S, t: &Trace<S::State, S::Action>, check: PropSet) -> PropSet {
    t.states.iter().fold(PropSet::default(), |acc, s| {
        acc.union(space.violations(s, check))
    })
}

/// The search's bookkeeping: fingerprints seen and, per node, how it was reached.
struct Search {
    seen: FpTable,
    /// `nodes[n]` = (parent node or `u32::MAX`, index of the init state or of the action).
    nodes: Vec<(u32, u32)>,
    found: BTreeMap<Property, u32>,
    targets: PropSet,
}

impl Search {
    /// Visits a successor; true if it is new (it is then node `nodes.len() - 1`).
    fn visit<S: Space>(&mut self, space: &S, s: &S::State, from: (u32, u32)) -> bool {
        if !self.seen.insert(space.fingerprint(s)) {
            return false;
        }
        let node = self.nodes.len() as u32;
        self.nodes.push(from);
        let open: Vec<Property> = self
            .targets
            .iter()
            .filter(|p| !self.found.contains_key(p))
            .collect();
        for p in space.violations(s, PropSet::of(&open)).iter() {
            self.found.insert(p, node);
        }
        true
    }

    fn done(&self) -> bool {
        self.found.len() == self.targets.iter().count()
    }
}

/// The shortest counterexample of each violated property of a space.
pub type Traces<S> =
    BTreeMap<Property, Trace<<S as stateright::Model>::State, <S as stateright::Model>::Action>>;

/// For each property in `targets` that some reachable state violates, the first shortest
/// counterexample. Stops early once every target has one, or after `max_states` states.
pub fn shortest<S: Space>(space: &S, targets: PropSet, max_states: u64) -> Traces<S> {
    shortest_with(space, targets, max_states, &Storage::default())
        .expect("the default storage has no limits")
}

/// [`shortest`] with frontiers kept packed (and spilled) per `storage`, stopping with the
/// reason if its limits say so. A level's states are nodes `first..first + len` in order,
/// so only the fingerprints and one (parent, action) pair per state stay in memory.
pub fn shortest_with<S: Space>(
    space: &S,
    targets: PropSet,
    max_states: u64,
    storage: &Storage,
) -> Result<Traces<S>, Stopped> {
    let mut search = Search {
        seen: FpTable::with_expected(0),
        nodes: Vec::new(),
        found: BTreeMap::new(),
        targets,
    };
    let mut fresh = Vec::new();
    for (k, s) in space.init_states().into_iter().enumerate() {
        if search.visit(space, &s, (u32::MAX, k as u32)) {
            fresh.push(s);
        }
    }
    let mut frontier = Level::new(storage);
    for block in fresh.chunks(CHUNK) {
        frontier.push(pack(space, block));
    }
    frontier.seal();
    let (mut first, mut depth) = (0u32, 1u32);
    let start = Instant::now();
    while !frontier.is_empty() && !search.done() && search.seen.len() as u64 <= max_states {
        if let Some(stop) = storage.limits.check() {
            return Err(stop);
        }
        let next_first = search.nodes.len() as u32;
        frontier = next_level(space, &mut search, &frontier, first, storage)?;
        first = next_first;
        depth += u32::from(!frontier.is_empty());
        if let Some(r) = &storage.progress {
            (r.0)(&Progress {
                phase: Phase::Trace,
                depth,
                distinct: search.nodes.len() as u64,
                generated: 0,
                level_states: frontier.len(),
                level_blocks_done: 0,
                level_blocks: frontier.blocks(),
                seconds: start.elapsed().as_secs_f64(),
                rss_bytes: rss_bytes(),
                seen_bytes: 8 * search.seen.capacity() as u64,
                spilled_bytes: frontier.spilled_bytes(),
                level_end: true,
            });
        }
    }
    Ok(search
        .found
        .iter()
        .map(|(&p, &node)| {
            let path = path_to(&search.nodes, node);
            (p, replay(space, &path).expect("a recorded path replays"))
        })
        .collect())
}

/// Expands the level whose states are nodes `first..`, in order; the new states get the next
/// node ids in the order they are pushed.
fn next_level<S: Space>(
    space: &S,
    search: &mut Search,
    frontier: &Level,
    first: u32,
    storage: &Storage,
) -> Result<Level, Stopped> {
    let mut next = Level::new(storage);
    let (mut buf, mut states, mut out) = (Vec::new(), Vec::new(), Vec::with_capacity(CHUNK));
    let mut actions = Vec::new();
    let mut node = first;
    let mut checked = Instant::now();
    for i in 0..frontier.blocks() {
        if checked.elapsed() >= TICK {
            if let Some(stop) = storage.limits.check() {
                return Err(stop);
            }
            checked = Instant::now();
        }
        states.clear();
        frontier.load(space, i, &mut buf, &mut states);
        for s in &states {
            actions.clear();
            space.actions(s, &mut actions);
            for (k, &a) in actions.iter().enumerate() {
                let Some(n) = space.next_state(s, a) else {
                    continue;
                };
                if search.visit(space, &n, (node, k as u32)) {
                    out.push(n);
                    if out.len() == CHUNK {
                        next.push(pack(space, &out));
                        out.clear();
                    }
                }
            }
            node += 1;
        }
    }
    if !out.is_empty() {
        next.push(pack(space, &out));
    }
    next.seal();
    Ok(next)
}

fn path_to(nodes: &[(u32, u32)], mut node: u32) -> Vec<u32> {
    let mut path = Vec::new();
    loop {
        let (parent, idx) = nodes[node as usize];
        path.push(idx);
        if parent == u32::MAX {
            break;
        }
        node = parent;
    }
    path.reverse();
    path
}
