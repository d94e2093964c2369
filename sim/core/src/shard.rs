//! Sharded trials and their partial results (issue 19): a seeded command's trials split over
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
//! A partial ([`Partial`], JSON, format `agentsim-partial` version [`VERSION`]) names the
//! command and its arguments, the digest of the scenario text, the seed, the build, the trial
//! range and, per run, the run's key and the range's metrics. [`merge`] accepts partials only
//! when those agree and the ranges are disjoint and cover every trial. What a merge does not
//! prove: that the partials were produced honestly (a hand-edited metric with a consistent
//! header merges), or that a build with the same version and digest behaves the same.

use crate::engine::SimError;
use crate::metrics::{Aggregate, TrialMetrics};
use crate::runner::{run, run_trials, RunConfig, RunResult, TrialResult};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The `format` field of every partial.
pub const FORMAT: &str = "agentsim-partial";
/// The partial format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Trials `lo..hi` (half-open) of a run of `trials`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialRange {
    pub lo: u64,
    pub hi: u64,
}

impl TrialRange {
    /// Every trial of a run of `trials`.
    pub fn all(trials: u64) -> TrialRange {
        TrialRange { lo: 0, hi: trials }
    }

    /// The number of trials in the range.
    pub fn len(&self) -> u64 {
        self.hi - self.lo
    }

    /// Whether the range holds no trial.
    pub fn is_empty(&self) -> bool {
        self.lo == self.hi
    }
}

impl fmt::Display for TrialRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.lo, self.hi)
    }
}

/// `A..B`.
impl FromStr for TrialRange {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<TrialRange, ShardError> {
        let bad = || ShardError::BadRange(s.to_owned());
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let lo: u64 = a.trim().parse().map_err(|_| bad())?;
        let hi: u64 = b.trim().parse().map_err(|_| bad())?;
        if lo > hi {
            return Err(bad());
        }
        Ok(TrialRange { lo, hi })
    }
}

/// Shard `index` of `count`, 1-based (`2/3` is the second of three), as Playwright and Jest
/// spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The shard's trials: the `index`-th of `count` contiguous, balanced ranges of `trials`
    /// (sizes differ by at most one; a shard past the trial count is empty).
    pub fn range(&self, trials: u64) -> TrialRange {
        let at = |i: u64| (u128::from(trials) * u128::from(i) / u128::from(self.count)) as u64;
        TrialRange {
            lo: at(self.index - 1),
            hi: at(self.index),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// `I/N` with 1 ≤ I ≤ N.
impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::BadShard(s.to_owned());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Which trials of each run a process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slice {
    /// Shard I of N of every run.
    Shard(Shard),
    /// An explicit range of every run.
    Range(TrialRange),
    /// Every trial.
    All,
}

impl Slice {
    /// The range of a run of `trials`; an explicit range past the run is an error.
    pub fn range(&self, trials: u64) -> Result<TrialRange, ShardError> {
        match *self {
            Slice::Shard(s) => Ok(s.range(trials)),
            Slice::Range(r) if r.hi > trials => Err(ShardError::RangeTooLarge { range: r, trials }),
            Slice::Range(r) => Ok(r),
            Slice::All => Ok(TrialRange::all(trials)),
        }
    }

    /// The shard, if the slice is one.
    pub fn shard(&self) -> Option<Shard> {
        match *self {
            Slice::Shard(s) => Some(s),
            Slice::Range(_) | Slice::All => None,
        }
    }
}

/// The build a partial came from: partials of different builds do not merge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// The crate version.
    pub version: String,
    /// A digest of what else decides the output (target, profile, the executable's bytes).
    pub digest: String,
}

/// What identifies one run of a command: a partial's run k must be the merge's run k.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunKey {
    pub scenario: String,
    pub runtime: String,
    pub scheduler: String,
    pub on_missing: Option<String>,
    pub seed: u64,
    pub trials: u64,
}

