//! The primary and its `k` secondaries (SPEC §6), with bounded replication lag.
//!
//! A secondary's state is, per cell, how many of the primary's entries it has applied: it
//! replays the primary's per-cell log strictly in order, so the value it serves is the
//! primary's value at that applied version. Lag is `head − applied`, per cell. `max_lag`
//! bounds it: when a commit would leave a secondary more than `max_lag` entries behind, the
//! primary ships the oldest missing entries to it synchronously first (bounded-staleness
//! replication), so a write is never refused. `max_lag = 0` is synchronous replication.
//!
//! Invariants, asserted after every mutation (split, and on in release builds): the primary
//! log is append-only with consecutive versions ([`PrimaryLog::append`]); every secondary's
//! applied prefix is at most the primary's head; and every lag is at most `max_lag`. A pass
//! says the replica states are well formed; what reads of them can observe is the
//! disciplines' business ([`super::ReadDiscipline`]).

use super::log::PrimaryLog;
use super::PRIMARY;
use crate::names::{Agent, Cell, Replica, Value};
use std::collections::BTreeMap;

/// What one replica served for one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Served {
    /// The replica's applied version of the cell (its prefix of the primary's log).
    pub version: u64,
    pub value: Value,
}

/// A primary log and the applied prefixes of `k` secondaries.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ReplicaSet {
    primary: PrimaryLog,
    /// `applied[s - 1][cell]` for secondary `Replica(s)`; a missing cell is at version 0.
    applied: Vec<BTreeMap<Cell, u64>>,
    max_lag: u64,
}

impl ReplicaSet {
    /// A primary and `secondaries` secondaries, all empty, lag bounded by `max_lag`.
    pub fn new(secondaries: u32, max_lag: u64) -> Self {
        Self {
            primary: PrimaryLog::new(),
            applied: vec![BTreeMap::new(); secondaries as usize],
            max_lag,
        }
    }

    /// The primary's log.
    pub fn primary(&self) -> &PrimaryLog {
        &self.primary
    }

    /// The lag bound.
    pub fn max_lag(&self) -> u64 {
        self.max_lag
    }

    /// Every replica: the primary (`Replica(0)`), then the secondaries `Replica(1..=k)`.
    pub fn replicas(&self) -> impl Iterator<Item = Replica> {
        (0..=self.applied.len() as u32).map(Replica)
    }

    /// Whether `r` names a replica of this set.
    pub fn contains(&self, r: Replica) -> bool {
        r.index() <= self.applied.len()
    }

    /// The version of `c` that `r` has applied (the head, for the primary).
    pub fn applied(&self, r: Replica, c: Cell) -> u64 {
        if r == PRIMARY {
            return self.primary.head(c);
        }
        assert!(self.contains(r), "unknown replica {r}");
        self.applied[r.index() - 1].get(&c).copied().unwrap_or(0)
    }

    /// How far `r` is behind the primary on `c`.
    pub fn lag(&self, r: Replica, c: Cell) -> u64 {
        self.primary.head(c) - self.applied(r, c)
    }

    /// What `r` serves for `c`: its applied version and the value at that version.
    pub fn read(&self, r: Replica, c: Cell) -> Served {
        let version = self.applied(r, c);
        Served {
            version,
            value: self.primary.value_at(c, version),
        }
    }

    /// Commits a write of `value` to `c` at the primary; secondaries that would fall more
    /// than `max_lag` behind catch up first. Returns the new committed version.
    pub fn write(&mut self, c: Cell, value: Value, writer: Agent, commit_time: u64) -> u64 {
        let version = self.primary.append(c, value, writer, commit_time);
        let floor = version.saturating_sub(self.max_lag);
        for applied in &mut self.applied {
            let a = applied.entry(c).or_insert(0);
            *a = (*a).max(floor);
        }
        self.check();
        version
    }

    /// Whether secondary `r` has an entry of `c` left to apply.
    pub fn can_apply(&self, r: Replica, c: Cell) -> bool {
        r != PRIMARY && self.lag(r, c) > 0
    }

    /// Secondary `r` applies the next entry of `c`; returns the version it now serves.
    pub fn apply(&mut self, r: Replica, c: Cell) -> u64 {
        assert!(self.can_apply(r, c), "{r} has nothing of {c} to apply");
        let a = self.applied[r.index() - 1].entry(c).or_insert(0);
        *a += 1;
        let now = *a;
        self.check();
        now
    }

    /// Every `(secondary, cell)` with an entry left to apply, in order.
    pub fn pending(&self) -> Vec<(Replica, Cell)> {
        let mut out = Vec::new();
        for r in self.replicas().skip(1) {
            for c in self.primary.cells() {
                if self.can_apply(r, c) {
                    out.push((r, c));
                }
            }
        }
        out
    }

    /// The invariants of the module docs.
    fn check(&self) {
        for (s, applied) in self.applied.iter().enumerate() {
            for (&c, &a) in applied {
                let head = self.primary.head(c);
                assert!(
                    a <= head,
                    "secondary {} applied past the head of {c}",
                    s + 1
                );
                assert!(
                    head - a <= self.max_lag,
                    "secondary {} lags {c} by more than {}",
                    s + 1,
                    self.max_lag
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: Replica = Replica(1);
    const C: Cell = Cell(0);

    #[test]
    fn a_lagging_secondary_serves_the_old_version() {
        let mut set = ReplicaSet::new(1, 1);
        assert_eq!(set.write(C, Value(1), Agent(0), 1), 1);
        let stale = Served {
            version: 0,
            value: Value::NULL,
        };
        assert_eq!(set.read(S1, C), stale);
        assert_eq!(set.read(PRIMARY, C).value, Value(1));
        assert_eq!(set.pending(), vec![(S1, C)]);
        assert_eq!(set.apply(S1, C), 1);
        assert_eq!(set.read(S1, C).value, Value(1));
        assert!(set.pending().is_empty());
    }

    #[test]
    fn the_lag_bound_forces_catch_up() {
        let mut set = ReplicaSet::new(2, 1);
        set.write(C, Value(1), Agent(0), 1);
        set.write(C, Value(2), Agent(0), 2);
        assert_eq!(set.applied(S1, C), 1);
        assert_eq!(set.applied(Replica(2), C), 1);
        assert_eq!(set.lag(S1, C), 1);
        let mut sync = ReplicaSet::new(1, 0);
        sync.write(C, Value(1), Agent(0), 1);
        assert_eq!(sync.read(S1, C).value, Value(1));
        assert!(sync.pending().is_empty());
    }

    #[test]
    #[should_panic(expected = "nothing of c0 to apply")]
    fn applying_past_the_head_is_a_bug() {
        let mut set = ReplicaSet::new(1, 1);
        set.apply(S1, C);
    }

    #[test]
    fn replicas_are_the_primary_then_the_secondaries() {
        let set = ReplicaSet::new(2, 3);
        let all: Vec<_> = set.replicas().collect();
        assert_eq!(all, vec![PRIMARY, S1, Replica(2)]);
        assert!(!set.contains(Replica(3)));
        assert_eq!(set.max_lag(), 3);
    }
}
