//! GenAI spans → steps: the mapping table of [`super`].

use super::gaps::{mistyped, Gaps};
use super::invocation;
use super::lean::{Attr, LeanSpan as Span};
use super::mapping::{Access, Mapping};
use super::otlp;
use super::pack::{Packed, Packer};
use crate::build::{build_ordered, Provenance, Seen, Step, Written};
use crate::error::IngestError;
use crate::evidence::{self, MemoryEvidence, RegistryEvidence, RetractionEvidence};
use crate::registry::{Observation, SharedRegistry};
use crate::report::{Report, Verdict};
use crate::value::{canonical, value_name};
use crate::Ingested;
use agentsim_models::Anomaly;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};

/// What a GenAI span is to the mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Agent,
    Generation,
    Read,
    Write,
    Tool,
    /// A GenAI operation that is not part of a step (store lifecycle, embeddings, plan, …).
    Other,
}

fn role(op: &str) -> Role {
    match op {
        "invoke_agent" => Role::Agent,
        "chat" | "generate_content" | "text_completion" => Role::Generation,
        "search_memory" | "retrieval" | "memory.search" => Role::Read,
        "create_memory" | "update_memory" | "upsert_memory" | "delete_memory" | "memory.add" => {
            Role::Write
        }
        "execute_tool" => Role::Tool,
        _ => Role::Other,
    }
}

/// The role of span `s`: its operation's, except that a tool the mapping file says reads or
/// writes memory is that read or write.
fn role_of(s: &Span, mapping: Option<&Mapping>) -> Role {
    let Some(o) = op(s) else {
        return Role::Other;
    };
    let r = role(o);
    let mapped = mapping.and_then(|m| m.access(s.str("gen_ai.tool.name")?));
    match (r, mapped) {
        (Role::Tool, Some(Access::Write)) => Role::Write,
        (Role::Tool, Some(Access::Read)) => Role::Read,
        _ => r,
    }
}

/// An agent invocation (or a trace's spans outside any): its spans, in start order.
struct Invocation {
    /// The agent's name (the registry timeline is per name).
    base: String,
    /// The actor: `base`, or `base#k` while k - 1 earlier invocations of it are still open.
    agent: String,
    start: u64,
    end: u64,
    /// The `invoke_agent` span, if any (its tool definitions back a generation's).
    span: Option<usize>,
    members: Vec<usize>,
    /// Some member reached its agent through an orphan or a parent of unknown kind.
    agent_unknown: bool,
    /// The `invoke_agent` span's name (or id) has the wrong type.
    name_unknown: bool,
}

#[derive(Clone, Default)]
struct Cx<'m> {
    mapping: Option<&'m Mapping>,
    roles: Vec<Role>,
    memory: MemoryEvidence,
    registries: RegistryEvidence,
    retractions: RetractionEvidence,
    /// Tool calls with status ERROR: effects that did not land.
    failed_tools: u64,
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    /// For each cell, whether every access carried the record's content.
    content: BTreeMap<String, bool>,
    effects: u64,
    gaps: Gaps,
    /// Spans without `gen_ai.operation.name` that [`op`] read by their attributes, by what.
    by_attributes: BTreeMap<&'static str, u64>,
}

/// A span named across traces: its start, trace and id, which order spans as the mapping
/// reads them (start order).
type SpanKey = (u64, String, String);

fn key(s: &Span) -> SpanKey {
    (s.start, s.trace().to_owned(), s.id().to_owned())
}

/// The span's key if it carries a registry view (`gen_ai.tool.definitions` or
/// `gen_ai.agent.tools`, see [`view`]).
fn definitions(s: &Span) -> Option<Box<SpanKey>> {
    (s.has("gen_ai.tool.definitions") || s.has("gen_ai.agent.tools")).then(|| Box::new(key(s)))
}

/// An invocation as the whole export sees it: what naming its actor needs.
#[derive(Clone)]
struct Actor {
    /// Its place in the export's invocation order: start, then the `invoke_agent` span (none
    /// first), then the trace (kept only without a span: spans never tie).
    order: (u64, Option<Box<SpanKey>>, String),
    base: String,
    agent: String,
    end: u64,
    overlaps: bool,
}

/// A step mapped within its trace, waiting for what only the whole export knows: its actor's
/// name (overlapping invocations) and its registries (the agent's group timeline across
/// traces). Held packed ([`Packed`]) from the end of its trace to the end of the export.
#[derive(Clone)]
struct Pending<S = Step> {
    step: S,
    /// Index into [`Mapper::actors`].
    actor: usize,
    /// The spans whose registry views are its registry: its generation, else its
    /// `invoke_agent` span (each only if it has one: no other span is looked up).
    generation: Option<Box<SpanKey>>,
    agent_span: Option<Box<SpanKey>>,
    /// When its planned call started (else when it committed).
    dispatch: u64,
    /// The span that shows its planned call ran: its first `execute_tool` span that did not
    /// end in ERROR.
    call: Option<Box<str>>,
    memory: bool,
    calls: bool,
    /// Its invocation's agent name (or id) has the wrong type.
    name_unknown: bool,
    /// The spans it was mapped from, when the mapper keeps them ([`Mapper::keep_origins`]).
    origin: Option<Origin>,
}

/// The spans a record was mapped from: its trace and the ids of its step's spans (reads,
/// generation, writes, tool calls), in start order. Held as one string (the ids separated by
/// spaces, the trace first): a mapper holds one per step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin(Box<str>);

impl Origin {
    fn new(trace: &str, spans: impl Iterator<Item = impl AsRef<str>>) -> Origin {
        let mut text = trace.to_owned();
        for s in spans {
            text.push(' ');
            text.push_str(s.as_ref());
        }
        Origin(text.into_boxed_str())
    }

    /// The trace id.
    pub fn trace(&self) -> &str {
        self.0.split(' ').next().unwrap_or("")
    }

    /// The span ids.
    pub fn spans(&self) -> impl Iterator<Item = &str> {
        self.0.split(' ').skip(1)
    }
}

impl<S> Pending<S> {
    fn map_step<T>(self, f: impl FnOnce(S) -> T) -> Pending<T> {
        Pending {
            step: f(self.step),
            actor: self.actor,
            generation: self.generation,
            agent_span: self.agent_span,
            dispatch: self.dispatch,
            call: self.call,
            memory: self.memory,
            calls: self.calls,
            name_unknown: self.name_unknown,
            origin: self.origin,
        }
    }
}

