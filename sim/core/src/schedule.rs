//! The compact, versioned schedule string that replays a trial's scheduling decisions.
//!
//! `S1:<events>:<choices>[:stop=<n>]` — `S1` is the format version; `<events>` the number of
//! events the trial executed (a check on replay); `<choices>` the scheduling points where the
//! scheduler did *not* take the earliest-due event, as `event=position` pairs joined by `,`
//! (`-` when there are none; `position` indexes the enabled events ordered by due time, then
//! agent); `stop=<n>` cuts the trial after n events (shrinking uses it). Everything else a
//! trial does follows from the seed, so seed + this string reproduce the history exactly.
//!
//! `X1:<events>:<choices>[:stop=<n>]` is the same shape for a trial whose time is abstracted
//! (`agentsim explore`): every agent with a pending event is enabled, ordered by agent, and
//! every nondeterministic draw that can change the history (a `prob` of a branch, retract or
//! registry step, a `pick`, an effect completion order) is a choice point too. `<choices>`
//! then maps the index of each choice point with two or more alternatives (counted from 0 in
//! the order the trial meets them) to the alternative taken, when not 0. A trailing
//! `:timed=LO,HI` marks a timed exploration's path (`agentsim explore --timed`): only the
//! orders the latency bounds allow are alternatives, a `lognormal` kept between the LO and HI
//! quantiles, so replay must run timed too; lines without it parse as before. A `:park` after
//! the budget marks a path explored with polling loops parked (an agent whose last loop
//! iteration changed nothing and read nothing since written waits for a write instead of
//! spinning; see `explore::park`), so replay parks too. See docs/exploring.md.

use crate::bounds::Quantiles;
use std::collections::BTreeMap;
use std::fmt;

/// The version tag of the format this build writes and reads.
pub const TAG: &str = "S1";
/// The tag of an abstract-time (explored) schedule.
pub const TAG_ABSTRACT: &str = "X1";

/// How a schedule's choices are indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// `S1`: by event, among the events due within the scenario's window (simulate).
    #[default]
    Timed,
    /// `X1`: by choice point, time abstracted (explore).
    Abstract,
}

/// The scheduling decisions of one trial.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Events executed (0 when unknown, e.g. a hand-written string).
    pub events: u64,
    /// Event index → position chosen, for every non-default choice.
    pub choices: BTreeMap<u64, u32>,
    /// Stop after this many events.
    pub stop: Option<u64>,
    /// `S1` (timed, by event) or `X1` (abstract, by choice point).
    pub timing: Timing,
    /// `X1` only: the per-agent step budget the trial ran under (`steps=<n>`): an agent that
    /// has taken this many steps takes no more.
    pub steps_per_agent: Option<u64>,
    /// `X1` only: the path of a timed exploration (`timed=<lo>,<hi>`), with the quantiles a
    /// `lognormal` latency was kept between.
    pub timed: Option<Quantiles>,
    /// `X1` only: polling loops were parked (`park`).
    pub park: bool,
    /// `X1` only: the path is a lasso of `explore --liveness` (`cycle=<n>`): its last `n`
    /// events are a cycle that returns to the state it starts from (`cycle=0`: the run
    /// stutters forever at the stem's end, where no agent is enabled). A replay runs the
    /// stem, then the cycle twice, checking that the state repeats.
    pub cycle: Option<u64>,
}

impl Schedule {
    /// Number of non-default choices (context switches away from time order).
    pub fn deviations(&self) -> usize {
        self.choices.len()
    }

    /// The position to take at `event` (0, the earliest-due, unless recorded otherwise).
    pub fn choice_at(&self, event: u64) -> u32 {
        self.choices.get(&event).copied().unwrap_or(0)
    }

    /// Parses a schedule string; the error says which part is wrong.
    pub fn parse(s: &str) -> Result<Schedule, ScheduleError> {
        let err = |problem| ScheduleError {
            text: s.to_owned(),
            problem,
        };
        let mut parts = s.trim().split(':');
        let tag = parts.next().unwrap_or("");
        let timing = match tag {
            TAG => Timing::Timed,
            TAG_ABSTRACT => Timing::Abstract,
            _ => return Err(err(Problem::Tag(tag.to_owned()))),
        };
        let events = parts.next().ok_or_else(|| err(Problem::NoEvents))?;
        let events = events
            .parse()
            .map_err(|_| err(Problem::Events(events.to_owned())))?;
        let list = parts.next().ok_or_else(|| err(Problem::NoChoices))?;
        let mut out = Schedule {
            events,
            timing,
            ..Schedule::default()
        };
        if list != "-" {
            for pair in list.split(',') {
                let (e, c) = pair
                    .split_once('=')
                    .and_then(|(e, c)| Some((e.parse().ok()?, c.parse().ok()?)))
                    .ok_or_else(|| err(Problem::Pair(pair.to_owned())))?;
                if out.choices.insert(e, c).is_some() {
                    return Err(err(Problem::Duplicate(e)));
                }
            }
        }
        let mut rest = parts.peekable();
        let later = |p: &str| {
            p.starts_with("steps=")
                || p.starts_with("timed=")
                || p.starts_with("cycle=")
                || p == "park"
        };
        if let Some(stop) = rest.next_if(|p| !later(p)) {
            let n = stop
                .strip_prefix("stop=")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| err(Problem::Stop(stop.to_owned())))?;
            out.stop = Some(n);
        }
        if timing == Timing::Abstract {
            if let Some(steps) = rest
                .next_if(|p| !p.starts_with("timed=") && !p.starts_with("cycle=") && *p != "park")
            {
                let n = steps
                    .strip_prefix("steps=")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| err(Problem::Steps(steps.to_owned())))?;
                out.steps_per_agent = Some(n);
            }
            out.park = rest.next_if(|p| *p == "park").is_some();
            if let Some(cycle) = rest.next_if(|p| p.starts_with("cycle=")) {
                let n = cycle
                    .strip_prefix("cycle=")
                    .and_then(|n| n.parse().ok())
                    .filter(|&n: &u64| out.stop.is_some_and(|s| n <= s))
                    .ok_or_else(|| err(Problem::Cycle(cycle.to_owned())))?;
                out.cycle = Some(n);
            }
            if let Some(timed) = rest.next() {
                let q = timed
                    .strip_prefix("timed=")
                    .and_then(|q| Quantiles::parse(q).ok())
                    .ok_or_else(|| err(Problem::Timed(timed.to_owned())))?;
                out.timed = Some(q);
            }
        }
        if let Some(extra) = rest.next() {
            return Err(err(Problem::Extra(extra.to_owned())));
        }
        Ok(out)
    }
}

