//! `agentsim split-view SCENARIO.toml`: the A4 twin in seeded simulation (see
//! `crate::experiments::split_view` for what a trial does).
//!
//! Exit 0 when the run completes and `primary-pinned` never split; 1 if it did (the prevention
//! property is violated); 2 on bad input. `--trial T` prints trial T's history (JSON Lines, with
//! `read_replica`/`read_version`) under `--read-discipline`, to replay it or feed it to
//! `agentsim detect`. With `--shard I/N --partial-out FILE` it runs its share of every
//! discipline's trials and writes their facts for `agentsim merge` (see `cmd::sharding`).
//! A pass says nothing about workloads other than this one.

use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::experiments::split_view::Scenario;
use crate::experiments::split_view::{history, run_trial, table, to_json, twin_from, Row};
use agentsim_jsonl::write_history;
use agentsim_models::replica::ReadDiscipline;
use agentsim_sim::shard::TrialSource;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the split-view (A4) twin on a replicated-store scenario.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario (see `scenarios/split-view.toml`).
    pub scenario: PathBuf,
    /// Override the scenario's number of trials (1..=1000000).
    #[arg(long, value_parser = crate::limits::trials)]
    pub trials: Option<u64>,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print this trial's history as JSON Lines (under `--read-discipline`) instead of the twin.
    #[arg(long)]
    pub trial: Option<u64>,
    /// The read discipline for `--trial`: any-replica (any), session, primary-pinned (pinned).
    #[arg(long, visible_alias = "discipline", default_value = "any-replica")]
    pub read_discipline: ReadDiscipline,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let s = Scenario::load(&args.scenario)?;
    let s = s
        .with(args.trials, args.seed)
        .map_err(|e| anyhow::anyhow!("--{e}"))?;
    if let Some(t) = args.trial {
        args.shard.refuse_with("--trial")?;
        if t >= s.trials {
            bail!("--trial {t}: the scenario has trials 0..{}", s.trials);
        }
        let rt = run_trial(&s, args.read_discipline, t);
        print!("{}", write_history(&history(&s, &rt)));
        return Ok(ExitCode::SUCCESS);
    }
    let job = Job {
        scenario: args.scenario,
        trials: s.trials,
        seed: s.seed,
    };
    let run = RunArgs::printing(args.json, Some(1));
    sharding::run(&job, &args.shard, &run)
}

/// The twin's work: the scenario file and the trial count and seed it runs with (overrides
/// applied), as a partial of `split-view` carries them.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub scenario: PathBuf,
    pub trials: u64,
    pub seed: u64,
}

impl Seeded for Job {
    const COMMAND: &'static str = "split-view";
    type Output = (Scenario, Vec<Row>);

    fn inputs(&self) -> Vec<(&'static str, std::path::PathBuf)> {
        let mut files = vec![("the scenario", self.scenario.clone())];
        files.extend(crate::artifacts::paths::scenario_inputs(&self.scenario));
        files
    }

    fn seed(&self) -> u64 {
        self.seed
    }

    fn trials_total(&self) -> Option<u64> {
        (ReadDiscipline::ALL.len() as u64).checked_mul(self.trials)
    }

    fn scenario_digest(&self) -> anyhow::Result<u64> {
        let bytes = std::fs::read(&self.scenario)
            .with_context(|| format!("{}: reading the scenario", self.scenario.display()))?;
        Ok(agentsim_sim::digest::fnv1a64(&bytes))
    }

    fn compute(&self, src: &mut dyn TrialSource, _: usize) -> anyhow::Result<Self::Output> {
        let s = Scenario::load(&self.scenario)?
            .with(Some(self.trials), Some(self.seed))
            .map_err(|e| anyhow::anyhow!("{}: {e}", self.scenario.display()))?;
        let rows = twin_from(src, &s)?;
        Ok((s, rows))
    }

    fn print(&self, (s, rows): &Self::Output, run: &RunArgs) -> anyhow::Result<ExitCode> {
        if run.out.is_some() {
            bail!("split-view writes no table files: drop --out");
        }
        if run.json {
            println!("{}", serde_json::to_string_pretty(&to_json(s, rows))?);
        } else {
            print!("{}", table(s, rows));
        }
        let pinned = rows
            .iter()
            .find(|r| r.discipline == ReadDiscipline::PrimaryPinned);
        Ok(match pinned {
            Some(r) if r.split.k > 0 => ExitCode::from(1),
            _ => ExitCode::SUCCESS,
        })
    }
}
