//! The Pareto front of the realizing stacks: which stacks a runtime designer
//! need consider, given what each excludes and what it costs on the workloads.
//!
//! A stack's costs are its token overhead, makespan overhead and drops per session, each the
//! mean over the workloads (the cost experiment's rows, paired by seed against `vanilla`). A stack
//! is on the front when no other excludes a superset of its anomalies at no more of any cost
//! and is strictly better somewhere (a larger set, or a lower cost). Drops are a cost beside
//! tokens and makespan: an operation dropped before generation spends no tokens, so a dropping
//! stack can look cheaper than `vanilla` by doing less work (docs/experiments.md's note on
//! `pessimistic`); without drops it would dominate stacks that finish their work. The front
//! compares means; two stacks whose intervals overlap may swap places at other samples.

use crate::artifacts::figures::{Estimate, ParetoData, ParetoPoint};
use agentsim_models::lattice::Point;
use agentsim_models::runtime::Stack;

/// The mean of independent estimates, its interval's half-width the root of the summed
/// squared half-widths over their number (the normal approximation each already makes).
pub fn mean_of_estimates(es: &[Estimate]) -> Estimate {
    if es.is_empty() || es.iter().any(|e| !e.is_valid()) {
        return Estimate::MISSING;
    }
    let n = es.len() as f64;
    let mean = es.iter().map(|e| e.mean).sum::<f64>() / n;
    let half = es
        .iter()
        .map(|e| ((e.hi - e.lo) / 2.0).powi(2))
        .sum::<f64>()
        .sqrt()
        / n;
    Estimate {
        mean,
        lo: mean - half,
        hi: mean + half,
    }
}

/// What a stack excludes and what it costs, for the front: tokens, makespan and drops.
pub type Costed = (Point, [f64; 3]);

/// Whether entry `i` is dominated: another excludes a superset of its anomalies at no more of
/// any cost, and is strictly better somewhere (a larger set or a lower cost).
pub fn dominated(i: usize, points: &[Costed]) -> bool {
    let (p, c) = points[i];
    points.iter().enumerate().any(|(j, &(q, d))| {
        let no_worse = d.iter().zip(&c).all(|(x, y)| x <= y);
        let better = q != p || d.iter().zip(&c).any(|(x, y)| x < y);
        j != i && p.subset_of(q) && no_worse && better
    })
}

/// One stack and its costs in each scenario, in one scenario order for every stack.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The point the stack realizes.
    pub excludes: Point,
    pub stack: Stack,
    pub token_overhead: Vec<Estimate>,
    pub makespan_overhead: Vec<Estimate>,
    /// Drops per session.
    pub drops: Vec<Estimate>,
}

/// The figure's data: each stack's guarantee, its overheads and drops averaged over the
/// scenarios `over`, and whether it is on the Pareto front.
pub fn figure_data(over: Vec<String>, stacks: &[Measured]) -> ParetoData {
    let means = |es: &[Estimate]| es.iter().map(|e| e.mean).collect::<Vec<f64>>();
    let mut pts: Vec<Costed> = Vec::new();
    let mut points = Vec::new();
    for m in stacks {
        let tokens = mean_of_estimates(&m.token_overhead);
        let makespan = mean_of_estimates(&m.makespan_overhead);
        let drops = mean_of_estimates(&m.drops).mean;
        pts.push((m.excludes, [tokens.mean, makespan.mean, drops]));
        points.push(ParetoPoint {
            stack: m.stack.to_string(),
            excludes: m.excludes.label(),
            strength: m.excludes.len(),
            token_overhead: tokens,
            makespan_overhead: makespan,
            drops,
            token_by_scenario: means(&m.token_overhead),
            makespan_by_scenario: means(&m.makespan_overhead),
            front: false,
        });
    }
    for (i, point) in points.iter_mut().enumerate() {
        point.front = !dominated(i, &pts);
    }
    ParetoData { over, points }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::Anomaly;

    #[test]
    fn domination_follows_the_lattice_order_and_both_costs() {
        let a1 = Point::of(&[Anomaly::A1]);
        let a1a2 = Point::of(&[Anomaly::A1, Anomaly::A2]);
        let a3 = Point::of(&[Anomaly::A3]);
        let pts = [
            (Point(0), [0.0, 0.0, 0.0]),
            (a1, [0.1, 0.1, 0.0]),
            (a1a2, [0.1, 0.1, 0.0]),
            (a3, [0.5, 0.0, 0.0]),
            (a1a2, [0.1, 0.2, 0.0]),
            (a1a2, [-0.3, 0.0, 2.0]),
        ];
        assert!(!dominated(0, &pts), "nothing is cheaper than vanilla");
        assert!(
            dominated(1, &pts),
            "{{A1,A2}} at the same cost dominates {{A1}}"
        );
        assert!(!dominated(2, &pts), "fewer tokens, but more drops");
        assert!(!dominated(3, &pts), "no superset of {{A3}} is listed");
        assert!(
            dominated(4, &pts),
            "the same set at more makespan is dominated"
        );
        assert!(!dominated(5, &pts), "cheapest in tokens and makespan");
    }

    #[test]
    fn the_mean_of_estimates_adds_their_variances() {
        let e = |mean: f64, half: f64| Estimate {
            mean,
            lo: mean - half,
            hi: mean + half,
        };
        let m = mean_of_estimates(&[e(0.1, 0.03), e(0.3, 0.04)]);
        assert!((m.mean - 0.2).abs() < 1e-12, "{m:?}");
        assert!((m.hi - m.mean - 0.025).abs() < 1e-12, "{m:?}");
        assert!(mean_of_estimates(&[]).mean.is_nan());
        assert!(mean_of_estimates(&[e(0.1, 0.0), Estimate::MISSING])
            .mean
            .is_nan());
    }
}
