//! Parallel breadth-first exploration with TLC's counting.
//!
//! Level-synchronous BFS: the frontier is a list of blocks that worker threads claim from an
//! atomic cursor; successors are deduplicated by fingerprint in a sharded open-addressing set
//! ([`crate::engine::fpset`]) and appended block-wise to the next level, which is kept packed and
//! spilled to disk past a memory budget ([`crate::engine::frontier`]). Counts follow
//! TLC: *distinct* = reachable states including initial ones; *generated* = initial states
//! plus every successor computed, duplicates included (one per enabled action choice);
//! *depth* = states on the longest shortest path (the number of BFS levels). The counts do not
//! depend on the thread count. Traces are not produced here (thread timing would pick among
//! equally short ones); `trace::shortest` finds them deterministically.
//!
//! Every level runs `threads` workers; the calling thread only coordinates: it waits for them
//! with a [`TICK`] timeout, reads the resident set against the memory ceiling, raises the
//! level's stop flag when it is passed, and hands progress snapshots to the reporter. Workers
//! look at that flag and at the cancel flag before each block, so a stopped search returns
//! within a block per worker, with partial counts and the reason in [`Outcome::stopped`].
//! Nothing runs serially between levels but sealing the new level and dropping the old one,
//! which, packed, is a handful of byte buffers.

use crate::engine::control::{rss_bytes, Phase, Progress, Stopped, TICK};
use crate::engine::fpset::{omission_estimate, FpSet};
use crate::engine::frontier::{pack, Level, Storage, CHUNK};
use crate::engine::space::Space;
use crate::property::PropSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

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
    /// at a violation); the counts then cover the levels explored. If false, not
    /// `complete` and not `stopped`, `max_states` stopped it.
    pub all_violated: bool,
    /// The cancel flag or the memory ceiling stopped the search; the counts are partial.
    pub stopped: Option<Stopped>,
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

    /// Notes violations; writes the shared word only when there is one, so that the workers'
    /// per-state reads of it do not bounce its cache line between cores.
    fn record(&self, found: PropSet) {
        if !found.is_empty() {
            self.violated.fetch_or(encode(found), Ordering::Relaxed);
        }
    }
}

fn encode(p: PropSet) -> u8 {
    p.bits()
}

fn decode(bits: u8) -> PropSet {
    PropSet::from_bits(bits)
}

/// Explores every reachable state (up to `max_states`) with the default [`Storage`].
pub fn explore<S: Space>(space: &S, opts: &ExploreOptions) -> Outcome {
    explore_with(space, opts, &Storage::default())
}

/// The running totals the coordinating thread reports.
struct Totals {
    start: Instant,
    distinct: u64,
    generated: u64,
    depth: u32,
    spilled: u64,
}

impl Totals {
    fn progress(&self, shared: &Shared, level: LevelProgress, level_end: bool) -> Progress {
        Progress {
            phase: Phase::Explore,
            depth: self.depth,
            distinct: self.distinct + level.found,
            generated: self.generated + level.generated,
            level_states: level.states,
            level_blocks_done: level.blocks_done,
            level_blocks: level.blocks,
            seconds: self.start.elapsed().as_secs_f64(),
            rss_bytes: rss_bytes(),
            seen_bytes: shared.seen.bytes(),
            spilled_bytes: self.spilled,
            level_end,
        }
    }
}

/// Explores every reachable state (up to `max_states`), keeping each level within
/// `storage`'s memory budget and stopping early if its limits say so.
pub fn explore_with<S: Space>(space: &S, opts: &ExploreOptions, storage: &Storage) -> Outcome {
    assert!(opts.threads >= 1, "at least one thread");
    let shared = Shared {
        seen: FpSet::new(storage.expect_states),
        violated: AtomicU8::new(0),
        check: opts.check,
    };
    let mut totals = Totals {
        start: Instant::now(),
        distinct: 0,
        generated: 0,
        depth: 0,
        spilled: 0,
    };
    let inits = space.init_states();
    totals.generated = inits.len() as u64;
    let mut frontier = Level::new(storage);
    let mut fresh = Vec::new();
    for s in inits {
        if shared.seen.insert(space.fingerprint(&s)) {
            shared.record(space.violations(&s, shared.unchecked()));
            fresh.push(s);
        }
    }
    for block in fresh.chunks(CHUNK) {
        frontier.push(pack(space, block));
    }
    frontier.seal();
    totals.distinct = frontier.len();
    totals.depth = u32::from(!frontier.is_empty());
    let (mut complete, mut all_violated, mut stopped) = (true, false, None);
    let (mut mem_peak, mut spilled) = (frontier.mem_bytes(), frontier.spilled_bytes());
    while !frontier.is_empty() {
        if !opts.check.is_empty() && shared.unchecked().is_empty() {
            (complete, all_violated) = (false, true);
            break;
        }
        if totals.distinct > opts.max_states {
            complete = false;
            break;
        }
        stopped = storage.limits.check();
        if stopped.is_some() {
            complete = false;
            break;
        }
        let (next, gen, stop) = level(space, &shared, &frontier, opts.threads, storage, &totals);
        totals.generated += gen;
        totals.distinct += next.len();
        totals.depth += u32::from(!next.is_empty());
        mem_peak = mem_peak.max(next.mem_bytes());
        spilled += next.spilled_bytes();
        totals.spilled = spilled;
        if stop.is_some() {
            (complete, stopped) = (false, stop);
            break;
        }
        if let Some(r) = &storage.progress {
            let at_end = LevelProgress {
                states: next.len(),
                blocks: next.blocks(),
                ..LevelProgress::default()
            };
            (r.0)(&totals.progress(&shared, at_end, true));
        }
        frontier = next;
    }
    Outcome {
        distinct: totals.distinct,
        generated: totals.generated,
        depth: totals.depth,
        seconds: totals.start.elapsed().as_secs_f64(),
        violated: decode(shared.violated.load(Ordering::Relaxed)),
        complete,
        all_violated,
        stopped,
        seen_bytes: shared.seen.bytes(),
        frontier_mem_peak: mem_peak,
        spilled_bytes: spilled,
    }
}

