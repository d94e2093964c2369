//! The transition systems: the paper-faithful model over its packed encoding ([`paper`],
//! [`packed`], [`statecodec`], [`paper_props`]), the model composed with a runtime
//! ([`composed`]), the replicated store of SPEC §6 ([`replicated`], [`replicated_action`]), the
//! history-free abstract model ([`abstract_model`]), the SPEC §1 actions they share
//! ([`action`]) and how those actions and states read as text and ITF ([`render`]).
//!
//! Models implement the engine's `Space` and may use the engine; they do not run checks,
//! matrices or searches for a question: that is the `jobs` room, which models never import
//! (their tests included).

pub mod abstract_model;
pub mod action;
pub mod composed;
pub mod packed;
pub mod paper;
pub mod paper_props;
pub mod render;
pub mod replicated;
pub mod replicated_action;
pub mod statecodec;
