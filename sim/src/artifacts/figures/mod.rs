//! The figures of `agentsim reproduce`, one file per figure, each a pure function
//! `render(&Data) -> String` from a plain data struct to SVG text.
//!
//! The data structs are the interface to the harness: the checker matrix, the twins, the
//! workloads, the sweep and the checker's state counts fill them, and the renderers never
//! compute results themselves (apart from Wilson intervals from k/N, see [`style::Count`]).
//! Every renderer is deterministic: the same data gives the same bytes, on any machine, because
//! plotters lays text out with a fixed estimate instead of a font library. A pass of the tests
//! here shows layout and determinism; it does not show the numbers drawn are right.

pub mod bars;
pub mod hasse;
pub mod hasse_stacks;
pub mod pareto;
pub mod runtime_matrix;
pub mod states;
pub mod style;
pub mod sweep;
pub mod twins;
pub mod workloads;

pub use hasse::HasseData;
pub use hasse_stacks::HasseStacks;
pub use pareto::{ParetoData, ParetoPoint};
pub use runtime_matrix::{MatrixCell, MatrixData, MatrixRow};
pub use states::{StateCountData, StatePoint, StateSeries};
pub use style::{Count, Estimate};
pub use sweep::{SweepData, SweepIntervals, SweepPoint, SweepSeries};
pub use twins::{TwinGroup, TwinsData};
pub use workloads::{WorkloadData, WorkloadRow};
