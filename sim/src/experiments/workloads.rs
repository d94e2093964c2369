//! The three workloads of SPEC §7 (the paper's Table 4) under `vanilla`, `pessimistic`, `si`
//! and `ssi`: A1 rate, aborts and drops, tokens, token overhead against `vanilla` paired by
//! seed, and makespan; plus the L2 runs, where a supervisor retracts the plan in 0 %, 15.5 %
//! or 44.5 % of sessions and `causal` is compared with `causal-no-cascade` on A3.
//!
//! The scenario files (compiled in from `scenarios/workloads/`) say how each latency and token
//! parameter was chosen; every rate here is counted from detector verdicts. The Table-4 runs
//! switch the supervisor off (retraction is the L2 experiment's variable). A pass shows what
//! the modelled timings produce; where they miss the paper's figure, docs/experiments.md says so.

use super::paired::{mean_interval, overhead};
use super::run as common;
use super::run::{builtin, run_from};
use crate::artifacts::figures::{Count, Estimate, WorkloadData, WorkloadRow};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{self, figure_file, table_files, Artifact, Ctx};
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::scenario::{Scenario, Step};
use agentsim_sim::shard::{Local, TrialSource};
use agentsim_sim::stats::Proportion;
use agentsim_sim::RunResult;
use serde::Serialize;
use std::sync::Arc;

/// The `workloads` step.
pub const STEP: artifacts::Step = artifacts::Step {
    name: "workloads",
    about: "the three workloads under vanilla/pessimistic/si/ssi and L2 (SPEC §7)",
    run: step_files,
};

/// Trials per workload and runtime when the command line does not say.
pub const TRIALS_DEFAULT: u64 = 1000;
/// The runtimes of Table 4, baseline first.
pub const RUNTIMES: [RuntimeKind; 4] = [
    RuntimeKind::Vanilla,
    RuntimeKind::Pessimistic,
    RuntimeKind::Si,
    RuntimeKind::Ssi,
];
/// The supervisors' retraction rates the paper observed across models.
pub const RETRACTION_RATES: [f64; 3] = [0.0, 0.155, 0.445];
/// The L2 twin: with and without the cascading abort.
pub const L2_RUNTIMES: [RuntimeKind; 2] = [
    RuntimeKind::Causal { cascade: true },
    RuntimeKind::Causal { cascade: false },
];

/// A workload: its name and compiled-in scenario.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadSpec {
    pub name: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

macro_rules! workload {
    ($name:expr) => {
        WorkloadSpec {
            name: $name,
            file: concat!("scenarios/workloads/", $name, ".toml"),
            text: include_str!(concat!("../../../scenarios/workloads/", $name, ".toml")),
        }
    };
}

/// The workloads, in report order.
pub const WORKLOADS: [WorkloadSpec; 3] = [
    workload!("edit-review"),
    workload!("plan-execute"),
    workload!("triage"),
];

/// One workload under one runtime. Serializes to the issue's `--json` shape; the intervals
/// and counts behind it are kept for the tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadResult {
    pub workload: &'static str,
    /// The canonical name of the runtime's stack.
    pub runtime: String,
    pub trials: u64,
    /// Fraction of sessions exhibiting A1.
    pub a1_rate: f64,
    /// Mean aborted operations per session.
    pub aborts: f64,
    /// Mean dropped operations per session.
    pub drops: f64,
    pub tokens_mean: f64,
    /// (tokens − vanilla tokens) / vanilla tokens, paired by seed.
    pub token_overhead: f64,
    pub makespan_ms_mean: f64,
    #[serde(skip)]
    pub a1: Proportion,
    #[serde(skip)]
    pub overhead: Estimate,
    #[serde(skip)]
    pub makespan: Estimate,
}

/// The scenario with every supervisor `retract` step set to probability `p`.
pub fn with_retraction(sc: &Scenario, p: f64) -> Scenario {
    let mut sc = sc.clone();
    for a in &mut sc.agents {
        let mut script = (*a.script).clone();
        for step in &mut script.steps {
            if let Step::Retract { prob, .. } = step {
                *prob = p;
            }
        }
        a.script = Arc::new(script);
    }
    sc
}

fn tokens(r: &RunResult) -> Vec<u64> {
    r.trials.iter().map(|t| t.metrics.tokens_total).collect()
}