/// A schedule string that does not parse: the text and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("schedule `{text}`: {problem}")]
pub struct ScheduleError {
    pub text: String,
    pub problem: Problem,
}

/// Which part of a schedule string is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("expected version tag `{TAG}` or `{TAG_ABSTRACT}`, found `{0}`")]
    Tag(String),
    #[error("missing event count")]
    NoEvents,
    #[error("event count `{0}` is not a number")]
    Events(String),
    #[error("missing choices")]
    NoChoices,
    #[error("`{0}` is not event=position")]
    Pair(String),
    #[error("event {0} has two choices")]
    Duplicate(u64),
    #[error("`{0}` is not stop=<events>")]
    Stop(String),
    #[error("`{0}` is not steps=<per-agent step budget>")]
    Steps(String),
    #[error("`{0}` is not cycle=<events> (at most the path's stop=<events>)")]
    Cycle(String),
    #[error("`{0}` is not timed=<lo>,<hi> (quantiles, as in timed=0.001,0.999)")]
    Timed(String),
    #[error("unexpected `{0}`")]
    Extra(String),
}

impl std::str::FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(s: &str) -> Result<Schedule, ScheduleError> {
        Schedule::parse(s)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.timing {
            Timing::Timed => TAG,
            Timing::Abstract => TAG_ABSTRACT,
        };
        write!(f, "{tag}:{}:", self.events)?;
        if self.choices.is_empty() {
            f.write_str("-")?;
        }
        for (i, (e, c)) in self.choices.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{e}={c}")?;
        }
        if let Some(stop) = self.stop {
            write!(f, ":stop={stop}")?;
        }
        if let Some(steps) = self.steps_per_agent {
            write!(f, ":steps={steps}")?;
        }
        if self.park {
            f.write_str(":park")?;
        }
        if let Some(n) = self.cycle {
            write!(f, ":cycle={n}")?;
        }
        if let Some(q) = self.timed {
            write!(f, ":timed={q}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for s in [
            "S1:12:-",
            "S1:57:3=1,12=2",
            "S1:9:4=1:stop=7",
            "X1:9:0=2:stop=4",
            "X1:9:-:steps=40",
            "X1:9:0=1:steps=40:timed=0.001,0.999",
            "X1:9:-:stop=3:timed=0.05,0.95",
            "X1:9:0=1:steps=40:park",
            "X1:9:-:park",
            "X1:9:0=1:stop=9:park:cycle=4",
            "X1:9:-:stop=9:cycle=9",
        ] {
            assert_eq!(Schedule::parse(s).unwrap().to_string(), s);
        }
        let s = Schedule::parse("S1:57:3=1,12=2").unwrap();
        assert_eq!((s.choice_at(3), s.choice_at(4), s.deviations()), (1, 0, 2));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert!(Schedule::parse("S2:1:-")
            .unwrap_err()
            .to_string()
            .contains("version"));
        assert!(Schedule::parse("S1:x:-")
            .unwrap_err()
            .to_string()
            .contains("event count"));
        assert!(Schedule::parse("S1:3:1-2")
            .unwrap_err()
            .to_string()
            .contains("event=position"));
        assert!(Schedule::parse("S1:3:0=1,0=2")
            .unwrap_err()
            .to_string()
            .contains("two choices"));
        assert!(Schedule::parse("X1:3:-:steps=4:timed=0.9,0.1")
            .unwrap_err()
            .to_string()
            .contains("timed="));
        for bad in [
            "X1:9:-:stop=9:cycle=x",
            "X1:9:-:stop=3:cycle=4",
            "X1:9:-:cycle=2",
        ] {
            assert!(
                Schedule::parse(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("cycle="),
                "{bad}"
            );
        }
        assert!(Schedule::parse("S1:3:-:halt=2")
            .unwrap_err()
            .to_string()
            .contains("stop="));
    }
}
