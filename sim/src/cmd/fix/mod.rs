//! `agentsim fix INPUT`: from a history, a trace or a scenario to the cheapest stack that
//! prevents what it shows, verified and costed on the user's own (fitted) system.
//!
//! The anomaly set is what `detect` finds in the history or trace (for a scenario: what its
//! vanilla trials show); [`plan`] turns it into verified, costed candidates; [`changes`]
//! replays the observed run under the chosen stack; [`idiom`] names the framework's way to
//! get the mechanism. `-o` writes the scenario with the chosen runtime. Exit 0 with a stack,
//! or with "nothing to fix"; 2 on bad input or when no candidate is verified (*cannot tell*
//! which stack fixes it).

use super::input::FromArgs;
use crate::artifacts::figures::Estimate;
use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use crate::cmd::progress::{Items, ProgressArgs};
use crate::experiments::fit_fix::observe::{self, with_runtime};
use crate::experiments::fit_fix::{changes, contains, idiom, names, plan, proportion_json, set};
use agentsim_ingest::Options;
use agentsim_models::verdict::Verdict;
use agentsim_models::Anomaly;
use agentsim_sim::scenario::Scenario;
use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use idiom::Framework;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The cheapest verified stack that prevents the anomalies a run shows, and its cost.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// A JSON Lines history, a trace with `--from`, or a scenario (`.toml`).
    pub input: PathBuf,
    /// `--from` and what is read beside INPUT, as `detect` takes them.
    #[command(flatten)]
    pub from: FromArgs,
    /// Write the (fitted) scenario with the chosen stack as its runtime here.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Trials per stack on the fitted scenario.
    #[arg(long, default_value_t = 1000)]
    pub trials: u64,
    /// The seed of every run (trial k of each stack has the same trial seed: paired).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// What the input gave: the scenario to measure on, its text, the anomaly set, the observed
/// run's replay line (a history or trace whose order a trial reproduced).
pub struct Subject {
    pub scenario: Scenario,
    pub text: String,
    pub exhibits: Vec<Anomaly>,
    pub observed: Option<contains::Reproduced>,
    pub framework: Framework,
}

/// Reads the input and fits it (a scenario is taken as it is).
pub fn subject(
    input: &Path,
    options: &Options,
    scenario_path: &Path,
    trials: u64,
    seed: u64,
    threads: usize,
) -> Result<Subject> {
    if options.from.is_none() && input.extension().is_some_and(|e| e == "toml") {
        let scenario = Scenario::load(input)?;
        let text = std::fs::read_to_string(input)?;
        let all: Vec<Anomaly> = Anomaly::LATTICE.to_vec();
        let (rates, _) = contains::rates(
            &scenario,
            agentsim_models::runtime::Stack::VANILLA,
            &all,
            trials,
            seed,
            threads,
        )?;
        let exhibits = rates
            .iter()
            .filter(|(_, p)| p.k > 0)
            .map(|(a, _)| *a)
            .collect();
        return Ok(Subject {
            scenario,
            text,
            exhibits,
            observed: None,
            framework: Framework::Unknown,
        });
    }
    let obs = super::input::observation(input, options)?;
    let name = observe::scenario_name(input);
    let (fitted, scenario) = observe::fitted(&obs, name, scenario_path, trials, seed)?;
    let observed = contains::find(&scenario, &fitted.expected)?;
    let framework = Framework::of(input, options, obs.report.as_ref());
    Ok(Subject {
        scenario,
        text: fitted.toml,
        exhibits: obs.exhibits(),
        observed,
        framework,
    })
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let options = args.from.options()?;
    anyhow::ensure!(
        (1..=agentsim_sim::scenario::TRIALS_MAX).contains(&args.trials),
        "--trials {} is outside 1..={}",
        args.trials,
        agentsim_sim::scenario::TRIALS_MAX
    );
    let paths = Paths::new().input("the input", &args.input);
    super::input::beside_paths(paths, &options)
        .output("-o", args.out.as_deref())
        .check()?;
    if let Some(out) = &args.out {
        preflight(out)?;
    }
    let threads = crate::experiments::run::default_threads();
    let fallback = args.input.with_extension("fit.toml");
    let path = args.out.clone().unwrap_or(fallback);
    let subject = subject(
        &args.input,
        &options,
        &path,
        args.trials,
        args.seed,
        threads,
    )?;
    if subject.exhibits.is_empty() {
        return nothing_to_fix(&args);
    }
    let mut items = Items::new("fix", "stacks", args.progress);
    let stacks = plan::candidates(&subject.exhibits, threads)?;
    let plan = plan::plan(
        &subject.scenario,
        &subject.exhibits,
        &stacks,
        args.trials,
        args.seed,
        threads,
        &mut |done, total| items.done(done, Some(total)),
    )?;
    items.finish(stacks.len());
    let Some(chosen) = plan.chosen().cloned() else {
        print(&args, &subject, &plan, None, &[])?;
        bail!(
            "cannot tell: no candidate stack prevented {} in all {} trials of the fitted scenario",
            set(&subject.exhibits),
            args.trials
        );
    };
    let changes = match &subject.observed {
        Some(o) => changes::under(&subject.scenario, &o.line, chosen.stack)?,
        None => Vec::new(),
    };
    if let Some(out) = &args.out {
        write_atomic(
            out,
            with_runtime(&subject.text, &chosen.stack.to_string()).as_bytes(),
        )?;
    }
    print(&args, &subject, &plan, Some(&chosen), &changes)?;
    Ok(ExitCode::SUCCESS)
}

