//! The scenario file as written: serde structs that mirror the TOML one to one.
//!
//! Every struct denies unknown fields, and every name a user types is `Spanned` so that a
//! later semantic error (an unknown cell, a `goto` to a missing label) can name its line.
//! Nothing here checks meaning; [`super::resolve`] does. A step is one flat table whose
//! `do` key says what it is; which other keys a step may carry is checked in `resolve`
//! (an internally tagged enum would lose the spans).

use crate::dist::Dist;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// The top-level table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub runtime: Spanned<String>,
    #[serde(default)]
    pub provenance: Option<bool>,
    #[serde(default)]
    pub trials: Option<Spanned<u64>>,
    #[serde(default)]
    pub seed: Option<u64>,
    pub cells: Vec<Spanned<String>>,
    #[serde(default)]
    pub tools: Vec<Spanned<String>>,
    #[serde(default)]
    pub schedule: Option<RawSchedule>,
    #[serde(default)]
    pub retry: Option<RawRetry>,
    #[serde(default)]
    pub tokens: Option<RawTokens>,
    #[serde(default)]
    pub generator: Option<RawGenerator>,
    pub agents: Vec<Spanned<RawAgent>>,
    /// `[cpl]`: Causal Past Logic guards for `send`, `recv`, `set` and `act` steps.
    #[serde(default)]
    pub cpl: Option<Spanned<RawCpl>>,
    /// `[[expect]]`: claims `agentsim test` checks; other commands only validate them.
    #[serde(default)]
    pub expect: Vec<Spanned<super::expect::RawExpect>>,
}

/// `[cpl]`: the guard file (or inline text), the twin's weaker guard and the stale detector.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCpl {
    /// A guard file, relative to the scenario file.
    #[serde(default)]
    pub guards: Option<Spanned<String>>,
    /// Guards written inline (instead of `guards`).
    #[serde(default)]
    pub text: Option<Spanned<String>>,
    /// The guard every `act` step uses in the twin's arm without the mechanism.
    #[serde(default)]
    pub unguarded: Option<Spanned<String>>,
    /// A formula (over the guards' names) that marks a committed `act` as stale.
    #[serde(default)]
    pub stale: Option<Spanned<String>>,
}

/// `[schedule]`: the scheduling window and the per-trial event bound.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSchedule {
    #[serde(default)]
    pub window_ms: Option<Spanned<u64>>,
    #[serde(default)]
    pub events_max: Option<Spanned<u64>>,
}

/// `[retry]`: how often a dropped or aborted operation is retried, and after what pause.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetry {
    pub max: Spanned<RawRetryMax>,
    #[serde(default)]
    pub backoff_ms: Option<Spanned<Dist>>,
}

/// `[retry] max`: a count, or `"unbounded"` (retried forever).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawRetryMax {
    Count(u32),
    Word(String),
}

/// `[tokens]`: prompt tokens from what was read, completion tokens from a distribution.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTokens {
    #[serde(default)]
    pub prompt_base: Option<Spanned<u64>>,
    #[serde(default)]
    pub prompt_per_cell: Option<Spanned<u64>>,
    pub completion: Spanned<Dist>,
}

/// `[generator]`: `stub`, or `recorded` from a JSONL recording.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGenerator {
    pub kind: Spanned<String>,
    #[serde(default)]
    pub recording: Option<Spanned<String>>,
    #[serde(default)]
    pub on_missing: Option<Spanned<String>>,
}

/// One `[[agents]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    pub name: Spanned<String>,
    #[serde(default)]
    pub count: Option<Spanned<u32>>,
    #[serde(default)]
    pub repeat: Option<Spanned<u32>>,
    #[serde(default)]
    pub start_ms: Option<Spanned<Dist>>,
    #[serde(default)]
    pub mcp_client: Option<Spanned<String>>,
    /// The script loops forever by design (a server): exempt from termination.
    #[serde(default)]
    pub serves: Option<Spanned<bool>>,
    pub script: Vec<Spanned<RawStep>>,
}

/// One script step, a flat table tagged by `do`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    #[serde(rename = "do")]
    pub action: Spanned<String>,
    #[serde(default)]
    pub label: Option<Spanned<String>>,
    #[serde(default)]
    pub cells: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub pick: Option<Spanned<u32>>,
    #[serde(default)]
    pub tool: Option<Spanned<String>>,
    #[serde(default)]
    pub latency_ms: Option<Spanned<Dist>>,
    #[serde(default)]
    pub completion: Option<Spanned<Dist>>,
    #[serde(default)]
    pub include_read: Option<bool>,
    #[serde(default)]
    pub effect_ms: Option<Spanned<Dist>>,
    #[serde(default)]
    pub order: Option<Spanned<String>>,
    #[serde(default)]
    pub prob: Option<Spanned<f64>>,
    #[serde(default)]
    pub agent: Option<Spanned<String>>,
    #[serde(default)]
    pub change: Option<Spanned<String>>,
    #[serde(default)]
    pub cell: Option<Spanned<String>>,
    #[serde(default)]
    pub when: Option<Spanned<String>>,
    #[serde(default)]
    pub goto: Option<Spanned<String>>,
    #[serde(default)]
    pub to: Option<Spanned<String>>,
    #[serde(default)]
    pub from: Option<Spanned<String>>,
    #[serde(default)]
    pub set: Option<Spanned<BTreeMap<String, toml::Value>>>,
    #[serde(default)]
    pub take: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub guard: Option<Spanned<String>>,
    #[serde(default)]
    pub refused: Option<Spanned<String>>,
}

impl RawStep {
    /// The keys present besides `do` and `label`, for the per-action check.
    pub fn present_keys(&self) -> Vec<&'static str> {
        let mut k = Vec::new();
        let mut add = |present: bool, name| {
            if present {
                k.push(name);
            }
        };
        add(self.cells.is_some(), "cells");
        add(self.pick.is_some(), "pick");
        add(self.tool.is_some(), "tool");
        add(self.latency_ms.is_some(), "latency_ms");
        add(self.completion.is_some(), "completion");
        add(self.include_read.is_some(), "include_read");
        add(self.effect_ms.is_some(), "effect_ms");
        add(self.order.is_some(), "order");
        add(self.prob.is_some(), "prob");
        add(self.agent.is_some(), "agent");
        add(self.change.is_some(), "change");
        add(self.cell.is_some(), "cell");
        add(self.when.is_some(), "when");
        add(self.goto.is_some(), "goto");
        add(self.to.is_some(), "to");
        add(self.from.is_some(), "from");
        add(self.set.is_some(), "set");
        add(self.take.is_some(), "take");
        add(self.name.is_some(), "name");
        add(self.guard.is_some(), "guard");
        add(self.refused.is_some(), "refused");
        k
    }
}
