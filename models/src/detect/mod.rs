//! Anomaly detectors (SPEC §3), each in two forms.
//!
//! * [`spec`] transcribes the definitions literally: quantifiers become nested loops over
//!   records. It is slow and obviously correct; it is the reference.
//! * [`fast`] computes the same witness sets in near-linear time for large traces.
//! * [`stream`] computes them again over a log read once, in bounded memory, reporting each
//!   witness when the record that completes it arrives; it is what `agentsim detect` runs.
//!
//! [`witnesses`] counts every witness and keeps a bounded prefix of each list ([`Summary`]);
//! the spec form and the stream agree on counts and kept prefixes.
//!
//! A4 (split view) lives only in the replicated model of SPEC §6: it is in [`a4`], with its
//! own witness type, outside [`Report`] and outside the lattice of SPEC §4.
//!
//! Both return the **complete, sorted** set of witnesses, so agreement is plain equality of
//! [`Report`]s. A pass says the history has no such anomaly *as defined*; it says nothing about
//! anomalies outside the catalogue (e.g. cognitive failures of the model).
//!
//! ## Aborted records
//! SPEC §1 extension 3 lets a record be aborted at commit (its writes never applied) or
//! retracted later. The definitions of §3 predate aborts; we read them as follows and say so
//! in every detector: A1, A2 and A6 are exhibited only by records that are not aborted, and
//! A1's intervening writer must not be aborted either (an aborted op's writes never became
//! visible). A3 is *about* aborted records. The residue form of A3 and `L1_struct` consider
//! only non-aborted writers as producers. In paper-faithful histories nothing is aborted, so
//! the reading changes nothing there.

pub mod a4;
pub mod fast;
pub mod spec;
pub mod stream;
pub mod witnesses;
pub mod write_index;

pub use witnesses::{Summary, Witnesses};

use crate::names::{Cell, Tool, Value};

/// The four anomalies of the single-store model (A4 lives in the replicated model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Anomaly {
    /// Stale generation.
    A1,
    /// Phantom tool.
    A2,
    /// Causal cascade (preds form).
    A3,
    /// Tool-effect reordering.
    A6,
}

impl Anomaly {
    /// All four, in lattice order.
    pub const ALL: [Anomaly; 4] = [Anomaly::A1, Anomaly::A2, Anomaly::A3, Anomaly::A6];

    /// The short name (`"A1"` …).
    pub fn name(self) -> &'static str {
        match self {
            Anomaly::A1 => "A1",
            Anomaly::A2 => "A2",
            Anomaly::A3 => "A3",
            Anomaly::A6 => "A6",
        }
    }

    /// Parses a short name.
    pub fn parse(s: &str) -> Option<Anomaly> {
        Anomaly::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s))
    }
}

impl std::fmt::Display for Anomaly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A1: record `reader` read `cell`; `writer` (another agent) committed a different value to it
/// strictly inside `reader`'s generation window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A1Witness {
    pub reader: usize,
    pub writer: usize,
    pub cell: Cell,
}

/// Why a planned tool is a phantom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum A2Reason {
    /// The tool was not in the registry at write time.
    Removed,
    /// The tool's signature version changed between read and write (extension 4).
    VersionChanged { read: u32, write: u32 },
}

/// A2: `record` planned `tool`, seen at read time, gone or changed at write time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A2Witness {
    pub record: usize,
    pub tool: Tool,
    pub reason: A2Reason,
}

/// A3 (preds form): `record` survives while its predecessor `pred` is aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A3Witness {
    pub record: usize,
    pub pred: usize,
}

/// A3 residue form: `record` read non-NULL `value` of `cell` that no other non-aborted record
/// wrote at or before its read time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A3ResidueWitness {
    pub record: usize,
    pub cell: Cell,
    pub value: Value,
}

/// A6: `record` externalized its (≥ 2) effects in an order that permutes its issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A6Witness {
    pub record: usize,
}

/// A violation of `L1_struct`: `record` read `read` from `cell` where the latest committed
/// write at or before its read time was `expected` (NULL if none), by `writer` if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct L1StructViolation {
    pub record: usize,
    pub cell: Cell,
    pub read: Value,
    pub expected: Value,
    pub writer: Option<usize>,
}

/// Every detector's complete, sorted witness set for one history.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub a1: Vec<A1Witness>,
    pub a2: Vec<A2Witness>,
    pub a3: Vec<A3Witness>,
    pub a3_residue: Vec<A3ResidueWitness>,
    pub a6: Vec<A6Witness>,
    /// Violations of `L1_struct`; empty means the structural snapshot condition holds.
    pub l1_struct: Vec<L1StructViolation>,
}

impl Report {
    /// Whether the history exhibits `a`.
    pub fn has(&self, a: Anomaly) -> bool {
        match a {
            Anomaly::A1 => !self.a1.is_empty(),
            Anomaly::A2 => !self.a2.is_empty(),
            Anomaly::A3 => !self.a3.is_empty(),
            Anomaly::A6 => !self.a6.is_empty(),
        }
    }

    /// The exact set of anomalies exhibited, in lattice order.
    pub fn anomalies(&self) -> Vec<Anomaly> {
        Anomaly::ALL.into_iter().filter(|&a| self.has(a)).collect()
    }

    /// Whether `L1_struct` holds.
    pub fn l1_struct_holds(&self) -> bool {
        self.l1_struct.is_empty()
    }
}
