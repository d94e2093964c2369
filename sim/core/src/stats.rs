//! Proportions with Wilson score intervals (Wilson 1927), the interval the summaries print.
//!
//! The Wilson interval stays inside [0, 1] and behaves at k = 0 and k = n, where the normal
//! ("Wald") interval collapses to a point. A pass of the tests pins reference values; it says
//! nothing about coverage at tiny n, which is a property of the method, not of this code.

use serde::Serialize;

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// What [`Proportion`]'s interval is, as figures label it.
pub const INTERVAL: &str = "95% Wilson";

/// k successes out of n trials, with the Wilson 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Proportion {
    pub k: u64,
    pub n: u64,
    pub rate: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Proportion {
    /// The proportion k/n with its Wilson 95 % interval (n = 0 gives rate 0 and [0, 1]).
    pub fn new(k: u64, n: u64) -> Proportion {
        assert!(k <= n, "k = {k} exceeds n = {n}");
        let (lo, hi) = wilson(k, n, Z95);
        let rate = if n == 0 { 0.0 } else { k as f64 / n as f64 };
        Proportion { k, n, rate, lo, hi }
    }

    /// `k/N [lo, hi]` with percentages ([`percent`]).
    pub fn display(&self) -> String {
        format!(
            "{}/{} = {} % [{}, {}]",
            self.k,
            self.n,
            percent(self.rate),
            percent(self.lo),
            percent(self.hi)
        )
    }
}

/// A fraction as a percentage with one decimal, or as many as keep its first significant
/// digit when it is below 0.05 % (2/10000 is `0.02`, not `0.0`, which reads as none); 0 is
/// `0.0`. Not finite: `NaN` as Rust prints it (callers say what is not measured).
pub fn percent(fraction: f64) -> String {
    let v = 100.0 * fraction;
    if v == 0.0 || !v.is_finite() || v.abs() >= 0.05 {
        return format!("{v:.1}");
    }
    let decimals = (1.0 + (-v.abs().log10()).floor()).clamp(2.0, 9.0) as usize;
    format!("{v:.decimals$}")
}

/// The Wilson score interval for k successes in n trials at normal quantile z.
pub fn wilson(k: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = k as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    let lo = if k == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

/// The mean of whole numbers, 0 for an empty slice (summed in order: deterministic).
pub fn mean(xs: impl IntoIterator<Item = u64>) -> f64 {
    let (mut sum, mut n) = (0u128, 0u64);
    for x in xs {
        sum += u128::from(x);
        n += 1;
    }
    if n == 0 {
        0.0
    } else {
        sum as f64 / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn reference_values() {
        // Reference: Newcombe (1998), Table I, method 3 (score interval without correction).
        let (lo, hi) = wilson(81, 263, Z95);
        assert!(close(lo, 0.2553) && close(hi, 0.3662), "{lo} {hi}");
        let (lo, hi) = wilson(0, 10, Z95);
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(1000, 1000, Z95);
        assert!(close(lo, 0.99617) && close(hi, 1.0), "{lo} {hi}");
    }

    #[test]
    fn empty_and_mean() {
        assert_eq!(wilson(0, 0, Z95), (0.0, 1.0));
        assert_eq!(mean([1, 2, 3, 4]), 2.5);
        assert_eq!(mean([]), 0.0);
        assert_eq!(Proportion::new(1, 4).display(), "1/4 = 25.0 % [4.6, 69.9]");
    }

    #[test]
    fn small_percentages_keep_a_significant_digit() {
        assert_eq!(percent(0.0), "0.0");
        assert_eq!(percent(2.0 / 10_000.0), "0.02");
        assert_eq!(percent(3.0 / 1_000_000.0), "0.0003");
        assert_eq!(percent(0.00043), "0.04");
        assert_eq!(percent(0.0006), "0.1");
        assert_eq!(percent(0.123), "12.3");
        assert_eq!(percent(1.0), "100.0");
    }
}
