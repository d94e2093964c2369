//! The vacuity analysis against exhaustive exploration: on a grid of bounds and extensions,
//! a property is "not vacuous" exactly when some reachable state of the unguarded model
//! (vanilla; reads routed as asked) violates it. Both directions matter: a property called
//! vacuous that some state violates would hide an anomaly behind "cannot tell", and one called
//! possible that no state violates would let "holds" mean nothing again. A third test checks
//! that guards only remove: what is vacuous under vanilla holds under every runtime and read
//! discipline. Values stay at 1 (every need is met with one value; a second only grows the
//! space); the grid is what fits in about a minute of release test time: agents 1..3, cells
//! 1..2, tools 0..1, MaxOps 1..3, every skew reading and [`EXTENSION_SETS`], each exploration
//! cut at [`MAX_STATES`] (a cut run still refutes any "vacuous" it finds violated; the tallies
//! say how many pairs were decided).

use agentsim_checker::jobs::vacuity::{self, Features, Store};
use agentsim_checker::{
    explore, Bounds, ExploreOptions, Extensions, PaperModel, PropSet, Property, ReplicatedModel,
    Replication, RuntimeModel, Skew, Space,
};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::{RuntimeKind, Stack};

/// States one exploration may visit. Spaces with a tool, two cells and three records run to
/// millions of states, past a minute of test time; such a run is cut here and compared only
/// where it is still decisive (see [`Found`]).
const MAX_STATES: u64 = 20_000;

/// What an exploration of a space found.
#[derive(Clone, Copy, Debug)]
struct Found {
    violated: PropSet,
    /// The space was exhausted (or every checked property violated): `violated` is exact.
    /// Otherwise only its members are known: a property it lacks was not decided.
    exact: bool,
}

/// The properties some reachable state of `space` violates, of those in `check`.
fn reachable<S: Space>(space: &S, check: PropSet) -> Found {
    let opts = ExploreOptions {
        threads: 1,
        check,
        max_states: MAX_STATES,
    };
    let out = explore(space, &opts);
    Found {
        violated: out.violated,
        exact: out.complete || out.all_violated,
    }
}

/// The single-store model `check` explores for vanilla (or `stack`) at these constants.
fn single(b: Bounds, ext: Extensions, stack: Stack) -> Found {
    let paper = stack == Stack::VANILLA && !ext.provenance && !ext.retraction && !ext.tool_versions;
    // A4 reads replica metadata, which single-store records never carry (its detector is
    // empty on them): left out so that an exploration may stop once the rest are violated.
    let check = PropSet::of(&Property::ALL).minus(PropSet::of(&[Property::A4]));
    if paper {
        reachable(&PaperModel::new(b, ext, false).unwrap(), check)
    } else {
        reachable(&RuntimeModel::of_stack(b, ext, stack).unwrap(), check)
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

/// Each extension alone, provenance with retraction (A3's pair), none, and all of them: the
/// analysis reads each switch on its own, so pairs beyond A3's add little but time.
const EXTENSION_SETS: [u32; 8] = [0, 1, 2, 4, 6, 8, 16, 31];

fn skews(cells: u32) -> Vec<(Skew, u32)> {
    let mut out = vec![(Skew::Off, 0), (Skew::Every, 0), (Skew::External, 1)];
    if cells > 1 {
        out.push((Skew::External, cells));
    }
    out
}

/// Compares the analysis with `found` for every property it decides; returns the
/// disagreements. A cut exploration still refutes a "vacuous" it found violated.
fn disagreements(what: &str, f: &Features, found: Found, tally: &mut Tally) -> Vec<String> {
    let mut wrong = Vec::new();
    for p in Property::ALL {
        let possible = vacuity::vacuous(p, f).is_none();
        let hit = found.violated.contains(p);
        if p == Property::A4 && f.store == Store::Single {
            assert!(!possible, "{what}: A4 on a single store");
            continue;
        }
        if !found.exact && !hit {
            tally.undecided += 1;
            continue;
        }
        tally.decided += 1;
        tally.vacuous += u64::from(!possible);
        if possible != hit {
            wrong.push(format!(
                "{what}: {} analysis says {:?}, exploration found violated = {hit}",
                p.name(),
                vacuity::vacuous(p, f),
            ));
        }
    }
    wrong
}

/// How many (configuration, property) pairs were decided by exploration, how many of those
/// the analysis called vacuous, and how many a cut exploration left undecided.
#[derive(Debug, Default)]
struct Tally {
    decided: u64,
    vacuous: u64,
    undecided: u64,
}

/// One slice of the single-store grid (the grid is split by agents so the harness can run
/// the slices side by side).
fn single_store_grid(agents: u32) -> Tally {
    let mut wrong = Vec::new();
    let mut tally = Tally::default();
    for cells in 1..=2 {
        for tools in 0..=1 {
            for max_ops in 1..=3 {
                for (skew, external) in skews(cells) {
                    for bits in EXTENSION_SETS {
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
                        let what = format!("{b:?} {ext:?}");
                        wrong.extend(disagreements(&what, &f, found, &mut tally));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("{agents} agents: {tally:?}");
    tally
}

// The tallies pin how much of each slice exploration decides, so a change that makes the
// grid mostly undecided (or the cut bigger) shows here.
#[test]
fn exact_on_the_single_store_grid_one_agent() {
    let t = single_store_grid(1);
    assert!(t.decided > 2 * t.undecided, "{t:?}");
}

#[test]
fn exact_on_the_single_store_grid_two_agents() {
    let t = single_store_grid(2);
    assert!(t.decided > t.undecided, "{t:?}");
}

#[test]
fn exact_on_the_single_store_grid_three_agents() {
    let t = single_store_grid(3);
    assert!(t.decided > 0, "{t:?}");
}

/// The replicated store, reads routed as asked (any-replica), vanilla writes.
#[test]
fn exact_on_the_replicated_grid() {
    let mut wrong = Vec::new();
    let mut tally = Tally::default();
    for agents in 1..=2 {
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
                        let found = reachable(&m, PropSet::of(&Property::ALL));
                        wrong.extend(disagreements(&what, &f, found, &mut tally));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    eprintln!("replicated: {tally:?}");
    assert!(tally.decided > tally.undecided, "{tally:?}");
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
                        for p in found.violated.iter() {
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
                for p in reachable(&m, PropSet::of(&Property::ALL)).violated.iter() {
                    if let Some(why) = vacuity::vacuous(p, &f) {
                        wrong.push(format!("{kind:?} {discipline:?} {b:?}: {why}"));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
