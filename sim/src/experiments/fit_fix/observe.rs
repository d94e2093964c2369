//! What `fit` and `fix` read: a history (from a JSON Lines file or ingested from a trace),
//! with the trace's wall times when it has them, and the fitted scenario they make.

use super::otel_times;
use agentsim_ingest::{Report, Source};
use agentsim_models::{Anomaly, History};
use agentsim_sim::fit::{self, Fitted, Observed, Timing};
use agentsim_sim::scenario::Scenario;
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// An observed run.
pub struct Observation {
    pub history: History,
    /// `--from`: `None` for a JSON Lines history.
    pub from: Option<Source>,
    /// The ingestion's report, for an ingested history.
    pub report: Option<Report>,
    pub times: Option<Vec<Timing>>,
    /// `otel trace FILE`, `langgraph checkpoints FILE`, `history FILE`.
    pub source: String,
    /// Why the wall times were not used, when the input had some.
    pub clock_note: Option<String>,
}

impl Observation {
    /// The anomalies the observed run exhibits, in lattice order.
    pub fn exhibits(&self) -> Vec<Anomaly> {
        agentsim_sim::runner::detect(&self.history).anomalies()
    }
}

/// The observation of `history`, read from `file` (named `shown` in what is written) as
/// `from` says, with its ingestion's `report`; a trace of GenAI spans is read again for its
/// wall times (OpenInference spans' and an MCP log's wall times are not paired with records
/// yet, so log positions stand in).
pub fn observe(
    history: History,
    report: Option<Report>,
    from: Option<Source>,
    file: &Path,
    shown: &str,
) -> Result<Observation> {
    if history.records.is_empty() {
        return Err(anyhow!(
            "{shown}: no steps: the input holds no operation (nothing to fit a scenario from)"
        ));
    }
    let (label, times, clock_note) = match from {
        None | Some(Source::Recorder) => (format!("history {shown}"), None, None),
        Some(Source::Langgraph) => (format!("langgraph checkpoints {shown}"), None, None),
        Some(Source::Openinference) => (format!("openinference trace {shown}"), None, None),
        Some(Source::Mcp) => (format!("mcp log {shown}"), None, None),
        Some(Source::Otel | Source::Genai) => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {shown}"))?;
            match otel_times::timings(&text, shown, &history) {
                Ok(t) => (format!("otel trace {shown}"), Some(t), None),
                Err(why) => (
                    format!("otel trace {shown}"),
                    None,
                    Some(format!(
                        "wall times not used ({why}); log positions instead"
                    )),
                ),
            }
        }
    };
    Ok(Observation {
        history,
        from,
        report,
        times,
        source: label,
        clock_note,
    })
}

/// The scenario's `name`: `fit-` and the input's file stem.
pub fn scenario_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".to_owned());
    format!("fit-{stem}")
}

/// Fits `obs` and loads the text as the scenario file `path` (which need not exist yet).
pub fn fitted(
    obs: &Observation,
    name: String,
    path: &Path,
    trials: u64,
    seed: u64,
) -> Result<(Fitted, Scenario)> {
    let mut f = fit::fit(&Observed {
        history: &obs.history,
        times: obs.times.clone(),
        source: obs.source.clone(),
        name,
        trials,
        seed,
    })?;
    if let Some(note) = &obs.clock_note {
        f.header.push(format!("Note: {note}"));
        f.toml = format!("# Note: {note}\n{}", f.toml);
    }
    let sc = Scenario::parse(path, &f.toml)
        .map_err(|e| anyhow!("the fitted scenario does not load (a bug in fit): {e}"))?;
    Ok((f, sc))
}

/// The scenario text with its top-level `runtime` set to `runtime`.
pub fn with_runtime(text: &str, runtime: &str) -> String {
    let mut done = false;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if !done && line.trim_start().starts_with("runtime") && line.contains('=') {
            out.push_str(&format!(
                "runtime = \"{runtime}\"  # chosen by agentsim fix"
            ));
            done = true;
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}
