//! `agentsim check --property starvation|livelock [--fairness wf|sf|none]`: liveness on the
//! checker's state graph (`agentsim_checker::jobs::liveness`), with a lasso per violation.
//!
//! With `--abstract` and no `--max-ops` the model has no length bound: a closed exploration
//! decides the property for runs of every length at these agents, cells, values and tools.
//! Every run of a bounded model (the concrete one, or `--abstract --max-ops N`) ends at the
//! bound, so its verdict is *cannot tell* unless a fair cycle below the bound violates it.
//! Exit 0 holds, 1 violated, 2 cannot tell (unless `--allow-cannot-tell`) or bad flags.

use super::args::Args;
use super::CheckModel;
use agentsim_checker::engine::fair::{Fairness, LiveVerdict};
use agentsim_checker::jobs::liveness::{check_liveness, verdict_word, LiveConfig, LiveReport};
use agentsim_checker::jobs::run::CheckConfig;
use agentsim_models::{Reason, Verdict};
use anyhow::bail;
use serde_json::json;
use std::process::ExitCode;

/// Runs the liveness check (flags validated by `check::resolve`; the property list holds
/// liveness properties only).
pub fn run(args: &Args, cfg: &CheckConfig, model: CheckModel) -> anyhow::Result<ExitCode> {
    let (abstract_model, bounded) = match model {
        CheckModel::Abstract { bounded } => (true, bounded),
        CheckModel::Paper | CheckModel::Stack => (false, true),
        CheckModel::Replicated(_) => {
            bail!("--property starvation/livelock: the replicated store has no liveness check; drop --replicas")
        }
    };
    if args.replay.is_some() || args.trace_out.is_some() || args.history_out.is_some() {
        bail!(
            "--replay, --trace-out and --history-out take safety counterexamples; a liveness \
             check prints its lassos (with --json, as step lists and action-index paths)"
        );
    }
    let fairness = args.fairness.unwrap_or(Fairness::Weak);
    let live = LiveConfig {
        check: cfg.clone(),
        abstract_model,
        bounded,
        properties: args.property.1.clone(),
        fairness,
    };
    if !args.quiet {
        eprintln!(
            "exploring the state graph for liveness ({} threads)...",
            cfg.threads
        );
    }
    let r = check_liveness(&live).map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&r, bounded))?);
    } else {
        print!("{}", text(&r, bounded));
    }
    let verdicts: Vec<(String, Verdict)> = r
        .results
        .iter()
        .map(|x| {
            let v = match &x.verdict {
                LiveVerdict::Holds => Verdict::Holds,
                LiveVerdict::Violated { .. } => Verdict::Violated,
                LiveVerdict::CannotTell(why) => Verdict::CannotTell(Reason::Budget(why.clone())),
            };
            (x.property.name().to_owned(), v)
        })
        .collect();
    Ok(args.gate.finish("check", &verdicts))
}

fn fairness_words(f: Fairness) -> &'static str {
    match f {
        Fairness::None => "no fairness",
        Fairness::Weak => "weak fairness per agent (wf)",
        Fairness::Strong => "strong fairness per agent (sf)",
    }
}

/// The JSON report: the graph's figures and, per property, its verdict, the starving agent,
/// the lasso (step counts, steps, action-index paths, who steps and who is enabled in the
/// cycle) and the reason of a *cannot tell*.
pub fn to_json(r: &LiveReport, bounded: bool) -> serde_json::Value {
    let props: serde_json::Map<String, serde_json::Value> = r
        .results
        .iter()
        .map(|x| {
            let lasso = x.lasso.as_ref().map(|l| {
                json!({
                    "stem": l.stem.len(),
                    "cycle": l.cycle.len(),
                    "stem_steps": l.stem,
                    "cycle_steps": l.cycle,
                    "stem_path": l.stem_path,
                    "cycle_path": l.cycle_path,
                    "stepping": l.stepping,
                    "enabled_always": l.enabled_always,
                    "enabled_sometimes": l.enabled_sometimes,
                })
            });
            let reason = match &x.verdict {
                LiveVerdict::CannotTell(why) => Some(why.clone()),
                _ => None,
            };
            (
                x.property.name().to_owned(),
                json!({
                    "verdict": verdict_word(&x.verdict),
                    "holds": matches!(x.verdict, LiveVerdict::Holds),
                    "agent": x.agent,
                    "lasso": lasso,
                    "reason": reason,
                }),
            )
        })
        .collect();
    json!({
        "model": r.model,
        "fairness": r.fairness.name(),
        "distinct_states": r.states,
        "generated_states": r.generated,
        "transitions": r.edges,
        "depth": r.depth,
        "complete": r.complete,
        "bounded": bounded,
        "all_lengths": !bounded && r.complete,
        "seconds": {"explore": r.explore_seconds, "decide": r.decide_seconds},
        "properties": props,
    })
}

/// The text report.
pub fn text(r: &LiveReport, bounded: bool) -> String {
    let mut s = format!(
        "liveness of {} under {}: {} states, {} transitions, depth {} ({:.2} s exploring, \
         {:.2} s deciding)\n",
        r.model,
        fairness_words(r.fairness),
        r.states,
        r.edges,
        r.depth,
        r.explore_seconds,
        r.decide_seconds
    );
    for x in &r.results {
        let name = x.property.name();
        match &x.verdict {
            LiveVerdict::Holds => {
                let reach = if bounded {
                    "at these bounds"
                } else {
                    "for runs of every length (no length bound, exploration closed)"
                };
                s += &format!("{name}: holds {reach}\n");
            }
            LiveVerdict::CannotTell(why) => s += &format!("{name}: cannot tell: {why}\n"),
            LiveVerdict::Violated { .. } => {
                let who = x
                    .agent
                    .as_ref()
                    .map_or("the agents livelock".to_owned(), |a| format!("{a} starves"));
                s += &format!("{name}: VIOLATED: {who}; a fair lasso:\n");
                let l = x.lasso.as_ref().expect("a violation has a lasso");
                s += &format!(
                    "  stem ({} steps, path {}):\n",
                    l.stem.len(),
                    or_empty(&l.stem_path)
                );
                for step in &l.stem {
                    s += &format!("    {step}\n");
                }
                if l.cycle.is_empty() {
                    s += "  cycle: stutters forever here (no agent is enabled)\n";
                } else {
                    s += &format!(
                        "  cycle ({} steps back to the stem's last state, path {}; stepping: \
                         {}; enabled at every state: {}; at some state: {}):\n",
                        l.cycle.len(),
                        l.cycle_path,
                        list(&l.stepping),
                        list(&l.enabled_always),
                        list(&l.enabled_sometimes)
                    );
                    for step in &l.cycle {
                        s += &format!("    {step}\n");
                    }
                }
                s += &format!(
                    "  satisfies {}: {}\n",
                    r.fairness.name(),
                    match r.fairness {
                        Fairness::None => "any run is admitted",
                        Fairness::Weak =>
                            "every agent enabled at every state of the cycle steps in it",
                        Fairness::Strong =>
                            "every agent enabled at some state of the cycle steps in it",
                    }
                );
            }
        }
    }
    s
}

fn or_empty(path: &str) -> &str {
    if path.is_empty() {
        "(empty)"
    } else {
        path
    }
}

fn list(xs: &[String]) -> String {
    if xs.is_empty() {
        "none".to_owned()
    } else {
        xs.join(", ")
    }
}