/// A retracted invocation's note, written once its actor is named: the actor, the
/// `invoke_agent` span's id and its status message.
type Retraction = (usize, String, String);

/// The mapping, fed one whole trace at a time, so that a reader holds one trace's spans at a
/// time; what crosses traces (actors, the shared registry timelines, cells) is kept in
/// summaries and settled by [`Mapper::finish`]. The result does not depend on the order of the
/// traces. A clone is the mapping so far, to be finished while the original takes more
/// traces (`agentsim serve` maps each trace once and finishes a clone at each detection).
#[derive(Clone)]
pub struct Mapper<'m> {
    file: String,
    cx: Cx<'m>,
    actors: Vec<Actor>,
    /// Registry views, each with its span: a group's timeline spans traces.
    observations: Vec<(SpanKey, Observation)>,
    pending: Vec<Pending<Packed>>,
    packer: Packer,
    retractions: Vec<Retraction>,
    /// The first span (in start order) that repeats an earlier one of its trace.
    duplicate: Option<SpanKey>,
    /// Whether each step keeps the spans it was mapped from ([`Mapper::keep_origins`]).
    origins: bool,
}

impl<'m> Mapper<'m> {
    pub fn new(file: &str, mapping: Option<&'m Mapping>) -> Mapper<'m> {
        Mapper {
            file: file.to_owned(),
            cx: Cx {
                mapping,
                ..Cx::default()
            },
            actors: Vec::new(),
            observations: Vec::new(),
            pending: Vec::new(),
            packer: Packer::default(),
            retractions: Vec::new(),
            duplicate: None,
            origins: false,
        }
    }

    /// Keeps, for each record, the spans it was mapped from ([`Mapper::finish_with_origins`]):
    /// what an alert names. Off by default: a file's reader has no use for them.
    pub fn keep_origins(mut self) -> Self {
        self.origins = true;
        self
    }

    /// Room for `traces` traces' invocations and steps (one of each a trace, the common
    /// shape), reserved at once: grown as they fill, both vectors are copied at each growth
    /// and the kernel zeroes each larger copy's pages; room never used is never touched.
    pub fn reserve(&mut self, traces: usize) {
        self.actors.reserve(traces);
        self.pending.reserve(traces);
    }

    /// Maps one trace: every span of it (and of no other trace).
    pub fn trace(&mut self, mut spans: Vec<Span>) {
        spans.sort_by(|a, b| (a.start, a.trace(), a.id()).cmp(&(b.start, b.trace(), b.id())));
        let cx = &mut self.cx;
        let mut index: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (i, s) in spans.iter().enumerate() {
            if index.insert((s.trace(), s.id()), i).is_some() {
                let k = key(s);
                if self.duplicate.as_ref().is_none_or(|d| k < *d) {
                    self.duplicate = Some(k);
                }
                return;
            }
        }
        cx.roles = spans.iter().map(|s| role_of(s, cx.mapping)).collect();
        cx.count("traces", u64::from(!spans.is_empty()));
        cx.count("spans", spans.len() as u64);
        for s in &spans {
            cx.gaps.check_types(s);
            if s.parent()
                .is_some_and(|p| !index.contains_key(&(s.trace(), p)))
            {
                cx.gaps.orphans.add(s);
            }
        }
        tool_evidence(&spans, cx);
        let invocations = invocations(&spans, &index, cx);
        self.observations.extend(cx.observe(&spans, &invocations));
        for inv in &invocations {
            let actor = self.actors.len();
            self.actors.push(Actor {
                order: match inv.span {
                    Some(a) => (inv.start, Some(Box::new(key(&spans[a]))), String::new()),
                    None => (inv.start, None, spans[inv.members[0]].trace().to_owned()),
                },
                base: inv.base.clone(),
                agent: inv.agent.clone(),
                end: inv.end,
                overlaps: false,
            });
            let segments = segments(&cx.roles, &inv.members);
            let mut steps: Vec<Pending> = segments
                .iter()
                .map(|members| cx.step(&spans, inv, members, actor))
                .collect();
            if self.origins {
                for (p, members) in steps.iter_mut().zip(&segments) {
                    let ids = members.iter().map(|&m| spans[m].id());
                    p.origin = Some(Origin::new(spans[members[0]].trace(), ids));
                }
            }
            if let Some(r) = cx.retract(&spans, inv, actor, &mut steps) {
                self.retractions.push(r);
            }
            let packer = &mut self.packer;
            self.pending
                .extend(steps.into_iter().map(|p| p.map_step(|s| packer.pack(s))));
        }
    }

    /// Settles what crosses traces and builds the history.
    pub fn finish(self) -> Result<Ingested, IngestError> {
        self.finish_with_origins().map(|(ing, _)| ing)
    }

    /// [`Mapper::finish`], with each record's [`Origin`] (in record order) when the mapper
    /// keeps them ([`Mapper::keep_origins`]; else the list is empty).
    pub fn finish_with_origins(mut self) -> Result<(Ingested, Vec<Origin>), IngestError> {
        if let Some((_, trace, id)) = &self.duplicate {
            return Err(IngestError::Ambiguous {
                file: self.file,
                message: format!("span {id} of trace {trace} appears twice"),
            });
        }
        let cx = &mut self.cx;
        let order = actors(&mut self.actors, cx);
        let registry = cx.settle(std::mem::take(&mut self.observations));
        let mut rank = vec![0; order.len()];
        for (r, &a) in order.iter().enumerate() {
            rank[a] = r;
        }
        // Retraction notes in invocation order, under the actors' settled names.
        self.retractions.sort_by_key(|r| rank[r.0]);
        for (actor, span, why) in std::mem::take(&mut self.retractions) {
            cx.notes.push(format!(
                "invocation {} (span {span}) ended in ERROR ({why}): its writes are read as \
                 retracted",
                self.actors[actor].agent
            ));
        }
        // Stable: a step keeps its place among its invocation's steps, and then among the
        // steps that commit at its instant (the builder's log order).
        self.pending.sort_by_key(|p| rank[p.actor]);
        let pending = std::mem::take(&mut self.pending);
        let mut log: Vec<usize> = (0..pending.len()).collect();
        log.sort_by_key(|&i| pending[i].step.commit_at);
        let commits: Vec<u128> = log.iter().map(|&i| pending[i].step.commit_at).collect();
        let origins: Vec<Origin> = (log.iter())
            .filter_map(|&i| pending[i].origin.clone())
            .collect();
        let derived = cx.derived_cells();
        // Provenance only where a retraction makes it matter (A3), so other histories keep
        // their bytes.
        let provenance = match cx.retractions.retracted.is_empty() {
            true => Provenance::Off,
            false => Provenance::MatchingWrite,
        };
        let (packer, actors) = (&self.packer, &self.actors);
        // Unpacked one at a time, as the builder takes them; each read instant is kept for
        // the wall-clock axis of `agentsim view` (span times are Unix nanoseconds).
        let mut reads = Vec::with_capacity(log.len());
        let mut phantoms = Vec::new();
        let steps = log.iter().enumerate().map(|(at, &i)| {
            let p = &pending[i];
            let mut step = cx.registry(packer.unpack(&p.step), p, actors, &registry);
            derive(&mut step, &derived);
            reads.push(step.read_at.min(step.commit_at));
            if let Some(call) = p
                .call
                .as_deref()
                .filter(|_| crate::evidence::phantom(&step))
            {
                phantoms.push((at, format!("execute_tool span {call}")));
            }
            step
        });
        let history = build_ordered(&commits, steps, provenance);
        cx.notes
            .extend(crate::evidence::phantom_notes(&history, &phantoms));
        let wall_ns = Some(reads.into_iter().zip(commits.iter().copied()).collect());
        let verdicts = cx.verdicts();
        let verdicts = cx.gaps.lower(verdicts, !cx.content.is_empty());
        if !cx.by_attributes.is_empty() {
            let read: Vec<String> = cx
                .by_attributes
                .iter()
                .map(|(o, n)| format!("{n} as {o}"))
                .collect();
            let n: u64 = cx.by_attributes.values().sum();
            cx.count("spans_read_by_attributes", n);
            cx.notes.push(format!(
                "{n} spans without gen_ai.operation.name read by their attributes ({}): \
                 pydantic-ai 1.0's agent run, running tools and running tool (gen_ai.tool.name, \
                 tool_arguments, tool_response), Strands' early event-loop cycle \
                 (event_loop.cycle_id)",
                read.join(", ")
            ));
        }
        let notes = cx.gaps.notes();
        cx.notes.extend(notes);
        let report = Report {
            source: crate::Source::Otel,
            file: self.file,
            records: history.len(),
            verdicts,
            counts: std::mem::take(&mut cx.counts),
            errors: Vec::new(),
            notes: std::mem::take(&mut cx.notes),
            wall_ns,
            initial: Default::default(),
        };
        Ok((Ingested { history, report }, origins))
    }
}

/// Maps a whole export at once.
pub fn ingest(
    file: &str,
    spans: Vec<otlp::Span>,
    mapping: Option<&Mapping>,
) -> Result<Ingested, IngestError> {
    let mut traces: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for s in spans {
        let s = Span::from_span(&s);
        traces.entry(s.trace().to_owned()).or_default().push(s);
    }
    let mut m = Mapper::new(file, mapping);
    for (_, spans) in traces {
        m.trace(spans);
    }
    m.finish()
}

/// `gen_ai.tool.name` of the `execute_tool` span Google ADK writes after the calls of one
/// generation that ran in parallel, holding their merged response: it runs no tool.
const MERGED_TOOLS: &str = "(merged tools)";

/// The operation the mapping reads a span as: its `gen_ai.operation.name`, except for the spans
/// it recognises by their attributes (one place, so that every role, parent and tool lookup
/// agrees):
///
/// * ADK's `(merged tools)` `execute_tool` → [`AGGREGATE`], the aggregate of the calls beside
///   it, not a call;
/// * a span without an operation that carries `gen_ai.tool.name` → `execute_tool` (pydantic-ai
///   1.0's `running tool`; its arguments and result in `tool_arguments` / `tool_response`);
/// * pydantic-ai 1.0's `agent run` (`agent_name`, `model_name` and `logfire.msg` "<agent_name>
///   run") → `invoke_agent`, and its `running tools` (`tools`, a list, and `logfire.msg`
///   "running <n> tool(s)"), the parent of one generation's calls → [`AGGREGATE`];
/// * Strands' event-loop cycle before it carried an operation (1.5: `event_loop.cycle_id`)
///   → `execute_event_loop_cycle`, the known parent of one cycle's generation and calls.
fn op(s: &Span) -> Option<&str> {
    match s.op() {
        Some("execute_tool") if s.str("gen_ai.tool.name") == Some(MERGED_TOOLS) => Some(AGGREGATE),
        Some(o) => Some(o),
        None => by_attributes(s),
    }
}

/// What [`op`] reads a span without `gen_ai.operation.name` as, from its attributes.
fn by_attributes(s: &Span) -> Option<&'static str> {
    if s.str("gen_ai.tool.name").is_some() {
        return Some("execute_tool");
    }
    if s.str("event_loop.cycle_id").is_some() {
        return Some("execute_event_loop_cycle");
    }
    let msg = s.str("logfire.msg")?;
    if let (Some(agent), Some(_)) = (s.str("agent_name"), s.str("model_name")) {
        if msg.strip_suffix(" run") == Some(agent) {
            return Some("invoke_agent");
        }
    }
    let listed = matches!(s.get("tools"), Some(Attr::Json(Json::Array(_))));
    let count = msg
        .strip_prefix("running ")
        .and_then(|m| m.strip_suffix(" tools").or_else(|| m.strip_suffix(" tool")));
    (listed && count.is_some_and(|n| n.parse::<u64>().is_ok())).then_some(AGGREGATE)
}

