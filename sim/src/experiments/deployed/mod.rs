//! The deployed reproductions of SPEC §7: deer-flow's erased state key, the deer-flow memory
//! updater, LangGraph superstep semantics and LangGraph's `ToolNode`, each before and after its fix.
//!
//! Every row is a count k/N over N seeded trials, computed by running the model
//! ([`agentsim_ingest::langgraph::model`] or a small virtual-time driver) and then the detectors of
//! SPEC §3 on the op records it produced (or, where the measure is not a catalogue anomaly, a
//! check on the final state, named as such). Nothing is written in: change the model and the
//! counts change. Trial `i` of a reproduction draws from its own `ChaCha8Rng` seeded from
//! `(seed, reproduction, i)`, and the before and after runs of a trial draw the same numbers
//! (paired). A pass shows the models behave as SPEC §7 says the deployed systems did; it does
//! not show the deployed systems behave as the models do.

pub mod deerflow;
pub mod memory;
pub mod superstep;
pub mod toolnode;

use crate::artifacts::figures::Count;
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_models::detect::fast;
use agentsim_models::history::History;
use agentsim_models::record::OpRecord;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The `deployed` step.
pub const STEP: Step = Step {
    name: "deployed",
    about: "deployed reproductions before and after their fixes (SPEC §7)",
    run: step_files,
};

/// The step: 1,000 trials each (100 with `--quick`), seed 0.
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick { 100 } else { 1000 };
    let rows = run_all(Config { trials, seed: 0 });
    Ok(table_files("deployed", &table(&rows)))
}

/// How many trials, from which seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub trials: u64,
    pub seed: u64,
}

/// One reproduction's measure before and after its fix.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What is reproduced, e.g. `deer-flow #3123`.
    pub reproduction: &'static str,
    /// What is counted per trial.
    pub measure: &'static str,
    /// The configuration without the fix.
    pub before_label: &'static str,
    /// The fix.
    pub after_label: &'static str,
    pub before: Count,
    pub after: Count,
}

/// Runs every reproduction, in a fixed order.
pub fn run_all(cfg: Config) -> Vec<Row> {
    let mut rows = deerflow::rows(cfg);
    rows.extend(memory::rows(cfg));
    rows.extend(superstep::rows(cfg));
    rows.extend(toolnode::rows(cfg));
    rows
}

/// The rows as a table: counts and 95 % Wilson intervals before and after.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "Deployed reproductions: k/N before and after each fix (95% Wilson intervals)",
        &[
            "reproduction",
            "measure",
            "before",
            "before_k",
            "before_n",
            "before_lo",
            "before_hi",
            "fix",
            "after_k",
            "after_n",
            "after_lo",
            "after_hi",
        ],
    );
    for r in rows {
        let (b, a) = (interval(r.before), interval(r.after));
        t.push(vec![
            Cell::text(r.reproduction),
            Cell::text(r.measure),
            Cell::text(r.before_label),
            Cell::Int(r.before.k as i64),
            Cell::Int(r.before.n as i64),
            Cell::float(b.0, 3),
            Cell::float(b.1, 3),
            Cell::text(r.after_label),
            Cell::Int(r.after.k as i64),
            Cell::Int(r.after.n as i64),
            Cell::float(a.0, 3),
            Cell::float(a.1, 3),
        ]);
    }
    t
}

/// The 95 % Wilson interval of a count (NaN, written empty, when n = 0).
pub fn interval(c: Count) -> (f64, f64) {
    c.wilson95().map_or((f64::NAN, f64::NAN), |e| (e.lo, e.hi))
}

/// Counts the trials `0..cfg.trials` for which `f(rng)` holds; each trial's rng is seeded from
/// `(cfg.seed, salt, trial)`.
pub fn count(cfg: Config, salt: u64, mut f: impl FnMut(&mut ChaCha8Rng) -> bool) -> Count {
    let k = (0..cfg.trials)
        .filter(|&i| f(&mut trial_rng(cfg.seed, salt, i)))
        .count();
    Count {
        k: k as u64,
        n: cfg.trials,
    }
}

/// The rng of one trial: the simulator's one rule (`agentsim_sim::rng`), on the
/// reproduction's own stream (its salt, offset past the simulator's streams).
pub fn trial_rng(seed: u64, salt: u64, trial: u64) -> ChaCha8Rng {
    use agentsim_sim::rng::{stream, trial_rng};
    trial_rng(seed, trial, stream::DEPLOYED + salt)
}

/// A uniform integer in `lo..=hi` (multiply-shift; the bias is below 2^-32 for our ranges).
pub fn uniform(rng: &mut ChaCha8Rng, lo: u64, hi: u64) -> u64 {
    assert!(lo <= hi, "empty range {lo}..={hi}");
    let span = hi - lo + 1;
    lo + ((u128::from(rng.next_u64()) * u128::from(span)) >> 64) as u64
}

/// Runs the fast detectors on `records` (validated first: a malformed history is a model bug).
pub fn detect(records: Vec<OpRecord>) -> agentsim_models::Report {
    let h = History::from_records(records);
    if let Err(e) = h.validate() {
        panic!("a deployed model produced a malformed history: {e}");
    }
    fast::detect(&h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_stays_in_range_and_trials_differ() {
        let mut rng = trial_rng(1, 2, 3);
        for _ in 0..1000 {
            let x = uniform(&mut rng, 10, 200);
            assert!((10..=200).contains(&x));
        }
        let a = trial_rng(1, 2, 3).next_u64();
        let b = trial_rng(1, 2, 4).next_u64();
        assert_ne!(a, b);
        assert_eq!(a, trial_rng(1, 2, 3).next_u64());
    }

    #[test]
    fn the_table_is_deterministic() {
        let cfg = Config {
            trials: 50,
            seed: 9,
        };
        let a = table(&run_all(cfg)).to_csv();
        assert_eq!(a, table(&run_all(cfg)).to_csv());
        assert_eq!(a.lines().count(), run_all(cfg).len() + 1);
    }
}
