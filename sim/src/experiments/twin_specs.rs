//! The twin scenarios of SPEC §7 and what both twins experiments do with them: a twin's
//! spec ([`TWINS`]), the count of one side ([`count`]), a figure's group ([`group`]) and a
//! step's files. `twins` runs each twin's two runtimes; `mechanism_twins` runs each mechanism
//! over `vanilla` on the smallest twin of each lattice anomaly.
//!
//! A count is what the engine and the detectors found on these seeds and timings, not a
//! statement about every schedule (the exhaustive checker covers small bounds).

use super::run as common;
use super::run::{builtin, run_from};
use crate::artifacts::figures::{Count, TwinGroup, TwinsData};
use crate::artifacts::tables::Table;
use crate::artifacts::{figure_file, table_files, Artifact, Ctx};
use agentsim_models::runtime::{Discipline, RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::shard::TrialSource;
use agentsim_sim::stats::Proportion;
use serde::Serialize;

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

/// Trials of `(file, text)` under `runtime` whose history exhibits `anomaly`: one side of a
/// twin, with `(trials, seed, threads)` as the run's.
pub fn count(
    src: &mut dyn TrialSource,
    anomaly: Anomaly,
    (file, text): (&str, &str),
    runtime: Stack,
    (trials, seed, threads): (u64, u64, usize),
) -> anyhow::Result<KN> {
    let sc = builtin(file, text)?;
    let r = run_from(src, &sc, runtime, trials, seed, threads)?;
    let p = r
        .aggregate
        .rate(anomaly)
        .ok_or_else(|| anyhow::anyhow!("the simulator does not report {anomaly}"))?;
    Ok(KN { k: p.k, n: p.n })
}

/// A row of a twins figure.
pub trait Twin {
    /// Its group: the anomaly at a size, the runtimes, the counts ([`group`]).
    fn group(&self) -> TwinGroup;
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
}
