//! Decidability from evidence: each anomaly's [`Verdict`] derived from what an input actually
//! contained, for every reader (OTel, OpenInference, MCP) to share.
//!
//! A reader counts what it saw — memory operations and the attributes that named their
//! records, registry observations and the attributes they came from, retractions — and these
//! functions turn the counts into verdicts whose text names those attributes. The rules:
//!
//! * **A1**: no memory operation seen → *undecidable* (the memory may be reached some way the
//!   input does not show: a tool, a database client); records a read or write did not name →
//!   *undecidable*; cells compared by derived version, or coarser than records (a store) →
//!   *upper bound*; otherwise *decided*, by content.
//! * **A2**: only a planned call that ran is a plan (SPEC §3: A2 is a write that used a tool
//!   no longer in the registry, and a call refused at call time, or never dispatched, wrote
//!   nothing); the calls that did not run are counted with the evidence that says so. No
//!   call ran → *decided*; a tool call whose plan saw no registry → *undecidable*; a planned
//!   call the input cannot show ran or not → *lower bound* (a witness among the calls that
//!   ran is real); otherwise *lower bound*: a registry observed at some instants shows a change
//!   only at the next observation, so a witness is real and "none" is not an answer.
//!   Registries from names only cannot show a signature change (said so). A witness's note
//!   names the span that shows its call ran ([`phantom_notes`]).
//! * **A3**: nothing retracted that the input shows → *undecidable* (a workflow that discards
//!   a result without an ERROR span leaves no trace); retractions seen → *lower bound*
//!   (provenance derived from log order: a survivor that read a retracted write is real; one
//!   the input does not show is missed).
//!
//! What this does not prove: the counts are the reader's; a reader that counts a memory
//! operation it did not map makes A1 look decidable. Each reader's tests pin its counts.

use crate::report::Verdict;
use std::collections::BTreeMap;

/// What a reader saw of memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryEvidence {
    /// What the memory operations came from, with how many spans (e.g.
    /// `search_memory spans` → 2, `execute_tool read_profile (m.toml)` → 3).
    pub sources: BTreeMap<String, u64>,
    /// Distinct cells read or written.
    pub cells: usize,
    /// Of those, cells compared by derived version (their content was not captured).
    pub by_version: usize,
    /// Where records went unnamed: store (or tool) → how many operations, and why.
    pub unidentified: BTreeMap<String, u64>,
    /// Why a cell may be coarser than a record (e.g. Strands names stores, not records).
    pub coarse: Option<String>,
    /// What was looked for, for the "nothing seen" sentence.
    pub looked_for: String,
}

/// What a reader saw of tool registries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryEvidence {
    /// Tool calls (planned tools) in the input.
    pub tool_calls: u64,
    /// Of those, calls whose plan saw no registry.
    pub without_registry: u64,
    /// Observation source (an attribute on a span kind) → how many observations.
    pub observed: BTreeMap<String, u64>,
    /// Observations that gave tool names only.
    pub names_only: u64,
    /// Changes observed (a tool gone, a definition changed).
    pub changes: usize,
    /// How registries are shared (e.g. "per agent", "groups declared in m.toml").
    pub sharing: String,
    /// Dispatches whose registry took a change another agent observed.
    pub foreign_applied: u64,
    /// Planned calls the input shows did not run (refused, failed, never dispatched): the
    /// evidence → how many. They are not plans.
    pub not_run: BTreeMap<String, u64>,
    /// Planned calls the input cannot show ran or not (no span of the call, no error).
    pub unknown_run: u64,
}

/// The planned calls that are not plans, as a reader counts them: those the input shows did
/// not run (the evidence → how many), and those it cannot show ran or not; they become
/// [`RegistryEvidence::not_run`] and [`RegistryEvidence::unknown_run`].
#[derive(Clone, Debug, Default)]
pub struct Runs {
    pub not_run: BTreeMap<String, u64>,
    pub unknown: u64,
}

/// What a reader saw of aborts and retractions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetractionEvidence {
    /// What marked a retraction (e.g. `invoke_agent with status ERROR`) → how many, with
    /// writes discarded.
    pub retracted: BTreeMap<String, u64>,
    /// Steps recorded aborted (every write failed).
    pub aborted: u64,
}

pub(crate) fn list(m: &BTreeMap<String, u64>) -> String {
    let v: Vec<String> = m.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    v.join(", ")
}

/// A1 from what memory the input showed.
pub fn a1(e: &MemoryEvidence) -> Verdict {
    if !e.unidentified.is_empty() {
        return Verdict::Undecidable {
            reason: format!(
                "memory operations on {} did not say which records they read or wrote \
                 (spans read: {})",
                list(&e.unidentified),
                list(&e.sources)
            ),
        };
    }
    if e.cells == 0 {
        return Verdict::Undecidable {
            reason: format!(
                "no memory operation seen ({}): memory reached another way (a tool not in a \
                 --tool-memory mapping, a database client) is invisible, so a lost update \
                 cannot be told",
                e.looked_for
            ),
        };
    }
    let from = format!("{} cells from {}", e.cells, list(&e.sources));
    if let Some(coarse) = &e.coarse {
        return Verdict::UpperBound {
            basis: format!("{from}; {coarse}"),
        };
    }
    if e.by_version > 0 {
        return Verdict::UpperBound {
            basis: format!(
                "{from}; {} of them compared by derived version (their content was not \
                 captured): a rewrite with equal content counts as a change",
                e.by_version
            ),
        };
    }
    Verdict::Decided {
        basis: format!("{from}, compared by content"),
    }
}

