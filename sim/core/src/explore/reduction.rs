//! Partial-order reduction: the independence relation of engine steps, happens-before over
//! the steps of one path, its races and its Mazurkiewicz trace.
//!
//! # The relation
//!
//! Every step says, before it runs, what it may touch of the state other agents' steps share
//! ([`Access`], computed by the engine from the stepping agent's own state alone, so it stays
//! the same while other agents step). Two steps are **dependent** iff they are steps of one
//! agent, or they touch a common object and one of them writes it. The objects and who uses
//! them, under every runtime:
//!
//! | step                              | store | registry | locks (`lock` stacks only)   |
//! |-----------------------------------|-------|----------|------------------------------|
//! | `read` (begin, admitted or dropped)| read  | read     | write, each listed cell      |
//! | `write`, commit half              | write | read     | write, cells read and issued |
//! | `write`, commit half, no cell     | append| read     | write, cells read            |
//! | `retract` (fired or skipped)      | write | –        | –                            |
//! | `registry` (fired or skipped)     | –     | write    | –                            |
//! | `generate` outside an operation   | –     | read     | –                            |
//! | `generate` inside one, `wait`, `branch`, `write`'s issue half | – | – | –            |
//!
//! The store is one object: a begin takes its read time from the commit clock (the log's
//! length), so a begin and a commit that writes a cell never commute, whatever the cells; a
//! commit appends the next record, so two commits never commute either (their records'
//! indices and write times would swap). A commit that writes no cell (a poll's `write []`)
//! *appends*: against a begin, its order moves only the begin's read time, by one, and
//! every use of a read time (validation's "a live writer of a read cell at an index at or
//! after it", provenance's "the latest live writer before it", the detectors' windows) looks
//! only at records that write a cell, so the two orders give histories that differ in that
//! read time alone: one history up to the renumbering [`normalised`] undoes. What is
//! independent, then: two begins (they only read the store and the registry; under a `lock`
//! stack, only when their cell lists share no lock), a begin and a cell-free commit (under a
//! `lock` stack, only when the begin's cells and the commit's read cells share no lock), a
//! local step and anything, a registry change and a retraction or a begin-free step, a
//! generation outside an operation and a retraction or a commit. The runtimes' own state is all in
//! these objects: the lock table is the in-flight ops' read sets (`lock`); validation
//! (`si`, `ssi`) reads the log after the read time at commit; provenance, dead-predecessor
//! validation and cascades (`causal`, `saga`) read and write records and their aborted
//! flags; the sequencer's compensation plan is the committing op's own; `registry-pin`
//! resolves against the op's own snapshot, `registry-validate` reads the live registry at
//! commit. The draws on the trial's stream (latencies, backoffs, token counts) are shared,
//! but in abstract time no history depends on them. The test `independent_steps_commute`
//! runs both orders of every declared-independent pair on random engine states under every
//! named runtime and compares the final histories, normalised.
//!
//! # The search
//!
//! Source-DPOR with sleep sets (Abdulla, Aronis, Jonsson and Sagonas, "Optimal dynamic
//! partial order reduction", POPL 2014, Algorithm 1; sleep sets from Godefroid 1996): after
//! each path the walker computes happens-before with vector clocks ([`Hb`]), finds the races
//! (two dependent steps of different agents with no step ordered between them), and for
//! each adds an initial of `notdep(e, E).p` to the backtrack set of the choice point before
//! the first step, unless one is already there. No agent is ever disabled by another's step
//! (a lock drops or aborts, it does not block), so every race is reversible. Data choices
//! (`prob`, `pick`, effect order) keep all their alternatives. A path's class is its trace:
//! the lexicographically least linearisation of its dependence order ([`Hb::class_key`]).

use crate::digest::Fnv1a;
use crate::scheduler::{Access, Footprint, Use};
use agentsim_models::record::OpRecord;

/// Whether steps with these footprints, of two different agents, commute under every
/// runtime: a local step commutes with anything (the coarse relation the finer [`Access`]
/// refines; kept for callers of the footprint).
pub fn independent(a: Footprint, b: Footprint) -> bool {
    a == Footprint::Local || b == Footprint::Local
}

/// One executed step of a path.
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    pub agent: usize,
    pub access: Access,
    /// The index of the agent choice point this step was chosen at, if it was chosen.
    pub frame: Option<usize>,
    /// The step's own data choices (prob, pick, effect order), hashed.
    pub label: u64,
}

/// Whether two steps are dependent (of one agent, or conflicting accesses).
pub(super) fn dependent(a: &Event, b: &Event) -> bool {
    a.agent == b.agent || a.access.conflicts(&b.access)
}

