//! Checkpoint rows → steps: the mapping table of [`super`], one function per row of it.

use super::db::{CheckpointRow, Rows, WriteRow};
use super::decode::{decode, python_type, Decoded};
use crate::build::{build, Seen, Step, Written};
use crate::error::IngestError;
use crate::report::{Report, RunError, Verdict};
use crate::value::value_name;
use crate::Ingested;
use agentsim_models::Anomaly;
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};

/// Where superstep k starts on the builder's clock: its tasks read at `k << SHIFT`.
const SHIFT: u32 = 32;
const TOOL_MESSAGE: &str = "langchain_core.messages.tool.ToolMessage";
const SEND: &str = "langgraph.types.Send";

/// A decoded checkpoint.
struct Checkpoint {
    id: String,
    values: Map<String, Json>,
    step: Option<i64>,
}

/// A task's stored writes, in `idx` order.
struct Task {
    id: String,
    path: String,
    writes: Vec<(String, Json)>,
    first_rowid: i64,
}

/// One tool call a task made, as its `ToolMessage` shows it.
#[derive(Clone)]
struct Effect {
    cell: String,
    value: Option<String>,
}

/// A task of a ToolNode fan-out: (task rank, its step, its tool calls, its first rowid).
type Member = (usize, Step, Vec<Effect>, i64);

/// Context of one ingestion: the file name and what the report collects.
struct Ctx {
    file: String,
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    undecided_tool_tasks: u64,
    fanouts: u64,
}

pub fn ingest(file: &str, rows: Rows) -> Result<Ingested, IngestError> {
    let mut cx = Ctx {
        file: file.to_owned(),
        counts: BTreeMap::new(),
        notes: Vec::new(),
        undecided_tool_tasks: 0,
        fanouts: 0,
    };
    cx.notes.push(format!("thread `{}`", rows.thread));
    let chain = cx.chain(&rows.checkpoints)?;
    let tasks = cx.tasks(&rows.writes)?;
    let mut steps = Vec::new();
    let mut failed: Vec<RunError> = Vec::new();
    for (k, cp) in chain.iter().enumerate() {
        let Some(ts) = tasks.get(&cp.id) else {
            continue;
        };
        let next = chain.get(k + 1);
        *cx.counts.entry("supersteps".into()).or_default() += 1;
        let made = cx.superstep(k as u128, cp, next, ts);
        if next.is_none() {
            failed.extend(cx.failure(cp, ts));
        }
        steps.extend(made);
    }
    let history = build(steps, true);
    // Only the last superstep can fail to commit, so its records are the aborted ones.
    let aborted: Vec<usize> = (0..history.len())
        .filter(|&i| history.records[i].aborted)
        .collect();
    let errors: Vec<RunError> = failed
        .into_iter()
        .map(|e| RunError {
            records: aborted.clone(),
            ..e
        })
        .collect();
    cx.counts.insert("records".into(), history.len() as u64);
    let report = Report {
        source: "langgraph",
        file: cx.file.clone(),
        records: history.len(),
        verdicts: cx.verdicts(),
        counts: std::mem::take(&mut cx.counts),
        errors,
        notes: std::mem::take(&mut cx.notes),
    };
    Ok(Ingested { history, report })
}

impl Ctx {
    fn count(&mut self, what: &str, n: u64) {
        *self.counts.entry(what.to_owned()).or_default() += n;
    }

    fn decode(
        &self,
        what: String,
        encoding: Option<&str>,
        bytes: &[u8],
    ) -> Result<Json, IngestError> {
        match decode(encoding, bytes) {
            Decoded::Value(v) => Ok(v),
            Decoded::Unknown(encoding) => Err(IngestError::UnknownEncoding {
                file: self.file.clone(),
                what,
                encoding,
            }),
            Decoded::Bad(message) => Err(IngestError::BadBlob {
                file: self.file.clone(),
                what,
                message,
            }),
        }
    }

