//! Symmetry over `count` copies: the copies of one `[[agents]]` entry are interchangeable
//! until they start, so the search starts them in index order only.
//!
//! # The symmetry
//!
//! `count = k` makes k agents `base.1 … base.k` that share one resolved script (one `Arc`:
//! the same cells, tools, latencies; a script cannot name its own copy, a `retract` names a
//! base and so every copy of it), one `repeat` and one `mcp_client`. Two such copies `i < j`
//! are **interchangeable at a state** when neither has taken a step on the path so far. The
//! swap σ of `i` and `j` then fixes the state: neither has a program counter past 0, an
//! operation in flight, a record in the log, a lock, an MCP client's list or a step counted
//! against the budget, and nothing else the engine or a runtime keeps is keyed by agent
//! index in a way that decides anything (the lock table has one holder per cell; retraction,
//! validation, cascades and the sequencer go by log position; in abstract time the enabled
//! set is every agent with a pending event, start times included, and no history depends on
//! the trial stream's draws, see `crate::scheduler::chooser`). So σ maps every path from the
//! state to a path from it, with the same choice points permuted, and each step's access to
//! the access of σ's step (accesses never name an agent): the subtree after choosing `j` is
//! the σ-image of the subtree after choosing `i`. The image of a history renames `i` and `j`
//! and the stub values each wrote (a value is a digest over the writer's name: σ maps them
//! one to one, up to a 2^-30 collision). The detectors compare agents and values only for
//! equality, so a history and its image have one anomaly set.
//!
//! What breaks the symmetry, and so turns it off: a recorded generator (its lines are keyed
//! by the copy's name, so copies may generate different outputs), timed exploration (start
//! times and latencies decide the orders; the search there is the plain enumeration) and
//! `--no-reduction` (which stays the plain enumeration of every interleaving).
//!
//! # The search
//!
//! At every agent choice point the walker offers only the **canonical** enabled agents: an
//! agent that has stepped, or the lowest-indexed unstarted copy of its class (its
//! interchangeable copies). Sorting each class's copies by their first step maps every path
//! to one that starts copies in index order, so nothing is lost up to renaming copies. With
//! source-DPOR and sleep sets ([`super::reduction`]), each rule and why it keeps every
//! trace up to renaming (`s` the state at the choice point, `j` an unstarted non-canonical
//! copy there, `i` the canonical one of its class):
//!
//! - *A new choice point never takes `j`.* Every path from `s` starting with `j` is σ of one
//!   starting with `i`.
//! - *A race asking for `j` at `s` asks for `i` instead.* σ of the reversal `j·w` is `i·σ(w)`,
//!   a path from `s` with `i` as an initial.
//! - *Nothing more when `i` is in the backtrack set already (done or to do).* The subtree
//!   after `i` covers `i·σ(w)`.
//! - *Nothing when `i` is asleep at `s`.* The sleep set's invariant: every trace from `s`
//!   that starts with `i` is explored on an earlier branch, so `i·σ(w)` is.
//! - *A path whose only canonical agents left are asleep is redundant.* The agents left
//!   awake are unstarted non-canonical copies, whose paths are σ of the sleeping canonical
//!   ones' (as for a path blocked by the sleep set alone).
//! - *A split's fixed frame offers canonical agents only, and only canonical earlier
//!   alternatives go to sleep there.* The fixed frames prune as the walker does (a folded
//!   copy was explored in no task), so threads and shards run the same paths.
//!
//! Each rule applies at one state with one σ that fixes it; along a path the renamings
//! compose into one permutation of copies, under which anomaly sets are invariant. This is a
//! proof sketch, not a mechanised proof: the test `symmetry_keeps_every_history` runs a
//! generated family with copies under every named runtime with symmetry on and off and
//! compares the anomaly sets and the final histories up to renaming.
//!
//! Counts (`schedules`, `classes`) are then counts up to renaming copies: a class and its
//! image are one. A scenario without `count` has no copies to fold: nothing changes.

