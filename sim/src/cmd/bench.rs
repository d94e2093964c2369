//! `agentsim bench <what>`: the benchmarks of `crate::bench`, one sub-subcommand per thing
//! measured (`detect`, `sim`, `cpl`). Each parses its flags, runs the benchmark and prints its
//! figures (text, or `--json` on stdout); it asserts nothing about speed.

use crate::bench;
use agentsim_models::runtime::Stack;
use agentsim_sim::scenario::Scenario;
use clap::{Args as ClapArgs, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a benchmark.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to benchmark.
#[derive(Debug, Subcommand)]
pub enum What {
    /// The fast detectors on a generated history (and the spec form at a small size).
    Detect(DetectArgs),
    /// The simulator: simulated operations per second on one core.
    Sim(SimArgs),
    /// The CPL monitor: per-event time and bytes per message on CPL.md's workloads.
    Cpl(CplArgs),
    /// Write the detector benchmarks' history as JSON Lines (for `agentsim detect`).
    History(bench::history::Args),
    /// The stream detector alone, on generated records, in a bounded window.
    Stream(bench::stream::Args),
    /// `agentsim view` on a generated history: the page's build time and size.
    View(super::view::bench::Args),
    /// OTLP/JSON ingest on a generated export (written to `--out` and kept).
    Ingest(bench::ingest::Args),
    /// `agentsim serve` under a loopback load of protobuf batches: spans/s, latency, memory.
    Serve(bench::serve::Args),
    /// `agentsim explore`: the largest repeat cap each scenario × runtime finishes in a budget.
    Explore(bench::explore::Args),
}

/// `agentsim bench detect`.
#[derive(Debug, ClapArgs)]
pub struct DetectArgs {
    /// Records in the generated history for the fast detectors (held in memory, about 600
    /// bytes each: at most 5,000,000).
    #[arg(long, default_value_t = 1_000_000, value_parser = bench::history::records(5_000_000))]
    pub records: u64,
    /// Records in the history for the spec form (quadratic: at most 100,000).
    #[arg(long, default_value_t = 10_000, value_parser = bench::history::records(100_000))]
    pub spec_records: u64,
    /// Timed runs of all fast detectors together; the best is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `agentsim bench sim`.
#[derive(Debug, ClapArgs)]
pub struct SimArgs {
    /// The scenario (default: the edit-review workload with stub generation).
    #[arg(default_value = "scenarios/examples/edit-review.toml")]
    pub scenario: PathBuf,
    /// Trials per measurement (1..=1000000).
    #[arg(long, default_value_t = 20_000, value_parser = crate::limits::trials)]
    pub trials: u64,
    /// Runtime, overriding the scenario's.
    #[arg(long)]
    pub runtime: Option<Stack>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Measure the engine alone and skip the full pipeline (for profiling the engine).
    #[arg(long)]
    pub engine_only: bool,
    /// Measure the engine this many times (each `--trials` trials) and report the median and
    /// the best run as well as each; on a shared machine one run says little.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
}

/// `agentsim bench cpl` (and `agentsim cpl bench`).
#[derive(Debug, ClapArgs)]
pub struct CplArgs {
    /// Print a JSON array, one object per workload.
    #[arg(long)]
    pub json: bool,
    /// Timed batches per figure (the median of their means is reported).
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub batches: u32,
    /// Events per batch.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub batch: u32,
    /// Untimed events before the batches.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub warmup: u32,
    /// Seed of the event effects.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Detect(a) => detect(a),
        What::Sim(a) => sim(a),
        What::Cpl(a) => cpl(a),
        What::History(a) => bench::history::run(a),
        What::Stream(a) => bench::stream::run(a),
        What::View(a) => super::view::bench::run(a),
        What::Ingest(a) => ingest(a),
        What::Explore(a) => explore(a),
        What::Serve(a) => {
            let f = bench::serve::run(&a)?;
            match a.json {
                true => println!("{}", serde_json::to_string_pretty(&f)?),
                false => print!("{}", bench::serve::text(&f)),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn detect(a: DetectArgs) -> anyhow::Result<ExitCode> {
    let cfg = bench::detect::Config {
        records: a.records as usize,
        spec_records: a.spec_records as usize,
        repeat: a.repeat,
        seed: a.seed,
    };
    let v = bench::detect::run(&cfg)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", bench::detect::text(&v));
    }
    Ok(ExitCode::SUCCESS)
}

fn sim(a: SimArgs) -> anyhow::Result<ExitCode> {
    let sc = Scenario::load(&a.scenario)?;
    let cfg = bench::sim::Config {
        trials: a.trials,
        runtime: a.runtime.unwrap_or(sc.runtime),
        engine_only: a.engine_only,
        repeat: a.repeat,
    };
    let f = bench::sim::run(&sc, &cfg)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&f.json())?);
    } else {
        print!("{}", f.text());
    }
    Ok(ExitCode::SUCCESS)
}

fn ingest(a: bench::ingest::Args) -> anyhow::Result<ExitCode> {
    let f = bench::ingest::run(&a)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&f)?);
    } else {
        print!("{}", bench::ingest::text(&f));
    }
    Ok(ExitCode::SUCCESS)
}

fn explore(a: bench::explore::Args) -> anyhow::Result<ExitCode> {
    let cases = bench::explore::run(&a)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&cases)?);
    } else {
        print!("{}", bench::explore::table(&cases));
    }
    Ok(ExitCode::SUCCESS)
}

/// `bench cpl`, also reached as `cpl bench`.
pub fn cpl(a: CplArgs) -> anyhow::Result<ExitCode> {
    let cfg = bench::cpl::Config {
        batches: a.batches,
        batch: a.batch,
        warmup: a.warmup,
        seed: a.seed,
    };
    let all = bench::cpl::run(&cfg)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        print!("{}", bench::cpl::table(&all));
    }
    Ok(ExitCode::SUCCESS)
}
