//! The generic exploration machinery: what any model must offer to be explored ([`space`]), the
//! parallel BFS with TLC's counting ([`explore`]), its seen set ([`fpset`]) and levels kept
//! packed or spilled ([`frontier`], with the serde state [`codec`]), the deterministic
//! shortest-counterexample search and replay ([`trace`]), and what steers a long search from
//! outside ([`control`]).
//!
//! Nothing here knows a particular transition system or question: the models live in
//! `models`, what runs them in `jobs`. This room imports neither (its tests included); it
//! sees only the crate's shared vocabulary (`config`, `property`).

pub mod codec;
pub mod control;
pub mod explore;
pub mod fair;
pub mod fpset;
pub mod frontier;
pub mod space;
pub mod trace;
