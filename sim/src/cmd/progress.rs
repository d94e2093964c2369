//! Progress lines on stderr for the seeded commands (`simulate`, `twins`, `workloads`,
//! `sweep`), by the convention `check` uses (`check_watch`): silent for the first
//! [`QUIET_FOR_S`] seconds, then a line every [`TICK_LINE_S`] with the trials done of the
//! total, the rate and the time left; never with `--quiet`; with a non-terminal stderr only
//! under `--progress`, which also prints from the start.
//!
//! [`Ticker`] says when a line is due, for any long command (`detect FILE` uses it too).
//! [`Watched`] is a trial source that runs each run in chunks of trials (sized to take about
//! a second each) and reports between chunks. Trial k is the same trial whatever range it
//! runs in and the aggregate is computed over all trials in trial order, so stdout is
//! byte-identical with and without progress; silent, it runs each run whole, exactly as
//! [`Local`] does. The time left is an estimate from the rate so far.

use super::check_watch::{QUIET_FOR_S, TICK_LINE_S};
use agentsim_sim::metrics::{Aggregate, TrialMetrics};
use agentsim_sim::runner::{run_trials, RunConfig, RunResult};
use agentsim_sim::shard::{FactKey, Facts, Local, ShardError, TrialFacts, TrialSource};
use std::io::IsTerminal;
use std::time::Instant;

/// The `--progress` / `--quiet` flags of a seeded command.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct ProgressArgs {
    /// Print progress on stderr (trials done, rate, time left, every 5 s) from the start,
    /// even when stderr is not a terminal. Without it, a terminal gets progress once a run
    /// passes 2 s.
    #[arg(long)]
    pub progress: bool,
    /// No progress on stderr.
    #[arg(long, conflicts_with = "progress")]
    pub quiet: bool,
}

impl ProgressArgs {
    /// Whether progress lines are printed at all, and from when (seconds).
    fn start_after(self) -> Option<f64> {
        if self.quiet || !(self.progress || std::io::stderr().is_terminal()) {
            return None;
        }
        Some(if self.progress { 0.0 } else { QUIET_FOR_S })
    }
}

/// Seconds one chunk of trials should take.
const CHUNK_S: f64 = 1.0;

/// When a progress line is due, by the convention above: never when silent, else from
/// `after` seconds on, one every [`TICK_LINE_S`].
pub struct Ticker {
    started: Instant,
    /// `None`: silent. Otherwise the seconds before the first line.
    after: Option<f64>,
    last_line: f64,
}

impl Ticker {
    /// A ticker started now, printing as `flags` say.
    pub fn new(flags: ProgressArgs) -> Ticker {
        Ticker {
            started: Instant::now(),
            after: flags.start_after(),
            last_line: f64::NEG_INFINITY,
        }
    }

    /// Whether no line will ever be printed.
    pub fn silent(&self) -> bool {
        self.after.is_none()
    }

    /// Seconds since the start.
    pub fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The seconds since the start if a line is due now (it is then counted as printed).
    pub fn due(&mut self) -> Option<f64> {
        let after = self.after?;
        let now = self.seconds();
        if now < after || now - self.last_line < TICK_LINE_S {
            return None;
        }
        self.last_line = now;
        Some(now)
    }

    /// The seconds since the start if any line was printed: a closing line is due then (a
    /// short run stays silent).
    pub fn closing(&self) -> Option<f64> {
        (self.after.is_some() && self.last_line.is_finite()).then(|| self.seconds())
    }
}

/// Progress over a known number of items (checks, stacks): a line `WHAT: DONE/TOTAL UNIT,
/// S s` when one is due, and a closing line if any was printed. For commands whose work is
/// a list of checks rather than seeded trials (`matrix`, `lattice --realize`).
pub struct Items {
    what: &'static str,
    unit: &'static str,
    ticker: Ticker,
}

impl Items {
    /// Progress of command `what` counting `unit`s, printed as `flags` say.
    pub fn new(what: &'static str, unit: &'static str, flags: ProgressArgs) -> Items {
        Items {
            what,
            unit,
            ticker: Ticker::new(flags),
        }
    }

    /// `done` of `total` items are finished (`total` unknown: `None`).
    pub fn done(&mut self, done: usize, total: Option<usize>) {
        if let Some(now) = self.ticker.due() {
            eprintln!("{}", items_line(self.what, self.unit, done, total, now));
        }
    }

    /// The closing line, if any line was printed (a short run stays silent).
    pub fn finish(&self, done: usize) {
        if let Some(now) = self.ticker.closing() {
            eprintln!("{}: done, {done} {} in {now:.1} s", self.what, self.unit);
        }
    }
}

