//! GenAI spans → steps: the mapping table of [`super`].

use super::gaps::{mistyped, Gaps};
use super::otlp::Span;
use crate::build::{build, Seen, Step, Written};
use crate::error::IngestError;
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
        "search_memory" | "retrieval" => Role::Read,
        "create_memory" | "update_memory" | "upsert_memory" | "delete_memory" => Role::Write,
        "execute_tool" => Role::Tool,
        _ => Role::Other,
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

#[derive(Default)]
struct Cx {
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    /// Stores with reads or writes that did not say which records: A1 undecidable there.
    unidentified: BTreeMap<String, u64>,
    /// For each cell, whether every access carried the record's content.
    content: BTreeMap<String, bool>,
    tool_calls_without_registry: u64,
    effects: u64,
    gaps: Gaps,
}

/// A span named across traces: its start, trace and id, which order spans as the mapping
/// reads them (start order).
type SpanKey = (u64, String, String);

fn key(s: &Span) -> SpanKey {
    (s.start, s.trace.clone(), s.id.clone())
}

/// The span's key if it carries `gen_ai.tool.definitions` (a registry observation).
fn definitions(s: &Span) -> Option<Box<SpanKey>> {
    s.attrs
        .contains_key("gen_ai.tool.definitions")
        .then(|| Box::new(key(s)))
}

/// An invocation as the whole export sees it: what naming its actor needs.
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
/// name (overlapping invocations) and its registries (the agent's timeline across traces).
struct Pending {
    step: Step,
    /// Index into [`Mapper::actors`].
    actor: usize,
    /// The spans whose `gen_ai.tool.definitions` are its registry: its generation, else its
    /// `invoke_agent` span (each only if it has them: no other span is looked up).
    generation: Option<Box<SpanKey>>,
    agent_span: Option<Box<SpanKey>>,
    /// When its first tool call started (else when it committed).
    dispatch: u64,
    memory: bool,
    calls: bool,
    /// Its invocation's agent name (or id) has the wrong type.
    name_unknown: bool,
}

/// A `gen_ai.tool.definitions` observation: the span, its agent, its named definitions
/// (name, canonical text).
struct Observation {
    at: SpanKey,
    base: String,
    items: Vec<(String, String)>,
}

/// The mapping, fed one whole trace at a time, so that a reader holds one trace's spans at a
/// time; what crosses traces (actors, registry timelines, cells) is kept in summaries and
/// settled by [`Mapper::finish`]. The result does not depend on the order of the traces.
pub struct Mapper {
    file: String,
    cx: Cx,
    actors: Vec<Actor>,
    observations: Vec<Observation>,
    pending: Vec<Pending>,
    /// The first span (in start order) that repeats an earlier one of its trace.
    duplicate: Option<SpanKey>,
}

impl Mapper {
    pub fn new(file: &str) -> Mapper {
        Mapper {
            file: file.to_owned(),
            cx: Cx::default(),
            actors: Vec::new(),
            observations: Vec::new(),
            pending: Vec::new(),
            duplicate: None,
        }
    }

    /// Maps one trace: every span of it (and of no other trace).
    pub fn trace(&mut self, mut spans: Vec<Span>) {
        spans.sort_by(|a, b| (a.start, &a.trace, &a.id).cmp(&(b.start, &b.trace, &b.id)));
        let cx = &mut self.cx;
        let mut index: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (i, s) in spans.iter().enumerate() {
            if index.insert((&s.trace, &s.id), i).is_some() {
                let k = key(s);
                if self.duplicate.as_ref().is_none_or(|d| k < *d) {
                    self.duplicate = Some(k);
                }
                return;
            }
        }
        cx.count("traces", u64::from(!spans.is_empty()));
        cx.count("spans", spans.len() as u64);
        for s in &spans {
            cx.gaps.check_types(s);
            if s.parent
                .as_deref()
                .is_some_and(|p| !index.contains_key(&(&s.trace, p)))
            {
                cx.gaps.orphans.add(s);
            }
        }
        let invocations = invocations(&spans, &index, cx);
        self.observations.extend(observe(&spans, &invocations));
        for inv in &invocations {
            let actor = self.actors.len();
            self.actors.push(Actor {
                order: match inv.span {
                    Some(a) => (inv.start, Some(Box::new(key(&spans[a]))), String::new()),
                    None => (inv.start, None, spans[inv.members[0]].trace.clone()),
                },
                base: inv.base.clone(),
                agent: inv.agent.clone(),
                end: inv.end,
                overlaps: false,
            });
            for members in segments(&spans, &inv.members) {
                let p = cx.step(&spans, inv, &members, actor);
                self.pending.push(p);
            }
        }
    }

