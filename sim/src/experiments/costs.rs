//! What a guarantee costs: the three workloads and the contention sweep
//! under each stack that realizes a lattice point, on the same trial seeds as `vanilla`.
//!
//! The stacks are not listed here: every run asks the checker's realizability search
//! ([`super::realize`], at the matrix bounds) for the smallest stack of each of the 16 points
//! and measures those. Per scenario and stack: the sessions exhibiting each lattice anomaly
//! (Wilson 95 %), tokens total and wasted, aborts, drops and makespan per session (means with
//! normal 95 % intervals), and token and makespan overhead against `vanilla` paired by seed
//! ([`super::paired`]). The workloads run as their files are — plan-execute's supervisor
//! retracts the plan in 15.5 % of sessions, so A3 and the cascade's price show (the Table-4
//! runs switch it off); the sweep runs the grid of `scenarios/sweeps/contention.toml`.
//!
//! The figure ([`pareto`]) puts each stack's guarantee against its overheads averaged over the
//! three workloads, the Pareto front marked ([`super::front`] computes both).
//!
//! What a pass does not show: the workloads exercise A1 and A3 only (no tools, one effect per
//! write), so the price of `pin`, `validate-tool` and `sequencer` here is their price where
//! their anomaly cannot happen; and every number is what the files' modelled timings produce,
//! not a deployment's costs.

use super::front::{self, Measured};
use super::paired::{mean_interval, overhead};
use super::realize;
use super::run::{self as common, builtin, run_under};
use super::sweep;
use super::workloads::WORKLOADS;
use crate::artifacts::figures::{pareto, Estimate, ParetoData};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_models::lattice::Point;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use agentsim_sim::metrics::TrialMetrics;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::stats::Proportion;
use agentsim_sim::RunResult;
use std::path::Path;

/// The `costs` step.
pub const STEP: Step = Step {
    name: "costs",
    about: "the workloads and the contention sweep under each stack realizing a lattice point",
    run: step_files,
};

/// Sessions per workload and stack in `reproduce`.
pub const TRIALS_DEFAULT: u64 = 1000;
/// Sessions per workload and stack with `--quick`.
pub const TRIALS_QUICK: u64 = 100;

/// One scenario under one stack: what it excluded in the checker and what it cost here.
#[derive(Clone, Debug, PartialEq)]
pub struct CostRow {
    /// The point the stack realizes (the anomalies the checker shows it prevents).
    pub excludes: Point,
    pub stack: Stack,
    pub trials: u64,
    /// Sessions exhibiting each lattice anomaly, in [`Anomaly::LATTICE`] order.
    pub rates: [Proportion; 4],
    /// Per session: tokens total and wasted (spent on aborted work), aborts, drops, makespan.
    pub tokens: Estimate,
    pub wasted: Estimate,
    pub aborts: Estimate,
    pub drops: Estimate,
    pub makespan_ms: Estimate,
    /// (tokens − vanilla's) / vanilla's, paired by seed.
    pub token_overhead: Estimate,
    /// (makespan − vanilla's) / vanilla's, paired by seed.
    pub makespan_overhead: Estimate,
}

fn per_trial(r: &RunResult, f: fn(&TrialMetrics) -> u64) -> Vec<u64> {
    r.trials.iter().map(|t| f(&t.metrics)).collect()
}

fn mean_of(xs: &[u64]) -> Estimate {
    let v: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    mean_interval(&v)
}

/// The row of `stack`'s run `r`, against the `vanilla` run `base` on the same seeds.
fn measure(excludes: Point, stack: Stack, r: &RunResult, base: &RunResult) -> CostRow {
    let rates = Anomaly::LATTICE.map(|a| {
        *r.aggregate
            .rate(a)
            .expect("the simulator reports every lattice anomaly")
    });
    let tokens = per_trial(r, |m| m.tokens_total);
    let ms = per_trial(r, |m| m.makespan_ms);
    CostRow {
        excludes,
        stack,
        trials: r.aggregate.trials,
        rates,
        tokens: mean_of(&tokens),
        wasted: mean_of(&per_trial(r, |m| m.tokens_wasted)),
        aborts: mean_of(&per_trial(r, |m| m.aborts)),
        drops: mean_of(&per_trial(r, |m| m.drops)),
        makespan_ms: mean_of(&ms),
        token_overhead: overhead(&per_trial(base, |m| m.tokens_total), &tokens),
        makespan_overhead: overhead(&per_trial(base, |m| m.makespan_ms), &ms),
    }
}