/// Whether a step's planned tool was in its read registry and is gone from, or changed in,
/// its write registry: the step is an A2 witness (SPEC §3), for its note.
pub fn phantom(step: &crate::build::Step) -> bool {
    let Some(tool) = step.planned_tool.as_deref() else {
        return false;
    };
    let find = |r: &[(String, u32)]| r.iter().find(|(n, _)| n == tool).map(|(_, v)| *v);
    !step.aborted
        && find(&step.read_registry).is_some_and(|seen| find(&step.write_registry) != Some(seen))
}

/// One note per A2 witness (at most ten, then how many more): the record, and the span that
/// shows its planned call ran; `calls` are (record index, span) pairs.
pub fn phantom_notes(h: &agentsim_models::History, calls: &[(usize, String)]) -> Vec<String> {
    const SHOWN: usize = 10;
    let mut out: Vec<String> = (calls.iter().take(SHOWN))
        .map(|(i, span)| {
            let r = &h.records[*i];
            let tool = r
                .planned_tool
                .map_or("?".to_owned(), |t| h.names.tool_name(t));
            format!(
                "record {i} ({}): its planned call of {tool} ran ({span}), after the tool \
                 left or changed",
                h.names.agent_name(r.agent)
            )
        })
        .collect();
    if calls.len() > SHOWN {
        out.push(format!(
            "… and {} more planned calls like these",
            calls.len() - SHOWN
        ));
    }
    out
}

/// The planned calls that did not run, for a verdict's text ("" when none).
fn not_run(e: &RegistryEvidence) -> String {
    if e.not_run.is_empty() {
        return String::new();
    }
    let n: u64 = e.not_run.values().sum();
    format!(
        "; {n} planned calls did not run and wrote nothing, so none is a witness ({})",
        list(&e.not_run)
    )
}

/// A2 from what registries the input showed.
pub fn a2(e: &RegistryEvidence) -> Verdict {
    let not_run = not_run(e);
    if e.tool_calls == 0 && e.unknown_run == 0 {
        return Verdict::Decided {
            basis: format!("no tool calls: no planned tool{not_run}"),
        };
    }
    if e.without_registry > 0 {
        return Verdict::Undecidable {
            reason: format!(
                "{} of {} tool calls were planned with no registry observed (no \
                 gen_ai.tool.definitions or gen_ai.agent.tools on their generation or \
                 invoke_agent span)",
                e.without_registry, e.tool_calls
            ),
        };
    }
    if e.unknown_run > 0 {
        return Verdict::LowerBound {
            basis: format!(
                "{} planned calls have no span that shows whether they ran (no tool span, no \
                 error): a witness among the calls that ran is real, and none cannot be \
                 told{not_run}",
                e.unknown_run
            ),
        };
    }
    let names = if e.names_only > 0 {
        format!(
            "; {} observations give tool names only (gen_ai.agent.tools), which cannot show a \
             signature change",
            e.names_only
        )
    } else {
        String::new()
    };
    Verdict::LowerBound {
        basis: format!(
            "registry observed at {} ({} changes seen; registries {}; {} dispatches took a \
             change another agent's spans showed): a change is seen at the next observation \
             after it, so a witness is real and none cannot be told{names}{not_run}",
            list(&e.observed),
            e.changes,
            e.sharing,
            e.foreign_applied
        ),
    }
}

/// A3 from what aborts and retractions the input showed.
pub fn a3(e: &RetractionEvidence) -> Verdict {
    if e.retracted.is_empty() {
        let aborted = match e.aborted {
            0 => String::new(),
            n => format!(" ({n} steps aborted, all of whose writes failed: never read)"),
        };
        return Verdict::Undecidable {
            reason: format!(
                "nothing retracted that the spans show{aborted}: a run whose results a \
                 workflow discards without an ERROR span leaves no trace"
            ),
        };
    }
    Verdict::LowerBound {
        basis: format!(
            "retracted: {} (their memory writes discarded); preds = the latest write before \
             each read (derived from log order): a survivor that read a retracted write is \
             real, a retraction the spans do not show is missed",
            list(&e.retracted)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_seen_is_never_decided() {
        let e = MemoryEvidence {
            looked_for: "search_memory, memory.* spans".into(),
            ..MemoryEvidence::default()
        };
        assert_eq!(a1(&e).status(), "undecidable");
        assert!(a1(&e).why().contains("search_memory, memory.* spans"));
        let mut seen = e.clone();
        seen.cells = 2;
        seen.sources
            .insert("execute_tool write_profile (m.toml)".into(), 1);
        assert_eq!(a1(&seen).status(), "decided");
        assert!(a1(&seen).why().contains("write_profile (m.toml) ×1"));
        seen.coarse = Some("a store is one cell".into());
        assert_eq!(a1(&seen).status(), "upper_bound");
        assert_eq!(a3(&RetractionEvidence::default()).status(), "undecidable");
    }

    #[test]
    fn a2_is_decided_only_without_tool_calls() {
        let mut e = RegistryEvidence::default();
        assert_eq!(a2(&e).status(), "decided");
        e.tool_calls = 2;
        e.observed
            .insert("gen_ai.agent.tools on invoke_agent".into(), 1);
        e.names_only = 1;
        let v = a2(&e);
        assert_eq!(v.status(), "lower_bound");
        assert!(
            v.why().contains("cannot show a signature change"),
            "{}",
            v.why()
        );
        e.without_registry = 1;
        assert_eq!(a2(&e).status(), "undecidable");
    }
}
