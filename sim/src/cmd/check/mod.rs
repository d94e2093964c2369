//! `agentsim check`: exhaustive exploration of SPEC §1 at small bounds, like TLC, with the
//! figures TLC reports (distinct, generated, depth) and shortest counterexamples.
//!
//! Exit 0: every checked property holds on every reachable state at these bounds (nothing is
//! claimed beyond them). Exit 1: a property is violated; its shortest counterexample is
//! printed as steps plus a replay path, and `--trace-out` writes the first violated
//! property's trace as ITF JSON. `--replay PATH` with the same flags re-prints a path's steps
//! and the checked properties it violates (text or `--json`; `--trace-out` writes its ITF
//! after the verdict); exit 1 when it violates one, as for a search. Exit 2: bad
//! flags or bounds, or the `--max-states` bound or the `--max-memory-mb` ceiling stopped the
//! search (the partial counts are printed first), or no property is violated but one is
//! *cannot tell* because it is vacuous (`agentsim_checker::jobs::vacuity`: no history at these
//! bounds and extensions can violate it), unless `--allow-cannot-tell`. Exit 130: SIGINT or
//! SIGTERM stopped it (partial counts printed, spill files removed); see `check_watch` for
//! progress lines.
//!
//! `--replicas K` checks the replicated store of SPEC §6 instead (`--max-lag`,
//! `--read-discipline`; property `A4`, split view), composed with `--runtime` for writes; see
//! `agentsim_checker::models::replicated`. Flags that model has no meaning for are refused (exit 2).

mod abstract_model;
mod args;
mod liveness;
mod report;

pub use args::{Args, Properties};

use crate::artifacts::output::{preflight, write_atomic};
use agentsim_checker::jobs::replicated_run;
use agentsim_checker::jobs::run::{self, CheckConfig, Replayed};
use agentsim_checker::{
    Bound, Bounds, BoundsError, Extensions, NotReplicated, Property, Replication, Skew,
};
use agentsim_models::anomaly::Scope;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use anyhow::{bail, Context};
use args::storage;
use report::{exit_code, stopped, text, to_json, write_trace};
use serde_json::json;
use std::process::ExitCode;

/// A bounds error in the words of this command's flags.
pub fn bounds_message(e: &BoundsError) -> String {
    match e {
        BoundsError::OutOfRange {
            bound,
            got,
            min,
            max,
        } => {
            let flag = match bound {
                Bound::Agents => "agents",
                Bound::Cells => "cells",
                Bound::Values => "values",
                Bound::Tools => "tools",
                Bound::MaxOps => "max-ops",
                Bound::External => "external",
                Bound::Secondaries => "replicas",
                Bound::MaxLag => "max-lag",
            };
            format!("--{flag} {got} is out of range: expected {min}..={max}")
        }
        BoundsError::NotReplicated(what) => {
            let fix = match what {
                NotReplicated::Tools => "pass --tools 0",
                NotReplicated::Skew => "drop --skew, --skew-external and --external",
                NotReplicated::RetractionOrToolVersions => "drop --retraction, --tool-versions",
                NotReplicated::Symmetry => "drop --symmetry",
            };
            format!("--replicas: the replicated model has no {what} ({fix})")
        }
        BoundsError::PaperExtensions => e.to_string(),
        BoundsError::SkewExternalNone => {
            "--skew-external needs --external N (N >= 1): with no external cell it frees no read"
                .to_owned()
        }
        BoundsError::ExternalUnused(skew) => format!(
            "--external is read only by --skew-external; {}",
            match skew {
                Skew::Every => {
                    "--skew frees every cell's reads (the paper's AllowSkew): drop --external, \
                     or free only the first N cells with --skew-external --external N"
                }
                _ => "add --skew-external, or drop --external",
            }
        ),
        BoundsError::Stack(e) => format!("--runtime: {e}"),
    }
}

