//! The one line that replays a trial: scenario, runtime, seed, trial and schedule.
//!
//! `scenario=<path> runtime=<name> seed=<n> trial=<k> schedule=<S1:…> [on_missing=stub]
//! [repeat_max=<n>]`,
//! whitespace-separated `key=value` tokens (so paths must not contain spaces). The parser
//! accepts the line as `simulate` prints it, with or without the leading
//! `replay: agentsim replay '…'`. A line replays exactly only against the same scenario
//! file and the same build. `repeat_max` says the line came from the scenario with every
//! agent's `repeat` capped (`Scenario::with_repeat_cap`, `agentsim explore --max-repeat`):
//! a replay applies the same cap.

use crate::scenario::{OnMissing, UnknownOnMissing};
use crate::schedule::{Schedule, ScheduleError};
use agentsim_models::runtime::{Stack, StackError};
use std::fmt;
use std::path::PathBuf;

/// A parsed replay line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayLine {
    pub scenario: PathBuf,
    pub runtime: Stack,
    pub seed: u64,
    pub trial: u64,
    pub schedule: Schedule,
    pub on_missing: Option<OnMissing>,
    /// The repeat cap the scenario ran under, if any.
    pub repeat_max: Option<u32>,
}

impl fmt::Display for ReplayLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scenario={} runtime={} seed={} trial={} schedule={}",
            self.scenario.display(),
            self.runtime,
            self.seed,
            self.trial,
            self.schedule
        )?;
        if self.on_missing == Some(OnMissing::Stub) {
            f.write_str(" on_missing=stub")?;
        }
        if let Some(n) = self.repeat_max {
            write!(f, " repeat_max={n}")?;
        }
        Ok(())
    }
}

impl ReplayLine {
    /// The command a user can paste.
    pub fn command(&self) -> String {
        format!("agentsim replay '{self}'")
    }

    /// Parses a replay line; the error names the missing or malformed key.
    pub fn parse(line: &str) -> Result<ReplayLine, ReplayLineError> {
        let (mut scenario, mut runtime, mut seed, mut trial, mut schedule) =
            (None, None, None, None, None);
        let mut on_missing = None;
        let mut repeat_max = None;
        let mut seen: Vec<&str> = Vec::new();
        let tokens = line
            .split_whitespace()
            .map(|t| t.trim_matches(|c| c == '\'' || c == '"'));
        for tok in tokens {
            let Some((k, v)) = tok.split_once('=') else {
                continue;
            };
            // A key given twice is a hand-edited or pasted-together line: refuse it here
            // rather than keep the last value and replay a different trial.
            if seen.contains(&k) {
                return Err(ReplayLineError::Duplicate(k.to_owned()));
            }
            seen.push(k);
            let num = |v: &str| {
                v.parse::<u64>().map_err(|_| ReplayLineError::NotANumber {
                    key: k.to_owned(),
                    value: v.to_owned(),
                })
            };
            match k {
                "scenario" => scenario = Some(PathBuf::from(v)),
                "runtime" => runtime = Some(Stack::parse(v)?),
                "seed" => seed = Some(num(v)?),
                "trial" => trial = Some(num(v)?),
                "schedule" => schedule = Some(Schedule::parse(v)?),
                "on_missing" => on_missing = Some(OnMissing::parse(v)?),
                "repeat_max" => match num(v)? {
                    n @ 1..=0xFFFF_FFFF => repeat_max = Some(n as u32),
                    _ => return Err(ReplayLineError::RepeatMax(v.to_owned())),
                },
                _ => return Err(ReplayLineError::UnknownKey(k.to_owned())),
            }
        }
        let need = |key: &'static str| ReplayLineError::Missing {
            key,
            line: line.to_owned(),
        };
        Ok(ReplayLine {
            scenario: scenario.ok_or_else(|| need("scenario"))?,
            runtime: runtime.ok_or_else(|| need("runtime"))?,
            seed: seed.ok_or_else(|| need("seed"))?,
            trial: trial.ok_or_else(|| need("trial"))?,
            schedule: schedule.ok_or_else(|| need("schedule"))?,
            on_missing,
            repeat_max,
        })
    }
}

/// A replay line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayLineError {
    #[error("`{key}={value}` is not a number")]
    NotANumber { key: String, value: String },
    #[error("`repeat_max={0}` is not a repeat cap (1 to 4294967295)")]
    RepeatMax(String),
    #[error("unknown key `{0}` in replay line")]
    UnknownKey(String),
    #[error("key `{0}=` appears twice in the replay line; keep one")]
    Duplicate(String),
    #[error("replay line lacks `{key}=`: {line}")]
    Missing { key: &'static str, line: String },
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(transparent)]
    OnMissing(#[from] UnknownOnMissing),
    #[error(transparent)]
    Runtime(#[from] StackError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_prefixes() {
        let l = ReplayLine {
            scenario: "scenarios/examples/edit-review.toml".into(),
            runtime: Stack::parse("vanilla").unwrap(),
            seed: 7,
            trial: 3,
            schedule: Schedule::parse("S1:20:4=1").unwrap(),
            on_missing: Some(OnMissing::Stub),
            repeat_max: None,
        };
        assert_eq!(ReplayLine::parse(&l.to_string()), Ok(l.clone()));
        let capped = ReplayLine {
            repeat_max: Some(2),
            ..l.clone()
        };
        assert!(capped.to_string().ends_with(" repeat_max=2"));
        assert_eq!(ReplayLine::parse(&capped.to_string()), Ok(capped));
        assert!(ReplayLine::parse(&format!("{l} repeat_max=0")).is_err());
        let printed = format!("replay: {}", l.command());
        assert_eq!(ReplayLine::parse(&printed), Ok(l));
        assert!(
            ReplayLine::parse("scenario=x runtime=vanilla seed=1 trial=2")
                .unwrap_err()
                .to_string()
                .contains("schedule")
        );
        assert!(ReplayLine::parse("seed=x")
            .unwrap_err()
            .to_string()
            .contains("number"));
    }

    #[test]
    fn a_duplicated_key_is_named() {
        let line = "scenario=x runtime=vanilla seed=1 trial=2 schedule=S1:3:- seed=4";
        assert_eq!(
            ReplayLine::parse(line),
            Err(ReplayLineError::Duplicate("seed".into()))
        );
        let e = ReplayLine::parse("scenario=a scenario=b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`scenario=` appears twice"), "{e}");
    }
}
