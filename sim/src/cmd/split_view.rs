//! `agentsim split-view SCENARIO.toml`: the A4 twin of issue 10 in seeded simulation (see
//! `crate::experiments::split_view` for what a trial does).
//!
//! Exit 0 when the run completes and `primary-pinned` never split; 1 if it did (the prevention
//! property is violated); 2 on bad input. `--trial T` prints trial T's history (JSON Lines, with
//! `read_replica`/`read_version`) under `--read-discipline`, to replay it or feed it to
//! `agentsim detect`. A pass says nothing about workloads other than this one.

use crate::experiments::split_view::{history, run_trial, table, to_json, twin, Scenario};
use agentsim_models::jsonl::write_history;
use agentsim_models::replica::ReadDiscipline;
use anyhow::bail;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the split-view (A4) twin on a replicated-store scenario.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario (see `scenarios/split-view.toml`).
    pub scenario: PathBuf,
    /// Override the scenario's number of trials (1..=1000000).
    #[arg(long, value_parser = crate::cmd::limits::trials)]
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
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let s = Scenario::load(&args.scenario)?;
    let s = s
        .with(args.trials, args.seed)
        .map_err(|e| anyhow::anyhow!("--{e}"))?;
    if let Some(t) = args.trial {
        if t >= s.trials {
            bail!("--trial {t}: the scenario has trials 0..{}", s.trials);
        }
        let rt = run_trial(&s, args.read_discipline, t);
        print!("{}", write_history(&history(&s, &rt)));
        return Ok(ExitCode::SUCCESS);
    }
    let rows = twin(&s);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&s, &rows))?);
    } else {
        print!("{}", table(&s, &rows));
    }
    let pinned = rows
        .iter()
        .find(|r| r.discipline == ReadDiscipline::PrimaryPinned);
    Ok(match pinned {
        Some(r) if r.split.k > 0 => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}