impl RunKey {
    /// The key of a run configuration.
    pub fn of(cfg: &RunConfig<'_>) -> RunKey {
        RunKey {
            scenario: cfg.scenario.file.display().to_string(),
            runtime: cfg.runtime.name().to_string(),
            scheduler: cfg.scheduler.name(),
            on_missing: cfg.on_missing.map(|m| format!("{m:?}")),
            seed: cfg.seed,
            trials: cfg.trials,
        }
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} under {} ({}, seed {}, {} trials)",
            self.scenario, self.runtime, self.scheduler, self.seed, self.trials
        )
    }
}

/// One run's trials within a partial's range, in trial order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialRun {
    pub key: RunKey,
    pub trials: Vec<TrialMetrics>,
}

/// A partial result: one process's share of a seeded command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub format: String,
    pub version: u32,
    /// The command (`twins`, `sweep`, …) and the arguments that decide its output.
    pub command: String,
    pub args: serde_json::Value,
    /// FNV-1a 64 (hex) of the scenario text the command ran.
    pub scenario_digest: String,
    pub seed: u64,
    pub build: Build,
    /// Trials per run, and this partial's range of them.
    pub trials: u64,
    pub range: TrialRange,
    pub shard: Option<Shard>,
    pub runs: Vec<PartialRun>,
}

/// What every partial of one sharded command shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub command: String,
    pub args: serde_json::Value,
    pub scenario_digest: String,
    pub seed: u64,
    pub build: Build,
}

#[derive(Deserialize)]
struct Head {
    format: Option<String>,
    version: Option<u32>,
}

impl Partial {
    /// The partial's JSON text (one line, keys in a fixed order, newline-terminated).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a partial serializes");
        s.push('\n');
        s
    }

    /// Parses and checks a partial's text; errors name `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Partial, ShardError> {
        let malformed = |e: serde_json::Error| ShardError::Malformed {
            file: file.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let head: Head = serde_json::from_str(text).map_err(malformed)?;
        if head.format.as_deref() != Some(FORMAT) {
            return Err(ShardError::NotPartial {
                file: file.to_owned(),
            });
        }
        if head.version != Some(VERSION) {
            return Err(ShardError::Version {
                file: file.to_owned(),
                found: head.version.map_or("none".into(), |v| v.to_string()),
            });
        }
        let p: Partial = serde_json::from_str(text).map_err(malformed)?;
        p.check().map_err(|why| ShardError::Inconsistent {
            file: file.to_owned(),
            why,
        })?;
        Ok(p)
    }

    /// The partial's own consistency: range within the trials, each run's trials exactly the
    /// range's, in order.
    fn check(&self) -> Result<(), String> {
        let r = self.range;
        if r.lo > r.hi || r.hi > self.trials {
            return Err(format!("range {r} is not within {} trials", self.trials));
        }
        if let Some(s) = self.shard {
            if s.index == 0 || s.index > s.count || s.range(self.trials) != r {
                return Err(format!(
                    "shard {s} of {} trials is not range {r}",
                    self.trials
                ));
            }
        }
        for (i, run) in self.runs.iter().enumerate() {
            if run.key.trials != self.trials {
                return Err(format!(
                    "run {i} has {} trials, not {}",
                    run.key.trials, self.trials
                ));
            }
            if run.trials.len() as u64 != r.len() {
                return Err(format!(
                    "run {i} holds {} trials, range {r} needs {}",
                    run.trials.len(),
                    r.len()
                ));
            }
            if let Some((k, t)) = (r.lo..).zip(&run.trials).find(|(k, t)| t.trial != *k) {
                return Err(format!(
                    "run {i}: trial {} where trial {k} belongs",
                    t.trial
                ));
            }
        }
        Ok(())
    }

    fn header(&self) -> Header {
        Header {
            command: self.command.clone(),
            args: self.args.clone(),
            scenario_digest: self.scenario_digest.clone(),
            seed: self.seed,
            build: self.build.clone(),
        }
    }
}

/// Partials merged: every run's trials, all of them, in trial order.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub header: Header,
    pub trials: u64,
    pub runs: Vec<PartialRun>,
}

