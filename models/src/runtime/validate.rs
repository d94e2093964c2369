//! Commit-time read validation (SPEC §5.1), first committer wins: an op aborts when a cell it
//! read has a live committed version newer than its read time.
//!
//! * `validate` (alone it is `ssi`, L1) checks **every** commit, read-only ones included. Why
//!   it targets A1: an A1 witness needs another agent's live write to a read cell strictly
//!   inside the reader's window, i.e. a version newer than the reader's read time at the
//!   reader's commit, which this check rejects.
//! * `validate-writers` (alone it is `si`, the paper's default snapshot isolation) checks only
//!   commits with a non-empty write set. That skip is exactly why `si` admits A1: a read-only
//!   op that read a cell another agent has since rewritten commits anyway (the paper's 3 %
//!   triage gap); its ¬A1 holds only under the all-writers hypothesis.
//!
//! The committed versions are read off the log, not kept in a table: record `k` installed a
//! version of each cell it wrote at `write_time = k + 1` if it committed, and a record that is
//! live now committed (an abort at commit is final; a retraction only flags). So "a live
//! version newer than `read_time`" is "a live record at index ≥ `read_time` that wrote the
//! cell". Retracted versions do not conflict: A1 counts only live writers, and it is the TLA
//! twin's `StaleRead`, which the checker's state counts are compared with. Cost: aborts (the
//! caller may retry: re-read and regenerate, paying the tokens again).

use super::catalogue::{ActsAt, Mechanism, Spec};
use super::{AbortReason, CommitRequest, Pending, Runtime, Stack, Store};
use crate::anomaly::Anomaly;

const WRITERS_WHY: &str = "validate checks every commit, the writers' included";

/// `validate`, as data.
pub const SPEC: Spec = Spec {
    name: "validate",
    acts_at: &[ActsAt::Commit],
    targets: Anomaly::A1,
    provenance: false,
    needs: &[],
    excludes: &[(Mechanism::ValidateWriters, WRITERS_WHY)],
    summary: "abort any commit that read a cell with a live version newer than its read time",
};

/// `validate-writers`, as data.
pub const SPEC_WRITERS: Spec = Spec {
    name: "validate-writers",
    acts_at: &[ActsAt::Commit],
    targets: Anomaly::A1,
    provenance: false,
    needs: &[],
    excludes: &[(Mechanism::Validate, WRITERS_WHY)],
    summary: "as validate, for commits that write (read-only commits are not checked; \
              prevents A1 only if every op writes what it reads)",
};

/// The first read cell of `op` with a live committed version newer than its read time, as
/// the abort reason naming that version's writer.
pub fn stale_read(store: &Store, op: &Pending) -> Option<AbortReason> {
    let log = store.log();
    let from = (op.snapshot.read_time as usize).min(log.len());
    op.request.read_set.iter().find_map(|&cell| {
        log[from..]
            .iter()
            .position(|r| !r.aborted && r.writes(cell))
            .map(|k| AbortReason::StaleRead {
                cell,
                writer: from + k,
            })
    })
}

/// Asserts that record `index`, if live and `checked`, has no live newer version of a cell
/// it read: what its commit-time check ensured (later steps only abort records).
fn assert_fresh(store: &Store, index: usize, checked: bool) {
    let r = &store.log()[index];
    if r.aborted || !checked {
        return;
    }
    let log = &store.log()[..index];
    let from = (r.read_time as usize).min(log.len());
    for &c in &r.read_set {
        assert!(
            log[from..].iter().all(|w| w.aborted || !w.writes(c)),
            "a live record read a cell rewritten while it generated"
        );
    }
}

/// `validate`: every commit is validated.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Validate;

/// `validate-writers`: commits that write are validated.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ValidateWriters;

impl Runtime for Validate {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::Validate])
    }

    fn verdict(&self, store: &Store, op: &Pending, _req: &CommitRequest) -> Option<AbortReason> {
        stale_read(store, op)
    }

    fn check(&self, store: &Store, from: usize) {
        for k in from..store.log().len() {
            assert_fresh(store, k, true);
        }
    }
}

impl Runtime for ValidateWriters {
    fn stack(&self) -> Stack {
        Stack::of(&[Mechanism::ValidateWriters])
    }

    fn verdict(&self, store: &Store, op: &Pending, req: &CommitRequest) -> Option<AbortReason> {
        if req.issue.is_empty() {
            None
        } else {
            stale_read(store, op)
        }
    }

    fn check(&self, store: &Store, from: usize) {
        for k in from..store.log().len() {
            let writes = !store.log()[k].write_set.is_empty();
            assert_fresh(store, k, writes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Agent, Cell, Value};
    use crate::record::Registry;
    use crate::runtime::{BeginRequest, CommitOutcome, Guarded, Options};

    #[test]
    fn writers_only_skips_read_only_commits_but_a_writer_aborts() {
        let mut rt = Guarded::with(ValidateWriters, Registry::all(0), Options::default());
        let (a, b, w) = (Agent(0), Agent(1), Agent(2));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(b, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        let ro = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(ro, CommitOutcome::Committed { index: 1, .. }));
        let wr = rt.commit(&CommitRequest::new(b, &[(Cell(1), Value(2))]));
        assert_eq!(
            wr,
            CommitOutcome::Aborted {
                index: 2,
                reason: AbortReason::StaleRead {
                    cell: Cell(0),
                    writer: 0
                },
                compensate: Vec::new()
            }
        );
        assert_eq!(rt.store().value(Cell(1)), Value::NULL);
    }

    #[test]
    fn read_only_commit_is_validated() {
        let mut rt = Guarded::with(Validate, Registry::all(0), Options::default());
        let (a, w) = (Agent(0), Agent(1));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        let ro = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(
            ro,
            CommitOutcome::Aborted {
                reason: AbortReason::StaleRead { writer: 0, .. },
                ..
            }
        ));
        // A fresh read of the new version commits.
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        let ok = rt.commit(&CommitRequest::new(a, &[]));
        assert!(matches!(ok, CommitOutcome::Committed { index: 2, .. }));
    }

    /// A newer version whose writer was retracted no longer conflicts (it is not live, and A1
    /// ignores it), as in the TLA twin's `StaleRead`; nor does one aborted at commit.
    #[test]
    fn retracted_and_aborted_versions_do_not_conflict() {
        let mut rt = Guarded::with(Validate, Registry::all(0), Options::default());
        let (a, w) = (Agent(0), Agent(1));
        rt.begin(&BeginRequest::new(a, vec![Cell(0)], None));
        rt.begin(&BeginRequest::new(w, vec![], None));
        rt.commit(&CommitRequest::new(w, &[(Cell(0), Value(1))]));
        assert_eq!(rt.retract(0), [0]);
        assert_eq!(
            rt.store().value(Cell(0)),
            Value(1),
            "memory keeps retracted writes"
        );
        let out = rt.commit(&CommitRequest::new(a, &[(Cell(1), Value(2))]));
        assert!(matches!(out, CommitOutcome::Committed { index: 1, .. }));
    }
}
