//! Sharded trials and their partial results: a seeded command's trials split over
//! processes or machines, each writing the per-trial facts of its trial range, and a merge that
//! recomputes exactly what the unsharded run computes.
//!
//! Trial k's seed is a fixed function of (run seed, k) ([`crate::runner::trial_seed`]), so
//! trial k is the same trial whichever process runs it. A command asks a [`TrialSource`] for
//! each of its runs (scenario × runtime × seed × trials) in a fixed order; the source either
//! runs every trial ([`Local`], the single-machine path), runs only the shard's range and keeps
//! its [`TrialMetrics`] ([`Recorder`]), or hands back the trials merged from partials
//! ([`Replay`]). The aggregate is [`Aggregate::of`] over the trials in trial order in every
//! case, so the merged figures are the unsharded figures by construction, not by rounding.
//!
//! A command whose trials are not the engine's (the split-view twin's replicated store, the
//! guard twin's message counts) asks the source for a run of named integer facts per trial
//! instead ([`TrialSource::facts`]); the three sources treat those runs the same way.
//!
//! A partial ([`Partial`], JSON, format `agentsim-partial` version [`VERSION`]) names the
//! command and its arguments, the digest of the scenario text, the seed, the build, the trial
//! range and, per run, the run's key and the range's metrics or facts. [`merge`] accepts partials only
//! when those agree and the ranges are disjoint and cover every trial. What a merge does not
//! prove: that the partials were produced honestly (a hand-edited metric with a consistent
//! header merges), or that a build with the same version and digest behaves the same.
//!
//! The parts: [`range`] (which trials a shard runs), [`partial`] (the file format and the
//! merge), [`source`] (where a command's runs come from).

pub mod partial;
pub mod range;
pub mod source;

pub use partial::{merge, Build, FactKey, FactRun, Header, Merged, Partial, PartialRun, RunKey};
pub use partial::{FORMAT, VERSION};
pub use range::{Shard, Slice, TrialRange};
pub use source::{Facts, Local, Recorder, Replay, TrialFacts, TrialSource};

use crate::engine::SimError;
use std::path::PathBuf;

/// Errors of shards, partials and merges. They name the files involved, not flags.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("shard `{0}`: expected I/N with 1 <= I <= N (1-based)")]
    BadShard(String),
    #[error("trial range `{0}`: expected A..B with A <= B")]
    BadRange(String),
    #[error("trial range {range} exceeds the run's {trials} trials")]
    RangeTooLarge { range: TrialRange, trials: u64 },
    #[error("the command's runs have different trial counts ({first} and {this})")]
    UnevenRuns { first: u64, this: u64 },
    #[error("{}:{line}:{column}: not a valid partial: {message}", file.display())]
    Malformed {
        file: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: not a partial result (field `format` is not `{FORMAT}`)", file.display())]
    NotPartial { file: PathBuf },
    #[error(
        "{}: field `version`: {found}, this build reads version {VERSION} only; run the \
         shards again with this build",
        file.display()
    )]
    Version { file: PathBuf, found: String },
    #[error("{}: {why}", file.display())]
    Inconsistent { file: PathBuf, why: String },
    #[error(
        "{} and {} do not belong together: field `{field}` differs ({first_value} vs \
         {other_value})",
        first.display(),
        other.display()
    )]
    Mismatch {
        first: PathBuf,
        other: PathBuf,
        field: &'static str,
        first_value: String,
        other_value: String,
    },
    #[error("{} (trials {a_range}) and {} (trials {b_range}) overlap", a.display(), b.display())]
    Overlap {
        a: PathBuf,
        a_range: TrialRange,
        b: PathBuf,
        b_range: TrialRange,
    },
    #[error("no partial holds trials {range} of {trials} (given: {have})")]
    Missing {
        range: TrialRange,
        trials: u64,
        have: String,
    },
    #[error("no partials to merge")]
    Empty,
    #[error("the command's run {index} ({key}) is not in the partials")]
    MissingRun { index: usize, key: String },
    #[error("the command's run {index} is {want}, the partials' is {found}")]
    OtherRun {
        index: usize,
        want: String,
        found: String,
    },
    #[error("the partials hold a run {index} ({key}) the command did not ask for")]
    ExtraRun { index: usize, key: String },
    #[error("a trial of {key}: {message}")]
    Trial { key: String, message: String },
}

#[cfg(test)]
mod tests;
