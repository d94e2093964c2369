//! Tests of exploration: the worked examples' verdicts and witnesses, the independence
//! relation on random engine states, and reduced against plain search on a generated family.

use super::*;
use crate::dist::below;
use crate::runner::run_one;
use crate::scheduler::{Access, ChoiceKind, ChoicePoint, Chooser, Footprint, Scheduler, Use};
use agentsim_models::runtime::RuntimeKind;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};

fn example(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/explore")
        .join(name);
    Scenario::load(&p).expect("shipped scenario")
}

fn stack(name: &str) -> Stack {
    Stack::parse(name).expect("named runtime")
}

/// Replays `w`'s line through its text (as a user pastes it) and checks that the trial takes
/// the same choices, the same number of events, and exhibits `a`.
pub(super) fn replays_to(sc: &Scenario, w: &Witness, a: Anomaly, what: &str) {
    let line = ReplayLine::parse(&w.line.to_string()).unwrap();
    let t = run_one(
        sc,
        line.runtime,
        line.seed,
        line.trial,
        &line.schedule,
        None,
    )
    .unwrap();
    assert!(t.metrics.has(a), "{what}: the witness replays to {a}");
    assert_eq!(t.run.schedule, line.schedule, "{what}: the same choices");
    assert_eq!(t.metrics.events, w.events);
}

/// Each worked example: the anomaly reachable under vanilla with a witness that replays to a
/// history exhibiting it, and unreachable under its fixed twin's runtime; both complete.
#[test]
fn worked_examples_and_their_twins() {
    let cases = [
        ("stale-review.toml", "stale-review-ssi.toml", Anomaly::A1),
        ("retired-tool.toml", "retired-tool-pin.toml", Anomaly::A2),
        ("effect-order.toml", "effect-order-saga.toml", Anomaly::A6),
    ];
    for (file, twin, a) in cases {
        let sc = example(file);
        let ex = explore(&sc, &ExploreConfig::new(sc.runtime)).unwrap();
        assert!(ex.complete, "{file}");
        let f = ex.finding(a).unwrap();
        assert_eq!(f.reach, Reach::Reachable, "{file}");
        replays_to(&sc, f.witness.as_ref().unwrap(), a, file);
        let sc = example(twin);
        let ex = explore(&sc, &ExploreConfig::new(sc.runtime)).unwrap();
        assert!(ex.complete, "{twin}");
        assert_eq!(ex.finding(a).unwrap().reach, Reach::Unreachable, "{twin}");
    }
}

/// Sampling misses what exploring finds: 2,000 timed trials of each worked example under the
/// random scheduler show none of its anomaly (the latencies fix the order).
#[test]
fn sampling_misses_the_worked_examples() {
    for (file, a) in [
        ("stale-review.toml", Anomaly::A1),
        ("retired-tool.toml", Anomaly::A2),
        ("effect-order.toml", Anomaly::A6),
    ] {
        let sc = example(file);
        let mut cfg = crate::RunConfig::new(&sc);
        cfg.trials = 2000;
        let r = crate::run(&cfg).unwrap();
        assert!(r.trials.iter().all(|t| !t.metrics.has(a)), "{file}");
    }
}

