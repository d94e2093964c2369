//! Fair cycles on an explicit state graph, shared by the checker's liveness
//! (`agentsim check --property starvation,livelock`) and the explorer's
//! (`agentsim explore --liveness`): the graph with who took each transition, strongly
//! connected components (Tarjan, iterative), the fairness refinement and lasso witnesses.
//!
//! A graph's states are numbered from 0 with their BFS parents; each transition is labelled
//! with the agent that took it (or the environment) and whether it is *progress* for that
//! agent (the checker: a live commit; the explorer: the end of an operation, committed or
//! given up). A property is a *goal* a cycle must meet (a state marked for an agent, or any
//! agent step) over the edges a `keep` filter allows (a starvation check drops the starving
//! agent's progress edges).
//!
//! Fairness is per agent, over all of its actions, as TLA+'s `WF_vars(Agent(a))` /
//! `SF_vars(Agent(a))`; the environment is not fair. *Weak*: an agent enabled at every state
//! of the cycle steps in it. *Strong*: an agent enabled at some state of the cycle steps in
//! it. *None*: any run, stuttering included. A run may stutter forever at a state where no
//! agent is enabled (TLA+ allows it; it is fair there).
//!
//! An infinite run ends in a strongly connected component (SCC) of the transitions it keeps
//! taking. For weak fairness an SCC holds a fair cycle iff the tour of all its states and
//! edges is fair: every agent steps inside it or is disabled at one of its states. For strong
//! fairness the states where an agent is enabled but never steps inside are removed and the
//! rest split again (the Emerson–Lei refinement for Streett conditions). A state marked `cut`
//! (a bound ended every run through it) takes part in no cycle and no stutter.

use std::collections::HashMap;

/// The most agents a label can name.
pub const AGENTS_MAX: usize = 8;

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

    /// The long name (`none`, `weak`, `strong`).
    pub fn long_name(self) -> &'static str {
        match self {
            Fairness::None => "none",
            Fairness::Weak => "weak",
            Fairness::Strong => "strong",
        }
    }

    pub const ALL: [Fairness; 3] = [Fairness::None, Fairness::Weak, Fairness::Strong];
}

const ENV: u8 = 0x0F;
const PROGRESS: u8 = 0x80;

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
    /// Low nibble: the agent, or [`ENV`]; [`PROGRESS`]: progress for the agent.
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
    /// Progress for the agent (the checker: a live commit; the explorer: an operation
    /// ended).
    pub progress: bool,
    pub action: u32,
}

impl Graph {
    /// An empty graph of `agents` agents (at most [`AGENTS_MAX`]).
    pub fn new(agents: usize) -> Graph {
        assert!(agents <= AGENTS_MAX, "at most {AGENTS_MAX} agents");
        Graph {
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
        }
    }

