//! The bounds a latency keeps in timed exploration (`agentsim explore --timed`): `fixed`
//! exactly, `uniform` its interval, `lognormal` between two stated quantiles, each as the
//! whole milliseconds a sample can round to ([`crate::dist::Dist::sample`] rounds half away
//! from zero, a monotone map, so a sample inside the real interval rounds inside these).
//!
//! What the bounds do not say: how likely an order is. A lognormal's tails beyond the stated
//! quantiles are left out on purpose (every lognormal draws any positive latency with some
//! probability, so without a cut every order would be possible); a verdict under these bounds
//! says which quantiles it holds between.

use crate::dist::{whole, Dist};
use std::fmt;

/// Parts per million in a quantile (the precision quantiles are stated with).
const PPM: u32 = 1_000_000;

/// The quantiles between which a `lognormal` latency is kept, in parts per million, so that
/// the pair is exact, ordered and prints as it parsed (`0.001,0.999`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Quantiles {
    lo_ppm: u32,
    hi_ppm: u32,
}

impl Default for Quantiles {
    /// The 0.1% and 99.9% quantiles.
    fn default() -> Self {
        Quantiles {
            lo_ppm: 1_000,
            hi_ppm: 999_000,
        }
    }
}

/// A quantile pair that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "quantiles `{0}`: expected two probabilities LO,HI with 0 < LO < HI < 1 in steps of \
     0.000001, as in 0.001,0.999"
)]
pub struct QuantilesError(pub String);

impl Quantiles {
    /// Parses `LO,HI` (0 < LO < HI < 1, at most six decimals).
    pub fn parse(s: &str) -> Result<Quantiles, QuantilesError> {
        let err = || QuantilesError(s.to_owned());
        let (lo, hi) = s.split_once(',').ok_or_else(err)?;
        let (lo_ppm, hi_ppm) = (
            ppm(lo.trim()).ok_or_else(err)?,
            ppm(hi.trim()).ok_or_else(err)?,
        );
        if lo_ppm == 0 || lo_ppm >= hi_ppm || hi_ppm >= PPM {
            return Err(err());
        }
        Ok(Quantiles { lo_ppm, hi_ppm })
    }

    /// The lower and upper quantile as probabilities.
    pub fn probabilities(&self) -> (f64, f64) {
        (
            f64::from(self.lo_ppm) / f64::from(PPM),
            f64::from(self.hi_ppm) / f64::from(PPM),
        )
    }

    /// "the 0.1% and 99.9% quantiles", for verdicts.
    pub fn describe(&self) -> String {
        let pct = |p: u32| trim(&format!("{}.{:04}", p / 10_000, p % 10_000));
        format!(
            "the {}% and {}% quantiles",
            pct(self.lo_ppm),
            pct(self.hi_ppm)
        )
    }

    /// The whole milliseconds (or tokens) a sample of `d` can take within these bounds, as
    /// an inclusive interval.
    pub fn bounds(&self, d: Dist) -> (u64, u64) {
        let (lo, hi) = match d {
            Dist::Fixed(v) => (v, v),
            Dist::Uniform([lo, hi]) => (lo, hi),
            Dist::Lognormal(l) => {
                let (p, q) = self.probabilities();
                let at = |p: f64| l.median * (l.sigma * normal_quantile(p)).exp();
                (at(p), at(q))
            }
        };
        let (lo, hi) = (whole(lo), whole(hi));
        assert!(lo <= hi, "a distribution's bounds are ordered");
        (lo, hi)
    }
}

impl fmt::Display for Quantiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |p: u32| trim(&format!("0.{p:06}"));
        write!(f, "{},{}", q(self.lo_ppm), q(self.hi_ppm))
    }
}

/// `0.001000` → `0.001`; `5.0000` → `5`.
fn trim(s: &str) -> String {
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A probability written as `0.dddddd` (or `.ddd`), in parts per million; `None` past six
/// decimals or outside [0, 1).
fn ppm(s: &str) -> Option<u32> {
    let digits = s.strip_prefix('0').unwrap_or(s).strip_prefix('.')?;
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u32 = format!("{digits:0<6}").parse().ok()?;
    Some(v)
}

/// The standard normal quantile Φ⁻¹(p), 0 < p < 1, by Acklam's rational approximation
/// (relative error below 1.2e-9, far finer than the whole milliseconds it is rounded to).
pub fn normal_quantile(p: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0, "a quantile of an open interval");
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e1,
        1.615858368580409e2,
        -1.556989798598866e2,
        6.680131188771972e1,
        -1.328068155288572e1,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-3,
        3.224671290700398e-1,
        2.445134137142996,
        3.754408661907416,
    ];
    const LOW: f64 = 0.02425;
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - LOW {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Lognormal;

    #[test]
    fn quantiles_parse_print_and_refuse() {
        let q = Quantiles::parse("0.001,0.999").unwrap();
        assert_eq!(q, Quantiles::default());
        assert_eq!(q.to_string(), "0.001,0.999");
        assert_eq!(q.describe(), "the 0.1% and 99.9% quantiles");
        let r = Quantiles::parse("0.05, 0.95").unwrap();
        assert_eq!(
            (r.to_string(), r.describe()),
            ("0.05,0.95".into(), "the 5% and 95% quantiles".into())
        );
        for bad in [
            "0.9,0.1",
            "0,0.5",
            "0.5,1",
            "0.5",
            "a,b",
            "0.0000001,0.5",
            "0.3,0.3",
        ] {
            assert!(Quantiles::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn normal_quantile_matches_known_values() {
        for (p, z) in [
            (0.5, 0.0),
            (0.975, 1.959_963_984_540_054),
            (0.001, -3.090_232_306_167_813_5),
            (0.999, 3.090_232_306_167_813_5),
            (0.158_655_253_931_457, -1.0),
        ] {
            assert!((normal_quantile(p) - z).abs() < 1e-6, "{p}");
        }
    }

    /// The bounds hold the samples: 20,000 draws of each shape land inside its interval
    /// (a lognormal's between the 0.1% and 99.9% quantiles, save about 0.2% of them).
    #[test]
    fn bounds_hold_the_samples() {
        use rand::SeedableRng;
        let q = Quantiles::default();
        assert_eq!(q.bounds(Dist::Fixed(1000.0)), (1000, 1000));
        assert_eq!(q.bounds(Dist::Uniform([2.4, 7.6])), (2, 8));
        let l = Dist::Lognormal(Lognormal {
            median: 1000.0,
            sigma: 0.5,
        });
        let (lo, hi) = q.bounds(l);
        assert_eq!((lo, hi), (213, 4689));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let u = Dist::Uniform([2.4, 7.6]);
        let mut outside = 0;
        for _ in 0..20_000 {
            let x = u.sample(&mut rng);
            assert!((2..=8).contains(&x));
            if !(lo..=hi).contains(&l.sample(&mut rng)) {
                outside += 1;
            }
        }
        assert!((10..=80).contains(&outside), "{outside}");
    }
}
