//! What `twins` and `workloads` share: a fixed set of scenarios run under their default
//! runtimes, or under the runtimes `--runtime` names over `vanilla`, sharded alike
//! ([`crate::cmd::sharding`]), printed and written alike ([`emit`]).

use crate::artifacts::tables::Table;
use crate::artifacts::write_tables;
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding;
use agentsim_models::runtime::Stack;
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// The flags both commands take beside `--trials`.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The run seed (trial k's seed derives from it; every runtime and side uses the same
    /// trial seeds: pairing).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Run these runtimes over vanilla instead of the default ones: comma-separated named
    /// runtimes or `+`-joined stacks of mechanisms.
    #[arg(long, value_delimiter = ',', value_name = "STACK,...")]
    pub runtime: Vec<Stack>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// The work: what a partial carries as its arguments (`runtime` only when `--runtime` was
/// given, so a plain run's arguments read as before).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub trials: u64,
    pub seed: u64,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "agentsim_models::runtime::stack::by_names"
    )]
    pub runtime: Vec<Stack>,
}

impl Job {
    /// The job the flags name.
    pub fn of(trials: u64, args: &Args) -> Job {
        Job {
            trials,
            seed: args.seed,
            runtime: args.runtime.clone(),
        }
    }
}

/// Runs the command's job (`job` wraps the shared one in the command's type) as the flags
/// say: whole, or one shard of it.
pub fn run<J: sharding::Seeded>(
    trials: u64,
    args: &Args,
    job: fn(Job) -> J,
) -> anyhow::Result<ExitCode> {
    sharding::run(&job(Job::of(trials, args)), &args.shard, &args.run)
}

/// Prints `rows` (`--json`) or `text`, and under `--out` writes each table as
/// `DIR/tables/STEM.*`, saying so on stderr as `COMMAND: wrote PATH`.
pub fn emit<R: Serialize + ?Sized>(
    command: &str,
    rows: &R,
    text: &str,
    tables: &[(&str, &Table)],
    run: &RunArgs,
) -> anyhow::Result<ExitCode> {
    if run.json {
        println!("{}", serde_json::to_string_pretty(rows)?);
    } else {
        print!("{text}");
    }
    if let Some(out) = run.tables_dir()? {
        let mut written = Vec::new();
        for (stem, table) in tables {
            written.extend(write_tables(out, stem, table)?);
        }
        for p in written {
            eprintln!("{command}: wrote {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per row, as the commands print their rows.
pub fn lines<T>(rows: &[T], line: impl Fn(&T) -> String) -> String {
    rows.iter().map(|r| line(r) + "\n").collect()
}