    /// The root namespace's checkpoints from the first to the newest, following parents.
    fn chain(&mut self, rows: &[CheckpointRow]) -> Result<Vec<Checkpoint>, IngestError> {
        let root: BTreeMap<&str, &CheckpointRow> = rows
            .iter()
            .filter(|r| r.ns.is_empty())
            .map(|r| (r.id.as_str(), r))
            .collect();
        self.count("subgraph_checkpoints", (rows.len() - root.len()) as u64);
        // uuid6 checkpoint ids sort by creation time within a process: the last is the head.
        let Some(&head) = root.values().next_back() else {
            return Err(IngestError::Ambiguous {
                file: self.file.clone(),
                message: "the thread has no checkpoints in the root namespace".to_owned(),
            });
        };
        let mut order = vec![head];
        let mut seen = BTreeSet::from([head.id.as_str()]);
        while let Some(parent) = order.last().and_then(|r| r.parent.as_deref()) {
            match root.get(parent) {
                Some(&p) if seen.insert(p.id.as_str()) => order.push(p),
                Some(_) => {
                    self.notes.push(format!(
                        "checkpoint {parent} is its own ancestor; stopped there"
                    ));
                    break;
                }
                None => {
                    self.notes.push(format!(
                        "the parent {parent} of the oldest checkpoint read is missing"
                    ));
                    break;
                }
            }
        }
        order.reverse();
        self.count("checkpoints", order.len() as u64);
        let forked = root.len() - order.len();
        if forked > 0 {
            self.count("forked_checkpoints", forked as u64);
            self.notes.push(format!(
                "{forked} checkpoints are on other branches of the thread (forks); only the \
                 branch ending at the newest checkpoint was read"
            ));
        }
        order.into_iter().map(|r| self.checkpoint(r)).collect()
    }

    fn checkpoint(&self, r: &CheckpointRow) -> Result<Checkpoint, IngestError> {
        let what = format!("checkpoint {}", r.id);
        let v = self.decode(what.clone(), r.encoding.as_deref(), &r.blob)?;
        let values = match v.get("channel_values") {
            Some(Json::Object(m)) => m.clone(),
            None => Map::new(),
            Some(other) => {
                return Err(IngestError::BadBlob {
                    file: self.file.clone(),
                    what,
                    message: format!("channel_values is {other}, not an object"),
                })
            }
        };
        let meta: Json = serde_json::from_slice(&r.metadata)
            .or_else(|_| super::decode::msgpack(&r.metadata))
            .map_err(|e| IngestError::BadBlob {
                file: self.file.clone(),
                what: format!("metadata of checkpoint {}", r.id),
                message: e.to_string(),
            })?;
        Ok(Checkpoint {
            id: r.id.clone(),
            values,
            step: meta.get("step").and_then(Json::as_i64),
        })
    }

    /// Root-namespace writes grouped by checkpoint, then task (sorted by task path, id).
    fn tasks(&mut self, rows: &[WriteRow]) -> Result<BTreeMap<String, Vec<Task>>, IngestError> {
        let mut by_cp: BTreeMap<String, BTreeMap<(String, String), Task>> = BTreeMap::new();
        for w in rows {
            if !w.ns.is_empty() {
                self.count("subgraph_writes", 1);
                continue;
            }
            let what = format!(
                "write {} of task {} (checkpoint {}, channel {})",
                w.idx, w.task_id, w.checkpoint_id, w.channel
            );
            let value = self.decode(what, w.encoding.as_deref(), &w.value)?;
            let task = by_cp
                .entry(w.checkpoint_id.clone())
                .or_default()
                .entry((w.task_path.clone(), w.task_id.clone()))
                .or_insert_with(|| Task {
                    id: w.task_id.clone(),
                    path: w.task_path.clone(),
                    writes: Vec::new(),
                    first_rowid: w.rowid,
                });
            task.first_rowid = task.first_rowid.min(w.rowid);
            task.writes.push((w.channel.clone(), value));
        }
        Ok(by_cp
            .into_iter()
            .map(|(cp, ts)| (cp, ts.into_values().collect()))
            .collect())
    }

    /// The steps of the tasks that ran from `cp`; `next` is the checkpoint they led to.
    fn superstep(
        &mut self,
        k: u128,
        cp: &Checkpoint,
        next: Option<&Checkpoint>,
        ts: &[Task],
    ) -> Vec<Step> {
        self.count("tasks", ts.len() as u64);
        // The last task (in task order) writing each key applies last.
        let mut last_writer: BTreeMap<&str, usize> = BTreeMap::new();
        for (rank, t) in ts.iter().enumerate() {
            for (ch, _) in &t.writes {
                if is_state_key(ch) {
                    last_writer.insert(ch, rank);
                }
            }
        }
        let mut plain = Vec::new();
        let mut fanout: BTreeMap<String, Vec<Member>> = BTreeMap::new();
        for (rank, t) in ts.iter().enumerate() {
            let (name, push) = self.task_name(cp, t);
            let effects = tool_effects(t);
            let mut step = Step {
                agent: name.clone(),
                read_at: k << SHIFT,
                commit_at: (k << SHIFT) + 1 + rank as u128,
                aborted: next.is_none(),
                ..Step::default()
            };
            if !push {
                step.reads = cp
                    .values
                    .iter()
                    .filter(|(key, _)| is_state_key(key))
                    .map(|(key, v)| (key.clone(), Seen::Value(value_name(v))))
                    .collect();
            }
            step.writes = self.writes(t, rank, &last_writer, next);
            if push && !effects.is_empty() {
                fanout
                    .entry(name)
                    .or_default()
                    .push((rank, step, effects, t.first_rowid));
                continue;
            }
            if effects.len() >= 2 {
                self.undecided_tool_tasks += 1;
            }
            let cells: Vec<String> = effects.iter().map(|e| e.cell.clone()).collect();
            add_effects(&mut step, &effects);
            // Effects run inside one task complete in an order the checkpointer does not
            // keep. The history format has no "unknown" completion order (`co` must be a
            // permutation of `io`), so issue order stands in, and the report marks A6
            // undecidable for exactly these tasks: its "none" there is not an answer.
            step.io = cells.clone();
            step.co = cells;
            plain.push(step);
        }
        for (_, group) in fanout {
            plain.push(self.merge_fanout(group));
        }
        plain
    }

