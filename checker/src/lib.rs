//! `agentsim-checker`: exhaustive exploration of the agentsim model (SPEC §1) on stateright.
//!
//! [`PaperModel`] is the paper-faithful transition system over a packed state encoding;
//! [`explore`] is a parallel BFS that counts states the way TLC does; [`trace`] finds shortest
//! counterexamples deterministically and renders them (steps, action-index path, ITF JSON).
//! [`ReplicatedModel`] is SPEC §6's replicated store composed with any runtime, where A4
//! (split view) lives; [`replicated_run`] checks it. Runtimes are stacks of mechanisms
//! (`agentsim_models::runtime::Stack`); [`realize`] searches for the smallest stack that
//! prevents exactly each of the 16 lattice points.
//! Everything checked is checked at the given finite bounds only.

pub mod abstract_model;
pub mod action;
pub mod codec;
pub mod composed;
pub mod config;
pub mod control;
pub mod explore;
pub mod fpset;
pub mod frontier;
pub mod matrix;
pub mod packed;
pub mod paper;
pub mod paper_props;
pub mod property;
pub mod realize;
pub mod render;
pub mod replicated;
pub mod replicated_action;
pub mod replicated_run;
pub mod run;
pub mod space;
pub mod statecodec;
pub mod trace;
pub mod witness_point;
pub mod witness_search;
pub mod witnesses;

pub use action::Action;
pub use composed::RuntimeModel;
pub use config::{Bound, Bounds, BoundsError, Extensions, NotReplicated, Replication, Skew};
pub use explore::{explore, ExploreOptions, Outcome};
pub use packed::PackedState;
pub use paper::PaperModel;
pub use property::{PropSet, Property};
pub use replicated::{RepAction, ReplicatedModel};
pub use run::{check, CheckConfig, CheckReport, Counterexample, Verdict};
pub use space::{Space, StateView};
