//! History-free property monitors (SPEC §5.2): A1, A2, A3 (preds form and residue form), A6
//! and `L1_struct` decided from a bounded [`Summary`] updated at each transition, instead of
//! from the whole log; and A4 for the replicated store ([`a4`]).
//!
//! [`summary`] holds the state and its updates, [`canon`] the commit orders it can be
//! written in, [`alpha`] computes the same state directly from a concrete store (the
//! abstraction function the equivalence tests use), [`props`] names the properties.
//! [`Monitor`] bundles a summary with the [`Need`] it was built for, for drivers that feed it
//! one event at a time.
//!
//! What a monitor's verdict means: the spec-form detector's verdict on the log the events
//! describe. That equality is tested exhaustively at small bounds for every runtime (the
//! checker's `abstract_model` tests); it is not proven for every history.

pub mod a4;
pub mod alpha;
pub mod canon;
pub mod props;
pub mod summary;

pub use canon::{Order, CANDIDATES_MAX};
pub use props::{Prop, Props};
pub use summary::{
    cells, nibbles, remap, val, Entry, Need, Node, PendingSummary, Read, Summary, Write, NODES_MAX,
};

/// A summary with the need it was built for, fed one event at a time. `T` tags nodes (a log
/// index, for a driver that must name records in retractions).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Monitor<T> {
    pub need: Need,
    pub summary: Summary<T>,
}

impl<T: Clone + PartialEq> Monitor<T> {
    /// A monitor of the empty log over `agents` agents.
    pub fn new(need: Need, agents: usize) -> Self {
        Monitor {
            need,
            summary: Summary::new(agents),
        }
    }

    /// `StartRead` of agent `slot`.
    pub fn begin(&mut self, slot: usize, read: Read) {
        self.summary.begin(&self.need, slot, read);
    }

    /// `CompleteWrite` of agent `slot` (committed or aborted), its record tagged `tag`.
    pub fn commit(&mut self, slot: usize, write: &Write, tag: T) {
        self.summary.commit(&self.need, slot, write, tag);
    }

    /// The records tagged `dead` were aborted by a retraction (the root and its cascade).
    /// Records the summary no longer keeps are ignored: they cannot change a verdict.
    pub fn retract(&mut self, dead: &[T]) {
        let mask = dead
            .iter()
            .filter_map(|t| self.summary.position(t))
            .fold(0u16, |m, k| m | 1 << k);
        if self.need.retraction {
            self.summary.kill(&self.need, mask);
        }
    }

    /// Tool `t` was removed or changed its signature.
    pub fn tool_changed(&mut self, t: u8) {
        self.summary.tool_changed(t);
    }

    /// The watched properties the log violates now.
    pub fn verdict(&self) -> Props {
        self.summary.verdict(&self.need)
    }
}
