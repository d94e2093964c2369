//! LangGraph's Pregel loop: supersteps over channels, one op record per node step.
//!
//! A [`Graph`] has state keys (each with a [`Channel`]), nodes and static edges. A run starts
//! with the entry nodes; each superstep runs its tasks (sorted by node name, LangGraph's task
//! order for plain nodes) against the same pre-step snapshot, then applies all their writes at
//! once through the channels; the next step's tasks are the successors of this step's tasks.
//! Two writes to a `LastValue` key in one step fail the run with [`InvalidUpdateError`] and the
//! step's writes are discarded, as LangGraph raises before committing the step.
//!
//! Every task leaves one [`OpRecord`]: it read its keys at `read_time` = the log length at the
//! start of the step (the snapshot) and wrote its update; the step's records are appended in
//! task order, each `write_values` being the key's value after the fold up to that task, so
//! replaying the log in order reproduces the channel values. A pass shows the records describe
//! the run; the detectors, not this file, decide what is anomalous.

use super::channel::{Channel, InvalidUpdateError};
use agentsim_models::names::{Agent, Cell, Value};
use agentsim_models::record::{normalize_set, OpRecord, ValueMap};
use std::collections::BTreeMap;

/// A node's returned partial update: `(key, value)` pairs, at most one per key; NULL is `None`.
pub type Update = Vec<(Cell, Value)>;

/// A node: a name (its task order), the agent its records carry, the keys it reads and its
/// function from the pre-step snapshot to its update.
pub struct Node {
    pub name: String,
    pub agent: Agent,
    pub reads: Vec<Cell>,
    pub run: Box<dyn Fn(&ValueMap) -> Update>,
}

/// A state graph: keys `Cell(0..)` with their channels, nodes, edges and entry nodes.
pub struct Graph {
    keys: Vec<(String, Channel)>,
    nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
    entry: Vec<usize>,
}

/// A finished run: the final state, the op records, the supersteps taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    pub state: ValueMap,
    pub records: Vec<OpRecord>,
    pub steps: usize,
}

/// Why a run stopped early; each carries the run up to the last completed step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error("{error}")]
    InvalidUpdate {
        error: InvalidUpdateError,
        partial: RunOutcome,
    },
    #[error("the graph did not finish within {steps_max} supersteps (raise the limit)")]
    StepLimit {
        steps_max: usize,
        partial: RunOutcome,
    },
}

impl Graph {
    /// A graph with the given keys (`Cell(i)` is the i-th) and no nodes.
    pub fn new(keys: Vec<(String, Channel)>) -> Graph {
        Graph {
            keys,
            nodes: Vec::new(),
            edges: Vec::new(),
            entry: Vec::new(),
        }
    }

