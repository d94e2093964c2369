//! The abstract model's canonical form is a function of the symmetry class, shown on its
//! reachable states: for every reachable state `s` and every renaming σ of agents and (where
//! the model renames them) cells, and every reordering of `s`'s kept records that keeps their
//! edges, `fingerprint(σ(s)) = fingerprint(s)`; and the representative a state is decoded to
//! has the same successor classes and verdicts as the state itself. The renamings and
//! reorderings are computed here, independently of the codec. Then the count of distinct
//! states cannot depend on which member of a class an exploration meets first — which thread
//! timing decides — and a test pins that too. At the bounds named here only.

use super::model::{AbsState, AbstractConfig, AbstractModel};
use crate::config::{Bounds, Extensions};
use crate::engine::explore::{explore, ExploreOptions};
use crate::engine::space::Space;
use crate::property::{PropSet, Property};
use agentsim_models::monitor::NODES_MAX;
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use stateright::Model;
use std::collections::{BTreeSet, HashSet};

fn model(stack: Stack, b: Bounds, watch: &[Property]) -> AbstractModel {
    let ext = Extensions {
        canonical_writes: true,
        provenance: true,
        retraction: true,
        ..Extensions::default()
    };
    AbstractModel::new(AbstractConfig {
        bounds: b,
        ext,
        stack,
        watch: PropSet::of(watch),
        bounded: true,
        symmetry: true,
    })
    .expect("valid bounds")
}

fn bounds(agents: u32, cells: u32, max_ops: u32) -> Bounds {
    Bounds {
        values: 1,
        tools: 0,
        ..Bounds::paper(agents, cells, max_ops)
    }
}

/// Every permutation of `0..n`.
fn perms(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in perms(n - 1) {
        for k in 0..=p.len() {
            let mut q = p.clone();
            q.insert(k, n - 1);
            out.push(q);
        }
    }
    out
}

fn rename_mask(m: u8, p: &[usize]) -> u8 {
    (0..p.len()).fold(0, |acc, c| acc | (((m >> c) & 1) << p[c]))
}

fn rename_map(m: u32, p: &[usize], width: usize) -> u32 {
    let field = (1u32 << width) - 1;
    (0..p.len()).fold(0, |acc, c| {
        acc | ((m >> (width * c)) & field) << (width * p[c])
    })
}

/// `s` with agent `a`'s op moved to slot `agents[a]` and cell `c` renamed `cells[c]`.
fn renamed(s: &AbsState, agents: &[usize], cells: &[usize]) -> AbsState {
    let mut t = s.clone();
    for (a, p) in s.summary.pending.iter().enumerate() {
        t.summary.pending[agents[a]] = *p;
    }
    t.memory = rename_map(s.memory, cells, 4);
    let sm = &mut t.summary;
    sm.latest = rename_map(sm.latest, cells, 4);
    sm.produced = u64::from(rename_map(sm.produced as u32, cells, 8));
    for q in sm.pending.iter_mut().flatten() {
        q.rs = rename_mask(q.rs, cells);
        q.rv = rename_map(q.rv, cells, 4);
        q.depth = rename_map(q.depth, cells, 4);
    }
    for n in &mut sm.nodes {
        n.ws = rename_mask(n.ws, cells);
        n.wv = rename_map(n.wv, cells, 4);
    }
    for e in &mut sm.entries {
        e.cell = cells[usize::from(e.cell)] as u8;
    }
    sm.entries.sort_unstable();
    t
}

/// Mask `m` with position `k` renamed `to[k]`.
fn moved(m: u16, to: &[usize]) -> u16 {
    (0..to.len())
        .filter(|&k| m & (1 << k) != 0)
        .fold(0, |acc, k| acc | 1 << to[k])
}

/// Every order of `s`'s kept records that keeps each record after its preds, its A1
/// writers and the earlier writers of the cells it writes (at most `max` of them).
fn reorderings(s: &AbsState, max: usize) -> Vec<AbsState> {
    let nodes = &s.summary.nodes;
    let n = nodes.len();
    assert!(n <= NODES_MAX);
    let mut after = vec![0u16; n];
    for k in 0..n {
        after[k] = nodes[k].preds | nodes[k].a1;
        for j in 0..k {
            if nodes[j].ws & nodes[k].ws != 0 {
                after[k] |= 1 << j;
            }
        }
    }
    let mut out = Vec::new();
    let mut order = Vec::new();
    extensions(&after, 0, &mut order, &mut out, max);
    out.iter()
        .map(|order: &Vec<usize>| {
            let mut to = vec![0; n];
            for (new, &old) in order.iter().enumerate() {
                to[old] = new;
            }
            let mut t = s.clone();
            for (old, x) in nodes.iter().enumerate() {
                let mut y = *x;
                (y.preds, y.a1) = (moved(x.preds, &to), moved(x.a1, &to));
                t.summary.nodes[to[old]] = y;
            }
            for q in t.summary.pending.iter_mut().flatten() {
                q.preds = moved(q.preds, &to);
            }
            t
        })
        .collect()
}

