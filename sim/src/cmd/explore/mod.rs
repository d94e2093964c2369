//! `agentsim explore SCENARIO`: every interleaving of a scenario's agents, time abstracted,
//! on the engine `simulate` runs, with partial-order reduction (`agentsim_sim::explore`).
//!
//! Per anomaly: *reachable* with the shortest schedule found as a replay line (`agentsim
//! replay` and `agentsim shrink` take it), *unreachable* over every interleaving (only from a
//! complete search), or *cannot tell*: with a budget reason when anything cut a path or
//! stopped the search (the step budget, `events_max`, `--max-repeat`, `--max-schedules`,
//! `--max-memory-mb`, a signal; the partial counts are printed), or *vacuous* when the
//! scenario cannot produce the anomaly under the runtime at all. `--coverage` tabulates the
//! anomaly sets (lattice points) reached under each runtime (every named runtime unless
//! `--runtime` names some). `--timed` explores only the
//! orders the scenario's latency bounds allow (a `lognormal` between `--quantiles`), by the
//! plain enumeration; its verdicts say which bounds they hold under.
//!
//! A gate, as `detect`, `simulate` and `check` are: exit 0 when every asked verdict is
//! decided, 1 when an anomaly `--fail-on` names is reachable, 2 on bad input or an asked
//! verdict that is *cannot tell* unless `--allow-cannot-tell`. Without `--fail-on` every
//! anomaly is asked but those the scenario cannot produce (vacuous), and a reachable one is
//! an answer, not a failure. Exit 130: SIGINT or SIGTERM stopped it (partial counts
//! printed).
//! `--liveness` also decides deadlock, starvation and termination on the scenario's state
//! graph under `--fairness` (`agentsim_sim::explore::live`, docs/liveness.md): each is
//! *holds*, *violated* with a path or lasso that `agentsim replay` runs, or *cannot tell*;
//! a cannot tell is an asked verdict of the gate, a violation an answer. The safety search
//! and its verdicts are the same with or without it.
//! Progress goes to stderr (`--progress`, `--quiet`). `--shard I/N --partial-out FILE` runs
//! a share of the tree and writes it for `agentsim merge` instead of printing (`shard`).

mod report;
mod shard;

pub use shard::merge_partials;

use super::check_watch::{cancel_on_signals, INTERRUPTED};
use super::gate::{GateArgs, Outcome};
use super::progress::{Items, ProgressArgs};
use agentsim_models::fair::Fairness;
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::{Anomaly, Reason, Verdict};
use agentsim_sim::bounds::Quantiles;
use agentsim_sim::explore::live::{
    liveness, LiveConfig, LiveVerdict, Liveness, MAX_STATES_DEFAULT,
};
use agentsim_sim::explore::{
    explore, Exploration, ExploreConfig, Reach, Search, STEPS_PER_AGENT_DEFAULT,
};
use agentsim_sim::metrics::reported;
use agentsim_sim::scenario::{OnMissing, Scenario};
use anyhow::{Context, Result};
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The schedule ceiling of a search when `--max-schedules` is not given, the same for the
/// reduced search and the plain enumeration (`--no-reduction`, `--timed`): a plain search of
/// a polling scenario can pass tens of millions of schedules, and a run that does not end is
/// no answer. A search stopped there is *cannot tell*.
pub const SCHEDULES_DEFAULT_MAX: u64 = 10_000_000;