/// The operation [`op`] gives a span that groups tool calls without being one.
const AGGREGATE: &str = "tool calls (aggregate)";

/// Keys that show a tool call: a span that carries one and is not read as a call (nor as ADK's
/// aggregate) is a call the reader may have missed.
const CALL_KEYS: &[&str] = &[
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

/// Notes one trace's spans that [`op`] read by their attributes, and the tool calls the trace
/// shows that the mapping does not read ([`Gaps::unread_calls`], [`Gaps::unexecuted`]): a span
/// with tool-call attributes not read as a call, and a call a generation planned
/// (`gen_ai.output.messages` parts of type `tool_call`) with no tool span of its id (or, when
/// the tool spans carry no ids, of its name).
fn tool_evidence(spans: &[Span], cx: &mut Cx<'_>) {
    let mut ids: BTreeSet<&str> = BTreeSet::new();
    let mut unnamed: BTreeSet<&str> = BTreeSet::new();
    for s in spans {
        let o = op(s);
        if let Some(o) = by_attributes(s).filter(|_| s.op().is_none()) {
            *cx.by_attributes.entry(o).or_default() += 1;
        }
        if o == Some("execute_tool") {
            match s.str("gen_ai.tool.call.id") {
                Some(id) => ids.insert(id),
                None => unnamed.insert(s.str("gen_ai.tool.name").unwrap_or("?")),
            };
        } else if o != Some(AGGREGATE) && CALL_KEYS.iter().any(|k| s.has(k)) {
            cx.gaps.unread_calls.add(s);
        }
    }
    for (s, _) in spans
        .iter()
        .zip(&cx.roles)
        .filter(|(_, &r)| r == Role::Generation)
    {
        for (id, name) in planned_calls(s) {
            let ran = match id {
                Some(id) => ids.contains(id.as_str()) || unnamed.contains(name.as_str()),
                None => unnamed.contains(name.as_str()) || !ids.is_empty(),
            };
            if !ran {
                cx.gaps.unexecuted.add(s);
            }
        }
    }
}

/// The tool calls a generation planned: the `tool_call` parts (id, name) of its
/// `gen_ai.output.messages`. Parsed only when the text names a `tool_call` part.
fn planned_calls(s: &Span) -> Vec<(Option<String>, String)> {
    let key = "gen_ai.output.messages";
    if let Some(Attr::Str(text)) = s.get(key) {
        if !text.contains("tool_call") {
            return Vec::new();
        }
    }
    let Some(Json::Array(messages)) = structured(s, key) else {
        return Vec::new();
    };
    let parts = messages
        .iter()
        .filter_map(|m| m.get("parts").and_then(Json::as_array))
        .flatten();
    parts
        .filter(|p| p.get("type").and_then(Json::as_str) == Some("tool_call"))
        .map(|p| {
            let id = p.get("id").and_then(Json::as_str).map(str::to_owned);
            let name = p.get("name").and_then(Json::as_str).unwrap_or("?");
            (id, name.to_owned())
        })
        .collect()
}

/// Groups the step spans by their nearest `invoke_agent` ancestor and names the agents.
fn invocations(
    spans: &[Span],
    index: &BTreeMap<(&str, &str), usize>,
    cx: &mut Cx<'_>,
) -> Vec<Invocation> {
    let mut by_owner: BTreeMap<(String, Option<usize>), (Vec<usize>, bool)> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        let Some(op) = op(s) else {
            cx.count("ignored_spans", 1);
            continue;
        };
        cx.count("genai_spans", 1);
        if op.starts_with("memory.") && cx.roles[i] == Role::Other {
            cx.count("memory_spans_not_accesses", 1);
        }
        match cx.roles[i] {
            Role::Agent => {
                by_owner.entry((s.trace().to_owned(), Some(i))).or_default();
            }
            Role::Other => cx.count("genai_spans_not_steps", 1),
            _ => {
                let (owner, link) = agent_ancestor(spans, index, i);
                match link {
                    Link::Orphaned => cx.gaps.orphaned_steps.add(s),
                    Link::UnknownParent => cx.gaps.unknown_parent.add(s),
                    Link::Known => {}
                }
                let group = by_owner.entry((s.trace().to_owned(), owner)).or_default();
                group.0.push(i);
                group.1 |= link != Link::Known;
            }
        }
    }
    let mut out: Vec<Invocation> = by_owner
        .into_iter()
        .filter(|(_, (m, _))| !m.is_empty())
        .map(|((trace, owner), (members, agent_unknown))| {
            let base = match owner {
                Some(a) => {
                    let s = &spans[a];
                    // `agent_name`: pydantic-ai's `agent run` ([`op`]).
                    s.str("gen_ai.agent.name")
                        .or(s.str("gen_ai.agent.id"))
                        .or(s.str("agent_name").filter(|_| s.op().is_none()))
                        .unwrap_or("agent")
                        .to_owned()
                }
                None => invocation::unowned(&trace),
            };
            let (start, end) = invocation::extent(spans, owner, &members);
            Invocation {
                agent: base.clone(),
                base,
                start,
                end,
                span: owner,
                members,
                agent_unknown,
                name_unknown: owner.is_some_and(|a| {
                    let s = &spans[a];
                    mistyped(s, "gen_ai.agent.name")
                        || (s.str("gen_ai.agent.name").is_none() && mistyped(s, "gen_ai.agent.id"))
                }),
            }
        })
        .collect();
    out.sort_by_key(|inv| (inv.start, inv.span));
    cx.count("invocations", out.len() as u64);
    out
}

