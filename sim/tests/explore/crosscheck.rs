//! `explore` cross-checked against what exists: every anomaly set that sampling (`random`
//! and `pct:3`) finds on the example scenarios is among the sets exploring reaches, under
//! every named runtime; and on a generated family of small scenarios, every anomaly that the
//! runtime × anomaly matrix (SPEC §5; `agentsim_checker::jobs::runtime_matrix::expected`,
//! which a checker test holds equal to the exhaustive matrix in `results/tables/matrix.md`)
//! says a runtime prevents is unreachable under that runtime, while every cell it says is
//! admitted is reached by some member (so the family can tell a wrong cell either way).
//!
//! A pass says the engine's runtimes and the matrix agree on these small scenarios at the
//! default step budget; it does not extend the matrix to larger ones.

use agentsim_checker::jobs::runtime_matrix::expected;
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::explore::{explore, ExploreConfig, Reach};
use agentsim_sim::metrics::reported;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::RunConfig;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::util::root;

/// The example scenarios and the repeat cap at which each explores every runtime in about a
/// second with no path cut by the step budget (the caps `agentsim bench explore` reports are
/// larger). Not here: plan-execute and triage, whose polling loops meet the step budget on
/// some path at any size (time is abstracted), so a sampled trial may run past the bound.
const EXAMPLES: [(&str, u32); 7] = [
    ("scenarios/examples/edit-review.toml", 2),
    ("scenarios/explore/stale-review.toml", 1),
    ("scenarios/explore/retired-tool.toml", 1),
    ("scenarios/explore/effect-order.toml", 1),
    ("scenarios/twins/a1.toml", 1),
    ("scenarios/twins/a2-width2.toml", 1),
    ("scenarios/twins/a6-width4.toml", 1),
];
/// Sampled trials per scheduler, runtime and example.
const TRIALS: u64 = 200;

