//! `Send` fan-outs: the push tasks of one superstep addressed to one node, as one record.
//!
//! A planner's conditional edge returns `Send(node, arg)` packets; LangGraph stores them as the
//! planner's writes to `__pregel_tasks`, holds them in the next checkpoint's `__pregel_tasks`
//! value, and runs one push task per packet in the next superstep, all at once. Each task is an
//! effect the planning step issued, whatever the node is (a `ToolNode` or a plain function):
//!
//! * issue order = the order of the packets: the Send index in the task's `task_path`
//!   (`~__pregel_push, <index>, …`), which is also task order;
//! * completion order = the order the tasks' writes were stored (the `rowid` of each task's
//!   first `writes` row: the checkpointer stores a task's writes when the task finishes).
//!
//! A task's effects are the `ToolMessage`s it wrote (a ToolNode: `tool:<name>:<id>`), else the
//! task itself (`send:<node>:<index>`, valued by its state writes). A packet with no stored
//! writes (a task that returned nothing, or never finished) cannot be placed in completion
//! order: it is counted, and the report says A6 cannot be told for it. A pass shows the
//! record reflects the stored orders; it does not show the tasks' outside effects landed in the
//! order their writes were stored (a task may act, then compute for a while).

use super::decode::python_type;
use crate::build::{Step, Written};
use crate::value::value_name;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

const SEND: &str = "langgraph.types.Send";

/// One effect a task had: the cell it names and the value it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    pub cell: String,
    pub value: Option<String>,
}

/// A push task of a fan-out: its step (writes, times) and effects, and its first rowid.
pub struct Member {
    pub step: Step,
    pub effects: Vec<Effect>,
    pub first_rowid: i64,
}

/// The node a `Send` packet is addressed to.
pub fn send_target(send: &Json) -> Option<String> {
    if python_type(send) != Some(SEND) {
        return None;
    }
    match send.get("data")? {
        Json::Array(a) => a.first()?.as_str().map(str::to_owned),
        Json::Object(m) => m.get("node")?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// The node of the `i`-th `Send` packet pending in a checkpoint's channel values.
pub fn send_node(values: &Map<String, Json>, i: usize) -> Option<String> {
    send_target(values.get("__pregel_tasks")?.as_array()?.get(i)?)
}

/// How many `Send` packets a checkpoint holds for each node.
pub fn pending_sends(values: &Map<String, Json>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let packets = values.get("__pregel_tasks").and_then(Json::as_array);
    for node in packets.into_iter().flatten().filter_map(send_target) {
        *out.entry(node).or_default() += 1;
    }
    out
}

/// The effect a push task without tool messages stands for: the task itself.
pub fn task_effect(node: &str, index: &str, state_writes: &[(String, Json)]) -> Effect {
    let writes: Map<String, Json> = state_writes.iter().cloned().collect();
    Effect {
        cell: format!("send:{node}:{}", index.trim_start_matches('0').max("0")),
        value: value_name(&Json::Object(writes)),
    }
}

/// One record for a fan-out; `group` is in task (issue) order.
pub fn merge(group: &[Member]) -> Step {
    assert!(!group.is_empty(), "a fan-out has at least one task");
    let io: Vec<&Effect> = group.iter().flat_map(|m| &m.effects).collect();
    let mut by_rowid: Vec<&Member> = group.iter().collect();
    by_rowid.sort_by_key(|m| m.first_rowid);
    let co: Vec<String> = by_rowid
        .iter()
        .flat_map(|m| m.effects.iter().map(|e| e.cell.clone()))
        .collect();
    // The merged record commits where the last task of the fan-out did; a later task's
    // write of a shared key is the one that applied.
    let mut writes: BTreeMap<String, Written> = BTreeMap::new();
    for m in group {
        for (c, w) in &m.step.writes {
            writes.insert(c.clone(), w.clone());
        }
    }
    let last = &group[group.len() - 1].step;
    let mut step = Step {
        commit_at: last.commit_at,
        read_at: last.read_at,
        agent: last.agent.clone(),
        aborted: last.aborted,
        ..Step::default()
    };
    step.writes = writes.into_iter().collect();
    for e in &io {
        step.writes
            .push((e.cell.clone(), Written::Value(e.value.clone())));
    }
    step.io = io.iter().map(|e| e.cell.clone()).collect();
    step.co = co;
    assert_eq!(
        step.io.len(),
        step.co.len(),
        "every issued effect completes"
    );
    step
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn member(agent: &str, cell: &str, rowid: i64) -> Member {
        Member {
            step: Step {
                agent: agent.into(),
                ..Step::default()
            },
            effects: vec![Effect {
                cell: cell.into(),
                value: Some("\"done\"".into()),
            }],
            first_rowid: rowid,
        }
    }

    #[test]
    fn completion_order_is_storage_order_issue_order_is_task_order() {
        let group = [
            member("worker", "send:worker:0", 8),
            member("worker", "send:worker:1", 6),
            member("worker", "send:worker:2", 7),
        ];
        let s = merge(&group);
        assert_eq!(s.io, ["send:worker:0", "send:worker:1", "send:worker:2"]);
        assert_eq!(s.co, ["send:worker:1", "send:worker:2", "send:worker:0"]);
        assert_eq!(s.agent, "worker");
        assert_eq!(s.writes.len(), 3);
    }

    #[test]
    fn a_task_effect_is_named_by_its_send_index_and_valued_by_its_writes() {
        let e = task_effect("worker", "0000000002", &[("results".into(), json!(["x"]))]);
        assert_eq!(e.cell, "send:worker:2");
        assert_eq!(e.value.as_deref(), Some(r#"{"results":["x"]}"#));
        assert_eq!(task_effect("w", "0000000000", &[]).cell, "send:w:0");
    }

    #[test]
    fn pending_sends_are_counted_per_node() {
        let send = |n: &str| json!({"__type__": SEND, "data": [n, {}]});
        let mut values = Map::new();
        values.insert(
            "__pregel_tasks".into(),
            json!([send("a"), send("b"), send("a"), {"other": 1}]),
        );
        let counts = pending_sends(&values);
        assert_eq!(counts.get("a"), Some(&2));
        assert_eq!(counts.get("b"), Some(&1));
        assert_eq!(send_node(&values, 1).as_deref(), Some("b"));
        assert_eq!(send_node(&values, 3), None);
        assert!(pending_sends(&Map::new()).is_empty());
    }
}
