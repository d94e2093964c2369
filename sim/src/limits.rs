//! The limits of the numbers every command takes on its command line, in one place, and the
//! one `--threads` default. A number past its limit is a usage error (exit 2, clap names the
//! flag) before anything runs; nothing is clamped silently.
//!
//! - `--threads`: 1..=[`THREADS_MAX`] on every command; the default is the machine's
//!   parallelism, at most [`THREADS_MAX`] ([`default_threads`]). No output depends on it.
//! - `--trials`: 1..=[`TRIALS_MAX`] (the scenario files' limit, see
//!   `agentsim_sim::scenario::limits`), on `simulate`, `twins`, `workloads`, `sweep`,
//!   `cpl twin`, `split-view`, `deployed` and `bench sim`.
//!
//! What this does not bound: the time a run at the limits takes (progress lines say it).
//!
//! It sits below every layer of this crate ([`crate::cmd`], [`crate::experiments`],
//! [`crate::bench`]): each takes these limits, none is above another for it.

pub use agentsim_sim::scenario::TRIALS_MAX;

/// The most worker threads any command starts (`--threads` is refused above it).
pub const THREADS_MAX: usize = 256;

/// The number of threads every command uses by default: the machine's parallelism, at most
/// [`THREADS_MAX`] (results do not depend on it).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, THREADS_MAX)
}

/// The `--threads` value parser: a whole number in 1..=[`THREADS_MAX`].
pub fn threads(s: &str) -> Result<usize, String> {
    parse_in(s, 1, THREADS_MAX, "threads")
}

/// The `--steps-per-agent` value parser: a whole number from 1, or `unbounded` (no budget:
/// [`agentsim_sim::explore::STEPS_UNBOUNDED`], for a stateful search).
pub fn steps_per_agent(s: &str) -> Result<u64, String> {
    if s == "unbounded" {
        return Ok(agentsim_sim::explore::STEPS_UNBOUNDED);
    }
    parse_in(
        s,
        1,
        agentsim_sim::explore::STEPS_UNBOUNDED - 1,
        "steps per agent",
    )
    .map_err(|e| format!("{e} (or `unbounded`, with --stateful)"))
}

/// The `--trials` value parser: a whole number in 1..=[`TRIALS_MAX`].
pub fn trials(s: &str) -> Result<u64, String> {
    parse_in(s, 1, TRIALS_MAX, "trials")
}

/// `s` as a whole number in `lo..=hi`; a number too large for the type is out of range too.
fn parse_in<T>(s: &str, lo: T, hi: T, what: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let range = |n: &dyn std::fmt::Display| format!("{n} is out of range: expected {lo}..={hi}");
    match s.parse::<T>() {
        Ok(n) if lo <= n && n <= hi => Ok(n),
        Ok(n) => Err(range(&n)),
        Err(_) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => Err(range(&s)),
        Err(_) => Err(format!("`{s}` is not a whole number of {what}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_name_the_range() {
        assert_eq!(threads("4"), Ok(4));
        assert_eq!(
            threads("100000").unwrap_err(),
            "100000 is out of range: expected 1..=256"
        );
        assert!(threads("0").is_err());
        assert!(threads("-1").unwrap_err().contains("not a whole number"));
        assert_eq!(trials("1000000"), Ok(1_000_000));
        assert_eq!(
            trials("18446744073709551615").unwrap_err(),
            "18446744073709551615 is out of range: expected 1..=1000000"
        );
        assert_eq!(
            trials("18446744073709551616").unwrap_err(),
            "18446744073709551616 is out of range: expected 1..=1000000"
        );
    }

    #[test]
    fn the_default_is_within_the_limit() {
        assert!((1..=THREADS_MAX).contains(&default_threads()));
    }
}
