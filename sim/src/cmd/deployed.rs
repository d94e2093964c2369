//! `agentsim deployed`: the deployed reproductions of SPEC §7, k/N before and after each fix.
//!
//! Prints one line per reproduction and measure (or `--json`: an array of objects with the
//! counts and 95 % Wilson intervals). Seeded and deterministic: the same `--seed` and
//! `--trials` give the same bytes. A pass says the models behave as the deployed systems were
//! reported to; see `crate::experiments::deployed` for what it does not prove.

use crate::artifacts::figures::Count;
use crate::experiments::deployed::{self, interval, Config, Row};
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Run the deployed reproductions (deer-flow, LangGraph) before and after their fixes.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Trials per reproduction and configuration (1..=1000000).
    #[arg(long, default_value_t = 1000)]
    pub trials: u64,
    /// Base seed; trial i of each reproduction derives its own seed from it.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON array on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        (1..=1_000_000).contains(&args.trials),
        "--trials must be between 1 and 1000000, got {}",
        args.trials
    );
    let rows = deployed::run_all(Config {
        trials: args.trials,
        seed: args.seed,
    });
    if args.json {
        println!("{}", json(&rows));
    } else {
        print!("{}", text(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

fn count_json(c: Count) -> serde_json::Value {
    let (lo, hi) = interval(c);
    serde_json::json!({ "k": c.k, "n": c.n, "lo": round(lo), "hi": round(hi) })
}

/// Rounds to 4 decimals so the JSON bytes do not hang on the last float digit.
fn round(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The rows as a JSON array.
pub fn json(rows: &[Row]) -> String {
    let items: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "reproduction": r.reproduction,
                "measure": r.measure,
                "before_label": r.before_label,
                "after_label": r.after_label,
                "before": count_json(r.before),
                "after": count_json(r.after),
            })
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// The rows as readable text.
pub fn text(rows: &[Row]) -> String {
    let mut s = String::new();
    for r in rows {
        let fmt = |c: Count| {
            let (lo, hi) = interval(c);
            format!("{}/{} [{lo:.3}, {hi:.3}]", c.k, c.n)
        };
        let _ = writeln!(s, "{}: {}", r.reproduction, r.measure);
        let _ = writeln!(s, "  before ({}): {}", r.before_label, fmt(r.before));
        let _ = writeln!(s, "  after  ({}): {}", r.after_label, fmt(r.after));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_deterministic_and_well_formed() {
        let rows = deployed::run_all(Config {
            trials: 40,
            seed: 5,
        });
        let a = json(&rows);
        assert_eq!(
            a,
            json(&deployed::run_all(Config {
                trials: 40,
                seed: 5
            }))
        );
        let v: serde_json::Value = serde_json::from_str(&a).expect("valid JSON");
        let first = &v.as_array().expect("an array")[0];
        assert_eq!(first["reproduction"], "deer-flow #3123");
        assert_eq!(first["before"]["k"], 40);
        assert_eq!(first["after"]["k"], 0);
    }

    #[test]
    fn zero_trials_is_an_error() {
        let args = Args {
            trials: 0,
            seed: 0,
            json: false,
        };
        let err = run(args).expect_err("zero trials");
        assert!(err.to_string().contains("--trials"), "{err}");
    }
}
