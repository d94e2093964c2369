//! Equivalence of the abstract and the concrete model, shown on their state spaces.
//!
//! [`walk`] visits every reachable concrete state `s` of a runtime and checks, with α the
//! abstraction function: the properties agree on `s` and `α(s)`; every concrete transition
//! `s → s'` is an abstract transition `α(s) → α(s')` under the same action (a `Retract` of a
//! record the summary does not keep must leave α unchanged: a stutter); the abstract actions
//! out of `α(s)` are the concrete ones (retractions of kept records, renamed). Together with
//! `α(init) = init` this makes the abstract reachable states exactly the images of the
//! concrete ones, so invariant verdicts agree. The explorations below then compare verdicts
//! and shortest-witness lengths run by run. All at the bounds named here only.

use super::check_abstract::check_abstract;
use crate::config::{Bounds, Extensions, Skew};
use crate::engine::explore::{explore, ExploreOptions};
use crate::engine::frontier::Storage;
use crate::engine::space::Space;
use crate::jobs::run::CheckConfig;
use crate::models::abstract_model::alpha::{alpha, alpha_with, tagged};
use crate::models::abstract_model::model::{AbstractConfig, AbstractModel};
use crate::models::action::Action;
use crate::models::composed::RuntimeModel;
use crate::property::{PropSet, Property};
use agentsim_models::runtime::{RuntimeKind, Stack};
use stateright::Model;
use std::collections::HashSet;

/// What a walk saw.
#[derive(Debug, Default)]
struct Walked {
    states: usize,
    abstract_states: usize,
    stutters: usize,
    violated: PropSet,
}

fn abstract_of(kind: Stack, b: Bounds, ext: Extensions, watch: PropSet) -> AbstractModel {
    AbstractModel::new(AbstractConfig {
        bounds: b,
        ext,
        stack: kind,
        watch,
        bounded: true,
        symmetry: false,
    })
    .expect("valid bounds")
}

fn not_retract(a: &&Action) -> bool {
    !matches!(a, Action::Retract(_))
}

/// The α-walk of the module docs over the concrete space of stack `kind`.
fn walk(kind: Stack, b: Bounds, ext: Extensions, watch: PropSet) -> Walked {
    let conc = RuntimeModel::of_stack(b, ext, kind).expect("valid bounds");
    let abs = abstract_of(kind, b, ext, watch);
    let init = conc.init_states().remove(0);
    assert_eq!(alpha(&abs, init.store()), abs.init(), "{kind}: α(init)");
    let mut seen = HashSet::new();
    let mut images = HashSet::new();

    let mut out = Walked::default();
    let mut stack = vec![init];
    let (mut ca, mut aa) = (Vec::new(), Vec::new());
    while let Some(s) = stack.pop() {
        if !seen.insert(conc.fingerprint(&s)) {
            continue;
        }
        let tags = tagged(&abs, s.store());
        let a = alpha_with(&abs, s.store(), &tags);
        images.insert(abs.fingerprint(&a));
        let got = abs.violations(&a, watch);
        for p in watch.iter() {
            let want = p.violated_by(s.log());
            assert_eq!(
                got.contains(p),
                want,
                "{kind}: {p:?} on {:#?}\nα = {a:#?}",
                s.log()
            );
        }
        out.violated = out.violated.union(got);
        ca.clear();
        aa.clear();
        conc.actions(&s, &mut ca);
        abs.actions(&a, &mut aa);
        let mut betas: Vec<Action> = Vec::new();
        for &x in ca.iter().filter(not_retract) {
            let y = abs.abstract_action(x);
            if !betas.contains(&y) {
                betas.push(y);
            }
        }
        let plain: Vec<Action> = aa.iter().filter(not_retract).copied().collect();
        assert_eq!(betas, plain, "{kind}: actions out of α(s)");
        for &act in &ca {
            let next = conc.next_state(&s, act);
            let image = next.as_ref().map(|n| alpha(&abs, n.store()));
            let step = match act {
                Action::Retract(i) => tags
                    .position(&u32::from(i))
                    .map(|k| Action::Retract(k as u8)),
                other => Some(abs.abstract_action(other)),
            };
            match step {
                None => {
                    out.stutters += 1;
                    assert_eq!(
                        image.as_ref(),
                        Some(&a),
                        "{kind}: retracting a dropped record"
                    );
                }
                Some(x) => {
                    let want = abs.next_state(&a, x);
                    assert_eq!(image, want, "{kind}: {act:?} from {:#?}", s.log());
                }
            }
            stack.extend(next);
        }
        for act in aa.iter().filter(|a| !not_retract(a)) {
            let Action::Retract(k) = *act else {
                unreachable!()
            };
            let i = tags.nodes[usize::from(k)].tag;
            assert!(
                ca.contains(&Action::Retract(i as u8)),
                "{kind}: abstract-only {act:?}"
            );
        }
    }
    out.states = seen.len();
    out.abstract_states = images.len();
    out
}

