//! Trace gaps: what an export lacks or mistypes that the mapping needs, each named in the report
//! with a count and an example span, and the verdicts each one lowers.
//!
//! A gap never changes the history (the mapping's choice stays what `super` documents); it
//! changes what the detectors' answers on it are worth. The rules, one per gap (docs/ingest.md
//! "What each source can decide" says the same):
//!
//! * **Orphan spans** (`parentSpanId` not in the export, as when a sampler dropped the parent)
//!   and **step spans under a parent of unknown kind** (a non-GenAI or unread GenAI span, which
//!   may be an agent of another vocabulary, e.g. a framework's "chain" span): the steps reached
//!   through them have no known agent. They are read into a stand-in agent or into the
//!   enclosing agent's invocation, where their spans merge with other agents' into one step (a
//!   read and a write of two agents in one record hides an A1 witness; effects of two agents in
//!   one record make or split an A6 order) or sit apart from their real agent (a false A1).
//!   Both ways: A1 undecidable when such steps read or write memory; A6 and A2 (whose registry
//!   timeline is per agent) undecidable when they call tools.
//! * **Mistyped attributes** of keys the mapping reads: the reader treats the value as absent.
//!   `gen_ai.operation.name`: the span may have been any memory access or tool call, so A1, A2
//!   and A6 are undecidable. `gen_ai.agent.name` / `gen_ai.agent.id`: the agent is named
//!   `agent`, so its registry timeline is pooled with other mistyped agents' (A2 undecidable
//!   when it calls tools); A1 is not lowered, because invocations that overlap in time are
//!   separate actors whatever their names, and an A1 witness needs overlapping invocations.
//!   Store ids and record keys: cells merge or split, or records go unidentified (A1
//!   undecidable). `gen_ai.tool.definitions` reads as an empty registry (a false "removed") and
//!   a mistyped `gen_ai.tool.name` loses the planned tool (A2 undecidable).
//!   `gen_ai.tool.call.id`: the span id names the effect instead, which is as unique, so it is
//!   only noted.
//! * **Overlapping invocations of one agent**: each is read as its own actor (`name#2`, SPEC §1:
//!   one pending operation per actor), so an A1 witness between two of them assumes they do not
//!   share what they read and wrote; the spans do not say (A1 upper bound when they touch
//!   memory). Nothing is hidden: a step belongs to the invocation its parent links reach, not
//!   to the agent's name, so A6 (one record's effects) is not lowered.

use super::lean::{Attr, LeanSpan as Span};
use crate::report::Verdict;
use agentsim_models::Anomaly;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// How many spans have a gap, and the first one (in start order) as an example.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    pub n: u64,
    pub example: String,
    /// The example's start and trace: spans are added trace by trace, so the first in start
    /// order is kept by comparing, not by arrival.
    at: (u64, String),
}

impl Tally {
    pub fn add(&mut self, span: &Span) {
        self.add_at(span.start, span.trace(), span.id());
    }

    pub fn add_at(&mut self, start: u64, trace: &str, id: &str) {
        let first = (self.at.0, self.at.1.as_str(), self.example.as_str());
        if self.n == 0 || (start, trace, id) < first {
            self.example = id.to_owned();
            self.at = (start, trace.to_owned());
        }
        self.n += 1;
    }
}

