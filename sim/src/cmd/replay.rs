//! `agentsim replay LINE-or-FILE`: re-run one trial from its replay line (as `simulate`
//! prints it, or the first line of a file such as `--trace-out`'s `replay.txt`) and print its
//! steps, its anomalies and, with `--history-out`, its history as JSONL.
//!
//! A lasso line of `explore --liveness` (its schedule ends `cycle=<n>`) runs as any other,
//! stem and cycle once, with the cycle's first event marked; then the stem and the cycle
//! twice on the liveness search's stepper, checking that the cycle returns to the state it
//! starts from each time (a line whose cycle does not is refused, exit 2).
//!
//! The replayed history is identical to the original trial's (a test proves it) as long as
//! the scenario file and the build are unchanged; a different event count is reported as a
//! divergence and exits 2.

use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use agentsim_models::runtime::Stack;
use agentsim_models::{escape_text, Anomaly};
use agentsim_sim::engine::TraceEvent;
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{run_one, OneTrial};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::schedule::Schedule;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Re-run one trial from its replay line.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// A replay line, or a file whose first non-comment line is one.
    pub line: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write the trial's history as JSONL (readable by `agentsim detect`).
    #[arg(long, value_name = "FILE")]
    pub history_out: Option<PathBuf>,
}

/// Reads a replay line from the argument: the line itself, or the first non-empty,
/// non-comment line of the file it names (a trailing `# …` comment is dropped).
pub fn read_line_arg(arg: &str) -> Result<ReplayLine> {
    let path = std::path::Path::new(arg);
    let text = if !arg.contains('=') && path.is_file() {
        let t = std::fs::read_to_string(path).with_context(|| format!("reading {arg}"))?;
        t.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim().to_owned())
            .find(|l| !l.is_empty())
            .ok_or_else(|| anyhow!("{arg}: no replay line in the file"))?
    } else {
        arg.to_owned()
    };
    Ok(ReplayLine::parse(&text)?)
}

