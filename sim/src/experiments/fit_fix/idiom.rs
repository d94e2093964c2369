//! Where a framework already has a way to realize a mechanism, the change to make there, as
//! the deployed reproductions (`experiments/deployed/`) found it for their cases: a LangGraph
//! reducer or edge, an MCP client refreshing its tool list on `list_changed`, a version check
//! on a memory write. The match on [`Mechanism`] is exhaustive, so a new mechanism must say
//! what it is in each framework (or that there is no known idiom).

use agentsim_models::runtime::{Mechanism, Stack};

/// What kind of system the input came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framework {
    /// A LangGraph checkpointer database.
    LangGraph,
    /// OpenTelemetry GenAI spans (memory stores, tool calls, MCP tool definitions).
    OpenTelemetry,
    /// A history or a scenario: no framework known.
    Unknown,
}

/// The idiom for `m` in `fw`, if one is known.
pub fn idiom(fw: Framework, m: Mechanism) -> Option<&'static str> {
    use Framework::*;
    use Mechanism::*;
    Some(match (m, fw) {
        (Lock | Validate | ValidateWriters, LangGraph) => {
            "give the key a reducer (`Annotated[list, operator.add]`) or add an edge so \
             the reader runs after the writer's superstep, instead of two nodes writing \
             a LastValue key from the same snapshot"
        }
        (Lock | Validate | ValidateWriters, OpenTelemetry) => {
            "a version check on the memory write: read the record's version with the \
             search, update only if it is unchanged, else reload and regenerate (the \
             optimistic fix of the deployed memory reproduction)"
        }
        (Sequencer, LangGraph) => {
            "run the tool calls in issue order: a sequential tool node (or one node per \
             call chained by edges) instead of ToolNode's parallel fan-out"
        }
        (Sequencer, OpenTelemetry) => {
            "await each tool call before issuing the next (parallel tool calls off)"
        }
        (Pin | ValidateTool, OpenTelemetry) => {
            "refresh the MCP tool list on `notifications/tools/list_changed` and check \
             the planned call against it before dispatch (validate-tool), or call the \
             version the plan was made with (pin)"
        }
        (ValidatePreds | Cascade, LangGraph) => {
            "on a retraction, roll the thread back to the checkpoint before the retracted \
             write (`update_state` from that checkpoint) so its readers run again"
        }
        (ValidatePreds | Cascade, OpenTelemetry) => {
            "record which outputs each step consumed and abort the consumers of a \
             retracted output (no GenAI attribute carries it; propagate it yourself)"
        }
        (_, Unknown) | (Pin | ValidateTool, LangGraph) => return None,
    })
}

/// The idioms of a stack's mechanisms, each once.
pub fn idioms(fw: Framework, stack: Stack) -> Vec<(Mechanism, &'static str)> {
    let mut out: Vec<(Mechanism, &'static str)> = Vec::new();
    for m in stack.mechanisms() {
        if let Some(text) = idiom(fw, m) {
            if !out.iter().any(|(_, t)| *t == text) {
                out.push((m, text));
            }
        }
    }
    out
}
