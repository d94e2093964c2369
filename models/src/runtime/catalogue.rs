//! The catalogue's vocabulary: which mechanisms exist, where they act, and what a
//! mechanism's [`Spec`] records. Each mechanism's file states its own `Spec` in these terms;
//! `mechanism.rs`, above them all, gathers the specs and dispatches.

use crate::anomaly::Anomaly;

/// One mechanism, in catalogue order (the order a stack consults them and prints them).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Mechanism {
    Lock,
    ValidateWriters,
    Validate,
    ValidatePreds,
    Cascade,
    Sequencer,
    Pin,
    ValidateTool,
}

/// A point where a mechanism acts (SPEC §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActsAt {
    /// `StartRead`: admit or drop before generation.
    Begin,
    /// `CompleteWrite`: commit or abort, and what the record says.
    Commit,
    /// An abort or a retraction: what else aborts with it.
    Abort,
    /// When a completed tool effect becomes visible, and what an abort undoes.
    Externalization,
}

/// What a mechanism is, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The CLI name.
    pub name: &'static str,
    pub acts_at: &'static [ActsAt],
    /// The anomaly it is meant to exclude (the checker decides whether it does).
    pub targets: Anomaly,
    /// Whether it reads `preds`, so the store must record provenance (a stack turns it on).
    pub provenance: bool,
    /// Mechanisms it needs, each with why.
    pub needs: &'static [(Mechanism, &'static str)],
    /// Mechanisms it cannot stack with, each with why.
    pub excludes: &'static [(Mechanism, &'static str)],
    /// One line: what it does.
    pub summary: &'static str,
}