/// Checks that `parts` belong together (same header, trials and run keys) and that their
/// ranges are disjoint and cover every trial, and concatenates their trials in trial order.
pub fn merge(parts: Vec<(PathBuf, Partial)>) -> Result<Merged, ShardError> {
    let Some((first_file, first)) = parts.first() else {
        return Err(ShardError::Empty);
    };
    for (file, p) in &parts[1..] {
        agree(first_file, first, file, p)?;
    }
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].1.range);
    let mut next = 0u64;
    let mut prev: Option<usize> = None;
    for &i in &order {
        let r = parts[i].1.range;
        if r.is_empty() {
            continue;
        }
        if r.lo < next {
            let j = prev.expect("a range ends at `next` only after a partial");
            return Err(ShardError::Overlap {
                a: parts[j].0.clone(),
                a_range: parts[j].1.range,
                b: parts[i].0.clone(),
                b_range: r,
            });
        }
        if r.lo > next {
            return Err(missing(&parts, next, r.lo));
        }
        next = r.hi;
        prev = Some(i);
    }
    let trials = first.trials;
    if next < trials {
        return Err(missing(&parts, next, trials));
    }
    let header = first.header();
    let mut slots: Vec<Option<Partial>> = parts.into_iter().map(|(_, p)| Some(p)).collect();
    let mut runs: Vec<PartialRun> = Vec::new();
    for &i in &order {
        let p = slots[i].take().expect("each partial is taken once");
        if runs.is_empty() {
            runs = p.runs;
            continue;
        }
        for (run, part) in runs.iter_mut().zip(p.runs) {
            run.trials.extend(part.trials);
        }
    }
    for run in &runs {
        assert_eq!(
            run.trials.len() as u64,
            trials,
            "the ranges cover every trial once"
        );
    }
    Ok(Merged {
        header,
        trials,
        runs,
    })
}

fn agree(af: &Path, a: &Partial, bf: &Path, b: &Partial) -> Result<(), ShardError> {
    let differ = |field: &'static str, x: String, y: String| ShardError::Mismatch {
        first: af.to_owned(),
        other: bf.to_owned(),
        field,
        first_value: x,
        other_value: y,
    };
    let fields: [(&'static str, String, String); 6] = [
        ("command", a.command.clone(), b.command.clone()),
        ("args", a.args.to_string(), b.args.to_string()),
        (
            "scenario_digest",
            a.scenario_digest.clone(),
            b.scenario_digest.clone(),
        ),
        ("seed", a.seed.to_string(), b.seed.to_string()),
        ("build", format!("{:?}", a.build), format!("{:?}", b.build)),
        ("trials", a.trials.to_string(), b.trials.to_string()),
    ];
    for (field, x, y) in fields {
        if x != y {
            return Err(differ(field, x, y));
        }
    }
    if a.runs.len() != b.runs.len() {
        return Err(differ(
            "runs",
            a.runs.len().to_string(),
            b.runs.len().to_string(),
        ));
    }
    for (x, y) in a.runs.iter().zip(&b.runs) {
        if x.key != y.key {
            return Err(differ("run", x.key.to_string(), y.key.to_string()));
        }
    }
    Ok(())
}

fn missing(parts: &[(PathBuf, Partial)], lo: u64, hi: u64) -> ShardError {
    let mut have: Vec<(TrialRange, String)> = parts
        .iter()
        .map(|(f, p)| (p.range, f.display().to_string()))
        .collect();
    have.sort();
    let have: Vec<String> = have.iter().map(|(r, f)| format!("{f} {r}")).collect();
    ShardError::Missing {
        range: TrialRange { lo, hi },
        trials: parts[0].1.trials,
        have: have.join(", "),
    }
}

/// Where a command's runs come from.
pub trait TrialSource {
    /// The results of the run `cfg`, its trials in trial order.
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError>;
}

/// The single-machine source: every trial of every run, as [`run`] gives them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl TrialSource for Local {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        Ok(run(cfg)?)
    }
}

/// A shard's source: runs only the slice's trials of each run and keeps their metrics.
#[derive(Clone, Debug)]
pub struct Recorder {
    slice: Slice,
    trials: Option<u64>,
    range: Option<TrialRange>,
    runs: Vec<PartialRun>,
}

