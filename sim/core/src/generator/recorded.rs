//! Recorded generations: replay real LLM calls from a JSON Lines recording.
//!
//! Line 1 is the header `{"format": "agentsim-recording", "version": 1}`; every other line is
//! one generation keyed by `(agent, step, digest)` where `digest` is [`GenInput::digest`] as
//! 16 hex digits, with `latency_ms`, `prompt_tokens`, `completion_tokens`, `values` (object
//! cell → string or null) and optional `tool_calls` (array of tool names). The schema is
//! `scenarios/recordings/recording.schema.json`. A replayed run is as faithful as the
//! recording: a key the recording lacks is an error (or the stub's answer with
//! `--on-missing stub`), never a silent guess.

use super::{stub, GenCost, GenError, GenInput, Generation, Generator, Output};
use crate::source::ScenarioError;
use agentsim_models::names::{Cell, Names, Tool, Value};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The format name in the header line.
pub const FORMAT: &str = "agentsim-recording";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    version: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    agent: String,
    step: usize,
    digest: String,
    latency_ms: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    values: BTreeMap<String, Option<String>>,
    #[serde(default)]
    tool_calls: Vec<String>,
}

/// A loaded recording: agent name → (step, digest) → generation.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    pub file: PathBuf,
    entries: BTreeMap<String, BTreeMap<(usize, u64), Generation>>,
}

impl Recording {
    /// Loads a recording; cell and tool names must be the scenario's, values are interned.
    pub fn load(path: &Path, names: &mut Names) -> Result<Recording, ScenarioError> {
        let fail = |line: usize, key: &str, message: String| ScenarioError {
            file: path.to_path_buf(),
            line,
            col: 1,
            key: key.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(0, "(file)", e.to_string()))?;
        let mut rec = Recording {
            file: path.to_path_buf(),
            entries: BTreeMap::new(),
        };
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (n, first) = lines
            .next()
            .ok_or_else(|| fail(1, "format", "empty recording".into()))?;
        let h: Header =
            serde_json::from_str(first).map_err(|e| fail(n + 1, "format", e.to_string()))?;
        if h.format != FORMAT || h.version != VERSION {
            let msg =
                format!("header must be {{\"format\": \"{FORMAT}\", \"version\": {VERSION}}}");
            return Err(fail(n + 1, "format", msg));
        }
        for (n, l) in lines {
            let line: Line =
                serde_json::from_str(l).map_err(|e| fail(n + 1, &json_key(&e), e.to_string()))?;
            let (key, generation) = entry(line, names).map_err(|(k, m)| fail(n + 1, k, m))?;
            let per_agent = rec.entries.entry(key.0).or_default();
            if per_agent.insert((key.1, key.2), generation).is_some() {
                return Err(fail(
                    n + 1,
                    "digest",
                    "duplicate key (agent, step, digest)".into(),
                ));
            }
        }
        Ok(rec)
    }

    /// The recorded generation for a key, if any.
    pub fn get(&self, agent: &str, step: usize, digest: u64) -> Option<&Generation> {
        self.entries.get(agent)?.get(&(step, digest))
    }

    /// Number of recorded generations.
    pub fn len(&self) -> usize {
        self.entries.values().map(BTreeMap::len).sum()
    }

    /// Whether the recording holds no generation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

type Key = (String, usize, u64);

fn entry(line: Line, names: &mut Names) -> Result<(Key, Generation), (&'static str, String)> {
    let digest = u64::from_str_radix(&line.digest, 16)
        .ok()
        .filter(|_| line.digest.len() == 16)
        .ok_or(("digest", format!("`{}` is not 16 hex digits", line.digest)))?;
    let mut values = Vec::new();
    for (cell, v) in &line.values {
        let c = names
            .cells
            .get(cell)
            .ok_or(("values", format!("unknown cell `{cell}`")))?;
        let v = v.as_deref().map_or(Value::NULL, |s| names.value(s));
        values.push((Cell(c), v));
    }
    let mut tool_calls = Vec::new();
    for t in &line.tool_calls {
        let id = names
            .tools
            .get(t)
            .ok_or(("tool_calls", format!("unknown tool `{t}`")))?;
        tool_calls.push(Tool(id));
    }
    let generation = Generation {
        latency_ms: line.latency_ms,
        prompt_tokens: line.prompt_tokens,
        completion_tokens: line.completion_tokens,
        output: Output::Values { digest, values },
        tool_calls,
    };
    Ok(((line.agent, line.step, digest), generation))
}

/// The key serde_json complains about, when its message names one.
fn json_key(e: &serde_json::Error) -> String {
    let m = e.to_string();
    m.split('`').nth(1).unwrap_or("(line)").to_owned()
}

/// Replays a recording; falls back to the stub on a missing key if asked to.
#[derive(Clone, Debug)]
pub struct Recorded<'a> {
    pub recording: &'a Recording,
    pub fallback_to_stub: bool,
}

impl Generator for Recorded<'_> {
    fn generate(
        &self,
        input: &GenInput<'_>,
        cost: &GenCost,
        rng: &mut ChaCha8Rng,
    ) -> Result<Generation, GenError> {
        let agent = input.names.agent_name(input.agent);
        let digest = input.digest();
        match self.recording.get(&agent, input.step, digest) {
            Some(g) => Ok(g.clone()),
            None if self.fallback_to_stub => Ok(stub::generate(input, cost, rng)),
            None => Err(GenError::Missing {
                agent,
                step: input.step,
                digest,
                file: self.recording.file.display().to_string(),
            }),
        }
    }
}

/// One recorded generation as a JSONL line (used by `simulate --record-out`).
pub fn to_line(
    agent: &str,
    step: usize,
    digest: u64,
    g: &Generation,
    writes: &[Cell],
    names: &Names,
) -> String {
    let values: BTreeMap<String, Option<String>> = writes
        .iter()
        .map(|&c| (names.cell_name(c), names.value_name(g.output.value(c))))
        .collect();
    let tools: Vec<String> = g.tool_calls.iter().map(|&t| names.tool_name(t)).collect();
    serde_json::json!({
        "agent": agent,
        "step": step,
        "digest": format!("{digest:016x}"),
        "latency_ms": g.latency_ms,
        "prompt_tokens": g.prompt_tokens,
        "completion_tokens": g.completion_tokens,
        "values": values,
        "tool_calls": tools,
    })
    .to_string()
}

/// The header line.
pub fn header() -> String {
    format!("{{\"format\":\"{FORMAT}\",\"version\":{VERSION}}}")
}
