//! Schedulers: which of the enabled events runs next. One file per scheduler, one small trait.
//!
//! The engine calls [`Scheduler::choose`] at every event with the enabled agents ordered by
//! due time, then agent id, so position 0 is plain time order. A scheduler draws from its own
//! RNG stream, never the engine's, so replaying its choices with [`replay::Replay`] leaves
//! every latency and token draw unchanged. A scheduler explores interleavings; it does not
//! guarantee to find a bug (PCT's guarantee is probabilistic, see [`pct`]).

pub mod chooser;
pub mod pct;
pub mod random;
pub mod replay;

use crate::schedule::Schedule;
pub use chooser::{Access, ChoiceKind, ChoicePoint, Chooser, Footprint, Use};

/// Chooses among enabled events.
pub trait Scheduler: Send {
    /// Resets for a new trial.
    fn start_trial(&mut self, trial_seed: u64, agents: usize, steps_hint: usize);

    /// Picks a position in `enabled` (agent indices, earliest due first) at event `event`.
    fn choose(&mut self, event: u64, enabled: &[usize]) -> usize;

    /// A chooser for an abstract-time trial (see [`chooser`]), if this scheduler is one; the
    /// engine then asks it, not [`Scheduler::choose`], at every choice point.
    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        None
    }

    /// For an abstract-time trial: explore only the orders the latency bounds allow, a
    /// `lognormal` kept between these quantiles (timed exploration, see
    /// `crate::engine::zone`). `None`: time abstracted away.
    fn timed(&self) -> Option<crate::bounds::Quantiles> {
        None
    }
}

/// Which scheduler to build: `random`, `pct:D` or a replayed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerSpec {
    Random,
    Pct { depth: u32 },
    Replay(Schedule),
}

/// A scheduler name that [`SchedulerSpec::parse`] rejects.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    #[error("`{0}`: PCT depth must be an integer ≥ 1, as in pct:3")]
    PctDepth(String),
    #[error("unknown scheduler `{0}`; valid: random, pct:D (D ≥ 1)")]
    Unknown(String),
}

impl SchedulerSpec {
    /// Parses `random` or `pct:D` (D ≥ 1).
    pub fn parse(s: &str) -> Result<SchedulerSpec, SchedulerError> {
        if s == "random" {
            return Ok(SchedulerSpec::Random);
        }
        if let Some(d) = s.strip_prefix("pct:") {
            return match d.parse::<u32>() {
                Ok(depth) if depth >= 1 => Ok(SchedulerSpec::Pct { depth }),
                _ => Err(SchedulerError::PctDepth(s.to_owned())),
            };
        }
        Err(SchedulerError::Unknown(s.to_owned()))
    }

    /// A fresh scheduler.
    pub fn build(&self) -> Box<dyn Scheduler> {
        match self {
            SchedulerSpec::Random => Box::new(random::Random::default()),
            SchedulerSpec::Pct { depth } => Box::new(pct::Pct::new(*depth)),
            SchedulerSpec::Replay(s) => Box::new(replay::Replay::new(s.clone())),
        }
    }

    /// The name in summaries and replay lines (`random`, `pct:3`, `replay`).
    pub fn name(&self) -> String {
        match self {
            SchedulerSpec::Random => "random".into(),
            SchedulerSpec::Pct { depth } => format!("pct:{depth}"),
            SchedulerSpec::Replay(_) => "replay".into(),
        }
    }
}

impl std::str::FromStr for SchedulerSpec {
    type Err = SchedulerError;

    fn from_str(s: &str) -> Result<SchedulerSpec, SchedulerError> {
        SchedulerSpec::parse(s)
    }
}

/// The scheduler's own stream of the trial (the engine draws on another; see [`crate::rng`]).
pub fn scheduler_rng(trial_seed: u64) -> rand_chacha::ChaCha8Rng {
    crate::rng::stream_rng(trial_seed, crate::rng::stream::SCHEDULER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names() {
        assert_eq!(SchedulerSpec::parse("random"), Ok(SchedulerSpec::Random));
        assert_eq!(
            SchedulerSpec::parse("pct:3"),
            Ok(SchedulerSpec::Pct { depth: 3 })
        );
        assert!(SchedulerSpec::parse("pct:0").is_err());
        assert!(SchedulerSpec::parse("fifo")
            .unwrap_err()
            .to_string()
            .contains("random"));
    }
}
