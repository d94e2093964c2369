//! Parallel breadth-first exploration with TLC's counting.
//!
//! Level-synchronous BFS: the frontier is a list of blocks that worker threads claim from an
//! atomic cursor; successors are deduplicated by fingerprint in a sharded open-addressing set
//! ([`crate::fpset`]) and appended block-wise to the next level, which is kept packed and
//! spilled to disk past a memory budget ([`crate::frontier`]). Counts follow
//! TLC: *distinct* = reachable states including initial ones; *generated* = initial states
//! plus every successor computed, duplicates included (one per enabled action choice);
//! *depth* = states on the longest shortest path (the number of BFS levels). The counts do not
//! depend on the thread count. Traces are not produced here (thread timing would pick among
//! equally short ones); `trace::shortest` finds them deterministically.

use crate::fpset::{omission_estimate, FpSet};
use crate::frontier::{pack, Level, Storage};
use crate::property::PropSet;
use crate::space::Space;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// States per frontier block (the unit a worker claims and appends).
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
    /// Bytes of the seen set's slot arrays at the end.
    pub seen_bytes: u64,
    /// Largest packed level held in memory, in bytes.
    pub frontier_mem_peak: u64,
    /// Bytes written to spill files over the whole run.
    pub spilled_bytes: u64,
}

impl Outcome {
    /// Distinct states per second.
    pub fn rate(&self) -> f64 {
        self.distinct as f64 / self.seconds.max(1e-9)
    }

    /// Expected number of states hidden by 64-bit fingerprint collisions, as TLC reports
    /// it: `(optimistic, birthday)` = `(n·(g−n)/2⁶⁴, n²/2⁶⁵)`, see [`omission_estimate`].
    pub fn omission_estimate(&self) -> (f64, f64) {
        omission_estimate(self.distinct, self.generated)
    }
}

struct Shared {
    seen: FpSet,
    violated: AtomicU8,
    check: PropSet,
}

impl Shared {
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

/// Explores every reachable state (up to `max_states`) with the default [`Storage`].
pub fn explore<S: Space>(space: &S, opts: &ExploreOptions) -> Outcome
where
    S::State: Clone + Send + Sync,
{
    explore_with(space, opts, &Storage::default())
}

/// Explores every reachable state (up to `max_states`), keeping each level within
/// `storage`'s memory budget.
pub fn explore_with<S: Space>(space: &S, opts: &ExploreOptions, storage: &Storage) -> Outcome
where
    S::State: Clone + Send + Sync,
{
    assert!(opts.threads >= 1, "at least one thread");
    let start = Instant::now();
    let shared = Shared {
        seen: FpSet::new(storage.expect_states),
        violated: AtomicU8::new(0),
        check: opts.check,
    };
    let inits = space.init_states();
    let mut generated = inits.len() as u64;
    let mut frontier = Level::new(storage);
    let mut fresh = Vec::new();
    for s in inits {
        if shared.seen.insert(space.fingerprint(&s)) {
            shared.record(space.violations(&s, shared.unchecked()));
            fresh.push(s);
        }
    }
    for block in fresh.chunks(CHUNK) {
        frontier.push(pack(space, block.to_vec()));
    }
    frontier.seal();
    let mut distinct = frontier.len();
    let mut depth = u32::from(!frontier.is_empty());
    let (mut complete, mut all_violated) = (true, false);
    let (mut mem_peak, mut spilled) = (frontier.mem_bytes(), frontier.spilled_bytes());
    while !frontier.is_empty() {
        if !opts.check.is_empty() && shared.unchecked().is_empty() {
            (complete, all_violated) = (false, true);
            break;
        }
        if distinct > opts.max_states {
            complete = false;
            break;
        }
        let (next, gen) = level(space, &shared, &frontier, opts.threads, storage);
        generated += gen;
        distinct += next.len();
        depth += u32::from(!next.is_empty());
        mem_peak = mem_peak.max(next.mem_bytes());
        spilled += next.spilled_bytes();
        if storage.progress {
            eprintln!(
                "depth {depth}: {distinct} distinct, {generated} generated, next level {} \
                 ({} MB packed in memory, {} MB spilled), seen set {} MB, {:.1} s",
                next.len(),
                next.mem_bytes() >> 20,
                next.spilled_bytes() >> 20,
                shared.seen.bytes() >> 20,
                start.elapsed().as_secs_f64()
            );
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
        seen_bytes: shared.seen.bytes(),
        frontier_mem_peak: mem_peak,
        spilled_bytes: spilled,
    }
}

/// Expands one BFS level; returns the next level and the successors generated.
fn level<S: Space>(
    space: &S,
    shared: &Shared,
    frontier: &Level<S::State>,
    threads: usize,
    storage: &Storage,
) -> (Level<S::State>, u64)
where
    S::State: Clone + Send + Sync,
{
    let cursor = AtomicUsize::new(0);
    let next = Mutex::new(Level::new(storage));
    let append = |states: Vec<S::State>| {
        let block = pack(space, states);
        next.lock().expect("next level poisoned").push(block);
    };
    let work = || {
        let mut out = Vec::with_capacity(CHUNK);
        let mut generated = 0u64;
        let mut actions: Vec<S::Action> = Vec::new();
        let (mut buf, mut states) = (Vec::new(), Vec::new());
        loop {
            let i = cursor.fetch_add(1, Ordering::Relaxed);
            if i >= frontier.blocks() {
                break;
            }
            states.clear();
            frontier.load(space, i, &mut buf, &mut states);
            for s in &states {
                actions.clear();
                space.actions(s, &mut actions);
                for &a in &actions {
                    let Some(n) = space.next_state(s, a) else {
                        continue;
                    };
                    generated += 1;
                    if shared.seen.insert(space.fingerprint(&n)) {
                        let check = shared.unchecked();
                        if !check.is_empty() {
                            shared.record(space.violations(&n, check));
                        }
                        out.push(n);
                        if out.len() == CHUNK {
                            append(std::mem::replace(&mut out, Vec::with_capacity(CHUNK)));
                        }
                    }
                }
            }
        }
        if !out.is_empty() {
            append(out);
        }
        generated
    };
    let generated = if threads == 1 {
        work()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("explorer worker panicked"))
                .sum()
        })
    };
    let mut next = next.into_inner().expect("next level poisoned");
    next.seal();
    (next, generated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::property::Property;

    #[test]
    fn propset_bits_round_trip() {
        let p = PropSet::of(&[Property::A3_RESIDUE, Property::A1Snapshot]);
        assert_eq!(decode(encode(p)), p);
    }
}
