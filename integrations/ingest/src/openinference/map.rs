//! OpenInference spans → steps: the mapping table of [`super`].

use super::groups::Groups;
use super::join::{Join, Match};
use super::Beside;
use crate::build::{build, Seen, Step, Written};
use crate::error::IngestError;
use crate::evidence::{self, MemoryEvidence, Runs};
use crate::otel::invocation;
use crate::otel::mapping::{Access, Mapping};
use crate::otel::otlp::Span;
use crate::registry::Observation;
use crate::report::{Report, Verdict};
use crate::value::{canonical, value_name};
use crate::Ingested;
use agentsim_models::Anomaly;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// What a span is to the mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Agent,
    Generation,
    Read,
    Tool,
    /// A `TOOL` span of a tool the mapping file (`--tool-memory`) says reads memory.
    ToolRead,
    /// One of a tool it says writes memory.
    ToolWrite,
    /// An MCP `tools/call` span (client or server side).
    McpCall,
    Other,
}

impl Role {
    /// A tool call of any kind: what the MCP log's calls are matched against.
    fn call(self) -> bool {
        matches!(
            self,
            Role::Tool | Role::ToolRead | Role::ToolWrite | Role::McpCall
        )
    }
}

/// The role of `s`: its kind's, except that a `TOOL` span of a tool `mapping` names is that
/// tool's memory access.
fn role_of(s: &Span, mapping: Option<&Mapping>) -> Role {
    let r = role(s);
    let access = mapping
        .filter(|_| r == Role::Tool)
        .and_then(|m| m.access(s.str("tool.name")?));
    match access {
        Some(Access::Read) => Role::ToolRead,
        Some(Access::Write) => Role::ToolWrite,
        None => r,
    }
}

fn role(s: &Span) -> Role {
    if let Some(m) = s.str("mcp.method.name") {
        return if m == "tools/call" {
            Role::McpCall
        } else {
            Role::Other
        };
    }
    match s
        .str("openinference.span.kind")
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        Some("AGENT") => Role::Agent,
        Some("LLM") => Role::Generation,
        Some("RETRIEVER") => Role::Read,
        Some("TOOL") => Role::Tool,
        _ => Role::Other,
    }
}

/// The values of a flattened list attribute: `prefix.<i>.suffix` for each `i`, in index order.
fn indexed<'a>(s: &'a Span, prefix: &str, suffix: &str) -> Vec<(Vec<u32>, &'a Json)> {
    let mut out: Vec<(Vec<u32>, &Json)> = Vec::new();
    for (k, v) in &s.attrs {
        let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_suffix(suffix)) else {
            continue;
        };
        // `rest` is `.<i>.` or `.<i>.…<j>.` (nested lists): the numbers are the index.
        let index: Option<Vec<u32>> = rest
            .split('.')
            .filter(|p| !p.is_empty())
            .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
            .map(|p| p.parse().ok())
            .collect();
        if let Some(index) = index.filter(|i| !i.is_empty()) {
            out.push((index, v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A TOOL span's arguments, with the attribute they came from: the mapping's
/// `[attributes] arguments` when the span has it, else `input.value` (the OpenAI
/// Agents instrumentor's: the call's JSON arguments), else `tool_call.function.arguments`
/// (OpenInference's tool-call attribute, which some instrumentors put on the tool's span).
/// `Err` says why there are none: not captured, or not a JSON object.
fn tool_args<'m>(
    s: &Span,
    m: &'m Mapping,
) -> (Result<serde_json::Map<String, Json>, String>, &'m str) {
    const KEYS: [&str; 2] = ["input.value", "tool_call.function.arguments"];
    let own = m.arguments.as_deref();
    let keys = || own.into_iter().chain(KEYS);
    let Some((key, v)) = keys().find_map(|k| Some((k, s.attrs.get(k)?))) else {
        let names: Vec<&str> = keys().collect();
        let why = format!("no arguments captured ({})", names.join(", "));
        return (Err(why), KEYS[0]);
    };
    let parsed = match v {
        Json::String(t) => serde_json::from_str(t).ok(),
        v => Some(v.clone()),
    };
    match parsed {
        Some(Json::Object(m)) => (Ok(m), key),
        _ => (Err(format!("{key} is not a JSON object of arguments")), key),
    }
}

/// A TOOL span's result: the mapping's `[attributes] result` when the span has it, else
/// `output.value`.
fn output<'s>(s: &'s Span, m: Option<&Mapping>) -> Option<&'s Json> {
    let own = m.and_then(|m| m.result.as_deref());
    (own.and_then(|k| s.attrs.get(k))).or_else(|| s.attrs.get("output.value"))
}

/// A span name without its method suffix: `ops.run` → `ops`; a name without `.` as it is.
fn without_method(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((agent, method)) if !agent.is_empty() && !method.is_empty() => agent,
        _ => name,
    }
}

/// A span that says a generation's planned calls were never dispatched: an ancestor of the
/// generation, or a sibling that started when it ended or later, that ended in ERROR and is no
/// call. Looked up only for a plan with no call span (the linear searches stay rare).
fn failed_step(spans: &[Span], roles: &[Role], g: usize) -> Option<usize> {
    let gen = &spans[g];
    let find = |id: &str| (spans.iter()).position(|s| s.trace == gen.trace && s.id == id);
    let failed = |m: usize| spans[m].error && !roles[m].call();
    let mut up = gen.parent.as_deref().and_then(find);
    let mut hops = 0;
    while let Some(a) = up.filter(|_| hops < spans.len()) {
        if failed(a) {
            return Some(a);
        }
        up = spans[a].parent.as_deref().and_then(find);
        hops += 1;
    }
    (0..spans.len()).find(|&m| {
        let s = &spans[m];
        m != g && failed(m) && s.trace == gen.trace && s.parent == gen.parent && s.start >= gen.end
    })
}

