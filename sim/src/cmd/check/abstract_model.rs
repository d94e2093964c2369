//! `agentsim check --abstract`: the same check on the history-free abstract model (SPEC §5.2,
//! `agentsim_checker::models::abstract_model`), whose states keep no log.
//!
//! With `--max-ops N` the model keeps an op counter and the verdict covers histories of at
//! most N records, like the concrete check. Without it there is no counter: if the
//! exploration closes, "holds" covers histories of every length at these agents, cells,
//! values and tools (`"bounded": false`, `"all_lengths": true` in `--json`). Retraction needs
//! `--max-ops` (every live writer stays in the state). Counterexamples are concretized on the
//! concrete model: their steps are a real history and their path replays with
//! `agentsim check --replay PATH` and the same flags, `--max-ops` as printed, without
//! `--abstract`; `--history-out FILE` writes the first one's history for `agentsim detect`.
//! Exit codes as `agentsim check`.

use super::args::{storage, Args};
use super::report::{exit_code, stopped, text, to_json, write_trace};
use agentsim_checker::jobs::check_abstract::check_abstract;
use agentsim_checker::jobs::run::CheckConfig;
use agentsim_jsonl::write_history;
use anyhow::{bail, Context};
use std::process::ExitCode;

/// Runs `check --abstract` (flags already validated into `cfg` by `check::resolve`, which
/// refuses what the abstract model has no meaning for); `bounded` when `--max-ops` was given.
pub fn run(args: &Args, cfg: &CheckConfig, bounded: bool) -> anyhow::Result<ExitCode> {
    eprintln!("exploring the abstract model ({} threads)...", cfg.threads);
    let r = check_abstract(cfg, bounded, &storage(args)?)?;
    let o = &r.report.outcome;
    // A signal or the memory ceiling stopped it: partial counts and that reason, as `check`.
    if let Some(stop) = o.stopped {
        return stopped(&r.report, stop, args.json, abstract_keys(r.bounded, None));
    }
    if !o.complete && !o.all_violated {
        bail!(
            "stopped after {} distinct states without exhausting the space: raise --max-states",
            o.distinct
        );
    }
    if let Some(path) = &args.trace_out {
        write_trace(&r.report, path)?;
    }
    if let Some(path) = &args.history_out {
        match r.histories.first() {
            Some((_, h)) => std::fs::write(path, write_history(h))
                .with_context(|| format!("--history-out {}", path.display()))?,
            None => eprintln!("no property violated: {} not written", path.display()),
        }
    }
    if args.json {
        let mut j = to_json(&r.report);
        let obj = j.as_object_mut().expect("to_json builds an object");
        obj.extend(abstract_keys(
            r.bounded,
            Some((r.all_lengths, r.replay_max_ops)),
        ));
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        print!("{}", text(&r.report, cfg, None));
        let reach = if r.all_lengths {
            "every history length (no length bound, exploration closed)".to_owned()
        } else {
            format!("histories of at most {} records", cfg.bounds.max_ops)
        };
        println!("abstract model: verdicts cover {reach}");
        if r.report.violated() {
            println!(
                "counterexamples replay concretely with --max-ops {}",
                r.replay_max_ops
            );
        }
    }
    Ok(exit_code(&r.report, args.gate))
}

/// The keys `--json` adds to an abstract report: `abstract` and `bounded` always, and for a run
/// that finished, `all_lengths` and `replay_max_ops` (a stopped run decides neither).
fn abstract_keys(
    bounded: bool,
    finished: Option<(bool, u32)>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut keys = serde_json::Map::new();
    keys.insert("abstract".into(), true.into());
    keys.insert("bounded".into(), bounded.into());
    if let Some((all_lengths, replay_max_ops)) = finished {
        keys.insert("all_lengths".into(), all_lengths.into());
        keys.insert("replay_max_ops".into(), replay_max_ops.into());
    }
    keys
}