/// A small scenario of the generated family: two or three agents with one or two operations
/// over two cells and a tool, reads that may `pick`, writes of one or two effects (either
/// order), a branch, and maybe an admin who changes the registry or a supervisor who retracts,
/// each with a `prob` of 0.5.
pub(crate) fn family(seed: u64, ops_max: usize) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cells = |rng: &mut ChaCha8Rng| match below(rng, 3) {
        0 => "[\"x\"]",
        1 => "[\"y\"]",
        _ => "[\"x\", \"y\"]",
    };
    let mut s = format!(
        "name = \"family-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\ncells = [\"x\", \"y\"]\ntools = [\"t\"]\n\
         [retry]\nmax = {}\nbackoff_ms = {{ fixed = 10 }}\n",
        below(&mut rng, 2)
    );
    for agent in 0..2 {
        s.push_str(&format!("[[agents]]\nname = \"a{agent}\"\nscript = [\n"));
        for _ in 0..1 + below(&mut rng, ops_max) {
            let read = cells(&mut rng);
            let pick = if read.contains(',') && below(&mut rng, 3) == 0 {
                ", pick = 1"
            } else {
                ""
            };
            let tool = if below(&mut rng, 2) == 0 {
                ", tool = \"t\""
            } else {
                ""
            };
            s.push_str(&format!(
                "  {{ do = \"read\", cells = {read}{pick}{tool} }},\n"
            ));
            if below(&mut rng, 3) != 0 {
                s.push_str("  { do = \"generate\", latency_ms = { fixed = 100 } },\n");
            }
            let write = cells(&mut rng);
            let incl = if below(&mut rng, 3) == 0 {
                ", include_read = true"
            } else {
                ""
            };
            s.push_str(&format!("  {{ do = \"write\", cells = {write}{incl} }},\n"));
        }
        if below(&mut rng, 3) == 0 {
            s.push_str(
                "  { do = \"branch\", cell = \"x\", when = \"null\", goto = \"end\", \
                 prob = 0.5 },\n  { do = \"wait\", latency_ms = { fixed = 5 } },\n",
            );
        }
        s.push_str("]\n");
    }
    match below(&mut rng, 3) {
        0 => s.push_str(
            "[[agents]]\nname = \"admin\"\nscript = [\n  { do = \"registry\", \
             change = \"remove\", tool = \"t\", prob = 0.5 },\n]\n",
        ),
        1 => s.push_str(
            "[[agents]]\nname = \"supervisor\"\nscript = [\n  { do = \"retract\", \
             agent = \"a0\", prob = 0.5 },\n]\n",
        ),
        _ => {}
    }
    Scenario::parse(&PathBuf::from(format!("family-{seed}.toml")), &s)
        .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
}

/// On a generated family under every named runtime, the reduced and the plain search reach
/// the same anomaly sets and the same final histories, and count the same classes; with
/// reduction every schedule is a class of its own.
#[test]
fn reduced_and_plain_agree() {
    let mut compared = 0;
    for seed in 0..12 {
        let sc = family(seed, 1);
        for kind in RuntimeKind::ALL {
            let what = format!("family {seed} under {}", kind.name());
            if let Some((reduced, plain)) = agree(&sc, kind, PLAIN_MAX, &what) {
                compared += 1;
                assert!(plain.schedules >= reduced.schedules, "{what}");
            }
        }
    }
    assert!(compared >= 36, "enough members finished plain: {compared}");
}

/// Explores `sc` under `kind` reduced and plain (the plain search stopped at `plain_max`
/// schedules) and, where the plain search finished, asserts that both reach the same anomaly
/// sets, final histories and classes, and that every reduced schedule is a class of its own;
/// returns both then.
fn agree(
    sc: &Scenario,
    kind: RuntimeKind,
    plain_max: u64,
    what: &str,
) -> Option<(Exploration, Exploration)> {
    let mut cfg = ExploreConfig::new(stack(kind.name()));
    cfg.keep_histories = true;
    let reduced = explore(sc, &cfg).unwrap();
    cfg.search = Search::Plain;
    cfg.max_schedules = Some(plain_max);
    let plain = explore(sc, &cfg).unwrap();
    assert!(reduced.complete, "{what}");
    if !plain.complete {
        return None;
    }
    let sets = |e: &Exploration| e.sets.keys().cloned().collect::<Vec<_>>();
    assert_eq!(sets(&reduced), sets(&plain), "{what}");
    assert_eq!(reduced.histories, plain.histories, "{what}");
    assert_eq!(reduced.classes, plain.classes, "{what}");
    assert_eq!(reduced.classes, reduced.schedules, "{what}");
    Some((reduced, plain))
}

