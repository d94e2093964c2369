//! What runs a model to answer a question: one check end to end ([`run`], and
//! [`replicated_run`] for SPEC §6), the runtime × anomaly matrix ([`runtime_matrix`]) and its
//! abstract-model twin ([`abstract_matrix`], over [`check_abstract`]), witness histories for the
//! lattice points ([`lattice_witnesses`]) and the smallest stacks realizing them ([`realize`]);
//! [`vacuity`] decides, before a check explores, which properties its model cannot violate.
//!
//! Jobs use the engine and the models; neither imports a job. No transition system and no
//! exploration machinery lives here.

#[cfg(test)]
mod abstract_equivalence;
pub mod abstract_matrix;
pub mod check_abstract;
pub mod lattice_witnesses;
pub mod liveness;
pub mod realize;
pub mod replicated_run;
pub mod run;
pub mod runtime_matrix;
pub mod vacuity;
