//! The seeded random scheduler: a uniform choice among the enabled events.
//!
//! With `window_ms = 0` only exact ties are enabled together, so this is time order with
//! random tie-breaking; a wider window lets it run an event up to that much ahead of an
//! earlier-due one (modelling jitter). Uniform choice finds shallow interleavings quickly and
//! deep ones rarely; PCT is the scheduler with a depth guarantee.

use super::{scheduler_rng, Scheduler};
use crate::dist::below;
use rand_chacha::ChaCha8Rng;

/// Uniform random choice.
#[derive(Clone, Debug, Default)]
pub struct Random {
    /// The trial's seed, once `start_trial` has run.
    seed: Option<u64>,
    /// The trial's stream, created at the first real choice: many trials never have two
    /// events enabled at once, and seeding ChaCha costs more than a whole event. The draws
    /// are the same as with a stream created up front.
    rng: Option<ChaCha8Rng>,
}

impl Scheduler for Random {
    fn start_trial(&mut self, trial_seed: u64, _agents: usize, _steps_hint: usize) {
        self.seed = Some(trial_seed);
        self.rng = None;
    }

    fn choose(&mut self, _event: u64, enabled: &[usize]) -> usize {
        assert!(!enabled.is_empty(), "choose needs an enabled event");
        if enabled.len() == 1 {
            return 0;
        }
        let seed = self.seed.expect("start_trial before choose");
        let rng = self.rng.get_or_insert_with(|| scheduler_rng(seed));
        below(rng, enabled.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_uniform_enough() {
        let mut a = Random::default();
        let mut b = Random::default();
        a.start_trial(5, 3, 10);
        b.start_trial(5, 3, 10);
        let mut seen = [0; 3];
        for e in 0..300 {
            let x = a.choose(e, &[0, 1, 2]);
            assert_eq!(x, b.choose(e, &[0, 1, 2]));
            seen[x] += 1;
        }
        assert!(seen.iter().all(|&k| k > 60), "{seen:?}");
        assert_eq!(a.choose(0, &[2]), 0);
    }

    /// The stream is created lazily, but draws as one created at `start_trial` would, and a
    /// new trial starts it afresh.
    #[test]
    fn lazy_stream_draws_the_trial_streams_numbers() {
        let mut s = Random::default();
        for seed in [5, 9, 5] {
            s.start_trial(seed, 3, 10);
            let mut rng = scheduler_rng(seed);
            assert_eq!(s.choose(0, &[1]), 0);
            for e in 1..40 {
                assert_eq!(
                    s.choose(e, &[0, 1, 2]),
                    below(&mut rng, 3),
                    "seed {seed} event {e}"
                );
            }
        }
    }
}
