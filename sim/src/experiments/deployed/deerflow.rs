//! deer-flow's erased state key (SPEC §7): a state key with no reducer erased by a downstream
//! partial update.
//!
//! The graph (modelled on the LangGraph model in `agentsim_ingest::langgraph::model`): `planner`
//! writes the todo list, a chain of 1–4 `worker_i` nodes each rewrites it (reading it), then
//! `reporter` returns a partial update `{"messages": …, "todos": None}`. With `todos` a plain
//! key (a `LastValue` channel) the `None` is a write like any other and silently erases the
//! list: a *sequential* last-write-wins clobber, no concurrency involved, which is why the A1
//! detector does not fire and SPEC §7 calls it L0. The fix annotates `todos` with a reducer
//! that keeps the last non-None value; the `None` then folds to the old list.
//!
//! Measures: "todo list erased" (final `todos` is None although some node wrote a list — a
//! final-state check, not a catalogue anomaly) and A1 from the detectors on the run's records.
//! A pass shows the model erases and the reducer keeps; the numbers of workers and values are
//! random but do not change the outcome, which is the point: the clobber is deterministic.

use super::{count, detect, uniform, Config, Row};
use agentsim_ingest::langgraph::model::channel::keep_last_non_null;
use agentsim_ingest::langgraph::model::{Channel, Graph, Node, RunOutcome};
use agentsim_models::{Agent, Cell, Value, ValueMap};
use rand_chacha::ChaCha8Rng;

const TODOS: Cell = Cell(0);
const MESSAGES: Cell = Cell(1);
const SALT: u64 = 3123;

/// The rows of deer-flow 3123.
pub fn rows(cfg: Config) -> Vec<Row> {
    let erased_count = |fixed: bool| count(cfg, SALT, |rng| erased(&run(rng, fixed)));
    let a1 = |fixed: bool| {
        count(cfg, SALT, |rng| {
            !detect(run(rng, fixed).records).a1.is_empty()
        })
    };
    let row = |measure, before, after| Row {
        reproduction: "deer-flow #3123",
        measure,
        before_label: "todos: no reducer (LastValue)",
        after_label: "reducer keeping last non-None",
        before,
        after,
    };
    vec![
        row(
            "todo list erased by a None partial update",
            erased_count(false),
            erased_count(true),
        ),
        row(
            "A1 (detector; the clobber is sequential)",
            a1(false),
            a1(true),
        ),
    ]
}

/// Whether the run ended with no todo list although some node wrote one.
pub fn erased(out: &RunOutcome) -> bool {
    let written = out
        .records
        .iter()
        .any(|r| r.writes(TODOS) && !r.write_values.get(TODOS).is_null());
    written && out.state.get(TODOS).is_null()
}

/// One run of the 3123 graph with random todo lists and 1–4 workers.
pub fn run(rng: &mut ChaCha8Rng, fixed: bool) -> RunOutcome {
    let todos = if fixed {
        Channel::Reduce(keep_last_non_null)
    } else {
        Channel::LastValue
    };
    let keys = vec![
        ("todos".to_string(), todos),
        ("messages".to_string(), Channel::Reduce(count_messages)),
    ];
    let mut g = Graph::new(keys);
    let first = Value(uniform(rng, 1, 1000) as u32);
    let planner = g.node(writer("planner", 0, vec![], first));
    g.entry(planner);
    let mut prev = planner;
    for i in 1..=uniform(rng, 1, 4) {
        let list = Value(uniform(rng, 1, 1000) as u32);
        let w = g.node(writer(&format!("worker_{i}"), i as u32, vec![TODOS], list));
        g.edge(prev, w);
        prev = w;
    }
    let reporter = g.node(Node {
        name: "reporter".into(),
        agent: Agent(9),
        reads: vec![TODOS, MESSAGES],
        run: Box::new(|_: &ValueMap| vec![(MESSAGES, Value(1)), (TODOS, Value::NULL)]),
    });
    g.edge(prev, reporter);
    match g.run(ValueMap::new(), 16) {
        Ok(out) => out,
        Err(e) => panic!("the 3123 graph is sequential and acyclic, yet: {e}"),
    }
}

/// A node that writes the todo list `list` and one message.
fn writer(name: &str, agent: u32, reads: Vec<Cell>, list: Value) -> Node {
    Node {
        name: name.into(),
        agent: Agent(agent),
        reads,
        run: Box::new(move |_: &ValueMap| vec![(TODOS, list), (MESSAGES, Value(1))]),
    }
}

/// `add_messages` reduced to a count: the transcript grows by each write.
fn count_messages(old: Value, new: Value) -> Value {
    Value(old.0 + new.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::deployed::trial_rng;

    #[test]
    fn every_unfixed_run_erases_and_no_fixed_run_does() {
        let rows = rows(Config {
            trials: 200,
            seed: 7,
        });
        assert_eq!((rows[0].before.k, rows[0].before.n), (200, 200));
        assert_eq!((rows[0].after.k, rows[0].after.n), (0, 200));
        // Sequential: the detectors see no A1 either way.
        assert_eq!((rows[1].before.k, rows[1].after.k), (0, 0));
    }

    #[test]
    fn the_fix_keeps_the_last_list() {
        let out = run(&mut trial_rng(1, SALT, 0), true);
        let last = out
            .records
            .iter()
            .rev()
            .find(|r| r.agent != Agent(9))
            .unwrap();
        assert_eq!(out.state.get(TODOS), last.write_values.get(TODOS));
        assert!(!out.state.get(TODOS).is_null());
    }
}
