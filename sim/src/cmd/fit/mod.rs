//! `agentsim fit INPUT [--from SOURCE …] -o SCENARIO.toml`: a scenario of the user's own
//! system from a history or a trace (read as `detect` reads it, with the same flags:
//! [`super::input`]) (`agentsim_sim::fit` says how), written atomically,
//! then checked to contain the observed run: a replay line whose history has the input's
//! order and anomalies, and each observed anomaly's rate over the scenario's vanilla trials.
//!
//! Exit 0 when the scenario was written (whether or not the search found the run: the output
//! says *cannot tell* then); 2 on bad input, including a trace with no steps.

use super::input::FromArgs;
use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use crate::cmd::progress::{Items, ProgressArgs};
use crate::experiments::fit_fix::observe;
use crate::experiments::fit_fix::{contains, names, proportion_json, set};
use clap::Args as ClapArgs;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

/// Fit a scenario of the observed system to a history or a trace.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// A JSON Lines history, or a trace with `--from`.
    pub input: PathBuf,
    /// `--from` and what is read beside INPUT, as `detect` takes them.
    #[command(flatten)]
    pub from: FromArgs,
    /// Where to write the scenario.
    #[arg(short = 'o', long = "out")]
    pub out: PathBuf,
    /// Trials of the vanilla run that measures each observed anomaly (and the scenario's
    /// `trials`).
    #[arg(long, default_value_t = 1000)]
    pub trials: u64,
    /// The scenario's seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = args.from.options()?;
    anyhow::ensure!(
        (1..=agentsim_sim::scenario::TRIALS_MAX).contains(&args.trials),
        "--trials {} is outside 1..={}",
        args.trials,
        agentsim_sim::scenario::TRIALS_MAX
    );
    let paths = Paths::new().input("the input", &args.input);
    super::input::beside_paths(paths, &options)
        .output("-o", Some(&args.out))
        .check()?;
    preflight(&args.out)?;
    let mut items = Items::new("fit", "phases (fit, search, rates)", args.progress);
    let obs = super::input::observation(&args.input, &options)?;
    let name = observe::scenario_name(&args.input);
    let (fitted, sc) = observe::fitted(&obs, name, &args.out, args.trials, args.seed)?;
    write_atomic(&args.out, fitted.toml.as_bytes())?;
    items.done(1, Some(3));
    let exhibits = obs.exhibits();
    let found = contains::find(&sc, &fitted.expected)?;
    items.done(2, Some(3));
    let threads = crate::experiments::run::default_threads();
    let (rates, _) = contains::rates(&sc, sc.runtime, &exhibits, args.trials, args.seed, threads)?;
    let explore = contains::explore_reachable(&sc, sc.runtime, &exhibits);
    items.finish(3);
    if args.json {
        let rates: serde_json::Map<String, serde_json::Value> = rates
            .iter()
            .map(|(a, p)| (a.name().to_owned(), proportion_json(p)))
            .collect();
        let v = json!({
            "input": args.input.display().to_string(),
            "scenario": args.out.display().to_string(),
            "records": obs.history.records.len(),
            "exhibits": names(&exhibits),
            "header": fitted.header,
            "replay": found.as_ref().map(|f| f.line.to_string()),
            "replay_exhibits": found.as_ref().map(|f| names(&f.exhibits)),
            "rates": rates,
            "explore": explore.iter().map(|(a, v)| (a.name().to_owned(), Value::String(v.to_string()))).collect::<serde_json::Map<_, _>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "fit: {} ({} records) → {}",
        obs.source,
        obs.history.records.len(),
        crate::artifacts::paths::shown(&args.out)
    );
    for line in &fitted.header[1..] {
        println!("  {line}");
    }
    println!("observed anomalies: {}", set(&exhibits));
    match &found {
        Some(f) => {
            println!("replay: {}", f.line.command());
            println!(
                "  its history has the input's {} records in the input's order; detect: {}",
                f.history.records.len(),
                set(&f.exhibits)
            );
        }
        None => println!(
            "replay: cannot tell: none of the first {} vanilla trials has the input's order",
            contains::SEARCH_TRIALS_MAX
        ),
    }
    for (a, p) in &rates {
        println!("vanilla, {} trials: {a} {}", args.trials, p.display());
    }
    for (a, v) in &explore {
        println!("explore: {a} reachable: {v}");
    }
    Ok(ExitCode::SUCCESS)
}
