//! Maximum-likelihood log-normal fits of observed durations and token counts.
//!
//! For samples x₁…xₙ > 0 the MLE of a log-normal is μ̂ = mean(ln xᵢ) and σ̂² = mean((ln xᵢ −
//! μ̂)²) (the biased, maximum-likelihood variance, not n − 1); the scenario format takes the
//! median e^μ̂ and σ̂. A zero sample (an instant step) is taken as 1 ms, since ln 0 is not
//! finite. A fit says nothing about a tail the samples did not reach.

use crate::dist::{Dist, Lognormal, SIGMA_MAX};

/// The fewest samples a log-normal is fitted from; below it the observed values are kept.
pub const FIT_SAMPLES_MIN: usize = 8;

/// The MLE log-normal of `xs` (`None` below [`FIT_SAMPLES_MIN`] samples).
pub fn fit(xs: &[u64]) -> Option<Lognormal> {
    if xs.len() < FIT_SAMPLES_MIN {
        return None;
    }
    let logs: Vec<f64> = xs.iter().map(|&x| (x.max(1) as f64).ln()).collect();
    let n = logs.len() as f64;
    let mu = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|l| (l - mu).powi(2)).sum::<f64>() / n;
    let sigma = var.sqrt().min(SIGMA_MAX);
    assert!(mu.is_finite(), "the log-mean of finite samples is finite");
    assert!(sigma >= 0.0, "a standard deviation is not negative");
    Some(Lognormal {
        median: round3(mu.exp()),
        sigma: round3(sigma),
    })
}

/// How `xs` is modelled: a fitted log-normal, the one observed value, or the observed range.
pub fn model(xs: &[u64]) -> (Dist, String) {
    assert!(!xs.is_empty(), "a step has at least one observation");
    if let Some(l) = fit(xs) {
        let why = format!("lognormal MLE of {} samples", xs.len());
        return (Dist::Lognormal(l), why);
    }
    let (lo, hi) = (
        *xs.iter().min().unwrap_or(&0),
        *xs.iter().max().unwrap_or(&0),
    );
    let n = xs.len();
    if lo == hi {
        let why = match n {
            1 => "observed, 1 sample".to_owned(),
            n => format!("observed, {n} equal samples"),
        };
        (Dist::Fixed(lo as f64), why)
    } else {
        let why = format!("observed range of {n} samples (< {FIT_SAMPLES_MIN} to fit)");
        (Dist::Uniform([lo as f64, hi as f64]), why)
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The TOML inline table of a distribution, as the scenario format reads it.
pub fn toml(d: &Dist) -> String {
    match d {
        Dist::Fixed(x) => format!("{{ fixed = {} }}", num(*x)),
        Dist::Uniform([lo, hi]) => format!("{{ uniform = [{}, {}] }}", num(*lo), num(*hi)),
        Dist::Lognormal(l) => format!(
            "{{ lognormal = {{ median = {}, sigma = {} }} }}",
            num(l.median),
            num(l.sigma)
        ),
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_recovers_the_log_mean_and_the_ml_deviation() {
        // ln of these: 0, ln 10, ln 100 … ; mean ln = ln 1000 for 1, 10, …, 10^6
        let xs = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 1_000];
        let l = fit(&xs).expect("8 samples are enough");
        let logs: Vec<f64> = xs.iter().map(|&x| (x as f64).ln()).collect();
        let mu = logs.iter().sum::<f64>() / 8.0;
        let sd = (logs.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / 8.0).sqrt();
        assert!((l.median - mu.exp()).abs() < 1e-2, "{l:?}");
        assert!((l.sigma - sd).abs() < 1e-3, "{l:?}");
    }

    #[test]
    fn few_samples_keep_what_was_observed() {
        assert_eq!(model(&[900]).0, Dist::Fixed(900.0));
        assert_eq!(model(&[900, 900]).0, Dist::Fixed(900.0));
        assert_eq!(model(&[900, 1890]).0, Dist::Uniform([900.0, 1890.0]));
        assert!(fit(&[5; 7]).is_none());
        assert!(matches!(model(&[5; 8]).0, Dist::Lognormal(_)));
    }

    #[test]
    fn rendered_distributions_parse_back() {
        for d in [
            Dist::Fixed(3.0),
            Dist::Uniform([1.0, 2.5]),
            Dist::Lognormal(Lognormal {
                median: 400.0,
                sigma: 0.25,
            }),
        ] {
            let text = format!("d = {}", toml(&d));
            let t: std::collections::BTreeMap<String, Dist> =
                toml::from_str(&text).expect("parses");
            assert_eq!(t["d"], d, "{text}");
        }
    }
}
