//! Latency and token distributions of scenario files: fixed, uniform, lognormal.
//!
//! Sampling is written out by hand on top of `next_u64` (53-bit uniforms, Box–Muller normals)
//! so that the numbers depend only on the ChaCha8 stream, never on a library's sampling
//! algorithm. Samples are rounded to whole units (milliseconds or tokens) and never negative.
//! A pass of the tests says samples stay in range and follow the median; it does not prove
//! the shape of the distribution beyond that.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

/// A distribution over non-negative whole numbers (milliseconds or tokens).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Dist {
    /// Always this value: `{ fixed = 1000 }`.
    Fixed(f64),
    /// Uniform on `[lo, hi]`: `{ uniform = [500, 1500] }`.
    Uniform([f64; 2]),
    /// Log-normal with the given median and log-space standard deviation:
    /// `{ lognormal = { median = 4000, sigma = 0.5 } }`.
    Lognormal(Lognormal),
}

/// The largest distribution parameter (a `fixed` value, a `uniform` bound, a `lognormal`
/// median), in milliseconds or tokens: 10^15, far below the largest sample, so a parameter
/// is never clamped.
pub const DIST_VALUE_MAX: f64 = 1e15;
/// The largest `lognormal` sigma (log-space standard deviation).
pub const SIGMA_MAX: f64 = 10.0;

/// Parameters that no distribution of that shape has, or past the documented limits.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum DistError {
    #[error("fixed value {0} must be finite and in 0..=1e15")]
    Fixed(f64),
    #[error("uniform [{0}, {1}] needs 0 ≤ lo ≤ hi ≤ 1e15, both finite")]
    Uniform(f64, f64),
    #[error("lognormal median {0} must be finite and in 0..=1e15, sigma {1} in 0..=10")]
    Lognormal(f64, f64),
}

/// Parameters of a log-normal distribution.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lognormal {
    pub median: f64,
    pub sigma: f64,
}

impl Dist {
    /// The distribution that is always zero.
    pub const ZERO: Dist = Dist::Fixed(0.0);

    /// Checks the parameters; the error says what is wrong.
    pub fn validate(&self) -> Result<(), DistError> {
        // `(0.0..=max).contains` is false for NaN and for either infinity.
        let ok = |x: f64| (0.0..=DIST_VALUE_MAX).contains(&x);
        match *self {
            Dist::Fixed(v) if !ok(v) => Err(DistError::Fixed(v)),
            Dist::Uniform([lo, hi]) if !ok(lo) || !ok(hi) || lo > hi => {
                Err(DistError::Uniform(lo, hi))
            }
            Dist::Lognormal(l) if !ok(l.median) || !(0.0..=SIGMA_MAX).contains(&l.sigma) => {
                Err(DistError::Lognormal(l.median, l.sigma))
            }
            _ => Ok(()),
        }
    }

    /// Draws one sample, rounded to a whole number. `Fixed` draws nothing from the stream.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        let x = match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform([lo, hi]) => lo + (hi - lo) * unit(rng),
            Dist::Lognormal(l) => l.median * (l.sigma * normal(rng)).exp(),
        };
        whole(x)
    }

    /// The median (for documentation and estimates).
    pub fn median(&self) -> f64 {
        match *self {
            Dist::Fixed(v) => v,
            Dist::Uniform([lo, hi]) => (lo + hi) / 2.0,
            Dist::Lognormal(l) => l.median,
        }
    }
}

/// The largest sample: a huge lognormal tail saturates here, far beyond any horizon, rather
/// than wrapping.
const SAMPLE_MAX: f64 = (u64::MAX / 4) as f64;

/// `x.round().clamp(0.0, SAMPLE_MAX) as u64` (round half away from zero; NaN and negatives
/// give 0), the same number for every `x`, without calling `f64::round`: on baseline x86-64
/// that is a libm call, and it ran on every sample of the simulator's hot path.
pub(crate) fn whole(x: f64) -> u64 {
    // NaN, negatives and zero all give 0.
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= SAMPLE_MAX {
        return SAMPLE_MAX as u64;
    }
    // 0 < x < 2^62: the truncation is exact and so is `x - t` (x and t share an exponent,
    // or t is 0), and from 2^52 up x is already whole.
    let t = x as u64;
    if x - t as f64 >= 0.5 {
        t + 1
    } else {
        t
    }
}