/// The latest accesses of each shared object on a path, for [`Hb::new`]: of the store and
/// the registry, the last write, each agent's last read since it and the last append since
/// it; of each lock bit, the last step that touched it. Every earlier step dependent with a
/// new one happens before one of these (an earlier write, read or append before the last
/// write conflicts with that write; an agent's earlier read is before its later one; an
/// earlier append since the write conflicts with the later one), so meeting these suffices.
struct Latest {
    store: Rw,
    registry: Rw,
    locks: [Option<usize>; 64],
}

/// The last write of one read/write object, each agent's last read since, and the last
/// append since (appends since the last write are ordered among themselves).
struct Rw {
    write: Option<usize>,
    reads: Vec<Option<usize>>,
    append: Option<usize>,
}

impl Rw {
    fn new(agents: usize) -> Rw {
        Rw {
            write: None,
            reads: vec![None; agents],
            append: None,
        }
    }

    /// Pushes onto `met` the accesses step `j` (of `agent`, using the object `u`) conflicts
    /// with, and records it.
    fn meet(&mut self, j: usize, agent: usize, u: Use, met: &mut Vec<usize>) {
        match u {
            Use::None => {}
            Use::Read => {
                met.extend(self.write);
                self.reads[agent] = Some(j);
            }
            Use::Append => {
                met.extend(self.write);
                met.extend(self.append.replace(j));
            }
            Use::Write => {
                met.extend(self.write);
                met.extend(self.reads.iter_mut().filter_map(Option::take));
                met.extend(self.append.take());
                self.write = Some(j);
            }
        }
    }
}

impl Latest {
    fn new(agents: usize) -> Latest {
        Latest {
            store: Rw::new(agents),
            registry: Rw::new(agents),
            locks: [None; 64],
        }
    }

    /// Sets `met` to the latest accesses step `j` conflicts with (any agent's, unsorted,
    /// maybe repeated), and records it.
    fn meet(&mut self, j: usize, e: &Event, met: &mut Vec<usize>) {
        met.clear();
        self.store.meet(j, e.agent, e.access.store, met);
        self.registry.meet(j, e.agent, e.access.registry, met);
        let mut bits = e.access.locks;
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            met.extend(self.locks[b].replace(j));
        }
    }
}

/// A history's records with each read time renumbered to count only the records before it
/// that write a cell: the form in which a begin and a cell-free commit commute (see the
/// module header). Two histories the reduction treats as one trace have one normal form.
pub(super) fn normalised(records: &[OpRecord]) -> Vec<OpRecord> {
    let mut free_before = Vec::with_capacity(records.len() + 1);
    free_before.push(0u64);
    for r in records {
        let last = *free_before.last().expect("pushed");
        free_before.push(last + u64::from(r.write_set.is_empty()));
    }
    let mut out = records.to_vec();
    for r in &mut out {
        let t = (r.read_time as usize).min(records.len());
        r.read_time -= free_before[t];
    }
    out
}

/// Happens-before over one path's steps: vector clocks, and the races found building them.
pub(super) struct Hb {
    agents: usize,
    /// `clock[j * agents + p]`: how many of agent `p`'s steps happen before step `j` or are it.
    clock: Vec<u32>,
    /// Step `j` is its agent's `local[j]`-th step (from 1).
    local: Vec<u32>,
    /// Pairs `(i, j)`, `i < j`, of steps in a race.
    pub races: Vec<(usize, usize)>,
}

impl Hb {
    /// Happens-before of `events` (the transitive closure of program order and dependence in
    /// path order) and its races, in O(n * (agents + objects)): each step meets only the
    /// latest accesses of the objects it touches ([`Latest`]), and every earlier dependent
    /// step happens before one of those or is one.
    pub(super) fn new(events: &[Event]) -> Hb {
        let agents = events.iter().map(|e| e.agent + 1).max().unwrap_or(0);
        let n = events.len();
        let mut clock = vec![0u32; n * agents];
        let mut local = vec![0u32; n];
        let mut last: Vec<Option<usize>> = vec![None; agents];
        let mut latest = Latest::new(agents);
        let mut races = Vec::new();
        let mut c = vec![0u32; agents];
        let mut met = Vec::new();
        for j in 0..n {
            let p = events[j].agent;
            match last[p] {
                Some(k) => c.copy_from_slice(&clock[k * agents..(k + 1) * agents]),
                None => c.iter_mut().for_each(|x| *x = 0),
            }
            latest.meet(j, &events[j], &mut met);
            met.retain(|&i| events[i].agent != p);
            met.sort_unstable_by(|a, b| b.cmp(a));
            met.dedup();
            // Latest first: a dependent step already ordered before `j` through a later one
            // is not in a race with it.
            for &i in &met {
                debug_assert!(dependent(&events[i], &events[j]));
                if c[events[i].agent] < local[i] {
                    races.push((i, j));
                }
                for (x, &y) in c.iter_mut().zip(&clock[i * agents..(i + 1) * agents]) {
                    *x = (*x).max(y);
                }
            }
            local[j] = last[p].map_or(1, |k| local[k] + 1);
            c[p] = local[j];
            clock[j * agents..(j + 1) * agents].copy_from_slice(&c);
            last[p] = Some(j);
        }
        Hb {
            agents,
            clock,
            local,
            races,
        }
    }