fn extensions(
    after: &[u16],
    placed: u16,
    order: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
    max: usize,
) {
    if out.len() >= max {
        return;
    }
    if order.len() == after.len() {
        out.push(order.clone());
        return;
    }
    for k in 0..after.len() {
        if placed & (1 << k) == 0 && after[k] & !placed == 0 {
            order.push(k);
            extensions(after, placed | 1 << k, order, out, max);
            order.pop();
        }
    }
}

/// The successor classes of `s`.
fn successors(m: &AbstractModel, s: &AbsState) -> BTreeSet<u64> {
    let mut actions = Vec::new();
    m.actions(s, &mut actions);
    actions
        .iter()
        .filter_map(|&a| m.next_state(s, a))
        .map(|n| m.fingerprint(&n))
        .collect()
}

/// The successor classes of `s` the parallel explorer reaches ([`Space::explore_actions`]).
fn explored_successors(m: &AbstractModel, s: &AbsState) -> BTreeSet<u64> {
    let mut actions = Vec::new();
    m.explore_actions(s, &mut actions);
    actions
        .iter()
        .filter_map(|&a| m.next_state(s, a))
        .map(|n| m.fingerprint(&n))
        .collect()
}

/// What [`class_function`] saw.
#[derive(Debug, Default)]
struct Seen {
    states: usize,
    classes: usize,
    images: usize,
}

/// The module docs' checks on every state reachable in `m` (each state as the model reaches
/// it, not its representative).
fn class_function(m: &AbstractModel, renames_cells: bool) -> Seen {
    let b = m.config().bounds;
    let agent_perms = perms(b.agents as usize);
    let cell_perms = if renames_cells {
        perms(b.cells as usize)
    } else {
        vec![(0..b.cells as usize).collect()]
    };
    let all = PropSet::of(&Property::ALL);
    let mut seen = Seen::default();
    let mut visited = HashSet::new();
    let mut classes = HashSet::new();
    let mut stack = vec![m.init()];
    let mut actions = Vec::new();
    while let Some(s) = stack.pop() {
        if !visited.insert(s.clone()) {
            continue;
        }
        let f = m.fingerprint(&s);
        classes.insert(f);
        let rep = m.canonical(&s);
        assert_eq!(m.fingerprint(&rep), f, "the representative is in the class");
        assert_eq!(m.verdict(&rep, all), m.verdict(&s, all), "{s:?}");
        assert_eq!(successors(m, &rep), successors(m, &s), "{s:?}\nrep {rep:?}");
        assert_eq!(
            explored_successors(m, &s),
            successors(m, &s),
            "the explorer leaves out only actions whose class another reaches: {s:?}"
        );
        for t in reorderings(&s, 120) {
            for ap in &agent_perms {
                for cp in &cell_perms {
                    let u = renamed(&t, ap, cp);
                    seen.images += 1;
                    assert_eq!(
                        m.fingerprint(&u),
                        f,
                        "agents {ap:?} cells {cp:?}\nof {s:?}\nis {u:?}"
                    );
                }
            }
        }
        actions.clear();
        m.actions(&s, &mut actions);
        stack.extend(actions.iter().filter_map(|&a| m.next_state(&s, a)));
    }
    seen.states = visited.len();
    seen.classes = classes.len();
    seen
}

/// The causal family keeps the most records (every live writer, pred edges, cascades). At
/// 2 agents × 1 cell × MaxOps 4 the full log forgets writes and leaves read-only dependants
/// that tie with a writer (the tie the old greedy order broke by position); 3 agents × 2
/// cells × MaxOps 3 renames cells too.
#[test]
fn canonical_form_is_a_class_function_with_retraction() {
    for kind in [
        RuntimeKind::Causal { cascade: true },
        RuntimeKind::Causal { cascade: false },
        RuntimeKind::Vanilla,
    ] {
        for b in [bounds(2, 1, 4), bounds(3, 2, 3)] {
            let m = model(kind.stack(), b, &[Property::Never(Anomaly::A3)]);
            let seen = class_function(&m, b.cells > 1);
            assert!(seen.classes < seen.states, "{kind}: {seen:?}");
        }
    }
}