/// A uniform double in [0, 1) from the top 53 bits of one word.
pub fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal by Box–Muller (two words per sample; the second normal is discarded so
/// that each sample consumes a fixed amount of the stream).
pub fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - unit(rng); // (0, 1]: ln is finite
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A uniform integer in `0..n` (n ≥ 1) by multiply-shift; the bias is below 2^-32 for the
/// small `n` the simulator uses.
pub fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    assert!(n >= 1, "below(0) has no value");
    ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
}

/// A Bernoulli trial with probability `p` (p ≥ 1 draws nothing; p ≤ 0 draws nothing).
pub fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    if p >= 1.0 {
        return true;
    }
    if p <= 0.0 {
        return false;
    }
    unit(rng) < p
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_stay_in_range_and_follow_the_median() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let u = Dist::Uniform([100.0, 200.0]);
        let l = Dist::Lognormal(Lognormal {
            median: 1000.0,
            sigma: 0.5,
        });
        let mut below_median = 0;
        for _ in 0..10_000 {
            let x = u.sample(&mut rng);
            assert!((100..=200).contains(&x));
            if l.sample(&mut rng) < 1000 {
                below_median += 1;
            }
        }
        assert!((4_700..5_300).contains(&below_median), "{below_median}");
        assert_eq!(Dist::Fixed(3.4).sample(&mut rng), 3);
    }

    /// `whole` is `round` then `clamp` then `as`, exactly, on halves, their neighbours, the
    /// clamp's edges, specials and a wide random spread.
    #[test]
    fn whole_is_round_clamp_cast() {
        let reference = |x: f64| x.round().clamp(0.0, SAMPLE_MAX) as u64;
        let near = |x: f64| {
            let b = x.to_bits();
            [f64::from_bits(b - 1), x, f64::from_bits(b + 1)]
        };
        let mut xs = vec![
            0.0,
            -0.0,
            -0.5,
            -0.7,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            SAMPLE_MAX,
            2.0 * SAMPLE_MAX,
            f64::MAX,
        ];
        for k in [
            0u64,
            1,
            2,
            3,
            1000,
            4_503_599_627_370_495,
            4_503_599_627_370_496,
        ] {
            xs.extend(near(k as f64 + 0.5));
            xs.extend(near(k as f64 + 1.0));
        }
        xs.extend(near(SAMPLE_MAX));
        xs.extend(near(9_007_199_254_740_992.0));
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..200_000 {
            let scale = 2f64.powi(below(&mut rng, 70) as i32 - 4);
            xs.push(unit(&mut rng) * scale);
            xs.push(f64::from_bits(rng.next_u64()));
        }
        for x in xs {
            assert_eq!(whole(x), reference(x), "{x:e} ({:#x})", x.to_bits());
        }
    }

    #[test]
    fn validation_names_the_problem() {
        assert!(Dist::Uniform([5.0, 1.0]).validate().is_err());
        assert!(Dist::Fixed(-1.0).validate().is_err());
        assert!(Dist::Fixed(f64::NAN).validate().is_err());
        assert!(Dist::ZERO.validate().is_ok());
        // Past the documented limits: refused, never clamped.
        assert!(Dist::Fixed(1e19).validate().is_err());
        assert!(Dist::Fixed(DIST_VALUE_MAX).validate().is_ok());
        assert!(Dist::Uniform([0.0, f64::INFINITY]).validate().is_err());
        let l = |median, sigma| Dist::Lognormal(Lognormal { median, sigma });
        assert!(l(1000.0, 10.5).validate().is_err());
        assert!(l(1000.0, f64::NAN).validate().is_err());
        assert!(l(1000.0, 0.5).validate().is_ok());
    }

    #[test]
    fn below_covers_its_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = [0u32; 3];
        for _ in 0..3000 {
            seen[below(&mut rng, 3)] += 1;
        }
        assert!(seen.iter().all(|&k| k > 900), "{seen:?}");
    }
}