    /// Numbers a new state with its BFS parent and the action taken from it (`None`: a
    /// root); returns its id. States are expanded ([`Graph::expand`]) in id order.
    pub fn add_state(&mut self, parent: Option<(u32, u32)>) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent.unwrap_or((u32::MAX, u32::MAX)));
        id
    }

    /// The next state in id order (the first not expanded): its enabled agents, busy mask,
    /// whether it is cut, and its edges `(to, agent, progress, action)`, one per successor and
    /// label (the first action in `edges`' order names it).
    pub fn expand(
        &mut self,
        enabled: u8,
        busy: u8,
        cut: bool,
        edges: impl IntoIterator<Item = (u32, Option<u8>, bool, u32)>,
    ) {
        self.enabled.push(enabled);
        self.busy.push(busy);
        self.cut.push(cut);
        let mut out: Vec<(u32, u8, u32)> = edges
            .into_iter()
            .map(|(to, agent, progress, action)| {
                let l = agent.map_or(ENV, |a| {
                    assert!((a as usize) < self.agents, "an agent of the graph");
                    a
                });
                (to, l | if progress { PROGRESS } else { 0 }, action)
            })
            .collect();
        out.sort_by_key(|&(to, l, _)| (to, l));
        out.dedup_by_key(|&mut (to, l, _)| (to, l));
        for (to, l, a) in out {
            self.targets.push(to);
            self.labels.push(l);
            self.actions.push(a);
        }
        self.offsets.push(self.targets.len() as u32);
    }

    /// A graph of `n` states from an explicit edge list `(from, to, agent, progress)` (small
    /// examples and tests): state 0 is the root, the BFS from it gives the parents (a state it
    /// does not reach is a root too), an edge's action is its index in the list, and an
    /// agent is enabled at a state where it has an edge.
    pub fn from_edges(
        n: usize,
        agents: usize,
        busy: &[u8],
        edges: &[(u32, u32, Option<u8>, bool)],
    ) -> Graph {
        assert_eq!(busy.len(), n, "a busy mask per state");
        let mut parent = vec![None; n];
        let mut seen = vec![false; n];
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut queue = std::collections::VecDeque::from([root as u32]);
            while let Some(s) = queue.pop_front() {
                for (k, &(from, to, _, _)) in edges.iter().enumerate() {
                    if from == s && !seen[to as usize] {
                        seen[to as usize] = true;
                        parent[to as usize] = Some((s, k as u32));
                        queue.push_back(to);
                    }
                }
            }
        }
        let mut g = Graph::new(agents);
        for p in parent {
            g.add_state(p);
        }
        for s in 0..n as u32 {
            let mine = edges.iter().enumerate().filter(|(_, e)| e.0 == s);
            let enabled = mine
                .clone()
                .filter_map(|(_, e)| e.2)
                .fold(0u8, |m, a| m | 1 << a);
            let out: Vec<_> = mine.map(|(k, e)| (e.1, e.2, e.3, k as u32)).collect();
            g.expand(enabled, busy[s as usize], false, out);
        }
        g
    }

    /// The number of states expanded.
    pub fn expanded(&self) -> usize {
        self.enabled.len()
    }

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
        (lo as usize..hi as usize).map(move |k| edge_at(self, k))
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

/// What a violating cycle must contain besides fairness.
#[derive(Clone, Copy)]
pub enum Goal<'a> {
    /// A state where agent `x`'s bit is set in `mask` (one mask per state, as
    /// [`Graph::busy`]).
    Marked(&'a [u8], u8),
    /// At least one agent step.
    AgentStep,
}

impl Goal<'_> {
    fn marks(&self, s: u32) -> bool {
        match *self {
            Goal::Marked(mask, x) => mask[s as usize] & (1 << x) != 0,
            Goal::AgentStep => false,
        }
    }
}

