//! LangGraph superstep semantics: a stale parallel reader, the hard error on a double write,
//! and the reducer's fold order.
//!
//! * **Stale parallel reader.** `editor` rewrites `draft` while 1–3 `reviewer_i` nodes run in
//!   the same superstep and review `draft`: every task reads the pre-step snapshot, so the
//!   reviews are of the old draft. The op records of the step are appended in task order
//!   (`editor` sorts first), so the A1 detector sees each reviewer read `draft` before the
//!   editor's commit and commit after it. Fix: an edge `editor → reviewer_i`, so the reviews run
//!   one superstep later and read the new draft.
//! * **Double write.** 2–4 nodes of one superstep write the plain key `todos`: the run fails
//!   with `InvalidUpdateError` (`INVALID_CONCURRENT_GRAPH_UPDATE`). Fix: `Annotated` with a
//!   reducer; the run completes.
//! * **Fold order.** 2–5 parallel nodes append their digit to a reducer key and finish after a
//!   random 10–200 ms. A hand-rolled merge that appends results as tasks complete (the before
//!   column, a counterfactual, not LangGraph) depends on the latencies; LangGraph folds in task
//!   order, so the result never depends on them. Counted: result ≠ the task-order fold.
//!
//! A pass shows the model has these properties on random instances; what counts as the
//! "fix" is the usual LangGraph remedy, not a claim about any particular application.

use super::{count, detect, uniform, Config, Row};
use agentsim_ingest::langgraph::model::channel::{append_digit, keep_last_non_null};
use agentsim_ingest::langgraph::model::{Channel, Graph, Node, RunError, RunOutcome};
use agentsim_models::{Agent, Cell, Value, ValueMap};
use rand_chacha::ChaCha8Rng;

const DRAFT: Cell = Cell(0);
const SALT_STALE: u64 = 0x5354_414c;
const SALT_DOUBLE: u64 = 0x4442_4c57;
const SALT_FOLD: u64 = 0x464f_4c44;

/// The rows of the superstep reproductions.
pub fn rows(cfg: Config) -> Vec<Row> {
    let stale_a1 = |fixed: bool| {
        count(cfg, SALT_STALE, |rng| {
            !detect(stale(rng, fixed).records).a1.is_empty()
        })
    };
    let errors = |fixed: bool| count(cfg, SALT_DOUBLE, |rng| double_write(rng, fixed).is_err());
    let differs = |fixed: bool| count(cfg, SALT_FOLD, |rng| fold_differs(rng, fixed));
    vec![
        Row {
            reproduction: "LangGraph superstep",
            measure: "A1 (detector): parallel reader of a key being rewritten",
            before_label: "editor and reviewers in one superstep",
            after_label: "edge editor -> reviewers (next superstep)",
            before: stale_a1(false),
            after: stale_a1(true),
        },
        Row {
            reproduction: "LangGraph superstep",
            measure: "InvalidUpdateError: two writes to a plain key in one step",
            before_label: "todos: no reducer (LastValue)",
            after_label: "Annotated todos (reducer)",
            before: errors(false),
            after: errors(true),
        },
        Row {
            reproduction: "LangGraph reducer",
            measure: "fold result differs from the task-order fold",
            before_label: "merge in completion order",
            after_label: "LangGraph task-order fold",
            before: differs(false),
            after: differs(true),
        },
    ]
}

/// An editor rewriting `draft` and 1–3 reviewers reading it, in one step or the next.
pub fn stale(rng: &mut ChaCha8Rng, fixed: bool) -> RunOutcome {
    let reviewers = uniform(rng, 1, 3) as u32;
    let mut keys = vec![("draft".to_string(), Channel::LastValue)];
    keys.extend((1..=reviewers).map(|i| (format!("review_{i}"), Channel::LastValue)));
    let mut g = Graph::new(keys);
    let old = uniform(rng, 1, 1000) as u32;
    let new = old + uniform(rng, 1, 1000) as u32;
    let editor = g.node(Node {
        name: "editor".into(),
        agent: Agent(0),
        reads: vec![DRAFT],
        run: Box::new(move |_: &ValueMap| vec![(DRAFT, Value(new))]),
    });
    g.entry(editor);
    for i in 1..=reviewers {
        let review = Cell(i);
        let r = g.node(Node {
            name: format!("reviewer_{i}"),
            agent: Agent(i),
            reads: vec![DRAFT],
            // The review is a function of the draft it saw.
            run: Box::new(move |s: &ValueMap| vec![(review, Value(s.get(DRAFT).0 * 10 + i))]),
        });
        if fixed {
            g.edge(editor, r);
        } else {
            g.entry(r);
        }
    }
    let out = g.run(ValueMap::from_pairs([(DRAFT, Value(old))]), 8);
    let out = out.unwrap_or_else(|e| panic!("the review graph writes each key once: {e}"));
    let seen = if fixed { new } else { old };
    for i in 1..=reviewers {
        assert_eq!(
            out.state.get(Cell(i)),
            Value(seen * 10 + i),
            "review {i} of the draft seen"
        );
    }
    out
}

