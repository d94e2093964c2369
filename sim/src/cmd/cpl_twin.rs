//! `agentsim cpl twin SCENARIO [--trials N] [--seed S] [--threads T] [--json]`: the guard twin
//! of a scenario with `[cpl]` (see `crate::experiments::cpl_guards`); exit 0
//! when the run completed, whatever the counts.
//!
//! With `--shard I/N --partial-out FILE` it runs its share of both arms' trials and writes
//! their per-trial counters for `agentsim merge` (see `cmd::sharding`); the scenario digest
//! covers the scenario file and its guard file. A run proves the counts on these seeds only.

use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::experiments::cpl_guards::{self, Twin};
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::shard::TrialSource;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `agentsim cpl twin`.
#[derive(Debug, ClapArgs)]
pub struct TwinArgs {
    /// A scenario file with a `[cpl]` section naming `unguarded` and `stale`.
    pub scenario: PathBuf,
    /// Trials per arm, 1..=1000000 (default: the scenario's `trials`).
    #[arg(long, value_parser = crate::limits::trials)]
    pub trials: Option<u64>,
    /// The run seed (default: the scenario's `seed`); both arms use the same trial seeds.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Worker threads, 1..=256 (results do not depend on it); default: all cores.
    #[arg(long, value_parser = crate::limits::threads)]
    pub threads: Option<usize>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// Runs `cpl twin`.
pub fn run(args: TwinArgs) -> anyhow::Result<ExitCode> {
    let sc = Scenario::load(&args.scenario)?;
    let job = Job {
        trials: args.trials.unwrap_or(sc.trials),
        seed: args.seed.unwrap_or(sc.seed),
        scenario: args.scenario,
    };
    let run = RunArgs::printing(args.json, args.threads);
    sharding::run(&job, &args.shard, &run)
}

/// The twin's work: the scenario file, trials per arm and the seed (defaults applied), as a
/// partial of `cpl twin` carries them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub scenario: PathBuf,
    pub trials: u64,
    pub seed: u64,
}

/// The bytes of `file`, named in the error.
fn read(file: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(file).with_context(|| format!("{}: reading it", file.display()))
}

impl Seeded for Job {
    const COMMAND: &'static str = "cpl twin";
    type Output = Twin;

    fn inputs(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        let mut files = vec![("the scenario", self.scenario.clone())];
        files.extend(crate::artifacts::paths::scenario_inputs(&self.scenario));
        files
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn trials_total(&self) -> Option<u64> {
        self.trials.checked_mul(2)
    }

    /// The scenario file's bytes and, when its guards live in a file, that file's.
    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let mut h = Fnv1a::new();
        h.bytes(&read(&self.scenario)?);
        let sc = Scenario::load(&self.scenario)?;
        if let Some(spec) = sc.cpl.as_ref().filter(|s| s.source != "(inline)") {
            let base = self.scenario.parent().unwrap_or(Path::new("."));
            h.field(&spec.source)
                .bytes(&read(&base.join(&spec.source))?);
        }
        Ok(h.finish())
    }

    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> anyhow::Result<Twin> {
        let sc = Scenario::load(&self.scenario)?;
        cpl_guards::run_from(src, &sc, self.trials, self.seed, threads)
    }

    fn print(&self, twin: &Twin, run: &RunArgs) -> anyhow::Result<ExitCode> {
        if run.out.is_some() {
            bail!("cpl twin writes no table files: drop --out");
        }
        if run.json {
            println!("{}", serde_json::to_string_pretty(twin)?);
        } else {
            print!("{}", twin.display());
        }
        Ok(ExitCode::SUCCESS)
    }
}