fn result(w: &WorkloadSpec, runtime: String, r: &RunResult, base: &[u64]) -> WorkloadResult {
    let a = &r.aggregate;
    let a1 = *a.rate(Anomaly::A1).expect("A1 is reported");
    let o = overhead(base, &tokens(r));
    let ms: Vec<f64> = r
        .trials
        .iter()
        .map(|t| t.metrics.makespan_ms as f64)
        .collect();
    WorkloadResult {
        workload: w.name,
        runtime,
        trials: a.trials,
        a1_rate: a1.rate,
        aborts: a.aborts.mean,
        drops: a.drops.mean,
        tokens_mean: a.tokens_total.mean,
        token_overhead: o.mean,
        makespan_ms_mean: a.makespan_ms.mean,
        a1,
        overhead: o,
        makespan: mean_interval(&ms),
    }
}

/// Table 4: every workload under every runtime of [`RUNTIMES`], supervisor off.
pub fn run(trials: u64, seed: u64, threads: usize) -> anyhow::Result<Vec<WorkloadResult>> {
    run_from_source(&mut Local, trials, seed, threads)
}

/// [`run`] with the trials taken from `src`.
pub fn run_from_source(
    src: &mut dyn TrialSource,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<WorkloadResult>> {
    let runtimes: Vec<Stack> = RUNTIMES[1..].iter().map(|&k| k.into()).collect();
    run_with(src, &runtimes, trials, seed, threads)
}

/// Every workload under `vanilla` (the token baseline, first) and then each of `runtimes`
/// (named runtimes or stacks; `vanilla` among them is not run twice), supervisor off, with
/// the trials taken from `src`.
pub fn run_with(
    src: &mut dyn TrialSource,
    runtimes: &[Stack],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<WorkloadResult>> {
    let mut out = Vec::new();
    for w in &WORKLOADS {
        let sc = with_retraction(&builtin(w.file, w.text)?, 0.0);
        let base = run_from(src, &sc, Stack::VANILLA, trials, seed, threads)?;
        let base_tokens = tokens(&base);
        out.push(result(
            w,
            RUNTIMES[0].name().to_owned(),
            &base,
            &base_tokens,
        ));
        for rt in runtimes.iter().filter(|&&r| r != Stack::VANILLA) {
            let r = run_from(src, &sc, *rt, trials, seed, threads)?;
            out.push(result(w, rt.name(), &r, &base_tokens));
        }
    }
    Ok(out)
}

/// One L2 run: plan-execute at one retraction rate under one runtime.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct L2Result {
    pub workload: &'static str,
    pub retraction_rate: f64,
    pub runtime: &'static str,
    /// Sessions in which the supervisor retracted a live plan.
    pub retracted: Proportion,
    /// Sessions exhibiting A3 (a live record with an aborted pred).
    pub a3: Proportion,
}

/// The L2 runs: plan-execute at each of [`RETRACTION_RATES`] under [`L2_RUNTIMES`].
pub fn run_l2(trials: u64, seed: u64, threads: usize) -> anyhow::Result<Vec<L2Result>> {
    run_l2_from_source(&mut Local, trials, seed, threads)
}

/// [`run_l2`] with the trials taken from `src`.
pub fn run_l2_from_source(
    src: &mut dyn TrialSource,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<L2Result>> {
    let w = &WORKLOADS[1];
    let sc = builtin(w.file, w.text)?;
    let mut out = Vec::new();
    for &rate in &RETRACTION_RATES {
        let sc = with_retraction(&sc, rate);
        for &rt in &L2_RUNTIMES {
            let r = run_from(src, &sc, rt.into(), trials, seed, threads)?;
            let n = r.aggregate.trials;
            let k = r
                .trials
                .iter()
                .filter(|t| t.metrics.retractions > 0)
                .count() as u64;
            out.push(L2Result {
                workload: w.name,
                retraction_rate: rate,
                runtime: rt.name(),
                retracted: Proportion::new(k, n),
                a3: *r.aggregate.rate(Anomaly::A3).expect("A3 is reported"),
            });
        }
    }
    Ok(out)
}

/// Table 4 as a table: one row per workload × runtime, rates with Wilson intervals.
pub fn table(results: &[WorkloadResult]) -> Table {
    let mut t = Table::new(
        "Workloads (the paper's Table 4 in simulation): A1, aborts, drops, tokens, makespan",
        &[
            "workload",
            "runtime",
            "trials",
            "a1_k",
            "a1_rate",
            "a1_lo95",
            "a1_hi95",
            "aborts_mean",
            "drops_mean",
            "tokens_mean",
            "token_overhead",
            "token_overhead_lo95",
            "token_overhead_hi95",
            "makespan_ms_mean",
            "makespan_ms_lo95",
            "makespan_ms_hi95",
        ],
    );
    for r in results {
        let f = |x: f64, d| Cell::float(x, d);
        t.push(vec![
            Cell::text(r.workload),
            Cell::text(r.runtime.clone()),
            Cell::Int(r.trials as i64),
            Cell::Int(r.a1.k as i64),
            f(r.a1.rate, 4),
            f(r.a1.lo, 4),
            f(r.a1.hi, 4),
            f(r.aborts, 3),
            f(r.drops, 3),
            f(r.tokens_mean, 1),
            f(r.overhead.mean, 4),
            f(r.overhead.lo, 4),
            f(r.overhead.hi, 4),
            f(r.makespan.mean, 1),
            f(r.makespan.lo, 1),
            f(r.makespan.hi, 1),
        ]);
    }
    t
}

/// The L2 runs as a table.
pub fn l2_table(results: &[L2Result]) -> Table {
    let mut t = Table::new(
        "L2 on plan-execute: supervisor retraction rate vs A3 with and without cascading abort",
        &[
            "workload",
            "retraction_rate",
            "runtime",
            "retracted_k",
            "retracted_n",
            "a3_k",
            "a3_n",
            "a3_rate",
            "a3_lo95",
            "a3_hi95",
        ],
    );
    for r in results {
        t.push(vec![
            Cell::text(r.workload),
            Cell::float(r.retraction_rate, 3),
            Cell::text(r.runtime),
            Cell::Int(r.retracted.k as i64),
            Cell::Int(r.retracted.n as i64),
            Cell::Int(r.a3.k as i64),
            Cell::Int(r.a3.n as i64),
            Cell::float(r.a3.rate, 4),
            Cell::float(r.a3.lo, 4),
            Cell::float(r.a3.hi, 4),
        ]);
    }
    t
}

/// One figure's data per workload, rows in [`RUNTIMES`] order.
pub fn figure_data(results: &[WorkloadResult]) -> Vec<WorkloadData> {
    WORKLOADS
        .iter()
        .map(|w| WorkloadData {
            workload: w.name.to_string(),
            overhead_interval: super::paired::OVERHEAD_INTERVAL.to_owned(),
            rows: results
                .iter()
                .filter(|r| r.workload == w.name)
                .map(|r| WorkloadRow {
                    runtime: r.runtime.to_string(),
                    a1: Count {
                        k: r.a1.k,
                        n: r.a1.n,
                    },
                    token_overhead: r.overhead,
                })
                .collect(),
        })
        .collect()
}

/// Workloads: Table 4 and the L2 runs (1000 sessions per cell, 100 with `--quick`).
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick { 100 } else { TRIALS_DEFAULT };
    let threads = common::default_threads();
    let rows = ctx.trials(|src| run_from_source(src, trials, common::SEED, threads))?;
    ctx.progress("Table 4 done; L2 runs");
    let l2 = ctx.trials(|src| run_l2_from_source(src, trials, common::SEED, threads))?;
    let mut files = Vec::new();
    for data in figure_data(&rows) {
        let stem = format!("workload_{}", data.workload.replace('-', "_"));
        let about = format!(
            "Workload {}: per runtime, the fraction of runs exhibiting A1 (stale generation) \
             with its 95% Wilson interval, and the token overhead over vanilla with its interval.",
            data.workload
        );
        files.push(figure_file(
            &stem,
            &about,
            crate::artifacts::figures::workloads::render(&data),
        ));
    }
    files.extend(table_files("workloads", &table(&rows)));
    files.extend(table_files("workloads_l2", &l2_table(&l2)));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_load_and_retraction_is_overridable() {
        for w in &WORKLOADS {
            let sc = builtin(w.file, w.text).expect(w.file);
            let off = with_retraction(&sc, 0.0);
            for a in &off.agents {
                for s in &a.script.steps {
                    if let Step::Retract { prob, .. } = s {
                        assert_eq!(*prob, 0.0);
                    }
                }
            }
        }
    }
}