/// How a span is named in a note: its OpenInference kind (`TOOL`, `CHAIN`, …), else its name.
fn span_kind(s: &Span) -> &str {
    s.str("openinference.span.kind").unwrap_or(&s.name)
}

/// A step writing a cell twice keeps the last write (the builder takes one per cell).
fn last_writes(step: &mut Step) {
    let mut last: BTreeMap<String, Written> = BTreeMap::new();
    let order: Vec<String> = step.writes.iter().map(|(c, _)| c.clone()).collect();
    for (c, w) in step.writes.drain(..) {
        last.insert(c, w);
    }
    let mut seen = BTreeSet::new();
    for c in order {
        if seen.insert(c.clone()) {
            let w = last.remove(&c).unwrap_or(Written::NewVersion);
            step.writes.push((c, w));
        }
    }
    let mut seen = BTreeSet::new();
    step.io.retain(|c| seen.insert(c.clone()));
    let mut seen = BTreeSet::new();
    step.co.retain(|c| seen.insert(c.clone()));
}

/// A generation's tool list: the flattened `llm.tools.<i>.tool.json_schema` attributes, else
/// `llm.tools` itself as one JSON array of schemas (CrewAI's instrumentor writes that form: a
/// string holding the array, or the array).
fn tool_schemas(s: &Span) -> Vec<Json> {
    let flat = indexed(s, "llm.tools", "tool.json_schema");
    if !flat.is_empty() {
        return flat.into_iter().map(|(_, v)| v.clone()).collect();
    }
    let list = match s.attrs.get("llm.tools") {
        Some(Json::String(t)) => serde_json::from_str(t).ok(),
        Some(v) => Some(v.clone()),
        None => None,
    };
    match list {
        Some(Json::Array(items)) => items,
        _ => Vec::new(),
    }
}

/// A tool's name in an `llm.tools.<i>.tool.json_schema`: `function.name` or `name`.
fn schema_name(schema: &Json) -> Option<String> {
    let v = match schema {
        Json::String(t) => serde_json::from_str(t).ok()?,
        v => v.clone(),
    };
    v.pointer("/function/name")
        .or_else(|| v.get("name"))
        .and_then(Json::as_str)
        .map(str::to_owned)
}

/// A registry: (tool, signature version) pairs.
type Entries = Vec<(String, u32)>;

struct Invocation {
    base: String,
    agent: String,
    start: u64,
    end: u64,
    members: Vec<usize>,
}

#[derive(Default)]
struct Cx<'a> {
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    reads: u64,
    effects: u64,
    planned: u64,
    planned_without_tools: u64,
    /// Of those, steps with no LLM span at all (CrewAI's own client is not instrumented).
    planned_without_llm: u64,
    /// Planned calls that did not run, or may not have: not plans.
    runs: Runs,
    /// Each step's span that shows its planned call ran, in step order.
    calls: Vec<Option<String>>,
    /// base → (start, registry) in time order; versions per (base, tool).
    seen: BTreeMap<String, Vec<(u64, Entries)>>,
    versions: BTreeMap<(String, String), Vec<String>>,
    /// The MCP log the tool spans are joined with (`--mcp-log`), and each call span's match.
    join: Option<Join<'a>>,
    matched: BTreeMap<usize, Match>,
    /// The tools that are memory (`--tool-memory`), and each span's role under it.
    mapping: Option<&'a Mapping>,
    /// Its `[[registry]]` groups over every agent's `llm.tools`, when it declares any: then a
    /// step's registries come from them, not from `seen`.
    groups: Option<Groups<'a>>,
    roles: Vec<Role>,
    memory: MemoryEvidence,
    /// For each cell, whether every access carried its content.
    content: BTreeMap<String, bool>,
}

/// Maps the spans; each tool span joined with the `tools/call` of the MCP log it made, when
/// given ([`super::join`]), and read as memory when the mapping names its tool.
pub fn ingest_with(
    file: &str,
    mut spans: Vec<Span>,
    beside: Beside<'_>,
) -> Result<Ingested, IngestError> {
    spans.sort_by(|a, b| (a.start, &a.trace, &a.id).cmp(&(b.start, &b.trace, &b.id)));
    let mut index: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        if index.insert((&s.trace, &s.id), i).is_some() {
            return Err(IngestError::Ambiguous {
                file: file.to_owned(),
                message: format!("span {} of trace {} appears twice", s.id, s.trace),
            });
        }
    }
    let mut cx = Cx {
        join: beside.mcp.map(Join::new),
        mapping: beside.mapping,
        roles: spans.iter().map(|s| role_of(s, beside.mapping)).collect(),
        ..Cx::default()
    };
    cx.count("spans", spans.len() as u64);
    let invocations = invocations(&spans, &index, &mut cx);
    cx.observe_registries(&spans, &invocations);
    let mut steps = Vec::new();
    for inv in &invocations {
        cx.match_calls(&spans, inv);
        for members in segments(&cx.roles, &inv.members) {
            steps.push(cx.step(&spans, inv, &members));
        }
    }
    cx.derive(&mut steps);
    // The builder's log order (stable by commit instant), for the witnesses' notes.
    let mut log: Vec<usize> = (0..steps.len()).collect();
    log.sort_by_key(|&i| steps[i].commit_at);
    let phantoms: Vec<(usize, String)> = (log.iter().enumerate())
        .filter(|&(_, &i)| crate::evidence::phantom(&steps[i]))
        .filter_map(|(at, &i)| Some((at, cx.calls[i].clone()?)))
        .collect();
    let history = build(steps, false);
    cx.notes
        .extend(crate::evidence::phantom_notes(&history, &phantoms));
    if let Some(j) = &cx.join {
        let (matched, failed) = (j.matched_spans, j.failed_calls);
        cx.count("mcp_log_matched_tool_spans", matched);
        cx.count("mcp_log_failed_calls", failed);
    }
    let verdicts = cx.verdicts();
    let report = Report {
        source: crate::Source::Openinference,
        file: file.to_owned(),
        records: history.len(),
        verdicts,
        counts: std::mem::take(&mut cx.counts),
        errors: Vec::new(),
        notes: std::mem::take(&mut cx.notes),
        wall_ns: None,
        initial: Default::default(),
    };
    Ok(Ingested { history, report })
}

