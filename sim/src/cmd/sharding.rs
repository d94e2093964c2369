//! The flags that shard a seeded command (`--shard I/N`, `--trials-range A..B`,
//! `--partial-out FILE`) and the one path every seeded command's output takes: compute from a
//! trial source, then print. Unsharded, the source runs every trial; sharded, it runs the
//! shard's and the command writes a partial instead of printing; `agentsim merge` feeds the
//! same computation from the merged partials, so its bytes are the unsharded bytes.
//!
//! A command becomes shardable by describing its work as a [`Seeded`] job (the arguments that
//! decide its output, serialized into the partial) and flattening [`ShardArgs`]. What this
//! does not check: that every shard ran the same binary beyond the build digest.

use crate::artifacts::output::write_atomic;
use crate::artifacts::paths::Paths;
use crate::cmd::progress::Watched;
use crate::cmd::run_args::RunArgs;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::{Build, Header, Merged, Recorder, Replay, Shard, Slice};
use agentsim_sim::shard::{TrialRange, TrialSource};
use anyhow::{anyhow, bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The flags that run a share of a seeded command's trials.
#[derive(Debug, Default, clap::Args)]
pub struct ShardArgs {
    /// Run shard I of N (1-based) of every run's trials and write them with --partial-out.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Run trials A..B (half-open) of every run and write them with --partial-out.
    #[arg(long, value_name = "A..B", conflicts_with = "shard")]
    pub trials_range: Option<String>,
    /// Write this process's trials as a partial result for `agentsim merge` (nothing is
    /// printed and no table is written).
    #[arg(long, value_name = "FILE")]
    pub partial_out: Option<PathBuf>,
}

impl ShardArgs {
    /// An error when any shard flag is given to a run that `flag` makes unshardable.
    pub fn refuse_with(&self, flag: &str) -> Result<()> {
        if self.shard.is_some() || self.trials_range.is_some() || self.partial_out.is_some() {
            bail!("{flag} runs unsharded: drop --shard, --trials-range and --partial-out");
        }
        Ok(())
    }

    /// The slice to run and the partial to write, or `None` for the unsharded run.
    pub fn slice(&self) -> Result<Option<(Slice, &Path)>> {
        let slice = match (&self.shard, &self.trials_range) {
            (Some(_), Some(_)) => bail!("--shard and --trials-range exclude each other"),
            (Some(s), None) => {
                Slice::Shard(s.parse::<Shard>().map_err(|e| anyhow!("--shard: {e}"))?)
            }
            (None, Some(r)) => Slice::Range(
                r.parse::<TrialRange>()
                    .map_err(|e| anyhow!("--trials-range: {e}"))?,
            ),
            (None, None) => Slice::All,
        };
        match (&self.partial_out, slice) {
            (Some(file), _) => Ok(Some((slice, file.as_path()))),
            (None, Slice::All) => Ok(None),
            (None, _) => bail!("--shard and --trials-range need --partial-out FILE"),
        }
    }
}

/// A seeded command's work as data: what it runs (serialized into every partial) and how it
/// prints.
pub trait Seeded: Serialize + DeserializeOwned {
    /// The command's name, as `agentsim merge` dispatches on it.
    const COMMAND: &'static str;
    /// What the computation yields for printing.
    type Output;
    /// The run seed.
    fn seed(&self) -> u64;
    /// FNV-1a 64 of the scenario text the job runs.
    fn scenario_digest(&self) -> Result<u64>;
    /// The trials every run of the job takes together, for progress lines (`None`: unknown).
    fn trials_total(&self) -> Option<u64> {
        None
    }
    /// The files the job reads, described for messages (none by default), so that no output
    /// overwrites one ([`crate::artifacts::paths`]).
    fn inputs(&self) -> Vec<(&'static str, PathBuf)> {
        Vec::new()
    }
    /// Every figure of the command, from the trials `src` gives.
    fn compute(&self, src: &mut dyn TrialSource, threads: usize) -> Result<Self::Output>;
    /// Prints (stdout) and writes table files as `run` says; the exit code.
    fn print(&self, out: &Self::Output, run: &RunArgs) -> Result<ExitCode>;
}

/// Runs `job` whole and prints it, or, with shard flags, runs its share and writes a partial.
pub fn run<J: Seeded>(job: &J, shard: &ShardArgs, run: &RunArgs) -> Result<ExitCode> {
    let mut paths = Paths::new();
    for (what, file) in job.inputs() {
        paths = paths.input(what, &file);
    }
    run.outputs(paths)
        .output("--partial-out", shard.partial_out.as_deref())
        .check()?;
    match shard.slice()? {
        None => {
            // The table folder is checked before the trials run, not after.
            run.tables_dir()?;
            let mut src = Watched::new(J::COMMAND, job.trials_total(), run.progress);
            let out = job.compute(&mut src, run.threads())?;
            src.finish();
            job.print(&out, run)
        }
        Some((slice, file)) => write_partial(job, slice, file, run.threads()),
    }
}

/// Runs `slice` of `job` on `threads` threads and writes its partial to `file`.
pub fn write_partial<J: Seeded>(
    job: &J,
    slice: Slice,
    file: &Path,
    threads: usize,
) -> Result<ExitCode> {
    let header = header(job)?;
    let mut rec = Recorder::new(slice);
    job.compute(&mut rec, threads)?;
    if rec.is_empty() {
        bail!(
            "{}: the run took no trials from its source, so it has nothing to shard",
            J::COMMAND
        );
    }
    let partial = rec.into_partial(header);
    write_atomic(file, partial.to_json().as_bytes())?;
    eprintln!(
        "{}: wrote {} (trials {} of {}, {} runs, {} fact runs)",
        J::COMMAND,
        file.display(),
        partial.range,
        partial.trials,
        partial.runs.len(),
        partial.facts.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The header of `job`'s partials, with this binary's build.
pub fn header<J: Seeded>(job: &J) -> Result<Header> {
    Ok(Header {
        command: J::COMMAND.to_owned(),
        args: serde_json::to_value(job)?,
        scenario_digest: hex(job.scenario_digest()?),
        seed: job.seed(),
        build: build()?.clone(),
    })
}

/// Prints `merged` as the unsharded run of its job prints it.
pub fn print_merged<J: Seeded>(merged: Merged, files: &str, run: &RunArgs) -> Result<ExitCode> {
    let h = &merged.header;
    let job: J = serde_json::from_value(h.args.clone())
        .with_context(|| format!("{files}: field `args` is not {}'s arguments", J::COMMAND))?;
    let digest = hex(job.scenario_digest()?);
    if digest != h.scenario_digest {
        bail!(
            "{files}: the scenario text now has digest {digest}, the partials were made from {}",
            h.scenario_digest
        );
    }
    let mine = build()?;
    if &h.build != mine {
        bail!(
            "{files}: made by build {} {}, this is {} {}; merge with the binary that ran the \
             shards",
            h.build.version,
            h.build.digest,
            mine.version,
            mine.digest
        );
    }
    run.tables_dir()?;
    let mut src = Replay::new(merged);
    let out = job.compute(&mut src, 1)?;
    src.finish().map_err(|e| anyhow!("{files}: {e}"))?;
    job.print(&out, run)
}

/// 16 hex digits.
pub fn hex(x: u64) -> String {
    format!("{x:016x}")
}

/// This binary's build: the crate version and a digest of the target, the profile and the
/// executable's bytes (computed once, and only when sharding or merging).
pub fn build() -> Result<&'static Build> {
    static BUILD: OnceLock<Build> = OnceLock::new();
    if let Some(b) = BUILD.get() {
        return Ok(b);
    }
    let exe = std::env::current_exe().context("finding this executable for the build digest")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("{}: reading it", exe.display()))?;
    let mut h = Fnv1a::new();
    h.field(std::env::consts::ARCH)
        .field(std::env::consts::OS)
        .field(if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        })
        .bytes(&bytes);
    Ok(BUILD.get_or_init(|| Build {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        digest: hex(h.finish()),
    }))
}