/// Names the actors of the export's invocations, in their order (returned as indices).
fn actors(actors: &mut [Actor], cx: &mut Cx) -> Vec<usize> {
    let mut order: Vec<usize> = (0..actors.len()).collect();
    order.sort_by(|&a, &b| actors[a].order.cmp(&actors[b].order));
    // One actor has one pending operation (SPEC §1): overlapping invocations of an agent are
    // different actors ([`invocation::Slots`]).
    let mut slots = invocation::Slots::default();
    for &i in &order {
        let inv = &mut actors[i];
        let (k, open) = slots.take(&inv.base, inv.order.0, inv.end);
        // Any invocation open at this one's start overlaps it (not only those in lower slots).
        inv.overlaps = inv.order.1.is_some() && open;
        inv.agent = invocation::actor(&inv.base, k);
        if inv.overlaps {
            if let Some(k) = &inv.order.1 {
                cx.gaps.overlapping.add_at(k.0, &k.1, &k.2);
            }
        }
    }
    order
}

/// How a step span reached its agent: the trace gaps of `super::gaps` on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Known,
    /// The search met a parent id that is not in the export.
    Orphaned,
    /// The span's parent is of a kind the reader does not know (it may be an agent).
    UnknownParent,
}

/// A parent the mapping knows a step can have: its agent, a workflow, a generation, a tool
/// call (whose nested calls are part of the same step), Strands' event-loop cycle and its
/// memory injection (a search before the generation).
fn known_parent(s: &Span) -> bool {
    matches!(
        op(s),
        Some(
            "invoke_agent"
                | "chat"
                | "generate_content"
                | "text_completion"
                | "execute_tool"
                | AGGREGATE
                | "invoke_workflow"
                | "execute_event_loop_cycle"
                | "memory.inject"
        )
    )
}