impl Recorder {
    /// A recorder of `slice`.
    pub fn new(slice: Slice) -> Recorder {
        Recorder {
            slice,
            trials: None,
            range: None,
            runs: Vec::new(),
        }
    }

    /// The partial of what was run, under `header`.
    pub fn into_partial(self, header: Header) -> Partial {
        let trials = self.trials.unwrap_or(0);
        Partial {
            format: FORMAT.to_owned(),
            version: VERSION,
            command: header.command,
            args: header.args,
            scenario_digest: header.scenario_digest,
            seed: header.seed,
            build: header.build,
            trials,
            range: self.range.unwrap_or(TrialRange::all(0)),
            shard: self.slice.shard(),
            runs: self.runs,
        }
    }
}

impl TrialSource for Recorder {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        if let Some(t) = self.trials.filter(|&t| t != cfg.trials) {
            return Err(ShardError::UnevenRuns {
                first: t,
                this: cfg.trials,
            });
        }
        let range = self.slice.range(cfg.trials)?;
        let r = run_trials(cfg, range.lo, range.hi)?;
        self.trials = Some(cfg.trials);
        self.range = Some(range);
        self.runs.push(PartialRun {
            key: RunKey::of(cfg),
            trials: r.trials.iter().map(|t| t.metrics.clone()).collect(),
        });
        Ok(r)
    }
}

/// The merge's source: hands back each run merged from partials, in the order they ran.
#[derive(Debug)]
pub struct Replay {
    runs: std::vec::IntoIter<PartialRun>,
    taken: usize,
}

impl Replay {
    /// A source over merged partials.
    pub fn new(merged: Merged) -> Replay {
        Replay {
            runs: merged.runs.into_iter(),
            taken: 0,
        }
    }

    /// Checks every run of the partials was asked for.
    pub fn finish(mut self) -> Result<(), ShardError> {
        match self.runs.next() {
            None => Ok(()),
            Some(run) => Err(ShardError::ExtraRun {
                index: self.taken,
                key: run.key.to_string(),
            }),
        }
    }
}

