//! The abstraction function α from the concrete model's states (the runtime's store) to the
//! abstract model's, and its tagged form that says which log record each kept node is.
//!
//! α is [`summarize`] (the summary computed from the log by the definitions) plus memory,
//! registry and, when the log is bounded, its length; a full bounded log is sealed
//! ([`Summary::seal`]) as the abstract model seals it. The equivalence tests check that α
//! commutes with every transition; this file only computes it.

use super::model::{AbsState, AbstractModel};
use agentsim_models::monitor::alpha::{packed, summarize};
use agentsim_models::monitor::Summary;
use agentsim_models::runtime::Store;

/// α's summary with each kept node tagged by its log index.
pub fn tagged(m: &AbstractModel, st: &Store) -> Summary<u32> {
    let mut s = summarize(m.need(), st, m.config().bounds.agents as usize);
    if m.full(st.log().len() as u8) {
        s.seal(m.need());
    }
    s
}

/// α(st).
pub fn alpha(m: &AbstractModel, st: &Store) -> AbsState {
    alpha_with(m, st, &tagged(m, st))
}

/// α(st), given its tagged summary.
pub fn alpha_with(m: &AbstractModel, st: &Store, tagged: &Summary<u32>) -> AbsState {
    let ops = st.log().len() as u8;
    let mut tools = 0u8;
    let mut versions = 0u16;
    for e in st.registry().entries() {
        tools |= 1 << e.tool.0;
        versions |= (e.version as u16) << (4 * e.tool.0);
    }
    AbsState {
        summary: tagged.untagged(),
        memory: if m.full(ops) || !m.need().values() {
            0
        } else {
            packed(st.memory())
        },
        tools,
        versions,
        ops: if m.config().bounded { ops } else { 0 },
    }
}
