//! What steers a long search from outside, and what it reports back: a cancel flag (the CLI
//! raises it from a SIGINT/SIGTERM handler), a ceiling on the process's resident memory, and
//! progress snapshots for a reporter the caller supplies.
//!
//! The explorer's worker threads look at the stop flag before each block they claim, so a
//! stop takes effect within one block (a few hundred states) per thread; the coordinating
//! thread reads the resident set every [`TICK`] and at each level's end. The ceiling is a
//! guard, not an allocator limit: memory can pass it by what one tick allocates. A stopped
//! search's counts are partial (the level in progress is partly expanded) and say nothing
//! about the states it did not reach.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the coordinating thread reads memory and may report progress.
pub const TICK: Duration = Duration::from_millis(100);

/// Which search a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The parallel exploration that counts states.
    Explore,
    /// The single-threaded search for shortest counterexamples.
    Trace,
}

/// A snapshot of a running search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub phase: Phase,
    /// BFS levels completed so far.
    pub depth: u32,
    pub distinct: u64,
    pub generated: u64,
    /// States of the level being expanded, and how many of its blocks are done of how many.
    pub level_states: u64,
    pub level_blocks_done: usize,
    pub level_blocks: usize,
    /// Seconds since the search started.
    pub seconds: f64,
    /// The process's resident memory, where the platform tells it.
    pub rss_bytes: Option<u64>,
    /// Bytes of the seen set and bytes spilled to disk so far.
    pub seen_bytes: u64,
    pub spilled_bytes: u64,
    /// True at a level's end, false for a report from inside a level.
    pub level_end: bool,
}

impl Progress {
    /// Distinct states per second so far.
    pub fn rate(&self) -> f64 {
        self.distinct as f64 / self.seconds.max(1e-9)
    }

    /// Seconds left in the current level, estimated from the share of its blocks done since
    /// `level_started` (seconds); `None` before any block is done.
    pub fn level_eta(&self, level_started: f64) -> Option<f64> {
        if self.level_blocks_done == 0 || self.level_blocks == 0 {
            return None;
        }
        let spent = (self.seconds - level_started).max(0.0);
        let left = (self.level_blocks - self.level_blocks_done) as f64;
        Some(spent / self.level_blocks_done as f64 * left)
    }
}

/// A callback that receives progress snapshots (from the coordinating thread only).
#[derive(Clone)]
pub struct Reporter(pub Arc<dyn Fn(&Progress) + Send + Sync>);

impl fmt::Debug for Reporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reporter")
    }
}

/// Why a search stopped before exhausting the space, other than `max_states` or every
/// property being violated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The cancel flag was raised.
    Cancelled,
    /// The resident memory reached the ceiling.
    Memory { limit_bytes: u64, rss_bytes: u64 },
}

/// The cancel flag and memory ceiling of one search.
#[derive(Clone, Debug)]
pub struct Limits {
    pub cancel: Option<Arc<AtomicBool>>,
    /// Resident bytes past which the search stops (`u64::MAX`: none).
    pub max_memory_bytes: u64,
}

impl Limits {
    /// Whether to stop now: the cancel flag, then the memory ceiling (reading the resident
    /// set, so call it per tick, not per state).
    pub fn check(&self) -> Option<Stopped> {
        if self.cancelled() {
            return Some(Stopped::Cancelled);
        }
        if self.max_memory_bytes == u64::MAX {
            return None;
        }
        let rss = rss_bytes()?;
        (rss >= self.max_memory_bytes).then_some(Stopped::Memory {
            limit_bytes: self.max_memory_bytes,
            rss_bytes: rss,
        })
    }

    /// Whether the cancel flag is up (cheap: one atomic load).
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// The process's resident set in bytes (`VmRSS` of `/proc/self/status`); `None` where the
/// platform has no such file.
pub fn rss_bytes() -> Option<u64> {
    kib_field(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmRSS:",
    )
}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`), where the platform tells it.
pub fn machine_memory_bytes() -> Option<u64> {
    kib_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemTotal:")
}

/// The default memory ceiling: half the machine's memory ([`MEMORY_SHARE`]), or
/// [`MEMORY_FALLBACK_BYTES`] where the machine's memory is unknown.
pub fn default_memory_limit() -> u64 {
    machine_memory_bytes().map_or(MEMORY_FALLBACK_BYTES, |m| m / MEMORY_SHARE)
}

/// The default ceiling is the machine's memory divided by this.
pub const MEMORY_SHARE: u64 = 2;
/// The default ceiling where the machine's memory is unknown: 4 GiB.
pub const MEMORY_FALLBACK_BYTES: u64 = 4 << 30;

/// The value of a `NAME:   1234 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kib_fields() {
        let text = "Name:\tx\nVmRSS:\t  2048 kB\nMemTotal:       24000 kB\n";
        assert_eq!(kib_field(text, "VmRSS:"), Some(2 << 20));
        assert_eq!(kib_field(text, "MemTotal:"), Some(24_000 * 1024));
        assert_eq!(kib_field(text, "VmHWM:"), None);
    }

    #[test]
    fn limits_stop_on_cancel_and_on_memory() {
        let cancel = Arc::new(AtomicBool::new(false));
        let mut limits = Limits {
            cancel: Some(cancel.clone()),
            max_memory_bytes: u64::MAX,
        };
        assert_eq!(limits.check(), None);
        cancel.store(true, Ordering::Relaxed);
        assert_eq!(limits.check(), Some(Stopped::Cancelled));
        cancel.store(false, Ordering::Relaxed);
        if rss_bytes().is_some() {
            limits.max_memory_bytes = 1;
            assert!(matches!(limits.check(), Some(Stopped::Memory { .. })));
        }
    }

    #[test]
    fn level_eta_scales_the_time_spent() {
        let p = Progress {
            phase: Phase::Explore,
            depth: 3,
            distinct: 100,
            generated: 120,
            level_states: 1_000,
            level_blocks_done: 1,
            level_blocks: 4,
            seconds: 12.0,
            rss_bytes: None,
            seen_bytes: 0,
            spilled_bytes: 0,
            level_end: false,
        };
        assert_eq!(p.level_eta(10.0), Some(6.0));
        let none = Progress {
            level_blocks_done: 0,
            ..p
        };
        assert_eq!(none.level_eta(10.0), None);
    }
}
