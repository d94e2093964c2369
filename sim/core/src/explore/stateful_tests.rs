//! The stateful search against the stateless one: on a generated family, generated polling
//! loops and every shipped scenario that can be explored, under every named runtime, the
//! plain enumeration with and without the states kept reaches the same anomaly sets, the
//! same final histories and the same verdicts wherever the stateless search finishes, and
//! the stateful one finishes there too.

use super::tests::{family, polls};
use super::*;
use agentsim_models::runtime::RuntimeKind;
use std::path::Path;

/// The stateless plain search stops here on a generated member, and on a shipped scenario
/// (one it does not finish is not compared).
const PLAIN_MAX: u64 = 20_000;
const SHIPPED_MAX: u64 = 3_000;

/// Explores `sc` plain, stateless and stateful, under `cfg` (histories kept) and, where the
/// stateless search finished, asserts that the stateful one did and that both found the
/// same; returns the stateful search's counts then.
fn agree(sc: &Scenario, cfg: &ExploreConfig<'_>, max: u64, what: &str) -> Option<Stateful> {
    let mut cfg = cfg.clone();
    cfg.search = Search::Plain;
    cfg.keep_histories = true;
    cfg.max_schedules = Some(max);
    // A recording's scenario explores paths its lines do not cover: the stub stands in.
    cfg.on_missing = Some(OnMissing::Stub);
    let stateless = explore(sc, &cfg).unwrap();
    if !stateless.complete {
        return None;
    }
    cfg.stateful = true;
    let stateful = explore(sc, &cfg).unwrap();
    assert!(stateful.complete, "{what}");
    let sets = |e: &Exploration| e.sets.keys().cloned().collect::<Vec<_>>();
    assert_eq!(sets(&stateless), sets(&stateful), "{what}: anomaly sets");
    assert_eq!(stateless.finished, stateful.finished, "{what}: finished");
    if !crate::engine::abstracts(sc) {
        // The concrete key merges only states with one log, so the histories are the same.
        assert_eq!(stateless.histories, stateful.histories, "{what}: histories");
    }
    assert_eq!(
        stateless.bound_text(),
        stateful.bound_text(),
        "{what}: the step budget cut a path in both or in neither"
    );
    let reach = |e: &Exploration| e.findings.iter().map(|f| f.reach).collect::<Vec<_>>();
    assert_eq!(reach(&stateless), reach(&stateful), "{what}: verdicts");
    assert!(stateful.schedules <= stateless.schedules, "{what}");
    assert!(stateless.stateful.is_none(), "{what}");
    if crate::engine::abstracts(sc) {
        // No path of the stateless search was cut, so none is longer than the budget: with
        // no budget at all the stateful search meets the same states and ends the same.
        cfg.steps_per_agent = STEPS_UNBOUNDED;
        let unbounded = explore(sc, &cfg).unwrap();
        assert!(unbounded.complete, "{what}: unbounded");
        assert_eq!(sets(&stateless), sets(&unbounded), "{what}: unbounded sets");
        assert_eq!(stateless.finished, unbounded.finished, "{what}: unbounded");
        assert_eq!(reach(&stateless), reach(&unbounded), "{what}: unbounded");
    }
    Some(stateful.stateful.expect("a stateful search says so"))
}

#[test]
fn stateful_and_stateless_agree_on_a_generated_family() {
    let (mut compared, mut merged) = (0, 0);
    for seed in 0..12 {
        for sc in [family(seed, 1), family(100 + seed, 2), polls(seed, 1, 1, 2)] {
            for kind in RuntimeKind::ALL {
                let cfg = ExploreConfig {
                    steps_per_agent: 12,
                    ..ExploreConfig::new(kind.stack())
                };
                let what = format!("{} {seed} under {}", sc.name, kind.name());
                if let Some(c) = agree(&sc, &cfg, PLAIN_MAX, &what) {
                    compared += 1;
                    merged += c.merged;
                }
            }
        }
    }
    assert!(compared >= 100, "enough members finished: {compared}");
    assert!(merged > 0, "some paths met a state seen before");
}