use crate::generator::stub::STUB_VALUE_BASE;
use crate::scenario::{GeneratorSpec, Scenario};
use agentsim_models::names::{Agent, Value};
use agentsim_models::record::OpRecord;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Whether `sc` has interchangeable copies for symmetry to fold (with none, the counts with
/// and without symmetry are the same).
pub fn has_copies(sc: &Scenario) -> bool {
    Copies::of(sc).any
}

/// The classes of interchangeable copies of a scenario's agents.
#[derive(Clone, Debug, Default)]
pub(super) struct Copies {
    /// For each agent, the lowest index of its class (itself when it has no copy).
    class: Vec<usize>,
    /// Some class has two copies or more.
    any: bool,
}

impl Copies {
    /// The copies of `sc` that are interchangeable: one `[[agents]]` entry's, with one
    /// script, repeat and MCP client; none under a recorded generator or with `[cpl]`.
    pub(super) fn of(sc: &Scenario) -> Copies {
        let n = sc.agents.len();
        let mut class: Vec<usize> = (0..n).collect();
        let symmetric = matches!(sc.generator, GeneratorSpec::Stub) && sc.cpl.is_none();
        if symmetric {
            for b in 0..n {
                let y = &sc.agents[b];
                if let Some(a) = (0..b).find(|&a| {
                    let x = &sc.agents[a];
                    class[a] == a
                        && x.base == y.base
                        && Arc::ptr_eq(&x.script, &y.script)
                        && x.repeat == y.repeat
                        && x.mcp_client == y.mcp_client
                }) {
                    class[b] = a;
                }
            }
        }
        let any = class.iter().enumerate().any(|(a, &c)| c != a);
        Copies { class, any }
    }

    /// No symmetry (every agent its own class).
    pub(super) fn none() -> Copies {
        Copies::default()
    }

    /// The agents there are classes for.
    pub(super) fn agents(&self) -> usize {
        self.class.len()
    }

    /// The agent the search takes for `a` at a state where `started(b)` says whether agent
    /// `b` has stepped: `a` if it has, else the lowest unstarted copy of its class.
    pub(super) fn canonical(&self, a: usize, started: impl Fn(usize) -> bool) -> usize {
        if !self.any || a >= self.class.len() || started(a) {
            return a;
        }
        let c = self.class[a];
        (c..a)
            .find(|&b| self.class[b] == c && !started(b))
            .unwrap_or(a)
    }

    /// The digest of a final history: raw when there are no copies, else up to renaming
    /// copies (each class's copies numbered by their first record) and the stub values
    /// (numbered by first appearance), so a history and its image under a permutation of
    /// copies have one digest.
    pub(super) fn history_digest(&self, records: &[OpRecord]) -> u64 {
        if !self.any {
            return crate::digest::fnv1a64(format!("{records:?}").as_bytes());
        }
        let mut agents: BTreeMap<usize, usize> = BTreeMap::new();
        let mut rank = vec![0usize; self.class.len()];
        let mut values: BTreeMap<Value, u32> = BTreeMap::new();
        for r in records {
            let a = r.agent.0 as usize;
            if a < self.class.len() && !agents.contains_key(&a) {
                let c = self.class[a];
                // The k-th copy of class c to appear becomes the k-th copy by index.
                let k = rank[c];
                rank[c] += 1;
                let to = (c..self.class.len())
                    .filter(|&b| self.class[b] == c)
                    .nth(k)
                    .unwrap_or(a);
                agents.insert(a, to);
            }
            let seen = r
                .read_values
                .entries()
                .iter()
                .chain(r.write_values.entries());
            for &(_, v) in seen.chain(&r.io).chain(&r.co) {
                if v.0 >= STUB_VALUE_BASE && !values.contains_key(&v) {
                    values.insert(v, STUB_VALUE_BASE + values.len() as u32);
                }
            }
        }
        let value = |v: Value| values.get(&v).map_or(v, |&w| Value(w));
        let canonical: Vec<OpRecord> = records
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let a = r.agent.0 as usize;
                r.agent = Agent(agents.get(&a).map_or(a, |&b| b) as u32);
                r.read_values.rename(|c| c, value);
                r.write_values.rename(|c| c, value);
                for (_, v) in r.io.iter_mut().chain(r.co.iter_mut()) {
                    *v = value(*v);
                }
                r
            })
            .collect();
        crate::digest::fnv1a64(format!("{canonical:?}").as_bytes())
    }
}