/// Explore every interleaving of a scenario.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Runtime(s) to explore under, comma-separated (a named runtime or a `+`-joined stack);
    /// default: the scenario's, or with `--coverage` every named runtime.
    #[arg(long, value_delimiter = ',')]
    pub runtime: Vec<Stack>,
    /// Plain depth-first enumeration of every interleaving, without partial-order reduction.
    #[arg(long)]
    pub no_reduction: bool,
    /// Explore every order in which a `count` entry's interchangeable copies start, not only
    /// index order (counts are then not up to renaming copies; see docs/exploring.md).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Let a polling loop spin: an agent whose last iteration repeated the one before it
    /// without effect is not parked until a write wakes it (its repeats run until the step
    /// budget cuts the path; see docs/exploring.md).
    #[arg(long)]
    pub no_park: bool,
    /// Re-run every path from the start instead of resuming it from a snapshot of the
    /// engine where it leaves the last path (the same search, slower; see docs/exploring.md).
    #[arg(long)]
    pub no_snapshots: bool,
    /// Keep the states met at agent choice points and end a path at one met before: the
    /// plain enumeration, merging interleavings that meet in one state (the anomaly sets and
    /// verdicts are the stateless search's; see docs/exploring.md).
    #[arg(long, conflicts_with = "timed")]
    pub stateful: bool,
    /// Explore only the orders the latency bounds allow (`fixed` exactly, `uniform` its
    /// interval, `lognormal` between `--quantiles`); runs the plain enumeration, since
    /// partial-order reduction is not sound with time.
    #[arg(long)]
    pub timed: bool,
    /// With `--timed`: the quantiles LO,HI a `lognormal` latency is kept between.
    #[arg(long, value_parser = Quantiles::parse, requires = "timed",
          default_value = "0.001,0.999")]
    pub quantiles: Quantiles,
    /// Steps (engine events; a `write` is two) each agent may take on one path; a path on
    /// which an agent would take more is cut there, and verdicts say so. `unbounded` (with
    /// `--stateful`): no budget, a path ends where it meets a state met before.
    #[arg(long, default_value_t = STEPS_PER_AGENT_DEFAULT,
          value_parser = crate::limits::steps_per_agent)]
    pub steps_per_agent: u64,
    /// Stop after this many schedules (the verdicts not yet reached are cannot tell);
    /// default 10,000,000, with or without reduction.
    #[arg(long, default_value_t = SCHEDULES_DEFAULT_MAX)]
    pub max_schedules: u64,
    /// Stop when the set of explored classes (and, with `--stateful`, of states met) would
    /// pass this many MiB (cannot tell).
    #[arg(long)]
    pub max_memory_mb: Option<u64>,
    /// Worker threads, 1..=256 (the result is the same whatever the number; with
    /// `--stateful`, the verdicts, anomaly sets and states are, and the witnesses and path
    /// counts depend on which thread met a state first).
    #[arg(long, default_value_t = 1, value_parser = crate::limits::threads)]
    pub threads: usize,
    /// Cap every agent's `repeat` at N (not `count`): explore a smaller size of a workload;
    /// verdicts then say "at repeat ≤ N", what the capped search did not find is cannot tell,
    /// and replay lines carry the cap.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_repeat: Option<u32>,
    /// Exit 1 when one of these anomalies (comma-separated) is reachable, 2 when its verdict
    /// is cannot tell (a cut search, or a scenario that cannot produce it).
    #[arg(long, value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<Anomaly>,
    /// Table of the anomaly sets (lattice points) reached under each runtime.
    #[arg(long)]
    pub coverage: bool,
    /// Recorded generator: what to do with a generation the recording lacks.
    #[arg(long)]
    pub on_missing: Option<OnMissing>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run shard I of N (1-based) of the schedule tree and write it with --partial-out.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write this shard's share as a partial result for `agentsim merge` (nothing is printed).
    #[arg(long, value_name = "FILE")]
    pub partial_out: Option<PathBuf>,
    /// Also decide liveness on the scenario's state graph: deadlock, starvation and
    /// termination, each holds, violated (with a replayable path or lasso) or cannot tell
    /// (see docs/liveness.md).
    #[arg(long, conflicts_with_all = ["timed", "shard", "coverage"])]
    pub liveness: bool,
    /// With --liveness: the agents' fairness, weak (an agent enabled from some point on steps
    /// infinitely often), strong (enabled infinitely often: steps infinitely often) or none.
    #[arg(long, requires = "liveness", default_value = "weak", value_parser = parse_fairness)]
    pub fairness: Fairness,
    /// With --liveness: stop after numbering this many states (the verdicts not decided are
    /// cannot tell).
    #[arg(long, requires = "liveness", default_value_t = MAX_STATES_DEFAULT,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_states: u64,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// `weak`, `strong` or `none`.