fn nothing_to_fix(args: &Args) -> Result<ExitCode> {
    if args.json {
        let v = json!({"exhibits": [], "stack": null, "candidates": [], "changes": []});
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: nothing to fix: it exhibits no lattice anomaly (A1, A2, A3, A6)",
            args.input.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Candidates the text lists (the JSON lists all).
const TEXT_CANDIDATES_MAX: usize = 8;

fn candidate_line(c: &plan::Candidate) -> String {
    let sampled: Vec<String> = c
        .sampled
        .iter()
        .map(|(a, p)| format!("{a} {}/{} (<= {:.1}%)", p.k, p.n, 100.0 * p.hi))
        .collect();
    let explored: Vec<String> = c
        .explored
        .iter()
        .map(|(a, v)| match v {
            Verdict::Holds => format!("{a} reachable"),
            Verdict::Violated => format!("{a} unreachable"),
            Verdict::CannotTell(why) => format!("{a} cannot tell ({why})"),
        })
        .collect();
    let explored = if explored.is_empty() {
        String::new()
    } else {
        format!("; explored {}", explored.join(" "))
    };
    let lengths: Vec<String> = c.lengths.iter().map(|(a, l)| format!("{a} {l}")).collect();
    let checker = if lengths.is_empty() {
        String::new()
    } else {
        format!(" ({})", lengths.join(", "))
    };
    let mut s = format!(
        "{}: {}; checker {}{checker}; sampled {}{explored}; tokens {}, makespan {}, aborts {:.2}, drops {:.2}",
        c.stack,
        if c.verified {
            "verified"
        } else {
            "not verified"
        },
        if c.checker { "prevents" } else { "admits" },
        sampled.join(" "),
        pct(&c.token_overhead),
        pct(&c.makespan_overhead),
        c.aborts.mean,
        c.drops.mean
    );
    if c.lost.mean > 0.0 {
        s.push_str(&format!(
            ", gives up {:.2} operations per run (retries exhausted)",
            c.lost.mean
        ));
    }
    s
}

fn est(e: &Estimate) -> Value {
    json!({"mean": e.mean, "lo": e.lo, "hi": e.hi})
}

fn pct(e: &Estimate) -> String {
    format!(
        "{:+.1}% [{:+.1}, {:+.1}]",
        100.0 * e.mean,
        100.0 * e.lo,
        100.0 * e.hi
    )
}

fn print(
    args: &Args,
    s: &Subject,
    plan: &plan::Plan,
    chosen: Option<&plan::Candidate>,
    changes: &[changes::Change],
) -> Result<()> {
    let idioms = chosen
        .map(|c| idiom::idioms(&s.framework, c.stack))
        .unwrap_or_default();
    if args.json {
        let cands: Vec<Value> = plan
            .candidates
            .iter()
            .map(|c| {
                json!({
                    "stack": c.stack.to_string(),
                    "excludes": names(&c.excludes.members()),
                    "verified": c.verified,
                    "checker": c.checker,
                    "sampled": c.sampled.iter().map(|(a, p)| (a.name().to_owned(), proportion_json(p))).collect::<serde_json::Map<_, _>>(),
                    "checker_lengths": c.lengths.iter().map(|(a, l)| (a.name().to_owned(), Value::String(l.to_string()))).collect::<serde_json::Map<_, _>>(),
                    "explored": c.explored.iter().map(|(a, v)| (a.name().to_owned(), Value::String(match v {
                        Verdict::Holds => "reachable".to_owned(),
                        Verdict::Violated => "unreachable".to_owned(),
                        Verdict::CannotTell(why) => format!("cannot tell: {why}"),
                    }))).collect::<serde_json::Map<_, _>>(),
                    "token_overhead": est(&c.token_overhead),
                    "makespan_overhead": est(&c.makespan_overhead),
                    "tokens_wasted": est(&c.tokens_wasted),
                    "aborts": est(&c.aborts),
                    "drops": est(&c.drops),
                    "retries": est(&c.retries),
                    "lost_operations": est(&c.lost),
                    "pareto": c.pareto,
                })
            })
            .collect();
        let v = json!({
            "input": args.input.display().to_string(),
            "exhibits": names(&s.exhibits),
            "trials": args.trials,
            "vanilla": plan.vanilla.iter().map(|(a, p)| (a.name().to_owned(), proportion_json(p))).collect::<serde_json::Map<_, _>>(),
            "stack": chosen.map(|c| c.stack.to_string()),
            "candidates": cands,
            "replay": s.observed.as_ref().map(|o| o.line.to_string()),
            "changes": changes,
            "framework": s.framework.name(),
            "idioms": idioms.iter().map(|(m, t)| json!({"mechanism": m.to_string(), "idiom": t})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("{}: exhibits {}", args.input.display(), set(&s.exhibits));
    for (a, p) in &plan.vanilla {
        println!("  vanilla on the fitted scenario: {a} {}", p.display());
    }
    println!(
        "candidates ({} trials each, paired by seed; overheads against vanilla, 95% intervals):",
        args.trials
    );
    for c in plan.candidates.iter().take(TEXT_CANDIDATES_MAX) {
        println!("  {}", candidate_line(c));
    }
    if plan.candidates.len() > TEXT_CANDIDATES_MAX {
        println!(
            "  … {} more (--json lists every candidate)",
            plan.candidates.len() - TEXT_CANDIDATES_MAX
        );
    }
    let front: Vec<String> = plan
        .candidates
        .iter()
        .filter(|c| c.pareto)
        .map(|c| c.stack.to_string())
        .collect();
    println!(
        "Pareto front (token, makespan overhead): {}",
        front.join(", ")
    );
    let Some(c) = chosen else { return Ok(()) };
    let exploration = if c.proven() {
        "unreachable on every interleaving".to_owned()
    } else {
        let why: Vec<String> = c
            .explored
            .iter()
            .filter_map(|(a, v)| match v {
                Verdict::CannotTell(why) => Some(format!("{a}: {why}")),
                _ => None,
            })
            .collect();
        format!("exploration cannot tell ({})", why.join("; "))
    };
    println!(
        "stack: {} (cheapest verified; token overhead {}; {exploration})",
        c.stack,
        pct(&c.token_overhead)
    );
    if let Some(o) = &s.observed {
        match &args.out {
            Some(_) => println!(
                "your run under {} (replayed from {}):",
                c.stack,
                o.line.command()
            ),
            None => println!(
                "your run under {} (trial {} of the fitted scenario; -o writes it to replay):",
                c.stack, o.line.trial
            ),
        }
        for ch in changes {
            println!("  {}", ch.text());
        }
    }
    if !idioms.is_empty() {
        println!("framework: {}", s.framework.name());
    }
    for (m, text) in &idioms {
        println!("idiom ({m}): {text}");
    }
    if let Some(out) = &args.out {
        println!("wrote {} (runtime = \"{}\")", out.display(), c.stack);
    }
    Ok(())
}