/// The span's ancestors, nearest first (bounded by the span count: a cycle stops there).
fn ancestors<'a>(
    spans: &'a [Span],
    index: &'a BTreeMap<(&str, &str), usize>,
    i: usize,
) -> impl Iterator<Item = usize> + 'a {
    let mut at = i;
    (0..spans.len()).map_while(move |_| {
        let p = spans[at].parent.as_deref()?;
        let &j = index.get(&(spans[at].trace.as_str(), p))?;
        at = j;
        Some(j)
    })
}

fn invocations(
    spans: &[Span],
    index: &BTreeMap<(&str, &str), usize>,
    cx: &mut Cx,
) -> Vec<Invocation> {
    let mut groups: BTreeMap<(String, Option<usize>), Vec<usize>> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        let r = cx.roles[i];
        let oi = s.attrs.contains_key("openinference.span.kind");
        if s.attrs.contains_key("mcp.method.name") {
            cx.count("mcp_spans", 1);
            if s.str("mcp.method.name") == Some("notifications/tools/list_changed") {
                cx.count("mcp_list_changed_spans", 1);
            }
        } else if oi {
            cx.count("openinference_spans", 1);
        } else {
            cx.count("ignored_spans", 1);
            if s.attrs.contains_key("gen_ai.operation.name") {
                cx.count("genai_spans_not_read", 1);
            }
        }
        match r {
            Role::Agent | Role::Other => continue,
            Role::Tool if s.str("tool.name").is_none() => {
                cx.count("handoffs", 1);
                continue;
            }
            Role::McpCall => {
                // The same call seen from the other side, or inside a TOOL span that is it.
                let covered = ancestors(spans, index, i).any(|a| cx.roles[a].call());
                if covered {
                    cx.count("mcp_calls_inside_tool_spans", 1);
                    continue;
                }
            }
            _ => {}
        }
        let mut named = None;
        let mut any = None;
        for a in ancestors(spans, index, i) {
            if cx.roles[a] == Role::Agent {
                any.get_or_insert(a);
                if spans[a].attrs.contains_key("agent.name") {
                    named = Some(a);
                    break;
                }
            }
        }
        groups
            .entry((s.trace.clone(), named.or(any)))
            .or_default()
            .push(i);
    }
    let mut out: Vec<Invocation> = groups
        .into_iter()
        .map(|((trace, owner), members)| {
            // CrewAI's AGENT spans have no `agent.name`; their `graph.node.id` is the role.
            // Others are named `<agent>.<method>` (`ops.run`): the agent is the name without
            // the method.
            let base = match owner {
                Some(a) => (spans[a].str("agent.name"))
                    .or_else(|| spans[a].str("graph.node.id"))
                    .unwrap_or_else(|| without_method(&spans[a].name))
                    .to_owned(),
                None => invocation::unowned(&trace),
            };
            let (start, end) = invocation::extent(spans, owner, &members);
            Invocation {
                agent: base.clone(),
                base,
                start,
                end,
                members,
            }
        })
        .collect();
    out.sort_by_key(|inv| (inv.start, inv.end));
    // One actor has one pending operation (SPEC §1): overlapping invocations of one agent are
    // different actors ([`invocation::Slots`]).
    let mut slots = invocation::Slots::default();
    for inv in &mut out {
        let (k, _) = slots.take(&inv.base, inv.start, inv.end);
        inv.agent = invocation::actor(&inv.base, k);
    }
    cx.count("invocations", out.len() as u64);
    out
}

/// Splits an invocation's spans into steps: reads (a mapped read tool's call too), then a
/// generation, then tool calls.
fn segments(roles: &[Role], members: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let (mut has_gen, mut has_after) = (false, false);
    for &m in members {
        let r = roles[m];
        let new = match r {
            Role::Read | Role::ToolRead => has_gen || has_after,
            Role::Generation => has_gen,
            _ => false,
        };
        if new || out.is_empty() {
            out.push(Vec::new());
            has_gen = false;
            has_after = false;
        }
        match r {
            Role::Generation => has_gen = true,
            Role::Tool | Role::ToolWrite | Role::McpCall => has_after = has_gen,
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(m);
        }
    }
    out
}

fn tool_name(s: &Span) -> String {
    s.str("tool.name")
        .or(s.str("gen_ai.tool.name"))
        .or_else(|| s.name.rsplit_once("tools/call ").map(|(_, t)| t))
        .unwrap_or("?")
        .to_owned()
}

