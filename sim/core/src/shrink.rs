//! Shrinking a failing trial: the shortest prefix of events and the fewest scheduling
//! deviations that still exhibit the anomaly.
//!
//! Two reductions, alternated once each way: (1) the smallest `stop` (events executed) that
//! still shows the anomaly, by binary search over the prefix length then verified (detection
//! is not monotone in general, e.g. a retraction can create A3 late, so a failed check keeps
//! the longer prefix); (2) delta debugging (Zeller and Hildebrandt, ddmin, TSE 2002) over the
//! schedule's non-default choices — each removed choice becomes plain time order. The result
//! is 1-minimal in choices with respect to the test: removing any single remaining choice
//! loses the anomaly. It is not necessarily globally minimal.

use crate::engine::SimError;
use crate::runner::{run_one, OneTrial};
use crate::scenario::{OnMissing, Scenario};
use crate::schedule::Schedule;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;

/// Default bound on replays during one shrink.
pub const RUNS_MAX: u64 = 20_000;

/// What to shrink.
pub struct ShrinkInput<'a> {
    pub scenario: &'a Scenario,
    pub runtime: Stack,
    pub seed: u64,
    pub trial: u64,
    pub schedule: Schedule,
    pub on_missing: Option<OnMissing>,
    /// The detector to preserve (`A1`…); `None` = the first one the trial exhibits.
    pub target: Option<Anomaly>,
    pub runs_max: u64,
}

/// The shrunk trial.
pub struct Shrunk {
    pub target: Anomaly,
    pub original: OneTrial,
    pub shrunk: OneTrial,
    pub schedule: Schedule,
    pub runs: u64,
    /// The run budget ran out before the reductions finished (raise `runs_max`).
    pub exhausted: bool,
}

/// Why a trial cannot be shrunk.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("the trial does not exhibit {0}: nothing to shrink")]
    NotExhibited(Anomaly),
    #[error("the trial exhibits no anomaly: nothing to shrink")]
    NoAnomaly,
}

struct Tester<'a> {
    input: &'a ShrinkInput<'a>,
    target: Anomaly,
    runs: u64,
}

impl Tester<'_> {
    /// The number of events of the trial under `s` if it keeps the anomaly.
    fn events_if_holds(&mut self, s: &Schedule) -> Result<Option<u64>, SimError> {
        if self.runs >= self.input.runs_max {
            return Ok(None);
        }
        self.runs += 1;
        let i = self.input;
        let t = run_one(i.scenario, i.runtime, i.seed, i.trial, s, i.on_missing)?;
        Ok(t.metrics.has(self.target).then_some(t.metrics.events))
    }

    fn holds(&mut self, s: &Schedule) -> Result<bool, SimError> {
        Ok(self.events_if_holds(s)?.is_some())
    }
}

/// Shrinks a trial.
pub fn shrink(input: &ShrinkInput<'_>) -> Result<Shrunk, ShrinkError> {
    let i = input;
    let original = run_one(
        i.scenario,
        i.runtime,
        i.seed,
        i.trial,
        &i.schedule,
        i.on_missing,
    )?;
    let target = match i.target {
        Some(t) if original.metrics.has(t) => t,
        Some(t) => return Err(ShrinkError::NotExhibited(t)),
        None => match original.metrics.anomalies.first() {
            Some(&a) => a,
            None if original.metrics.has(Anomaly::A3Residue) => Anomaly::A3Residue,
            None => return Err(ShrinkError::NoAnomaly),
        },
    };
    let mut t = Tester {
        input,
        target,
        runs: 0,
    };
    let mut s = i.schedule.clone();
    s.events = original.metrics.events;
    s = shorten(&mut t, s, original.metrics.events)?;
    let bound = s.stop.unwrap_or(s.events);
    // A removal counts only if the trial keeps the anomaly and gets no longer.
    let items: Vec<(u64, u32)> = s.choices.iter().map(|(&e, &c)| (e, c)).collect();
    let kept = ddmin(items, |sub| {
        let mut c = s.clone();
        c.choices = sub.iter().copied().collect();
        Ok::<_, SimError>(t.events_if_holds(&c)?.is_some_and(|e| e <= bound))
    })?;
    s.choices = kept.into_iter().collect();
    let events = t.events_if_holds(&s)?.unwrap_or(bound);
    s = shorten(&mut t, s, events)?;
    let shrunk = run_one(i.scenario, i.runtime, i.seed, i.trial, &s, i.on_missing)?;
    assert!(
        shrunk.metrics.has(target),
        "the shrunk schedule keeps the anomaly"
    );
    s.events = shrunk.metrics.events;
    // The choices the shrunk trial actually took: removals can leave a choice that is now
    // past the enabled events (the replay scheduler clamps it) or past the stop; the taken
    // ones replay the very same trial and are what `agentsim replay` accepts.
    s.choices = shrunk.run.schedule.choices.clone();
    let exhausted = t.runs >= i.runs_max;
    Ok(Shrunk {
        target,
        original,
        shrunk,
        schedule: s,
        runs: t.runs,
        exhausted,
    })
}

/// The smallest stop (by binary search, then verified) that keeps the anomaly.
fn shorten(t: &mut Tester<'_>, s: Schedule, events: u64) -> Result<Schedule, SimError> {
    let (mut lo, mut hi) = (0u64, events);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        let probe = Schedule {
            stop: Some(mid),
            ..s.clone()
        };
        if t.holds(&probe)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let cut = Schedule {
        stop: Some(hi),
        ..s.clone()
    };
    let mut out = if hi < events && t.holds(&cut)? {
        cut
    } else {
        s
    };
    let stop = out.stop.unwrap_or(u64::MAX);
    out.choices.retain(|&e, _| e < stop);
    Ok(out)
}

/// ddmin: a 1-minimal subset of `items` on which `test` still holds (assuming it holds on
/// `items`). Tests the empty set first.
pub fn ddmin<T: Clone, E>(
    items: Vec<T>,
    mut test: impl FnMut(&[T]) -> Result<bool, E>,
) -> Result<Vec<T>, E> {
    if test(&[])? {
        return Ok(Vec::new());
    }
    let mut c = items;
    let mut n = 2usize;
    while c.len() >= 2 {
        let size = c.len().div_ceil(n);
        let chunks: Vec<Vec<T>> = c.chunks(size).map(<[T]>::to_vec).collect();
        let mut next = None;
        for (k, chunk) in chunks.iter().enumerate() {
            if test(chunk)? {
                next = Some((chunk.clone(), 2));
                break;
            }
            let rest: Vec<T> = chunks
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .flat_map(|(_, ch)| ch.iter().cloned())
                .collect();
            if chunks.len() > 2 && test(&rest)? {
                next = Some((rest, (n - 1).max(2)));
                break;
            }
        }
        match next {
            Some((smaller, n2)) => {
                c = smaller;
                n = n2;
            }
            None if n >= c.len() => break,
            None => n = (2 * n).min(c.len()),
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddmin_finds_the_two_needed_items() {
        let items: Vec<u32> = (0..16).collect();
        let mut calls = 0;
        let out = ddmin(items, |s: &[u32]| {
            calls += 1;
            Ok::<_, ()>(s.contains(&3) && s.contains(&11))
        })
        .unwrap();
        assert_eq!(out, vec![3, 11]);
        assert!(calls < 60, "{calls}");
    }

    #[test]
    fn ddmin_returns_empty_when_nothing_is_needed() {
        let out = ddmin(vec![1, 2, 3], |_: &[i32]| Ok::<_, ()>(true)).unwrap();
        assert!(out.is_empty());
    }
}
