//! The paper's experiments in simulation (issue 7, SPEC §7): the prevention twins, the three
//! workloads (the paper's Table 4) and the contention sweep.
//!
//! Each experiment is a library function over the simulator's public API
//! ([`crate::sim::run`]): it loads scenario files (the twins and workloads are compiled in
//! from `scenarios/`, so the binary needs no working directory), runs every trial with a
//! fixed seed on any number of threads, and returns plain data that the commands print and
//! `reproduce` turns into tables and figures. Every rate here is counted from detector
//! verdicts on simulated histories; nothing is typed in. A simulated rate estimates what the
//! modelled timing produces; it says nothing about a real deployment's timing.

pub mod guard_replica_steps;
pub mod paired;
pub mod steps;
pub mod sweep;
pub mod twins;
pub mod workloads;

use crate::sim::runtime_choice::RuntimeChoice;
use crate::sim::scenario::Scenario;
use crate::sim::{RunConfig, RunResult};
use std::path::Path;

/// Parses a compiled-in scenario; `file` names it in errors and replay lines.
pub fn builtin(file: &str, text: &str) -> anyhow::Result<Scenario> {
    Scenario::parse(Path::new(file), text).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Runs `sc` under `runtime` for `trials` trials from `seed` on `threads` threads.
pub fn run_under(
    sc: &Scenario,
    runtime: &str,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<RunResult> {
    let runtime = RuntimeChoice::parse(runtime).map_err(|e| anyhow::anyhow!(e))?;
    let cfg = RunConfig {
        runtime,
        seed,
        trials,
        threads,
        ..RunConfig::new(sc)
    };
    let r = crate::sim::run(&cfg).map_err(|e| anyhow::anyhow!("{}: {e}", sc.file.display()))?;
    anyhow::ensure!(
        r.aggregate.truncated == 0,
        "{} under {}: {} trials hit events_max; raise [schedule] events_max",
        sc.file.display(),
        runtime.name(),
        r.aggregate.truncated
    );
    Ok(r)
}

/// The number of threads to use by default: the machine's parallelism (results do not
/// depend on it).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Writes a table as `<out>/tables/<stem>.{md,csv,json}` (the files `reproduce` makes), each
/// atomically; returns the paths written.
pub fn write_tables(
    out: &Path,
    stem: &str,
    table: &crate::tables::Table,
) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for a in crate::reproduce::table_files(stem, table) {
        let path = out.join(&a.path);
        crate::output::write_atomic(&path, &a.bytes)?;
        written.push(path);
    }
    Ok(written)
}

/// The flags every experiment command shares: output format, threads and where tables go.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Print a JSON array on stdout.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (results do not depend on it); default: all cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Folder the table files go under (`tables/<stem>.{md,csv,json}`).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: std::path::PathBuf,
    /// Do not write the table files.
    #[arg(long)]
    pub no_write: bool,
}

impl RunArgs {
    /// The thread count to use (at least 1).
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(default_threads).max(1)
    }
}
