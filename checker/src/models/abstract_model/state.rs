//! The abstract state, as data: the summary, memory, registry and op counter. The model
//! (`model.rs`) explores it and the codec (`codec.rs`) packs it; both stand above this file.

use agentsim_models::monitor::Summary;

/// An abstract state.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct AbsState {
    pub summary: Summary<()>,
    /// 4 bits per cell.
    pub memory: u32,
    /// Tools present (bit t).
    pub tools: u8,
    /// Signature versions, 4 bits per tool.
    pub versions: u16,
    /// Records appended (0 when the log is unbounded).
    pub ops: u8,
}