/// Loads the scenario and runtime a replay line names (with its repeat cap, if it has one).
pub fn load(line: &ReplayLine) -> Result<(Scenario, Stack)> {
    let mut sc = Scenario::load(&line.scenario)?;
    if let Some(n) = line.repeat_max {
        sc = sc
            .with_repeat_cap(n)
            .map_err(|e| anyhow!("repeat_max: {e}"))?
            .0;
    }
    Ok((sc, line.runtime))
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let line = read_line_arg(&args.line)?;
    let arg = std::path::Path::new(&args.line);
    let file = (!args.line.contains('=') && arg.is_file()).then_some(arg);
    let mut paths = Paths::new().scenario(&line.scenario);
    if let Some(file) = file {
        paths = paths.input("the replay line", file);
    }
    paths
        .output("--history-out", args.history_out.as_deref())
        .check()?;
    if let Some(p) = &args.history_out {
        preflight(p)?;
    }
    let (sc, rt) = load(&line)?;
    let t = run_one(
        &sc,
        rt,
        line.seed,
        line.trial,
        &line.schedule,
        line.on_missing,
    )
    .map_err(|e| anyhow!("{e}"))?;
    check_choices(&line.schedule, &t)?;
    let expected = line.schedule.stop.unwrap_or(line.schedule.events);
    if expected != 0 && t.metrics.events != expected {
        bail!(
            "replay diverged: the line recorded {expected} events, the replay ran {}; \
             the scenario file or the build changed since the line was printed",
            t.metrics.events
        );
    }
    let lasso = match line.schedule.cycle {
        Some(_) => Some(
            agentsim_sim::explore::live::replay_lasso(&sc, rt, &line)
                .map_err(|e| anyhow!("lasso `{}`: {e}", line.schedule))?,
        ),
        None => None,
    };
    let jsonl = agentsim_jsonl::write_history(&t.history);
    if let Some(p) = &args.history_out {
        write_atomic(p, jsonl.as_bytes())?;
    }
    if args.json {
        let v = serde_json::json!({
            "line": line.to_string(),
            "metrics": t.metrics,
            "history": jsonl.lines().collect::<Vec<_>>(),
            "lasso": lasso.map(|l| serde_json::json!({
                "stem": l.stem_events,
                "cycle": l.cycle_events,
                "repeats": true,
            })),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let mut text = describe(&sc, &t);
        if let Some(l) = lasso {
            text = mark_cycle(&text, l.stem_events);
            let end = match (l.cycle_events, l.enabled_at_end) {
                (0, 0) => "; no agent is enabled at the stem's end: the run stutters there \
                           forever"
                    .to_owned(),
                (0, n) => format!(
                    "; the run stops scheduling at the stem's end, where {n} agents are \
                     enabled (a lasso of --fairness none)"
                ),
                _ => "; run twice, the cycle returned to its first state each time".to_owned(),
            };
            let _ = writeln!(
                text,
                "lasso: a stem of {} events, then a cycle of {} events (marked ↻){end}",
                l.stem_events, l.cycle_events
            );
        }
        print!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The step list with the events from `from` on marked `↻` (a lasso's cycle).
fn mark_cycle(text: &str, from: u64) -> String {
    let mut out = String::new();
    for l in text.lines() {
        let event = l
            .split_whitespace()
            .next()
            .and_then(|e| e.parse::<u64>().ok());
        let mark = if event.is_some_and(|e| e >= from) {
            "↻"
        } else {
            " "
        };
        let _ = writeln!(out, "{mark}{l}");
    }
    out
}

/// Every choice the line records must be one the replay took: a position past the events
/// enabled at that point, or an event the trial never reached, is a line that does not
/// describe this trial (hand-edited, or for another scenario), named here rather than
/// replayed as a different trial.
fn check_choices(asked: &Schedule, t: &OneTrial) -> Result<()> {
    let taken = &t.run.schedule;
    let ran = t.metrics.events;
    for (&event, &position) in &asked.choices {
        if position == 0 || taken.choices.get(&event) == Some(&position) {
            continue;
        }
        if event >= ran {
            bail!(
                "schedule `{asked}`: choice {event}={position} is past the end: the trial ran \
                 {ran} events (0..{ran})"
            );
        }
        bail!(
            "schedule `{asked}`: choice {event}={position} names no enabled event: fewer than \
             {} events were enabled at event {event}",
            u64::from(position) + 1
        );
    }
    Ok(())
}

/// A readable account of a trial: its steps, then its verdict.
pub fn describe(sc: &Scenario, t: &OneTrial) -> String {
    let mut s = steps(sc, &t.run.trace);
    let m = &t.metrics;
    let found = if m.anomalies.is_empty() {
        "none".to_owned()
    } else {
        Anomaly::join(&m.anomalies, ", ")
    };
    let _ = writeln!(
        s,
        "anomalies: {found}; level L{}; {} records, {} events, {} context switches, \
         {} scheduling deviations, makespan {} ms",
        m.level,
        m.records,
        m.events,
        context_switches(&t.run.trace),
        t.run.schedule.deviations(),
        m.makespan_ms
    );
    s
}

/// The step list: one line per event. Agent names and the step's text (cells, values) come
/// from the scenario, so they are escaped ([`escape_text`]) and keep to their line.
pub fn steps(sc: &Scenario, trace: &[TraceEvent]) -> String {
    let mut s = String::new();
    for e in trace {
        let pick = if e.choice != 0 {
            format!(
                "   <- scheduled ahead (choice {} of {})",
                e.choice, e.enabled
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{:>5}  {:>8} ms  {:<12} {}{pick}",
            e.event,
            e.time_ms,
            escape_text(&sc.names.agent_name(e.agent)),
            escape_text(&e.text)
        );
    }
    s
}

/// Consecutive events by different agents.
pub fn context_switches(trace: &[TraceEvent]) -> usize {
    trace
        .windows(2)
        .filter(|w| w[0].agent != w[1].agent)
        .count()
}
