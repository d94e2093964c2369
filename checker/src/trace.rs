//! Shortest counterexamples: a deterministic single-threaded BFS, replayable paths, and the
//! two renderings (a readable step list and Apalache's ITF JSON).
//!
//! The search visits states in a fixed order (initial states, then actions in enumeration
//! order), so the counterexample for a property is the first shortest one in that order and
//! is byte-identical across runs and thread counts. A path is written `0/4/17`: the initial
//! state's index, then one action index per step; [`replay`] turns it back into states. A
//! trace shows one way to violate a property; it does not show every way.

use crate::action::Action;
use crate::property::{PropSet, Property};
use crate::space::{IdentityHasher, Space};
use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasherDefault;

/// A run from an initial state: `states[k + 1]` is `states[k]` after `actions[k]`.
#[derive(Clone, Debug)]
pub struct Trace<S, A = Action> {
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

/// Parses a replay line such as `0/4/17`.
pub fn parse_path(s: &str) -> Result<Vec<u32>, String> {
    s.split('/')
        .map(|p| {
            p.trim()
                .parse::<u32>()
                .map_err(|_| format!("path `{s}`: `{p}` is not an index"))
        })
        .collect()
}

/// Replays a path; fails on an index out of range or a disabled action.
pub fn replay<S: Space>(space: &S, path: &[u32]) -> Result<Trace<S::State, S::Action>, String>
where
    S::State: Clone + Send + Sync,
{
    let (&first, rest) = path.split_first().ok_or("empty path")?;
    let inits = space.init_states();
    let mut state = inits
        .get(first as usize)
        .cloned()
        .ok_or(format!("no initial state {first}"))?;
    let mut trace = Trace {
        path: path.to_vec(),
        actions: Vec::new(),
        states: vec![state.clone()],
    };
    let mut actions = Vec::new();
    for (step, &k) in rest.iter().enumerate() {
        actions.clear();
        space.actions(&state, &mut actions);
        let a = *actions
            .get(k as usize)
            .ok_or(format!("step {}: no action {k}", step + 1))?;
        state = space
            .next_state(&state, a)
            .ok_or(format!("step {}: action {k} is disabled", step + 1))?;
        trace.actions.push(a);
        trace.states.push(state.clone());
    }
    Ok(trace)
}

/// The search's bookkeeping: fingerprints seen and, per node, how it was reached.
struct Search {
    seen: HashSet<u64, BuildHasherDefault<IdentityHasher>>,
    /// `nodes[n]` = (parent node or `u32::MAX`, index of the init state or of the action).
    nodes: Vec<(u32, u32)>,
    found: BTreeMap<Property, u32>,
    targets: PropSet,
}

impl Search {
    fn visit<S: Space>(
        &mut self,
        space: &S,
        s: S::State,
        from: (u32, u32),
    ) -> Option<(S::State, u32)>
    where
        S::State: Clone + Send + Sync,
    {
        if !self.seen.insert(space.fingerprint(&s)) {
            return None;
        }
        let node = self.nodes.len() as u32;
        self.nodes.push(from);
        let open: Vec<Property> = self
            .targets
            .iter()
            .filter(|p| !self.found.contains_key(p))
            .collect();
        for p in space.violations(&s, PropSet::of(&open)).iter() {
            self.found.insert(p, node);
        }
        Some((s, node))
    }

    fn done(&self) -> bool {
        self.found.len() == self.targets.iter().count()
    }
}

/// For each property in `targets` that some reachable state violates, the first shortest
/// counterexample. Stops early once every target has one, or after `max_states` states.
pub fn shortest<S: Space>(
    space: &S,
    targets: PropSet,
    max_states: u64,
) -> BTreeMap<Property, Trace<S::State, S::Action>>
where
    S::State: Clone + Send + Sync,
{
    let mut search = Search {
        seen: HashSet::default(),
        nodes: Vec::new(),
        found: BTreeMap::new(),
        targets,
    };
    let mut frontier: Vec<(S::State, u32)> = Vec::new();
    for (k, s) in space.init_states().into_iter().enumerate() {
        frontier.extend(search.visit(space, s, (u32::MAX, k as u32)));
    }
    let mut actions = Vec::new();
    while !frontier.is_empty() && !search.done() && search.seen.len() as u64 <= max_states {
        let mut next = Vec::new();
        for (s, node) in &frontier {
            actions.clear();
            space.actions(s, &mut actions);
            for (k, &a) in actions.iter().enumerate() {
                if let Some(n) = space.next_state(s, a) {
                    next.extend(search.visit(space, n, (*node, k as u32)));
                }
            }
        }
        frontier = next;
    }
    search
        .found
        .iter()
        .map(|(&p, &node)| {
            let path = path_to(&search.nodes, node);
            (p, replay(space, &path).expect("a recorded path replays"))
        })
        .collect()
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
