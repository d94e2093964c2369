//! Polling loops, parked.
//!
//! A polling loop (`branch` back to an earlier label: triage's triager polls `ticket` until
//! it is not null) spins forever on the paths where nothing it reads changes, so without more
//! every agent needs a step budget and verdicts hold only within it. Following GenMC's
//! spin-assume / await transformation (Kokologiannakis, Ren and Vafeiadis, "Effective lock
//! handling in stateless model checking", OOPSLA 2019: a failed spin iteration with no side
//! effect is a blocked thread), the engine *parks* an agent (see `engine::spin` for the
//! bookkeeping): at a taken backward branch, when the iteration just finished was *clean* —
//! no step of it wrote the store or the registry, no drop, abort or retry happened anywhere
//! while it ran (the engine bumps a global epoch on any of those, and a cell's version on a
//! commit that writes it), it took no data choice, it ended with no operation open, and no
//! cell its begins read was written since it started — and the iteration before it was clean
//! too, from the same local state (label, repetition, retry count, last read values) over the
//! same versions. Then the next iteration would repeat it exactly; the agent is not enabled
//! until a version it read (or the epoch) moves. A path on which only parked agents are left
//! ends there ("spinning": each further iteration would be another repeat).
//!
//! # Why no anomaly set is lost
//!
//! Take any path P of the search without parking. If an agent runs a step while it would be
//! parked, let `b_k` be the first backward branch that parks it on P and after which it steps
//! before a wake; iterations `k-1` and `k` (ending at `b_{k-1}` and `b_k`) are clean, start
//! from one local state and read one set of versions, so nothing that changes what a begin
//! reads or what a commit decides happened between `b_{k-1}` and the agent's next step.
//! Delete iteration `k`'s steps: the agent is at `b_{k-1}`'s state, which is `b_k`'s, and
//! (`k` being the first) not parked there, so the rest of P runs the same steps to the same
//! states — every step of iteration `k` was a begin or a local step or a commit of no cell,
//! none of which another agent's step can observe except through its read time (the
//! reduction's own argument for a begin and a cell-free commit) or through a lock (a drop or
//! an abort, which would have bumped the epoch and made it unclean). Repeating gives a path
//! of the parked search that differs from P only by deleted clean iterations. Each deleted
//! iteration's records are cell-free commits whose reads saw no write before their commit (no
//! A1 as the stale reader, none as the writer: they write nothing), with the registry
//! unchanged (no A2), no effects (no A6), and the same reads, values and predecessors as
//! iteration `k-1`'s records, which the parked path keeps (so the same A3, in the pred form
//! and the residue form); nobody reads from them. So P's history exhibits the anomaly set of
//! the parked path's history. Conversely every parked path is a path without parking, and a
//! spinning one extends, by repeats of the last clean iteration until the budget, to paths
//! with its anomaly set. The test `parked_and_spinning_reach_the_same_sets` checks this on a
//! generated family of polling loops under every named runtime without locks, both searches
//! at one budget: the same sets on the paths where every agent finished, and the same sets
//! where the parked search cut nothing. A parked search can still be cut where aborts or
//! retractions keep interleaving a poll (each moves the epoch, so no iteration repeats), so
//! a verdict says "within N steps per agent" whenever a path was cut, as before.
//!
//! An iteration that begins, then sees another agent's write before its commit, is not clean:
//! it is explored like any other, and the write that bumps what it read wakes a parked agent.
//!
//! # Runtimes
//!
//! What a poll's begin does to others is what the argument rests on. Under every stack
//! without locks a clean iteration leaves the store as it found it except for cell-free
//! records (validation, provenance, cascades, the sequencer and the registry disciplines look
//! only at records that write a cell, or at the committing operation's own reads). Under a
//! `lock` stack (`pessimistic`, or any stack with `lock`) a poll's begin takes the read cells'
//! locks, so a poll has an effect on others (their begins are dropped and their commits
//! aborted while it holds them), and a poll that is itself dropped is a spin through drops
//! and retries that this bookkeeping counts as an effect. Every such interaction bumps the
//! epoch, which would keep the argument, but the comparison with the spinning search was not
//! carried through there (drop-retry cycles leave the parked search cut at the budget on the
//! generated family, so its sets cannot be compared with the spinning search's): parking is
//! off under `lock` stacks, and the report says `parking off`. It is off for a timed search
//! too (an iteration takes time there, and the order of time matters). The test
//! `no_parking_under_locks` pins this: it fails if a `lock` stack's search changes when parking
//! is asked for.
//!
//! # Reduction
//!
//! The backward branch that parks an agent stays a local step: with a write to what the
//! iteration read, both orders end in one state (parked then woken, or never parked). A parked
//! agent is not enabled, so at an agent choice point the walker records who is parked, and a
//! race between a step and a parked agent's later step is not reversed unless a write between
//! them, not ordered after the first, could have woken it first (the race with the write that
//! wakes it is not reversible: the poll is not enabled before it). The first step after a wake
//! is taken as a read of the store and the registry, so it is ordered after the write that woke
//! it. `--no-reduction` parks too; `--no-park` turns parking off.

