//! The prevention twins (SPEC §7): each anomaly at each size, the same seeded scenario run
//! without the preventing mechanism and with it, counting trials whose history exhibits the
//! anomaly (detectors on the simulated history).
//!
//! | anomaly | sizes | without | with |
//! |---------|-------|---------|------|
//! | A1 stale read | 2 agents | `vanilla` | `ssi`, `pessimistic` |
//! | A3 chain of readers, root retracted | depth 2, 3, 5 | `causal-no-cascade` | `causal` |
//! | A6 effects complete out of order | width 2, 4, 8, 16 | `vanilla` | `saga` |
//! | A2 signature changed before dispatch | width 2, 4, 16 | `saga` (live) | `registry-pin` |
//! | A2 tool withdrawn, MCP clients told | clients 2 | stale list | re-list + check |
//!
//! The MCP twin's mechanism is the client's, not the runtime's: both sides run `vanilla`, the
//! without side `scenarios/twins/a2-mcp-stale.toml` (`mcp_client = "stale"`), the with side
//! its copy `a2-mcp-refresh.toml` (`mcp_client = "refresh"`; see `engine::mcp`).
//!
//! The paper expects N/N without and 0/N with. Both counts come from running the engine and
//! the detectors; a pass shows the mechanism prevented the anomaly on these seeds and timings,
//! not on every schedule (the exhaustive checker covers small bounds).

use super::run as common;
use super::twin_specs::{count, figure_data, group, step_artifacts, step_run, Twin, KN, TWINS};
use crate::artifacts::figures::TwinGroup;
use crate::artifacts::{Artifact, Ctx, Step};
use agentsim_models::Anomaly;
use agentsim_sim::shard::{Local, TrialSource};
use serde::Serialize;

/// The `twins` step.
pub const STEP: Step = Step {
    name: "twins",
    about: "the prevention twins, k/N without and with each mechanism (SPEC §7)",
    run: step_files,
};

/// One twin's outcome; serializes to the issue's `--json` shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TwinResult {
    pub anomaly: Anomaly,
    pub size: u32,
    pub mechanism: &'static str,
    /// The runtime without the mechanism (not in `--json`, whose shape is the issue's).
    #[serde(skip)]
    pub baseline: &'static str,
    pub without: KN,
    pub with: KN,
    #[serde(skip)]
    pub unit: &'static str,
}

impl TwinResult {
    /// One line: `A3 depth 2 causal: without 1000/1000 = … with 0/1000 = …`.
    pub fn display(&self) -> String {
        format!(
            "{} {} {:<2} {:<13} without {:<34} with {}",
            self.anomaly,
            self.unit,
            self.size,
            self.mechanism,
            self.without.shown(),
            self.with.shown()
        )
    }
}

/// Runs every twin with `trials` trials each from `seed`; both sides use the same trial seeds.
pub fn run(trials: u64, seed: u64, threads: usize) -> anyhow::Result<Vec<TwinResult>> {
    run_from_source(&mut Local, trials, seed, threads)
}

/// [`run`] with the trials taken from `src`.
pub fn run_from_source(
    src: &mut dyn TrialSource,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<TwinResult>> {
    let mut out = Vec::with_capacity(TWINS.len());
    let run = (trials, seed, threads);
    for spec in &TWINS {
        let [without, with] = spec.scenarios();
        let (baseline, mechanism) = spec.names();
        out.push(TwinResult {
            anomaly: spec.anomaly,
            size: spec.size,
            mechanism,
            baseline,
            without: count(src, spec.anomaly, without, spec.without.into(), run)?,
            with: count(src, spec.anomaly, with, spec.with.into(), run)?,
            unit: spec.unit,
        });
    }
    Ok(out)
}

impl Twin for TwinResult {
    fn group(&self) -> TwinGroup {
        let names = (self.mechanism.to_string(), self.baseline.to_string());
        group(
            self.anomaly,
            (self.unit, self.size),
            names,
            (self.without, self.with),
        )
    }
}

/// Twins: 1000 trials per side (100 with `--quick`).
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let (trials, threads) = step_run(ctx);
    let results = ctx.trials(|src| run_from_source(src, trials, common::SEED, threads))?;
    let data = figure_data(&results);
    let about = "Prevention twins: for each anomaly and pair of runtimes (without → with the preventing \
                 mechanism), k/N seeded runs exhibiting the anomaly; sizes with equal counts share a \
                 row. The 95% Wilson intervals are in tables/twins.md.";
    let svg = crate::artifacts::figures::twins::render(&data);
    Ok(step_artifacts("twins", about, svg, &data.table()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_is_the_issues() {
        let r = TwinResult {
            anomaly: Anomaly::A3,
            size: 2,
            mechanism: "causal",
            baseline: "causal-no-cascade",
            without: KN { k: 3, n: 3 },
            with: KN { k: 0, n: 3 },
            unit: "depth",
        };
        let j = serde_json::to_string(&r).expect("serializes");
        assert_eq!(
            j,
            r#"{"anomaly":"A3","size":2,"mechanism":"causal","without":{"k":3,"n":3},"with":{"k":0,"n":3}}"#
        );
    }
}