/// The gaps of one export and what they touched.
#[derive(Clone, Default)]
pub(super) struct Gaps {
    pub orphans: Tally,
    /// Step spans whose agent search ran into a missing parent.
    pub orphaned_steps: Tally,
    pub unknown_parent: Tally,
    /// (key, expected, found) → spans.
    pub mistyped: BTreeMap<(&'static str, &'static str, &'static str), Tally>,
    pub overlapping: Tally,
    /// Steps of an invocation whose agent is unknown (orphan, unknown parent) that read or
    /// wrote memory, and that called tools.
    pub unknown_agent_memory: u64,
    pub unknown_agent_tools: u64,
    /// Steps of a mistyped-name invocation that called tools or carried definitions.
    pub unnamed_tools: u64,
    /// Steps of an overlapping invocation that read or wrote memory.
    pub overlapping_memory: u64,
    /// Spans with tool-call attributes (`gen_ai.tool.*`) that are not read as tool calls.
    pub unread_calls: Tally,
    /// Calls a generation planned with no tool span read for them (one per call, the example
    /// being the generation's span).
    pub unexecuted: Tally,
}

/// The string keys the mapping reads, and the structured ones (an array or a JSON string of one).
const STRINGS: &[&str] = &[
    "gen_ai.operation.name",
    "gen_ai.agent.name",
    "gen_ai.agent.id",
    "gen_ai.memory.store.id",
    "gen_ai.memory.record.id",
    "gen_ai.data_source.id",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
];
const ARRAYS: &[&str] = &[
    "gen_ai.memory.records",
    "gen_ai.retrieval.documents",
    "gen_ai.tool.definitions",
];

fn found(v: Attr<'_>) -> &'static str {
    let v = match v {
        Attr::Str(_) => return "a string that is not a JSON array",
        Attr::Json(v) => v,
    };
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Json::Number(_) => "a double",
        Json::String(_) => "a string that is not a JSON array",
        Json::Array(_) => "an array",
        Json::Object(_) => "a key-value list",
    }
}

/// Whether attribute `key` of `s` is present with a type the mapping cannot read.
pub(super) fn mistyped(s: &Span, key: &str) -> bool {
    s.get(key).is_some_and(|v| wrong(key, v))
}

/// Whether `v` is of a type the mapping cannot read for attribute `key`.
fn wrong(key: &str, v: Attr<'_>) -> bool {
    match v {
        Attr::Json(Json::Null) => false,
        Attr::Str(t) if ARRAYS.contains(&key) => !super::fast::is_array_text(t),
        Attr::Json(v) if ARRAYS.contains(&key) => !v.is_array(),
        Attr::Str(_) => false,
        Attr::Json(v) => !v.is_string(),
    }
}

impl Gaps {
    /// Records every mistyped key of `s` the mapping reads (each key once: a span's keys are
    /// distinct).
    pub fn check_types(&mut self, s: &Span) {
        for (key, v) in s.attrs() {
            if !key.starts_with("gen_ai.") {
                continue;
            }
            let Some(&key) = STRINGS.iter().chain(ARRAYS).find(|&&k| k == key) else {
                continue;
            };
            if wrong(key, v) {
                let expected = if ARRAYS.contains(&key) {
                    "an array or a JSON string of one"
                } else {
                    "a string"
                };
                self.mistyped
                    .entry((key, expected, found(v)))
                    .or_default()
                    .add(s);
            }
        }
    }

    fn typed(&self, keys: &[&str]) -> Option<String> {
        let hits: Vec<String> = self
            .mistyped
            .iter()
            .filter(|((k, _, _), _)| keys.contains(k))
            .map(|((k, _, f), t)| format!("{k} is {f} on {} spans (e.g. span {})", t.n, t.example))
            .collect();
        (!hits.is_empty()).then(|| hits.join(", "))
    }

    /// One note per gap, in a fixed order; none for a gap-free export.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let o = &self.orphans;
        if o.n > 0 {
            out.push(format!(
                "gap: {} orphan spans (their parentSpanId is not in the export, as when a \
                 sampler dropped the parent; e.g. span {}); {} step spans reach no agent \
                 through them",
                o.n, o.example, self.orphaned_steps.n
            ));
        }
        let u = &self.unknown_parent;
        if u.n > 0 {
            out.push(format!(
                "gap: {} step spans have a parent of a kind the reader does not know (not \
                 invoke_agent, invoke_workflow, a generation or execute_tool; it may be an \
                 agent of another vocabulary; e.g. span {}): read into the enclosing agent",
                u.n, u.example
            ));
        }
        for ((key, expected, found), t) in &self.mistyped {
            out.push(format!(
                "gap: {} spans have {key} of the wrong type (expected {expected}, found \
                 {found}; e.g. span {}): read as absent",
                t.n, t.example
            ));
        }
        let c = &self.unread_calls;
        if c.n > 0 {
            out.push(format!(
                "gap: {} spans carry tool-call attributes (gen_ai.tool.name, gen_ai.tool.call.*) \
                 but are not read as tool calls (their operation is not execute_tool; e.g. span \
                 {})",
                c.n, c.example
            ));
        }
        let p = &self.unexecuted;
        if p.n > 0 {
            out.push(format!(
                "gap: {} tool calls planned in gen_ai.output.messages have no tool span read for \
                 them (none with their gen_ai.tool.call.id; e.g. planned in span {})",
                p.n, p.example
            ));
        }
        let v = &self.overlapping;
        if v.n > 0 {
            out.push(format!(
                "gap: {} invocations overlap an earlier invocation of the same agent (e.g. \
                 span {}): each is read as its own actor (name#2, …)",
                v.n, v.example
            ));
        }
        out
    }