/// Every shipped scenario `explore` takes (not `[cpl]`, not a sweep), at the default budget and at a
/// small one.
#[test]
fn stateful_and_stateless_agree_on_the_shipped_scenarios() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    for dir in ["explore", "timed", "twins", "examples", "recordings"] {
        for e in std::fs::read_dir(root.join(dir)).expect("a shipped folder") {
            let p = e.expect("a listed file").path();
            if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut compared = 0;
    for p in &files {
        let sc = Scenario::load(p).expect("shipped scenario");
        if sc.cpl.is_some() {
            continue;
        }
        for kind in RuntimeKind::ALL {
            for steps in [STEPS_PER_AGENT_DEFAULT, 6] {
                let cfg = ExploreConfig {
                    steps_per_agent: steps,
                    ..ExploreConfig::new(kind.stack())
                };
                let what = format!("{} under {} at {steps} steps", p.display(), kind.name());
                compared += usize::from(agree(&sc, &cfg, SHIPPED_MAX, &what).is_some());
            }
        }
    }
    assert!(
        compared >= 40,
        "enough shipped searches finished: {compared}"
    );
}

/// The key is computed incrementally (`engine::snapshot::KeyState`) and, in tests, checked
/// against the same facts computed from the whole log at every key (`Engine::state_key`
/// asserts it): here on stateful searches without a step budget of generated members, polling
/// loops and every shipped example and workload, under every named runtime, which must run
/// many such checks (the searches above run more).
#[test]
fn the_incremental_key_is_the_whole_logs_at_every_step() {
    use std::sync::atomic::Ordering;
    let before = crate::engine::KEY_CHECKS.load(Ordering::Relaxed);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut scenarios: Vec<Scenario> = (0..4)
        .flat_map(|seed| [family(seed, 2), polls(seed, 1, 1, 2)])
        .collect();
    for dir in ["examples", "workloads", "bounds"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("a shipped folder")
            .map(|e| e.expect("a listed file").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for p in files {
            scenarios.push(Scenario::load(&p).expect("shipped scenario"));
        }
    }
    let mut searches = 0;
    for sc in scenarios.iter().filter(|sc| crate::engine::abstracts(sc)) {
        for kind in RuntimeKind::ALL {
            let cfg = ExploreConfig {
                search: Search::Plain,
                stateful: true,
                steps_per_agent: STEPS_UNBOUNDED,
                max_schedules: Some(300),
                on_missing: Some(OnMissing::Stub),
                ..ExploreConfig::new(kind.stack())
            };
            explore(sc, &cfg).unwrap();
            searches += 1;
        }
    }
    assert!(searches >= 100, "{searches}");
    let checked = crate::engine::KEY_CHECKS.load(Ordering::Relaxed) - before;
    assert!(checked >= 100_000, "keys checked: {checked}");
}

/// The stateful search refuses what it cannot run soundly: reduction and time.
#[test]
fn stateful_is_plain_only() {
    let sc = family(0, 1);
    for search in [
        Search::Reduced { symmetry: true },
        Search::Timed(crate::bounds::Quantiles::default()),
    ] {
        let cfg = ExploreConfig {
            search,
            stateful: true,
            ..ExploreConfig::new(sc.runtime)
        };
        assert!(matches!(
            explore(&sc, &cfg),
            Err(ExploreError::StatefulSearch)
        ));
    }
}

/// Loops that a step budget cuts close without one: a retrying client beside a server whose
/// loop never ends, and the editor whose write comes after 45 waits, are explored
/// completely under every named runtime, and the stateless search at the default budget is
/// cut on each (so the stateful search decides what it cannot).
#[test]
fn loops_close_without_a_step_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/bounds");
    for name in ["retry-beside-server.toml", "editor-45-waits.toml"] {
        let sc = Scenario::load(&root.join(name)).expect("shipped scenario");
        for kind in RuntimeKind::ALL {
            let what = format!("{name} under {}", kind.name());
            let cfg = ExploreConfig::new(kind.stack());
            let cut = explore(&sc, &cfg).unwrap();
            assert!(!cut.complete, "{what}: the budget cuts it");
            let cfg = ExploreConfig {
                search: Search::Plain,
                stateful: true,
                steps_per_agent: STEPS_UNBOUNDED,
                ..cfg
            };
            let full = explore(&sc, &cfg).unwrap();
            assert!(full.complete, "{what}");
            assert!(full.stateful.is_some_and(|s| s.merged > 0), "{what}");
            // Whatever the cut search found is found again.
            for set in cut.sets.keys() {
                assert!(full.sets.contains_key(set), "{what}: {set:?}");
            }
        }
    }
}

/// An unbounded budget without states is refused: nothing else would end a loop.
#[test]
fn unbounded_needs_stateful() {
    let sc = family(0, 1);
    let cfg = ExploreConfig {
        search: Search::Plain,
        steps_per_agent: STEPS_UNBOUNDED,
        ..ExploreConfig::new(sc.runtime)
    };
    assert!(matches!(explore(&sc, &cfg), Err(ExploreError::Unbounded)));
}

/// A stateful search with no step budget, on `threads` threads.
fn unbounded(kind: RuntimeKind, threads: usize) -> ExploreConfig<'static> {
    ExploreConfig {
        search: Search::Plain,
        stateful: true,
        steps_per_agent: STEPS_UNBOUNDED,
        threads,
        ..ExploreConfig::new(kind.stack())
    }
}

/// What a stateful search decides whatever the threads or shards: completeness, the anomaly
/// sets, and each anomaly's verdict with its reason.
fn decided(e: &Exploration) -> (bool, Vec<Vec<Anomaly>>, Vec<Verdict>) {
    (
        e.complete,
        e.sets.keys().cloned().collect(),
        e.findings.iter().map(Finding::never).collect(),
    )
}

/// Shipped scenarios the stateful search finishes without a step budget in a unit test.
const SHARED: [&str; 5] = [
    "examples/triage.toml",
    "examples/edit-review.toml",
    "explore/stale-review.toml",
    "bounds/retry-beside-server.toml",
    "bounds/editor-45-waits.toml",
];