fn parse_fairness(s: &str) -> Result<Fairness, String> {
    match s {
        "weak" => Ok(Fairness::Weak),
        "strong" => Ok(Fairness::Strong),
        "none" => Ok(Fairness::None),
        _ => Err(format!(
            "unknown fairness `{s}` (expected weak, strong or none)"
        )),
    }
}

/// One runtime's exploration and its wall time, and its liveness when asked for.
pub struct Explored {
    pub result: Exploration,
    pub seconds: f64,
    pub liveness: Option<(Liveness, f64)>,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let sharded = shard::flags(&args)?;
    crate::artifacts::paths::Paths::new()
        .input("the scenario", &args.scenario)
        .output("--partial-out", args.partial_out.as_deref())
        .check()?;
    let mut sc = Scenario::load(&args.scenario)?;
    if let Some(n) = args.max_repeat {
        sc = sc.with_repeat_cap(n).context("--max-repeat")?.0;
    }
    let runtimes = runtimes(&args, &sc);
    let cancel = cancel_on_signals().context("installing the signal handlers")?;
    let ticker = Mutex::new(Items::new("explore", "schedules", args.progress));
    let progress = |n: u64, _classes: u64| {
        if let Ok(mut t) = ticker.lock() {
            t.done(n as usize, None);
        }
    };
    if let Some(to) = sharded {
        return shard::write(&args, &sc, &runtimes, to, &cancel, &progress);
    }
    let mut done = Vec::new();
    for &rt in &runtimes {
        let cfg = config(&args, rt, &cancel, &progress);
        let started = Instant::now();
        let result = explore(&sc, &cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
        let seconds = started.elapsed().as_secs_f64();
        let live = if args.liveness {
            let cfg = LiveConfig {
                fairness: args.fairness,
                max_states: args.max_states,
                park: !args.no_park,
                on_missing: args.on_missing,
                cancel: Some(&cancel),
                ..LiveConfig::new(rt)
            };
            let started = Instant::now();
            let l = liveness(&sc, &cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
            Some((l, started.elapsed().as_secs_f64()))
        } else {
            None
        };
        done.push(Explored {
            result,
            seconds,
            liveness: live,
        });
        if cancel.load(Ordering::SeqCst) {
            break;
        }
    }
    if let Ok(t) = ticker.lock() {
        t.finish(done.iter().map(|d| d.result.schedules as usize).sum());
    }
    let interrupted = cancel.load(Ordering::SeqCst);
    let gate = Gate {
        fail_on: &args.fail_on,
        args: args.gate,
    };
    emit(&sc, &done, args.json, args.coverage, gate, interrupted)
}

/// An anomaly the explorer reports (`--fail-on`).
fn parse_fail_on(s: &str) -> Result<Anomaly, String> {
    match Anomaly::parse(s) {
        Some(a) if reported().any(|r| r == a) => Ok(a),
        _ => Err(format!(
            "unknown anomaly `{s}` (expected {})",
            reported().map(Anomaly::name).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// What the exit code gates on: the `--fail-on` anomalies (every one the scenario can
/// produce when none is named) and `--allow-cannot-tell`.
#[derive(Clone, Copy)]
pub(crate) struct Gate<'a> {
    pub fail_on: &'a [Anomaly],
    pub args: GateArgs,
}

impl Gate<'_> {
    /// The asked verdicts, named `A1 under vanilla`: with `--fail-on`, "never A" for each
    /// named anomaly; without, every anomaly that is not vacuous, a reachable one decided
    /// (an answer, not a failure).
    fn verdicts(&self, done: &[Explored]) -> Vec<(String, Verdict)> {
        let mut out = Vec::new();
        for d in done {
            let e = &d.result;
            for f in &e.findings {
                let name = format!("{} under {}", f.anomaly.name(), e.runtime);
                if !self.fail_on.is_empty() {
                    if self.fail_on.contains(&f.anomaly) {
                        out.push((name, f.never()));
                    }
                } else if !f.vacuous() {
                    let v = match f.reach {
                        Reach::Reachable => Verdict::Holds,
                        _ => f.never(),
                    };
                    out.push((name, v));
                }
            }
        }
        out
    }

    /// The liveness verdicts, named `starvation under ssi (weak fairness)`: a violation is
    /// an answer (decided), a cannot tell is not.
    fn live_verdicts(&self, done: &[Explored]) -> Vec<(String, Verdict)> {
        let mut out = Vec::new();
        for d in done {
            let Some((l, _)) = &d.liveness else {
                continue;
            };
            for (p, f) in report::live_findings(l) {
                let name = format!(
                    "{p} under {} ({} fairness)",
                    d.result.runtime,
                    l.fairness.long_name()
                );
                let v = match &f.verdict {
                    LiveVerdict::CannotTell(why) => {
                        Verdict::CannotTell(Reason::Budget(why.clone()))
                    }
                    _ => Verdict::Holds,
                };
                out.push((name, v));
            }
        }
        out
    }
}

/// The search `args` asks for: `--timed` is the plain enumeration of the orders the bounds
/// allow (reduction is not sound with time), `--no-reduction` and `--stateful` the plain
/// enumeration, and
/// otherwise the reduced search, folding copies unless `--no-symmetry`.
fn search(args: &Args) -> Search {
    if args.timed {
        Search::Timed(args.quantiles)
    } else if args.no_reduction || args.stateful {
        Search::Plain
    } else {
        Search::Reduced {
            symmetry: !args.no_symmetry,
        }
    }
}

/// The exploration `args` asks for under `rt`.
fn config<'a>(
    args: &Args,
    rt: Stack,
    cancel: &'a AtomicBool,
    progress: &'a (dyn Fn(u64, u64) + Sync),
) -> ExploreConfig<'a> {
    ExploreConfig {
        search: search(args),
        stateful: args.stateful,
        park: !args.no_park,
        snapshots: !args.no_snapshots,
        steps_per_agent: args.steps_per_agent,
        max_schedules: Some(args.max_schedules),
        max_memory_mb: args.max_memory_mb,
        threads: args.threads,
        on_missing: args.on_missing,
        cancel: Some(cancel),
        progress: Some(progress),
        ..ExploreConfig::new(rt)
    }
}

/// Prints the explorations (text or `--json`) and says which verdicts cannot be told and
/// why; the exit code of the gate (the unsharded run's and the merge's).
fn emit(
    sc: &Scenario,
    done: &[Explored],
    json: bool,
    coverage: bool,
    gate: Gate<'_>,
    interrupted: bool,
) -> Result<ExitCode> {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::json(sc, done, coverage))?
        );
    } else {
        print!("{}", report::text(sc, done, coverage));
    }
    if interrupted {
        return Ok(ExitCode::from(INTERRUPTED));
    }
    let verdicts = gate.verdicts(done);
    let live = gate.live_verdicts(done);
    let outcome = gate
        .args
        .outcome(verdicts.iter().chain(&live).map(|(_, v)| v));
    let level = match outcome {
        Outcome::CannotTell => "error",
        _ => "warning",
    };
    // One line per cut or stopped search, naming the flag to raise; then the gate's lines
    // for the asked verdicts a search could not decide for another reason (vacuity).
    for d in done.iter().filter(|d| !d.result.complete) {
        let asked = verdicts.iter().any(|(n, v)| {
            n.ends_with(&format!(" under {}", d.result.runtime))
                && matches!(v.reason(), Some(Reason::Budget(_)))
        });
        if let (true, Some(why)) = (asked, d.result.budget_reason()) {
            eprintln!(
                "{level}: explore under {}: cannot tell ({why}); raise {}, or pass \
                 --allow-cannot-tell",
                d.result.runtime,
                report::what_to_raise(&d.result)
            );
        }
    }
    let mut other: Vec<(String, Verdict)> = verdicts
        .iter()
        .filter(|(_, v)| !matches!(v.reason(), Some(Reason::Budget(_))))
        .cloned()
        .collect();
    other.extend(live);
    for m in gate.args.messages("explore", &other) {
        eprintln!("{m}");
    }
    Ok(outcome.code())
}

/// The runtimes to explore under.
fn runtimes(args: &Args, sc: &Scenario) -> Vec<Stack> {
    if !args.runtime.is_empty() {
        return args.runtime.clone();
    }
    if args.coverage {
        return RuntimeKind::ALL.iter().map(|k| k.stack()).collect();
    }
    vec![sc.runtime]
}