/// A generated scenario with a poller: an agent whose operations read and write nothing
/// (`write []`, a poll's commit), beside `others` agents of `ops` read-write operations,
/// one of them perhaps retracting the other's records.
pub(super) fn polls(seed: u64, polls: usize, others: usize, ops: usize) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cells = |rng: &mut ChaCha8Rng| match below(rng, 3) {
        0 => "[\"x\"]",
        1 => "[\"y\"]",
        _ => "[\"x\", \"y\"]",
    };
    let mut s = format!(
        "name = \"polls-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
         cells = [\"x\", \"y\"]\n[retry]\nmax = {}\nbackoff_ms = {{ fixed = 10 }}\n\
         [[agents]]\nname = \"poller\"\nscript = [\n",
        below(&mut rng, 2)
    );
    for _ in 0..polls {
        let read = cells(&mut rng);
        s.push_str(&format!("  {{ do = \"read\", cells = {read} }},\n"));
        s.push_str("  { do = \"write\", cells = [] },\n");
    }
    s.push_str("]\n");
    for agent in 0..others {
        s.push_str(&format!("[[agents]]\nname = \"a{agent}\"\nscript = [\n"));
        for _ in 0..ops {
            let read = cells(&mut rng);
            s.push_str(&format!("  {{ do = \"read\", cells = {read} }},\n"));
            if below(&mut rng, 2) == 0 {
                s.push_str("  { do = \"generate\", latency_ms = { fixed = 100 } },\n");
            }
            let write = cells(&mut rng);
            s.push_str(&format!("  {{ do = \"write\", cells = {write} }},\n"));
        }
        if others > 1 && below(&mut rng, 3) == 0 {
            let target = (agent + 1) % others;
            s.push_str(&format!(
                "  {{ do = \"retract\", agent = \"a{target}\", prob = 0.5 }},\n"
            ));
        }
        s.push_str("]\n");
    }
    Scenario::parse(&PathBuf::from(format!("polls-{seed}.toml")), &s)
        .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
}

/// With a poller, under every named runtime: the reduced search, which takes a poll's
/// commit and another agent's begin as one trace in either order, reaches the anomaly sets
/// and (normalised) final histories the plain search does.
#[test]
fn polls_reduced_and_plain_agree() {
    let (mut compared, mut polls_fewer) = (0, 0);
    for seed in 0..4 {
        let sc = polls(300 + seed, 1, 2, 1);
        for kind in RuntimeKind::ALL {
            let what = format!("polls {seed} under {}", kind.name());
            if let Some((reduced, plain)) = agree(&sc, kind, 20 * PLAIN_MAX, &what) {
                compared += 1;
                polls_fewer += u32::from(reduced.schedules < plain.schedules);
            }
        }
    }
    assert!(compared >= 18, "enough members finished plain: {compared}");
    assert!(
        polls_fewer >= 9,
        "the reduction cuts something: {polls_fewer}"
    );
}

/// The plain search's budget in [`reduced_and_plain_agree`]: members whose plain tree is
/// larger are skipped (and counted), so the test stays within seconds.
const PLAIN_MAX: u64 = 3000;

/// Follows `prefix` (alternatives at the first choice points), then runs the agents of
/// `forced` in that order, then takes alternative 0 everywhere; records what it saw.
struct Forced {
    prefix: Vec<usize>,
    forced: Vec<usize>,
    cursor: usize,
    /// The first agent choice point past the prefix: (enabled, footprints, accesses).
    /// Forcing starts there (a step taken before it, by the only enabled agent, is not a
    /// forced one).
    seen: Option<(Vec<usize>, Vec<Footprint>, Vec<Access>)>,
}

impl Chooser for Forced {
    fn start(&mut self) {
        self.cursor = 0;
        self.seen = None;
    }

    fn pick(&mut self, p: &ChoicePoint<'_>) -> usize {
        let i = self.cursor;
        self.cursor += 1;
        if i < self.prefix.len() {
            return self.prefix[i].min(p.n - 1);
        }
        if p.kind != ChoiceKind::Agent {
            return 0;
        }
        if self.seen.is_none() {
            self.seen = Some((p.enabled.to_vec(), p.next.to_vec(), p.access.to_vec()));
        }
        match self.forced.first() {
            Some(a) => p
                .enabled
                .iter()
                .position(|e| e == a)
                .expect("a forced agent stays enabled"),
            None => 0,
        }
    }

