//! A model of LangGraph's execution semantics, for the deployed reproductions of SPEC §7.
//!
//! LangGraph runs a `StateGraph` as a Pregel / bulk-synchronous-parallel loop. We model what
//! matters for the anomalies of SPEC §3, and emit one [`OpRecord`](agentsim_models::OpRecord) per node
//! step so the ordinary detectors classify a run:
//!
//! * **Channels** ([`channel`]): one per state key. A key without a reducer is a `LastValue`
//!   channel: it accepts at most one write per superstep, and a second write in the same step
//!   fails hard with `InvalidUpdateError` (error code `INVALID_CONCURRENT_GRAPH_UPDATE`); across
//!   supersteps the last write wins silently, and a returned `None` is a write like any other.
//!   A key annotated with a reducer is a `BinaryOperatorAggregate`: every write of the step is
//!   folded into the old value, in task order.
//! * **Supersteps** ([`pregel`]): every task of a step reads the same pre-step snapshot; the
//!   step's writes become visible only to the next step. A node's step is one op that reads the
//!   snapshot and writes its update; the op records of one step are appended in task order.
//! * **ToolNode** ([`toolnode`]): the tool calls of one AI message run concurrently (a thread
//!   pool in the sync path, all at once in the async path); their side effects land in
//!   completion order, while the returned tool messages keep call order. A sequenced variant
//!   runs them one after the other.
//!
//! ## What we relied on (read to learn; no code copied)
//! * `langgraph` `channels/last_value.py` and the JS port `channels/last_value.ts`: "Stores the
//!   last value received, can receive at most one value per step"; `update` raises
//!   `InvalidUpdateError` when a step delivers more than one value. The message is
//!   `At key '<key>': Can receive only one value per step. Use an Annotated key to handle
//!   multiple values.` with `ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE` (`langgraph/errors.py`).
//! * `langgraph` `pregel/__init__.py` (the loop): "computation proceeds in steps ... Channel
//!   updates from step N are only visible in step N+1; channels are guaranteed to be immutable
//!   for the duration of the step". That `apply_writes` (`pregel/algo.py`) applies the writes
//!   in a deterministic task order (by task path) is SPEC §7's statement; we did not find the
//!   sorting line in the stored sources, so node-name order is our reading of it.
//! * `langgraph.prebuilt.ToolNode` runs a message's tool calls in a thread pool (sync) or with
//!   `asyncio.gather` (async) — a LangGraph tutorial on parallel tool execution and SPEC §7; both
//!   return results in input order, so the tool messages keep call order whatever the
//!   completion order of the calls' side effects. We did not read ToolNode's source itself.
//!
//! ## What a pass does not prove
//! The model is of the semantics above, not of LangGraph's code: `Send`, subgraphs, interrupts,
//! checkpoint versions, managed values and retries are out of scope. Task order is modelled as
//! node-name order, which is what `apply_writes` yields for plain (pull) nodes.

pub mod channel;
pub mod pregel;
pub mod toolnode;

pub use channel::{Channel, InvalidUpdateError, Reducer, INVALID_CONCURRENT_GRAPH_UPDATE};
pub use pregel::{Graph, Node, RunError, RunOutcome, Update};
pub use toolnode::{run_turn, Dispatch, ToolCall, Turn};