/// `sc` under `vanilla` (the baseline) and under each stack, on the same seeds; one row per
/// stack, in the order of `stacks`.
///
/// Every run records provenance, whatever the stack: A3 (a live record with an aborted pred)
/// is then observable under `vanilla` too, as in the checker's A3 scenario, and recording it
/// decides nothing (no stack reads it unless it needs it).
pub fn under_each(
    sc: &Scenario,
    stacks: &[(Point, Stack)],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<CostRow>> {
    let sc = &Scenario {
        provenance: true,
        ..sc.clone()
    };
    let base = run_under(sc, Stack::validate(Stack::VANILLA)?, trials, seed, threads)?;
    let mut out = Vec::with_capacity(stacks.len());
    for &(p, s) in stacks {
        let row = if s == Stack::VANILLA {
            measure(p, s, &base, &base)
        } else {
            let r = run_under(sc, Stack::validate(s)?, trials, seed, threads)?;
            measure(p, s, &r, &base)
        };
        out.push(row);
    }
    Ok(out)
}

/// Every workload (as its file is) under each stack: `(workload, row)`, workloads outermost.
pub fn workloads(
    stacks: &[(Point, Stack)],
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<(&'static str, CostRow)>> {
    let mut out = Vec::new();
    for w in &WORKLOADS {
        let sc = builtin(w.file, w.text)?;
        for row in under_each(&sc, stacks, trials, seed, threads)? {
            out.push((w.name, row));
        }
    }
    Ok(out)
}

/// Every grid point of the sweep file `f` under each stack: `(point, row)`, points outermost;
/// the file's seed, `trials` per point.
pub fn sweep_grid(
    f: &sweep::SweepFile,
    file: &Path,
    stacks: &[(Point, Stack)],
    trials: u64,
    threads: usize,
) -> anyhow::Result<Vec<(sweep::Point, CostRow)>> {
    let mut out = Vec::new();
    for p in sweep::points(f) {
        let sc = sweep::scenario(f, file, &p)?;
        for row in under_each(&sc, stacks, trials, f.seed, threads)? {
            out.push((p, row));
        }
    }
    Ok(out)
}

/// The stack the checker's search found for each realized point, in lattice order.
pub fn realizing_stacks(threads: usize) -> anyhow::Result<Vec<(Point, Stack)>> {
    let r = realize::search(None, threads)?;
    Ok(realize::stacks(&r)
        .into_iter()
        .filter_map(|(p, s)| s.map(|s| (p, s)))
        .collect())
}

/// The columns every cost table shares, after its own key columns.
fn cost_columns() -> Vec<String> {
    let mut cols = vec![
        "excludes".to_owned(),
        "stack".to_owned(),
        "trials".to_owned(),
    ];
    for a in Anomaly::LATTICE {
        for s in ["k", "rate", "lo95", "hi95"] {
            cols.push(format!("{}_{s}", a.name().to_lowercase()));
        }
    }
    for m in [
        "tokens",
        "wasted_tokens",
        "aborts",
        "drops",
        "makespan_ms",
        "token_overhead",
        "makespan_overhead",
    ] {
        for s in ["mean", "lo95", "hi95"] {
            cols.push(format!("{m}_{s}"));
        }
    }
    cols
}

fn cost_cells(r: &CostRow) -> Vec<Cell> {
    let mut cells = vec![
        Cell::text(r.excludes.label()),
        Cell::text(r.stack.to_string()),
        Cell::Int(r.trials as i64),
    ];
    for p in &r.rates {
        cells.extend([
            Cell::Int(p.k as i64),
            Cell::float(p.rate, 4),
            Cell::float(p.lo, 4),
            Cell::float(p.hi, 4),
        ]);
    }
    for (e, d) in [
        (r.tokens, 1),
        (r.wasted, 1),
        (r.aborts, 3),
        (r.drops, 3),
        (r.makespan_ms, 1),
        (r.token_overhead, 4),
        (r.makespan_overhead, 4),
    ] {
        cells.extend([e.mean, e.lo, e.hi].map(|x| Cell::float(x, d)));
    }
    cells
}

fn cost_table(title: &str, keys: &[&str], rows: Vec<(Vec<Cell>, &CostRow)>) -> Table {
    let cols: Vec<String> = keys
        .iter()
        .map(|k| (*k).to_owned())
        .chain(cost_columns())
        .collect();
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(title, &cols);
    for (mut key, row) in rows {
        key.extend(cost_cells(row));
        t.push(key);
    }
    t
}

/// The workloads under each stack: one row per workload × stack.
pub fn workload_table(rows: &[(&'static str, CostRow)]) -> Table {
    cost_table(
        "What a guarantee costs: the three workloads under each realizing stack (anomaly \
         rates, tokens, aborts, drops, makespan; overhead vs vanilla paired by seed)",
        &["workload"],
        rows.iter()
            .map(|(w, r)| (vec![Cell::text(*w)], r))
            .collect(),
    )
}

/// The sweep under each stack: one row per grid point × stack.
pub fn sweep_table(f: &sweep::SweepFile, rows: &[(sweep::Point, CostRow)]) -> Table {
    let title = format!(
        "What a guarantee costs: the contention sweep `{}` under each realizing stack",
        f.name
    );
    let keys = ["agents", "cells", "overlap", "generation_ms"];
    let rows = rows
        .iter()
        .map(|(p, r)| {
            let key = vec![
                Cell::Int(i64::from(p.agents)),
                Cell::Int(i64::from(p.cells)),
                Cell::float(p.overlap, 3),
                Cell::Int(p.generation_ms as i64),
            ];
            (key, r)
        })
        .collect();
    cost_table(&title, &keys, rows)
}

/// The figure's data from the workload rows: each stack's costs in the rows' workload order.
pub fn figure_data(rows: &[(&'static str, CostRow)], stacks: &[(Point, Stack)]) -> ParetoData {
    let mut over: Vec<String> = Vec::new();
    for (w, _) in rows {
        if !over.iter().any(|o| o == w) {
            over.push((*w).to_owned());
        }
    }
    let measured: Vec<Measured> = stacks
        .iter()
        .map(|&(excludes, stack)| {
            let of = |f: fn(&CostRow) -> Estimate| -> Vec<Estimate> {
                rows.iter()
                    .filter(|(_, r)| r.stack == stack)
                    .map(|(_, r)| f(r))
                    .collect()
            };
            Measured {
                excludes,
                stack,
                token_overhead: of(|r| r.token_overhead),
                makespan_overhead: of(|r| r.makespan_overhead),
                drops: of(|r| r.drops),
            }
        })
        .collect();
    front::figure_data(over, &measured)
}

/// The realize search, the workloads (1000 sessions per stack, 100 with `--quick`) and the
/// sweep at its file's trials.
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let threads = common::default_threads();
    let stacks = realizing_stacks(threads)?;
    let trials = if ctx.quick {
        TRIALS_QUICK
    } else {
        TRIALS_DEFAULT
    };
    let rows = workloads(&stacks, trials, common::SEED, threads)?;
    ctx.progress("workloads done; the contention sweep");
    let path = Path::new(sweep::SWEEP_FILE);
    let f = sweep::parse(path, sweep::SWEEP_TEXT)?;
    let sweep_trials = if ctx.quick { f.quick_trials } else { f.trials };
    let swept = sweep_grid(&f, path, &stacks, sweep_trials, threads)?;
    let data = figure_data(&rows, &stacks);
    let about = "What a guarantee costs: each realizing stack's anomalies excluded against its \
                 token and makespan overhead over vanilla (mean over the three workloads, paired by \
                 seed), the Pareto front in bold; rows are numbered, strongest first, and the key under the \
                 panels names each row's stack.";
    let mut files = vec![figure_file("costs_pareto", about, pareto::render(&data))];
    files.extend(table_files("costs_pareto", &data.table()));
    files.extend(table_files("costs_workloads", &workload_table(&rows)));
    files.extend(table_files("costs_sweep", &sweep_table(&f, &swept)));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structure the committed numbers must have, at a few sessions: 16 stacks; under
    /// each, the anomalies it excludes never occur in any workload (the checker's verdict
    /// holds in the simulator); the vanilla rows have zero overhead exactly; stacks that add
    /// only mechanisms for anomalies these workloads cannot exhibit cost what their base does.
    #[test]
    fn excluded_anomalies_never_occur_and_vanilla_costs_nothing() {
        let stacks = realizing_stacks(2).unwrap();
        assert_eq!(stacks.len(), 16);
        assert_eq!(stacks[0], (Point(0), Stack::VANILLA));
        let rows = workloads(&stacks, 30, common::SEED, 2).unwrap();
        assert_eq!(rows.len(), 3 * 16);
        for (w, r) in &rows {
            for (a, p) in Anomaly::LATTICE.into_iter().zip(&r.rates) {
                if r.excludes.contains(a) {
                    assert_eq!(p.k, 0, "{w} under {}: {a}", r.stack);
                }
            }
            if r.stack == Stack::VANILLA {
                let zero = |e: Estimate| (e.mean, e.lo, e.hi) == (0.0, 0.0, 0.0);
                assert!(zero(r.token_overhead), "{w}: {:?}", r.token_overhead);
                assert!(zero(r.makespan_overhead), "{w}: {:?}", r.makespan_overhead);
            }
        }
        // Not vacuous: vanilla exhibits A1 (edit-review, triage) and A3 (plan-execute's
        // retractions, seen through the provenance every run records).
        for a in [Anomaly::A1, Anomaly::A3] {
            let i = Anomaly::LATTICE.iter().position(|&x| x == a).unwrap();
            let seen = rows
                .iter()
                .any(|(_, r)| r.stack == Stack::VANILLA && r.rates[i].k > 0);
            assert!(seen, "vanilla never exhibits {a}");
        }
        // No workload exhibits A2 or A6 under vanilla: none has tools or two effects a write.
        let unexercised = [Anomaly::A2, Anomaly::A6];
        for (w, r) in rows.iter().filter(|(_, r)| r.stack == Stack::VANILLA) {
            for a in unexercised {
                let k = r.rates[Anomaly::LATTICE.iter().position(|&x| x == a).unwrap()].k;
                assert_eq!(k, 0, "{w}: {a}");
            }
        }
        // So their mechanisms change nothing: a stack costs what it costs without them.
        let mut compared = 0;
        for (w, r) in &rows {
            let base = r
                .stack
                .mechanisms()
                .filter(|m| !unexercised.contains(&m.spec().targets))
                .fold(Stack::VANILLA, Stack::with);
            let twin = rows.iter().find(|(v, b)| v == w && b.stack == base);
            let Some((_, b)) = twin.filter(|_| base != r.stack) else {
                continue;
            };
            assert_eq!(
                (r.tokens, r.makespan_ms, r.rates),
                (b.tokens, b.makespan_ms, b.rates),
                "{w}: {} against {base}",
                r.stack
            );
            compared += 1;
        }
        assert!(compared >= 3 * 8, "{compared}");
        let data = figure_data(&rows, &stacks);
        assert_eq!(data.points.len(), 16);
        assert!(data.points.iter().any(|p| p.front));
    }

    #[test]
    fn same_bytes_whatever_the_thread_count() {
        let stacks = realizing_stacks(2).unwrap();
        let some: Vec<(Point, Stack)> = stacks.iter().copied().step_by(5).collect();
        let bytes = |threads| {
            let rows = workloads(&some, 12, common::SEED, threads).unwrap();
            workload_table(&rows).to_csv()
        };
        assert_eq!(bytes(1), bytes(3));
    }
}
