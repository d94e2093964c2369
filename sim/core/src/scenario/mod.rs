//! Scenarios: what a simulation runs. A TOML file (see docs/simulator.md, "Scenario files")
//! is parsed strictly by [`raw`] and resolved by [`resolve`] into a [`Scenario`]: interned
//! names, expanded agent copies, scripts with their operation structure computed.
//!
//! A scenario that loads is well-formed (every name known, every `read` closed by a `write`,
//! every `goto` stays within one operation); that says nothing about whether the scenario
//! models the system it claims to.

pub mod cap;
pub mod cpl;
pub mod expect;

pub mod limits;
pub mod mcp;
pub mod raw;
pub mod resolve;
pub mod settings;

pub use crate::source::ScenarioError;
pub use cap::{RepeatCap, ZeroCap};
pub use cpl::CplSpec;
pub use limits::TRIALS_MAX;
pub use mcp::McpClient;

use crate::dist::Dist;
use crate::generator::recorded::Recording;
use agentsim_cpl::Value as CplValue;
use agentsim_models::names::{Agent, Cell, Names, Tool};
use agentsim_models::runtime::RegistryChange;
use agentsim_models::runtime::Stack;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default number of trials when a scenario does not say.
pub const TRIALS_DEFAULT: u64 = 100;
/// Default per-trial bound on executed events.
pub const EVENTS_MAX_DEFAULT: u64 = 1_000_000;
/// The most log records a trial reserves up front (it grows past that as it needs).
pub const OPS_HINT_MAX: usize = 1 << 16;

/// A resolved scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    /// The file it was loaded from (as given; used in replay lines).
    pub file: PathBuf,
    pub runtime: Stack,
    /// Record provenance preds at every read (extension 2) even below `causal`, so that A3
    /// (preds form) is observable under weaker runtimes.
    pub provenance: bool,
    pub trials: u64,
    pub seed: u64,
    /// Agents (copies expanded), cells, tools; values are interned from a recording if any.
    pub names: Names,
    pub cell_count: u32,
    pub tool_count: u32,
    pub agents: Vec<AgentSpec>,
    pub tokens: TokenModel,
    pub retry: RetryPolicy,
    /// Events due within this many ms of the earliest are all enabled; the scheduler picks.
    pub window_ms: u64,
    /// Per-trial bound on executed events.
    pub events_max: u64,
    pub generator: GeneratorSpec,
    /// `[cpl]`: the compiled guards of `send`, `recv`, `set` and `act` steps.
    pub cpl: Option<Arc<CplSpec>>,
    /// Every agent's `repeat` was capped at this ([`Scenario::with_repeat_cap`]); replay lines
    /// carry it so that a replay runs the same capped scenario.
    pub repeat_cap: Option<u32>,
}

/// One agent (a copy of an `[[agents]]` entry when `count > 1`).
#[derive(Clone, Debug)]
pub struct AgentSpec {
    pub name: String,
    /// The `[[agents]]` name this copy came from.
    pub base: String,
    pub repeat: u32,
    pub start_ms: Dist,
    pub script: Arc<Script>,
    /// `mcp_client`: the agent plans against an MCP client's cached tool list (None: the
    /// live registry at every read).
    pub mcp_client: Option<McpClient>,
    /// `serves = true`: the script loops forever by design (a server), so it is exempt from
    /// the termination property of `explore --liveness`.
    pub serves: bool,
}

/// A script with its operation structure.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub steps: Vec<Step>,
    /// For every step, the index of the `read` that opened the operation it is in, if any.
    pub op_start: Vec<Option<usize>>,
    /// For every `read`, the index of the `write` that closes its operation.
    pub op_close: Vec<usize>,
    /// Step labels, for readable traces.
    pub labels: Vec<Option<String>>,
}

/// One script step.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Begin an operation: read cells (all, or `pick` of them at random), planning a tool.
    Read {
        cells: Vec<Cell>,
        pick: Option<u32>,
        tool: Option<Tool>,
    },
    /// An LLM call: latency and tokens.
    Generate {
        latency_ms: Dist,
        completion: Option<Dist>,
    },
    /// Commit the operation, each written cell an external effect with a completion latency.
    Write {
        cells: Vec<Cell>,
        pick: Option<u32>,
        include_read: bool,
        effect_ms: Dist,
        order: EffectOrder,
    },
    /// Pause.
    Wait { latency_ms: Dist, prob: f64 },
    /// Retract the latest live committed record of any of `targets` (a supervisor).
    Retract { targets: Vec<Agent>, prob: f64 },
    /// Change the tool registry.
    Registry { change: RegistryChange, prob: f64 },
    /// Jump to `target` (`steps.len()` = end of this repetition) if the condition holds on
    /// the values of the agent's latest read.
    Branch {
        cell: Cell,
        when: Cond,
        target: usize,
        prob: f64,
    },
    /// Send a message to `to` (CPL): a send event at the agent's monitor that sets `set`; the
    /// message carries the monitor's metadata, wire-encoded, and arrives after `latency_ms`.
    Send {
        to: Agent,
        set: Vec<(usize, CplValue)>,
        latency_ms: Dist,
    },
    /// Wait until a message (from `from`, or from anyone) has arrived, then a receive event
    /// that takes the sender's `take` variables (as they were at its send) and sets `set`.
    Recv {
        from: Option<Agent>,
        take: Vec<usize>,
        set: Vec<(usize, CplValue)>,
    },
    /// A local event setting `set`.
    Set { set: Vec<(usize, CplValue)> },
    /// A guarded action: a choice event at the agent's monitor; done when guard `guard` (an
    /// index into the program's guards) holds there, else refused and continued at `refused`.
    Act {
        name: String,
        guard: usize,
        refused: usize,
    },
}