impl TrialSource for Replay {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        let want = RunKey::of(cfg);
        let index = self.taken;
        let run = self.runs.next().ok_or_else(|| ShardError::MissingRun {
            index,
            key: want.to_string(),
        })?;
        if run.key != want {
            return Err(ShardError::OtherRun {
                index,
                want: want.to_string(),
                found: run.key.to_string(),
            });
        }
        self.taken += 1;
        let aggregate = Aggregate::of(&run.trials);
        let trials = run
            .trials
            .into_iter()
            .map(|metrics| TrialResult {
                metrics,
                history: None,
                recorded: Vec::new(),
            })
            .collect();
        Ok(RunResult { trials, aggregate })
    }
}

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
    #[error("{}: field `version`: {found}, this build reads version {VERSION}", file.display())]
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use proptest::prelude::*;

    const SCENARIO: &str = include_str!("../../../scenarios/edit-review.toml");

    fn scenario() -> Scenario {
        Scenario::parse(Path::new("scenarios/edit-review.toml"), SCENARIO).expect("parses")
    }

    fn header() -> Header {
        Header {
            command: "simulate".into(),
            args: serde_json::json!({"n": 1}),
            scenario_digest: "00".into(),
            seed: 4,
            build: Build {
                version: "0".into(),
                digest: "1".into(),
            },
        }
    }

    fn partial(sc: &Scenario, slice: Slice) -> Partial {
        let cfg = RunConfig {
            trials: 10,
            seed: 4,
            ..RunConfig::new(sc)
        };
        let mut rec = Recorder::new(slice);
        rec.run(&cfg).expect("runs");
        rec.into_partial(header())
    }

    #[test]
    fn shards_and_ranges_parse_and_refuse_nonsense() {
        assert_eq!(
            "2/3".parse::<Shard>().ok(),
            Some(Shard { index: 2, count: 3 })
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(
            "3..7".parse::<TrialRange>().ok(),
            Some(TrialRange { lo: 3, hi: 7 })
        );
        for bad in ["7..3", "3-7", "..7", "x..1"] {
            assert!(bad.parse::<TrialRange>().is_err(), "{bad}");
        }
        let too_far = Slice::Range(TrialRange { lo: 0, hi: 11 }).range(10);
        assert!(matches!(too_far, Err(ShardError::RangeTooLarge { .. })));
    }

    proptest! {
        #[test]
        fn shards_partition_the_trials(trials in 0u64..5000, count in 1u64..200) {
            let mut next = 0;
            for index in 1..=count {
                let r = Shard { index, count }.range(trials);
                prop_assert_eq!(r.lo, next);
                prop_assert!(r.len() <= trials / count + 1);
                prop_assert!(r.len() >= trials / count);
                next = r.hi;
            }
            prop_assert_eq!(next, trials);
        }
    }

    #[test]
    fn shards_run_the_trials_the_whole_run_runs_and_merge_to_its_aggregate() {
        let sc = scenario();
        let cfg = RunConfig {
            trials: 10,
            seed: 4,
            threads: 2,
            ..RunConfig::new(&sc)
        };
        let whole = run(&cfg).expect("runs");
        let parts: Vec<(PathBuf, Partial)> = (1..=3)
            .map(|i| {
                let p = partial(&sc, Slice::Shard(Shard { index: i, count: 3 }));
                let text = p.to_json();
                let file = PathBuf::from(format!("p{i}.json"));
                let back = Partial::parse(&file, &text).expect("reads back");
                assert_eq!(back, p);
                (file, back)
            })
            .rev()
            .collect();
        let merged = merge(parts).expect("merges");
        assert_eq!(merged.header, header());
        let mut replay = Replay::new(merged);
        let again = replay.run(&cfg).expect("the same run");
        replay.finish().expect("nothing left over");
        assert_eq!(again.aggregate, whole.aggregate);
        let metrics = |r: &RunResult| -> Vec<TrialMetrics> {
            r.trials.iter().map(|t| t.metrics.clone()).collect()
        };
        assert_eq!(metrics(&again), metrics(&whole));
    }

    #[test]
    fn merge_refuses_what_does_not_belong_or_cover() {
        let sc = scenario();
        let shard = |i| partial(&sc, Slice::Shard(Shard { index: i, count: 2 }));
        let named = |n: &str, p: Partial| (PathBuf::from(n), p);
        let overlap = merge(vec![
            named("a", shard(1)),
            named("b", shard(2)),
            named("c", shard(1)),
        ]);
        assert!(
            matches!(overlap, Err(ShardError::Overlap { .. })),
            "{overlap:?}"
        );
        let gap = merge(vec![named("a", shard(1))]);
        let msg = gap.expect_err("trials 5..10 missing").to_string();
        assert!(
            msg.contains("5..10 of 10") && msg.contains("a 0..5"),
            "{msg}"
        );
        let mut other = shard(2);
        other.seed = 5;
        let msg = merge(vec![named("a", shard(1)), named("b", other)])
            .expect_err("seeds differ")
            .to_string();
        assert!(msg.contains("`seed`") && msg.contains("a and b"), "{msg}");
        assert!(matches!(merge(Vec::new()), Err(ShardError::Empty)));
        let mut short = shard(1);
        short.runs[0].trials.pop();
        let msg = Partial::parse(Path::new("s"), &short.to_json())
            .expect_err("one trial short")
            .to_string();
        assert!(msg.starts_with("s: run 0 holds 4 trials"), "{msg}");
    }

    #[test]
    fn replay_refuses_a_run_the_partials_do_not_hold() {
        let sc = scenario();
        let merged = merge(vec![(PathBuf::from("a"), partial(&sc, Slice::All))]).expect("one");
        let mut replay = Replay::new(merged);
        let cfg = RunConfig {
            trials: 10,
            seed: 5,
            ..RunConfig::new(&sc)
        };
        let err = replay.run(&cfg).expect_err("another seed");
        assert!(
            matches!(err, ShardError::OtherRun { index: 0, .. }),
            "{err}"
        );
    }
}