    fn stepped(&mut self, agent: usize, _footprint: Footprint) {
        if self.seen.is_some() && self.forced.first() == Some(&agent) {
            self.forced.remove(0);
        }
    }

    fn steps_per_agent(&self) -> Option<u64> {
        Some(STEPS_PER_AGENT_DEFAULT)
    }
}

impl Scheduler for Forced {
    fn start_trial(&mut self, _: u64, _: usize, _: usize) {}
    fn choose(&mut self, _: u64, _: &[usize]) -> usize {
        unreachable!("abstract time only")
    }
    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        Some(self)
    }
}

fn run_forced(sc: &Scenario, rt: Stack, f: &mut Forced) -> TrialRun {
    let generator = generator(sc, None);
    let setup = TrialSetup {
        scenario: sc,
        trial_seed: trial_seed(sc.seed, 0),
        generator: generator.as_ref(),
        scheduler: f,
        stop: None,
        trace: false,
        record: false,
    };
    run_trial_in(
        rt.build(sc.registry(), sc.provenance),
        setup,
        &mut Pool::default(),
    )
    .unwrap()
}

/// Runs both orders of every pair of enabled steps of different agents that `independent`
/// declares independent, on random engine states (scenarios of the family, every named
/// runtime in turn, random prefixes of choices), each followed by the same deterministic
/// continuation, on the generated family and, as many trials again, on scenarios with a
/// poller; returns how many pairs were run under each runtime and the pairs whose final
/// histories differ. The histories are compared record by record, normalised (a read time
/// counts only the records that write a cell): no two steps that append records are
/// declared independent, so record indices never legitimately differ, but a begin and a
/// cell-free commit are, and their orders differ in the begin's read time alone.
fn commute_check(
    independent: impl Fn(&Access, &Access) -> bool,
    trials: u64,
) -> (BTreeMap<&'static str, u64>, Vec<String>) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut checked = BTreeMap::new();
    let mut failures = Vec::new();
    for trial in 0..2 * trials {
        let sc = if trial < trials {
            family(100 + trial % 40, 2)
        } else {
            polls(200 + trial % 60, 3, 2, 2)
        };
        let kind = RuntimeKind::ALL[trial as usize % RuntimeKind::ALL.len()];
        let rt = stack(kind.name());
        let prefix: Vec<usize> = (0..below(&mut rng, 8))
            .map(|_| below(&mut rng, 3))
            .collect();
        let mut probe = Forced {
            prefix: prefix.clone(),
            forced: Vec::new(),
            cursor: 0,
            seen: None,
        };
        run_forced(&sc, rt, &mut probe);
        let Some((enabled, next, access)) = probe.seen else {
            continue;
        };
        for (i, &a) in enabled.iter().enumerate() {
            for (j, &b) in enabled.iter().enumerate() {
                if a >= b || !independent(&access[i], &access[j]) {
                    continue;
                }
                if super::independent(next[i], next[j]) {
                    assert!(
                        !access[i].conflicts(&access[j]),
                        "the access relation refines the footprint one"
                    );
                }
                let mut ab = Forced {
                    prefix: prefix.clone(),
                    forced: vec![a, b],
                    cursor: 0,
                    seen: None,
                };
                let mut ba = Forced {
                    forced: vec![b, a],
                    ..ab.clone_fresh()
                };
                let x = run_forced(&sc, rt, &mut ab);
                let y = run_forced(&sc, rt, &mut ba);
                *checked.entry(kind.name()).or_insert(0) += 1;
                let normal = |r: &[agentsim_models::record::OpRecord]| {
                    format!("{:?}", super::reduction::normalised(r))
                };
                if normal(&x.records) != normal(&y.records) {
                    failures.push(format!(
                        "{} under {}: prefix {prefix:?}, agents {a} ({:?}) and {b} ({:?})",
                        sc.name,
                        kind.name(),
                        access[i],
                        access[j]
                    ));
                }
            }
        }
    }
    (checked, failures)
}

