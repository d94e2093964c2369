//! The mechanisms of SPEC §5.1 (`agentsim_models::runtime::Mechanism`, the catalogue the
//! concrete runtimes are built from) over the history-free summary: each decides at its points
//! (begin, commit, retraction, externalization) from relative facts only, and any
//! [`Stack`] of them — the same type `check --runtime a+b` parses — is a runtime here too. The
//! decisions combine as the concrete stack combines them: a begin happens if no mechanism
//! drops it, a commit is aborted if any mechanism aborts it, the sequencer forces `co = io`,
//! `pin` resolves the planned tool against the read-time registry, and a retraction aborts the
//! root and, with `cascade`, every later live dependant.
//!
//! What each reads, in place of the concrete runtime's absolute state:
//! * `lock`: the read sets of the ops in flight (they are exactly the lock table);
//! * `validate` / `validate-writers`: "a live commit wrote a cell I read since my read";
//! * `validate-preds`: "one of my preds is aborted"; `cascade`: the live dependants;
//! * `validate-tool`: "my planned tool left the registry or changed since my read";
//! * `sequencer`, `pin`: nothing (they rewrite what is recorded).
//!
//! A stack's verdicts here equal the concrete runtime's only where the equivalence tests
//! show it (every named runtime and every valid stack, at the bounds they run).

use crate::models::action::Seq;
use agentsim_models::monitor::{Need, Summary};
use agentsim_models::runtime::{Mechanism, Stack};

/// A stack's decisions on the summary.
pub trait Policies {
    /// What the summary must track for this stack's decisions (on top of the watched
    /// properties, which the caller sets).
    fn add_needs(&self, need: &mut Need);
    /// `lock` at begin: the read set must be free of other agents' locks (read sets).
    fn begins(&self, s: &Summary<()>, slot: usize, rs: u8) -> bool;
    /// Whether some mechanism aborts `slot`'s commit of write set `ws`.
    fn aborts(&self, need: &Need, s: &Summary<()>, slot: usize, ws: u8) -> bool;
    /// The externalization order that gets recorded as `co`.
    fn externalized(&self, io: Seq, co: Seq) -> Seq;
    /// Whether the write registry is the read-time snapshot.
    fn pinned(&self) -> bool;
    /// The nodes a retraction of node `root` aborts.
    fn retracted(&self, s: &Summary<()>, root: usize) -> u16;
}

impl Policies for Stack {
    fn add_needs(&self, need: &mut Need) {
        need.newer |=
            self.contains(Mechanism::Validate) || self.contains(Mechanism::ValidateWriters);
        need.tools |= self.contains(Mechanism::ValidateTool);
        need.reads |= self.contains(Mechanism::Lock);
    }

    fn begins(&self, s: &Summary<()>, slot: usize, rs: u8) -> bool {
        !self.contains(Mechanism::Lock) || locked_by_others(s, slot) & rs == 0
    }

    fn aborts(&self, need: &Need, s: &Summary<()>, slot: usize, ws: u8) -> bool {
        let p = s.pending[slot]
            .as_ref()
            .expect("a commit has an op in flight");
        self.mechanisms().any(|m| match m {
            Mechanism::Lock => locked_by_others(s, slot) & ws & !p.rs != 0,
            Mechanism::ValidateWriters => ws != 0 && s.newer(need, slot),
            Mechanism::Validate => s.newer(need, slot),
            Mechanism::ValidatePreds => s.dead_pred(slot),
            Mechanism::ValidateTool => s.changed(slot),
            Mechanism::Cascade | Mechanism::Sequencer | Mechanism::Pin => false,
        })
    }

    fn externalized(&self, io: Seq, co: Seq) -> Seq {
        if self.contains(Mechanism::Sequencer) {
            io
        } else {
            co
        }
    }

    fn pinned(&self) -> bool {
        self.contains(Mechanism::Pin)
    }

    fn retracted(&self, s: &Summary<()>, root: usize) -> u16 {
        if self.contains(Mechanism::Cascade) {
            s.doomed(root)
        } else {
            1 << root
        }
    }
}

/// The cells locked by agents other than `slot` (their ops' read sets).
fn locked_by_others(s: &Summary<()>, slot: usize) -> u8 {
    s.pending
        .iter()
        .enumerate()
        .filter(|&(a, _)| a != slot)
        .filter_map(|(_, p)| p.as_ref())
        .fold(0, |m, p| m | p.rs)
}
