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
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The most agents a label can name.
pub const AGENTS_MAX: usize = 8;

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

/// Fairness of the agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fairness {
    None,
    Weak,
    Strong,
}

impl Fairness {
    /// `none`, `wf`, `sf` (also `weak`, `strong`).
    pub fn parse(s: &str) -> Option<Fairness> {
        match s {
            "none" => Some(Fairness::None),
            "wf" | "weak" => Some(Fairness::Weak),
            "sf" | "strong" => Some(Fairness::Strong),
            _ => None,
        }
    }

    /// The short name (`none`, `wf`, `sf`).
    pub fn name(self) -> &'static str {
        match self {
            Fairness::None => "none",
            Fairness::Weak => "wf",
            Fairness::Strong => "sf",
        }
    }

    pub const ALL: [Fairness; 3] = [Fairness::None, Fairness::Weak, Fairness::Strong];
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

const ENV: u8 = 0x0F;
const COMMIT: u8 = 0x80;

/// The reachable state graph with who took each transition.
pub struct Graph {
    /// Per state: the agents with at least one enabled action.
    pub enabled: Vec<u8>,
    /// Per state: the agents with an op in flight.
    pub busy: Vec<u8>,
    /// Per state: at the model's bound.
    pub cut: Vec<bool>,
    /// Per state: its BFS parent and the action index taken from it (`u32::MAX` for roots).
    pub parent: Vec<(u32, u32)>,
    /// Compressed adjacency: the edges of state `s` are `offsets[s]..offsets[s + 1]`.
    offsets: Vec<u32>,
    targets: Vec<u32>,
    /// Low nibble: the agent, or [`ENV`]; [`COMMIT`]: a live commit.
    labels: Vec<u8>,
    /// The index of the action in the source state's action list.
    actions: Vec<u32>,
    /// Successors computed (duplicates included), as TLC counts *generated*.
    pub generated: u64,
    /// False when `max_states` stopped the exploration.
    pub complete: bool,
    pub agents: usize,
}

/// One edge of the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub to: u32,
    pub agent: Option<u8>,
    pub commits: bool,
    pub action: u32,
}

impl Graph {
    /// The number of states.
    pub fn len(&self) -> usize {
        self.enabled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.enabled.is_empty()
    }

    /// The number of transitions kept (one per distinct successor and label).
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// The edges out of `s`.
    pub fn out(&self, s: u32) -> impl Iterator<Item = Edge> + '_ {
        let (lo, hi) = (self.offsets[s as usize], self.offsets[s as usize + 1]);
        (lo as usize..hi as usize).map(move |k| {
            let l = self.labels[k];
            Edge {
                to: self.targets[k],
                agent: (l & 0x0F != ENV).then_some(l & 0x0F),
                commits: l & COMMIT != 0,
                action: self.actions[k],
            }
        })
    }

    /// The BFS depth (states on the longest shortest path).
    pub fn depth(&self) -> u32 {
        let mut d = vec![0u32; self.len()];
        let mut max = 0;
        for s in 0..self.len() {
            let (p, _) = self.parent[s];
            d[s] = if p == u32::MAX { 1 } else { d[p as usize] + 1 };
            max = max.max(d[s]);
        }
        max
    }

    /// The action-index path from a root to `s`.
    pub fn stem(&self, s: u32) -> (u32, Vec<u32>) {
        let mut path = Vec::new();
        let mut at = s;
        loop {
            let (p, a) = self.parent[at as usize];
            if p == u32::MAX {
                break;
            }
            path.push(a);
            at = p;
        }
        path.reverse();
        (at, path)
    }
}

/// Per level, what one worker computed for one state: its successors' fingerprints, states
/// and labels, and its enabled and busy masks.
struct Expanded<St> {
    enabled: u8,
    busy: u8,
    cut: bool,
    succ: Vec<(u64, Option<St>, u8, u32)>,
}