/// Every pair the relation declares independent commutes in the engine, under every named
/// runtime, on random states.
#[test]
fn independent_steps_commute() {
    let (checked, failures) = commute_check(|a, b| !a.conflicts(b), 800);
    assert!(failures.is_empty(), "{failures:#?}");
    for kind in RuntimeKind::ALL {
        let n = checked.get(kind.name()).copied().unwrap_or(0);
        assert!(
            n >= 10,
            "enough independent pairs under {}: {n}",
            kind.name()
        );
    }
}

/// The commute check can fail: a relation that also declares two commits independent (even
/// on one cell) is caught on the same random states.
#[test]
fn a_wrong_relation_fails_the_commute_check() {
    let wrong = |a: &Access, b: &Access| {
        !a.conflicts(b)
            || (a.store == Use::Write && b.store == Use::Write && a.registry == b.registry)
    };
    let (_, failures) = commute_check(wrong, 800);
    assert!(!failures.is_empty(), "two commits do not commute");
}

impl Forced {
    fn clone_fresh(&self) -> Forced {
        Forced {
            prefix: self.prefix.clone(),
            forced: self.forced.clone(),
            cursor: 0,
            seen: None,
        }
    }
}

/// Budgets stop the search and say so; the verdicts are then cannot tell where nothing was
/// found.
#[test]
fn a_schedule_budget_gives_cannot_tell() {
    let sc = example("stale-review-ssi.toml");
    let mut cfg = ExploreConfig::new(sc.runtime);
    cfg.max_schedules = Some(2);
    let ex = explore(&sc, &cfg).unwrap();
    assert!(!ex.complete);
    assert_eq!(ex.stopped, Some(Stopped::Schedules));
    assert_eq!(ex.schedules, 2);
    assert_eq!(ex.finding(Anomaly::A1).unwrap().reach, Reach::CannotTell);
}

/// The same result whatever the number of threads.
#[test]
fn threads_change_nothing() {
    let sc = family(3, 2);
    let one = explore(&sc, &ExploreConfig::new(stack("vanilla"))).unwrap();
    let mut cfg = ExploreConfig::new(stack("vanilla"));
    cfg.threads = 3;
    let three = explore(&sc, &cfg).unwrap();
    assert_eq!(one.schedules, three.schedules);
    assert_eq!(one.classes, three.classes);
    assert_eq!(one.sets, three.sets);
}

/// Begins that only read commute: two agents that each read `x` and write a cell of their
/// own have four traces (the order of the two commits, and whether the later-committing
/// agent begins before or after the other's commit), which the reduced search runs once each
/// while the plain one runs all 20 interleavings of their six steps; under a `lock` stack
/// both begins take `x`'s lock, so their order matters too.
#[test]
fn commuting_begins_are_one_trace() {
    let mut s = String::from(
        "name = \"readers\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
         cells = [\"x\", \"y0\", \"y1\"]\n",
    );
    for a in 0..2 {
        s.push_str(&format!(
            "[[agents]]\nname = \"r{a}\"\nscript = [\n  {{ do = \"read\", cells = [\"x\"] }},\n  \
             {{ do = \"write\", cells = [\"y{a}\"] }},\n]\n"
        ));
    }
    let sc = Scenario::parse(&PathBuf::from("readers.toml"), &s).unwrap();
    let mut cfg = ExploreConfig::new(stack("vanilla"));
    let reduced = explore(&sc, &cfg).unwrap();
    cfg.search = Search::Plain;
    let plain = explore(&sc, &cfg).unwrap();
    assert_eq!((reduced.schedules, reduced.classes), (4, 4));
    assert_eq!((plain.schedules, plain.classes), (20, 4));
    let mut cfg = ExploreConfig::new(stack("pessimistic"));
    let reduced = explore(&sc, &cfg).unwrap();
    cfg.search = Search::Plain;
    let plain = explore(&sc, &cfg).unwrap();
    assert_eq!(reduced.classes, plain.classes);
    assert_eq!(reduced.sets, plain.sets);
    assert!(reduced.schedules < plain.schedules);
}
