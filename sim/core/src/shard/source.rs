//! Where a command's runs come from: every trial ([`Local`], the single-machine path, exactly
//! [`run`]), a shard's trials kept for its partial ([`Recorder`]), or the trials merged from
//! partials ([`Replay`]). All three aggregate with [`Aggregate::of`] over trials in trial
//! order, which is why a merge prints the unsharded bytes. A fact run ([`TrialSource::facts`])
//! goes the same three ways: computed whole, computed for the shard's range and kept, or
//! handed back from the partials; the command folds the rows itself, in trial order.

use super::{FactKey, FactRun, Header, Merged, Partial, PartialRun, RunKey, ShardError, Slice};
use super::{TrialRange, FORMAT, VERSION};
use crate::metrics::Aggregate;
use crate::runner::{run, run_trials, RunConfig, RunResult, TrialResult};

/// What computes the facts of a fact run's trials in a range: one row per trial, in trial
/// order, one integer per column of the run's [`FactKey`].
pub type TrialFacts<'a> = &'a dyn Fn(TrialRange) -> Result<Vec<Vec<u64>>, ShardError>;

/// The facts of trials `lo..lo + rows.len()` of a fact run, in trial order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    pub lo: u64,
    pub rows: Vec<Vec<u64>>,
}

/// Where a command's runs come from.
pub trait TrialSource {
    /// The results of the run `cfg`, its trials in trial order.
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError>;
    /// The facts of the run `key` of a command's own trial loop, computed by `compute` for
    /// the trials this source runs (none, when it replays partials).
    fn facts(&mut self, key: &FactKey, compute: TrialFacts<'_>) -> Result<Facts, ShardError>;
}

/// Runs `compute` on `range` and checks it gave a row of the key's width per trial.
fn compute_range(
    key: &FactKey,
    compute: TrialFacts<'_>,
    range: TrialRange,
) -> Result<Vec<Vec<u64>>, ShardError> {
    let rows = compute(range)?;
    assert_eq!(rows.len() as u64, range.len(), "{key}: one row per trial");
    let width = key.columns.len();
    assert!(
        rows.iter().all(|r| r.len() == width),
        "{key}: a fact per column"
    );
    Ok(rows)
}

/// The single-machine source: every trial of every run, as [`run`] gives them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

impl TrialSource for Local {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        Ok(run(cfg)?)
    }

    fn facts(&mut self, key: &FactKey, compute: TrialFacts<'_>) -> Result<Facts, ShardError> {
        let rows = compute_range(key, compute, TrialRange::all(key.trials))?;
        Ok(Facts { lo: 0, rows })
    }
}

/// A shard's source: runs only the slice's trials of each run and keeps their metrics.
#[derive(Clone, Debug)]
pub struct Recorder {
    slice: Slice,
    trials: Option<u64>,
    range: Option<TrialRange>,
    runs: Vec<PartialRun>,
    facts: Vec<FactRun>,
}

impl Recorder {
    /// A recorder of `slice`.
    pub fn new(slice: Slice) -> Recorder {
        Recorder {
            slice,
            trials: None,
            range: None,
            runs: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// The range of a run of `trials`: the slice's, once every run is known to have as many.
    fn range_of(&mut self, trials: u64) -> Result<TrialRange, ShardError> {
        if let Some(t) = self.trials.filter(|&t| t != trials) {
            return Err(ShardError::UnevenRuns {
                first: t,
                this: trials,
            });
        }
        let range = self.slice.range(trials)?;
        self.trials = Some(trials);
        self.range = Some(range);
        Ok(range)
    }

    /// Whether the command asked for any run at all.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.facts.is_empty()
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
            facts: self.facts,
        }
    }
}

impl TrialSource for Recorder {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        let range = self.range_of(cfg.trials)?;
        let r = run_trials(cfg, range.lo, range.hi)?;
        self.runs.push(PartialRun {
            key: RunKey::of(cfg),
            trials: r.trials.iter().map(|t| t.metrics.clone()).collect(),
        });
        Ok(r)
    }

    fn facts(&mut self, key: &FactKey, compute: TrialFacts<'_>) -> Result<Facts, ShardError> {
        let range = self.range_of(key.trials)?;
        let rows = compute_range(key, compute, range)?;
        self.facts.push(FactRun {
            key: key.clone(),
            rows: rows.clone(),
        });
        Ok(Facts { lo: range.lo, rows })
    }
}

/// The merge's source: hands back each run merged from partials, in the order they ran.
#[derive(Debug)]
pub struct Replay {
    runs: std::vec::IntoIter<PartialRun>,
    taken: usize,
    facts: std::vec::IntoIter<FactRun>,
    facts_taken: usize,
}

impl Replay {
    /// A source over merged partials.
    pub fn new(merged: Merged) -> Replay {
        Replay {
            runs: merged.runs.into_iter(),
            taken: 0,
            facts: merged.facts.into_iter(),
            facts_taken: 0,
        }
    }

    /// Checks every run of the partials was asked for.
    pub fn finish(mut self) -> Result<(), ShardError> {
        if let Some(run) = self.runs.next() {
            return Err(ShardError::ExtraRun {
                index: self.taken,
                key: run.key.to_string(),
            });
        }
        match self.facts.next() {
            None => Ok(()),
            Some(run) => Err(ShardError::ExtraRun {
                index: self.facts_taken,
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
                choice_points: None,
            })
            .collect();
        Ok(RunResult { trials, aggregate })
    }

    fn facts(&mut self, key: &FactKey, _: TrialFacts<'_>) -> Result<Facts, ShardError> {
        let index = self.facts_taken;
        let run = self.facts.next().ok_or_else(|| ShardError::MissingRun {
            index,
            key: key.to_string(),
        })?;
        if run.key != *key {
            return Err(ShardError::OtherRun {
                index,
                want: key.to_string(),
                found: run.key.to_string(),
            });
        }
        self.facts_taken += 1;
        Ok(Facts {
            lo: 0,
            rows: run.rows,
        })
    }
}
