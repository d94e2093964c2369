//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte,
//! ASPLOS 2010) with bug depth d.
//!
//! At the start of a trial every agent gets a distinct random priority in d..d+n; d − 1
//! priority change points are drawn uniformly among the first k events (k = the scenario's
//! step estimate). At each event the enabled agent with the highest priority runs; when the
//! event index is the j-th change point, that agent's priority drops to j (below every initial
//! priority) before the choice is made again. For a bug of depth d among n agents and k steps
//! PCT finds it with probability at least 1/(n·k^(d−1)) per trial; that bound is the paper's
//! theorem, not something these tests prove.

use super::{scheduler_rng, Scheduler};
use crate::dist::below;

/// The PCT scheduler.
#[derive(Clone, Debug)]
pub struct Pct {
    depth: u32,
    priority: Vec<u32>,
    /// (event index, new priority j), sorted by event.
    change_points: Vec<(u64, u32)>,
}

impl Pct {
    /// PCT with bug depth `depth` ≥ 1.
    pub fn new(depth: u32) -> Self {
        assert!(depth >= 1, "PCT depth must be at least 1");
        Self {
            depth,
            priority: Vec::new(),
            change_points: Vec::new(),
        }
    }

    fn best(&self, enabled: &[usize]) -> usize {
        let mut best = 0;
        for (pos, &a) in enabled.iter().enumerate() {
            if self.priority[a] > self.priority[enabled[best]] {
                best = pos;
            }
        }
        best
    }
}

impl Scheduler for Pct {
    fn start_trial(&mut self, trial_seed: u64, agents: usize, steps_hint: usize) {
        let mut rng = scheduler_rng(trial_seed);
        // A random permutation of d..d+n (Fisher–Yates).
        self.priority = (0..agents as u32).map(|i| self.depth + i).collect();
        for i in (1..agents).rev() {
            let j = below(&mut rng, i + 1);
            self.priority.swap(i, j);
        }
        self.change_points = (1..self.depth)
            .map(|j| (below(&mut rng, steps_hint.max(1)) as u64, j))
            .collect();
        self.change_points.sort_unstable();
    }

    fn choose(&mut self, event: u64, enabled: &[usize]) -> usize {
        assert!(!enabled.is_empty(), "choose needs an enabled event");
        assert!(
            enabled.iter().all(|&a| a < self.priority.len()),
            "start_trial first"
        );
        let mut pos = self.best(enabled);
        let hits = self.change_points.iter().filter(|&&(e, _)| e == event);
        for &(_, j) in hits {
            self.priority[enabled[pos]] = j;
            pos = self.best(enabled);
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_one_is_a_fixed_priority_order() {
        let mut p = Pct::new(1);
        p.start_trial(3, 3, 100);
        let first = p.choose(0, &[0, 1, 2]);
        for e in 1..50 {
            assert_eq!(p.choose(e, &[0, 1, 2]), first);
        }
    }

    #[test]
    fn a_change_point_demotes_the_running_agent() {
        let mut p = Pct::new(2);
        p.start_trial(11, 2, 4);
        let (cp, _) = p.change_points[0];
        let before = p.choose(cp.saturating_sub(1).min(cp), &[0, 1]);
        let at = p.choose(cp, &[0, 1]);
        if cp > 0 {
            assert_ne!(before, at, "the top agent is demoted at the change point");
        }
        assert_eq!(p.change_points.len(), 1);
    }
}
