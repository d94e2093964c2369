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
use super::run::{builtin, run_from};
use crate::artifacts::figures::{Count, TwinGroup, TwinsData};
use crate::artifacts::tables::Table;
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_models::runtime::{Discipline, RuntimeKind};
use agentsim_models::Anomaly;
use agentsim_sim::shard::{Local, TrialSource};
use agentsim_sim::stats::Proportion;
use serde::Serialize;

/// The `twins` step.
pub const STEP: Step = Step {
    name: "twins",
    about: "the prevention twins, k/N without and with each mechanism (SPEC §7)",
    run: step_files,
};

/// Trials per twin when the command line does not say.
pub const TRIALS_DEFAULT: u64 = 1000;

/// One twin: a scenario, the anomaly it targets, its size and the two runtimes.
#[derive(Clone, Copy, Debug)]
pub struct TwinSpec {
    pub anomaly: Anomaly,
    pub size: u32,
    /// What the size counts, for figures (`agents`, `depth`, `width`).
    pub unit: &'static str,
    pub file: &'static str,
    pub text: &'static str,
    pub without: RuntimeKind,
    pub with: RuntimeKind,
    /// When the mechanism is the agents' own (an MCP client's tool-list policy), the with
    /// side's scenario; both sides then run one runtime (`without` = `with`).
    pub client: Option<ClientFix>,
}

/// The with side of a twin whose mechanism is in the scenario (the agents' clients), not in
/// the runtime: its file and what the table calls each side.
#[derive(Clone, Copy, Debug)]
pub struct ClientFix {
    pub file: &'static str,
    pub text: &'static str,
    pub without: &'static str,
    pub with: &'static str,
}

macro_rules! twin {
    ($anomaly:expr, $size:expr, $unit:expr, $file:expr, $without:expr, $with:expr) => {
        TwinSpec {
            anomaly: $anomaly,
            size: $size,
            unit: $unit,
            file: concat!("scenarios/twins/", $file),
            text: include_str!(concat!("../../../scenarios/twins/", $file)),
            without: $without,
            with: $with,
            client: None,
        }
    };
}

/// Every twin, in report order.
pub const TWINS: [TwinSpec; 13] = [
    twin!(
        Anomaly::A1,
        2,
        "agents",
        "a1.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Ssi
    ),
    twin!(
        Anomaly::A1,
        2,
        "agents",
        "a1.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Pessimistic
    ),
    twin!(
        Anomaly::A3,
        2,
        "depth",
        "a3-depth2.toml",
        RuntimeKind::Causal { cascade: false },
        RuntimeKind::Causal { cascade: true }
    ),
    twin!(
        Anomaly::A3,
        3,
        "depth",
        "a3-depth3.toml",
        RuntimeKind::Causal { cascade: false },
        RuntimeKind::Causal { cascade: true }
    ),
    twin!(
        Anomaly::A3,
        5,
        "depth",
        "a3-depth5.toml",
        RuntimeKind::Causal { cascade: false },
        RuntimeKind::Causal { cascade: true }
    ),
    twin!(
        Anomaly::A6,
        2,
        "width",
        "a6-width2.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Saga
    ),
    twin!(
        Anomaly::A6,
        4,
        "width",
        "a6-width4.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Saga
    ),
    twin!(
        Anomaly::A6,
        8,
        "width",
        "a6-width8.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Saga
    ),
    twin!(
        Anomaly::A6,
        16,
        "width",
        "a6-width16.toml",
        RuntimeKind::Vanilla,
        RuntimeKind::Saga
    ),
    twin!(
        Anomaly::A2,
        2,
        "width",
        "a2-width2.toml",
        RuntimeKind::Saga,
        RuntimeKind::Registry(Discipline::Pin)
    ),
    twin!(
        Anomaly::A2,
        4,
        "width",
        "a2-width4.toml",
        RuntimeKind::Saga,
        RuntimeKind::Registry(Discipline::Pin)
    ),
    twin!(
        Anomaly::A2,
        16,
        "width",
        "a2-width16.toml",
        RuntimeKind::Saga,
        RuntimeKind::Registry(Discipline::Pin)
    ),
    TwinSpec {
        client: Some(ClientFix {
            file: "scenarios/twins/a2-mcp-refresh.toml",
            text: include_str!("../../../scenarios/twins/a2-mcp-refresh.toml"),
            without: "mcp-stale",
            with: "mcp-refresh",
        }),
        ..twin!(
            Anomaly::A2,
            2,
            "clients",
            "a2-mcp-stale.toml",
            RuntimeKind::Vanilla,
            RuntimeKind::Vanilla
        )
    },
];

/// k/n as printed by `--json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct KN {
    pub k: u64,
    pub n: u64,
}