impl Cx<'_> {
    fn count(&mut self, what: &str, n: u64) {
        *self.counts.entry(what.to_owned()).or_default() += n;
    }

    /// `llm.tools` of every generation, with versions per agent and tool; and, when the
    /// mapping declares `[[registry]]` groups, as views of the groups' registries.
    fn observe_registries(&mut self, spans: &[Span], invocations: &[Invocation]) {
        let mut obs: Vec<(u64, &str, usize)> = Vec::new();
        for inv in invocations {
            for &m in &inv.members {
                if self.roles[m] == Role::Generation {
                    obs.push((spans[m].start, &inv.base, m));
                }
            }
        }
        obs.sort();
        let grouped = self.mapping.is_some_and(|m| !m.registry_groups.is_empty());
        let mut views = Vec::new();
        for (start, base, m) in obs {
            let schemas = tool_schemas(&spans[m]);
            if schemas.is_empty() {
                continue;
            }
            if grouped {
                let tools = (schemas.iter())
                    .filter_map(|s| Some((schema_name(s)?, Some(canonical(s)))))
                    .collect();
                let observer = base.to_owned();
                views.push((
                    m,
                    Observation {
                        at: start,
                        observer,
                        tools,
                    },
                ));
            }
            let mut entries = Vec::new();
            for schema in &schemas {
                let Some(name) = schema_name(schema) else {
                    continue;
                };
                let known = self
                    .versions
                    .entry((base.to_owned(), name.clone()))
                    .or_default();
                let text = canonical(schema);
                let v = match known.iter().position(|k| *k == text) {
                    Some(v) => v,
                    None => {
                        known.push(text);
                        known.len() - 1
                    }
                };
                entries.push((name, v as u32));
            }
            self.seen
                .entry(base.to_owned())
                .or_default()
                .push((start, entries));
        }
        self.groups = Groups::new(self.mapping, views);
    }

    /// Matches an invocation's calls with the MCP log, in start order (a call claimed by one
    /// span is not matched again), before its steps are made: a step's plan may have run as
    /// the next step's mapped read.
    fn match_calls(&mut self, spans: &[Span], inv: &Invocation) {
        let Some(j) = &mut self.join else {
            return;
        };
        let mut calls: Vec<usize> = (inv.members.iter().copied())
            .filter(|&m| self.roles[m].call())
            .collect();
        calls.sort_by_key(|&t| (spans[t].start, &spans[t].id));
        for t in calls {
            let s = &spans[t];
            let m = j.match_span(&tool_name(s), s.start, s.end, &inv.base);
            self.matched.insert(t, m);
        }
    }

    fn registry_at(&self, base: &str, t: u64) -> Option<&Entries> {
        let seen = self.seen.get(base)?;
        let i = seen.partition_point(|(s, _)| *s <= t);
        i.checked_sub(1).map(|i| &seen[i].1)
    }

    fn step(&mut self, spans: &[Span], inv: &Invocation, members: &[usize]) -> Step {
        let roles = std::mem::take(&mut self.roles);
        let step = self.step_of(spans, inv, members, &roles);
        self.roles = roles;
        step
    }

    fn step_of(
        &mut self,
        spans: &[Span],
        inv: &Invocation,
        members: &[usize],
        roles: &[Role],
    ) -> Step {
        let of = |f: &dyn Fn(Role) -> bool| -> Vec<usize> {
            members.iter().copied().filter(|&m| f(roles[m])).collect()
        };
        let by_start = |t: &usize| (spans[*t].start, &spans[*t].id);
        let reads = of(&|r| matches!(r, Role::Read | Role::ToolRead));
        let generation = of(&|r| r == Role::Generation).first().copied();
        let tools = of(&|r| matches!(r, Role::Tool | Role::ToolWrite | Role::McpCall));
        // A mapped read before the generation is a read of the step, not a call it planned.
        let plan_start = generation.map_or(0, |g| spans[g].start);
        let calls: Vec<usize> = (of(&|r| r.call()).into_iter())
            .filter(|&c| roles[c] != Role::ToolRead || spans[c].start >= plan_start)
            .collect();
        let first_start = members.iter().map(|&m| spans[m].start).min();
        let read_at = reads
            .first()
            .or(generation.as_ref())
            .map(|&m| spans[m].start)
            .or(first_start)
            .unwrap_or(inv.start);
        let commit_at = tools
            .iter()
            .map(|&m| spans[m].end)
            .max()
            .or(generation.map(|g| spans[g].end))
            .or_else(|| members.iter().map(|&m| spans[m].end).max())
            .unwrap_or(inv.end);
        let mut step = Step {
            agent: inv.agent.clone(),
            read_at: u128::from(read_at),
            commit_at: u128::from(commit_at),
            ..Step::default()
        };
        let planned_by_llm = generation.and_then(|g| {
            let calls = indexed(&spans[g], "llm.output_messages", "tool_call.function.name");
            calls
                .first()
                .and_then(|(_, v)| v.as_str())
                .map(str::to_owned)
        });
        let first_tool = calls.iter().copied().min_by_key(by_start);
        step.planned_tool = planned_by_llm.or_else(|| first_tool.map(|t| tool_name(&spans[t])));
        // The call that ran the plan; a planned mapped read runs as the next step's read (the
        // read its next generation plans from), so it is looked for among the later reads.
        let planned = step.planned_tool.as_deref();
        let named = |t: &usize| Some(tool_name(&spans[*t]).as_str()) == planned;
        let later_read = |t: &usize| roles[*t] == Role::ToolRead && spans[*t].start >= plan_start;
        let plan_call = (calls.iter().copied().filter(named).min_by_key(by_start)).or_else(|| {
            let later = inv.members.iter().copied().filter(later_read);
            later.filter(named).min_by_key(by_start)
        });
        let plan_match = plan_call.and_then(|t| self.matched.get(&t).copied());
        // Whether the plan ran: a call that ended in ERROR without reaching a tool server
        // (refused at call time, or failed) wrote nothing; a plan with no call span ran only if
        // nothing says otherwise, and an ERROR span of the step after the generation says it
        // was never dispatched. A call the MCP log holds, or an MCP `tools/call` span, reached
        // the server: it ran, whatever the server answered. Only a plan that ran is one
        // (SPEC §3: A2 is a write that used a tool no longer in the registry).
        let dispatched = |t: usize| {
            roles[t] == Role::McpCall || matches!(self.matched.get(&t), Some(Match::Call(_)))
        };
        let named_span = |t: usize| format!("{} span {}", span_kind(&spans[t]), spans[t].id);
        let mut call = None;
        if self.join.is_some() {
            call = plan_call.filter(|&t| dispatched(t)).map(named_span);
        } else if step.planned_tool.is_some() {
            match plan_call {
                Some(t) if spans[t].error && !dispatched(t) => {
                    let e = format!("{} spans with status ERROR", span_kind(&spans[t]));
                    *self.runs.not_run.entry(e).or_default() += 1;
                    step.planned_tool = None;
                }
                Some(t) => call = Some(named_span(t)),
                None => {
                    let failed_step = generation.and_then(|g| failed_step(spans, roles, g));
                    match failed_step {
                        Some(m) => {
                            let e = format!(
                                "no tool span, and its {} span ended in ERROR",
                                span_kind(&spans[m])
                            );
                            *self.runs.not_run.entry(e).or_default() += 1;
                        }
                        None => self.runs.unknown += 1,
                    }
                    step.planned_tool = None;
                }
            }
        }
        self.calls.push(call);
        // A call that ended in ERROR, or that the log says the server failed (the span says
        // OK): its effect did not land.
        let join = self.join.as_ref();
        let failed: BTreeSet<usize> = (members.iter().copied())
            .filter(|&t| roles[t].call())
            .filter(|t| {
                let in_log = self.matched.get(t).zip(join);
                spans[*t].error || in_log.is_some_and(|(&m, j)| j.failed(m))
            })
            .collect();
        let failed = |t: usize| failed.contains(&t);
        for &r in &reads {
            match roles[r] {
                Role::ToolRead => self.tool_read(&spans[r], failed(r), &mut step),
                _ => self.read(&spans[r], &mut step),
            }
        }
        let mut effects: Vec<(u64, u64, &str, String)> = Vec::new();
        let writes = of(&|r| r == Role::ToolWrite);
        let failed_writes = writes.iter().filter(|&&w| failed(w)).count();
        if failed_writes > 0 {
            self.count("failed_memory_writes", failed_writes as u64);
        }
        // A step all of whose memory writes failed never changed memory: it is recorded
        // aborted, with the writes it attempted (as the GenAI reader does).
        step.aborted = !writes.is_empty() && failed_writes == writes.len();
        for &t in &tools {
            let s = &spans[t];
            let landed = !failed(t);
            if roles[t] == Role::ToolWrite {
                if let Some((cell, value)) = self.tool_write(s) {
                    if landed || step.aborted {
                        effects.push((s.start, s.end, &s.id, cell.clone()));
                        step.writes.push((cell, value));
                    }
                }
                continue;
            }
            if s.error {
                self.count("failed_tool_calls", 1);
            }
            if !landed {
                continue;
            }
            let cell = format!("tool:{}:{}", tool_name(s), s.id);
            let value = match output(s, self.mapping) {
                Some(v) => Written::Value(value_name(v)),
                None => Written::NewVersion,
            };
            step.writes.push((cell.clone(), value));
            effects.push((s.start, s.end, &s.id, cell));
        }
        self.effects += effects.len() as u64;
        let mut io = effects.clone();
        io.sort_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)));
        let mut co = effects;
        co.sort_by(|a, b| (a.1, a.2).cmp(&(b.1, b.2)));
        step.io = io.into_iter().map(|e| e.3).collect();
        step.co = co.into_iter().map(|e| e.3).collect();
        if step.planned_tool.is_some() {
            self.planned += 1;
            let offered = generation.and_then(|g| match &self.groups {
                Some(groups) => groups.offered(g).cloned(),
                None => (self.seen.get(&inv.base)?.iter())
                    .find(|(s, _)| *s == spans[g].start)
                    .map(|(_, e)| e.clone()),
            });
            match offered {
                Some(e) => step.read_registry = e,
                None => {
                    self.planned_without_tools += 1;
                    self.planned_without_llm += u64::from(generation.is_none());
                }
            }
            let dispatch = first_tool.map_or(commit_at, |t| spans[t].start);
            step.write_registry = match self.groups.as_mut() {
                Some(groups) => groups.at(&inv.base, dispatch),
                None => (self.registry_at(&inv.base, dispatch).cloned()).unwrap_or_default(),
            };
            if let Some(j) = &mut self.join {
                let plan_at = generation.map_or(read_at, |g| spans[g].start);
                match j.registries(plan_match.unwrap_or(Match::None), plan_at) {
                    Some((read, write)) => {
                        step.read_registry = read;
                        step.write_registry = write;
                    }
                    // Not from the log: no registry, so no witness the join cannot back.
                    None => step.read_registry.clear(),
                }
            }
        }
        let mut seen = BTreeSet::new();
        step.reads.retain(|(c, _)| seen.insert(c.clone()));
        last_writes(&mut step);
        step
    }

    /// A call of a tool the mapping says reads memory: a read of the cell it names, seen as its
    /// `output.value`.
    fn tool_read(&mut self, s: &Span, failed: bool, step: &mut Step) {
        let Some((cell, _)) = self.tool_cell(s, false) else {
            return;
        };
        if failed {
            // What a failed call returned is its error, not the cell's content.
            let key = format!(
                "TOOL {}: the call failed, so what it read is unknown",
                tool_name(s)
            );
            *self.memory.unidentified.entry(key).or_default() += 1;
            return;
        }
        let seen = match output(s, self.mapping) {
            Some(v) => Seen::Value(value_name(v)),
            None => Seen::Derive,
        };
        self.access(&cell, matches!(seen, Seen::Value(_)));
        step.reads.push((cell, seen));
    }

    /// A call of a tool the mapping says writes memory: the cell it names and what it wrote.
    fn tool_write(&mut self, s: &Span) -> Option<(String, Written)> {
        let (cell, value) = self.tool_cell(s, true)?;
        self.access(&cell, value.is_some());
        let w = match value {
            Some(v) => Written::Value(value_name(&v)),
            None => Written::NewVersion,
        };
        Some((cell, w))
    }

    /// A mapped tool call's cell from its arguments ([`tool_args`]), or `None` (counted
    /// unidentified, with why).
    fn tool_cell(&mut self, s: &Span, write: bool) -> Option<(String, Option<Json>)> {
        let m = self.mapping?;
        let name = tool_name(s);
        let (args, attr) = tool_args(s, m);
        let read = if write { "" } else { ", output.value" };
        let source = format!("TOOL {name} ({}; tool.name, {attr}{read})", m.file);
        *self.memory.sources.entry(source).or_default() += 1;
        match m.cell(&name, write, args.as_ref().map_err(Clone::clone))? {
            Ok(cell) => Some(cell),
            Err(why) => {
                let key = format!("TOOL {name}: {why}");
                *self.memory.unidentified.entry(key).or_default() += 1;
                None
            }
        }
    }

    fn access(&mut self, cell: &str, with_content: bool) {
        *self.content.entry(cell.to_owned()).or_insert(true) &= with_content;
    }

    /// With a mapping, cells some access of which carried no content are compared by version
    /// throughout (a value seen beside a version would never match it).
    fn derive(&mut self, steps: &mut [Step]) {
        if self.mapping.is_none() {
            return;
        }
        let derived: BTreeSet<&String> = (self.content.iter())
            .filter(|(_, &all)| !all)
            .map(|(c, _)| c)
            .collect();
        self.memory.cells = self.content.len();
        self.memory.by_version = derived.len();
        for step in steps {
            for (c, seen) in &mut step.reads {
                if derived.contains(c) {
                    *seen = Seen::Derive;
                }
            }
            for (c, w) in &mut step.writes {
                if derived.contains(c) && matches!(w, Written::Value(Some(_))) {
                    *w = Written::NewVersion;
                }
            }
        }
        let (cells, by_version) = (self.memory.cells, self.memory.by_version);
        self.count("memory_cells", cells as u64);
        self.count("memory_cells_by_version", by_version as u64);
    }

    fn read(&mut self, s: &Span, step: &mut Step) {
        let ids = indexed(s, "retrieval.documents", "document.id");
        let contents: BTreeMap<Vec<u32>, &Json> =
            indexed(s, "retrieval.documents", "document.content")
                .into_iter()
                .collect();
        if ids.is_empty() {
            self.count("retrievals_without_document_ids", 1);
            if self.mapping.is_some() {
                let key = "RETRIEVER (no retrieval.documents.*.document.id)".to_owned();
                *self.memory.unidentified.entry(key).or_default() += 1;
            }
        } else if self.mapping.is_some() {
            let source = "RETRIEVER (retrieval.documents.*.document.id)".to_owned();
            *self.memory.sources.entry(source).or_default() += 1;
        }
        for (i, id) in ids {
            let id = match id {
                Json::String(t) => t.clone(),
                v => canonical(v),
            };
            let seen = match contents.get(&i) {
                Some(c) => Seen::Value(value_name(c)),
                None => Seen::Derive,
            };
            self.reads += 1;
            let cell = format!("retrieval/{id}");
            if self.mapping.is_some() {
                self.access(&cell, matches!(seen, Seen::Value(_)));
            }
            step.reads.push((cell, seen));
        }
    }

    fn verdicts(&mut self) -> Vec<(Anomaly, Verdict)> {
        let a1 = if let Some(m) = self.mapping {
            self.memory.looked_for = format!(
                "no RETRIEVER document ids and no TOOL span of a tool {} maps",
                m.file
            );
            if let Some(g) = &self.groups {
                self.notes.push(g.note(self.join.is_some()));
            }
            evidence::a1(&self.memory)
        } else {
            self.a1_unmapped()
        };
        self.verdicts_rest(a1)
    }

    /// A1 without a mapping: never decided, since nothing says which TOOL spans are memory.
    fn a1_unmapped(&self) -> Verdict {
        let tool_spans = self.effects;
        Verdict::Undecidable {
            reason: if self.reads > 0 {
                format!(
                    "{} document reads (retrieval.documents.*.document.id) but no memory \
                     writes: OpenInference has no span kind for them, and memory written \
                     through tools is ordinary TOOL spans (tool.name, input.value)",
                    self.reads
                )
            } else {
                format!(
                    "no memory operation in the trace: OpenInference has no memory span kind, \
                     and memory reached through tools is {tool_spans} ordinary TOOL spans \
                     (tool.name, input.value) that do not say which records they touch (a \
                     --tool-memory mapping says which do)"
                )
            },
        }
    }

    fn verdicts_rest(&mut self, a1: Verdict) -> Vec<(Anomaly, Verdict)> {
        let changed = self
            .counts
            .get("mcp_list_changed_spans")
            .copied()
            .unwrap_or(0);
        if changed > 0 {
            self.notes.push(format!(
                "{changed} MCP notifications/tools/list_changed spans: the tool lists before \
                 and after are not on spans; read the clients' JSON-RPC log with --from mcp"
            ));
        }
        if let Some(&n) = self.counts.get("genai_spans_not_read") {
            self.notes.push(format!(
                "{n} GenAI spans (gen_ai.operation.name, no openinference.span.kind) are not \
                 read here: the export mixes conventions"
            ));
        }
        let a2 = if let Some(j) = self.join.as_ref().filter(|_| self.planned > 0) {
            j.a2(self.planned)
        } else if self.planned == 0 && self.runs.unknown == 0 {
            let not_run = match self.runs.not_run.values().sum::<u64>() {
                0 => String::new(),
                n => format!(
                    " that ran: {n} planned calls did not run and wrote nothing ({})",
                    crate::evidence::list(&self.runs.not_run)
                ),
            };
            Verdict::Decided {
                basis: format!(
                    "no tool was planned (no tool_call in llm.output_messages, no TOOL \
                     span){not_run}"
                ),
            }
        } else if self.planned == 0 {
            crate::evidence::a2(&crate::evidence::RegistryEvidence {
                not_run: self.runs.not_run.clone(),
                unknown_run: self.runs.unknown,
                ..Default::default()
            })
        } else if self.planned_without_tools > 0 {
            let no_llm = match self.planned_without_llm {
                0 => String::new(),
                n => format!(
                    "; {n} of them have no LLM span (the planned tool is their first TOOL span)"
                ),
            };
            Verdict::Undecidable {
                reason: format!(
                    "{} of {} steps planned tools but their LLM span carries no llm.tools \
                     (the OpenAI Agents instrumentor records none on the chat-completions \
                     path){no_llm}: what the plan was made from is unknown",
                    self.planned_without_tools, self.planned
                ),
            }
        } else if let Some(g) = &self.groups {
            g.a2(self.planned, &self.runs)
        } else {
            Verdict::Undecidable {
                reason: format!(
                    "{} steps planned tools from their llm.tools, but the registry when a tool \
                     runs is on no span: a change by another agent or a tool server between \
                     the generation and the call is unseen",
                    self.planned
                ),
            }
        };
        let a3 = Verdict::Undecidable {
            reason: "spans carry no provenance and no retraction".to_owned(),
        };
        let a6 = Verdict::Decided {
            basis: format!(
                "{} tool calls: issue order = TOOL span start, completion order = TOOL span end \
                 (a tool span's end is taken as when its effect landed; ERROR spans did not land)",
                self.effects
            ),
        };
        crate::report::lattice_verdicts(a1, a2, a3, a6)
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_openinference;
    use agentsim_models::detect::fast;
    use agentsim_models::Anomaly;

    fn span(id: &str, parent: &str, start: u64, end: u64, attrs: &[(&str, &str)]) -> String {
        let attrs: Vec<String> = attrs
            .iter()
            .map(|(k, v)| format!(r#"{{"key":"{k}","value":{{"stringValue":{v:?}}}}}"#))
            .collect();
        let parent = if parent.is_empty() {
            String::new()
        } else {
            format!(r#""parentSpanId":"{parent}","#)
        };
        format!(
            concat!(
                r#"{{"traceId":"t","spanId":"{id}",{parent}"name":"{id}","#,
                r#""startTimeUnixNano":{start},"endTimeUnixNano":{end},"attributes":[{attrs}]}}"#
            ),
            id = id,
            parent = parent,
            start = start,
            end = end,
            attrs = attrs.join(",")
        )
    }

    fn trace(tools: Option<&str>, second_ends: u64) -> String {
        trace_with(
            tools.map(|t| ("llm.tools.0.tool.json_schema", t)),
            second_ends,
        )
    }

    /// The trace of [`trace`], its generation's tool list under a key of the caller's.
    fn trace_with(tools: Option<(&str, &str)>, second_ends: u64) -> String {
        let kind = "openinference.span.kind";
        let mut llm = vec![
            (kind, "LLM"),
            (
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
                "slow",
            ),
            (
                "llm.output_messages.0.message.tool_calls.1.tool_call.function.name",
                "fast",
            ),
        ];
        if let Some(t) = tools {
            llm.push(t);
        }
        let spans = [
            span("r", "", 0, 100, &[(kind, "AGENT")]),
            span(
                "a",
                "r",
                1,
                99,
                &[(kind, "AGENT"), ("agent.name", "worker")],
            ),
            span("g", "a", 2, 10, &llm),
            span("s1", "a", 11, 30, &[(kind, "TOOL"), ("tool.name", "slow")]),
            span(
                "s2",
                "a",
                12,
                second_ends,
                &[(kind, "TOOL"), ("tool.name", "fast")],
            ),
            span("h", "a", 40, 41, &[(kind, "TOOL")]),
        ];
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        )
    }

    #[test]
    fn tool_spans_finishing_out_of_order_are_a6_and_the_gaps_are_named() {
        let ing = parse_openinference(&trace(None, 20), "t.json").unwrap();
        assert_eq!(ing.history.len(), 1);
        assert_eq!(fast::detect(&ing.history).a6.len(), 1);
        let r = &ing.report;
        assert_eq!(r.counts["handoffs"], 1);
        assert_eq!(r.verdict(Anomaly::A6).unwrap().status(), "decided");
        let a1 = r.verdict(Anomaly::A1).unwrap();
        assert_eq!(a1.status(), "undecidable");
        assert!(a1.why().contains("tool.name"), "{a1:?}");
        let a2 = r.verdict(Anomaly::A2).unwrap();
        assert!(a2.why().contains("no llm.tools"), "{a2:?}");
        let h = &ing.history;
        assert_eq!(
            h.names.tool_name(h.records[0].planned_tool.unwrap()),
            "slow"
        );
        let clean = parse_openinference(&trace(None, 40), "t.json").unwrap();
        assert!(fast::detect(&clean.history).a6.is_empty());
    }

    #[test]
    fn llm_tools_as_one_json_array_are_the_read_registry() {
        // CrewAI's instrumentor: `llm.tools` is a string holding the array of schemas.
        let list = concat!(
            r#"[{"type":"function","function":{"name":"slow"}},"#,
            r#"{"type":"function","function":{"name":"fast"}}]"#
        );
        let ing =
            parse_openinference(&trace_with(Some(("llm.tools", list)), 20), "t.json").unwrap();
        let rec = &ing.history.records[0];
        let names = &ing.history.names.tools;
        for tool in ["slow", "fast"] {
            let t = names.get(tool).map(agentsim_models::Tool).unwrap();
            assert!(rec.read_registry.get(t).is_some(), "{tool}");
        }
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert!(a2.why().contains("registry when a tool runs"), "{a2:?}");
        // Not an array of schemas: no tool list, said as such.
        let text = trace_with(Some(("llm.tools", "slow")), 20);
        let report = parse_openinference(&text, "t.json").unwrap().report;
        let a2 = report.verdict(Anomaly::A2).unwrap();
        assert!(a2.why().contains("no llm.tools"), "{a2:?}");
    }

    /// Two agents: alice's generation (10..20) offers `t` and `u` and plans `t`, her call of
    /// `t` starts at `call`; bob's generations offer `t` and `u` at 5, then only `u` at
    /// `retired`.
    fn two_agents(retired: u64, call: u64) -> String {
        let kind = "openinference.span.kind";
        let t = r#"{"type":"function","function":{"name":"t"}}"#;
        let u = r#"{"type":"function","function":{"name":"u"}}"#;
        let plan = "llm.output_messages.0.message.tool_calls.0.tool_call.function.name";
        let (t0, t1) = (
            "llm.tools.0.tool.json_schema",
            "llm.tools.1.tool.json_schema",
        );
        let spans = [
            span("a", "", 1, 500, &[(kind, "AGENT"), ("agent.name", "alice")]),
            span(
                "ga",
                "a",
                10,
                20,
                &[(kind, "LLM"), (t0, t), (t1, u), (plan, "t")],
            ),
            span(
                "ta",
                "a",
                call,
                call + 5,
                &[(kind, "TOOL"), ("tool.name", "t")],
            ),
            span("b", "", 2, 500, &[(kind, "AGENT"), ("agent.name", "bob")]),
            span("gb1", "b", 5, 8, &[(kind, "LLM"), (t0, t), (t1, u)]),
            span("gb2", "b", retired, retired + 2, &[(kind, "LLM"), (t0, u)]),
        ];
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        )
    }

    fn with_mapping(text: &str, mapping: &str) -> crate::Ingested {
        let m = crate::otel::mapping::Mapping::parse(mapping, "m.toml").unwrap();
        let beside = super::super::Beside {
            mcp: None,
            mapping: Some(&m),
        };
        super::super::parse_openinference_with(text, "t.json", beside).unwrap()
    }

    const GROUPED: &str = "[[registry]]\nagents = [\"alice\", \"bob\"]\n";

    #[test]
    fn a_retirement_another_agent_of_the_group_shows_is_a2_at_the_call() {
        let ing = with_mapping(&two_agents(30, 40), GROUPED);
        let found = fast::detect(&ing.history).a2;
        assert_eq!(found.len(), 1, "{:?}", ing.report);
        let h = &ing.history;
        let rec = (h.records.iter())
            .find(|r| r.planned_tool.is_some())
            .unwrap();
        let t = h.names.tools.get("t").map(agentsim_models::Tool).unwrap();
        assert!(rec.read_registry.get(t).is_some());
        assert!(rec.write_registry.get(t).is_none());
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "lower_bound", "{a2:?}");
        let why = a2.why();
        assert!(why.contains("llm.tools on LLM ×3 (1 changes seen"), "{why}");
        assert!(
            why.contains("shared by the groups m.toml declares (1 groups"),
            "{why}"
        );
        assert!(
            why.contains("1 dispatches took a change another agent's"),
            "{why}"
        );
        let note = (ing.report.notes.iter())
            .find(|n| n.starts_with("registries are shared by the groups m.toml"));
        assert!(note.is_some(), "{:?}", ing.report.notes);
        // Bob's retirement after alice's call: no witness, and none is not an answer.
        let later = with_mapping(&two_agents(60, 40), GROUPED);
        assert!(fast::detect(&later.history).a2.is_empty());
        let a2 = later.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "lower_bound", "{a2:?}");
        assert!(a2.why().contains("0 dispatches took"), "{a2:?}");
    }

    #[test]
    fn an_agent_without_a_name_is_its_graph_node() {
        // CrewAI's AGENT spans: `graph.node.id` (the role), no `agent.name`. The invocations
        // are the roles, so a group that names the roles shares their registries.
        let text = two_agents(30, 40).replace("agent.name", "graph.node.id");
        let ing = with_mapping(&text, GROUPED);
        let agents = &ing.history.names.agents;
        assert!(agents.get("alice").is_some() && agents.get("bob").is_some());
        assert!(agents.get("a").is_none() && agents.get("b").is_none());
        assert_eq!(fast::detect(&ing.history).a2.len(), 1, "{:?}", ing.report);
    }

    #[test]
    fn without_groups_each_agent_keeps_its_own_registry() {
        let text = two_agents(30, 40);
        let tools = "[[tool]]\nname = \"read_profile\"\nreads = \"profile/{key}\"\n";
        let plain = parse_openinference(&text, "t.json").unwrap();
        for ing in [plain, with_mapping(&text, tools)] {
            assert!(fast::detect(&ing.history).a2.is_empty());
            let a2 = ing.report.verdict(Anomaly::A2).unwrap();
            assert_eq!(a2.status(), "undecidable");
            assert!(a2.why().contains("registry when a tool runs"), "{a2:?}");
            assert!(!ing.report.notes.iter().any(|n| n.contains("registr")));
        }
        // A group that holds alice alone: bob's retirement is his own.
        let alone = with_mapping(&text, "[[registry]]\nagents = [\"alice\"]\n");
        assert!(fast::detect(&alone.history).a2.is_empty());
        let a2 = alone.report.verdict(Anomaly::A2).unwrap();
        assert!(
            a2.why().contains("(0 groups with several agents seen)"),
            "{a2:?}"
        );
    }

    #[test]
    fn llm_tools_are_the_read_registry() {
        let schema = r#"{"type":"function","function":{"name":"slow"}}"#;
        let ing = parse_openinference(&trace(Some(schema), 20), "t.json").unwrap();
        let rec = &ing.history.records[0];
        let slow = ing
            .history
            .names
            .tools
            .get("slow")
            .map(agentsim_models::Tool);
        assert!(rec.read_registry.get(slow.unwrap()).is_some());
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "undecidable");
        assert!(a2.why().contains("registry when a tool runs"), "{a2:?}");
    }
}
