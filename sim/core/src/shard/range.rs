//! Which trials of a run a shard runs: `I/N` (balanced, contiguous, 1-based) or an explicit
//! half-open range `A..B`. The ranges of shards 1..=N of one run partition its trials (a
//! proptest says so); a range says nothing about what the trials find.

use super::ShardError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Trials `lo..hi` (half-open) of a run of `trials`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialRange {
    pub lo: u64,
    pub hi: u64,
}

impl TrialRange {
    /// Every trial of a run of `trials`.
    pub fn all(trials: u64) -> TrialRange {
        TrialRange { lo: 0, hi: trials }
    }

    /// The number of trials in the range.
    pub fn len(&self) -> u64 {
        self.hi - self.lo
    }

    /// Whether the range holds no trial.
    pub fn is_empty(&self) -> bool {
        self.lo == self.hi
    }
}

impl fmt::Display for TrialRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.lo, self.hi)
    }
}

/// `A..B`.
impl FromStr for TrialRange {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<TrialRange, ShardError> {
        let bad = || ShardError::BadRange(s.to_owned());
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let lo: u64 = a.trim().parse().map_err(|_| bad())?;
        let hi: u64 = b.trim().parse().map_err(|_| bad())?;
        if lo > hi {
            return Err(bad());
        }
        Ok(TrialRange { lo, hi })
    }
}

/// Shard `index` of `count`, 1-based (`2/3` is the second of three), as Playwright and Jest
/// spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The shard's trials: the `index`-th of `count` contiguous, balanced ranges of `trials`
    /// (sizes differ by at most one; a shard past the trial count is empty).
    pub fn range(&self, trials: u64) -> TrialRange {
        let at = |i: u64| (u128::from(trials) * u128::from(i) / u128::from(self.count)) as u64;
        TrialRange {
            lo: at(self.index - 1),
            hi: at(self.index),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `I/N` with 1 ≤ I ≤ N.
impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::BadShard(s.to_owned());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Which trials of each run a process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slice {
    /// Shard I of N of every run.
    Shard(Shard),
    /// An explicit range of every run.
    Range(TrialRange),
    /// Every trial.
    All,
}

impl Slice {
    /// The range of a run of `trials`; an explicit range past the run is an error.
    pub fn range(&self, trials: u64) -> Result<TrialRange, ShardError> {
        match *self {
            Slice::Shard(s) => Ok(s.range(trials)),
            Slice::Range(r) if r.hi > trials => Err(ShardError::RangeTooLarge { range: r, trials }),
            Slice::Range(r) => Ok(r),
            Slice::All => Ok(TrialRange::all(trials)),
        }
    }

    /// The shard, if the slice is one.
    pub fn shard(&self) -> Option<Shard> {
        match *self {
            Slice::Shard(s) => Some(s),
            Slice::Range(_) | Slice::All => None,
        }
    }
}
