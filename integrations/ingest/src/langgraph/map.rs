//! Checkpoint rows → steps: the mapping table of [`super`], one function per row of it.

use super::db::{CheckpointRow, Rows, WriteRow};
use super::decode::{decode, python_type, Decoded};
use super::fanout::{self, Effect, Member};
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
/// Fan-outs named one by one in the A6 basis; the rest are counted.
const FANOUTS_NAMED_MAX: usize = 3;

/// A decoded checkpoint.
struct Checkpoint {
    id: String,
    values: Map<String, Json>,
    step: Option<i64>,
}

/// The thread's root-namespace checkpoints as the tree their parents make, in id order (uuid6
/// ids sort by creation time, so this is the order they were made in).
struct Tree {
    cps: Vec<Checkpoint>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    /// Branch 1 is the chain of parents from the newest checkpoint; each other leaf, in id
    /// order, adds the branch from it up to a checkpoint already on one.
    branch: Vec<usize>,
    /// The nearest checkpoint strictly above each with two or more children (its fork point).
    fork: Vec<Option<usize>>,
}

impl Tree {
    /// The position of the checkpoint a task of `k` led to (its only child), `None` for a
    /// leaf; a fork point's tasks led to one of several and are `Err`.
    fn next(&self, k: usize) -> Result<Option<usize>, ()> {
        match self.children[k].as_slice() {
            [] => Ok(None),
            [c] => Ok(Some(*c)),
            _ => Err(()),
        }
    }
}

/// A task's stored writes, in `idx` order.
struct Task {
    id: String,
    path: String,
    writes: Vec<(String, Json)>,
    first_rowid: i64,
}

/// Where a superstep's tasks are on the builder's clock: they read at `read` (their
/// checkpoint `at`, or the fork point above it) and commit in task order just before the
/// checkpoint `next` they led to is read, or after `at` when none followed.
#[derive(Clone, Copy)]
struct Clock {
    read: u128,
    at: u128,
    next: Option<u128>,
}

impl Clock {
    fn commit(&self, rank: usize, tasks: usize) -> u128 {
        match self.next {
            Some(n) => (n << SHIFT) - tasks as u128 + rank as u128,
            None => (self.at << SHIFT) + 1 + rank as u128,
        }
    }
}

/// Context of one ingestion: the file name and what the report collects.
struct Ctx {
    file: String,
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    undecided_tool_tasks: u64,
    /// Each `Send` fan-out read: `planner → node, n tasks`.
    fanouts: Vec<String>,
    /// `Send` packets whose task stored no writes: their completion cannot be ordered.
    unordered_sends: u64,
    /// Fork points whose own tasks stored writes: which branch each went to is unknown.
    untold_forks: u64,
    /// Committed writes on branches no later checkpoint of the newest descends from, and an
    /// A1 witness each (reader, writer: a sibling's write), for the A1 verdict.
    lost: Vec<String>,
}