/// The nearest `invoke_agent` span above span `i` (through spans of any kind), and the gap on
/// the way, if any.
fn agent_ancestor(
    spans: &[Span],
    index: &BTreeMap<(&str, &str), usize>,
    i: usize,
) -> (Option<usize>, Link) {
    let mut at = i;
    let mut link = Link::Known;
    // Each step goes one parent up; more steps than spans means a cycle.
    for _ in 0..spans.len() {
        let Some(parent) = spans[at].parent() else {
            return (None, link);
        };
        let Some(&p) = index.get(&(spans[at].trace(), parent)) else {
            return (None, Link::Orphaned);
        };
        if at == i && !known_parent(&spans[p]) {
            link = Link::UnknownParent;
        }
        at = p;
        if op(&spans[at]).map(role) == Some(Role::Agent) {
            return (Some(at), link);
        }
    }
    (None, link)
}

/// Splits an invocation's spans into steps: reads, then a generation, then writes and tools.
fn segments(roles: &[Role], members: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut has_gen = false;
    let mut has_after = false;
    for &m in members {
        let r = roles[m];
        let new = match r {
            Role::Read => has_gen || has_after,
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
            Role::Write | Role::Tool => has_after = has_gen,
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(m);
        }
    }
    out
}

/// Parses an attribute that is structured or a JSON string of it.
fn structured(s: &Span, key: &str) -> Option<Json> {
    match s.get(key)? {
        Attr::Str(text) => serde_json::from_str(text).ok(),
        Attr::Json(Json::Null) => None,
        Attr::Json(v) => Some(v.clone()),
    }
}

/// The items of an array.
fn array(v: Json) -> Option<Vec<Json>> {
    match v {
        Json::Array(items) => Some(items),
        _ => None,
    }
}

/// The attribute `key` of the first event of `s` named `event` (Strands puts a tool's
/// arguments, its result and memory contents there).
fn event_attr<'a>(s: &'a Span, event: &str, key: &str) -> Option<Attr<'a>> {
    s.event_attr(event, key)
}

/// A tool call's arguments: the mapping's `[attributes] arguments` when the span has it, else
/// `gen_ai.tool.call.arguments`, else the `content` of Strands' `gen_ai.tool.message` event, else
/// pydantic-ai 1.0's `tool_arguments` (its `running tool` span, [`op`]).
fn tool_args(s: &Span, mapping: Option<&Mapping>) -> Option<serde_json::Map<String, Json>> {
    let own = mapping.and_then(|m| m.arguments.as_deref());
    let v = (own.and_then(|k| structured(s, k)))
        .or_else(|| structured(s, "gen_ai.tool.call.arguments"))
        .or_else(|| {
            let c = event_attr(s, "gen_ai.tool.message", "content")?;
            c.as_str().and_then(|t| serde_json::from_str(t).ok())
        })
        .or_else(|| structured(s, "tool_arguments"))?;
    match v {
        Json::Object(m) => Some(m),
        _ => None,
    }
}

/// A tool call's result: the mapping's `[attributes] result` when the span has it, else
/// `gen_ai.tool.call.result`, else pydantic-ai 1.0's `tool_response` ([`op`]), else the
/// `message` of Strands' `gen_ai.choice` event (`[{"text": …}]`, read as the text when it is
/// one part).
fn tool_result(s: &Span, mapping: Option<&Mapping>) -> Option<Json> {
    let own = mapping.and_then(|m| m.result.as_deref());
    for key in own
        .into_iter()
        .chain(["gen_ai.tool.call.result", "tool_response"])
    {
        if let Some(v) = s.get(key) {
            return Some(structured(s, key).unwrap_or_else(|| v.to_json()));
        }
    }
    let m = event_attr(s, "gen_ai.choice", "message")?;
    let parsed = m
        .as_str()
        .and_then(|t| serde_json::from_str::<Json>(t).ok());
    match parsed {
        Some(Json::Array(parts)) if parts.len() == 1 => match parts[0].get("text") {
            Some(t) => Some(t.clone()),
            None => Some(Json::Array(parts)),
        },
        Some(v) => Some(v),
        None => Some(m.to_json()),
    }
}

/// The store names of a Strands `memory.*` span (`memory.store.names`, a JSON list).
fn store_names(s: &Span) -> Option<Vec<String>> {
    let v = structured(s, "memory.store.names")?;
    let names: Vec<String> = v
        .as_array()?
        .iter()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    (!names.is_empty()).then_some(names)
}

/// A registry view from a span: full definitions, or names only.
fn view(s: &Span) -> Option<(BTreeMap<String, Option<String>>, &'static str)> {
    if s.has("gen_ai.tool.definitions") {
        let items = structured(s, "gen_ai.tool.definitions").and_then(array);
        let tools = items
            .unwrap_or_default()
            .iter()
            .filter_map(|item| {
                let name = item.get("name").and_then(Json::as_str)?;
                Some((name.to_owned(), Some(canonical(item))))
            })
            .collect();
        return Some((tools, "gen_ai.tool.definitions"));
    }
    let names = structured(s, "gen_ai.agent.tools")?;
    let tools = names
        .as_array()?
        .iter()
        .filter_map(|n| n.as_str().map(|n| (n.to_owned(), None)))
        .collect();
    Some((tools, "gen_ai.agent.tools"))
}

/// The observed registries and which span gave each view.
struct Registries {
    shared: SharedRegistry,
    /// span → its view's entries.
    at_span: BTreeMap<SpanKey, Vec<(String, u32)>>,
}

