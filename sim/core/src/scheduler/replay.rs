//! The replay scheduler: takes the choices of a [`Schedule`] string, position 0 elsewhere.
//!
//! Replaying the same seed with the recorded choices reproduces the trial exactly, because
//! schedulers never touch the engine's RNG. A choice beyond the enabled set (a candidate the
//! shrinker tries) is clamped to the last position rather than rejected, so every string is a
//! schedule the engine can run; such a run is still deterministic, just a different trial.
//! `agentsim replay` refuses a line whose choices the run did not take (it compares them with
//! the schedule the engine records), and the shrinker prints only choices that were taken.

use super::{ChoicePoint, Chooser, Scheduler};
use crate::schedule::{Schedule, Timing};

/// Follows a recorded schedule.
#[derive(Clone, Debug)]
pub struct Replay {
    schedule: Schedule,
    /// The next choice point of an abstract-time trial.
    point: u64,
}

impl Replay {
    pub fn new(schedule: Schedule) -> Self {
        Self { schedule, point: 0 }
    }
}

impl Chooser for Replay {
    fn start(&mut self) {
        self.point = 0;
    }

    fn pick(&mut self, point: &ChoicePoint<'_>) -> usize {
        assert!(point.n >= 2, "a choice point has two alternatives or more");
        let k = self.schedule.choice_at(self.point) as usize;
        self.point += 1;
        k.min(point.n - 1)
    }

    fn steps_per_agent(&self) -> Option<u64> {
        self.schedule.steps_per_agent
    }

    fn parks(&self) -> bool {
        self.schedule.park
    }
}

impl Scheduler for Replay {
    fn start_trial(&mut self, _trial_seed: u64, _agents: usize, _steps_hint: usize) {}

    fn choose(&mut self, event: u64, enabled: &[usize]) -> usize {
        assert!(!enabled.is_empty(), "choose needs an enabled event");
        (self.schedule.choice_at(event) as usize).min(enabled.len() - 1)
    }

    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        match self.schedule.timing {
            Timing::Timed => None,
            Timing::Abstract => Some(self),
        }
    }

    fn timed(&self) -> Option<crate::bounds::Quantiles> {
        self.schedule.timed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_and_clamps() {
        let mut r = Replay::new(Schedule::parse("S1:10:2=1,4=5").unwrap());
        r.start_trial(0, 2, 10);
        assert_eq!(r.choose(1, &[0, 1]), 0);
        assert_eq!(r.choose(2, &[0, 1]), 1);
        assert_eq!(r.choose(4, &[0, 1]), 1);
    }
}
