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
//! Every anomaly is named by the catalogue type [`Anomaly`] (`crate::anomaly`). A4 (split view,
//! SPEC §6) is decided in [`a4`] and reported in [`Report`] beside the others; it is outside the
//! lattice of SPEC §4 and empty on every history without replica metadata.
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

pub use crate::anomaly::Anomaly;
pub use a4::A4Witness;
pub use witnesses::{Summary, Witnesses};

use crate::names::{Cell, Tool, Value};

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
    /// Split views (SPEC §6); empty on histories without replica metadata.
    pub a4: Vec<A4Witness>,
    /// Violations of `L1_struct`; empty means the structural snapshot condition holds.
    pub l1_struct: Vec<L1StructViolation>,
}

impl Report {
    /// How many witnesses of `a` the history has.
    pub fn count(&self, a: Anomaly) -> usize {
        match a {
            Anomaly::A1 => self.a1.len(),
            Anomaly::A2 => self.a2.len(),
            Anomaly::A3 => self.a3.len(),
            Anomaly::A3Residue => self.a3_residue.len(),
            Anomaly::A4 => self.a4.len(),
            Anomaly::A6 => self.a6.len(),
        }
    }

    /// Whether the history exhibits `a`.
    pub fn has(&self, a: Anomaly) -> bool {
        self.count(a) > 0
    }

    /// The exact set of lattice anomalies exhibited (what the history exhibits), in lattice
    /// order.
    pub fn anomalies(&self) -> Vec<Anomaly> {
        Anomaly::LATTICE
            .into_iter()
            .filter(|&a| self.has(a))
            .collect()
    }

    /// Every catalogue entry exhibited, in catalogue order.
    pub fn exhibited(&self) -> Vec<Anomaly> {
        Anomaly::ALL.into_iter().filter(|&a| self.has(a)).collect()
    }

    /// Whether `L1_struct` holds.
    pub fn l1_struct_holds(&self) -> bool {
        self.l1_struct.is_empty()
    }
}