impl Cx<'_> {
    fn count(&mut self, what: &str, n: u64) {
        *self.counts.entry(what.to_owned()).or_default() += n;
    }

    /// Every registry view of one trace's invocations, timed by span start, for
    /// [`Cx::settle`].
    fn observe(
        &mut self,
        spans: &[Span],
        invocations: &[Invocation],
    ) -> Vec<(SpanKey, Observation)> {
        let mut obs: Vec<(SpanKey, Observation)> = Vec::new();
        let mut seen = BTreeSet::new();
        for inv in invocations {
            for &m in inv.span.iter().chain(&inv.members) {
                let Some((tools, attr)) = view(&spans[m]).filter(|_| seen.insert(m)) else {
                    continue;
                };
                let kind = op(&spans[m]).unwrap_or("?");
                let e = &mut self.registries;
                *e.observed.entry(format!("{attr} on {kind}")).or_default() += 1;
                e.names_only += u64::from(attr == "gen_ai.agent.tools");
                let o = Observation {
                    at: spans[m].start,
                    observer: inv.base.clone(),
                    tools,
                };
                obs.push((key(&spans[m]), o));
            }
        }
        obs
    }

    /// The registry timelines of the whole export; agents share a registry only where the
    /// mapping file declares it. Views are taken in span order, so the timelines do not
    /// depend on the order of the traces.
    fn settle(&mut self, mut obs: Vec<(SpanKey, Observation)>) -> Registries {
        obs.sort_by(|a, b| a.0.cmp(&b.0));
        let mapping = self.mapping;
        let group_of = |agent: &str| match mapping {
            Some(m) => m.registry_group(agent),
            None => format!("agent:{agent}"),
        };
        let shared = SharedRegistry::new(obs.iter().map(|(_, o)| o.clone()).collect(), group_of);
        let mut at_span = BTreeMap::new();
        for (m, o) in obs {
            if let Some(entries) = shared.own(&o.observer, o.at) {
                // Several views at one instant: the span's own is what the plan saw.
                let mut mine: Vec<(String, u32)> = entries
                    .iter()
                    .filter(|(t, _)| o.tools.contains_key(t))
                    .cloned()
                    .collect();
                mine.sort();
                at_span.insert(m, mine);
            }
        }
        self.registries.changes = shared.changes();
        let declared = self.mapping.filter(|m| !m.registry_groups.is_empty());
        self.registries.sharing = shared.sharing(declared.map(|m| m.file.as_str()));
        Registries { shared, at_span }
    }

    fn step(
        &mut self,
        spans: &[Span],
        inv: &Invocation,
        members: &[usize],
        actor: usize,
    ) -> Pending {
        let of = |r: Role| -> Vec<usize> {
            members
                .iter()
                .copied()
                .filter(|&m| self.roles[m] == r)
                .collect()
        };
        let (reads, gens, writes, tools) = (
            of(Role::Read),
            of(Role::Generation),
            of(Role::Write),
            of(Role::Tool),
        );
        let generation = gens.first().copied();
        let first_start = members
            .iter()
            .map(|&m| spans[m].start)
            .min()
            .unwrap_or(inv.start);
        let read_at = reads
            .first()
            .map(|&r| spans[r].start)
            .or(generation.map(|g| spans[g].start))
            .unwrap_or(first_start);
        let acting: Vec<usize> = writes.iter().chain(&tools).copied().collect();
        let commit_at = acting
            .iter()
            .map(|&m| spans[m].end)
            .max()
            .or(generation.map(|g| spans[g].end))
            .unwrap_or_else(|| {
                members
                    .iter()
                    .map(|&m| spans[m].end)
                    .max()
                    .unwrap_or(inv.end)
            });
        let mut step = Step {
            agent: String::new(),
            read_at: u128::from(read_at),
            commit_at: u128::from(commit_at),
            ..Step::default()
        };
        for &r in &reads {
            self.read(&spans[r], &mut step);
        }
        // Effects: (start, end, span id, cell); a span with several records keeps their order.
        let mut effects: Vec<(u64, u64, &str, usize, String)> = Vec::new();
        // A step all of whose memory writes failed never changed memory: it is recorded
        // aborted, with the writes it attempted; otherwise failed writes are left out.
        let failed = writes.iter().filter(|&&w| spans[w].error).count();
        self.count("failed_memory_writes", failed as u64);
        step.aborted = !writes.is_empty() && failed == writes.len();
        self.retractions.aborted += u64::from(step.aborted);
        // A write made inside a tool call of the step (Strands' `memory.add` under
        // `execute_tool add_memory`) is part of that call's effect, not one of its own.
        let tool_ids: BTreeSet<&str> = tools.iter().map(|&t| spans[t].id()).collect();
        for &w in &writes {
            let written = self.write(&spans[w]);
            if spans[w].error && !step.aborted {
                continue;
            }
            let nested = spans[w].parent().is_some_and(|p| tool_ids.contains(p));
            for (k, (cell, value)) in written.into_iter().enumerate() {
                if !nested {
                    effects.push((spans[w].start, spans[w].end, spans[w].id(), k, cell.clone()));
                }
                step.writes.push((cell, value));
            }
        }
        for &t in &tools {
            let s = &spans[t];
            // A call that ended in ERROR is an effect that did not land.
            if s.error {
                self.failed_tools += 1;
                continue;
            }
            let name = s.str("gen_ai.tool.name").unwrap_or("?");
            let call = s.str("gen_ai.tool.call.id").unwrap_or(s.id());
            let cell = format!("tool:{name}:{call}");
            let value = match tool_result(s, self.mapping) {
                Some(v) => Written::Value(value_name(&v)),
                None => Written::NewVersion,
            };
            step.writes.push((cell.clone(), value));
            effects.push((s.start, s.end, s.id(), 0, cell));
        }
        self.effects += effects.len() as u64;
        let mut io = effects.clone();
        io.sort_by(|a, b| (a.0, a.2, a.3).cmp(&(b.0, b.2, b.3)));
        let mut co = effects;
        co.sort_by(|a, b| (a.1, a.2, a.3).cmp(&(b.1, b.2, b.3)));
        step.io = io.into_iter().map(|e| e.4).collect();
        step.co = co.into_iter().map(|e| e.4).collect();
        // Every tool call that ran is a planned tool, the mapped memory tools too. A call whose
        // span ended in ERROR (refused by a call-time check, or failed) wrote nothing, so it
        // used no tool for a write: not a plan an A2 witness can rest on (SPEC §3).
        let calls = || (members.iter().copied()).filter(|&m| op(&spans[m]) == Some("execute_tool"));
        let not_run = calls().filter(|&t| spans[t].error).count() as u64;
        if not_run > 0 {
            let e = &mut self.registries.not_run;
            *e.entry("execute_tool spans with status ERROR".to_owned())
                .or_default() += not_run;
        }
        let first_tool = calls()
            .filter(|&t| !spans[t].error)
            .min_by_key(|&t| (spans[t].start, spans[t].id()));
        step.planned_tool = first_tool
            .and_then(|t| spans[t].str("gen_ai.tool.name"))
            .map(str::to_owned);
        let dispatch = first_tool.map_or(step.commit_at as u64, |t| spans[t].start);
        let call = first_tool.map(|t| Box::from(spans[t].id()));
        dedup_writes(&mut step);
        let memory = !reads.is_empty() || !writes.is_empty();
        let calls = !tools.is_empty();
        let g = &mut self.gaps;
        g.unknown_agent_memory += u64::from(inv.agent_unknown && memory);
        g.unknown_agent_tools += u64::from(inv.agent_unknown && calls);
        Pending {
            step,
            actor,
            generation: generation.and_then(|g| definitions(&spans[g])),
            agent_span: inv.span.and_then(|a| definitions(&spans[a])),
            dispatch,
            call,
            memory,
            calls,
            name_unknown: inv.name_unknown,
            origin: None,
        }
    }

    /// An invocation whose `invoke_agent` span ended in ERROR was retracted (its workflow
    /// discards what it wrote): its steps are recorded committed, then aborted.
    /// Returns the note's parts ([`Retraction`]) when the invocation wrote.
    fn retract(
        &mut self,
        spans: &[Span],
        inv: &Invocation,
        actor: usize,
        steps: &mut [Pending],
    ) -> Option<Retraction> {
        let a = inv.span.filter(|&a| spans[a].error)?;
        let wrote = steps
            .iter()
            .any(|p| !p.step.writes.is_empty() && !p.step.aborted);
        for p in steps.iter_mut() {
            p.step.retracted = true;
        }
        if !wrote {
            return None;
        }
        let e = &mut self.retractions.retracted;
        *e.entry("invoke_agent spans with status ERROR".to_owned())
            .or_default() += 1;
        let why = spans[a].status_message().unwrap_or("no status message");
        Some((actor, spans[a].id().to_owned(), why.to_owned()))
    }

    fn source(&mut self, what: String) {
        *self.memory.sources.entry(what).or_default() += 1;
    }

    /// A mapped tool's cell from its arguments, or `None` (counted unidentified).
    fn tool_cell(&mut self, s: &Span, write: bool) -> Option<(String, Option<Json>)> {
        let name = s.str("gen_ai.tool.name").unwrap_or("?").to_owned();
        let m = self.mapping?;
        m.access(&name)?;
        self.source(format!("execute_tool {name} ({})", m.file));
        let args = tool_args(s, Some(m));
        let args = args
            .as_ref()
            .ok_or_else(|| "no arguments captured (gen_ai.tool.call.arguments)".to_owned());
        match m.cell(&name, write, args)? {
            Ok(cell) => Some(cell),
            Err(why) => {
                let key = format!("execute_tool {name}: {why}");
                *self.memory.unidentified.entry(key).or_default() += 1;
                None
            }
        }
    }

    fn read(&mut self, s: &Span, step: &mut Step) {
        if op(s) == Some("execute_tool") {
            if let Some((cell, _)) = self.tool_cell(s, false) {
                let seen = match tool_result(s, self.mapping) {
                    Some(v) => Seen::Value(value_name(&v)),
                    None => Seen::Derive,
                };
                self.access(&cell, matches!(seen, Seen::Value(_)));
                step.reads.push((cell, seen));
            }
            return;
        }
        if op(s) == Some("memory.search") {
            self.source("memory.search spans (memory.store.names)".to_owned());
            let results = event_attr(s, "memory.results", "content");
            match store_names(s) {
                Some(stores) => {
                    self.memory.coarse = Some(STORE_CELLS.to_owned());
                    for store in stores {
                        let seen = match results {
                            Some(v) => Seen::Value(value_name(&v.to_json())),
                            None => Seen::Derive,
                        };
                        self.access(&store, matches!(seen, Seen::Value(_)));
                        step.reads.push((store, seen));
                    }
                }
                None => self.unnamed("memory.search", "no memory.store.names"),
            }
            return;
        }
        let search = op(s) == Some("search_memory");
        self.source(format!("{} spans", op(s).unwrap_or("?")));
        let store = if search {
            s.str("gen_ai.memory.store.id").unwrap_or("memory")
        } else {
            s.str("gen_ai.data_source.id").unwrap_or("retrieval")
        }
        .to_owned();
        let key = if search {
            "gen_ai.memory.records"
        } else {
            "gen_ai.retrieval.documents"
        };
        let items = structured(s, key).and_then(array);
        let single = s.str("gen_ai.memory.record.id").filter(|_| search);
        match (items, single) {
            (Some(items), _) => {
                for item in items {
                    match item.get("id").and_then(Json::as_str) {
                        Some(id) => {
                            let cell = format!("{store}/{id}");
                            let seen = match item.get("content").filter(|_| search) {
                                Some(c) => Seen::Value(value_name(c)),
                                None => Seen::Derive,
                            };
                            self.access(&cell, matches!(seen, Seen::Value(_)));
                            step.reads.push((cell, seen));
                        }
                        None => self.unnamed(&store, UNNAMED),
                    }
                }
            }
            (None, Some(id)) => {
                let cell = format!("{store}/{id}");
                self.access(&cell, false);
                step.reads.push((cell, Seen::Derive));
            }
            (None, None) => self.unnamed(&store, UNNAMED),
        }
    }

    fn unnamed(&mut self, store: &str, why: &str) {
        let key = format!("{store} ({why})");
        *self.memory.unidentified.entry(key).or_default() += 1;
    }

    /// The cells a memory write span wrote, with their values.
    fn write(&mut self, s: &Span) -> Vec<(String, Written)> {
        let mut out: Vec<(String, Written)> = Vec::new();
        if op(s) == Some("execute_tool") {
            if let Some((cell, value)) = self.tool_cell(s, true) {
                let w = match value {
                    Some(v) => Written::Value(value_name(&v)),
                    None => Written::NewVersion,
                };
                out.push((cell, w));
            }
        } else if op(s) == Some("memory.add") {
            // An add appends an entry: the store's new content is not in the span.
            self.source("memory.add spans (memory.store.names)".to_owned());
            match store_names(s) {
                Some(stores) => {
                    self.memory.coarse = Some(STORE_CELLS.to_owned());
                    out.extend(stores.into_iter().map(|c| (c, Written::NewVersion)));
                }
                None => self.unnamed("memory.add", "no memory.store.names"),
            }
        } else {
            self.source(format!("{} spans", op(s).unwrap_or("?")));
            self.write_record(s, &mut out);
        }
        for (cell, w) in &out {
            self.access(cell, matches!(w, Written::Value(_)));
        }
        out
    }

    /// The records of a GenAI memory write span (`create_memory`, …).
    fn write_record(&mut self, s: &Span, out: &mut Vec<(String, Written)>) {
        let store = s
            .str("gen_ai.memory.store.id")
            .unwrap_or("memory")
            .to_owned();
        let delete = op(s) == Some("delete_memory");
        let single = s.str("gen_ai.memory.record.id");
        let items = structured(s, "gen_ai.memory.records").and_then(array);
        match (items, single) {
            (Some(items), single) if !delete => {
                let lone = items.len() == 1;
                for item in items {
                    let id = item
                        .get("id")
                        .and_then(Json::as_str)
                        .or(single.filter(|_| lone));
                    match id {
                        Some(id) => {
                            let content = item.get("content").cloned().unwrap_or(Json::Null);
                            out.push((
                                format!("{store}/{id}"),
                                Written::Value(value_name(&content)),
                            ));
                        }
                        None => self.unnamed(&store, UNNAMED),
                    }
                }
            }
            (_, Some(id)) => {
                let w = if delete {
                    Written::Value(None)
                } else {
                    Written::NewVersion
                };
                out.push((format!("{store}/{id}"), w));
            }
            _ => self.unnamed(&store, UNNAMED),
        }
    }

    fn access(&mut self, cell: &str, with_content: bool) {
        let all = self.content.entry(cell.to_owned()).or_insert(true);
        *all &= with_content;
    }

    /// A pending step's actor and registries, from what the whole export showed.
    fn registry<S>(
        &mut self,
        mut step: Step,
        p: &Pending<S>,
        actors: &[Actor],
        reg: &Registries,
    ) -> Step {
        let inv = &actors[p.actor];
        step.agent = inv.agent.clone();
        // The mapping may know the overlapping invocations to be separate callers.
        let declared = self
            .mapping
            .is_some_and(|m| m.separate_invocations.contains(&inv.base));
        let g = &mut self.gaps;
        g.overlapping_memory += u64::from(inv.overlaps && p.memory && !declared);
        // What the plan saw: the generation's own definitions, else the invocation's.
        let read = p
            .generation
            .as_deref()
            .and_then(|g| reg.at_span.get(g))
            .or_else(|| p.agent_span.as_deref().and_then(|a| reg.at_span.get(a)));
        step.read_registry = read.cloned().unwrap_or_default();
        g.unnamed_tools += u64::from(p.name_unknown && (p.calls || !step.read_registry.is_empty()));
        if step.planned_tool.is_none() {
            return step;
        }
        self.registries.tool_calls += 1;
        if read.is_none() {
            self.registries.without_registry += 1;
        }
        // What the call resolved against: the agent's registry with every change its group
        // saw before dispatch.
        if let Some((entries, foreign)) = reg.shared.at(&inv.base, p.dispatch) {
            step.write_registry = entries;
            self.registries.foreign_applied += u64::from(foreign > 0);
        }
        step
    }

    /// Cells some access of which carried no content: they are compared by version throughout
    /// ([`derive`]).
    fn derived_cells(&mut self) -> BTreeSet<String> {
        let derived: BTreeSet<String> = self
            .content
            .iter()
            .filter(|(_, &all)| !all)
            .map(|(c, _)| c.clone())
            .collect();
        let n = derived.len() as u64;
        self.memory.cells = self.content.len();
        self.memory.by_version = derived.len();
        self.count("memory_cells", self.content.len() as u64);
        self.count("memory_cells_by_version", n);
        self.count("failed_tool_calls", self.failed_tools);
        derived
    }

    fn verdicts(&mut self) -> Vec<(Anomaly, Verdict)> {
        self.memory.looked_for = match self.mapping {
            Some(m) => format!(
                "no search_memory, retrieval, *_memory or memory.* spans, and no call of a \
                 tool {} maps",
                m.file
            ),
            None => "no search_memory, retrieval, *_memory or memory.* spans, and no \
                     --tool-memory mapping for memory behind tools"
                .to_owned(),
        };
        let a1 = evidence::a1(&self.memory);
        let a2 = evidence::a2(&self.registries);
        let a3 = evidence::a3(&self.retractions);
        let failed = match self.failed_tools {
            0 => String::new(),
            n => {
                format!("; {n} execute_tool spans with status ERROR did not land and are left out")
            }
        };
        let a6 = Verdict::Decided {
            basis: format!(
                "{} effects: issue order = span start, completion order = span end (a tool \
                 span's end, when the call returned, is taken as when its effect landed){failed}",
                self.effects
            ),
        };
        crate::report::lattice_verdicts(a1, a2, a3, a6)
    }
}

const UNNAMED: &str = "no gen_ai.memory.records ids, gen_ai.memory.record.id or \
                       gen_ai.retrieval.documents ids";

const STORE_CELLS: &str = "Strands' memory.* spans name stores (memory.store.names), not \
                           records, and their contents are in span events: a store is one \
                           cell, compared by version, so an add of any entry counts as a change";

/// A step's reads and writes of `derived` cells ([`Cx::derived_cells`]) by version.
fn derive(step: &mut Step, derived: &BTreeSet<String>) {
    if derived.is_empty() {
        return;
    }
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

/// A step writing a cell twice keeps the last write (the builder takes one per cell).
fn dedup_writes(step: &mut Step) {
    let mut last: BTreeMap<String, Written> = BTreeMap::new();
    for (c, w) in step.writes.drain(..) {
        last.insert(c, w);
    }
    step.writes = last.into_iter().collect();
    let mut seen = BTreeSet::new();
    step.io.retain(|c| seen.insert(c.clone()));
    let mut seen = BTreeSet::new();
    step.co.retain(|c| seen.insert(c.clone()));
}