/// How a `write`'s effects complete (`order` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectOrder {
    /// By sampled completion latency, ties in issue order (the default, `latency`).
    Latency,
    /// A uniformly random non-identity permutation of the issue order (`non-identity`; the
    /// A6 twin of SPEC §7). With fewer than two effects it is the identity.
    NonIdentity,
}

/// A branch condition on a value read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Null,
    NotNull,
}

/// Prompt tokens from what was read; completion tokens from a distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenModel {
    pub prompt_base: u64,
    pub prompt_per_cell: u64,
    pub completion: Dist,
}

/// How often a dropped or aborted operation is retried (re-read, regenerate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries per operation (`u32::MAX` when `unbounded`).
    pub max: u32,
    /// `max = "unbounded"`: retried forever. The retry count is then not state: the engine
    /// keeps only whether the operation is being retried.
    pub unbounded: bool,
    pub backoff_ms: Dist,
}

/// Where generations come from.
#[derive(Clone, Debug)]
pub enum GeneratorSpec {
    Stub,
    Recorded {
        recording: Arc<Recording>,
        on_missing: OnMissing,
    },
}

/// What a recorded generator does with a key that is not in the recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnMissing {
    Error,
    Stub,
}

/// A value that is not `error` or `stub`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not `error` or `stub`")]
pub struct UnknownOnMissing(pub String);

impl OnMissing {
    /// Parses `error` or `stub`.
    pub fn parse(s: &str) -> Result<OnMissing, UnknownOnMissing> {
        match s {
            "error" => Ok(OnMissing::Error),
            "stub" => Ok(OnMissing::Stub),
            _ => Err(UnknownOnMissing(s.to_owned())),
        }
    }
}

impl std::str::FromStr for OnMissing {
    type Err = UnknownOnMissing;

    fn from_str(s: &str) -> Result<OnMissing, UnknownOnMissing> {
        OnMissing::parse(s)
    }
}

impl Scenario {
    /// Loads and resolves a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::parse(path, &crate::source::read_source(path)?)
    }

    /// Parses scenario text; `path` names it in errors and anchors relative recording paths.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        resolve::resolve(path, text, &[])
    }

    /// Parses scenario text whose referenced guard files are given as `(name, text)` pairs,
    /// by the name the scenario uses (a binary that compiles its scenarios in needs no
    /// source tree).
    pub fn parse_embedded(
        path: &Path,
        text: &str,
        files: &[(&str, &str)],
    ) -> Result<Scenario, ScenarioError> {
        resolve::resolve(path, text, files)
    }

    /// The initial registry: every declared tool at version 0.
    pub fn registry(&self) -> agentsim_models::record::Registry {
        agentsim_models::record::Registry::all(self.tool_count)
    }

    /// The operations one trial begins without retries (the reads of every repetition), at
    /// most [`OPS_HINT_MAX`] and never more than `events_max` (a read is an event): the
    /// engine reserves that much log, so a huge `repeat` that `events_max` cuts short
    /// reserves nothing it will not use.
    pub fn ops_hint(&self) -> usize {
        let reads: usize = self
            .agents
            .iter()
            .map(|a| {
                let reads = a
                    .script
                    .steps
                    .iter()
                    .filter(|s| matches!(s, Step::Read { .. }));
                reads.count().saturating_mul(a.repeat.max(1) as usize)
            })
            .fold(0, usize::saturating_add);
        let events = usize::try_from(self.events_max).unwrap_or(usize::MAX);
        reads.min(events).min(OPS_HINT_MAX)
    }

    /// A rough count of scheduling points per trial (PCT needs a bound on steps).
    pub fn steps_hint(&self) -> usize {
        let per: usize = self
            .agents
            .iter()
            .map(|a| (a.script.steps.len() + 1).saturating_mul(a.repeat.max(1) as usize))
            .fold(0, usize::saturating_add);
        per.max(1)
    }
}
