//! `agentsim fix INPUT`: from a history, a trace or a scenario to the cheapest stack that
//! prevents what it shows, verified and costed on the user's own (fitted) system.
//!
//! The anomaly set is what `detect` finds in the history or trace (for a scenario: what its
//! vanilla trials show); [`plan`] turns it into verified, costed candidates; [`changes`]
//! replays the observed run under the chosen stack; [`idiom`] names the framework's way to
//! get the mechanism. `-o` writes the scenario with the chosen runtime. Exit 0 with a stack,
//! or with "nothing to fix"; 2 on bad input, when no candidate is verified (*cannot tell*
//! which stack fixes it), or when the input shows an anomaly out of `fix`'s scope (A4, the A3
//! residue), named on stderr.

use super::input::FromArgs;
use crate::artifacts::figures::Estimate;
use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use crate::cmd::progress::{Items, ProgressArgs};
use crate::experiments::fit_fix::observe::{self, with_runtime};
use crate::experiments::fit_fix::{changes, contains, idiom, names, plan, proportion_json, set};
use agentsim_ingest::Options;
use agentsim_models::verdict::Verdict;
use agentsim_models::{escape_text, Anomaly};
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
    /// What the input shows that no runtime stack is chosen for: A4 (a replicated store's
    /// read discipline, `agentsim split-view`) and the A3 residue without A3 (a flat trace's
    /// read of a value no record wrote, not a decided A3).
    pub out_of_scope: Vec<Anomaly>,
}