/// 2–4 parallel nodes each writing `todos` once; `fixed` annotates `todos` with a reducer.
pub fn double_write(rng: &mut ChaCha8Rng, fixed: bool) -> Result<RunOutcome, RunError> {
    let channel = if fixed {
        Channel::Reduce(keep_last_non_null)
    } else {
        Channel::LastValue
    };
    let mut g = Graph::new(vec![("todos".to_string(), channel)]);
    for i in 0..uniform(rng, 2, 4) as u32 {
        let list = Value(uniform(rng, 1, 1000) as u32);
        let n = g.node(Node {
            name: format!("planner_{i}"),
            agent: Agent(i),
            reads: vec![],
            run: Box::new(move |_: &ValueMap| vec![(Cell(0), list)]),
        });
        g.entry(n);
    }
    g.run(ValueMap::new(), 4)
}

/// Whether the fold of 2–5 parallel appends differs from the task-order fold: `fixed` runs
/// LangGraph's fold; otherwise the digits are appended in completion order.
pub fn fold_differs(rng: &mut ChaCha8Rng, fixed: bool) -> bool {
    let width = uniform(rng, 2, 5) as u32;
    let latency_ms: Vec<u64> = (0..width).map(|_| uniform(rng, 10, 200)).collect();
    let mut g = Graph::new(vec![("log".to_string(), Channel::Reduce(append_digit))]);
    for i in 0..width {
        let n = g.node(Node {
            name: format!("task_{i}"),
            agent: Agent(i),
            reads: vec![],
            run: Box::new(move |_: &ValueMap| vec![(Cell(0), Value(i + 1))]),
        });
        g.entry(n);
    }
    let out = g.run(ValueMap::new(), 4);
    let task_order = out.unwrap_or_else(|e| panic!("a reducer key takes any writes: {e}"));
    let task_order = task_order.state.get(Cell(0));
    let result = if fixed {
        task_order
    } else {
        let mut done: Vec<u32> = (0..width).collect();
        done.sort_by_key(|&i| latency_ms[i as usize]);
        done.iter()
            .fold(Value::NULL, |acc, &i| append_digit(acc, Value(i + 1)))
    };
    result != task_order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::deployed::trial_rng;

    #[test]
    fn the_double_write_error_is_langgraphs() {
        let err = double_write(&mut trial_rng(0, SALT_DOUBLE, 0), false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "InvalidUpdateError: At key 'todos': Can receive only one value per step. \
             Use an Annotated key to handle multiple values."
        );
        match err {
            RunError::InvalidUpdate { error, .. } => {
                assert_eq!(error.code(), "INVALID_CONCURRENT_GRAPH_UPDATE");
            }
            other => panic!("expected InvalidUpdate, got {other:?}"),
        }
    }

    #[test]
    fn pinned_counts() {
        let rows = rows(Config {
            trials: 500,
            seed: 0,
        });
        let ks: Vec<(u64, u64)> = rows.iter().map(|r| (r.before.k, r.after.k)).collect();
        assert_eq!(ks[0], (500, 0));
        assert_eq!(ks[1], (500, 0));
        assert_eq!(ks[2], PINNED_FOLD);
    }

    /// Pinned from a run; a completion-order merge of w ≥ 2 random latencies is out of task
    /// order unless the latencies happen to be sorted.
    const PINNED_FOLD: (u64, u64) = (423, 0);
}
