//! Twins for each mechanism alone: every mechanism of the catalogue, with
//! only the mechanisms it needs ([`alone`]: `cascade` runs as `validate-preds+cascade`), over
//! the smallest twin scenario of each lattice anomaly (A1 2 agents, A2 width 2, A3 depth 2,
//! A6 width 2; the files of [`super::twin_specs`]), `vanilla` without and the mechanism with, on
//! the same trial seeds.
//!
//! Each row also states what the stack's mechanisms compose to
//! (`agentsim_checker::jobs::runtime_matrix::expected`): a mechanism should take its target to 0/N and
//! leave every other anomaly as `vanilla` has it — `cascade` without validation prevents A3
//! and still admits A1. The counts come from the engine and the detectors; a pass holds on
//! these seeds and timings, the exhaustive checker covers every schedule at small bounds.
//!
//! `agentsim twins --runtime S` runs [`run_stack`] for any stack S.

use super::run as common;
use super::twin_specs::{
    count, figure_data, group, step_artifacts, step_run, Twin, TwinSpec, KN, TWINS,
};
use crate::artifacts::figures::twins::COUNT_COLUMNS;
use crate::artifacts::figures::TwinGroup;
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{Artifact, Ctx, Step};
use agentsim_checker::jobs::runtime_matrix;
use agentsim_models::runtime::{Mechanism, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::shard::{Local, TrialSource};
use agentsim_sim::stats::Proportion;
use serde::Serialize;

/// The `mechanism_twins` step.
pub const STEP: Step = Step {
    name: "mechanism-twins",
    about: "twins for each mechanism alone over vanilla, on every lattice anomaly",
    run: step_files,
};

/// `m` with what it needs (transitively): the smallest valid stack containing it.
pub fn alone(m: Mechanism) -> Stack {
    let mut s = Stack::of(&[m]);
    loop {
        let grown = s
            .mechanisms()
            .flat_map(|x| x.spec().needs.iter().map(|&(n, _)| n))
            .fold(s, Stack::with);
        if grown == s {
            return s;
        }
        s = grown;
    }
}

/// The scenario of each lattice anomaly: its smallest twin, in lattice order.
pub fn scenarios() -> Vec<&'static TwinSpec> {
    Anomaly::LATTICE
        .iter()
        .map(|&a| {
            TWINS
                .iter()
                // A twin whose fix is the agents' client runs no runtime mechanism.
                .filter(|t| t.anomaly == a && t.client.is_none())
                .min_by_key(|t| t.size)
                .expect("every lattice anomaly has a twin")
        })
        .collect()
}

/// One stack on one anomaly's twin scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MechanismTwin {
    /// The stack's canonical name.
    pub runtime: String,
    pub anomaly: Anomaly,
    pub scenario: &'static str,
    /// Whether the stack's mechanisms compose to prevent `anomaly`.
    pub claimed_prevented: bool,
    /// Trials exhibiting the anomaly under `vanilla`.
    pub without: KN,
    /// Trials exhibiting the anomaly under the stack.
    pub with: KN,
    #[serde(skip)]
    pub size: u32,
    #[serde(skip)]
    pub unit: &'static str,
}

impl MechanismTwin {
    /// One line: `lock A1 agents 2: without 1000/1000 … with 0/1000 … (claimed: prevents)`.
    pub fn display(&self) -> String {
        let claim = if self.claimed_prevented {
            "prevents"
        } else {
            "admits"
        };
        format!(
            "{:<24} {} {} {:<2} without {:<34} with {:<34} (claimed: {claim})",
            self.runtime,
            self.anomaly,
            self.unit,
            self.size,
            self.without.shown(),
            self.with.shown()
        )
    }
}

/// Trials of `spec`'s scenario under `runtime` exhibiting its anomaly.
fn side(
    src: &mut dyn TrialSource,
    spec: &TwinSpec,
    runtime: Stack,
    run: (u64, u64, usize),
) -> anyhow::Result<KN> {
    count(src, spec.anomaly, (spec.file, spec.text), runtime, run)
}

/// The runtime every mechanism twin runs without the mechanism.
const BASELINE: Stack = Stack::VANILLA;