/// Why each anomaly out of `fix`'s scope is.
fn out_of_scope_why(a: Anomaly) -> &'static str {
    match a {
        Anomaly::A4 => {
            "a split view is prevented by the replicas' read discipline, not a runtime stack \
             (agentsim split-view, agentsim check --read-discipline)"
        }
        Anomaly::A3Residue => {
            "a read of a value no record wrote at or before it; without preds it is not a \
             decided A3 (record preds, or fix the scenario that produced it)"
        }
        _ => "",
    }
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
            out_of_scope: Vec::new(),
        });
    }
    let obs = super::input::observation(input, options)?;
    let name = observe::scenario_name(input);
    let (fitted, scenario) = observe::fitted(&obs, name, scenario_path, trials, seed)?;
    let observed = contains::find(&scenario, &fitted.expected)?;
    // From the state the trace began in, as the ingestion found it: a read of a value no
    // record in the input wrote is a read of that state, not a residue.
    let initial = obs.report.as_ref().map(|r| r.initial.values.clone());
    let initial = initial.unwrap_or_default();
    let report = agentsim_models::detect::fast::detect_from(
        &obs.history,
        &initial,
        agentsim_models::detect::fast::Tuning::default(),
    );
    // The residue over-approximates A3: beside a decided A3 it is that cascade, which the
    // chosen stack answers for; alone (a flat trace without preds) it is not. A residue read
    // of a value no record wrote is left only on a cell whose reads show writes missing from
    // the trace (the ingest report names it), which is not aborted data either: only a read
    // of a value an aborted record wrote asks anything of fix.
    let aborted_residue = report.a3_residue.iter().any(|w| {
        obs.history.records.iter().any(|r| {
            r.aborted && r.write_set.contains(&w.cell) && r.write_values.get(w.cell) == w.value
        })
    });
    let out_of_scope = [Anomaly::A4, Anomaly::A3Residue]
        .into_iter()
        .filter(|&a| report.has(a))
        .filter(|&a| a != Anomaly::A3Residue || (aborted_residue && !report.has(Anomaly::A3)))
        .collect();
    let framework = Framework::of(input, options, obs.report.as_ref());
    Ok(Subject {
        scenario,
        text: fitted.toml,
        exhibits: obs.exhibits(),
        observed,
        framework,
        out_of_scope,
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
        return nothing_to_fix(&args, &subject.out_of_scope);
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
    Ok(scope_exit(&subject.out_of_scope))
}

/// Exit 0 when the input shows nothing out of `fix`'s scope; else each such anomaly named
/// on stderr, and exit 2: the stack (if any) does not answer for it.
fn scope_exit(out_of_scope: &[Anomaly]) -> ExitCode {
    if out_of_scope.is_empty() {
        return ExitCode::SUCCESS;
    }
    for &a in out_of_scope {
        eprintln!(
            "error: the input shows {a}, which is out of fix's scope: {}",
            out_of_scope_why(a)
        );
    }
    ExitCode::from(2)
}

/// No lattice anomaly: "nothing to fix" only when nothing else is shown either.
fn nothing_to_fix(args: &Args, out_of_scope: &[Anomaly]) -> Result<ExitCode> {
    if args.json {
        let v = json!({"exhibits": [], "out_of_scope": names(out_of_scope), "stack": null,
                       "candidates": [], "changes": []});
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if out_of_scope.is_empty() {
        println!(
            "{}: nothing to fix: it exhibits no anomaly",
            crate::artifacts::paths::shown(&args.input)
        );
    } else {
        println!(
            "{}: no lattice anomaly (A1, A2, A3, A6) to fix; it shows {}, out of fix's scope",
            crate::artifacts::paths::shown(&args.input),
            set(out_of_scope)
        );
    }
    Ok(scope_exit(out_of_scope))
}

/// Candidates the text lists (the JSON lists all).
const TEXT_CANDIDATES_MAX: usize = 8;

fn candidate_line(sc: &Scenario, c: &plan::Candidate) -> String {
    let sampled: Vec<String> = c
        .sampled
        .iter()
        .map(|(a, p)| {
            let hi = agentsim_sim::stats::percent(p.hi);
            format!("{a} {}/{} (<= {hi}%)", p.k, p.n)
        })
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
        "{}: {}; checker {}{checker}; sampled {}{explored}; {}, {}, aborts {:.2}, drops {:.2}",
        c.stack,
        if c.verified {
            "verified"
        } else {
            "not verified"
        },
        if c.checker { "prevents" } else { "admits" },
        sampled.join(" "),
        cost("tokens", &c.token_overhead),
        cost("makespan", &c.makespan_overhead),
        c.aborts.mean,
        c.drops.mean
    );
    if c.lost.mean > 0.0 {
        s.push_str(&format!(
            ", gives up {:.2} operations per run (retries exhausted)",
            c.lost.mean
        ));
    }
    if let Some(why) = live_text(sc, c) {
        s.push_str(&format!("; {why}"));
    }
    s
}

/// What the liveness search said of a candidate, when it refused it or could not tell:
/// `refused for liveness: starvation of client (lasso …)`.
fn live_text(sc: &Scenario, c: &plan::Candidate) -> Option<String> {
    use agentsim_sim::explore::live::LiveVerdict;
    let l = c.liveness.as_ref()?;
    let found = [
        ("starvation", &l.starvation),
        ("termination", &l.termination),
    ];
    if c.not_live() {
        let (p, f) = found
            .iter()
            .find(|(_, f)| f.verdict == LiveVerdict::Violated)
            .expect("not live");
        let agent = f.agent.map_or_else(
            || "an agent".to_owned(),
            |a| escape_text(&sc.agents[a].name).into_owned(),
        );
        let line = f
            .lasso
            .as_ref()
            .map_or(String::new(), |l| format!(", lasso {}", l.line.command()));
        return Some(format!(
            "refused for liveness: {p} of {agent} under weak fairness{line}"
        ));
    }
    let untold: Vec<String> = found
        .iter()
        .filter_map(|(p, f)| match &f.verdict {
            LiveVerdict::CannotTell(why) => Some(format!("{p}: {why}")),
            _ => None,
        })
        .collect();
    (!untold.is_empty()).then(|| format!("liveness cannot tell ({})", untold.join("; ")))
}

fn est(e: &Estimate) -> Value {
    json!({"mean": e.mean, "lo": e.lo, "hi": e.hi})
}

/// `tokens +1.0% [+0.5, +1.5]`, or `tokens: not modelled` when the scenario has no such cost
/// (no `[tokens]`): a NaN is no figure.
fn cost(what: &str, e: &Estimate) -> String {
    match plan::measured(e) {
        Some(_) => format!("{what} {}", pct(e)),
        None => format!("{what}: not modelled"),
    }
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
                    "liveness": c.liveness.as_ref().map(|l| json!({
                        "fairness": l.fairness.long_name(),
                        "starvation": l.starvation.verdict.name(),
                        "termination": l.termination.verdict.name(),
                        "refused": c.not_live(),
                    })),
                })
            })
            .collect();
        let v = json!({
            "input": args.input.display().to_string(),
            "exhibits": names(&s.exhibits),
            "out_of_scope": names(&s.out_of_scope),
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
    println!(
        "{}: exhibits {}",
        crate::artifacts::paths::shown(&args.input),
        set(&s.exhibits)
    );
    if !s.out_of_scope.is_empty() {
        println!("  also shows {}, out of fix's scope", set(&s.out_of_scope));
    }
    for (a, p) in &plan.vanilla {
        println!("  vanilla on the fitted scenario: {a} {}", p.display());
    }
    println!(
        "candidates ({} trials each, paired by seed; overheads against vanilla, 95% intervals):",
        args.trials
    );
    for c in plan.candidates.iter().take(TEXT_CANDIDATES_MAX) {
        println!("  {}", candidate_line(&s.scenario, c));
    }
    if plan.candidates.len() > TEXT_CANDIDATES_MAX {
        println!(
            "  … {} more (--json lists every candidate)",
            plan.candidates.len() - TEXT_CANDIDATES_MAX
        );
    }
    let refused: Vec<String> = plan
        .candidates
        .iter()
        .filter(|c| c.not_live())
        .map(|c| c.stack.to_string())
        .collect();
    if !refused.is_empty() {
        println!(
            "refused for liveness (an agent starves or never finishes under weak fairness): {}",
            refused.join(", ")
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
    // Which evidence the choice rests on: a complete search (every interleaving), or the
    // checker and sampling alone where the search could not tell (a cut search is no proof).
    let exploration = if c.proven() {
        "explored: unreachable on every interleaving".to_owned()
    } else if c.explored.is_empty() {
        "not explored: the choice rests on the checker and sampling".to_owned()
    } else {
        let why: Vec<String> = c
            .explored
            .iter()
            .filter_map(|(a, v)| match v {
                Verdict::CannotTell(why) => Some(format!("{a}: {why}")),
                _ => None,
            })
            .collect();
        format!(
            "explored: cannot tell ({}); the choice rests on the checker and sampling",
            why.join("; ")
        )
    };
    let cheapest = match (
        plan::measured(&c.token_overhead),
        plan::measured(&c.makespan_overhead),
    ) {
        (Some(_), _) => format!(
            "cheapest verified; token overhead {}",
            pct(&c.token_overhead)
        ),
        (None, Some(_)) => format!(
            "verified, least makespan overhead {}; tokens: not modelled",
            pct(&c.makespan_overhead)
        ),
        (None, None) => "verified, smallest stack; tokens and makespan: not modelled".to_owned(),
    };
    println!("stack: {} ({cheapest}; {exploration})", c.stack);
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
        println!(
            "wrote {} (runtime = \"{}\")",
            crate::artifacts::paths::shown(out),
            c.stack
        );
    }
    Ok(())
}
