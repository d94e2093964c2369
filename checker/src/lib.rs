//! `agentsim-checker`: exhaustive exploration of the agentsim model (SPEC §1) on stateright.
//!
//! [`PaperModel`] is the paper-faithful transition system over a packed state encoding;
//! [`explore`] is a parallel BFS that counts states the way TLC does; [`engine::trace`] finds
//! shortest counterexamples deterministically and [`models::render`] renders them (steps,
//! action-index path, ITF JSON). [`ReplicatedModel`] is SPEC §6's replicated store composed
//! with any runtime, where A4 (split view) lives; [`jobs::replicated_run`] checks it. Runtimes
//! are stacks of mechanisms (`agentsim_models::runtime::Stack`); [`jobs::realize`] searches for
//! the smallest stack that prevents exactly each of the 16 lattice points.
//! Everything checked is checked at the given finite bounds only.
//!
//! Three rooms, importing one way only: [`engine`] (the exploration machinery, generic over
//! any [`Space`]) <- [`models`] (the transition systems) <- [`jobs`] (what runs a model to
//! answer a question). [`config`] and [`property`] are the vocabulary all three share.

pub mod config;
pub mod engine;
pub mod jobs;
pub mod models;
pub mod property;

pub use config::{Bound, Bounds, BoundsError, Extensions, NotReplicated, Replication, Skew};
pub use engine::explore::{explore, ExploreOptions, Outcome};
pub use engine::space::{Space, StateView};
pub use jobs::run::{check, CheckConfig, CheckReport, Counterexample, Verdict};
pub use models::action::Action;
pub use models::composed::RuntimeModel;
pub use models::packed::PackedState;
pub use models::paper::PaperModel;
pub use models::replicated::{RepAction, ReplicatedModel};
pub use property::{PropSet, Property};