    /// The node a task ran, and whether it is a push (`Send`) task.
    fn task_name(&mut self, cp: &Checkpoint, t: &Task) -> (String, bool) {
        let parts: Vec<&str> = t.path.trim_start_matches('~').split(", ").collect();
        match parts.as_slice() {
            ["__pregel_pull", name, ..] => ((*name).to_owned(), false),
            ["__pregel_push", index, ..] => {
                let node = index.parse::<usize>().ok().and_then(|i| send_node(cp, i));
                match node {
                    Some(n) => (n, true),
                    None => (format!("push:{index}"), true),
                }
            }
            _ => {
                self.notes.push(format!(
                    "task {} has no task path this reader knows (`{}`); named by its id",
                    t.id, t.path
                ));
                (format!("task:{}", t.id), false)
            }
        }
    }

    /// The task's state-key writes, each with the value the key took.
    fn writes(
        &mut self,
        t: &Task,
        rank: usize,
        last_writer: &BTreeMap<&str, usize>,
        next: Option<&Checkpoint>,
    ) -> Vec<(String, Written)> {
        let mut out: BTreeMap<String, Written> = BTreeMap::new();
        for (ch, v) in &t.writes {
            if !is_state_key(ch) {
                self.count("internal_writes", 1);
                continue;
            }
            self.count("writes", 1);
            let applied = match next {
                Some(n) if last_writer.get(ch.as_str()) == Some(&rank) => {
                    n.values.get(ch).and_then(value_name)
                }
                _ => value_name(v),
            };
            out.insert(ch.clone(), Written::Value(applied));
        }
        out.into_iter().collect()
    }

    /// One record for a ToolNode fan-out: effects in task order and in storage order.
    /// `group` is in task order; each entry is (rank, step, effects, first rowid).
    fn merge_fanout(&mut self, group: Vec<Member>) -> Step {
        self.fanouts += 1;
        let io: Vec<Effect> = group.iter().flat_map(|g| g.2.clone()).collect();
        let mut by_rowid: Vec<&Member> = group.iter().collect();
        by_rowid.sort_by_key(|g| g.3);
        let co: Vec<String> = by_rowid
            .iter()
            .flat_map(|g| g.2.iter().map(|e| e.cell.clone()))
            .collect();
        // The merged record commits where the last task of the fan-out did; a later task's
        // write of a shared key is the one that applied.
        let mut writes: BTreeMap<String, Written> = BTreeMap::new();
        for (_, s, _, _) in &group {
            for (c, w) in &s.writes {
                writes.insert(c.clone(), w.clone());
            }
        }
        let last = &group[group.len() - 1].1;
        let mut step = Step {
            commit_at: last.commit_at,
            read_at: last.read_at,
            agent: last.agent.clone(),
            aborted: last.aborted,
            ..Step::default()
        };
        step.writes = writes.into_iter().collect();
        add_effects(&mut step, &io);
        step.io = io.iter().map(|e| e.cell.clone()).collect();
        step.co = co;
        step
    }

