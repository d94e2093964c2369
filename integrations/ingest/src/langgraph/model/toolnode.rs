//! LangGraph's `ToolNode`: the tool calls of one AI message, run concurrently or in sequence.
//!
//! Each call has a side effect (a write of one value to one cell, e.g. a file or an API object)
//! and a latency. Concurrently ([`Dispatch::Concurrent`]) every call starts at once, so effects
//! land in completion order; ties complete in submission (call) order, so equal latencies never
//! reorder. In sequence ([`Dispatch::Sequenced`]) each call starts when the previous finished,
//! so effects land in call order. Either way the returned tool messages keep call order
//! (`executor.map` / `asyncio.gather` return results in input order): the transcript looks
//! ordered even when the world saw another order.
//!
//! A turn leaves one [`OpRecord`] with `io` = effects in call (issue) order and `co` = effects in
//! completion order, so the A6 detector decides whether the turn reordered. Latencies are
//! inputs: randomness lives in the caller. A pass says the record reflects the model; it does
//! not say real tools complete in the modelled order.

use agentsim_models::names::{Agent, Cell, Value};
use agentsim_models::record::{normalize_set, OpRecord, ValueMap};

/// How a ToolNode runs one message's tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// All at once (thread pool / `asyncio.gather`).
    Concurrent,
    /// One after the other, each starting when the previous finished.
    Sequenced,
}

/// One tool call: its effect and its latency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub cell: Cell,
    pub value: Value,
    pub latency_ms: u64,
}

/// What one turn did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// Call indices in the order their effects landed.
    pub completion_order: Vec<usize>,
    /// Call indices in the order the tool messages were returned.
    pub message_order: Vec<usize>,
    /// When the last call finished (virtual ms after the turn started).
    pub makespan_ms: u64,
    /// The turn as an op record (`io` call order, `co` completion order).
    pub record: OpRecord,
}

/// Runs one message's `calls` for `agent`; the record reads and writes at log position `t`.
pub fn run_turn(agent: Agent, calls: &[ToolCall], dispatch: Dispatch, t: u64) -> Turn {
    let finish_ms = finish_times(calls, dispatch);
    let mut completion_order: Vec<usize> = (0..calls.len()).collect();
    // Stable: equal finish times keep submission order.
    completion_order.sort_by_key(|&i| finish_ms[i]);
    let message_order: Vec<usize> = (0..calls.len()).collect();
    let effect = |i: usize| (calls[i].cell, calls[i].value);
    let io: Vec<(Cell, Value)> = (0..calls.len()).map(effect).collect();
    let co: Vec<(Cell, Value)> = completion_order.iter().map(|&i| effect(i)).collect();
    let mut write_set: Vec<Cell> = calls.iter().map(|c| c.cell).collect();
    normalize_set(&mut write_set);
    let record = OpRecord {
        agent,
        write_set,
        write_values: ValueMap::from_pairs(co.iter().copied()),
        read_time: t,
        write_time: t + 1,
        io,
        co,
        ..OpRecord::default()
    };
    assert_eq!(
        record.io.len(),
        record.co.len(),
        "every issued effect completes"
    );
    assert_eq!(
        message_order.len(),
        calls.len(),
        "one tool message per call"
    );
    Turn {
        completion_order,
        message_order,
        makespan_ms: finish_ms.iter().copied().max().unwrap_or(0),
        record,
    }
}

/// When each call finishes, in virtual ms after the turn started.
fn finish_times(calls: &[ToolCall], dispatch: Dispatch) -> Vec<u64> {
    match dispatch {
        Dispatch::Concurrent => calls.iter().map(|c| c.latency_ms).collect(),
        Dispatch::Sequenced => calls
            .iter()
            .scan(0u64, |clock, c| {
                *clock += c.latency_ms;
                Some(*clock)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::detect::fast;
    use agentsim_models::history::History;

    fn calls(latencies: &[u64]) -> Vec<ToolCall> {
        let mk = |(i, &latency_ms): (usize, &u64)| ToolCall {
            cell: Cell(i as u32),
            value: Value(i as u32 + 1),
            latency_ms,
        };
        latencies.iter().enumerate().map(mk).collect()
    }

    fn a6(turn: &Turn) -> bool {
        let h = History::from_records(vec![turn.record.clone()]);
        !fast::detect(&h).a6.is_empty()
    }

    #[test]
    fn concurrent_effects_land_in_completion_order_messages_in_call_order() {
        let turn = run_turn(Agent(0), &calls(&[150, 20, 80]), Dispatch::Concurrent, 0);
        assert_eq!(turn.completion_order, vec![1, 2, 0]);
        assert_eq!(turn.message_order, vec![0, 1, 2]);
        assert_eq!(turn.makespan_ms, 150);
        assert!(a6(&turn));
    }

    #[test]
    fn sequenced_never_reorders() {
        let turn = run_turn(Agent(0), &calls(&[150, 20, 80]), Dispatch::Sequenced, 0);
        assert_eq!(turn.completion_order, vec![0, 1, 2]);
        assert_eq!(turn.makespan_ms, 250);
        assert!(!a6(&turn));
    }

    #[test]
    fn equal_latencies_never_reorder() {
        let turn = run_turn(
            Agent(0),
            &calls(&[100, 100, 100, 100]),
            Dispatch::Concurrent,
            0,
        );
        assert_eq!(turn.completion_order, vec![0, 1, 2, 3]);
        assert!(!a6(&turn));
    }
}
