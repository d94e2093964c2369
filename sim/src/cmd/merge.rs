//! `agentsim merge PARTIAL... [--json] [--out DIR]`: the partial results of a
//! sharded seeded command (`--shard I/N --partial-out FILE`), checked and merged, printed as
//! the unsharded run prints them — the same text, `--json` and table files, byte for byte.
//!
//! The partials must belong together (same command, arguments, scenario digest, seed, build
//! and runs) and their trial ranges must be disjoint and cover every trial; otherwise exit 2
//! naming the files. The figures are recomputed from the per-trial facts by the function the
//! unsharded command uses. A merge does not re-run any trial: it trusts the partials' facts.
//! `agentsim test` and `agentsim explore` partials have formats of their own and are merged by
//! those commands' modules.

use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{print_merged, Seeded};
use crate::cmd::{cpl_twin, reproduce, simulate, split_view, sweep, twins, workloads};
use agentsim_sim::shard::{merge, Partial};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

/// Merge the partial results of a sharded command into the unsharded output.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The partial files (`--partial-out` of each shard), in any order.
    #[arg(required = true, value_name = "PARTIAL")]
    pub partials: Vec<PathBuf>,
    /// With `agentsim test` partials: also write the merged suite as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut paths = crate::artifacts::paths::Paths::new();
    for file in &args.partials {
        paths = paths.input("a partial", file);
    }
    args.run
        .outputs(paths)
        .output("--junit", args.junit.as_deref())
        .check()?;
    let junit = args.junit.as_deref();
    if let Some(code) = crate::cmd::test::merge_partials(&args.partials, args.run.json, junit)? {
        return Ok(code);
    }
    if args.junit.is_some() {
        bail!("--junit merges `agentsim test` partials; these are not");
    }
    if let Some(code) = crate::cmd::explore::merge_partials(&args.partials, args.run.json)? {
        return Ok(code);
    }
    let mut parts = Vec::with_capacity(args.partials.len());
    for file in &args.partials {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("{}: reading the partial", file.display()))?;
        let p = Partial::parse(file, &text).map_err(|e| anyhow!("{e}"))?;
        parts.push((file.clone(), p));
    }
    let files = names(&args.partials);
    let merged = merge(parts).map_err(|e| anyhow!("{e}"))?;
    let command = merged.header.command.clone();
    match command.as_str() {
        twins::Job::COMMAND => print_merged::<twins::Job>(merged, &files, &args.run),
        workloads::Job::COMMAND => print_merged::<workloads::Job>(merged, &files, &args.run),
        sweep::Job::COMMAND => print_merged::<sweep::Job>(merged, &files, &args.run),
        simulate::Job::COMMAND => print_merged::<simulate::Job>(merged, &files, &args.run),
        split_view::Job::COMMAND => print_merged::<split_view::Job>(merged, &files, &args.run),
        cpl_twin::Job::COMMAND => print_merged::<cpl_twin::Job>(merged, &files, &args.run),
        reproduce::Job::COMMAND => print_merged::<reproduce::Job>(merged, &files, &args.run),
        other => bail!("{files}: field `command`: `{other}` is not a shardable command"),
    }
}

/// The files, for messages: all of them, or the first three and a count.
fn names(files: &[PathBuf]) -> String {
    let shown: Vec<String> = files
        .iter()
        .take(3)
        .map(|f| f.display().to_string())
        .collect();
    match files.len() {
        0..=3 => shown.join(", "),
        n => format!("{}, … ({n} partials)", shown.join(", ")),
    }
}
