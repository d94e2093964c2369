//! A2 phantom-tool (SPEC §3, extension 4), in spec, fast and stream form, with its witness
//! type.
//!
//! Definition: planned_tool ≠ NULL, planned_tool ∈ read_registry, and planned_tool ∉
//! write_registry or its signature version differs. Only non-aborted records exhibit A2 (see
//! [`crate::detect`]). The witness is per record, so the fast and stream forms are one test of
//! each record ([`of`]) and the stream reports it on arrival.

use super::stream::{Found, Sink, Stream};
use crate::names::Tool;
use crate::record::OpRecord;

/// Why a planned tool is a phantom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum A2Reason {
    /// The tool was not in the registry at write time.
    Removed,
    /// The tool's signature version changed between read and write (extension 4).
    VersionChanged { read: u32, write: u32 },
}

/// A2: `record` planned `tool`, seen at read time, gone or changed at write time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct A2Witness {
    pub record: usize,
    pub tool: Tool,
    pub reason: A2Reason,
}

/// Spec form: every witness, sorted.
pub fn spec(r: &[OpRecord]) -> Vec<A2Witness> {
    super::collect(|f| spec_each(r, f))
}

/// [`spec`]'s witnesses, in order, to `out`.
pub fn spec_each(r: &[OpRecord], out: &mut dyn FnMut(A2Witness)) {
    for (i, ri) in r.iter().enumerate() {
        if ri.aborted {
            continue;
        }
        let Some(t) = ri.planned_tool else { continue };
        let Some(seen) = ri.read_registry.get(t) else {
            continue;
        };
        let reason = match ri.write_registry.get(t) {
            None => A2Reason::Removed,
            Some(now) if now.version != seen.version => A2Reason::VersionChanged {
                read: seen.version,
                write: now.version,
            },
            Some(_) => continue,
        };
        out(A2Witness {
            record: i,
            tool: t,
            reason,
        });
    }
}

/// Fast form: a non-aborted record whose planned tool was in its read registry and is missing
/// from, or at another version in, its write registry.
pub fn fast(r: &[OpRecord]) -> Vec<A2Witness> {
    r.iter()
        .enumerate()
        .filter_map(|(i, ri)| of(i, ri))
        .collect()
}

/// Record `i`'s witness, if it has one (the fast and stream forms).
pub(crate) fn of(i: usize, ri: &OpRecord) -> Option<A2Witness> {
    let tool = ri.planned_tool.filter(|_| !ri.aborted)?;
    let seen = ri.read_registry.get(tool)?;
    let reason = match ri.write_registry.get(tool) {
        None => A2Reason::Removed,
        Some(now) if now.version == seen.version => return None,
        Some(now) => A2Reason::VersionChanged {
            read: seen.version,
            write: now.version,
        },
    };
    Some(A2Witness {
        record: i,
        tool,
        reason,
    })
}

impl Stream {
    /// Stream form: record `j`'s witness, complete on arrival.
    pub(super) fn a2(&mut self, j: u64, r: &OpRecord, line: u64, sink: &mut impl Sink) {
        if let Some(w) = of(j as usize, r) {
            if self.out.a2.push(w) {
                let agent = r.agent;
                sink.found(line, Found::A2 { w, agent });
            }
        }
    }
}