/// Explores every reachable state (up to `max_states`) on `threads` workers and keeps the
/// labelled transitions.
pub fn graph<S: Fair>(space: &S, threads: usize, max_states: u64) -> Graph {
    type Ids = HashMap<u64, u32, BuildHasherDefault<IdentityHasher>>;
    let agents = space.bounds().agents as usize;
    assert!(agents <= AGENTS_MAX, "at most {AGENTS_MAX} agents");
    let mut ids: Ids = HashMap::default();
    let mut g = Graph {
        enabled: Vec::new(),
        busy: Vec::new(),
        cut: Vec::new(),
        parent: Vec::new(),
        offsets: vec![0],
        targets: Vec::new(),
        labels: Vec::new(),
        actions: Vec::new(),
        generated: 0,
        complete: true,
        agents,
    };
    let mut frontier = Vec::new();
    let inits = space.init_states();
    g.generated = inits.len() as u64;
    for s in inits {
        let fp = space.fingerprint(&s);
        if let std::collections::hash_map::Entry::Vacant(e) = ids.entry(fp) {
            e.insert(g.parent.len() as u32);
            g.parent.push((u32::MAX, u32::MAX));
            frontier.push(s);
        }
    }
    // States are numbered in BFS order, so a level's states are a contiguous id range and
    // their edge lists are appended in id order.
    let mut next_id = frontier.len() as u64;
    while !frontier.is_empty() {
        let first = g.enabled.len() as u32;
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
            g.enabled.push(e.enabled);
            g.busy.push(e.busy);
            g.cut.push(e.cut);
            g.generated += e.succ.len() as u64;
            let mut out: Vec<(u32, u8, u32)> = Vec::with_capacity(e.succ.len());
            for (fp, st, label, action) in e.succ {
                let id = match ids.get(&fp) {
                    Some(&id) => id,
                    None => {
                        if next_id >= max_states {
                            g.complete = false;
                            continue;
                        }
                        let id = next_id as u32;
                        next_id += 1;
                        ids.insert(fp, id);
                        g.parent.push((src, action));
                        next.push(st.expect("a state no earlier level numbered is kept"));
                        id
                    }
                };
                out.push((id, label, action));
            }
            // One edge per successor and label: the first action (in enumeration order)
            // names it.
            out.sort_by_key(|&(to, l, _)| (to, l));
            out.dedup_by_key(|&mut (to, l, _)| (to, l));
            for (to, l, a) in out {
                g.targets.push(to);
                g.labels.push(l);
                g.actions.push(a);
            }
            g.offsets.push(g.targets.len() as u32);
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
        let label = match step.agent {
            Some(x) => {
                enabled |= 1 << x;
                x | if step.commits { COMMIT } else { 0 }
            }
            None => ENV,
        };
        let fp = space.fingerprint(&n);
        let n = (!known.contains_key(&fp)).then_some(n);
        succ.push((fp, n, label, k as u32));
    }
    Expanded {
        enabled,
        busy,
        cut,
        succ,
    }
}

