//! Where a framework already has a way to realize a mechanism, the change to make there, as
//! the deployed reproductions (`experiments/deployed/`) and the framework corpora found it: a
//! LangGraph reducer or edge, an MCP client refreshing its tool list on `list_changed`, a
//! call-time check of an agent framework's own tool registry, a version check on a memory
//! write. The framework is the one the input names ([`Framework::of`]: the source, the files
//! read beside it, and a trace's resource and scope attributes). The match on [`Mechanism`]
//! is exhaustive, so a new mechanism must say what it is in each framework (or that there is
//! no known idiom).

use agentsim_ingest::{Options, Report, Source};
use agentsim_models::runtime::{Mechanism, Stack};
use std::path::Path;

/// What kind of system the input came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framework {
    /// A LangGraph checkpointer database, or spans LangGraph's or LangChain's instrumentation
    /// made.
    LangGraph,
    /// Tools from MCP servers: an MCP log, spans joined with one (`--mcp-log`), or spans an MCP
    /// instrumentation made.
    Mcp,
    /// An agent framework's own tools, named by the trace (e.g. `google-adk` from the scope
    /// `gcp.vertex.agent`): its tool set is resolved when a step starts, so a tool retired
    /// during the step is still planned.
    Agents(String),
    /// OpenTelemetry spans whose framework the trace does not name.
    OpenTelemetry,
    /// A history or a scenario: no framework known.
    Unknown,
}

/// Scope and resource names that name an agent framework, as a substring, and its name.
const AGENT_FRAMEWORKS: &[(&str, &str)] = &[
    ("gcp.vertex.agent", "google-adk"),
    ("google.adk", "google-adk"),
    ("google_adk", "google-adk"),
    ("autogen", "autogen"),
    ("ag2", "ag2"),
    ("agno", "agno"),
    ("semantic_kernel", "semantic-kernel"),
    ("semantic-kernel", "semantic-kernel"),
    ("crewai", "crewai"),
    ("openai_agents", "openai-agents"),
    ("openai.agents", "openai-agents"),
    ("openai-agents", "openai-agents"),
    ("strands", "strands"),
    ("agent_framework", "agent-framework"),
    ("pydantic_ai", "pydantic-ai"),
    ("pydantic-ai", "pydantic-ai"),
    ("smolagents", "smolagents"),
];

impl Framework {
    /// The framework of `input`, read as `options` say: a checkpointer database is LangGraph,
    /// an MCP log (or a trace joined with one) MCP; a trace is what its instrumentation scopes
    /// and resource name (LangGraph or LangChain, an MCP instrumentation, a known agent
    /// framework), else OpenTelemetry; a history is Unknown.
    pub fn of(input: &Path, options: &Options, report: Option<&Report>) -> Framework {
        let from = report.map(|r| r.source).or(options.from);
        match from {
            None | Some(Source::Recorder) => return Framework::Unknown,
            Some(Source::Langgraph) => return Framework::LangGraph,
            Some(Source::Mcp) => return Framework::Mcp,
            Some(Source::Otel | Source::Genai | Source::Openinference) => {}
        }
        if options.mcp_log.is_some() {
            return Framework::Mcp;
        }
        let names = agentsim_ingest::load::instrumentation(input).unwrap_or_default();
        let lower: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        let any = |needle: &str| lower.iter().any(|n| n.contains(needle));
        if any("langgraph") || any("langchain") {
            return Framework::LangGraph;
        }
        if lower
            .iter()
            .any(|n| n == "mcp" || n.contains(".mcp") || n.contains("mcp."))
        {
            return Framework::Mcp;
        }
        let known = AGENT_FRAMEWORKS.iter().find(|(needle, _)| any(needle));
        match known {
            Some((_, name)) => Framework::Agents((*name).to_owned()),
            None => Framework::OpenTelemetry,
        }
    }

    /// How the report names it.
    pub fn name(&self) -> &str {
        match self {
            Framework::LangGraph => "langgraph",
            Framework::Mcp => "mcp",
            Framework::Agents(name) => name,
            Framework::OpenTelemetry => "opentelemetry (no framework named in the trace)",
            Framework::Unknown => "unknown (a history or a scenario)",
        }
    }
}

/// The idiom for `m` in `fw`, if one is known.
pub fn idiom(fw: &Framework, m: Mechanism) -> Option<&'static str> {
    use Framework::*;
    use Mechanism::*;
    Some(match (m, fw) {
        (Lock | Validate | ValidateWriters, LangGraph) => {
            "give the key a reducer (`Annotated[list, operator.add]`) or add an edge so \
             the reader runs after the writer's superstep, instead of two nodes writing \
             a LastValue key from the same snapshot"
        }
        (Lock | Validate | ValidateWriters, Mcp | Agents(_) | OpenTelemetry) => {
            "a version check on the memory write: read the record's version with the \
             search, update only if it is unchanged, else reload and regenerate (the \
             optimistic fix of the deployed memory reproduction)"
        }
        (Sequencer, LangGraph) => {
            "run the tool calls in issue order: a sequential tool node (or one node per \
             call chained by edges) instead of ToolNode's parallel fan-out"
        }
        (Sequencer, Mcp | Agents(_) | OpenTelemetry) => {
            "await each tool call before issuing the next (parallel tool calls off)"
        }
        (Pin | ValidateTool, Mcp) => {
            "refresh the MCP tool list on `notifications/tools/list_changed` and check \
             the planned call against it before dispatch (validate-tool), or call the \
             version the plan was made with (pin)"
        }
        (Pin | ValidateTool, Agents(_)) => {
            "re-check the planned tool against the framework's registry when the call is \
             dispatched and refuse a tool retired since the step began (validate-tool: a \
             before-tool callback or a guard in the tool); the framework resolves its tool \
             set when the step starts, which is what let the retired tool be planned, and \
             keeping the planned version callable (pin) needs the retired tool to stay \
             registered"
        }
        (Pin | ValidateTool, OpenTelemetry) => {
            "check the planned call against the current tool registry before dispatch and \
             refuse a retired tool (validate-tool), or call the version the plan was made \
             with (pin)"
        }
        (ValidatePreds | Cascade, LangGraph) => {
            "on a retraction, roll the thread back to the checkpoint before the retracted \
             write (`update_state` from that checkpoint) so its readers run again"
        }
        (ValidatePreds | Cascade, Mcp | Agents(_) | OpenTelemetry) => {
            "record which outputs each step consumed and abort the consumers of a \
             retracted output (no GenAI attribute carries it; propagate it yourself)"
        }
        (_, Unknown) | (Pin | ValidateTool, LangGraph) => return None,
    })
}

/// The idioms of a stack's mechanisms, each once. In an agent framework whose phantom calls
/// come from a tool set resolved at step start, a stack that pins is given the call-time
/// check's idiom, the one the framework can realize.
pub fn idioms(fw: &Framework, stack: Stack) -> Vec<(Mechanism, &'static str)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framework_phantom_gets_the_call_time_check_and_mcp_the_list_refresh() {
        let adk = Framework::Agents("google-adk".to_owned());
        let text = idiom(&adk, Mechanism::Pin).unwrap();
        assert!(
            text.contains("validate-tool") && !text.contains("MCP"),
            "{text}"
        );
        let mcp = idiom(&Framework::Mcp, Mechanism::Pin).unwrap();
        assert!(mcp.contains("list_changed"), "{mcp}");
        assert_eq!(idiom(&Framework::Unknown, Mechanism::Pin), None);
    }
}