fn canonical() -> Extensions {
    Extensions {
        canonical_writes: true,
        ..Extensions::default()
    }
}

fn small(agents: u32, cells: u32, tools: u32, max_ops: u32) -> Bounds {
    Bounds {
        values: 1,
        tools,
        ..Bounds::paper(agents, cells, max_ops)
    }
}

fn retracting() -> Extensions {
    Extensions {
        provenance: true,
        retraction: true,
        ..canonical()
    }
}

/// Walks each of `kinds` at `b`, `ext` with every property watched; returns the walks.
fn walk_kinds(kinds: &[RuntimeKind], b: Bounds, ext: Extensions) -> Vec<Walked> {
    let all = PropSet::of(&Property::ALL);
    kinds
        .iter()
        .map(|&kind| {
            let w = walk(kind.stack(), b, ext, all);
            assert!(w.abstract_states <= w.states, "{kind}: {w:?}");
            w
        })
        .collect()
}

fn walk_all(b: Bounds, ext: Extensions) -> Vec<Walked> {
    walk_kinds(&RuntimeKind::ALL, b, ext)
}

/// 2 agents, 1 cell, MaxOps 3 (A1's home).
#[test]
fn alpha_commutes_two_agents_one_cell() {
    walk_all(small(2, 1, 0, 3), canonical());
}

/// 3 agents, 1 cell, MaxOps 2 (a third agent for locks and A1).
#[test]
fn alpha_commutes_three_agents() {
    walk_all(small(3, 1, 0, 2), canonical());
}

/// A2 with tool versions (1 agent, 1 cell, 1 tool, MaxOps 2) and A6 with every write
/// ordering (1 agent, 2 cells, MaxOps 2).
#[test]
fn alpha_commutes_tools_and_orderings() {
    let ext = Extensions {
        tool_versions: true,
        ..canonical()
    };
    walk_all(small(1, 1, 1, 2), ext);
    walk_all(small(1, 2, 0, 2), canonical());
}

/// The paper-faithful system (free write values, 2 values, 2 tools): 1 agent, 1 cell,
/// MaxOps 2.
#[test]
fn alpha_commutes_paper_mode() {
    walk_all(Bounds::paper(1, 1, 2), Extensions::default());
}

/// Skewed reads (`L1_struct` and the residue form become possible): the paper's skew on every
/// cell, and the external-only extension with one of two cells external.
#[test]
fn alpha_commutes_with_skew() {
    let mut b = small(2, 1, 0, 2);
    b.skew = Skew::Every;
    walk_all(b, canonical());
    walk_all(b, retracting());
    let mut two = small(1, 2, 0, 2);
    two.skew = Skew::Every;
    walk_all(two, canonical());
    (two.external, two.skew) = (1, Skew::External);
    walk_all(two, canonical());
}

/// The all-writers restriction.
#[test]
fn alpha_commutes_all_writers() {
    let ext = Extensions {
        all_writers: true,
        ..canonical()
    };
    walk_all(small(2, 1, 0, 3), ext);
}

/// Provenance and retraction (the summary keeps records): 2 agents, 1 cell, MaxOps 3, in
/// three tests so they run side by side; and 1 agent, 2 cells, MaxOps 2.
fn walk_retracting(kinds: &[RuntimeKind]) {
    for w in walk_kinds(kinds, small(2, 1, 0, 3), retracting()) {
        assert!(w.stutters > 0, "{w:?}");
    }
    walk_kinds(kinds, small(1, 2, 0, 2), retracting());
}

#[test]
fn alpha_commutes_with_retraction_l0_l1() {
    walk_retracting(&RuntimeKind::ALL[..3]);
}

#[test]
fn alpha_commutes_with_retraction_ssi_causal() {
    walk_retracting(&RuntimeKind::ALL[3..6]);
}

#[test]
fn alpha_commutes_with_retraction_l3_l4() {
    walk_retracting(&RuntimeKind::ALL[6..]);
}