/// One progress line over items.
pub fn items_line(
    what: &str,
    unit: &str,
    done: usize,
    total: Option<usize>,
    seconds: f64,
) -> String {
    match total {
        Some(total) => format!("{what}: {done}/{total} {unit}, {seconds:.1} s"),
        None => format!("{what}: {done} {unit}, {seconds:.1} s"),
    }
}

/// A trial source that reports progress on stderr as it runs every trial.
pub struct Watched {
    what: &'static str,
    /// Trials of every run of the command, when known.
    total: Option<u64>,
    done: u64,
    ticker: Ticker,
}

impl Watched {
    /// A source for command `what` that will run `total` trials in all (if known).
    pub fn new(what: &'static str, total: Option<u64>, flags: ProgressArgs) -> Watched {
        Watched {
            what,
            total,
            done: 0,
            ticker: Ticker::new(flags),
        }
    }

    /// Prints a line if one is due.
    fn tick(&mut self) {
        if let Some(now) = self.ticker.due() {
            eprintln!("{}", line(self.what, self.done, self.total, now));
        }
    }

    /// The closing line, if any line was printed (a short run stays silent).
    pub fn finish(&self) {
        if let Some(now) = self.ticker.closing() {
            eprintln!("{}: done, {} trials in {now:.1} s", self.what, self.done);
        }
    }
}

impl TrialSource for Watched {
    fn run(&mut self, cfg: &RunConfig<'_>) -> Result<RunResult, ShardError> {
        if self.ticker.silent() {
            let r = Local.run(cfg)?;
            self.done += cfg.trials;
            return Ok(r);
        }
        let mut trials = Vec::new();
        let (mut lo, mut chunk) = (0, (cfg.threads as u64).max(1));
        while lo < cfg.trials {
            let hi = lo.saturating_add(chunk).min(cfg.trials);
            let t0 = Instant::now();
            trials.extend(run_trials(cfg, lo, hi)?.trials);
            let took = t0.elapsed().as_secs_f64();
            self.done += hi - lo;
            // Aim the next chunk at about CHUNK_S: at most 4× the last, at least one round
            // of threads.
            let fit = ((hi - lo) as f64 * CHUNK_S / took.max(1e-3)) as u64;
            chunk = fit.clamp((cfg.threads as u64).max(1), chunk.saturating_mul(4));
            lo = hi;
            self.tick();
        }
        let metrics: Vec<&TrialMetrics> = trials.iter().map(|t| &t.metrics).collect();
        Ok(RunResult {
            aggregate: Aggregate::of(&metrics),
            trials,
        })
    }

    /// A fact run is computed whole (its command threads it itself) and counted when done.
    fn facts(&mut self, key: &FactKey, compute: TrialFacts<'_>) -> Result<Facts, ShardError> {
        let facts = Local.facts(key, compute)?;
        self.done += key.trials;
        self.tick();
        Ok(facts)
    }
}

/// One progress line.
pub fn line(what: &str, done: u64, total: Option<u64>, seconds: f64) -> String {
    let rate = done as f64 / seconds.max(1e-9);
    match total {
        Some(total) if total > 0 => {
            let left = total.saturating_sub(done) as f64 / rate.max(1e-9);
            format!(
                "{what}: {done}/{total} trials ({:.0}%), {rate:.0} trials/s, about {left:.0} s \
                 left; {seconds:.1} s",
                100.0 * done as f64 / total as f64
            )
        }
        _ => format!("{what}: {done} trials, {rate:.0} trials/s; {seconds:.1} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_done_total_rate_and_time_left() {
        assert_eq!(
            line("sweep", 250, Some(1000), 5.0),
            "sweep: 250/1000 trials (25%), 50 trials/s, about 15 s left; 5.0 s"
        );
        assert_eq!(
            line("simulate", 10, None, 2.0),
            "simulate: 10 trials, 5 trials/s; 2.0 s"
        );
    }

    #[test]
    fn item_lines_say_done_of_total() {
        assert_eq!(
            items_line("matrix", "checks", 12, Some(45), 3.25),
            "matrix: 12/45 checks, 3.2 s"
        );
        assert_eq!(
            items_line("lattice --realize", "stacks checked", 3, None, 1.0),
            "lattice --realize: 3 stacks checked, 1.0 s"
        );
    }

    #[test]
    fn quiet_wins_and_forced_starts_at_once() {
        let quiet = ProgressArgs {
            progress: true,
            quiet: true,
        };
        assert_eq!(quiet.start_after(), None);
        let forced = ProgressArgs {
            progress: true,
            quiet: false,
        };
        assert_eq!(forced.start_after(), Some(0.0));
    }
}
