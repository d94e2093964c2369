//! The vacuity analysis against exhaustive exploration: on a grid of bounds and extensions,
//! a property is "not vacuous" exactly when some reachable state of the unguarded model
//! (vanilla; reads routed as asked) violates it. Both directions matter: a property called
//! vacuous that some state violates would hide an anomaly behind "cannot tell", and one called
//! possible that no state violates would let "holds" mean nothing again. A third test checks
//! that guards only remove: what is vacuous under vanilla holds under every runtime and read
//! discipline. Values stay at 1 (every need is met with one value; a second only grows the
//! space); the grid is what fits in about a minute of release test time on two threads.

use agentsim_checker::jobs::vacuity::{self, Features};
use agentsim_checker::{
    explore, Bounds, ExploreOptions, Extensions, PaperModel, PropSet, Property, Replication,
    ReplicatedModel, RuntimeModel, Skew, Space,
};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::{RuntimeKind, Stack};

const MAX_STATES: u64 = 20_000_000;

/// The properties some reachable state of `space` violates (every property checked).
fn reachable<S: Space>(space: &S) -> PropSet {
    let opts = ExploreOptions {
        threads: 2,
        check: PropSet::of(&Property::ALL),
        max_states: MAX_STATES,
    };
    let out = explore(space, &opts);
    assert!(out.complete || out.all_violated, "{:?}", space.bounds());
    out.violated
}

/// The single-store model `check` explores for vanilla (or `stack`) at these constants.
fn single(b: Bounds, ext: Extensions, stack: Stack) -> PropSet {
    let paper = stack == Stack::VANILLA && !ext.provenance && !ext.retraction && !ext.tool_versions;
    if paper {
        reachable(&PaperModel::new(b, ext, false).unwrap())
    } else {
        reachable(&RuntimeModel::of_stack(b, ext, stack).unwrap())
    }
}

fn extensions(bits: u32) -> Extensions {
    Extensions {
        canonical_writes: bits & 1 != 0,
        provenance: bits & 2 != 0,
        retraction: bits & 4 != 0,
        tool_versions: bits & 8 != 0,
        all_writers: bits & 16 != 0,
    }
}

fn skews(cells: u32) -> Vec<(Skew, u32)> {
    let mut out = vec![(Skew::Off, 0), (Skew::Every, 0), (Skew::External, 1)];
    if cells > 1 {
        out.push((Skew::External, cells));
    }
    out
}

/// Compares the analysis with `found` for every property; returns the disagreements.
fn disagreements(what: &str, f: &Features, found: PropSet) -> Vec<String> {
    Property::ALL
        .into_iter()
        .filter(|&p| vacuity::vacuous(p, f).is_none() != found.contains(p))
        .map(|p| {
            format!(
                "{what}: {} analysis says {:?}, exploration found violated = {}",
                p.name(),
                vacuity::vacuous(p, f),
                found.contains(p)
            )
        })
        .collect()
}

/// One slice of the single-store grid (the grid is split by agents so the harness can run
/// the slices side by side).
fn single_store_grid(agents: u32) {
    let mut wrong = Vec::new();
    let mut runs = 0;
    for cells in 1..=2 {
        for tools in 0..=1 {
            for max_ops in 1..=3 {
                for (skew, external) in skews(cells) {
                    for bits in 0..32 {
                        let b = Bounds {
                            agents,
                            cells,
                            values: 1,
                            tools,
                            max_ops,
                            external,
                            skew,
                        };
                        let ext = extensions(bits);
                        let f = Features::single_store(b, ext, Stack::VANILLA, true);
                        let found = single(b, ext, Stack::VANILLA);
                        wrong.extend(disagreements(&format!("{b:?} {ext:?}"), &f, found));
                        runs += 1;
                    }
                }
            }
        }
    }
    assert!(runs > 0);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn exact_on_the_single_store_grid_one_agent() {
    single_store_grid(1);
}

#[test]
fn exact_on_the_single_store_grid_two_agents() {
    single_store_grid(2);
}

#[test]
fn exact_on_the_single_store_grid_three_agents() {
    single_store_grid(3);
}

/// The replicated store, reads routed as asked (any-replica), vanilla writes.
#[test]
fn exact_on_the_replicated_grid() {
    let mut wrong = Vec::new();
    for agents in 1..=3 {
        for cells in 1..=2 {
            for max_ops in 1..=3 {
                for max_lag in 0..=1 {
                    for bits in [0, 1, 2, 16, 18] {
                        let b = Bounds {
                            tools: 0,
                            values: 1,
                            ..Bounds::paper(agents, cells, max_ops)
                        };
                        let ext = extensions(bits);
                        let rep = Replication {
                            secondaries: 1,
                            max_lag,
                            discipline: ReadDiscipline::AnyReplica,
                        };
                        let f = Features::replicated(b, ext, rep, Stack::VANILLA);
                        let m = ReplicatedModel::of_stack(b, ext, rep, Stack::VANILLA).unwrap();
                        let what = format!("{b:?} {ext:?} lag {max_lag}");
                        wrong.extend(disagreements(&what, &f, reachable(&m)));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What vanilla cannot violate, no guard can: every runtime and read discipline only
/// removes transitions (or aborts, which no need above is met by).
#[test]
fn vacuous_under_vanilla_holds_under_every_guard() {
    let mut wrong = Vec::new();
    for kind in RuntimeKind::ALL {
        let stack = kind.stack();
        for agents in 1..=2 {
            for cells in 1..=2 {
                for max_ops in 1..=2 {
                    for bits in [0, 1, 2, 4, 6, 8, 16] {
                        let b = Bounds {
                            tools: 1,
                            values: 1,
                            ..Bounds::paper(agents, cells, max_ops)
                        };
                        let ext = extensions(bits);
                        let f = Features::single_store(b, ext, stack, true);
                        let found = single(b, ext, stack);
                        for p in found.iter() {
                            if let Some(why) = vacuity::vacuous(p, &f) {
                                wrong.push(format!("{kind:?} {b:?} {ext:?}: {why}"));
                            }
                        }
                    }
                }
            }
        }
        for discipline in [ReadDiscipline::Session, ReadDiscipline::PrimaryPinned] {
            for agents in 1..=2 {
                let b = Bounds {
                    tools: 0,
                    values: 1,
                    ..Bounds::paper(agents, 1, 3)
                };
                let rep = Replication {
                    secondaries: 1,
                    max_lag: 1,
                    discipline,
                };
                let ext = Extensions::default();
                let f = Features::replicated(b, ext, rep, stack);
                let m = ReplicatedModel::of_stack(b, ext, rep, stack).unwrap();
                for p in reachable(&m).iter() {
                    if let Some(why) = vacuity::vacuous(p, &f) {
                        wrong.push(format!("{kind:?} {discipline:?} {b:?}: {why}"));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