    /// Settles what crosses traces and builds the history.
    pub fn finish(mut self) -> Result<Ingested, IngestError> {
        if let Some((_, trace, id)) = &self.duplicate {
            return Err(IngestError::Ambiguous {
                file: self.file,
                message: format!("span {id} of trace {trace} appears twice"),
            });
        }
        let cx = &mut self.cx;
        let order = actors(&mut self.actors, cx);
        let registry = Registries::settle(std::mem::take(&mut self.observations));
        let mut rank = vec![0; order.len()];
        for (r, &a) in order.iter().enumerate() {
            rank[a] = r;
        }
        // Stable: a step keeps its place among its invocation's steps.
        self.pending.sort_by_key(|p| rank[p.actor]);
        let pending = std::mem::take(&mut self.pending);
        let actors = &self.actors;
        let mut steps: Vec<Step> = pending
            .into_iter()
            .map(|p| cx.registry(p, actors, &registry))
            .collect();
        cx.derive_uncaptured(&mut steps);
        let history = build(steps, false);
        let verdicts = cx.gaps.lower(cx.verdicts(), !cx.content.is_empty());
        let notes = cx.gaps.notes();
        cx.notes.extend(notes);
        let report = Report {
            source: "otel",
            file: self.file,
            records: history.len(),
            verdicts,
            counts: std::mem::take(&mut cx.counts),
            errors: Vec::new(),
            notes: std::mem::take(&mut cx.notes),
        };
        Ok(Ingested { history, report })
    }
}

/// Maps a whole export at once.
pub fn ingest(file: &str, spans: Vec<Span>) -> Result<Ingested, IngestError> {
    let mut traces: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for s in spans {
        traces.entry(s.trace.clone()).or_default().push(s);
    }
    let mut m = Mapper::new(file);
    for (_, spans) in traces {
        m.trace(spans);
    }
    m.finish()
}

fn op(s: &Span) -> Option<&str> {
    s.str("gen_ai.operation.name")
}

