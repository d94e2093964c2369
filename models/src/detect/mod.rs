//! Anomaly detectors (SPEC §3): one file per anomaly, each in three forms.
//!
//! Each anomaly's file ([`a1`], [`a2`], [`a3`] with its residue form, [`a4`], [`a6`], and
//! [`l1_struct`] for the property A1 is read against) holds its witness type and its forms:
//!
//! * The spec form (`spec`, run together by [`spec::detect`] and [`spec::summary`]) transcribes
//!   the definition literally: quantifiers become nested loops over records. It is slow and
//!   obviously correct; it is the reference.
//! * The fast form (`fast`, run together by [`fast::detect`], which shares one pass over the
//!   reads and the per-cell [`write_index`]) computes the same witness set in near-linear time
//!   for large traces.
//! * The stream form (a method of [`stream::Stream`], whose common loop is in [`stream`])
//!   computes them again over a log read once, in bounded memory, reporting each witness when
//!   the record that completes it arrives, as a [`stream::Found`]: what `agentsim detect` runs
//!   and prints.
//!
//! The shared files name every anomaly in exhaustive `match`es on [`Anomaly`] ([`Report`],
//! [`Summary`], [`stream::Found`]), so a new anomaly's file is wired in where the compiler says.
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

pub mod a1;
pub mod a2;
pub mod a3;
pub mod a4;
pub mod a6;
pub mod fast;
pub mod l1_struct;
mod read_pass;
pub mod spec;
pub mod stream;
pub mod witnesses;
pub mod write_index;

pub use crate::anomaly::Anomaly;
pub use a1::A1Witness;
pub use a2::{A2Reason, A2Witness};
pub use a3::{A3ResidueWitness, A3Witness};
pub use a4::{A4Read, A4Witness};
pub use a6::A6Witness;
pub use l1_struct::L1StructViolation;
pub use witnesses::{Summary, Witnesses};

/// The witnesses `each` visits, sorted (the spec forms' complete lists).
fn collect<T: Ord>(each: impl FnOnce(&mut dyn FnMut(T))) -> Vec<T> {
    let mut out = Vec::new();
    each(&mut |w| out.push(w));
    // On a valid history the loops visit witnesses in order already (preds are sorted).
    out.sort_unstable();
    out
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