/// How far the level in progress is.
#[derive(Clone, Copy, Debug, Default)]
struct LevelProgress {
    states: u64,
    blocks: usize,
    blocks_done: usize,
    found: u64,
    generated: u64,
}

/// What the workers of one level share besides the seen set.
struct LevelWork<'a> {
    frontier: &'a Level,
    cursor: AtomicUsize,
    blocks_done: AtomicUsize,
    found: AtomicU64,
    generated: AtomicU64,
    /// Raised by the coordinator (memory) or seen by the workers (cancel flag).
    stop: AtomicBool,
}

impl LevelWork<'_> {
    fn snapshot(&self) -> LevelProgress {
        LevelProgress {
            states: self.frontier.len(),
            blocks: self.frontier.blocks(),
            blocks_done: self.blocks_done.load(Ordering::Relaxed),
            found: self.found.load(Ordering::Relaxed),
            generated: self.generated.load(Ordering::Relaxed),
        }
    }
}

/// Expands one BFS level on `threads` workers while the calling thread watches the limits
/// and reports progress; returns the next level, the successors generated, and why it
/// stopped early, if it did.
fn level<S: Space>(
    space: &S,
    shared: &Shared,
    frontier: &Level,
    threads: usize,
    storage: &Storage,
    totals: &Totals,
) -> (Level, u64, Option<Stopped>) {
    let lw = LevelWork {
        frontier,
        cursor: AtomicUsize::new(0),
        blocks_done: AtomicUsize::new(0),
        found: AtomicU64::new(0),
        generated: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    };
    let next = Mutex::new(Level::new(storage));
    let work = || expand(space, shared, &lw, &next, storage);
    let mut stopped = None;
    let generated = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        for _ in 0..threads {
            let (tx, work) = (tx.clone(), &work);
            scope.spawn(move || {
                tx.send(work())
                    .expect("the coordinator outlives its workers")
            });
        }
        drop(tx);
        let (mut generated, mut finished) = (0u64, 0);
        while finished < threads {
            match rx.recv_timeout(TICK) {
                Ok(g) => (generated, finished) = (generated + g, finished + 1),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if stopped.is_none() {
                        stopped = storage.limits.check();
                        lw.stop.store(stopped.is_some(), Ordering::Relaxed);
                    }
                    if let Some(r) = &storage.progress {
                        (r.0)(&totals.progress(shared, lw.snapshot(), false));
                    }
                }
                // A worker panicked; leaving the scope re-raises its panic.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        generated
    });
    if stopped.is_none() && storage.limits.cancelled() {
        stopped = Some(Stopped::Cancelled);
    }
    let mut next = next.into_inner().expect("next level poisoned");
    next.seal();
    (next, generated, stopped)
}

/// One worker: claims blocks of the frontier until none is left or the level must stop;
/// returns the successors it generated.
fn expand<S: Space>(
    space: &S,
    shared: &Shared,
    lw: &LevelWork<'_>,
    next: &Mutex<Level>,
    storage: &Storage,
) -> u64 {
    let append = |states: &[S::State]| {
        let block = pack(space, states);
        lw.found.fetch_add(states.len() as u64, Ordering::Relaxed);
        next.lock().expect("next level poisoned").push(block);
    };
    let mut out = Vec::with_capacity(CHUNK);
    let mut generated = 0u64;
    let mut actions: Vec<S::Action> = Vec::new();
    let (mut buf, mut states) = (Vec::new(), Vec::new());
    loop {
        if lw.stop.load(Ordering::Relaxed) || storage.limits.cancelled() {
            break;
        }
        let i = lw.cursor.fetch_add(1, Ordering::Relaxed);
        if i >= lw.frontier.blocks() {
            break;
        }
        states.clear();
        lw.frontier.load(space, i, &mut buf, &mut states);
        let before = generated;
        for s in &states {
            actions.clear();
            space.explore_actions(s, &mut actions);
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
                        append(&out);
                        out.clear();
                    }
                }
            }
        }
        lw.generated
            .fetch_add(generated - before, Ordering::Relaxed);
        lw.blocks_done.fetch_add(1, Ordering::Relaxed);
    }
    if !out.is_empty() {
        append(&out);
    }
    generated
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