#[cfg(test)]
impl Copies {
    /// Copies as given (for tests that fold agents that are not copies).
    pub(super) fn from_classes(class: Vec<usize>) -> Copies {
        let any = class.iter().enumerate().any(|(a, &c)| c != a);
        Copies { class, any }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{family, replays_to};
    use super::super::*;
    use super::Copies;
    use crate::dist::below;
    use crate::generator::stub::STUB_VALUE_BASE;
    use agentsim_models::names::{Agent, Cell, Value};
    use agentsim_models::record::{OpRecord, ValueMap};
    use agentsim_models::runtime::RuntimeKind;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::path::{Path, PathBuf};

    /// A small scenario with copies: an entry of 2 or 3 copies and one of 1 or 2 (4 agents at
    /// most), each copy one operation over two cells (reads that may plan a tool, a
    /// generation or not, writes of one or two effects), and with 3 agents maybe an admin who
    /// removes the tool or a supervisor who retracts the first entry's latest record, each
    /// with a `prob` of 0.5.
    fn member(seed: u64) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cells = |rng: &mut ChaCha8Rng| ["[\"x\"]", "[\"y\"]", "[\"x\", \"y\"]"][below(rng, 3)];
        let mut s = String::from(
            "name = \"copies\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
             cells = [\"x\", \"y\"]\ntools = [\"t\"]\n",
        );
        let c = 2 + seed % 2;
        let counts = [c, if c == 2 { 1 + seed / 2 % 2 } else { 1 }];
        for (name, count) in ["c", "d"].into_iter().zip(counts) {
            let tool = ["", ", tool = \"t\""][below(&mut rng, 2)];
            let generate = [
                "",
                "  { do = \"generate\", latency_ms = { fixed = 100 } },\n",
            ][below(&mut rng, 2)];
            s.push_str(&format!(
                "[[agents]]\nname = \"{name}\"\ncount = {count}\nscript = [\n  \
                 {{ do = \"read\", cells = {}{tool} }},\n{generate}  \
                 {{ do = \"write\", cells = {} }},\n]\n",
                cells(&mut rng),
                cells(&mut rng)
            ));
        }
        match below(&mut rng, 3) {
            _ if counts[0] + counts[1] > 3 => {}
            0 => s.push_str(
                "[[agents]]\nname = \"admin\"\nscript = [\n  { do = \"registry\", \
                 change = \"remove\", tool = \"t\", prob = 0.5 },\n]\n",
            ),
            1 => s.push_str(
                "[[agents]]\nname = \"supervisor\"\nscript = [\n  { do = \"retract\", \
                 agent = \"c\", prob = 0.5 },\n]\n",
            ),
            _ => {}
        }
        Scenario::parse(&PathBuf::from(format!("copies-{seed}.toml")), &s)
            .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
    }

    /// The searches without symmetry that finish within this many schedules are compared.
    const OFF_MAX: u64 = 3_000;
    /// Generated members compared.
    const MEMBERS: u64 = 12;

    /// On the generated family with `count` 2 or 3 under every named runtime, the search with
    /// symmetry and the search without reach the same anomaly sets and the same final
    /// histories up to renaming copies; the one with symmetry never runs more schedules, runs
    /// fewer on most members, and its witnesses replay to their anomalies.
    #[test]
    fn symmetry_keeps_every_history() {
        let (mut compared, mut folded) = (0, 0);
        for seed in 0..MEMBERS {
            let sc = member(seed);
            for kind in RuntimeKind::ALL {
                let mut cfg = ExploreConfig::new(kind.stack());
                cfg.keep_histories = true;
                let on = explore(&sc, &cfg).unwrap();
                cfg.search = Search::Reduced { symmetry: false };
                cfg.max_schedules = Some(OFF_MAX);
                let off = explore(&sc, &cfg).unwrap();
                let what = format!("member {seed} under {}", kind.name());
                assert!(on.complete, "{what}");
                assert!(on.symmetry(), "{what}");
                assert!(!off.symmetry(), "{what}");
                if !off.complete {
                    continue;
                }
                compared += 1;
                let sets = |e: &Exploration| e.sets.keys().cloned().collect::<Vec<_>>();
                assert_eq!(sets(&on), sets(&off), "{what}");
                assert_eq!(on.histories, off.histories, "{what}");
                assert!(on.schedules <= off.schedules, "{what}");
                assert!(on.classes <= off.classes, "{what}");
                folded += usize::from(on.schedules < off.schedules);
                for w in on.sets.values() {
                    if let Some(&a) = w.anomalies.first() {
                        replays_to(&sc, w, a, &what);
                    }
                }
            }
        }
        assert!(
            compared >= 60,
            "enough members finished without symmetry: {compared}"
        );
        assert!(
            folded * 2 > compared,
            "symmetry folds most members: {folded}/{compared}"
        );
    }

    /// Folding two agents that are not copies loses histories on some member: the comparison
    /// above can fail.
    #[test]
    fn folding_agents_that_differ_is_caught() {
        let mut lost = 0;
        for seed in 0..6 {
            let sc = family(seed, 1);
            let cfg = ExploreConfig::new(stack_of("vanilla"));
            let all = histories(&sc, &cfg, Copies::none());
            let mut class: Vec<usize> = (0..sc.agents.len()).collect();
            class[1] = 0;
            let wrong = histories(&sc, &cfg, Copies::from_classes(class));
            assert!(wrong.is_subset(&all), "member {seed}");
            lost += usize::from(wrong.len() < all.len());
        }
        assert!(
            lost >= 3,
            "a wrong fold loses histories: {lost} of 6 members"
        );
    }

    fn stack_of(name: &str) -> Stack {
        Stack::parse(name).expect("named runtime")
    }

    /// The final histories (raw digests: the member has no copies) of one unsplit search.
    fn histories(
        sc: &Scenario,
        cfg: &ExploreConfig<'_>,
        copies: Copies,
    ) -> std::collections::BTreeSet<u64> {
        let mut cfg = cfg.clone();
        cfg.keep_histories = true;
        let mut w = Walker::new(&[], true, cfg.steps_per_agent).with_copies(copies);
        let mut pool = Pool::default();
        let mut found = Found::default();
        loop {
            let run = run_path(sc, &cfg, &mut w, &mut pool, None).unwrap();
            if !w.blocked() {
                record(sc, &cfg, run, &w, &mut found);
            }
            if !w.backtrack() {
                return found.histories;
            }
        }
    }

    fn twin(name: &str) -> Scenario {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/twins")
            .join(name);
        Scenario::load(&p).expect("shipped scenario")
    }

    /// With symmetry the result is the same whatever the threads, and the join of 1, 2 and 3
    /// shards is the one-process exploration, field for field.
    #[test]
    fn threads_and_shards_agree_with_symmetry() {
        for (name, sc) in [
            ("a2-width4", twin("a2-width4.toml")),
            ("a2-mcp-stale", twin("a2-mcp-stale.toml")),
            ("member 5", member(5)),
        ] {
            for kind in [RuntimeKind::ALL[0], RuntimeKind::ALL[5]] {
                let cfg = ExploreConfig::new(kind.stack());
                let one = explore(&sc, &cfg).unwrap();
                assert!(one.complete, "{name}");
                assert!(one.symmetry(), "{name}");
                let mut two = cfg.clone();
                two.threads = 2;
                let two = explore(&sc, &two).unwrap();
                assert_eq!(format!("{one:?}"), format!("{two:?}"), "{name}");
                for n in 1..=3 {
                    let parts: Vec<(String, ShardRun)> = (1..=n)
                        .map(|i| {
                            (
                                format!("shard {i}"),
                                explore_shard(&sc, &cfg, i, n).unwrap(),
                            )
                        })
                        .collect();
                    let joined = merge_shards(&sc, &cfg, &parts).unwrap();
                    assert_eq!(format!("{joined:?}"), format!("{one:?}"), "{name} {n}");
                }
            }
        }
    }

    /// Two copies that read `x` and write `y`: without symmetry the reduced search runs
    /// every trace of the two (which commits first, and whether the second begins before that
    /// commit); with it, only those where copy 1 begins first: both begins then commute, so
    /// "both begin, then either commits" stays two traces, and one serial order is folded.
    #[test]
    fn two_readers_fold_to_the_traces_copy_one_starts() {
        let s = "name = \"readers\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
                 cells = [\"x\", \"y\"]\n[[agents]]\nname = \"r\"\ncount = 2\nscript = [\n  \
                 { do = \"read\", cells = [\"x\"] },\n  { do = \"write\", cells = [\"y\"] },\n]\n";
        let sc = Scenario::parse(&PathBuf::from("readers.toml"), s).unwrap();
        let mut cfg = ExploreConfig::new(stack_of("vanilla"));
        let on = explore(&sc, &cfg).unwrap();
        cfg.search = Search::Reduced { symmetry: false };
        let off = explore(&sc, &cfg).unwrap();
        assert_eq!((on.schedules, on.classes), (3, 3));
        assert_eq!((off.schedules, off.classes), (4, 4));
        assert_eq!(on.sets, off.sets);
    }

    fn record_of(agent: u32, read: &[(u32, u32)], write: &[(u32, u32)]) -> OpRecord {
        let pairs = |p: &[(u32, u32)]| p.iter().map(|&(c, v)| (Cell(c), Value(v))).collect();
        let read: Vec<(Cell, Value)> = pairs(read);
        let write: Vec<(Cell, Value)> = pairs(write);
        OpRecord {
            agent: Agent(agent),
            read_set: read.iter().map(|&(c, _)| c).collect(),
            read_values: ValueMap::from_pairs(read),
            write_set: write.iter().map(|&(c, _)| c).collect(),
            write_values: ValueMap::from_pairs(write.clone()),
            io: write.clone(),
            co: write,
            ..OpRecord::default()
        }
    }

    /// A history and its image under a swap of copies (with the values they wrote renamed)
    /// have one digest; a history that differs otherwise has another.
    #[test]
    fn digests_are_up_to_renaming_copies() {
        let b = STUB_VALUE_BASE;
        let copies = Copies::from_classes(vec![0, 0, 2]);
        let h = [
            record_of(0, &[], &[(0, b + 7)]),
            record_of(1, &[(0, b + 7)], &[(0, b + 3)]),
            record_of(2, &[(0, b + 3)], &[(1, 5)]),
        ];
        let image = [
            record_of(1, &[], &[(0, b + 9)]),
            record_of(0, &[(0, b + 9)], &[(0, b + 1)]),
            record_of(2, &[(0, b + 1)], &[(1, 5)]),
        ];
        assert_eq!(copies.history_digest(&h), copies.history_digest(&image));
        let mut other = image.clone();
        other[2].agent = Agent(0);
        assert_ne!(copies.history_digest(&h), copies.history_digest(&other));
        let mut other = image.clone();
        other[2].write_values = ValueMap::from_pairs([(Cell(1), Value(6))]);
        assert_ne!(copies.history_digest(&h), copies.history_digest(&other));
        // Without copies the digest is the raw one.
        assert_ne!(
            Copies::none().history_digest(&h),
            Copies::none().history_digest(&image)
        );
    }
}
