//! `agentsim shrink LINE-or-FILE`: reduce a failing trial's schedule to a minimal one that
//! still exhibits the anomaly (shortest prefix of events, fewest scheduling deviations) and
//! print it readably, with its new replay line.
//!
//! The result is 1-minimal in scheduling deviations (see `sim::shrink`), not globally
//! minimal; the seed's latency draws are kept, so an anomaly that needs no deviation at all
//! shrinks to plain time order.

use crate::cmd::replay::{context_switches, describe, load, read_line_arg};
use agentsim_models::Anomaly;
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::shrink::{shrink, ShrinkInput, RUNS_MAX};
use anyhow::{anyhow, Result};
use clap::Args as ClapArgs;
use std::process::ExitCode;

/// Shrink a failing trial to a minimal schedule that keeps the anomaly.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// A replay line, or a file whose first non-comment line is one.
    pub line: String,
    /// The anomaly to keep (A1, A2, A3, A6, A3_residue); default the first exhibited.
    #[arg(long)]
    pub anomaly: Option<Anomaly>,
    /// Bound on replays while shrinking.
    #[arg(long, default_value_t = RUNS_MAX)]
    pub runs_max: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let line = read_line_arg(&args.line)?;
    let (sc, rt) = load(&line)?;
    let input = ShrinkInput {
        scenario: &sc,
        runtime: rt,
        seed: line.seed,
        trial: line.trial,
        schedule: line.schedule.clone(),
        on_missing: line.on_missing,
        target: args.anomaly,
        runs_max: args.runs_max,
    };
    let out = shrink(&input).map_err(|e| anyhow!("{e}"))?;
    let new_line = ReplayLine {
        schedule: out.schedule.clone(),
        ..line
    };
    let (o, n) = (&out.original, &out.shrunk);
    if args.json {
        let v = serde_json::json!({
            "anomaly": out.target,
            "line": new_line.to_string(),
            "runs": out.runs,
            "exhausted": out.exhausted,
            "original": {"events": o.metrics.events, "deviations": o.run.schedule.deviations(),
                         "context_switches": context_switches(&o.run.trace)},
            "shrunk": {"events": n.metrics.events, "deviations": out.schedule.deviations(),
                       "context_switches": context_switches(&n.run.trace),
                       "anomalies": n.metrics.anomalies},
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "shrunk {} in {} replays: events {} -> {}, scheduling deviations {} -> {}, \
             context switches {} -> {}",
            out.target,
            out.runs,
            o.metrics.events,
            n.metrics.events,
            o.run.schedule.deviations(),
            out.schedule.deviations(),
            context_switches(&o.run.trace),
            context_switches(&n.run.trace)
        );
        print!("{}", describe(&sc, n));
        println!("replay: {}", new_line.command());
    }
    if out.exhausted {
        eprintln!("warning: the replay budget ran out; raise --runs-max for a smaller result");
    }
    Ok(ExitCode::SUCCESS)
}