/// Groups the step spans by their nearest `invoke_agent` ancestor and names the agents.
fn invocations(
    spans: &[Span],
    index: &BTreeMap<(&str, &str), usize>,
    cx: &mut Cx,
) -> Vec<Invocation> {
    let mut by_owner: BTreeMap<(String, Option<usize>), (Vec<usize>, bool)> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        let Some(op) = op(s) else {
            cx.count("ignored_spans", 1);
            continue;
        };
        cx.count("genai_spans", 1);
        match role(op) {
            Role::Agent => {
                by_owner.entry((s.trace.clone(), Some(i))).or_default();
            }
            Role::Other => cx.count("genai_spans_not_steps", 1),
            _ => {
                let (owner, link) = agent_ancestor(spans, index, i);
                match link {
                    Link::Orphaned => cx.gaps.orphaned_steps.add(s),
                    Link::UnknownParent => cx.gaps.unknown_parent.add(s),
                    Link::Known => {}
                }
                let group = by_owner.entry((s.trace.clone(), owner)).or_default();
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
                    s.str("gen_ai.agent.name")
                        .or(s.str("gen_ai.agent.id"))
                        .unwrap_or("agent")
                        .to_owned()
                }
                None => format!("trace:{}", &trace[..trace.len().min(8)]),
            };
            let (start, end) = match owner {
                Some(a) => (spans[a].start, spans[a].end),
                None => (
                    members.iter().map(|&m| spans[m].start).min().unwrap_or(0),
                    members.iter().map(|&m| spans[m].end).max().unwrap_or(0),
                ),
            };
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
    // different actors. Each takes the lowest slot free at its start.
    let mut slots: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for &i in &order {
        let inv = &mut actors[i];
        let start = inv.order.0;
        let ends = slots.entry(inv.base.clone()).or_default();
        let k = match ends.iter().position(|&e| e <= start) {
            Some(k) => k,
            None => {
                ends.push(0);
                ends.len() - 1
            }
        };
        // Any invocation open at this one's start overlaps it (not only those in lower slots).
        inv.overlaps =
            inv.order.1.is_some() && ends.iter().enumerate().any(|(j, &e)| j != k && e > start);
        ends[k] = inv.end;
        if k > 0 {
            inv.agent = format!("{}#{}", inv.base, k + 1);
        }
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

/// A parent the mapping knows a step can have: its agent, a workflow, a generation or a tool
/// call (whose nested calls are part of the same step).
fn known_parent(s: &Span) -> bool {
    matches!(
        op(s).map(|o| (o, role(o))),
        Some((_, Role::Agent | Role::Generation | Role::Tool) | ("invoke_workflow", _))
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
        let Some(parent) = spans[at].parent.as_deref() else {
            return (None, link);
        };
        let Some(&p) = index.get(&(spans[at].trace.as_str(), parent)) else {
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
fn segments(spans: &[Span], members: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut has_gen = false;
    let mut has_after = false;
    for &m in members {
        let r = op(&spans[m]).map(role).unwrap_or(Role::Other);
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
    match s.attrs.get(key)? {
        Json::String(text) => serde_json::from_str(text).ok(),
        Json::Null => None,
        v => Some(v.clone()),
    }
}

/// A registry snapshot: (tool, signature version) pairs.
type Entries = Vec<(String, u32)>;

/// The `gen_ai.tool.definitions` of one trace's invocations, for [`Registries::settle`].
fn observe(spans: &[Span], invocations: &[Invocation]) -> Vec<Observation> {
    let mut obs: Vec<(u64, &str, usize)> = Vec::new();
    for inv in invocations {
        for &m in inv.members.iter().chain(inv.span.iter()) {
            if spans[m].attrs.contains_key("gen_ai.tool.definitions") {
                obs.push((spans[m].start, inv.base.as_str(), m));
            }
        }
    }
    obs.sort();
    obs.dedup();
    obs.into_iter()
        .map(|(_, base, m)| {
            let defs = structured(&spans[m], "gen_ai.tool.definitions");
            let items = defs.as_ref().and_then(Json::as_array);
            let named = items.into_iter().flatten().filter_map(|item| {
                let name = item.get("name").and_then(Json::as_str)?;
                Some((name.to_owned(), canonical(item)))
            });
            Observation {
                at: key(&spans[m]),
                base: base.to_owned(),
                items: named.collect(),
            }
        })
        .collect()
}

/// Registries observed per agent (base name): `gen_ai.tool.definitions`, with versions.
struct Registries {
    /// base → (start, entries) in time order.
    seen: BTreeMap<String, Vec<(u64, Entries)>>,
    /// span → its entries.
    at_span: BTreeMap<SpanKey, Entries>,
}

impl Registries {
    /// Numbers the definitions of each (agent, tool) in the order the export shows them.
    fn settle(mut obs: Vec<Observation>) -> Registries {
        obs.sort_by(|a, b| (a.at.0, &a.base, &a.at).cmp(&(b.at.0, &b.base, &b.at)));
        let mut versions: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        let mut r = Registries {
            seen: BTreeMap::new(),
            at_span: BTreeMap::new(),
        };
        for o in obs {
            let mut entries = Vec::new();
            for (name, text) in o.items {
                let known = versions.entry((o.base.clone(), name.clone())).or_default();
                let v = match known.iter().position(|k| *k == text) {
                    Some(v) => v,
                    None => {
                        known.push(text);
                        known.len() - 1
                    }
                };
                entries.push((name, v as u32));
            }
            r.seen
                .entry(o.base)
                .or_default()
                .push((o.at.0, entries.clone()));
            r.at_span.insert(o.at, entries);
        }
        r
    }

    /// The agent's latest registry observed at or before `t`.
    fn at(&self, base: &str, t: u64) -> Option<&Vec<(String, u32)>> {
        let seen = self.seen.get(base)?;
        let i = seen.partition_point(|(s, _)| *s <= t);
        i.checked_sub(1).map(|i| &seen[i].1)
    }
}

impl Cx {
    fn count(&mut self, what: &str, n: u64) {
        *self.counts.entry(what.to_owned()).or_default() += n;
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
                .filter(|&m| op(&spans[m]).map(role) == Some(r))
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
        for &w in &writes {
            let written = self.write(&spans[w]);
            if spans[w].error && !step.aborted {
                continue;
            }
            for (k, (cell, value)) in written.into_iter().enumerate() {
                effects.push((spans[w].start, spans[w].end, &spans[w].id, k, cell.clone()));
                step.writes.push((cell, value));
            }
        }
        for &t in &tools {
            let s = &spans[t];
            let name = s.str("gen_ai.tool.name").unwrap_or("?");
            let call = s.str("gen_ai.tool.call.id").unwrap_or(&s.id);
            let cell = format!("tool:{name}:{call}");
            let value = match structured(s, "gen_ai.tool.call.result")
                .or_else(|| s.attrs.get("gen_ai.tool.call.result").cloned())
            {
                Some(v) => Written::Value(value_name(&v)),
                None => Written::NewVersion,
            };
            step.writes.push((cell.clone(), value));
            effects.push((s.start, s.end, &s.id, 0, cell));
        }
        self.effects += effects.len() as u64;
        let mut io = effects.clone();
        io.sort_by(|a, b| (a.0, a.2, a.3).cmp(&(b.0, b.2, b.3)));
        let mut co = effects;
        co.sort_by(|a, b| (a.1, a.2, a.3).cmp(&(b.1, b.2, b.3)));
        step.io = io.into_iter().map(|e| e.4).collect();
        step.co = co.into_iter().map(|e| e.4).collect();
        let first_tool = tools
            .iter()
            .min_by_key(|&&t| (spans[t].start, &spans[t].id));
        step.planned_tool = first_tool
            .and_then(|&t| spans[t].str("gen_ai.tool.name"))
            .map(str::to_owned);
        let dispatch = first_tool.map_or(step.commit_at as u64, |&t| spans[t].start);
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
            memory,
            calls,
            name_unknown: inv.name_unknown,
        }
    }

    fn read(&mut self, s: &Span, step: &mut Step) {
        let search = op(s) == Some("search_memory");
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
        let items = structured(s, key).and_then(|v| v.as_array().cloned());
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
                        None => *self.unidentified.entry(store.clone()).or_default() += 1,
                    }
                }
            }
            (None, Some(id)) => {
                let cell = format!("{store}/{id}");
                self.access(&cell, false);
                step.reads.push((cell, Seen::Derive));
            }
            (None, None) => *self.unidentified.entry(store).or_default() += 1,
        }
    }

    /// The cells a memory write span wrote, with their values.
    fn write(&mut self, s: &Span) -> Vec<(String, Written)> {
        let store = s
            .str("gen_ai.memory.store.id")
            .unwrap_or("memory")
            .to_owned();
        let delete = op(s) == Some("delete_memory");
        let single = s.str("gen_ai.memory.record.id");
        let items = structured(s, "gen_ai.memory.records").and_then(|v| v.as_array().cloned());
        let mut out: Vec<(String, Written)> = Vec::new();
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
                        None => *self.unidentified.entry(store.clone()).or_default() += 1,
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
            _ => *self.unidentified.entry(store).or_default() += 1,
        }
        for (cell, w) in &out {
            self.access(cell, matches!(w, Written::Value(_)));
        }
        out
    }

    fn access(&mut self, cell: &str, with_content: bool) {
        let all = self.content.entry(cell.to_owned()).or_insert(true);
        *all &= with_content;
    }

    /// A pending step's actor and registries, from what the whole export showed.
    fn registry(&mut self, p: Pending, actors: &[Actor], reg: &Registries) -> Step {
        let Pending { mut step, .. } = p;
        let inv = &actors[p.actor];
        step.agent = inv.agent.clone();
        let read = p
            .generation
            .and_then(|g| reg.at_span.get(&*g))
            .or_else(|| p.agent_span.and_then(|a| reg.at_span.get(&*a)));
        step.read_registry = read.cloned().unwrap_or_default();
        step.write_registry = reg.at(&inv.base, p.dispatch).cloned().unwrap_or_default();
        if step.planned_tool.is_some() && read.is_none() {
            self.tool_calls_without_registry += 1;
        }
        let g = &mut self.gaps;
        g.unnamed_tools += u64::from(p.name_unknown && (p.calls || !step.read_registry.is_empty()));
        g.overlapping_memory += u64::from(inv.overlaps && p.memory);
        step
    }

    /// Cells some access of which carried no content are compared by version throughout.
    fn derive_uncaptured(&mut self, steps: &mut [Step]) {
        let derived: BTreeSet<&String> = self
            .content
            .iter()
            .filter(|(_, &all)| !all)
            .map(|(c, _)| c)
            .collect();
        for step in steps.iter_mut() {
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
        let n = derived.len() as u64;
        self.count("memory_cells", self.content.len() as u64);
        self.count("memory_cells_by_version", n);
    }

    fn verdicts(&self) -> Vec<(Anomaly, Verdict)> {
        let by_version = self
            .counts
            .get("memory_cells_by_version")
            .copied()
            .unwrap_or(0);
        let cells = self.content.len();
        let a1 = if !self.unidentified.is_empty() {
            let stores: Vec<String> = self
                .unidentified
                .iter()
                .map(|(s, n)| format!("{s} ({n})"))
                .collect();
            Verdict::Undecidable {
                reason: format!(
                    "memory operations on {} did not say which records they read or wrote \
                     (gen_ai.memory.records, gen_ai.memory.record.id, gen_ai.retrieval.documents \
                     are opt-in or absent)",
                    stores.join(", ")
                ),
            }
        } else if cells == 0 {
            Verdict::Decided {
                basis: "no memory reads or writes in the trace".to_owned(),
            }
        } else if by_version > 0 {
            Verdict::UpperBound {
                basis: format!(
                    "{by_version} of {cells} memory records compared by derived version (their \
                     content was not captured): a rewrite with equal content counts as a change"
                ),
            }
        } else {
            Verdict::Decided {
                basis: format!(
                    "{cells} memory records compared by content (gen_ai.memory.records)"
                ),
            }
        };
        let a2 = if self.tool_calls_without_registry > 0 {
            Verdict::Undecidable {
                reason: format!(
                    "{} steps called tools but their generation carries no \
                     gen_ai.tool.definitions (opt-in)",
                    self.tool_calls_without_registry
                ),
            }
        } else {
            Verdict::Decided {
                basis: "registry = the generation's gen_ai.tool.definitions; at dispatch = the \
                        agent's latest observed definitions; the first tool call of each step \
                        is its planned tool"
                    .to_owned(),
            }
        };
        let a3 = Verdict::Undecidable {
            reason: "spans carry no provenance and no retraction".to_owned(),
        };
        let a6 = Verdict::Decided {
            basis: format!(
                "{} effects: issue order = span start, completion order = span end (a tool \
                 span's end, when the call returned, is taken as when its effect landed)",
                self.effects
            ),
        };
        vec![
            (Anomaly::A1, a1),
            (Anomaly::A2, a2),
            (Anomaly::A3, a3),
            (Anomaly::A6, a6),
        ]
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
