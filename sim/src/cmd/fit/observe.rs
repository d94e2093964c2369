//! What `fit` and `fix` read: a JSON Lines history or a trace (through `agentsim_ingest`),
//! with the trace's wall times when it has them, and the fitted scenario they make.

use super::otel_times;
use crate::cmd::ingest::{self, Ingest};
use agentsim_ingest::Report;
use agentsim_models::{Anomaly, History};
use agentsim_sim::fit::{self, Fitted, Observed, Timing};
use agentsim_sim::scenario::Scenario;
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// An observed run.
pub struct Observation {
    pub history: History,
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

/// Reads `file` as `source` says (`None`: a JSON Lines history).
pub fn observe(file: &Path, source: Option<&Ingest>) -> Result<Observation> {
    let (history, report) = ingest::history_for_detect(file, source)?;
    let shown = file.display();
    let (label, times, clock_note) = match source {
        None => (format!("history {shown}"), None, None),
        Some(Ingest::Langgraph { .. }) => (format!("langgraph checkpoints {shown}"), None, None),
        Some(Ingest::Otel) => {
            let text = std::fs::read_to_string(file).with_context(|| format!("reading {shown}"))?;
            match otel_times::timings(&text, &shown.to_string(), &history) {
                Ok(t) => (format!("otel trace {shown}"), Some(t), None),
                Err(why) => (
                    format!("otel trace {shown}"),
                    None,
                    Some(format!("wall times not used ({why}); log positions instead")),
                ),
            }
        }
    };
    if history.records.is_empty() {
        return Err(anyhow!(
            "{shown}: no steps: the input holds no operation (nothing to fit a scenario from)"
        ));
    }
    Ok(Observation {
        history,
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
