//! What a long `agentsim check` shows and how it stops: SIGINT/SIGTERM raise the explorer's
//! cancel flag (the search then drops its levels, which removes their spill files, and `check`
//! prints the partial counts and exits 130), and progress lines go to stderr.
//!
//! Signals use `signal-hook`'s flag registration: the handler only stores to an atomic (the
//! one thing a signal handler may safely do), no thread is started, and a second signal while
//! the flag is already up exits at once with 130 (a stuck run can still be killed with a
//! second Ctrl-C). Progress: one line per BFS level and one every [`TICK_LINE_S`] inside a
//! long level (states, rate, resident memory, and the level's ETA from the share of its blocks
//! done), starting once the run is past [`QUIET_FOR_S`]; never with `--quiet`; with a
//! non-terminal stderr only under `--progress`, which also prints from the first second.

use agentsim_checker::engine::control::{Phase, Progress, Reporter};
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// Seconds a run stays silent before its first progress line (unless `--progress`).
pub const QUIET_FOR_S: f64 = 2.0;
/// Seconds between progress lines inside one level.
pub const TICK_LINE_S: f64 = 5.0;
/// The exit code of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// A flag raised by the first SIGINT or SIGTERM; a second one exits with [`INTERRUPTED`].
pub fn cancel_on_signals() -> std::io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(INTERRUPTED),
            flag.clone(),
        )?;
        signal_hook::flag::register(sig, flag.clone())?;
    }
    Ok(flag)
}

/// The progress reporter for `check`, or none when it must stay silent.
pub fn reporter(quiet: bool, forced: bool) -> Option<Reporter> {
    if quiet || !(forced || std::io::stderr().is_terminal()) {
        return None;
    }
    let after = if forced { 0.0 } else { QUIET_FOR_S };
    // (seconds of the last line, seconds the current level started)
    let state = Mutex::new((f64::NEG_INFINITY, 0.0));
    Some(Reporter(Arc::new(move |p: &Progress| {
        let mut s = state.lock().expect("progress state poisoned");
        if p.seconds < after {
            if p.level_end {
                s.1 = p.seconds;
            }
            return;
        }
        if !p.level_end && p.seconds - s.0 < TICK_LINE_S {
            return;
        }
        eprintln!("{}", line(p, s.1));
        s.0 = p.seconds;
        if p.level_end {
            s.1 = p.seconds;
        }
    })))
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}

/// One progress line; `level_started` is when the level in progress began (seconds).
pub fn line(p: &Progress, level_started: f64) -> String {
    let what = match p.phase {
        Phase::Explore => "exploring",
        Phase::Trace => "shortest counterexamples",
    };
    let rss = p
        .rss_bytes
        .map_or(String::new(), |b| format!(", {} MiB resident", mib(b)));
    let common = format!(
        "{} distinct, {} generated, {:.0} states/s{rss}, seen set {} MiB, spilled {} MiB, {:.1} s",
        p.distinct,
        p.generated,
        p.rate(),
        mib(p.seen_bytes),
        mib(p.spilled_bytes),
        p.seconds
    );
    if p.level_end && p.level_states == 0 {
        return format!("{what}: nothing new past depth {}, done; {common}", p.depth);
    }
    if p.level_end {
        return format!(
            "{what}: depth {} reached, {} states at it; {common}",
            p.depth, p.level_states
        );
    }
    let share = 100.0 * p.level_blocks_done as f64 / p.level_blocks.max(1) as f64;
    let eta = p.level_eta(level_started).map_or(String::new(), |s| {
        format!(", about {s:.0} s left in this level")
    });
    format!(
        "{what}: level {} {share:.0}% of {} states{eta}; {common}",
        p.depth + 1,
        p.level_states
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_states_rate_memory_and_eta() {
        let p = Progress {
            phase: Phase::Explore,
            depth: 7,
            distinct: 1_000,
            generated: 1_200,
            level_states: 400,
            level_blocks_done: 1,
            level_blocks: 4,
            seconds: 10.0,
            rss_bytes: Some(3 << 20),
            seen_bytes: 1 << 20,
            spilled_bytes: 0,
            level_end: false,
        };
        let l = line(&p, 8.0);
        assert!(l.starts_with("exploring: level 8 25% of 400 states"), "{l}");
        assert!(l.contains("about 6 s left in this level"), "{l}");
        assert!(l.contains("100 states/s, 3 MiB resident"), "{l}");
        let end = line(
            &Progress {
                level_end: true,
                ..p
            },
            8.0,
        );
        assert!(
            end.starts_with("exploring: depth 7 reached, 400 states at it"),
            "{end}"
        );
        let done = line(
            &Progress {
                level_end: true,
                level_states: 0,
                ..p
            },
            8.0,
        );
        assert!(
            done.starts_with("exploring: nothing new past depth 7, done"),
            "{done}"
        );
    }

    #[test]
    fn quiet_wins_over_progress() {
        assert!(reporter(true, true).is_none());
        assert!(reporter(false, true).is_some());
    }
}