/// The model `check` explores, chosen once from the flags by [`resolve`]; the rest of the
/// command dispatches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckModel {
    /// The packed paper model (`agentsim_checker::paper`): `vanilla` without provenance,
    /// retraction or tool versions (`run::uses_paper_model`), with or without `--paper`.
    Paper,
    /// The composed runtime model (`agentsim_checker::composed`): the store under any other
    /// stack of mechanisms.
    Stack,
    /// The replicated store of SPEC §6 (`--replicas K`), composed with `--runtime` for writes.
    Replicated(Replication),
    /// The history-free abstract model of SPEC §5.2 (`--abstract`); `bounded` when
    /// `--max-ops` was given (without it the model keeps no op counter).
    Abstract { bounded: bool },
}

/// Validates the flags into a check configuration and the one model they select. Every
/// combination of flags a model has no meaning for is refused here (exit 2), in this order:
///
/// 1. `--paper` with a runtime other than vanilla, an extension, or `--skew-external`;
/// 2. the bounds (`Bounds::validate`, in the words of the flags);
/// 3. `--abstract` with `--replicas`, `--max-lag` or `--read-discipline`, then with `--replay`
///    (abstract paths are not concrete ones);
/// 4. without `--replicas`: `--max-lag` or `--read-discipline`, then a property only a
///    replicated store has (A4);
/// 5. `--replicas` with `--paper`, then whatever the replicated model lacks
///    (`Replication::validate`: tools, skew, retraction or tool versions, symmetry).
///
/// One exclusion stays with the checker because it depends on exploring rather than on
/// the flags alone: symmetry reduction on the composed model (`CheckError::Symmetry`), which
/// a `--replay` ignores. `--history-out` without `--abstract` and `--skew` with
/// `--skew-external` are refused by clap.
pub fn resolve(a: &Args) -> anyhow::Result<(CheckConfig, CheckModel)> {
    let ext = extensions(a);
    if a.paper && (a.runtime != Stack::VANILLA || !ext.is_paper() || a.skew_external) {
        bail!(
            "--paper means vanilla with every extension off; drop --runtime and extension flags \
             (--skew is the paper's AllowSkew; --skew-external is extension 5)"
        );
    }
    let cfg = config(a, ext)?;
    if a.abstract_model {
        if a.replicas.is_some() || a.max_lag.is_some() || a.read_discipline.is_some() {
            bail!(
                "--abstract is the single-store model; drop --replicas, --max-lag, \
                 --read-discipline"
            );
        }
        if a.replay.is_some() {
            bail!("--replay replays concrete paths: drop --abstract");
        }
        let bounded = a.max_ops.is_some();
        return Ok((cfg, CheckModel::Abstract { bounded }));
    }
    let Some(secondaries) = a.replicas else {
        if a.max_lag.is_some() || a.read_discipline.is_some() {
            bail!("--max-lag and --read-discipline need --replicas K (the replicated store)");
        }
        let replicated = |p: &Property| p.anomaly().map(Anomaly::scope) == Some(Scope::Replicated);
        if let Some(p) = cfg.properties.iter().find(|p| replicated(p)) {
            bail!(
                "--property {} needs a replicated store: add --replicas K (SPEC §6)",
                p.name()
            );
        }
        let model = if run::uses_paper_model(&cfg) {
            CheckModel::Paper
        } else {
            CheckModel::Stack
        };
        return Ok((cfg, model));
    };
    if a.paper {
        bail!("--paper is the single-store model of SPEC §1; drop it with --replicas");
    }
    let rep = Replication {
        secondaries,
        max_lag: a.max_lag.unwrap_or(1),
        discipline: a.read_discipline.unwrap_or(ReadDiscipline::AnyReplica),
    };
    rep.validate(&cfg.bounds, &cfg.ext, cfg.symmetry)
        .map_err(|e| anyhow::anyhow!(bounds_message(&e)))?;
    Ok((cfg, CheckModel::Replicated(rep)))
}

