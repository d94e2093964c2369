//! Where a command's runs come from: every trial ([`Local`], the single-machine path, exactly
//! [`run`]), a shard's trials kept for its partial ([`Recorder`]), or the trials merged from
//! partials ([`Replay`]). All three aggregate with [`Aggregate::of`] over trials in trial
//! order, which is why a merge prints the unsharded bytes.

use super::{Header, Merged, Partial, PartialRun, RunKey, ShardError, Slice, TrialRange};
use super::{FORMAT, VERSION};
use crate::metrics::Aggregate;
use crate::runner::{run, run_trials, RunConfig, RunResult, TrialResult};

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
