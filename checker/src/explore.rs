//! Parallel breadth-first exploration with TLC's counting.
//!
//! Level-synchronous BFS: the frontier is split into chunks that worker threads claim from an
//! atomic cursor; successors are deduplicated by fingerprint in a sharded set. Counts follow
//! TLC: *distinct* = reachable states including initial ones; *generated* = initial states
//! plus every successor computed, duplicates included (one per enabled action choice);
//! *depth* = states on the longest shortest path (the number of BFS levels). The counts do not
//! depend on the thread count. Traces are not produced here (thread timing would pick among
//! equally short ones); `trace::shortest` finds them deterministically.

use crate::property::PropSet;
use crate::space::{IdentityHasher, Space};
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

type FpSet = HashSet<u64, BuildHasherDefault<IdentityHasher>>;

const SHARDS: usize = 256;
const CHUNK: usize = 512;

/// How to explore.
#[derive(Clone, Copy, Debug)]
pub struct ExploreOptions {
    pub threads: usize,
    /// Properties to evaluate on every distinct state.
    pub check: crate::property::PropSet,
    /// Stop (incomplete) after this many distinct states; raise it for bigger bounds.
    pub max_states: u64,
}

/// What an exploration found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub distinct: u64,
    pub generated: u64,
    pub depth: u32,
    pub seconds: f64,
    /// The checked properties some reachable state violates.
    pub violated: PropSet,
    /// False if the search stopped before exhausting the space: see `all_violated`.
    pub complete: bool,
    /// The search stopped early because every checked property was violated (as TLC stops
    /// at a violation); the counts then cover the levels explored. If false and not
    /// `complete`, `max_states` stopped it.
    pub all_violated: bool,
}

impl Outcome {
    /// Distinct states per second.
    pub fn rate(&self) -> f64 {
        self.distinct as f64 / self.seconds.max(1e-9)
    }
}

struct Shared {
    seen: Vec<Mutex<FpSet>>,
    violated: AtomicU8,
    check: PropSet,
}

impl Shared {
    /// Inserts a fingerprint; true if it was new.
    fn insert(&self, fp: u64) -> bool {
        let shard = (fp >> 56) as usize % SHARDS;
        self.seen[shard]
            .lock()
            .expect("seen-set shard poisoned")
            .insert(fp)
    }

    fn unchecked(&self) -> PropSet {
        let found = decode(self.violated.load(Ordering::Relaxed));
        self.check.minus(found)
    }

    fn record(&self, found: PropSet) {
        self.violated.fetch_or(encode(found), Ordering::Relaxed);
    }
}

fn encode(p: PropSet) -> u8 {
    p.bits()
}

fn decode(bits: u8) -> PropSet {
    PropSet::from_bits(bits)
}

/// Explores every reachable state (up to `max_states`).
pub fn explore<S: Space>(space: &S, opts: &ExploreOptions) -> Outcome
where
    S::State: Clone + Send + Sync,
{
    assert!(opts.threads >= 1, "at least one thread");
    let start = Instant::now();
    let shared = Shared {
        seen: (0..SHARDS).map(|_| Mutex::new(FpSet::default())).collect(),
        violated: AtomicU8::new(0),
        check: opts.check,
    };
    let inits = space.init_states();
    let mut generated = inits.len() as u64;
    let mut frontier = Vec::new();
    for s in inits {
        if shared.insert(space.fingerprint(&s)) {
            shared.record(space.violations(&s, shared.unchecked()));
            frontier.push(s);
        }
    }
    let mut distinct = frontier.len() as u64;
    let mut depth = u32::from(!frontier.is_empty());
    let mut complete = true;
    let mut all_violated = false;
    while !frontier.is_empty() {
        if !opts.check.is_empty() && shared.unchecked().is_empty() {
            (complete, all_violated) = (false, true);
            break;
        }
        if distinct > opts.max_states {
            complete = false;
            break;
        }
        let (next, gen) = level(space, &shared, &frontier, opts.threads);
        generated += gen;
        distinct += next.len() as u64;
        if !next.is_empty() {
            depth += 1;
        }
        frontier = next;
    }
    Outcome {
        distinct,
        generated,
        depth,
        seconds: start.elapsed().as_secs_f64(),
        violated: decode(shared.violated.load(Ordering::Relaxed)),
        complete,
        all_violated,
    }
}

/// Expands one BFS level; returns the new states and the successors generated.
fn level<S: Space>(
    space: &S,
    shared: &Shared,
    frontier: &[S::State],
    threads: usize,
) -> (Vec<S::State>, u64)
where
    S::State: Clone + Send + Sync,
{
    let cursor = AtomicUsize::new(0);
    let work = || {
        let mut next = Vec::new();
        let mut generated = 0u64;
        let mut actions: Vec<S::Action> = Vec::new();
        loop {
            let from = cursor.fetch_add(CHUNK, Ordering::Relaxed);
            if from >= frontier.len() {
                break;
            }
            for s in &frontier[from..(from + CHUNK).min(frontier.len())] {
                actions.clear();
                space.actions(s, &mut actions);
                for &a in &actions {
                    let Some(n) = space.next_state(s, a) else {
                        continue;
                    };
                    generated += 1;
                    if shared.insert(space.fingerprint(&n)) {
                        let check = shared.unchecked();
                        if !check.is_empty() {
                            shared.record(space.violations(&n, check));
                        }
                        next.push(n);
                    }
                }
            }
        }
        (next, generated)
    };
    if threads == 1 {
        return work();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        let mut all = Vec::new();
        let mut generated = 0;
        for h in handles {
            let (next, g) = h.join().expect("explorer worker panicked");
            all.extend(next);
            generated += g;
        }
        (all, generated)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::Property;

    #[test]
    fn propset_bits_round_trip() {
        let p = PropSet::of(&[Property::A3Residue, Property::A1Snapshot]);
        assert_eq!(decode(encode(p)), p);
    }
}
