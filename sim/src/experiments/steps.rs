//! The experiments' steps of `agentsim reproduce`: twins, workloads and the contention sweep,
//! each a figure (via `crate::figures`) plus its tables. `--quick` runs fewer trials (its
//! files differ from the committed full run). Thread count never changes a byte.
//!
//! A passing `reproduce --check` proves these files are what the code generates; the
//! experiments' own tests pin what the numbers must be.

use super::{default_threads, sweep, twins, workloads};
use crate::figures;
use crate::reproduce::{figure_file, table_files, Artifact, Ctx};
use std::path::Path;

/// The run seed of every experiment step.
pub const SEED: u64 = 1;

/// The committed sweep file.
const SWEEP_FILE: &str = "scenarios/sweeps/contention.toml";
const SWEEP_TEXT: &str = include_str!("../../../scenarios/sweeps/contention.toml");

/// Twins: 1000 trials per side (100 with `--quick`).
pub fn twins_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick {
        100
    } else {
        twins::TRIALS_DEFAULT
    };
    let results = twins::run(trials, SEED, default_threads())?;
    let data = twins::figure_data(&results);
    let about = "twins: k/N runs exhibiting the anomaly without and with the mechanism";
    let mut files = vec![figure_file("twins", about, figures::twins::render(&data))];
    files.extend(table_files("twins", &data.table()));
    Ok(files)
}

/// Workloads: Table 4 and the L2 runs (1000 sessions per cell, 100 with `--quick`).
pub fn workloads_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick {
        100
    } else {
        workloads::TRIALS_DEFAULT
    };
    let threads = default_threads();
    let rows = workloads::run(trials, SEED, threads)?;
    ctx.progress("Table 4 done; L2 runs");
    let l2 = workloads::run_l2(trials, SEED, threads)?;
    let mut files = Vec::new();
    for data in workloads::figure_data(&rows) {
        let stem = format!("workload_{}", data.workload.replace('-', "_"));
        let about = format!("{}: A1 rate and token overhead per runtime", data.workload);
        files.push(figure_file(
            &stem,
            &about,
            figures::workloads::render(&data),
        ));
    }
    files.extend(table_files("workloads", &workloads::table(&rows)));
    files.extend(table_files("workloads_l2", &workloads::l2_table(&l2)));
    Ok(files)
}

/// The contention sweep of `scenarios/sweeps/contention.toml`.
pub fn sweep_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let path = Path::new(SWEEP_FILE);
    let f = sweep::parse(path, SWEEP_TEXT)?;
    let trials = if ctx.quick { f.quick_trials } else { f.trials };
    let results = sweep::run(&f, path, trials, default_threads())?;
    let data = sweep::figure_data(&f, &results);
    let stem = format!("sweep_{}", f.name);
    let about = "contention sweep: anomaly, abort/drop, token overhead, makespan per runtime";
    let mut files = vec![figure_file(&stem, about, figures::sweep::render(&data))];
    files.extend(table_files(&stem, &sweep::table(&f, &results)));
    Ok(files)
}