    /// What the gaps do to each verdict: (anomaly, lowered to undecidable?, reason).
    fn lowerings(&self, memory_cells: bool) -> Vec<(Anomaly, bool, String)> {
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        if self.orphaned_steps.n > 0 {
            unknown.push(format!("{} orphan spans", self.orphans.n));
        }
        if self.unknown_parent.n > 0 {
            unknown.push(format!(
                "{} step spans under a parent of unknown kind",
                self.unknown_parent.n
            ));
        }
        if !unknown.is_empty() {
            let why = unknown.join(" and ");
            if self.unknown_agent_memory > 0 {
                out.push((
                    Anomaly::A1,
                    true,
                    format!(
                        "{why}: the agent of {} steps that read or write memory is unknown (a \
                         witness may be a false alarm, one may be hidden in a step merged from \
                         several agents)",
                        self.unknown_agent_memory
                    ),
                ));
            }
            if self.unknown_agent_tools > 0 {
                let r = format!(
                    "{why}: the agent of {} steps that call tools is unknown (its registry and \
                     the effects merged into its records may be another agent's)",
                    self.unknown_agent_tools
                );
                out.push((Anomaly::A2, true, r.clone()));
                out.push((Anomaly::A6, true, r));
            }
        }
        if let Some(t) = self.typed(&["gen_ai.operation.name"]) {
            let r = format!("{t}: such a span may have been any memory access or tool call");
            for a in [Anomaly::A1, Anomaly::A2, Anomaly::A6] {
                out.push((a, true, r.clone()));
            }
        }
        let memory_keys = [
            "gen_ai.memory.store.id",
            "gen_ai.memory.record.id",
            "gen_ai.data_source.id",
            "gen_ai.memory.records",
            "gen_ai.retrieval.documents",
        ];
        if let Some(t) = self.typed(&memory_keys).filter(|_| memory_cells) {
            let r = format!("{t}: the records it names are unknown or merged under a default");
            out.push((Anomaly::A1, true, r));
        }
        if let Some(t) = self.typed(&["gen_ai.agent.name", "gen_ai.agent.id"]) {
            if self.unnamed_tools > 0 {
                let r = format!(
                    "{t}: {} steps that call tools or carry definitions have no agent name, so \
                     their registry timeline is pooled under `agent`",
                    self.unnamed_tools
                );
                out.push((Anomaly::A2, true, r));
            }
        }
        if let Some(t) = self.typed(&["gen_ai.tool.definitions", "gen_ai.tool.name"]) {
            let r = format!("{t}: the registry or the planned tool is unknown");
            out.push((Anomaly::A2, true, r));
        }
        // A call the spans show but the reader did not read may have run: the effects and
        // the dispatches read are a subset of those made.
        let mut unread = Vec::new();
        if self.unread_calls.n > 0 {
            unread.push(format!(
                "{} spans carry tool-call attributes but are not read as tool calls (e.g. span \
                 {})",
                self.unread_calls.n, self.unread_calls.example
            ));
        }
        if self.unexecuted.n > 0 {
            unread.push(format!(
                "{} tool calls planned in gen_ai.output.messages have no tool span read for them \
                 (e.g. planned in span {})",
                self.unexecuted.n, self.unexecuted.example
            ));
        }
        if !unread.is_empty() {
            let r = format!(
                "{}: such a call may have run without the reader seeing it, so an effect order \
                 or a phantom dispatch may be missing",
                unread.join(" and ")
            );
            out.push((Anomaly::A2, true, r.clone()));
            out.push((Anomaly::A6, true, r));
        }
        if self.overlapping_memory > 0 {
            out.push((
                Anomaly::A1,
                false,
                format!(
                    "{} invocations overlap another of the same agent (e.g. span {}) and {} of \
                     their steps read or write memory: a witness between two of them assumes \
                     they are separate actors that do not share what they read and wrote",
                    self.overlapping.n, self.overlapping.example, self.overlapping_memory
                ),
            ));
        }
        out
    }

    /// The verdicts lowered by the gaps; unchanged when there are none.
    pub fn lower(
        &self,
        verdicts: Vec<(Anomaly, Verdict)>,
        memory_cells: bool,
    ) -> Vec<(Anomaly, Verdict)> {
        let lowerings = self.lowerings(memory_cells);
        verdicts
            .into_iter()
            .map(|(a, v)| {
                let mine: Vec<&(Anomaly, bool, String)> =
                    lowerings.iter().filter(|(x, _, _)| *x == a).collect();
                if mine.is_empty() {
                    return (a, v);
                }
                let undecidable = mine.iter().any(|(_, u, _)| *u);
                let reasons: Vec<&str> = mine.iter().map(|(_, _, r)| r.as_str()).collect();
                let why = format!(
                    "{}; on the spans read: {} ({})",
                    reasons.join("; "),
                    v.why(),
                    v.status().replace('_', " ")
                );
                // A lower bound that may also over-approximate tells nothing either way.
                let lowered = match v {
                    Verdict::Undecidable { .. } | Verdict::LowerBound { .. } => {
                        Verdict::Undecidable { reason: why }
                    }
                    _ if undecidable => Verdict::Undecidable { reason: why },
                    Verdict::Decided { .. } | Verdict::UpperBound { .. } => {
                        Verdict::UpperBound { basis: why }
                    }
                };
                (a, lowered)
            })
            .collect()
    }
}