/// A1 with retraction: values, A1 pairs between kept records, and logged reads.
#[test]
fn canonical_form_is_a_class_function_with_values() {
    let watch = [Property::A1, Property::L1Struct, Property::A3_RESIDUE];
    for kind in [RuntimeKind::Ssi, RuntimeKind::Vanilla] {
        for b in [bounds(2, 1, 4), bounds(2, 2, 3)] {
            let m = model(kind.stack(), b, &watch);
            class_function(&m, b.cells > 1);
        }
    }
}

/// Distinct states of a breadth-first search of `m` that expands each level in `order`
/// (forward or backward): which member of a class is met first differs, the count must not.
fn distinct_in_order(m: &AbstractModel, backward: bool) -> usize {
    let mut seen = HashSet::new();
    seen.insert(m.fingerprint(&m.init()));
    let mut level = vec![m.init()];
    let mut actions = Vec::new();
    while !level.is_empty() {
        if backward {
            level.reverse();
        }
        let mut next = Vec::new();
        for s in &level {
            actions.clear();
            m.actions(s, &mut actions);
            for n in actions.iter().filter_map(|&a| m.next_state(s, a)) {
                if seen.insert(m.fingerprint(&n)) {
                    next.push(n);
                }
            }
        }
        level = next;
    }
    seen.len()
}

/// The order a level is expanded in does not move the count. On the cell (causal
/// A3, 3 agents × 2 cells × MaxOps 5) it did while ties were broken by position: 518,888
/// states forward, 518,889 backward.
#[test]
fn state_counts_do_not_depend_on_expansion_order() {
    let a3 = [Property::Never(Anomaly::A3)];
    let stack = RuntimeKind::Causal { cascade: true }.stack();
    let m = model(stack, bounds(3, 2, 5), &a3);
    let (fwd, back) = (distinct_in_order(&m, false), distinct_in_order(&m, true));
    assert_eq!(fwd, back);
}

/// Distinct states of `m` at 1 and at 2 threads.
fn counts(m: &AbstractModel, check: PropSet) -> (u64, u64) {
    let run = |threads| {
        let opts = ExploreOptions {
            threads,
            check,
            max_states: u64::MAX,
        };
        explore(m, &opts).distinct
    };
    (run(1), run(2))
}

/// The cell (causal A3, 3 agents × 2 cells × MaxOps 5, symmetry) counted 518,889
/// states at 2 threads and 518,888 at 1 while ties were broken by position; one
/// representative per class gives 518,860 at both.
#[test]
fn state_counts_do_not_depend_on_threads() {
    let a3 = [Property::Never(Anomaly::A3)];
    let m = model(
        RuntimeKind::Causal { cascade: true }.stack(),
        bounds(3, 2, 5),
        &a3,
    );
    let (one, two) = counts(&m, PropSet::of(&a3));
    assert_eq!(one, two);
    assert_eq!(one, 518_860);
}

/// Distinct states, generated states and depth of a breadth-first search of `m` over every
/// action ([`Model::actions`], none left out), counted as the explorer counts them.
fn unreduced(m: &AbstractModel) -> (u64, u64, u32) {
    let mut seen = HashSet::new();
    seen.insert(m.fingerprint(&m.init()));
    let (mut level, mut generated, mut depth) = (vec![m.init()], 1, 0);
    let mut actions = Vec::new();
    while !level.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for s in &level {
            actions.clear();
            m.actions(s, &mut actions);
            for n in actions.iter().filter_map(|&a| m.next_state(s, a)) {
                generated += 1;
                if seen.insert(m.fingerprint(&n)) {
                    next.push(n);
                }
            }
        }
        level = next;
    }
    (seen.len() as u64, generated, depth)
}

/// Leaving out the actions of an agent whose slot equals a lower agent's changes the
/// generated count only: distinct states and depth are the full search's, for the causal
/// family (A3) and for values (A1) at 3 agents.
#[test]
fn explorer_reduction_keeps_distinct_states_and_depth() {
    let cases = [
        (
            RuntimeKind::Causal { cascade: true },
            Property::Never(Anomaly::A3),
        ),
        (RuntimeKind::Saga, Property::Never(Anomaly::A3)),
        (RuntimeKind::Ssi, Property::A1),
    ];
    for (kind, p) in cases {
        let m = model(kind.stack(), bounds(3, 2, 4), &[p]);
        let opts = ExploreOptions {
            threads: 2,
            check: PropSet::of(&[p]),
            max_states: u64::MAX,
        };
        let out = explore(&m, &opts);
        let (distinct, generated, depth) = unreduced(&m);
        assert!(out.complete, "{kind}");
        assert_eq!((out.distinct, out.depth), (distinct, depth), "{kind}");
        assert!(
            out.generated < generated,
            "{kind}: {} vs {generated}",
            out.generated
        );
    }
}