/// A fair lasso: a shortest stem from an initial state to the cycle's first state, and a
/// cycle of real transitions back to it (empty: stuttering forever at that state, where no
/// agent is enabled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lasso {
    /// The initial state the stem starts from.
    pub root: u32,
    /// Action indices from the root to the cycle's first state.
    pub stem: Vec<u32>,
    /// The cycle's first state.
    pub entry: u32,
    /// The cycle's edges, in order, from `entry` back to `entry`.
    pub cycle: Vec<(u32, Edge)>,
    /// The agents that step in the cycle.
    pub stepping: u8,
    /// The agents enabled at every state of the cycle, and at some state of it.
    pub enabled_always: u8,
    pub enabled_sometimes: u8,
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
            let keep = |e: &Edge| !(e.commits && e.agent == Some(x));
            fair_component(g, f, &keep, Goal::Busy(x)).map(|l| (Some(x), l))
        }),
        LiveProperty::Livelock => {
            let keep = |e: &Edge| !e.commits;
            fair_component(g, f, &keep, Goal::AgentStep).map(|l| (None, l))
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

/// What a violating cycle must contain besides fairness.
#[derive(Clone, Copy)]
enum Goal {
    /// A state where agent `x` has an op in flight.
    Busy(u8),
    /// At least one agent step.
    AgentStep,
}

/// The first fair component (in the order of its smallest state, so the shortest stem) in
/// the graph restricted to the edges `keep` allows, with a lasso into it.
fn fair_component(
    g: &Graph,
    f: Fairness,
    keep: &dyn Fn(&Edge) -> bool,
    goal: Goal,
) -> Option<Lasso> {
    let all: Vec<bool> = g.cut.iter().map(|&c| !c).collect();
    let all_agents = ((1u16 << g.agents) - 1) as u8;
    let mut best: Option<Vec<u32>> = None;
    // Stuttering forever at a state is a run: fair where no agent is enabled, and under no
    // fairness anywhere. It steps no agent, so it can only witness starvation.
    if let Goal::Busy(x) = goal {
        if let Some(s) = (0..g.len() as u32).find(|&s| {
            all[s as usize]
                && g.busy[s as usize] & (1 << x) != 0
                && (f == Fairness::None || g.enabled[s as usize] & all_agents == 0)
        }) {
            best = Some(vec![s]);
        }
    }
    let mut members = vec![false; g.len()];
    let mut work = vec![all];
    while let Some(alive) = work.pop() {
        for comp in sccs(g, &alive, keep) {
            if best.as_ref().is_some_and(|b| b[0] <= comp[0]) {
                continue;
            }
            comp.iter().for_each(|&s| members[s as usize] = true);
            let verdict = judge(g, f, keep, goal, &comp, &members, all_agents);
            comp.iter().for_each(|&s| members[s as usize] = false);
            match verdict {
                Judged::Fair => best = Some(comp),
                Judged::Unfair => {}
                Judged::Refine(unfair) => {
                    // Drop the states where an agent that never steps here is enabled; what
                    // is left may still hold a fair cycle.
                    let mut rest = vec![false; g.len()];
                    let mut any = false;
                    for &s in &comp {
                        if g.enabled[s as usize] & unfair == 0 {
                            rest[s as usize] = true;
                            any = true;
                        }
                    }
                    if any {
                        work.push(rest);
                    }
                }
            }
        }
    }
    let comp = best?;
    Some(lasso(g, &comp, keep, goal, f))
}

enum Judged {
    Fair,
    Unfair,
    /// Strong fairness: these agents are enabled in the component and never step in it.
    Refine(u8),
}

/// Whether the tour of component `comp` (its states marked in `members`) is a fair cycle
/// meeting the goal.
fn judge(
    g: &Graph,
    f: Fairness,
    keep: &dyn Fn(&Edge) -> bool,
    goal: Goal,
    comp: &[u32],
    members: &[bool],
    all_agents: u8,
) -> Judged {
    let inside = |s: u32, e: &Edge| members[s as usize] && members[e.to as usize] && keep(e);
    let mut stepping = 0u8;
    let mut any_step = false;
    let mut cyclic = comp.len() > 1;
    for &s in comp {
        for e in g.out(s).filter(|e| inside(s, e)) {
            cyclic = true;
            if let Some(a) = e.agent {
                stepping |= 1 << a;
                any_step = true;
            }
        }
    }
    if !cyclic {
        return Judged::Unfair;
    }
    let (mut always, mut sometimes) = (all_agents, 0u8);
    for &s in comp {
        always &= g.enabled[s as usize];
        sometimes |= g.enabled[s as usize];
    }
    let goal_met = match goal {
        Goal::Busy(x) => comp.iter().any(|&s| g.busy[s as usize] & (1 << x) != 0),
        Goal::AgentStep => any_step,
    };
    if !goal_met {
        return Judged::Unfair;
    }
    match f {
        Fairness::None => Judged::Fair,
        Fairness::Weak if always & !stepping != 0 => Judged::Unfair,
        Fairness::Weak => Judged::Fair,
        Fairness::Strong if sometimes & !stepping != 0 => Judged::Refine(sometimes & !stepping),
        Fairness::Strong => Judged::Fair,
    }
}

/// A cycle through component `comp` (sorted, its smallest state first) that meets the goal and
/// the fairness: from the entry, one edge of every agent that steps inside, a visit to a
/// state where each agent that never steps inside is disabled, and a goal state, each reached
/// by a shortest path inside the component; then back to the entry.
fn lasso(g: &Graph, comp: &[u32], keep: &dyn Fn(&Edge) -> bool, goal: Goal, f: Fairness) -> Lasso {
    let entry = comp[0];
    let (root, stem) = g.stem(entry);
    let mut members = vec![false; g.len()];
    comp.iter().for_each(|&s| members[s as usize] = true);
    let inside = |s: u32, e: &Edge| members[s as usize] && members[e.to as usize] && keep(e);
    let stutter = comp.len() == 1 && !g.out(entry).any(|e| inside(entry, &e));
    let mut cycle: Vec<(u32, Edge)> = Vec::new();
    if !stutter {
        let mut at = entry;
        let walk = |at: &mut u32, cycle: &mut Vec<(u32, Edge)>, target: &dyn Fn(u32) -> bool| {
            let path = path_inside(g, *at, target, &inside);
            for (s, e) in path {
                cycle.push((s, e));
                *at = e.to;
            }
        };
        if let Goal::Busy(x) = goal {
            walk(&mut at, &mut cycle, &|s| g.busy[s as usize] & (1 << x) != 0);
        }
        for a in 0..g.agents as u8 {
            let steps = comp
                .iter()
                .any(|&s| g.out(s).any(|e| inside(s, &e) && e.agent == Some(a)));
            if steps {
                // Walk to a state with an inside edge of `a`, then take it.
                let from = |s: u32| g.out(s).any(|e| inside(s, &e) && e.agent == Some(a));
                walk(&mut at, &mut cycle, &from);
                let e = g
                    .out(at)
                    .find(|e| inside(at, e) && e.agent == Some(a))
                    .expect("the walk ends where a steps");
                cycle.push((at, e));
                at = e.to;
            } else if f == Fairness::Weak {
                walk(&mut at, &mut cycle, &|s| {
                    g.enabled[s as usize] & (1 << a) == 0
                });
            }
        }
        if cycle.is_empty() {
            // A component with a self-loop or cycle but no goal obligation left: take one
            // edge out so the cycle is not empty.
            let e = g
                .out(at)
                .find(|e| inside(at, e))
                .expect("a cyclic component has an inside edge");
            cycle.push((at, e));
            at = e.to;
        }
        walk(&mut at, &mut cycle, &|s| s == entry);
    }
    let mut visited: Vec<u32> = cycle.iter().map(|&(s, _)| s).collect();
    if visited.is_empty() {
        visited.push(entry);
    }
    let stepping = cycle
        .iter()
        .filter_map(|(_, e)| e.agent)
        .fold(0u8, |m, a| m | 1 << a);
    let all_agents = ((1u16 << g.agents) - 1) as u8;
    let always = visited
        .iter()
        .fold(all_agents, |m, &s| m & g.enabled[s as usize]);
    let sometimes = visited.iter().fold(0, |m, &s| m | g.enabled[s as usize]);
    Lasso {
        root,
        stem,
        entry,
        cycle,
        stepping,
        enabled_always: always,
        enabled_sometimes: sometimes,
    }
}

/// A shortest path (BFS) from `from` to a state `target` accepts, over the edges `inside`
/// allows; empty when `from` is one. The component is strongly connected, so it exists.
fn path_inside(
    g: &Graph,
    from: u32,
    target: &dyn Fn(u32) -> bool,
    inside: &dyn Fn(u32, &Edge) -> bool,
) -> Vec<(u32, Edge)> {
    if target(from) {
        return Vec::new();
    }
    let mut prev: HashMap<u32, (u32, Edge)> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(s) = queue.pop_front() {
        for e in g.out(s).filter(|e| inside(s, e)) {
            if e.to == from || prev.contains_key(&e.to) {
                continue;
            }
            prev.insert(e.to, (s, e));
            if target(e.to) {
                let mut path = Vec::new();
                let mut at = e.to;
                while at != from {
                    let (p, pe) = prev[&at];
                    path.push((p, pe));
                    at = p;
                }
                path.reverse();
                return path;
            }
            queue.push_back(e.to);
        }
    }
    unreachable!("a strongly connected component reaches each of its states")
}

/// The strongly connected components of the subgraph of `alive` states and `keep` edges
/// that can hold a cycle (more than one state, or one with a kept self-loop), each sorted,
/// ordered by their smallest state (iterative Tarjan).
pub fn sccs(g: &Graph, alive: &[bool], keep: &dyn Fn(&Edge) -> bool) -> Vec<Vec<u32>> {
    const NONE: u32 = u32::MAX;
    let n = g.len();
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    let mut next = 0u32;
    // The DFS: (state, position in its edge list).
    let mut dfs: Vec<(u32, u32)> = Vec::new();
    for root in 0..n as u32 {
        if !alive[root as usize] || index[root as usize] != NONE {
            continue;
        }
        dfs.push((root, g.offsets[root as usize]));
        index[root as usize] = next;
        low[root as usize] = next;
        next += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        while let Some(&(v, pos)) = dfs.last() {
            let hi = g.offsets[v as usize + 1];
            let mut k = pos;
            let mut child = None;
            while k < hi {
                let e = edge_at(g, k as usize);
                k += 1;
                let w = e.to;
                if !alive[w as usize] || !keep(&e) {
                    continue;
                }
                if index[w as usize] == NONE {
                    child = Some(w);
                    break;
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            }
            dfs.last_mut().expect("v is on the DFS stack").1 = k;
            if let Some(w) = child {
                index[w as usize] = next;
                low[w as usize] = next;
                next += 1;
                stack.push(w);
                on_stack[w as usize] = true;
                dfs.push((w, g.offsets[w as usize]));
                continue;
            }
            dfs.pop();
            if let Some(&(u, _)) = dfs.last() {
                low[u as usize] = low[u as usize].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                let cyclic = comp.len() > 1 || g.out(v).any(|e| e.to == v && keep(&e));
                if cyclic {
                    comp.sort_unstable();
                    out.push(comp);
                }
            }
        }
    }
    out.sort_unstable_by_key(|c| c[0]);
    out
}

fn edge_at(g: &Graph, k: usize) -> Edge {
    let l = g.labels[k];
    Edge {
        to: g.targets[k],
        agent: (l & 0x0F != ENV).then_some(l & 0x0F),
        commits: l & COMMIT != 0,
        action: g.actions[k],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph from an edge list: (from, to, agent or None, commits); `enabled` derived.
    fn graph_of(
        n: usize,
        agents: usize,
        busy: &[u8],
        edges: &[(u32, u32, Option<u8>, bool)],
    ) -> Graph {
        let mut g = Graph {
            enabled: vec![0; n],
            busy: busy.to_vec(),
            cut: vec![false; n],
            parent: vec![(u32::MAX, u32::MAX); n],
            offsets: vec![0],
            targets: Vec::new(),
            labels: Vec::new(),
            actions: Vec::new(),
            generated: 0,
            complete: true,
            agents,
        };
        for s in 0..n as u32 {
            for (k, &(from, to, agent, commits)) in edges.iter().enumerate() {
                if from != s {
                    continue;
                }
                if let Some(a) = agent {
                    g.enabled[s as usize] |= 1 << a;
                }
                if to != 0 && g.parent[to as usize].0 == u32::MAX && to > s {
                    g.parent[to as usize] = (s, k as u32);
                }
                g.targets.push(to);
                g.labels
                    .push(agent.unwrap_or(ENV) | if commits { COMMIT } else { 0 });
                g.actions.push(k as u32);
            }
            g.offsets.push(g.targets.len() as u32);
        }
        g
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
                        assert!(!(e.commits && e.agent == Some(1)));
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