fn explored<S: Space>(m: &S, check: PropSet) -> crate::engine::explore::Outcome
where
    S::State: Clone + Send + Sync,
{
    let opts = ExploreOptions {
        threads: 1,
        check,
        max_states: u64::MAX,
    };
    explore(m, &opts)
}

/// The concrete and abstract verdicts on `kind` at `b`, `ext` for `props`, and the
/// shortest-witness lengths; abstract witnesses are concretized, confirmed by the spec
/// detectors and replayed by path on the concrete model.
fn compare(kind: RuntimeKind, b: Bounds, ext: Extensions, props: &[Property]) -> (u64, u64) {
    let check = PropSet::of(props);
    let conc = RuntimeModel::of_kind(b, ext, kind).unwrap();
    let c = explored(&conc, check);
    let cfg = CheckConfig {
        bounds: b,
        ext,
        runtime: kind.stack(),
        symmetry: false,
        properties: props.to_vec(),
        threads: 1,
        max_states: u64::MAX,
    };
    let a = check_abstract(&cfg, true, &Storage::default()).unwrap();
    let ar = &a.report;
    assert_eq!(c.violated, ar.outcome.violated, "{kind} {b:?} {ext:?}");
    let cx = crate::engine::trace::shortest(&conc, c.violated, u64::MAX);
    for v in &ar.verdicts {
        let Some(w) = &v.counterexample else { continue };
        let want = &cx[&v.property];
        assert_eq!(
            w.steps.len(),
            want.steps(),
            "{kind} {:?}: witness length",
            v.property
        );
        let path = crate::engine::trace::parse_path(&w.path).unwrap();
        let replayed = crate::engine::trace::replay(&conc, &path).unwrap();
        let log = replayed.states.last().unwrap().log();
        assert!(
            v.property.violated_by(log),
            "{kind} {:?}: replay",
            v.property
        );
    }
    (c.distinct, ar.outcome.distinct)
}

/// Every runtime × property in the matrix's own scenarios (`matrix::scenario`), and in
/// the A1 scenario at MaxOps 3 and the A3 scenario with 2 agents.
#[test]
fn verdicts_agree_in_the_matrix_scenarios() {
    use crate::jobs::runtime_matrix::scenario;
    use agentsim_models::Anomaly;
    let at = |a, ops| scenario(a, ops).expect("a matrix column");
    for kind in RuntimeKind::ALL {
        for a in [Anomaly::A1, Anomaly::A2, Anomaly::A3, Anomaly::A6] {
            let (b, ext) = at(a, None);
            compare(kind, b, ext, &Property::ALL);
        }
        let (b, ext) = at(Anomaly::A1, Some(3));
        compare(kind, b, ext, &Property::ALL);
        let (b, ext) = at(Anomaly::A3, None);
        compare(kind, Bounds { agents: 2, ..b }, ext, &Property::ALL);
    }
}

/// The reductions the concrete model lacks (agent and cell symmetry, the canonical order of
/// kept records) keep every verdict and witness length, at bounds the concrete model cannot
/// reach in test time: 3 agents, 2 cells, MaxOps 3, each matrix column, every runtime.
#[test]
fn reductions_keep_verdicts() {
    use crate::jobs::runtime_matrix::scenario;
    use agentsim_models::Anomaly;
    for kind in RuntimeKind::ALL {
        for a in [Anomaly::A1, Anomaly::A2, Anomaly::A3, Anomaly::A6] {
            let (mut b, ext) = scenario(a, Some(3)).expect("a matrix column");
            (b.agents, b.cells) = (3, 2);
            let mut props = vec![Property::Never(a)];
            if a == Anomaly::A1 {
                props.extend([Property::L1Struct, Property::A1Snapshot]);
            }
            let run = |symmetry| {
                let cfg = CheckConfig {
                    bounds: b,
                    ext,
                    runtime: kind.stack(),
                    symmetry,
                    properties: props.clone(),
                    threads: 2,
                    max_states: u64::MAX,
                };
                check_abstract(&cfg, true, &Storage::default()).unwrap()
            };
            let (plain, reduced) = (run(false), run(true));
            let (p, r) = (&plain.report, &reduced.report);
            assert_eq!(p.outcome.violated, r.outcome.violated, "{kind} {a}");
            assert_eq!(p.outcome.depth, r.outcome.depth, "{kind} {a}");
            assert!(r.outcome.distinct <= p.outcome.distinct, "{kind} {a}");
            for (x, y) in p.verdicts.iter().zip(&r.verdicts) {
                let len = |v: &crate::jobs::run::Verdict| {
                    v.counterexample.as_ref().map(|c| c.steps.len())
                };
                assert_eq!(len(x), len(y), "{kind} {a} {:?}", x.property);
            }
        }
    }
}