    /// Why the last superstep did not commit, if its writes say.
    fn failure(&mut self, cp: &Checkpoint, ts: &[Task]) -> Option<RunError> {
        let step = cp
            .step
            .map_or_else(|| "?".to_owned(), |s| (s + 1).to_string());
        if let Some(err) = ts
            .iter()
            .flat_map(|t| &t.writes)
            .find(|(ch, _)| ch == "__error__")
        {
            return Some(RunError {
                kind: python_type(&err.1).unwrap_or("error").to_owned(),
                code: None,
                message: format!(
                    "superstep {step} failed: {}",
                    crate::value::canonical(&err.1)
                ),
                records: Vec::new(),
            });
        }
        let mut writers: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for t in ts {
            let (name, _) = self.task_name(cp, t);
            for (ch, _) in t.writes.iter().filter(|(ch, _)| is_state_key(ch)) {
                writers.entry(ch).or_default().push(name.clone());
            }
        }
        if let Some((key, names)) = writers.iter().find(|(_, n)| n.len() >= 2) {
            return Some(RunError {
                kind: "InvalidUpdateError".to_owned(),
                code: Some("INVALID_CONCURRENT_GRAPH_UPDATE".to_owned()),
                message: format!(
                    "At key '{key}': Can receive only one value per step. Use an Annotated key \
                     to handle multiple values. (inferred: tasks {} of superstep {step} all \
                     wrote `{key}` and the superstep never committed)",
                    names.join(", ")
                ),
                records: Vec::new(),
            });
        }
        let interrupted = ts
            .iter()
            .flat_map(|t| &t.writes)
            .any(|(ch, _)| ch == "__interrupt__");
        self.notes.push(if interrupted {
            format!("the run was interrupted in superstep {step}; its tasks are recorded aborted")
        } else {
            format!(
                "superstep {step} stored writes but no checkpoint followed (the run stopped \
                 before committing it); its tasks are recorded aborted"
            )
        });
        None
    }

    fn verdicts(&self) -> Vec<(Anomaly, Verdict)> {
        let a6 = if self.undecided_tool_tasks > 0 {
            Verdict::Undecidable {
                reason: format!(
                    "{} tasks ran several tool calls inside one task (a ToolNode without Send): \
                     the checkpointer stores their results in call order, not when they \
                     completed",
                    self.undecided_tool_tasks
                ),
            }
        } else {
            Verdict::Decided {
                basis: format!(
                    "{} ToolNode fan-outs: issue order = task order, completion order = the \
                     order their writes were stored",
                    self.fanouts
                ),
            }
        };
        vec![
            (
                Anomaly::A1,
                Verdict::UpperBound {
                    basis: "reads are every state key of the checkpoint a task ran from \
                            (LangGraph hands a node the whole state; the checkpointer does not \
                            record which keys it used), values are the stored channel values: a \
                            witness on a key the node never looked at is a false alarm"
                        .to_owned(),
                },
            ),
            (
                Anomaly::A2,
                Verdict::Undecidable {
                    reason: "checkpoints carry no tool registry".to_owned(),
                },
            ),
            (
                Anomaly::A3,
                Verdict::Decided {
                    basis: "provenance from the checkpoint each task read; a superstep that \
                            fails commits nothing"
                        .to_owned(),
                },
            ),
            (Anomaly::A6, a6),
        ]
    }
}

/// State keys are the channels a user declared; LangGraph's own are `__…__`, `branch:…`,
/// `join:…`.
fn is_state_key(channel: &str) -> bool {
    !(channel.starts_with("__") || channel.starts_with("branch:") || channel.starts_with("join:"))
}

/// The node of the `i`-th `Send` packet pending in `cp`.
fn send_node(cp: &Checkpoint, i: usize) -> Option<String> {
    let send = cp.values.get("__pregel_tasks")?.as_array()?.get(i)?;
    if python_type(send) != Some(SEND) {
        return None;
    }
    match send.get("data")? {
        Json::Array(a) => a.first()?.as_str().map(str::to_owned),
        Json::Object(m) => m.get("node")?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// The tool calls a task's writes show: every `ToolMessage` in them, in write order.
fn tool_effects(t: &Task) -> Vec<Effect> {
    let mut out = Vec::new();
    for (_, v) in &t.writes {
        collect_tool_messages(v, &mut out);
    }
    out
}

fn collect_tool_messages(v: &Json, out: &mut Vec<Effect>) {
    match v {
        Json::Array(items) => items.iter().for_each(|x| collect_tool_messages(x, out)),
        _ if python_type(v) == Some(TOOL_MESSAGE) => {
            let data = v.get("data");
            let field = |k: &str| {
                data.and_then(|d| d.get(k))
                    .and_then(Json::as_str)
                    .unwrap_or("?")
            };
            let content = data
                .and_then(|d| d.get("content"))
                .cloned()
                .unwrap_or(Json::Null);
            out.push(Effect {
                cell: format!("tool:{}:{}", field("name"), field("tool_call_id")),
                value: value_name(&content),
            });
        }
        _ => {}
    }
}

/// Adds each effect's cell to the step's writes (its value the tool's result).
fn add_effects(step: &mut Step, effects: &[Effect]) {
    for e in effects {
        step.writes
            .push((e.cell.clone(), Written::Value(e.value.clone())));
    }
}
