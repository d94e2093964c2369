//! `agentsim explore SCENARIO`: every interleaving of a scenario's agents, time abstracted,
//! on the engine `simulate` runs, with partial-order reduction (`agentsim_sim::explore`).
//!
//! Per anomaly: *reachable* with the shortest schedule found as a replay line (`agentsim
//! replay` and `agentsim shrink` take it), *unreachable* over every interleaving (or "within
//! N steps per agent" when the step budget cut a path), or *cannot tell* when
//! `--max-schedules`, `--max-memory-mb` or a signal stopped the search (the partial counts
//! are printed). `--coverage` tabulates the anomaly sets (lattice points) reached under each
//! runtime (every named runtime unless `--runtime` names some). `--timed` explores only the
//! orders the scenario's latency bounds allow (a `lognormal` between `--quantiles`), by the
//! plain enumeration; its verdicts say which bounds they hold under.
//!
//! Exit 0: every search finished. Exit 2: bad input, or a search stopped by a budget
//! (cannot tell) unless `--allow-cannot-tell`. Exit 130: SIGINT or SIGTERM stopped it
//! (partial counts printed). Reachable anomalies are answers, not failures: exit 0.
//! Progress goes to stderr (`--progress`, `--quiet`). `--shard I/N --partial-out FILE` runs
//! a share of the tree and writes it for `agentsim merge` instead of printing (`shard`).

mod report;
mod shard;

pub use shard::merge_partials;

use super::check_watch::{cancel_on_signals, INTERRUPTED};
use super::gate::GateArgs;
use super::progress::{Items, ProgressArgs};
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_sim::bounds::Quantiles;
use agentsim_sim::explore::{explore, Exploration, ExploreConfig, Search, STEPS_PER_AGENT_DEFAULT};
use agentsim_sim::scenario::{OnMissing, Scenario};
use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
    #[arg(long, conflicts_with_all = ["timed", "shard"])]
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
    /// which an agent would take more is cut there, and verdicts say so.
    #[arg(long, default_value_t = STEPS_PER_AGENT_DEFAULT)]
    pub steps_per_agent: u64,
    /// Stop after this many schedules (the verdicts not yet reached are cannot tell).
    #[arg(long)]
    pub max_schedules: Option<u64>,
    /// Stop when the set of explored classes would pass this many MiB (cannot tell).
    #[arg(long)]
    pub max_memory_mb: Option<u64>,
    /// Worker threads (the result is the same whatever the number).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Cap every agent's `repeat` at N (not `count`): explore a smaller size of a workload;
    /// verdicts then say "at repeat ≤ N" and replay lines carry the cap.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_repeat: Option<u32>,
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
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// One runtime's exploration and its wall time.
pub struct Explored {
    pub result: Exploration,
    pub seconds: f64,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
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
        done.push(Explored {
            result,
            seconds: started.elapsed().as_secs_f64(),
        });
        if cancel.load(Ordering::SeqCst) {
            break;
        }
    }
    if let Ok(t) = ticker.lock() {
        t.finish(done.iter().map(|d| d.result.schedules as usize).sum());
    }
    let interrupted = cancel.load(Ordering::SeqCst);
    let allow = args.gate.allow_cannot_tell;
    emit(&sc, &done, args.json, args.coverage, allow, interrupted)
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
        max_schedules: args.max_schedules,
        max_memory_mb: args.max_memory_mb,
        threads: args.threads,
        on_missing: args.on_missing,
        cancel: Some(cancel),
        progress: Some(progress),
        ..ExploreConfig::new(rt)
    }
}

/// Prints the explorations (text or `--json`) and says which stopped; the exit code (the
/// unsharded run's and the merge's).
fn emit(
    sc: &Scenario,
    done: &[Explored],
    json: bool,
    coverage: bool,
    allow_cannot_tell: bool,
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
    let untold: Vec<&Explored> = done.iter().filter(|d| !d.result.complete).collect();
    if untold.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let level = if allow_cannot_tell {
        "warning"
    } else {
        "error"
    };
    for d in &untold {
        eprintln!(
            "{level}: explore under {}: cannot tell: {} stopped the search after {} schedules \
             (raise it, or pass --allow-cannot-tell)",
            d.result.runtime,
            report::stopped_flag(d.result.stopped),
            d.result.schedules
        );
    }
    Ok(if allow_cannot_tell {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
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