    /// Adds a node; returns its index.
    pub fn node(&mut self, node: Node) -> usize {
        assert!(
            self.nodes.iter().all(|n| n.name != node.name),
            "duplicate node name {}",
            node.name
        );
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Adds an edge: `to` runs in the step after `from`.
    pub fn edge(&mut self, from: usize, to: usize) {
        assert!(from < self.nodes.len(), "edge from unknown node {from}");
        assert!(to < self.nodes.len(), "edge to unknown node {to}");
        self.edges.push((from, to));
    }

    /// Marks a node as an entry node (runs in step 0).
    pub fn entry(&mut self, n: usize) {
        assert!(n < self.nodes.len(), "unknown entry node {n}");
        self.entry.push(n);
    }

    /// The name of key `c`.
    pub fn key_name(&self, c: Cell) -> &str {
        &self.keys[c.index()].0
    }

    /// Runs from `init` for at most `steps_max` supersteps.
    pub fn run(&self, init: ValueMap, steps_max: usize) -> Result<RunOutcome, RunError> {
        let mut out = RunOutcome {
            state: init,
            records: Vec::new(),
            steps: 0,
        };
        let mut tasks = self.task_order(self.entry.clone());
        while !tasks.is_empty() {
            if out.steps == steps_max {
                return Err(RunError::StepLimit {
                    steps_max,
                    partial: out,
                });
            }
            if let Err(error) = self.superstep(&tasks, &mut out) {
                return Err(RunError::InvalidUpdate {
                    error,
                    partial: out,
                });
            }
            out.steps += 1;
            let next = self.edges.iter().filter(|(f, _)| tasks.contains(f));
            tasks = self.task_order(next.map(|&(_, t)| t).collect());
        }
        Ok(out)
    }

    /// Deduplicates tasks and sorts them by node name.
    fn task_order(&self, mut tasks: Vec<usize>) -> Vec<usize> {
        tasks.sort_by(|&a, &b| self.nodes[a].name.cmp(&self.nodes[b].name));
        tasks.dedup();
        tasks
    }

    /// Runs one superstep: every task on the same snapshot, then all writes at once.
    fn superstep(&self, tasks: &[usize], out: &mut RunOutcome) -> Result<(), InvalidUpdateError> {
        let snapshot = out.state.clone();
        let updates: Vec<Update> = tasks.iter().map(|&t| self.call(t, &snapshot)).collect();
        let next = self.apply_writes(tasks, &updates, &snapshot, out.steps)?;
        let read_time = out.records.len() as u64;
        let mut running = snapshot.clone();
        for (&t, update) in tasks.iter().zip(&updates) {
            for &(c, v) in update {
                let old = running.get(c);
                let new = self.channel(c).apply(old, &[v]);
                running.set(c, new.expect("one write always applies"));
            }
            let record = self.record(t, &snapshot, &running, update, read_time, out);
            out.records.push(record);
        }
        // The sequential replay in task order must land where the channels did.
        assert_eq!(
            running, next,
            "task-order replay disagrees with the channels"
        );
        out.state = next;
        Ok(())
    }

    /// Calls node `t` on `snapshot`; asserts its update names each known key at most once.
    fn call(&self, t: usize, snapshot: &ValueMap) -> Update {
        let update = (self.nodes[t].run)(snapshot);
        let mut keys: Vec<Cell> = update.iter().map(|&(c, _)| c).collect();
        let n = keys.len();
        normalize_set(&mut keys);
        assert_eq!(
            keys.len(),
            n,
            "node {} wrote a key twice",
            self.nodes[t].name
        );
        assert!(
            keys.iter().all(|c| c.index() < self.keys.len()),
            "node {} wrote an unknown key",
            self.nodes[t].name
        );
        update
    }

    /// Groups the step's writes per key in task order and applies each channel.
    fn apply_writes(
        &self,
        tasks: &[usize],
        updates: &[Update],
        snapshot: &ValueMap,
        step: usize,
    ) -> Result<ValueMap, InvalidUpdateError> {
        let mut per_key: BTreeMap<Cell, Vec<(usize, Value)>> = BTreeMap::new();
        for (&t, update) in tasks.iter().zip(updates) {
            for &(c, v) in update {
                per_key.entry(c).or_default().push((t, v));
            }
        }
        let mut next = snapshot.clone();
        for (c, writes) in per_key {
            let values: Vec<Value> = writes.iter().map(|&(_, v)| v).collect();
            match self.channel(c).apply(snapshot.get(c), &values) {
                Some(v) => next.set(c, v),
                None => {
                    return Err(InvalidUpdateError {
                        key: self.key_name(c).to_string(),
                        step,
                        writers: writes
                            .iter()
                            .map(|&(t, _)| self.nodes[t].name.clone())
                            .collect(),
                    })
                }
            }
        }
        Ok(next)
    }

    fn channel(&self, c: Cell) -> Channel {
        self.keys[c.index()].1
    }

    /// The op record of task `t`: read the snapshot, wrote the running values of its keys.
    fn record(
        &self,
        t: usize,
        snapshot: &ValueMap,
        running: &ValueMap,
        update: &Update,
        read_time: u64,
        out: &RunOutcome,
    ) -> OpRecord {
        let node = &self.nodes[t];
        let mut read_set = node.reads.clone();
        normalize_set(&mut read_set);
        let mut write_set: Vec<Cell> = update.iter().map(|&(c, _)| c).collect();
        normalize_set(&mut write_set);
        let write_time = out.records.len() as u64 + 1;
        assert!(read_time < write_time, "a record reads before it writes");
        OpRecord {
            agent: node.agent,
            read_values: ValueMap::from_pairs(read_set.iter().map(|&c| (c, snapshot.get(c)))),
            read_set,
            write_values: ValueMap::from_pairs(write_set.iter().map(|&c| (c, running.get(c)))),
            write_set,
            read_time,
            write_time,
            ..OpRecord::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::channel::append_digit;
    use super::*;

    /// A node writing constant `v` to `key`, reading `reads`.
    fn constant(name: &str, agent: u32, reads: Vec<Cell>, key: Cell, v: u32) -> Node {
        Node {
            name: name.into(),
            agent: Agent(agent),
            reads,
            run: Box::new(move |_: &ValueMap| vec![(key, Value(v))]),
        }
    }

    #[test]
    fn parallel_tasks_read_the_pre_step_snapshot() {
        let keys = vec![
            ("x".into(), Channel::LastValue),
            ("y".into(), Channel::LastValue),
        ];
        let mut g = Graph::new(keys);
        let a = g.node(constant("a", 0, vec![Cell(0)], Cell(0), 2));
        let copy = Node {
            name: "b".into(),
            agent: Agent(1),
            reads: vec![Cell(0)],
            run: Box::new(|s: &ValueMap| vec![(Cell(1), s.get(Cell(0)))]),
        };
        let b = g.node(copy);
        g.entry(a);
        g.entry(b);
        let out = g
            .run(ValueMap::from_pairs([(Cell(0), Value(1))]), 10)
            .unwrap();
        // b copied the old x (1), not a's new x (2): both read the pre-step snapshot.
        assert_eq!(out.state.get(Cell(0)), Value(2));
        assert_eq!(out.state.get(Cell(1)), Value(1));
        assert_eq!(out.records.len(), 2);
        assert_eq!(out.records[0].read_time, 0);
        assert_eq!(out.records[1].read_time, 0);
    }

    #[test]
    fn double_write_in_one_step_fails_and_discards_the_step() {
        let mut g = Graph::new(vec![("todos".into(), Channel::LastValue)]);
        let a = g.node(constant("a", 0, vec![], Cell(0), 1));
        let b = g.node(constant("b", 1, vec![], Cell(0), 2));
        g.entry(b);
        g.entry(a);
        match g.run(ValueMap::new(), 10) {
            Err(RunError::InvalidUpdate { error, partial }) => {
                assert_eq!(error.key, "todos");
                assert_eq!(error.writers, vec!["a".to_string(), "b".to_string()]);
                assert!(partial.records.is_empty());
                assert_eq!(partial.state, ValueMap::new());
            }
            other => panic!("expected InvalidUpdateError, got {other:?}"),
        }
    }

    #[test]
    fn across_steps_the_last_write_wins_silently() {
        let mut g = Graph::new(vec![("k".into(), Channel::LastValue)]);
        let a = g.node(constant("a", 0, vec![], Cell(0), 1));
        let b = g.node(constant("b", 1, vec![], Cell(0), 2));
        g.entry(a);
        g.edge(a, b);
        let out = g.run(ValueMap::new(), 10).unwrap();
        assert_eq!(out.state.get(Cell(0)), Value(2));
        assert_eq!(out.steps, 2);
    }

    #[test]
    fn a_reducer_folds_in_task_order_whatever_the_insertion_order() {
        let mut g = Graph::new(vec![("log".into(), Channel::Reduce(append_digit))]);
        let c = g.node(constant("c", 2, vec![], Cell(0), 3));
        let a = g.node(constant("a", 0, vec![], Cell(0), 1));
        let b = g.node(constant("b", 1, vec![], Cell(0), 2));
        for n in [c, a, b] {
            g.entry(n);
        }
        let out = g.run(ValueMap::new(), 10).unwrap();
        assert_eq!(out.state.get(Cell(0)), Value(0x123));
        let wv: Vec<Value> = out
            .records
            .iter()
            .map(|r| r.write_values.get(Cell(0)))
            .collect();
        assert_eq!(wv, vec![Value(0x1), Value(0x12), Value(0x123)]);
    }

    #[test]
    fn a_cycle_hits_the_step_limit() {
        let mut g = Graph::new(vec![("k".into(), Channel::LastValue)]);
        let a = g.node(constant("a", 0, vec![], Cell(0), 1));
        g.entry(a);
        g.edge(a, a);
        let err = g.run(ValueMap::new(), 5).unwrap_err();
        assert!(matches!(err, RunError::StepLimit { steps_max: 5, .. }));
    }
}