    /// Whether step `i` happens before step `j` (or is it).
    pub(super) fn before(&self, events: &[Event], i: usize, j: usize) -> bool {
        self.clock[j * self.agents + events[i].agent] >= self.local[i]
    }

    /// The agents that can start `notdep(i, E).p` where `p` is step `j`'s agent: the steps
    /// after `i` and before `j` that `i` does not happen before, then `j`; an agent is an
    /// initial when its first step there has no step of that sequence before it.
    pub(super) fn initials(&self, events: &[Event], i: usize, j: usize) -> Vec<usize> {
        let v: Vec<usize> = (i + 1..j)
            .filter(|&k| !self.before(events, i, k))
            .chain(std::iter::once(j))
            .collect();
        let mut seen: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for (pos, &k) in v.iter().enumerate() {
            let a = events[k].agent;
            if seen.contains(&a) {
                continue;
            }
            seen.push(a);
            if v[..pos].iter().all(|&m| !self.before(events, m, k)) {
                out.push(a);
            }
        }
        out
    }

    /// The key of the path's Mazurkiewicz trace: its lexicographically least linearisation
    /// (by agent) of the happens-before order, each step with its data choices, hashed into
    /// two independent 64-bit streams. Two paths have one key iff they are the same trace
    /// (up to a hash collision, about 2^-128 a pair).
    pub(super) fn class_key(&self, events: &[Event]) -> u128 {
        let a = self.agents;
        let mut queues: Vec<Vec<usize>> = vec![Vec::new(); a];
        for (j, e) in events.iter().enumerate() {
            queues[e.agent].push(j);
        }
        let mut head = vec![0usize; a];
        let mut placed = vec![0u32; a];
        // `unmet[p]`: the agents whose placed steps fall short of what `p`'s next step needs
        // (0: it can be placed). Kept step by step, so a placement costs O(agents).
        let mut unmet = vec![0usize; a];
        let need = |j: usize, q: usize| self.clock[j * a + q];
        for p in 0..a {
            if let Some(&j) = queues[p].first() {
                unmet[p] = (0..a).filter(|&q| q != p && need(j, q) > 0).count();
            }
        }
        let mut x = Fnv1a::new();
        let mut y = Fnv1a::new();
        y.word(0x9e37_79b9_7f4a_7c15);
        for _ in 0..events.len() {
            let p = (0..a)
                .find(|&p| head[p] < queues[p].len() && unmet[p] == 0)
                .expect("a step whose predecessors are placed (happens-before is acyclic)");
            let j = queues[p][head[p]];
            head[p] += 1;
            placed[p] += 1;
            for h in [&mut x, &mut y] {
                h.word(p as u64);
                h.word(events[j].label);
            }
            if let Some(&k) = queues[p].get(head[p]) {
                unmet[p] = (0..a).filter(|&q| q != p && placed[q] < need(k, q)).count();
            }
            // A need grows one step at a time, so it is met exactly when it equals `placed`.
            for r in (0..a).filter(|&r| r != p) {
                if queues[r]
                    .get(head[r])
                    .is_some_and(|&k| need(k, p) == placed[p])
                {
                    unmet[r] -= 1;
                }
            }
        }
        (u128::from(x.finish()) << 64) | u128::from(y.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(agent: usize, store: Use) -> Event {
        Event {
            agent,
            access: Access {
                store,
                ..Access::LOCAL
            },
            frame: None,
            label: 0,
        }
    }

    #[test]
    fn races_skip_what_is_ordered_through_a_third_step() {
        // 0: a writes, 1: b writes, 2: c writes. Races (0,1) and (1,2); (0,2) is ordered
        // through 1.
        let e = [ev(0, Use::Write), ev(1, Use::Write), ev(2, Use::Write)];
        let hb = Hb::new(&e);
        assert_eq!(hb.races, vec![(0, 1), (1, 2)]);
        assert!(hb.before(&e, 0, 2));
        // Two reads commute: no race, and both orders are one class.
        let r = [ev(0, Use::Read), ev(1, Use::Read)];
        let s = [ev(1, Use::Read), ev(0, Use::Read)];
        assert!(Hb::new(&r).races.is_empty());
        assert_eq!(Hb::new(&r).class_key(&r), Hb::new(&s).class_key(&s));
        let w = [ev(1, Use::Write), ev(0, Use::Read)];
        let v = [ev(0, Use::Read), ev(1, Use::Write)];
        assert_ne!(Hb::new(&w).class_key(&w), Hb::new(&v).class_key(&v));
    }

    #[test]
    fn initials_of_the_reversed_race() {
        // 0: a writes, 1: b local, 2: c writes (races with 0). notdep = [1], then c: both b
        // and c can start it.
        let e = [ev(0, Use::Write), ev(1, Use::None), ev(2, Use::Write)];
        let hb = Hb::new(&e);
        assert_eq!(hb.races, vec![(0, 2)]);
        assert_eq!(hb.initials(&e, 0, 2), vec![1, 2]);
        assert!(independent(Footprint::Local, Footprint::Shared));
        assert!(!independent(Footprint::Shared, Footprint::Shared));
    }

    /// The definition [`Hb::new`] computes faster: every earlier step of another agent is
    /// checked for dependence, latest first (O(n^2) a path).
    fn naive(events: &[Event]) -> (Vec<u32>, Vec<u32>, Vec<(usize, usize)>) {
        let agents = events.iter().map(|e| e.agent + 1).max().unwrap_or(0);
        let n = events.len();
        let mut clock = vec![0u32; n * agents];
        let mut local = vec![0u32; n];
        let mut last: Vec<Option<usize>> = vec![None; agents];
        let mut races = Vec::new();
        for j in 0..n {
            let p = events[j].agent;
            let mut c = match last[p] {
                Some(k) => clock[k * agents..(k + 1) * agents].to_vec(),
                None => vec![0; agents],
            };
            for i in (0..j).rev() {
                let q = events[i].agent;
                if q == p || !dependent(&events[i], &events[j]) {
                    continue;
                }
                if c[q] < local[i] {
                    races.push((i, j));
                }
                for (x, &y) in c.iter_mut().zip(&clock[i * agents..(i + 1) * agents]) {
                    *x = (*x).max(y);
                }
            }
            local[j] = last[p].map_or(1, |k| local[k] + 1);
            c[p] = local[j];
            clock[j * agents..(j + 1) * agents].copy_from_slice(&c);
            last[p] = Some(j);
        }
        (clock, local, races)
    }

    /// The definition [`Hb::class_key`] computes incrementally: at each place, the least
    /// agent whose next step has every predecessor placed, found by checking them all.
    fn naive_class_key(hb: &Hb, events: &[Event]) -> u128 {
        let a = hb.agents;
        let mut queues: Vec<Vec<usize>> = vec![Vec::new(); a];
        for (j, e) in events.iter().enumerate() {
            queues[e.agent].push(j);
        }
        let mut head = vec![0usize; a];
        let mut placed = vec![0u32; a];
        let mut x = Fnv1a::new();
        let mut y = Fnv1a::new();
        y.word(0x9e37_79b9_7f4a_7c15);
        for _ in 0..events.len() {
            let p = (0..a)
                .find(|&p| {
                    queues[p].get(head[p]).is_some_and(|&j| {
                        (0..a).all(|q| q == p || placed[q] >= hb.clock[j * a + q])
                    })
                })
                .expect("acyclic");
            let j = queues[p][head[p]];
            head[p] += 1;
            placed[p] += 1;
            for h in [&mut x, &mut y] {
                h.word(p as u64);
                h.word(events[j].label);
            }
        }
        (u128::from(x.finish()) << 64) | u128::from(y.finish())
    }

    fn use_of(k: u8) -> Use {
        [Use::None, Use::Read, Use::Write, Use::Append][usize::from(k % 4)]
    }

    proptest! {
        /// The races and clocks from the latest accesses are the definition's, in its
        /// order (the backtrack sets depend on the order races are met), and so is the
        /// incremental class key.
        #[test]
        fn latest_accesses_give_the_definitions_races(
            steps in prop::collection::vec((0usize..5, 0u8..4, 0u8..3, 0u64..16), 0..40)
        ) {
            let events: Vec<Event> = steps
                .iter()
                .map(|&(agent, s, r, l)| Event {
                    agent,
                    access: Access {
                        store: use_of(s),
                        registry: use_of(r),
                        // Few, overlapping lock bits, one of them past 63.
                        locks: (l & 7) | ((l & 8) << 60),
                    },
                    frame: None,
                    label: u64::from(s),
                })
                .collect();
            let hb = Hb::new(&events);
            prop_assert_eq!(hb.class_key(&events), naive_class_key(&hb, &events));
            let (clock, local, races) = naive(&events);
            prop_assert_eq!(&hb.races, &races);
            prop_assert_eq!(&hb.clock, &clock);
            prop_assert_eq!(&hb.local, &local);
        }
    }
}
