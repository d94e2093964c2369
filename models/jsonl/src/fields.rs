//! What both readers of a record line share, below both: the key slots, how a reused record is
//! emptied, and the `co`-is-a-permutation-of-`io` check. The spec form (`read.rs`) and the
//! fast scanner (`fast.rs`) each call these, so neither reaches into the other for them.

use agentsim_models::names::{Agent, Cell, Value};
use agentsim_models::record::OpRecord;

/// The index of a known key in [`KEYS`](super::KEYS).
pub(super) fn slot(key: &[u8]) -> Option<usize> {
    Some(match key {
        b"agent" => 0,
        b"read_set" => 1,
        b"read_values" => 2,
        b"read_registry" => 3,
        b"planned_tool" => 4,
        b"read_time" => 5,
        b"write_set" => 6,
        b"write_values" => 7,
        b"write_registry" => 8,
        b"write_time" => 9,
        b"io" => 10,
        b"co" => 11,
        b"aborted" => 12,
        b"preds" => 13,
        b"read_replica" => 14,
        b"read_version" => 15,
        _ => return None,
    })
}

/// Every field emptied, allocations kept.
pub(super) fn reset(r: &mut OpRecord) {
    r.agent = Agent::default();
    r.read_set.clear();
    r.read_values.clear();
    r.read_registry.clear();
    r.planned_tool = None;
    r.read_time = 0;
    r.write_set.clear();
    r.write_values.clear();
    r.write_registry.clear();
    r.write_time = 0;
    r.io.clear();
    r.co.clear();
    r.aborted = false;
    r.preds.clear();
    r.read_meta.clear();
}

/// Whether `co` lists exactly the effects of `io` (as multisets).
pub(super) fn is_permutation(
    io: &[(Cell, Value)],
    co: &[(Cell, Value)],
    buf: &mut Vec<(Cell, Value)>,
) -> bool {
    if io == co {
        return true;
    }
    if io.len() != co.len() {
        return false;
    }
    buf.clear();
    buf.extend_from_slice(io);
    buf.sort_unstable();
    let mut other = co.to_vec();
    other.sort_unstable();
    *buf == other
}