fn extensions(a: &Args) -> Extensions {
    Extensions {
        canonical_writes: a.canonical_writes,
        provenance: a.provenance,
        retraction: a.retraction,
        tool_versions: a.tool_versions,
        all_writers: a.all_writers,
    }
}

/// The check configuration of the flags, its bounds validated.
fn config(a: &Args, ext: Extensions) -> anyhow::Result<CheckConfig> {
    let skew = match (a.skew, a.skew_external) {
        (true, _) => Skew::Every,
        (false, true) => Skew::External,
        (false, false) => Skew::Off,
    };
    let bounds = Bounds {
        agents: a.agents,
        cells: a.cells,
        values: a.values,
        tools: a.tools.unwrap_or(if a.replicas.is_some() { 0 } else { 2 }),
        max_ops: a.max_ops.unwrap_or(2),
        external: a.external,
        skew,
    };
    bounds
        .validate()
        .map_err(|e| anyhow::anyhow!(bounds_message(&e)))?;
    let properties = a.property.0.clone();
    Ok(CheckConfig {
        bounds,
        ext,
        runtime: a.runtime,
        symmetry: a.symmetry,
        properties,
        threads: a.threads.unwrap_or_else(crate::limits::default_threads),
        max_states: a.max_states,
    })
}

/// Runs the command on the model its flags select.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::artifacts::paths::Paths::new()
        .output("--trace-out", args.trace_out.as_deref())
        .output("--history-out", args.history_out.as_deref())
        .check()?;
    let (cfg, model) = resolve(&args)?;
    if !args.property.1.is_empty() {
        return liveness::run(&args, &cfg, model);
    }
    if args.fairness.is_some() {
        bail!("--fairness qualifies a liveness property: add --property starvation or livelock");
    }
    let rep = match model {
        CheckModel::Abstract { bounded } => return abstract_model::run(&args, &cfg, bounded),
        CheckModel::Replicated(rep) => Some(rep),
        CheckModel::Paper | CheckModel::Stack => None,
    };
    if let Some(path) = &args.trace_out {
        preflight(path).context("--trace-out")?;
    }
    if let Some(arg) = &args.replay {
        let (path, itf) = replay_source(arg)?;
        let r = match rep {
            Some(rep) => replicated_run::replay(&cfg, rep, &path),
            None => run::replay(&cfg, &path),
        };
        let r = match (r, &itf) {
            (Ok(r), _) => r,
            (Err(e), Some(_)) => bail!(
                "{arg}: its path {path} does not replay under these flags ({e}): the ITF was \
                 written for another model or bounds; give the flags that wrote it"
            ),
            (Err(e), None) => return Err(anyhow::Error::msg(e)),
        };
        if let Some(states) = &itf {
            same_states(arg, states, &r.trace.itf["states"])?;
        }
        return replayed(&r, &cfg, &args);
    }
    let storage = storage(&args)?;
    if !args.quiet {
        eprintln!("exploring ({} threads)...", cfg.threads);
    }
    let report = match rep {
        Some(rep) => replicated_run::check_with(&cfg, rep, &storage)?,
        None => run::check_with(&cfg, &storage)?,
    };
    if let Some(stop) = report.outcome.stopped {
        return stopped(&report, stop, args.json, serde_json::Map::new());
    }
    if !report.outcome.complete && !report.outcome.all_violated {
        bail!(
            "stopped after {} distinct states without exhausting the space: raise --max-states",
            report.outcome.distinct
        );
    }
    // The verdict first: a trace file that cannot be written must not cost the result.
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&report))?);
    } else {
        print!("{}", text(&report, &cfg, rep));
    }
    if let Some(path) = &args.trace_out {
        write_trace(&report, path)?;
    }
    Ok(exit_code(&report, args.gate))
}

