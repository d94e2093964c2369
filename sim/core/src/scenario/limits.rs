//! The documented limits on every number a scenario file (or a command-line override of one)
//! may give. A number past its limit is refused at load with the file, line, column and key;
//! nothing is clamped silently. The limits are generous for the simulator's purpose (seeded
//! trials of a handful of agents) and small enough that no accepted value can overflow a
//! counter or make the engine reserve memory it will not use.
//!
//! Why each one:
//! - [`TRIALS_MAX`]: a run keeps every trial's metrics (a few hundred bytes each) until it
//!   aggregates them, so a million trials stay well under a gigabyte.
//! - [`AGENTS_MAX`]: the engine keeps per-agent state and the detectors per-agent indexes;
//!   a trial's cost grows faster than linearly in agents.
//! - [`REPEAT_MAX`]: a repetition executes at least one event, so more repetitions than
//!   [`EVENTS_MAX_MAX`] events can never run.
//! - [`EVENTS_MAX_MAX`]: the per-trial event bound itself; every event may append a record.
//! - [`TOKENS_MAX`]: prompt tokens per generation (`prompt_base`, `prompt_per_cell`); token
//!   tallies also saturate in the engine, so a recording's numbers cannot wrap either.
//! - [`CELLS_MAX`]: hot cells of a generated workload (a sweep grid's `cells`): each agent's
//!   script lists every hot cell, so the scenario text grows as agents × cells; at the limits
//!   ([`AGENTS_MAX`] × [`CELLS_MAX`]) it stays some tens of megabytes.
//! - [`POINTS_MAX`]: grid points of a sweep; the grid is materialized and every point runs
//!   every runtime.
//! - [`DIST_VALUE_MAX`], [`SIGMA_MAX`]: the parameters of a latency or token distribution
//!   (`fixed`, `uniform` bounds, `lognormal` median; the log-space sigma): a parameter is a
//!   number the user meant, so one the engine could not represent is refused, not clamped.
//!   (A lognormal's far tail may still reach the engine's largest sample, about 4.6·10^18,
//!   and saturate there: that is a property of the distribution, see `crate::dist`.)
//!
//! What this does not promise: that a scenario at every limit at once runs fast.

/// Trials of one run (`trials`, `--trials`).
pub const TRIALS_MAX: u64 = 1_000_000;
/// Agents of a scenario after expanding `count` copies.
pub const AGENTS_MAX: u32 = 1_024;
/// Repetitions of an agent's script (`repeat`).
pub const REPEAT_MAX: u32 = 1_000_000;
/// Hot cells of one sweep grid point (`[grid] cells`).
pub const CELLS_MAX: u32 = 4_096;
/// Grid points of one sweep file (the product of its `[grid]` axes' lengths).
pub const POINTS_MAX: u64 = 10_000;
/// The largest `[schedule] events_max`.
pub const EVENTS_MAX_MAX: u64 = 100_000_000;
/// The largest `[tokens] prompt_base` and `prompt_per_cell`.
pub const TOKENS_MAX: u64 = 1_000_000_000;
pub use crate::dist::{DIST_VALUE_MAX, SIGMA_MAX};

/// `value` is in `lo..=hi`, or the message saying the range (for a scenario error).
pub fn within<T: PartialOrd + std::fmt::Display>(value: T, lo: T, hi: T) -> Result<T, String> {
    if lo <= value && value <= hi {
        Ok(value)
    } else {
        Err(format!("{value} is out of range: expected {lo}..={hi}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_names_the_range() {
        assert_eq!(within(5u64, 1, 10), Ok(5));
        assert_eq!(
            within(0u64, 1, 10).unwrap_err(),
            "0 is out of range: expected 1..=10"
        );
        assert!(within(11u32, 1, 10).is_err());
    }

    #[test]
    fn the_limits_leave_room_for_every_sum() {
        // A trial's tokens: at most EVENTS_MAX_MAX generations of TOKENS_MAX prompt tokens
        // plus a sample; the engine saturates anyway, but accepted limits alone do not wrap.
        assert!(EVENTS_MAX_MAX.checked_mul(TOKENS_MAX).is_some());
        assert!(u64::from(REPEAT_MAX) <= EVENTS_MAX_MAX);
        assert!(DIST_VALUE_MAX < (u64::MAX / 4) as f64);
    }
}