impl KN {
    /// `k/n = rate [lo, hi]`, as the lines print it.
    pub fn shown(self) -> String {
        Proportion::new(self.k, self.n).display()
    }
}

/// One group of a twins figure: `anomaly` at `unit size`, `mechanism` against `baseline`,
/// the runs exhibiting it without and with.
pub fn group(
    anomaly: Anomaly,
    (unit, size): (&str, u32),
    (mechanism, baseline): (String, String),
    (without, with): (KN, KN),
) -> TwinGroup {
    let c = |x: KN| Count { k: x.k, n: x.n };
    TwinGroup {
        anomaly: anomaly.to_string(),
        size: format!("{unit} {size}"),
        mechanism,
        baseline,
        without: c(without),
        with: c(with),
    }
}

/// A twins step's files: the figure `svg` and `table`, both named `stem`.
pub fn step_artifacts(stem: &str, about: &str, svg: String, table: &Table) -> Vec<Artifact> {
    let mut files = vec![figure_file(stem, about, svg)];
    files.extend(table_files(stem, table));
    files
}

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

impl TwinSpec {
    /// The scenario of the without side and of the with side, as (file, text).
    pub fn scenarios(&self) -> [(&'static str, &'static str); 2] {
        let own = (self.file, self.text);
        [own, self.client.map_or(own, |c| (c.file, c.text))]
    }

    /// What the table calls the without side and the with side.
    pub fn names(&self) -> (&'static str, &'static str) {
        match self.client {
            Some(c) => (c.without, c.with),
            None => (self.without.name(), self.with.name()),
        }
    }
}

/// Trials of `(file, text)` under `runtime` whose history exhibits the twin's anomaly.
fn count(
    src: &mut dyn TrialSource,
    spec: &TwinSpec,
    (file, text): (&str, &str),
    runtime: RuntimeKind,
    (trials, seed, threads): (u64, u64, usize),
) -> anyhow::Result<KN> {
    let sc = builtin(file, text)?;
    let r = run_from(src, &sc, runtime.into(), trials, seed, threads)?;
    let p = r
        .aggregate
        .rate(spec.anomaly)
        .ok_or_else(|| anyhow::anyhow!("the simulator does not report {}", spec.anomaly))?;
    Ok(KN { k: p.k, n: p.n })
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
            without: count(src, spec, without, spec.without, run)?,
            with: count(src, spec, with, spec.with, run)?,
            unit: spec.unit,
        });
    }
    Ok(out)
}

/// A row of a twins figure.
pub trait Twin {
    /// Its group: the anomaly at a size, the runtimes, the counts ([`group`]).
    fn group(&self) -> TwinGroup;
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

/// The figure's data (and, through it, the table).
pub fn figure_data<T: Twin>(results: &[T]) -> TwinsData {
    TwinsData {
        groups: results.iter().map(T::group).collect(),
    }
}

/// A twins step's trials per side (100 with `--quick`) and threads.
pub fn step_run(ctx: &Ctx) -> (u64, usize) {
    let trials = if ctx.quick { 100 } else { TRIALS_DEFAULT };
    (trials, common::default_threads())
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
    fn every_twin_scenario_loads() {
        for spec in &TWINS {
            for (file, text) in spec.scenarios() {
                let sc = builtin(file, text).expect(file);
                assert!(sc.trials >= 1, "{file}");
            }
        }
    }

    /// The MCP twin's two files differ in the client's policy only (and in their comments,
    /// name and description): the same agents, timings, seed and expectations otherwise.
    #[test]
    fn the_mcp_twin_files_differ_in_the_client_only() {
        let spec = TWINS
            .iter()
            .find(|t| t.client.is_some())
            .expect("an MCP twin");
        let [(_, stale), (_, fixed)] = spec.scenarios();
        let body = |t: &'static str| -> Vec<&'static str> {
            let run = &t[..t.find("[[expect]]").expect("expectations")];
            run.lines()
                .filter(|l| !l.starts_with('#'))
                .filter(|l| !l.starts_with("name =") && !l.starts_with("description ="))
                .collect()
        };
        let (a, b) = (body(stale), body(fixed));
        assert_eq!(a.len(), b.len());
        let differ: Vec<(&str, &str)> = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (*x, *y))
            .collect();
        assert_eq!(
            differ,
            [(r#"mcp_client = "stale""#, r#"mcp_client = "refresh""#)]
        );
        let sc = builtin(spec.file, stale).expect("stale");
        let fx = builtin(spec.client.expect("fix").file, fixed).expect("fixed");
        assert_eq!(sc.runtime, fx.runtime);
        assert_eq!(spec.without, spec.with, "the client is the only mechanism");
    }

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
