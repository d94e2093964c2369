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

use crate::digest::Fnv1a;
use agentsim_models::names::{Agent, Cell, Names, Tool, Value};
use agentsim_models::record::Registry;
use rand_chacha::ChaCha8Rng;

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
            write_name(&mut h, n.cells.name(c.0), b'c', c.0);
            h.bytes(b"=");
            write_value(&mut h, n, v);
            h.bytes(&[0xff]);
        }
        h.bytes(&[0xfe]);
        for e in self.registry.entries() {
            write_name(&mut h, n.tools.name(e.tool.0), b't', e.tool.0);
            h.bytes(b"@").decimal(u64::from(e.version));
            h.bytes(&[0xff]);
        }
        h.finish()
    }
}

/// Hashes a name, or `<prefix><id>` when it was never interned (as `Names` displays it).
fn write_name(h: &mut Fnv1a, name: Option<&str>, prefix: u8, id: u32) {
    match name {
        Some(s) => h.bytes(s.as_bytes()),
        None => h.bytes(&[prefix]).decimal(u64::from(id)),
    };
}

/// Hashes a value's display name: `NULL`, its interned name, or `v<id>`.
fn write_value(h: &mut Fnv1a, n: &Names, v: Value) {
    if v.is_null() {
        h.bytes(b"NULL");
    } else if let Some(name) = n.interned_value(v) {
        h.bytes(name.as_bytes());
    } else {
        h.bytes(b"v").decimal(u64::from(v.0));
    }
}

/// How many tokens and how long a generation step costs when the generator samples it.
#[derive(Clone, Copy, Debug)]
pub struct GenCost {
    pub latency_ms: crate::dist::Dist,
    pub completion: crate::dist::Dist,
    pub prompt_tokens: u64,
}

/// The values a generation outputs for the cells its operation writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::fnv1a64;
    use agentsim_models::record::ToolEntry;

    /// The digest is FNV-1a over the documented byte string: agent name, 0xFF, the step as 8
    /// little-endian bytes, `cell=value` 0xFF per read, 0xFE, `tool@version` 0xFF per tool,
    /// with `c<id>`, `t<id>`, `v<id>` for names never interned. Recordings are keyed by it,
    /// so the bytes must never change.
    #[test]
    fn digest_hashes_the_documented_bytes() {
        let mut names = Names::new();
        let editor = names.agent("editor");
        let doc = names.cell("doc");
        let draft = names.value("draft one");
        let search = names.tool("search");
        let read = [
            (doc, draft),
            (Cell(7), Value::NULL),
            (Cell(8), Value(1_048_583)),
        ];
        let registry = Registry::from_entries([
            ToolEntry {
                tool: search,
                version: 0,
            },
            ToolEntry {
                tool: Tool(12),
                version: 31,
            },
        ]);
        let input = GenInput {
            agent: editor,
            step: 258,
            planned: None,
            read: &read,
            registry: &registry,
            names: &names,
        };
        let mut bytes = b"editor\xff".to_vec();
        bytes.extend_from_slice(&258u64.to_le_bytes());
        bytes.extend_from_slice(b"doc=draft one\xffc7=NULL\xffc8=v1048583\xff\xfe");
        bytes.extend_from_slice(b"search@0\xfft12@31\xff");
        assert_eq!(input.digest(), fnv1a64(&bytes));
    }
}