/// The `vanilla` counts of [`scenarios`], in order.
fn baseline(
    src: &mut dyn TrialSource,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<KN>> {
    scenarios()
        .into_iter()
        .map(|s| side(src, s, BASELINE, (trials, seed, threads)))
        .collect()
}

fn rows(
    src: &mut dyn TrialSource,
    rt: Stack,
    base: &[KN],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<MechanismTwin>> {
    let name = rt.name();
    scenarios()
        .into_iter()
        .zip(base)
        .map(|(spec, &without)| {
            Ok(MechanismTwin {
                runtime: name.clone(),
                anomaly: spec.anomaly,
                scenario: spec.file,
                claimed_prevented: runtime_matrix::expected(rt, false, spec.anomaly) == Some(false),
                without,
                with: side(src, spec, rt, (trials, seed, threads))?,
                size: spec.size,
                unit: spec.unit,
            })
        })
        .collect()
}

/// `rt` over `vanilla` on each lattice anomaly's twin scenario.
pub fn run_stack(
    rt: Stack,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<MechanismTwin>> {
    run_stacks_from(&mut Local, &[rt], trials, seed, threads)
}

/// Each of `rts` over `vanilla` (run once) on each lattice anomaly's twin scenario, in order,
/// with the trials taken from `src`.
pub fn run_stacks_from(
    src: &mut dyn TrialSource,
    rts: &[Stack],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<MechanismTwin>> {
    let base = baseline(src, trials, seed, threads)?;
    let mut out = Vec::new();
    for &rt in rts {
        out.extend(rows(src, rt, &base, trials, seed, threads)?);
    }
    Ok(out)
}

/// The trials [`run_stacks_from`] runs for `stacks` stacks at `trials` a run.
pub fn trials_total(stacks: usize, trials: u64) -> Option<u64> {
    (scenarios().len() as u64 * (stacks as u64 + 1)).checked_mul(trials)
}

/// Every mechanism alone ([`alone`]), in catalogue order, over `vanilla`.
pub fn run(trials: u64, seed: u64, threads: usize) -> anyhow::Result<Vec<MechanismTwin>> {
    run_all_from(&mut Local, trials, seed, threads)
}

/// [`run`] with the trials taken from `src`.
pub fn run_all_from(
    src: &mut dyn TrialSource,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<MechanismTwin>> {
    let rts = Mechanism::ALL
        .iter()
        .map(|&m| Stack::validate(alone(m)))
        .collect::<Result<Vec<_>, _>>()?;
    run_stacks_from(src, &rts, trials, seed, threads)
}

/// The table: one row per stack × anomaly, both sides with Wilson intervals, and the claim.
pub fn table(results: &[MechanismTwin]) -> Table {
    let mut t = Table::new(
        "Mechanism twins: each mechanism alone over vanilla, on each lattice anomaly's twin",
        &[
            &["runtime", "anomaly", "size", "claimed"][..],
            &COUNT_COLUMNS,
        ]
        .concat(),
    );
    for r in results {
        let mut row = vec![
            Cell::text(r.runtime.clone()),
            Cell::text(r.anomaly.to_string()),
            Cell::text(format!("{} {}", r.unit, r.size)),
            Cell::text(if r.claimed_prevented {
                "prevents"
            } else {
                "admits"
            }),
        ];
        row.extend(common::proportion_cells(&Proportion::new(
            r.without.k,
            r.without.n,
        )));
        row.extend(common::proportion_cells(&Proportion::new(
            r.with.k, r.with.n,
        )));
        t.push(row);
    }
    t
}

impl Twin for MechanismTwin {
    fn group(&self) -> TwinGroup {
        let names = (self.runtime.clone(), BASELINE.name());
        group(
            self.anomaly,
            (self.unit, self.size),
            names,
            (self.without, self.with),
        )
    }
}

/// Mechanism twins: 1000 trials per side (100 with `--quick`).
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let (trials, threads) = step_run(ctx);
    let results = ctx.trials(|src| run_all_from(src, trials, common::SEED, threads))?;
    let about = "Mechanism twins: k/N seeded runs exhibiting each lattice anomaly under vanilla \
                 and under each mechanism alone over vanilla; sizes with equal counts share a row. \
                 The 95% Wilson intervals are in tables/mechanism_twins.md.";
    let svg = crate::artifacts::figures::twins::render_as(
        &figure_data(&results),
        "Mechanism twins: runs with the anomaly",
        "mechanism_twins",
    );
    Ok(step_artifacts(
        "mechanism_twins",
        about,
        svg,
        &table(&results),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alone_adds_what_a_mechanism_needs() {
        for m in Mechanism::ALL {
            let s = alone(m);
            assert!(s.contains(m));
            assert_eq!(s.validate(), Ok(s), "{m}");
        }
        assert_eq!(
            alone(Mechanism::Cascade).to_string(),
            "validate-preds+cascade"
        );
        assert_eq!(alone(Mechanism::Lock).to_string(), "pessimistic");
        let files: Vec<_> = scenarios().iter().map(|s| s.file).collect();
        assert_eq!(
            files,
            [
                "scenarios/twins/a1.toml",
                "scenarios/twins/a2-width2.toml",
                "scenarios/twins/a3-depth2.toml",
                "scenarios/twins/a6-width2.toml"
            ]
        );
    }

    /// Every mechanism alone prevents exactly what it composes to on its twins (0/N), and
    /// leaves the others as vanilla has them (N/N). The one exception is the claim's own
    /// caveat: `si` (validate-writers) admits A1 only through a read-only commit, and in the
    /// A1 twin every op writes what it read, so there it prevents A1 too.
    #[test]
    fn each_mechanism_prevents_its_target_and_admits_the_rest() {
        let n = 50;
        let rows = run(n, common::SEED, 2).unwrap();
        assert_eq!(rows.len(), 8 * 4);
        for r in &rows {
            assert_eq!(r.without, KN { k: n, n }, "{}", r.display());
            let all_writers_caveat = r.runtime == "si" && r.anomaly == Anomaly::A1;
            let want = if r.claimed_prevented || all_writers_caveat {
                0
            } else {
                n
            };
            assert_eq!(r.with, KN { k: want, n }, "{}", r.display());
        }
        let cascade: Vec<_> = rows
            .iter()
            .filter(|r| r.runtime == "validate-preds+cascade")
            .map(|r| (r.anomaly, r.claimed_prevented))
            .collect();
        assert_eq!(
            cascade,
            [
                (Anomaly::A1, false),
                (Anomaly::A2, false),
                (Anomaly::A3, true),
                (Anomaly::A6, false)
            ]
        );
    }
}
