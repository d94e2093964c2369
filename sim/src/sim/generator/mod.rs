//! Generators: where an agent's LLM call gets its output, latency and token cost.
//!
//! A generator is a small trait with one method. [`stub::Stub`] is a deterministic function
//! of the inputs (agent, step, values read, tools visible); [`recorded::Recorded`] replays
//! real generations from a JSONL recording keyed by (agent, step, digest of the inputs).
//! Both see the same [`GenInput`], and [`GenInput::digest`] is the one key they share.
//! A generator says nothing about whether its outputs are *good*; only that they are
//! reproducible.

pub mod recorded;
pub mod stub;

use crate::sim::digest::Fnv1a;
use agentsim_models::names::{Agent, Cell, Names, Tool, Value};
use agentsim_models::record::Registry;
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;

/// What a generation sees.
#[derive(Clone, Copy, Debug)]
pub struct GenInput<'a> {
    pub agent: Agent,
    /// The script step (0-based index into the agent's script) of the `generate`.
    pub step: usize,
    /// The tool the operation planned at its read (not part of the digest: the step fixes it).
    pub planned: Option<Tool>,
    /// The cells read by the enclosing operation with the values seen (empty outside one).
    pub read: &'a [(Cell, Value)],
    /// The tools visible (the registry the operation read, or the live one outside one).
    pub registry: &'a Registry,
    pub names: &'a Names,
}

impl GenInput<'_> {
    /// The stable digest of the inputs: FNV-1a 64 over the agent's name, the step, each read
    /// `cell=value` and each visible `tool@version`, by name, in id order. Names are hashed
    /// in place (no allocation): this runs once per generation.
    pub fn digest(&self) -> u64 {
        let n = self.names;
        let mut h = Fnv1a::new();
        h.field(n.agents.name(self.agent.0).unwrap_or("?"));
        h.word(self.step as u64);
        for &(c, v) in self.read {
            let _ = write!(h, "{}=", Name(n.cells.name(c.0), 'c', c.0));
            write_value(&mut h, n, v);
            h.bytes(&[0xff]);
        }
        h.bytes(&[0xfe]);
        for e in self.registry.entries() {
            let _ = write!(
                h,
                "{}@{}",
                Name(n.tools.name(e.tool.0), 't', e.tool.0),
                e.version
            );
            h.bytes(&[0xff]);
        }
        h.finish()
    }
}

/// A name, or `<prefix><id>` when it was never interned (as `Names` displays it).
struct Name<'a>(Option<&'a str>, char, u32);

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(s) => f.write_str(s),
            None => write!(f, "{}{}", self.1, self.2),
        }
    }
}

/// Hashes a value's display name: `NULL`, its interned name, or `v<id>`.
fn write_value(h: &mut Fnv1a, n: &Names, v: Value) {
    if v.is_null() {
        h.bytes(b"NULL");
    } else if (v.0 as usize) <= n.value_count() {
        let name = n.value_display(v);
        h.bytes(name.as_bytes());
    } else {
        let _ = write!(h, "v{}", v.0);
    }
}

/// How many tokens and how long a generation step costs when the generator samples it.
#[derive(Clone, Copy, Debug)]
pub struct GenCost {
    pub latency_ms: crate::sim::dist::Dist,
    pub completion: crate::sim::dist::Dist,
    pub prompt_tokens: u64,
}

/// The values a generation outputs for the cells its operation writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Derived per cell from this digest (stub).
    Digest(u64),
    /// Given per cell (recorded); cells not listed fall back to the digest.
    Values {
        digest: u64,
        values: Vec<(Cell, Value)>,
    },
}

impl Output {
    /// The value this output writes to `c` (never NULL for the stub).
    pub fn value(&self, c: Cell) -> Value {
        match self {
            Output::Digest(d) => stub::value_for(*d, c),
            Output::Values { digest, values } => values
                .iter()
                .find(|&&(k, _)| k == c)
                .map_or_else(|| stub::value_for(*digest, c), |&(_, v)| v),
        }
    }
}

/// One generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    pub latency_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub output: Output,
    /// Tool calls the generation made (recorded; the stub calls the planned tool if visible).
    pub tool_calls: Vec<Tool>,
}

/// A generation that cannot be produced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    #[error(
        "no recorded generation for key agent={agent} step={step} digest={digest:016x} \
         (in {file}); record it, or pass --on-missing stub"
    )]
    Missing {
        agent: String,
        step: usize,
        digest: u64,
        file: String,
    },
}

/// The source of generations. One method, as small as a scheduler.
pub trait Generator: Send + Sync {
    /// Produces the generation for `input`; `cost` is the scenario's sampling model, which a
    /// recorded generator ignores in favour of the recording.
    fn generate(
        &self,
        input: &GenInput<'_>,
        cost: &GenCost,
        rng: &mut ChaCha8Rng,
    ) -> Result<Generation, GenError>;
}