/// What `--replay` names: an action-index path (`0/4/17`), or an ITF file as `--trace-out`
/// writes it, whose `#meta.path` is the path and whose states the replay must reproduce
/// (returned to compare).
pub(crate) fn replay_source(arg: &str) -> anyhow::Result<(String, Option<serde_json::Value>)> {
    let file = std::path::Path::new(arg);
    let is_path = arg.chars().all(|c| c.is_ascii_digit() || c == '/');
    if is_path || !file.is_file() {
        return Ok((arg.to_owned(), None));
    }
    let text = std::fs::read_to_string(file).with_context(|| format!("--replay {arg}"))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("--replay {arg}: not an ITF trace: invalid JSON: {e}"))?;
    if doc["#meta"]["format"] != "ITF" {
        bail!("--replay {arg}: not an ITF trace (no `#meta.format = \"ITF\"`)");
    }
    let Some(path) = doc["#meta"]["path"].as_str() else {
        bail!(
            "--replay {arg}: the ITF has no `#meta.path` (not written by `agentsim check \
             --trace-out`); give the action-index path instead"
        );
    };
    Ok((path.to_owned(), Some(doc["states"].clone())))
}

/// The replay reproduced the ITF's states, or the error names the first state and variable
/// that differ: the file was written under other flags (runtime, bounds, extensions).
pub(crate) fn same_states(
    arg: &str,
    file: &serde_json::Value,
    replayed: &serde_json::Value,
) -> anyhow::Result<()> {
    let (Some(file), Some(replayed)) = (file.as_array(), replayed.as_array()) else {
        bail!("--replay {arg}: the ITF has no `states` list");
    };
    if file.len() != replayed.len() {
        bail!(
            "--replay {arg}: the ITF has {} states, the replay under these flags {}: it was \
             written for another model or bounds; give the flags that wrote it",
            file.len(),
            replayed.len()
        );
    }
    for (k, (f, r)) in file.iter().zip(replayed).enumerate() {
        if f == r {
            continue;
        }
        let keys = r.as_object().into_iter().flat_map(|o| o.keys());
        let var = keys
            .into_iter()
            .find(|v| f.get(v.as_str()) != r.get(v.as_str()))
            .map_or("(the state)".to_owned(), |v| format!("`{v}`"));
        bail!(
            "--replay {arg}: state {k} differs from the replay in {var}: the ITF was written \
             for another model or bounds; give the flags that wrote it"
        );
    }
    Ok(())
}

/// A replayed path: its steps and verdict (text or `--json`), its ITF under `--trace-out`
/// (written after the verdict is printed); exit 1 when it violates a checked property.
fn replayed(r: &Replayed, cfg: &CheckConfig, args: &Args) -> anyhow::Result<ExitCode> {
    let names = |ps: &[Property]| ps.iter().map(|p| p.name()).collect::<Vec<_>>();
    if args.json {
        let props: serde_json::Map<String, serde_json::Value> = cfg
            .properties
            .iter()
            .map(|p| {
                (
                    p.name().to_owned(),
                    json!({ "holds": !r.violated.contains(p) }),
                )
            })
            .collect();
        let doc = json!({
            "replay": r.trace.path,
            "steps": r.trace.steps,
            "violated": names(&r.violated),
            "properties": props,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for s in &r.trace.steps {
            println!("{s}");
        }
        match r.violated.as_slice() {
            [] if cfg.properties.is_empty() => println!("replay: no property checked"),
            [] => println!(
                "replay: no checked property is violated on this path ({})",
                names(&cfg.properties).join(", ")
            ),
            v => println!("replay: VIOLATES {}", names(v).join(", ")),
        }
    }
    if let Some(path) = &args.trace_out {
        let bytes = serde_json::to_vec_pretty(&r.trace.itf)?;
        write_atomic(path, &bytes).with_context(|| format!("--trace-out {}", path.display()))?;
    }
    Ok(ExitCode::from(u8::from(!r.violated.is_empty())))
}