pub fn ingest(file: &str, rows: Rows) -> Result<Ingested, IngestError> {
    let mut cx = Ctx {
        file: file.to_owned(),
        counts: BTreeMap::new(),
        notes: Vec::new(),
        undecided_tool_tasks: 0,
        fanouts: Vec::new(),
        unordered_sends: 0,
        untold_forks: 0,
        lost: Vec::new(),
    };
    cx.notes.push(format!("thread `{}`", rows.thread));
    let tree = cx.tree(&rows.checkpoints)?;
    let tasks = cx.tasks(&rows.writes)?;
    let mut steps = Vec::new();
    let mut failed: Vec<RunError> = Vec::new();
    let head = tree.cps.len() - 1;
    // Writes a fork point's tasks stored: which branch they went to cannot be told.
    let mut untold_forks = 0;
    for (k, cp) in tree.cps.iter().enumerate() {
        let next = match tree.next(k) {
            Ok(n) => n,
            Err(()) => {
                untold_forks += u64::from(tasks.contains_key(&cp.id));
                continue;
            }
        };
        let Some(ts) = tasks.get(&cp.id) else {
            cx.check_sends(cp, next.is_some(), &BTreeMap::new());
            continue;
        };
        let planners = match tree.parent[k].map(|p| &tree.cps[p]) {
            Some(prev) => tasks
                .get(&prev.id)
                .map(|pts| planners(prev, pts))
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        *cx.counts.entry("supersteps".into()).or_default() += 1;
        // After a fork each branch's tasks read the fork point: that is the state their
        // worker started from, and what a sibling branch committed meanwhile it never saw.
        let clock = Clock {
            read: tree.fork[k].unwrap_or(k) as u128,
            at: k as u128,
            next: next.map(|n| n as u128),
        };
        let mut made = cx.superstep(clock, (cp, next.map(|n| &tree.cps[n])), ts, &planners);
        if tree.branch[k] > 1 {
            for step in &mut made {
                step.agent = format!("{}#{}", step.agent, tree.branch[k]);
            }
        }
        if next.is_none() && k == head {
            failed.extend(cx.failure(cp, ts));
        }
        steps.extend(made);
    }
    cx.untold_forks = untold_forks;
    let history = build(steps, true);
    cx.lost_updates(&tree, &history);
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
        source: crate::Source::Langgraph,
        file: cx.file.clone(),
        records: history.len(),
        verdicts: cx.verdicts(),
        counts: std::mem::take(&mut cx.counts),
        errors,
        notes: std::mem::take(&mut cx.notes),
        wall_ns: None,
        initial: Default::default(),
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

    /// The root namespace's checkpoints as a tree (every branch of a forked thread), in id
    /// order. A parent that is missing, or a checkpoint that is its own ancestor, cuts the
    /// tree there (noted).
    fn tree(&mut self, rows: &[CheckpointRow]) -> Result<Tree, IngestError> {
        let root: BTreeMap<&str, &CheckpointRow> = rows
            .iter()
            .filter(|r| r.ns.is_empty())
            .map(|r| (r.id.as_str(), r))
            .collect();
        self.count("subgraph_checkpoints", (rows.len() - root.len()) as u64);
        if root.is_empty() {
            return Err(IngestError::Ambiguous {
                file: self.file.clone(),
                message: "the thread has no checkpoints in the root namespace".to_owned(),
            });
        }
        // uuid6 checkpoint ids sort by creation time within a process: the last is the head.
        let rows: Vec<&CheckpointRow> = root.values().copied().collect();
        let at: BTreeMap<&str, usize> = (rows.iter().enumerate())
            .map(|(k, r)| (r.id.as_str(), k))
            .collect();
        let n = rows.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for (k, r) in rows.iter().enumerate() {
            let Some(p) = r.parent.as_deref() else {
                continue;
            };
            match at.get(p) {
                Some(&q) => parent[k] = Some(q),
                None => self.notes.push(format!(
                    "the parent {p} of checkpoint {} is missing; its branch starts there",
                    r.id
                )),
            }
        }
        // A cycle of parents has no root: cut it at its newest checkpoint.
        for k in 0..n {
            let mut seen = BTreeSet::from([k]);
            let mut q = k;
            while let Some(p) = parent[q] {
                if !seen.insert(p) {
                    self.notes.push(format!(
                        "checkpoint {} is its own ancestor; stopped there",
                        rows[q].id
                    ));
                    parent[q] = None;
                    break;
                }
                q = p;
            }
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (k, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(k);
            }
        }
        let mut branch = vec![0; n];
        let leaves = (0..n).rev().filter(|&k| children[k].is_empty());
        for (number, leaf) in (1..).zip(leaves) {
            let mut q = Some(leaf);
            while let Some(k) = q.filter(|&k| branch[k] == 0) {
                branch[k] = number;
                q = parent[k];
            }
        }
        let mut fork = vec![None; n];
        for k in 0..n {
            let mut q = parent[k];
            while let Some(p) = q {
                if children[p].len() >= 2 {
                    fork[k] = Some(p);
                    break;
                }
                q = parent[p];
            }
        }
        let on_head = branch.iter().filter(|&&b| b == 1).count();
        self.count("checkpoints", on_head as u64);
        let forked = n - on_head;
        if forked > 0 {
            self.count("forked_checkpoints", forked as u64);
            self.notes.push(format!(
                "{forked} checkpoints are on other branches of the thread (forks): every \
                 branch is read, its tasks after the fork reading the fork point, and the \
                 nodes of branch k named `node#k` (branch 1 ends at the newest checkpoint)"
            ));
        }
        let cps = rows
            .into_iter()
            .map(|r| self.checkpoint(r))
            .collect::<Result<_, _>>()?;
        Ok(Tree {
            cps,
            parent,
            children,
            branch,
            fork,
        })
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
        clock: Clock,
        (cp, next): (&Checkpoint, Option<&Checkpoint>),
        ts: &[Task],
        planners: &BTreeMap<String, Vec<String>>,
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
        let mut fanouts: BTreeMap<String, Vec<Member>> = BTreeMap::new();
        for (rank, t) in ts.iter().enumerate() {
            let (name, push) = self.task_name(cp, t);
            let mut effects = tool_effects(t);
            let mut step = Step {
                agent: name.clone(),
                read_at: clock.read << SHIFT,
                commit_at: clock.commit(rank, ts.len()),
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
            if effects.len() >= 2 {
                // Several calls inside one task: stored in call order, not completion order.
                self.undecided_tool_tasks += 1;
            }
            if push {
                if effects.is_empty() {
                    effects.push(fanout::task_effect(&name, push_index(t), &state_writes(t)));
                }
                let member = Member {
                    step,
                    effects,
                    first_rowid: t.first_rowid,
                };
                fanouts.entry(name).or_default().push(member);
                continue;
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
        let ran = fanouts.iter().map(|(n, g)| (n.clone(), g.len())).collect();
        self.check_sends(cp, next.is_some(), &ran);
        plain.extend(self.merge_fanouts(fanouts, planners));
        plain
    }

    /// One record per fan-out, each named in the A6 basis by who sent it.
    fn merge_fanouts(
        &mut self,
        fanouts: BTreeMap<String, Vec<Member>>,
        planners: &BTreeMap<String, Vec<String>>,
    ) -> Vec<Step> {
        let mut out = Vec::new();
        for (node, group) in fanouts {
            let from = planners
                .get(&node)
                .map_or_else(|| "?".to_owned(), |p| p.join("+"));
            let n = group.len();
            let tasks = if n == 1 { "task" } else { "tasks" };
            self.fanouts.push(format!("{from} → {node}, {n} {tasks}"));
            out.push(fanout::merge(&group));
        }
        out
    }

    /// Counts the `Send` packets pending in `cp` that no stored task of the next superstep
    /// answers (`ran`: push tasks per node): their completion cannot be ordered. Packets still
    /// pending in the newest checkpoint never ran (the run stopped first): only noted.
    fn check_sends(&mut self, cp: &Checkpoint, ran_on: bool, ran: &BTreeMap<String, usize>) {
        for (node, sent) in fanout::pending_sends(&cp.values) {
            let stored = ran.get(&node).copied().unwrap_or(0);
            if sent <= stored {
                continue;
            }
            let missing = sent - stored;
            if !ran_on && stored == 0 {
                self.notes.push(format!(
                    "{missing} Send packets to `{node}` were pending in the newest checkpoint: \
                     their tasks never ran"
                ));
                continue;
            }
            self.unordered_sends += missing as u64;
            self.notes.push(format!(
                "{missing} of {sent} Send packets to `{node}` (checkpoint {}) have no task with \
                 stored writes: when they finished cannot be told",
                cp.id
            ));
        }
    }

    /// The node a task ran, and whether it is a push (`Send`) task.
    fn task_name(&mut self, cp: &Checkpoint, t: &Task) -> (String, bool) {
        task_node(cp, t).unwrap_or_else(|| {
            self.notes.push(format!(
                "task {} has no task path this reader knows (`{}`); named by its id",
                t.id, t.path
            ));
            (format!("task:{}", t.id), false)
        })
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

    /// The lost updates of a forked thread: an A1 witness whose reader and writer are on
    /// different branches after one fork, both writing the key (each read the fork point, so
    /// the later commit overwrote a write it never saw). The branch off the newest checkpoint
    /// is the lost one.
    fn lost_updates(&mut self, tree: &Tree, h: &agentsim_models::History) {
        if tree.branch.iter().all(|&b| b == 1) {
            return;
        }
        let branch_of = |agent: &str| {
            (agent.rsplit_once('#'))
                .and_then(|(_, b)| b.parse::<usize>().ok())
                .unwrap_or(1)
        };
        for w in agentsim_models::detect::fast::detect(h).a1 {
            let (r, wr) = (&h.records[w.reader], &h.records[w.writer]);
            let (ra, wa) = (h.names.agent_name(r.agent), h.names.agent_name(wr.agent));
            if branch_of(&ra) == branch_of(&wa) || !r.write_set.contains(&w.cell) {
                continue;
            }
            let cell = h.names.cell_name(w.cell);
            let lost = if branch_of(&wa) > 1 { &wa } else { &ra };
            self.lost.push(format!(
                "record {} ({ra}) and record {} ({wa}) both wrote `{cell}` from the fork \
                 point, and {lost}'s write is lost",
                w.reader, w.writer
            ));
        }
    }

    /// A6 from what the database shows: decided where every fan-out's tasks stored writes and
    /// no task ran several tool calls; a lower bound where some could be ordered and some not.
    fn a6_verdict(&self) -> Verdict {
        let mut unknown = Vec::new();
        if self.undecided_tool_tasks > 0 {
            unknown.push(format!(
                "{} tasks ran several tool calls inside one task (e.g. a ToolNode without Send): \
                 the checkpointer stores their results in call order, not when they completed",
                self.undecided_tool_tasks
            ));
        }
        if self.unordered_sends > 0 {
            unknown.push(format!(
                "{} Send packets have no task with stored writes (see the notes): when they \
                 finished is not in the database",
                self.unordered_sends
            ));
        }
        if self.fanouts.is_empty() {
            return match unknown.is_empty() {
                true => Verdict::Decided {
                    basis: "no Send fan-outs and no task with several tool calls: no record \
                            issued two effects"
                        .to_owned(),
                },
                false => Verdict::Undecidable {
                    reason: unknown.join("; "),
                },
            };
        }
        let mut named: Vec<String> = self
            .fanouts
            .iter()
            .take(FANOUTS_NAMED_MAX)
            .cloned()
            .collect();
        if self.fanouts.len() > FANOUTS_NAMED_MAX {
            named.push(format!(
                "and {} more",
                self.fanouts.len() - FANOUTS_NAMED_MAX
            ));
        }
        let basis = format!(
            "{} Send fan-outs ({}): each task an effect of the step that sent it, issue order = \
             the Send index in the task's `task_path`, completion order = the `rowid` of its \
             first stored write",
            self.fanouts.len(),
            named.join("; ")
        );
        match unknown.is_empty() {
            true => Verdict::Decided { basis },
            false => Verdict::LowerBound {
                basis: format!("{basis}; but {}", unknown.join("; ")),
            },
        }
    }

    fn verdicts(&self) -> Vec<(Anomaly, Verdict)> {
        let a6 = self.a6_verdict();
        let upper = "reads are every state key of the checkpoint a task ran from (LangGraph \
                     hands a node the whole state; the checkpointer does not record which keys \
                     it used), values are the stored channel values: a witness on a key the \
                     node never looked at is a false alarm";
        let a1 = if self.untold_forks > 0 {
            Verdict::Undecidable {
                reason: format!(
                    "{} fork points of the thread stored writes of their own tasks, which \
                     cannot be told apart by the branch they went to",
                    self.untold_forks
                ),
            }
        } else if self.lost.is_empty() {
            Verdict::UpperBound {
                basis: upper.to_owned(),
            }
        } else {
            Verdict::LowerBound {
                basis: format!(
                    "lost updates: {} (a write no later checkpoint of the newest branch \
                     descends from, while the sibling branch, which read the same fork point, \
                     wrote the key too: each is a real A1); other witnesses: {upper}",
                    self.lost.join("; ")
                ),
            }
        };
        let a2 = Verdict::Undecidable {
            reason: "checkpoints carry no tool registry".to_owned(),
        };
        let a3 = Verdict::Decided {
            basis: "provenance from the checkpoint each task read; a superstep that fails \
                    commits nothing"
                .to_owned(),
        };
        crate::report::lattice_verdicts(a1, a2, a3, a6)
    }
}

/// State keys are the channels a user declared; LangGraph's own are `__…__`, `branch:…`,
/// `join:…`.
fn is_state_key(channel: &str) -> bool {
    !(channel.starts_with("__") || channel.starts_with("branch:") || channel.starts_with("join:"))
}

/// The node a task ran and whether it is a push (`Send`) task, from its `task_path`.
fn task_node(cp: &Checkpoint, t: &Task) -> Option<(String, bool)> {
    let parts: Vec<&str> = t.path.trim_start_matches('~').split(", ").collect();
    match parts.as_slice() {
        ["__pregel_pull", name, ..] => Some(((*name).to_owned(), false)),
        ["__pregel_push", index, ..] => {
            let node = index
                .parse::<usize>()
                .ok()
                .and_then(|i| fanout::send_node(&cp.values, i));
            Some((node.unwrap_or_else(|| format!("push:{index}")), true))
        }
        _ => None,
    }
}

/// The Send index in a push task's path (`~__pregel_push, <index>, …`).
fn push_index(t: &Task) -> &str {
    t.path
        .trim_start_matches('~')
        .split(", ")
        .nth(1)
        .unwrap_or(t.id.as_str())
}

/// A task's writes to state keys, in write order.
fn state_writes(t: &Task) -> Vec<(String, Json)> {
    t.writes
        .iter()
        .filter(|(ch, _)| is_state_key(ch))
        .cloned()
        .collect()
}

/// Per node, the tasks of a superstep that sent it `Send` packets (sorted, once each).
fn planners(cp: &Checkpoint, ts: &[Task]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for t in ts {
        let name = task_node(cp, t).map_or_else(|| format!("task:{}", t.id), |(n, _)| n);
        let sends = t.writes.iter().filter(|(ch, _)| ch == "__pregel_tasks");
        for node in sends.filter_map(|(_, v)| fanout::send_target(v)) {
            out.entry(node).or_default().insert(name.clone());
        }
    }
    out.into_iter()
        .map(|(n, p)| (n, p.into_iter().collect()))
        .collect()
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
