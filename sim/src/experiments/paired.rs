//! Paired estimates over seeded trials: token overhead of a runtime against `vanilla` on the
//! same trial seeds, and means with normal 95 % intervals.
//!
//! Trial k of every runtime uses the same trial seed, so the scenario's draws (start times,
//! latencies) agree until the runtimes' decisions diverge; pairing by seed removes the
//! between-session spread from the comparison. The overhead is the ratio of the mean paired
//! difference to the vanilla mean; its interval treats the vanilla mean as fixed (a delta
//! method would widen it slightly). A pass does not prove the normal approximation is good at
//! small n.

use crate::artifacts::figures::style::Estimate;
use agentsim_sim::stats::Z95;

/// What [`mean_interval`]'s interval is, as figures label it.
pub const MEAN_INTERVAL: &str = "95% normal";

/// What [`overhead`]'s interval is, as figures label it.
pub const OVERHEAD_INTERVAL: &str = "95% normal, paired by seed";

/// The mean of `xs` with a normal 95 % interval (the standard error of the mean).
pub fn mean_interval(xs: &[f64]) -> Estimate {
    let n = xs.len();
    if n == 0 {
        return Estimate::MISSING;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    let half = Z95 * (var / n as f64).sqrt();
    Estimate {
        mean,
        lo: mean - half,
        hi: mean + half,
    }
}

/// Token overhead of `runtime` over `base` paired by trial: mean(runtime_k − base_k) /
/// mean(base_k), with the interval of the mean difference scaled the same way.
pub fn overhead(base: &[u64], runtime: &[u64]) -> Estimate {
    assert_eq!(
        base.len(),
        runtime.len(),
        "paired runs have the same trials"
    );
    let diffs: Vec<f64> = base
        .iter()
        .zip(runtime)
        .map(|(&b, &r)| r as f64 - b as f64)
        .collect();
    let base_mean = base.iter().map(|&b| b as f64).sum::<f64>() / base.len().max(1) as f64;
    if base_mean <= 0.0 {
        return Estimate::MISSING;
    }
    let d = mean_interval(&diffs);
    Estimate {
        mean: d.mean / base_mean,
        lo: d.lo / base_mean,
        hi: d.hi / base_mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_of_identical_runs_is_zero_and_of_doubled_runs_is_one() {
        let base = [100, 200, 300];
        let same = overhead(&base, &base);
        assert_eq!((same.mean, same.lo, same.hi), (0.0, 0.0, 0.0));
        let doubled = overhead(&base, &[200, 400, 600]);
        assert!((doubled.mean - 1.0).abs() < 1e-12, "{doubled:?}");
        assert!(doubled.lo < 1.0 && doubled.hi > 1.0);
    }

    #[test]
    fn mean_interval_pins_a_reference() {
        let e = mean_interval(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(e.mean, 2.5);
        // sd = 1.2910, se = 0.6455, half = 1.2652
        assert!((e.hi - e.mean - 1.265_2).abs() < 1e-3, "{e:?}");
        assert!(mean_interval(&[]).mean.is_nan());
    }
}