/// Every anomaly set sampled on an example (capped) is among the sets explored there.
#[test]
fn sampled_sets_are_among_explored_sets_under_every_runtime() {
    for (file, cap) in EXAMPLES {
        let sc = Scenario::load(&root().join(file)).unwrap();
        let (sc, _) = sc.with_repeat_cap(cap).unwrap();
        for kind in RuntimeKind::ALL {
            let rt = kind.stack();
            let ex = explore(&sc, &ExploreConfig::new(rt)).unwrap();
            assert!(ex.stopped.is_none(), "{file} under {rt}");
            assert_eq!(ex.budget_cut, 0, "{file} under {rt}: no path cut");
            for sched in [SchedulerSpec::Random, SchedulerSpec::Pct { depth: 3 }] {
                let cfg = RunConfig {
                    runtime: rt,
                    trials: TRIALS,
                    scheduler: sched.clone(),
                    ..RunConfig::new(&sc)
                };
                for t in agentsim_sim::run(&cfg).unwrap().trials {
                    let set: Vec<Anomaly> = reported().filter(|&a| t.metrics.has(a)).collect();
                    assert!(
                        ex.sets.contains_key(&set),
                        "{file} at repeat ≤ {cap} under {rt}, {}: sampled {set:?} (trial {}) \
                         is not among the explored sets {:?}",
                        sched.name(),
                        t.metrics.trial,
                        ex.sets.keys().collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

/// The matrix's claim: does `stack` prevent `a`? (`None`: not a column.)
type Matrix = fn(Stack, Anomaly) -> Option<bool>;

/// The matrix as the checker states it (SPEC §5).
fn matrix(stack: Stack, a: Anomaly) -> Option<bool> {
    expected(stack, false, a).map(|admitted| !admitted)
}

/// Members of the generated family.
const FAMILY: u64 = 24;

/// One small scenario: two or three agents over one or two cells and a tool; each agent runs
/// one operation (one or two when there are two agents) that reads (maybe planning the
/// tool), maybe generates, and writes one or two cells or none (a read-only commit, which
/// `si` does not validate); maybe an admin removes or re-signs the tool, maybe a supervisor
/// retracts the first agent's latest commit; provenance on or off.
fn member(seed: u64) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let two_cells = rng.random_bool(0.6);
    let cells: &[&str] = if two_cells { &["x", "y"] } else { &["x"] };
    let pick = |rng: &mut ChaCha8Rng| -> String {
        match (two_cells, rng.random_range(0..3)) {
            (true, 0) => "[\"x\", \"y\"]".into(),
            (true, 1) => "[\"y\"]".into(),
            _ => "[\"x\"]".into(),
        }
    };
    let write = |rng: &mut ChaCha8Rng| -> String {
        if rng.random_bool(0.25) {
            "[]".into()
        } else {
            pick(rng)
        }
    };
    let mut s = format!(
        "name = \"matrix-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
         provenance = {}\ncells = {cells:?}\ntools = [\"t\"]\n",
        rng.random_bool(0.5)
    );
    let agents = rng.random_range(2..=3);
    for agent in 0..agents {
        s.push_str(&format!("[[agents]]\nname = \"a{agent}\"\nscript = [\n"));
        for _ in 0..rng.random_range(1..=4 - agents) {
            let tool = if rng.random_bool(0.5) {
                ", tool = \"t\""
            } else {
                ""
            };
            s.push_str(&format!(
                "  {{ do = \"read\", cells = {}{tool} }},\n",
                pick(&mut rng)
            ));
            if rng.random_bool(0.7) {
                s.push_str("  { do = \"generate\", latency_ms = { fixed = 100 } },\n");
            }
            s.push_str(&format!(
                "  {{ do = \"write\", cells = {} }},\n",
                write(&mut rng)
            ));
        }
        s.push_str("]\n");
    }
    if rng.random_bool(0.4) {
        let change = if rng.random_bool(0.5) {
            "remove"
        } else {
            "signature"
        };
        s.push_str(&format!(
            "[[agents]]\nname = \"admin\"\nscript = [\n  {{ do = \"registry\", \
             change = \"{change}\", tool = \"t\" }},\n]\n"
        ));
    }
    if rng.random_bool(0.4) {
        s.push_str(
            "[[agents]]\nname = \"supervisor\"\nscript = [\n  { do = \"retract\", \
             agent = \"a0\" },\n]\n",
        );
    }
    Scenario::parse(&PathBuf::from(format!("matrix-{seed}.toml")), &s)
        .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
}

/// One member's search under one runtime: the anomalies it reaches, each with its witness.
struct Outcome {
    runtime: Stack,
    member: String,
    reached: Vec<(Anomaly, String)>,
}

/// Every member explored under every named runtime, once for all the tests of this file.
fn outcomes() -> &'static [Outcome] {
    static ALL: OnceLock<Vec<Outcome>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut out = Vec::new();
        for seed in 0..FAMILY {
            let sc = member(seed);
            for kind in RuntimeKind::ALL {
                let rt = kind.stack();
                let ex = explore(&sc, &ExploreConfig::new(rt)).unwrap();
                assert!(ex.complete, "{} under {rt} completes", sc.name);
                let reached = ex
                    .findings
                    .iter()
                    .filter(|f| f.reach == Reach::Reachable)
                    .map(|f| {
                        let w = f
                            .witness
                            .as_ref()
                            .expect("a reachable anomaly has a witness");
                        (f.anomaly, w.line.command())
                    })
                    .collect();
                out.push(Outcome {
                    runtime: rt,
                    member: sc.name.clone(),
                    reached,
                });
            }
        }
        out
    })
}

/// Every claim of `m` the family contradicts: a prevented anomaly that some member reaches
/// (with its witness), or an admitted lattice anomaly that no member reaches.
fn disagreements(m: Matrix) -> Vec<String> {
    let mut wrong = Vec::new();
    for kind in RuntimeKind::ALL {
        let rt = kind.stack();
        let mut reached: BTreeSet<Anomaly> = BTreeSet::new();
        for o in outcomes().iter().filter(|o| o.runtime == rt) {
            for (a, line) in &o.reached {
                reached.insert(*a);
                if m(rt, *a) == Some(true) {
                    wrong.push(format!(
                        "{rt} prevents {a} by the matrix, but {} reaches it: {line}",
                        o.member
                    ));
                }
            }
        }
        for a in Anomaly::LATTICE {
            if m(rt, a) == Some(false) && !reached.contains(&a) {
                wrong.push(format!(
                    "{rt} admits {a} by the matrix, but no member of the family reaches it"
                ));
            }
        }
    }
    wrong
}

/// The engine's runtimes agree with the matrix on the generated family, both ways.
#[test]
fn matrix_agrees_with_exploration_on_a_generated_family() {
    let wrong = disagreements(matrix);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        outcomes().len() as u64,
        FAMILY * RuntimeKind::ALL.len() as u64
    );
}

/// The agreement test can fail: one deliberately wrong cell (ssi said to prevent A6, which
/// only the sequencer does), and one admitted cell wrongly said prevented the other way
/// (saga said to admit A6), are each caught.
#[test]
fn a_wrong_matrix_cell_is_caught() {
    fn ssi_prevents_a6(stack: Stack, a: Anomaly) -> Option<bool> {
        if stack == RuntimeKind::Ssi.stack() && a == Anomaly::A6 {
            return Some(true);
        }
        matrix(stack, a)
    }
    fn saga_admits_a6(stack: Stack, a: Anomaly) -> Option<bool> {
        if stack == RuntimeKind::Saga.stack() && a == Anomaly::A6 {
            return Some(false);
        }
        matrix(stack, a)
    }
    let wrong = disagreements(ssi_prevents_a6);
    assert!(
        wrong.iter().any(|w| w.starts_with("ssi prevents A6")),
        "{wrong:?}"
    );
    let wrong = disagreements(saga_admits_a6);
    assert!(
        wrong.iter().any(|w| w.starts_with("saga admits A6")),
        "{wrong:?}"
    );
}