/// Without a length bound the retraction-free model closes, and its verdicts are those of
/// the abstract model at MaxOps 4 and of the concrete one at MaxOps 3 (2 agents, 1 cell,
/// every runtime).
#[test]
fn unbounded_runs_close_and_agree() {
    let b = small(2, 1, 0, 4);
    for kind in RuntimeKind::ALL {
        let props = [
            Property::A1,
            Property::A6,
            Property::L1Struct,
            Property::A1Snapshot,
        ];
        let cfg = CheckConfig {
            bounds: b,
            ext: canonical(),
            runtime: kind.stack(),
            symmetry: false,
            properties: props.to_vec(),
            threads: 1,
            max_states: u64::MAX,
        };
        let open = check_abstract(&cfg, false, &Storage::default()).unwrap();
        let bounded = check_abstract(&cfg, true, &Storage::default()).unwrap();
        assert!(open.all_lengths || open.report.violated(), "{kind}: closes");
        assert!(!bounded.all_lengths);
        assert_eq!(
            open.report.outcome.violated, bounded.report.outcome.violated,
            "{kind}"
        );
        let conc = RuntimeModel::of_kind(small(2, 1, 0, 3), canonical(), kind).unwrap();
        let c = explored(&conc, PropSet::of(&props));
        assert_eq!(c.violated, open.report.outcome.violated, "{kind}");
    }
}

/// The canonical encoding round-trips every reachable state to its representative.
#[test]
fn codec_round_trips() {
    use crate::models::abstract_model::codec::{decode, encode, CellPerms};
    let b = small(3, 2, 0, 3);
    let abs = AbstractModel::new(AbstractConfig {
        bounds: b,
        ext: retracting(),
        stack: RuntimeKind::Causal { cascade: false }.stack(),
        watch: PropSet::of(&Property::ALL),
        bounded: true,
        symmetry: true,
    })
    .unwrap();
    let perms = CellPerms::all(2);
    let mut seen = HashSet::new();
    let mut stack = vec![abs.init()];
    let mut actions = Vec::new();
    while let Some(s) = stack.pop() {
        let mut bytes = Vec::new();
        encode(&s, true, &perms, &mut bytes);
        if !seen.insert(bytes.clone()) {
            continue;
        }
        let (back, used) = decode(3, &bytes);
        assert_eq!(used, bytes.len());
        let mut again = Vec::new();
        encode(&back, true, &perms, &mut again);
        assert_eq!(again, bytes, "decode gives the representative");
        assert_eq!(
            abs.verdict(&back, PropSet::of(&Property::ALL)),
            abs.verdict(&s, PropSet::of(&Property::ALL))
        );
        let mut exact = Vec::new();
        Space::encode(&abs, &s, &mut exact);
        assert_eq!(
            Space::decode(&abs, &exact),
            (s.clone(), exact.len()),
            "frontier codec"
        );
        actions.clear();
        abs.actions(&s, &mut actions);
        stack.extend(actions.iter().filter_map(|&a| abs.next_state(&s, a)));
    }
    assert!(seen.len() > 1_000, "{}", seen.len());
}

/// Every valid stack of the catalogue (not only the named runtimes): the α-walk at 2 agents ×
/// 1 cell × MaxOps 2 with retraction, and at 1 agent × 2 cells × MaxOps 1 with a tool and
/// signature changes, every property watched.
#[test]
fn alpha_commutes_for_every_valid_stack() {
    let stacks: Vec<Stack> = Stack::subsets(Stack::all())
        .into_iter()
        .filter(|s| s.validate().is_ok())
        .collect();
    assert!(stacks.len() >= 16, "{}", stacks.len());
    let all = PropSet::of(&Property::ALL);
    let tools = Extensions {
        tool_versions: true,
        ..canonical()
    };
    for &stack in &stacks {
        let w = walk(stack, small(2, 1, 0, 2), retracting(), all);
        assert!(w.abstract_states <= w.states, "{stack}: {w:?}");
        walk(stack, small(1, 2, 1, 1), tools, all);
    }
}