/// A lasso into the first fair component meeting `goal` (in the order of its smallest state,
/// so the shortest stem) of the graph restricted to the edges `keep` allows, or a stutter at
/// the first goal state where stuttering is fair; `None` when there is none.
pub fn fair_lasso(
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
    if let Goal::Marked(..) = goal {
        if let Some(s) = (0..g.len() as u32).find(|&s| {
            all[s as usize]
                && goal.marks(s)
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
        Goal::Marked(..) => comp.iter().any(|&s| goal.marks(s)),
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
        if let Goal::Marked(..) = goal {
            walk(&mut at, &mut cycle, &|s| goal.marks(s));
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
        progress: l & PROGRESS != 0,
        action: g.actions[k],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Weak and strong fairness differ: agent 1 is enabled only at state 2, which the spin
    /// of agent 0 passes through; weakly fair to pass it by (agent 1 is not enabled
    /// throughout), strongly not.
    #[test]
    fn weak_and_strong_differ_where_an_agent_is_enabled_now_and_then() {
        // Agent 0 spins between 1 and 2 without progress; agent 1's step at 2 leads out, to
        // 3, whence agent 0 makes progress.
        let edges = [
            (0, 1, Some(0), false),
            (1, 2, Some(0), false),
            (2, 1, Some(0), false),
            (2, 3, Some(1), false),
            (3, 0, Some(0), true),
        ];
        let g = Graph::from_edges(4, 2, &[0, 1, 1, 1], &edges);
        let keep = |e: &Edge| !(e.progress && e.agent == Some(0));
        let goal = Goal::Marked(&g.busy, 0);
        let weak = fair_lasso(&g, Fairness::Weak, &keep, goal).expect("weakly fair spin");
        assert!(weak.cycle.iter().any(|(s, _)| *s == 2), "the spin passes 2");
        assert_eq!(weak.stepping, 0b01);
        assert_eq!(weak.enabled_always, 0b01);
        assert_eq!(weak.enabled_sometimes, 0b11);
        let strong = fair_lasso(&g, Fairness::Strong, &keep, goal);
        assert!(
            strong.is_none(),
            "agent 1 is enabled infinitely often and never steps: {strong:?}"
        );
    }

    /// A cycle that exists but is unfair: agent 1 is enabled throughout agent 0's spin and
    /// never steps in it, and its step ends the spin.
    #[test]
    fn a_cycle_that_starves_an_enabled_agent_is_unfair() {
        let edges = [
            (0, 1, Some(0), false),
            (1, 0, Some(0), false),
            (0, 2, Some(1), false),
            (1, 2, Some(1), false),
            (2, 2, Some(0), true),
        ];
        let g = Graph::from_edges(3, 2, &[1, 1, 0], &edges);
        let keep = |e: &Edge| !(e.progress && e.agent == Some(0));
        let goal = Goal::Marked(&g.busy, 0);
        assert!(fair_lasso(&g, Fairness::None, &keep, goal).is_some());
        assert!(fair_lasso(&g, Fairness::Weak, &keep, goal).is_none());
        assert!(fair_lasso(&g, Fairness::Strong, &keep, goal).is_none());
    }

    /// The literal form: a closed walk of at most `len` kept edges from a state reachable
    /// from a root, through a goal state, fair under `f` (every agent steps in it, or is
    /// disabled at one of its states (weak) / all of them (strong)); or a stutter at a
    /// reachable goal state where stuttering is fair.
    fn literal(g: &Graph, f: Fairness, keep: &dyn Fn(&Edge) -> bool, busy: u8, len: usize) -> bool {
        let n = g.len();
        let mut reach = vec![false; n];
        let mut stack: Vec<u32> = (0..n as u32)
            .filter(|&s| g.parent[s as usize].0 == u32::MAX)
            .collect();
        while let Some(s) = stack.pop() {
            if !std::mem::replace(&mut reach[s as usize], true) {
                stack.extend(g.out(s).map(|e| e.to));
            }
        }
        let all = ((1u16 << g.agents) - 1) as u8;
        let goal = |s: u32| g.busy[s as usize] & busy != 0;
        for s in 0..n as u32 {
            if reach[s as usize] && goal(s) && (f == Fairness::None || g.enabled[s as usize] == 0) {
                return true;
            }
        }
        let w = Walk {
            g,
            f,
            keep,
            goal: &goal,
        };
        (0..n as u32)
            .filter(|&s| reach[s as usize])
            .any(|s| w.closes(s, s, len, (0, all, 0, false)))
    }

    /// Closed walks from one start, depth first.
    struct Walk<'a> {
        g: &'a Graph,
        f: Fairness,
        keep: &'a dyn Fn(&Edge) -> bool,
        goal: &'a dyn Fn(u32) -> bool,
    }

    impl Walk<'_> {
        /// Whether a walk of at most `left` more kept edges from `at` returns to `start`
        /// fair and through a goal state; `acc`: the agents stepped, enabled at every and at
        /// some state so far, and whether a goal state was passed.
        fn closes(&self, start: u32, at: u32, left: usize, acc: (u8, u8, u8, bool)) -> bool {
            if left == 0 {
                return false;
            }
            let (g, (stepping, always, sometimes, seen)) = (self.g, acc);
            for e in g.out(at).filter(|e| (self.keep)(e)) {
                let stepping = stepping | e.agent.map_or(0, |a| 1 << a);
                let always = always & g.enabled[at as usize];
                let sometimes = sometimes | g.enabled[at as usize];
                let seen = seen || (self.goal)(at);
                if e.to == start && seen {
                    let fair = match self.f {
                        Fairness::None => true,
                        Fairness::Weak => always & !stepping == 0,
                        Fairness::Strong => sometimes & !stepping == 0,
                    };
                    if fair {
                        return true;
                    }
                }
                if self.closes(start, e.to, left - 1, (stepping, always, sometimes, seen)) {
                    return true;
                }
            }
            false
        }
    }

    type Edges = Vec<(u32, u32, Option<u8>, bool)>;

    fn small_graph() -> impl Strategy<Value = (usize, usize, Vec<u8>, Edges)> {
        (2usize..=4, 1usize..=2).prop_flat_map(|(n, agents)| {
            let edge = (0..n as u32, 0..n as u32, 0..agents as u8, any::<bool>())
                .prop_map(|(a, b, x, p)| (a, b, Some(x), p));
            (
                Just(n),
                Just(agents),
                proptest::collection::vec(0u8..4, n),
                proptest::collection::vec(edge, 0..7),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// On tiny graphs the SCC search and the literal enumeration of lassos agree: a
        /// violation the search reports is a real fair lasso (checked edge by edge), and
        /// where it reports none no closed walk of up to 10 edges is one.
        #[test]
        fn fair_lasso_agrees_with_the_literal_form((n, agents, busy, edges) in small_graph()) {
            let busy: Vec<u8> = busy.iter().map(|b| b & ((1 << agents) - 1)).collect();
            let g = Graph::from_edges(n, agents, &busy, &edges);
            for f in Fairness::ALL {
                for x in 0..agents as u8 {
                    let keep = |e: &Edge| !(e.progress && e.agent == Some(x));
                    let found = fair_lasso(&g, f, &keep, Goal::Marked(&g.busy, x));
                    let lit = literal(&g, f, &keep, 1 << x, 10);
                    match &found {
                        None => prop_assert!(!lit, "{f:?} agent {x}: a literal lasso the search missed"),
                        Some(l) => {
                            // The stem is real: root to entry.
                            let mut at = l.root;
                            for &a in &l.stem {
                                let e = g.out(at).find(|e| e.action == a);
                                prop_assert!(e.is_some());
                                at = e.unwrap().to;
                            }
                            prop_assert_eq!(at, l.entry);
                            let all = ((1u16 << agents) - 1) as u8;
                            if l.cycle.is_empty() {
                                prop_assert!(g.busy[l.entry as usize] & (1 << x) != 0);
                                prop_assert!(f == Fairness::None || g.enabled[l.entry as usize] & all == 0);
                                continue;
                            }
                            let (mut step, mut always, mut some, mut seen) = (0u8, all, 0u8, false);
                            let mut at = l.entry;
                            for (s, e) in &l.cycle {
                                prop_assert_eq!(*s, at);
                                prop_assert!(g.out(*s).any(|o| o == *e) && keep(e));
                                step |= e.agent.map_or(0, |a| 1 << a);
                                always &= g.enabled[*s as usize];
                                some |= g.enabled[*s as usize];
                                seen |= g.busy[*s as usize] & (1 << x) != 0;
                                at = e.to;
                            }
                            prop_assert_eq!(at, l.entry);
                            prop_assert!(seen);
                            match f {
                                Fairness::None => {}
                                Fairness::Weak => prop_assert_eq!(always & !step, 0),
                                Fairness::Strong => prop_assert_eq!(some & !step, 0),
                            }
                            prop_assert!(lit || l.cycle.len() > 10, "{f:?}: a lasso the literal form has no walk for");
                        }
                    }
                }
            }
        }
    }
}