use super::ExploreConfig;
use crate::scenario::Scenario;
use agentsim_models::runtime::Mechanism;

/// Whether the walker parks polling loops under `cfg`: asked for, untimed, and not under a
/// `lock` stack (see "Runtimes").
pub(super) fn parks(cfg: &ExploreConfig<'_>) -> bool {
    cfg.park && cfg.search.timed().is_none() && !cfg.runtime.contains(Mechanism::Lock)
}

/// Whether `sc`'s polling loops are parked under `cfg` (`None`: it has none).
pub(super) fn parking(sc: &Scenario, cfg: &ExploreConfig<'_>) -> Option<bool> {
    crate::engine::polling_loops(sc).then(|| parks(cfg))
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::dist::below;
    use agentsim_models::runtime::{Mechanism, RuntimeKind};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::path::PathBuf;

    /// A generated scenario with polling loops: a poller that polls `x` (maybe with `y`, maybe
    /// behind a `wait`) until it is not null, then maybe reads it and writes `y`; maybe a
    /// second poller of `y`; one or two writers of one operation each (which may never write
    /// `x`, so the poller may spin for ever); maybe a supervisor who retracts a writer's
    /// records or an admin who changes the registry.
    pub(in crate::explore) fn loops(seed: u64) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cells = |rng: &mut ChaCha8Rng| match below(rng, 3) {
            0 => "[\"x\"]",
            1 => "[\"y\"]",
            _ => "[\"x\", \"y\"]",
        };
        let mut s = format!(
            "name = \"loops-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
             cells = [\"x\", \"y\"]\ntools = [\"t\"]\n[retry]\nmax = {}\n\
             backoff_ms = {{ fixed = 10 }}\n",
            below(&mut rng, 2)
        );
        let poller = |rng: &mut ChaCha8Rng, name: &str, cell: &str, s: &mut String| {
            s.push_str(&format!("[[agents]]\nname = \"{name}\"\nscript = [\n"));
            let read = if below(rng, 2) == 0 {
                format!("[\"{cell}\"]")
            } else {
                "[\"x\", \"y\"]".to_owned()
            };
            if below(rng, 2) == 0 {
                s.push_str("  { do = \"wait\", latency_ms = { fixed = 5 }, label = \"look\" },\n");
                s.push_str(&format!("  {{ do = \"read\", cells = {read} }},\n"));
            } else {
                s.push_str(&format!(
                    "  {{ do = \"read\", cells = {read}, label = \"look\" }},\n"
                ));
            }
            s.push_str("  { do = \"write\", cells = [] },\n");
            s.push_str(&format!(
                "  {{ do = \"branch\", cell = \"{cell}\", when = \"null\", goto = \"look\" }},\n"
            ));
            if below(rng, 2) == 0 {
                let write = if cell == "x" { "y" } else { "x" };
                s.push_str(&format!(
                    "  {{ do = \"read\", cells = [\"{cell}\"] }},\n  \
                     {{ do = \"write\", cells = [\"{write}\"] }},\n"
                ));
            }
            s.push_str("]\n");
        };
        poller(&mut rng, "poller", "x", &mut s);
        if below(&mut rng, 3) == 0 {
            poller(&mut rng, "second", "y", &mut s);
        }
        let writers = 1 + below(&mut rng, 2);
        for w in 0..writers {
            let read = cells(&mut rng);
            let write = cells(&mut rng);
            s.push_str(&format!(
                "[[agents]]\nname = \"w{w}\"\nscript = [\n  {{ do = \"read\", cells = {read} }},\n  \
                 {{ do = \"write\", cells = {write} }},\n]\n"
            ));
        }
        match below(&mut rng, 4) {
            0 => s.push_str(
                "[[agents]]\nname = \"supervisor\"\nscript = [\n  { do = \"retract\", \
                 agent = \"w0\", prob = 0.5 },\n]\n",
            ),
            1 => s.push_str(
                "[[agents]]\nname = \"admin\"\nscript = [\n  { do = \"registry\", \
                 change = \"remove\", tool = \"t\", prob = 0.5 },\n]\n",
            ),
            _ => {}
        }
        Scenario::parse(&PathBuf::from(format!("loops-{seed}.toml")), &s)
            .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
    }

    /// A small polling scenario the plain search finishes: a poller of `x` (maybe reading
    /// `y` too, maybe behind a `wait`) and a writer of one operation (of `x` or `y`), maybe a
    /// supervisor who retracts the writer's records.
    fn tiny(seed: u64) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let read = ["[\"x\"]", "[\"x\", \"y\"]"][below(&mut rng, 2)];
        let head = if below(&mut rng, 2) == 0 {
            format!(
                "  {{ do = \"wait\", latency_ms = {{ fixed = 5 }}, label = \"look\" }},\n  \
                 {{ do = \"read\", cells = {read} }},\n"
            )
        } else {
            format!("  {{ do = \"read\", cells = {read}, label = \"look\" }},\n")
        };
        let write = ["[\"x\"]", "[\"y\"]"][below(&mut rng, 2)];
        let wread = ["[]", "[\"x\"]", "[\"y\"]"][below(&mut rng, 3)];
        let mut s = format!(
            "name = \"tiny-{seed}\"\nruntime = \"vanilla\"\ntrials = 1\nseed = 1\n\
             cells = [\"x\", \"y\"]\n[retry]\nmax = {}\nbackoff_ms = {{ fixed = 10 }}\n\
             [[agents]]\nname = \"poller\"\nscript = [\n{head}  {{ do = \"write\", cells = [] }},\n  \
             {{ do = \"branch\", cell = \"x\", when = \"null\", goto = \"look\" }},\n]\n\
             [[agents]]\nname = \"w0\"\nscript = [\n  {{ do = \"read\", cells = {wread} }},\n  \
             {{ do = \"write\", cells = {write} }},\n]\n",
            below(&mut rng, 2)
        );
        if below(&mut rng, 3) == 0 {
            s.push_str(
                "[[agents]]\nname = \"supervisor\"\nscript = [\n  { do = \"retract\", \
                 agent = \"w0\", prob = 0.5 },\n]\n",
            );
        }
        Scenario::parse(&PathBuf::from(format!("tiny-{seed}.toml")), &s)
            .unwrap_or_else(|e| panic!("generated scenario {seed} loads: {e}\n{s}"))
    }

    /// The budget of both searches.
    const SPIN_STEPS: u64 = 16;

    /// Parking on against parking off (the spinning search), both at [`SPIN_STEPS`] per
    /// agent, on the polling family under every named runtime without locks: the same anomaly
    /// sets on the paths where every agent finished; every set the parked search reaches is
    /// reached without parking; and where the parked search cut nothing (most members), the
    /// same anomaly sets.
    #[test]
    fn parked_and_spinning_reach_the_same_sets() {
        let (mut compared, mut fewer, mut spinning, mut uncut) = (0, 0, 0, 0);
        for seed in 0..16 {
            let sc = loops(400 + seed);
            for kind in RuntimeKind::ALL {
                let what = format!("loops {seed} under {}", kind.name());
                let rt = Stack::parse(kind.name()).unwrap();
                if rt.contains(Mechanism::Lock) {
                    continue;
                }
                let mut cfg = ExploreConfig::new(rt);
                cfg.steps_per_agent = SPIN_STEPS;
                cfg.keep_histories = true;
                let on = explore(&sc, &cfg).unwrap();
                assert_eq!(on.parking, Some(true), "{what}");
                assert!(on.stopped.is_none(), "{what}");
                cfg.park = false;
                cfg.max_schedules = Some(20_000);
                let off = explore(&sc, &cfg).unwrap();
                eprintln!(
                    "{what}: on {} ({} spinning), off {} ({} cut, complete {})",
                    on.schedules, on.spinning, off.schedules, off.budget_cut, off.complete
                );
                assert_eq!(off.parking, Some(false), "{what}");
                if off.stopped.is_some() {
                    continue;
                }
                compared += 1;
                fewer += u32::from(on.schedules < off.schedules);
                spinning += u32::from(on.spinning > 0);
                // At one budget, a finished path without parking is a finished parked path
                // with repeats deleted, and a parked path is a path without parking.
                assert_eq!(on.finished, off.finished, "{what}");
                let sets = |e: &Exploration| e.sets.keys().cloned().collect::<Vec<_>>();
                if on.budget_cut == 0 {
                    uncut += 1;
                    assert_eq!(sets(&on), sets(&off), "{what}");
                } else {
                    // Iterations an abort or a retraction interleaves are not repeats, so a
                    // tight budget can still cut a parked path; its set is still reached.
                    let off_sets = sets(&off);
                    for k in sets(&on) {
                        assert!(off_sets.contains(&k), "{what}: {k:?}");
                    }
                }
            }
        }
        assert!(
            compared >= 50,
            "enough members finished unparked: {compared}"
        );
        assert!(fewer >= 25, "parking cuts repeats: {fewer}");
        assert!(spinning >= 10, "some members end spinning: {spinning}");
        assert!(uncut >= 25, "most parked searches cut nothing: {uncut}");
    }

    /// Under a `lock` stack parking is off: asking for it changes nothing (the same counts,
    /// sets and verdicts as `--no-park`), and the report says so.
    #[test]
    fn no_parking_under_locks() {
        for seed in 0..4 {
            let sc = loops(400 + seed);
            for name in ["pessimistic", "lock+validate"] {
                let what = format!("loops {seed} under {name}");
                let mut cfg = ExploreConfig::new(Stack::parse(name).unwrap());
                cfg.steps_per_agent = 12;
                cfg.max_schedules = Some(20_000);
                let asked = explore(&sc, &cfg).unwrap();
                cfg.park = false;
                let off = explore(&sc, &cfg).unwrap();
                assert_eq!(asked.parking, Some(false), "{what}");
                assert_eq!(asked.spinning, 0, "{what}");
                assert_eq!(
                    (asked.schedules, asked.budget_cut, &asked.sets),
                    (off.schedules, off.budget_cut, &off.sets),
                    "{what}"
                );
            }
        }
    }

    /// With parking, the reduced and the plain search still agree (anomaly sets, normalised
    /// final histories; every reduced schedule a class of its own, and no more classes than
    /// the plain search counts), under every named runtime, at a budget that keeps the plain
    /// search small.
    #[test]
    fn parked_reduced_and_plain_agree() {
        let mut compared = 0;
        for seed in 0..12 {
            let sc = tiny(500 + seed);
            for kind in RuntimeKind::ALL {
                let what = format!("loops {seed} under {}", kind.name());
                let mut cfg = ExploreConfig::new(Stack::parse(kind.name()).unwrap());
                cfg.steps_per_agent = 12;
                cfg.keep_histories = true;
                cfg.max_schedules = Some(20_000);
                let reduced = explore(&sc, &cfg).unwrap();
                cfg.search = Search::Plain;
                let plain = explore(&sc, &cfg).unwrap();
                if reduced.stopped.is_some() || plain.stopped.is_some() {
                    continue;
                }
                compared += 1;
                let sets = |e: &Exploration| e.sets.keys().cloned().collect::<Vec<_>>();
                assert_eq!(sets(&reduced), sets(&plain), "{what}");
                assert_eq!(reduced.histories, plain.histories, "{what}");
                // The plain search may count one trace twice: a write before or after the
                // branch that would park the poller ends in one state, but only the order that
                // parked it marks the poller's next step as the read that woke it.
                assert!(reduced.classes <= plain.classes, "{what}");
                assert_eq!(reduced.classes, reduced.schedules, "{what}");
                assert_eq!(reduced.spinning > 0, plain.spinning > 0, "{what}");
            }
        }
        assert!(compared >= 48, "enough members finished plain: {compared}");
        eprintln!("compared {compared}");
    }
}