fn shipped(name: &str) -> Scenario {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    Scenario::load(&root.join(name)).expect("shipped scenario")
}

/// The threads share one set of states: 1, 2 and 4 threads decide the same (sets, verdicts,
/// completeness), on shipped examples under several runtimes. (The states met are not
/// compared: where two states with one key differ in what the key leaves out, which of them
/// is expanded, and so what its successors' keys are, depends on which thread met it first.)
#[test]
fn one_set_of_states_whatever_the_threads() {
    let kinds = [
        RuntimeKind::Vanilla,
        RuntimeKind::Ssi,
        RuntimeKind::Pessimistic,
    ];
    for name in SHARED {
        let sc = shipped(name);
        for kind in kinds {
            let what = format!("{name} under {}", kind.name());
            let one = explore(&sc, &unbounded(kind, 1)).unwrap();
            assert!(one.complete, "{what}");
            assert!(one.stateful.expect("stateful").states > 0, "{what}");
            for threads in [2, 4] {
                let many = explore(&sc, &unbounded(kind, threads)).unwrap();
                assert_eq!(decided(&many), decided(&one), "{what}, {threads} threads");
            }
        }
    }
}

/// `--max-memory-mb` bounds the set of states: a ceiling the set passes stops the search,
/// and every verdict it did not reach is cannot tell with the ceiling as the reason; a
/// ceiling it does not pass changes nothing.
#[test]
fn the_memory_ceiling_bounds_the_states() {
    for name in ["bounds/retry-beside-server.toml", "examples/triage.toml"] {
        let sc = shipped(name);
        let free = explore(&sc, &unbounded(RuntimeKind::Vanilla, 2)).unwrap();
        assert!(free.complete, "{name}");
        let roomy = ExploreConfig {
            max_memory_mb: Some(1024),
            ..unbounded(RuntimeKind::Vanilla, 2)
        };
        let roomy = explore(&sc, &roomy).unwrap();
        assert_eq!(decided(&roomy), decided(&free), "{name}");
        let tiny = ExploreConfig {
            max_memory_mb: Some(0),
            ..unbounded(RuntimeKind::Vanilla, 2)
        };
        let stopped = explore(&sc, &tiny).unwrap();
        assert_eq!(stopped.stopped, Some(Stopped::Memory), "{name}");
        assert!(!stopped.complete, "{name}");
        for f in &stopped.findings {
            match (f.reach, &f.why) {
                (Reach::Reachable, _) => {}
                (Reach::CannotTell, Some(Reason::Budget(why))) => {
                    assert!(why.contains("memory ceiling"), "{name}: {why}");
                }
                (Reach::CannotTell, Some(Reason::Vacuous(_))) => {}
                other => panic!("{name}: {}: {other:?}", f.anomaly),
            }
        }
        assert!(
            stopped
                .findings
                .iter()
                .any(|f| matches!(f.why, Some(Reason::Budget(_)))),
            "{name}: some verdict is left undecided"
        );
    }
}

/// A stateful search in 1, 2 and 3 shards, each with its own set, joins into the verdicts
/// and anomaly sets of one process; the join keeps at least the states one process met,
/// and more where two shards meet a state (one process's tasks share one set: with a set
/// per task, one process would count what the shards count).
#[test]
fn stateful_shards_join_into_the_whole() {
    let mut met_twice = false;
    for name in ["examples/triage.toml", "bounds/retry-beside-server.toml"] {
        let sc = shipped(name);
        for kind in [RuntimeKind::Vanilla, RuntimeKind::Ssi] {
            let cfg = unbounded(kind, 1);
            let whole = explore(&sc, &cfg).unwrap();
            assert!(whole.complete, "{name}");
            let states = whole.stateful.expect("stateful").states;
            for n in 1..=3u64 {
                let parts: Vec<(String, ShardRun)> = (1..=n)
                    .map(|i| {
                        let run = explore_shard(&sc, &cfg, i, n).unwrap();
                        assert!(run.stateful.is_some(), "a stateful share says so");
                        let text = serde_json::to_string(&run).expect("serializes");
                        let back: ShardRun = serde_json::from_str(&text).expect("parses");
                        assert_eq!(back, run);
                        (format!("shard {i}"), back)
                    })
                    .collect();
                let joined = merge_shards(&sc, &cfg, &parts).unwrap();
                let what = format!("{name} under {} in {n} shards", kind.name());
                assert_eq!(decided(&joined), decided(&whole), "{what}");
                let joined_states = joined.stateful.expect("a stateful join").states;
                assert!(joined_states >= states, "{what}");
                if n == 1 {
                    assert_eq!(joined_states, states, "{what}");
                }
                met_twice |= joined_states > states;
                // A stateless search's shares do not join as a stateful one.
                let plain = ExploreConfig {
                    stateful: false,
                    ..cfg.clone()
                };
                assert!(
                    matches!(
                        merge_shards(&sc, &plain, &parts),
                        Err(JoinError::Stateful { .. })
                    ),
                    "{what}"
                );
            }
        }
    }
    assert!(
        met_twice,
        "some state is met by two shards, and once by one process"
    );
}
