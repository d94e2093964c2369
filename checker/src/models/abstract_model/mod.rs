//! The history-free abstract model (SPEC §5.2) and what connects it to the concrete one.
//!
//! [`model`] is the transition system over [`agentsim_models::monitor::Summary`] states,
//! [`mechanism`] the SPEC §5.1 mechanisms as decisions over summaries (a runtime is a
//! [`Stack`]), [`alpha`] the abstraction function from concrete stores. A verdict of this
//! model is a verdict of the concrete one only where the equivalence tests
//! (`jobs::abstract_equivalence`) have compared the two. Checking it and its matrix are jobs
//! (`jobs::check_abstract`, `jobs::abstract_matrix`).

pub mod alpha;
pub mod codec;
pub mod concretize;
pub mod mechanism;
mod memo;
pub mod model;
pub mod state;

#[cfg(test)]
mod monitor_tests;
#[cfg(test)]
mod symmetry_tests;

pub use mechanism::Policies;
pub use model::{AbsState, AbstractConfig, AbstractModel};
