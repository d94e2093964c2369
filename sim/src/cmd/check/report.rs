//! What `agentsim check` prints and writes, and its gate: the text and JSON reports, the ITF
//! trace, the partial counts of a stopped search and the exit code. Shared by the concrete and
//! the abstract check.

use crate::artifacts::output::write_atomic;
use agentsim_checker::engine::control::Stopped;
use agentsim_checker::jobs::run::{CheckConfig, CheckReport};
use agentsim_checker::Replication;
use anyhow::{bail, Context};
use serde_json::json;
use std::process::ExitCode;

/// A search stopped by a signal or the memory ceiling: the partial counts on stdout, then
/// exit 130, or exit 2 saying what to raise.
/// `extra` are keys the caller's `--json` adds to every report (the abstract model's).
pub(crate) fn stopped(
    report: &CheckReport,
    stop: Stopped,
    json: bool,
    extra: serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<ExitCode> {
    let o = &report.outcome;
    if json {
        let mut doc = to_json(report);
        if let Some(obj) = doc.as_object_mut() {
            obj.extend(extra);
        }
        doc["stopped"] = json!(match stop {
            Stopped::Cancelled => "interrupted",
            Stopped::Memory { .. } => "memory",
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let found: Vec<&str> = o.violated.iter().map(|p| p.name()).collect();
        println!(
            "partial counts (stopped): {} distinct, {} generated, depth {}, {:.1} s; \
             violated so far: {}",
            o.distinct,
            o.generated,
            o.depth,
            o.seconds,
            if found.is_empty() {
                "none".to_owned()
            } else {
                found.join(", ")
            }
        );
    }
    match stop {
        Stopped::Cancelled => {
            eprintln!("interrupted: spill files removed");
            Ok(ExitCode::from(crate::cmd::check_watch::INTERRUPTED))
        }
        Stopped::Memory {
            limit_bytes,
            rss_bytes,
        } => bail!(
            "stopped at the memory ceiling: {} MiB resident, --max-memory-mb {}: raise \
             --max-memory-mb, lower --frontier-mem-mb to spill more of each level to \
             --spill-dir, or shrink the bounds",
            rss_bytes >> 20,
            limit_bytes >> 20
        ),
    }
}

/// The gate over the checked properties (`cmd::gate`): exit 1 when one is violated; else 2
/// when one is *cannot tell* (vacuous), unless `--allow-cannot-tell`, saying on stderr which
/// and why; else 0. "Holds" of a property no history can violate says nothing.
pub(crate) fn exit_code(report: &CheckReport, gate: crate::cmd::gate::GateArgs) -> ExitCode {
    use agentsim_models::{Reason, Verdict};
    let verdicts: Vec<(String, Verdict)> = report
        .verdicts
        .iter()
        .map(|v| {
            let verdict = match (&v.counterexample, &v.vacuous) {
                (Some(_), _) => Verdict::Violated,
                (None, Some(why)) => Verdict::CannotTell(Reason::Vacuous(why.clone())),
                (None, None) => Verdict::Holds,
            };
            (v.property.name().to_string(), verdict)
        })
        .collect();
    gate.finish("check", &verdicts)
}

pub(crate) fn write_trace(report: &CheckReport, path: &std::path::Path) -> anyhow::Result<()> {
    let first = report
        .verdicts
        .iter()
        .find_map(|v| v.counterexample.as_ref());
    if let Some(cx) = first {
        let bytes = serde_json::to_vec_pretty(&cx.itf)?;
        write_atomic(path, &bytes).with_context(|| format!("--trace-out {}", path.display()))?;
    } else {
        eprintln!("no property violated: {} not written", path.display());
    }
    Ok(())
}

/// The `--json` object.
pub fn to_json(r: &CheckReport) -> serde_json::Value {
    let o = &r.outcome;
    let omitted = o.omission_estimate();
    let props: serde_json::Map<String, serde_json::Value> = r
        .verdicts
        .iter()
        .map(|v| {
            let body = match (&v.counterexample, &v.vacuous) {
                (None, Some(why)) => json!({
                    "verdict": "cannot_tell",
                    "reason": format!("vacuous: {why}"),
                    "states": o.distinct,
                }),
                (None, None) => json!({ "holds": true, "trace": [], "states": o.distinct }),
                (Some(cx), _) => json!({
                    "holds": false,
                    "trace": cx.steps,
                    "steps": cx.steps.len(),
                    "path": cx.path,
                }),
            };
            (v.property.name().to_owned(), body)
        })
        .collect();
    json!({
        "model": r.model,
        "distinct_states": o.distinct,
        "generated_states": o.generated,
        "depth": o.depth,
        "seconds": o.seconds,
        "complete": o.complete,
        "states_per_second": o.rate().round(),
        "fingerprint_collision": {
            "optimistic_omitted_states": omitted.0,
            "birthday_bound": omitted.1,
        },
        "seen_set_bytes": o.seen_bytes,
        "frontier_mem_peak_bytes": o.frontier_mem_peak,
        "spilled_bytes": o.spilled_bytes,
        "properties": props,
    })
}

/// The header's model: `paper` is the packed transition system the checker uses for vanilla
/// without provenance, retraction or tool versions, with or without `--paper`; saying so keeps
/// a run without `--paper` from reading as if the flag were given.
pub(super) fn model_name(model: &str) -> String {
    match model {
        "paper" => "paper (SPEC §1 transition system, vanilla)".to_owned(),
        other => other.to_owned(),
    }
}

/// The extensions the checked model runs with: the flags, and provenance where the runtime
/// forces it (`validate-preds`, `cascade`, `causal` and above); `none` for the paper's model.
pub(super) fn extensions_in_force(cfg: &CheckConfig) -> String {
    let e = &cfg.ext;
    let on = [
        ("canonical-writes", e.canonical_writes),
        ("provenance", e.provenance || cfg.runtime.provenance()),
        ("retraction", e.retraction),
        ("tool-versions", e.tool_versions),
        ("all-writers", e.all_writers),
    ];
    let names: Vec<&str> = on.iter().filter(|(_, b)| *b).map(|(n, _)| *n).collect();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(",")
    }
}

pub(super) fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

pub(crate) fn text(r: &CheckReport, cfg: &CheckConfig, rep: Option<Replication>) -> String {
    let o = &r.outcome;
    let b = &cfg.bounds;
    let mut s = String::new();
    if let Some(rep) = rep {
        s += &format!(
            "replicas: {} secondaries, max lag {}, reads {}\n",
            rep.secondaries, rep.max_lag, rep.discipline
        );
    }
    s += &format!(
        "model {} runtime {}: agents {} cells {} values {} tools {} max-ops {} external {} \
         skew {} symmetry {} extensions {}\n",
        model_name(&r.model),
        cfg.runtime,
        b.agents,
        b.cells,
        b.values,
        b.tools,
        b.max_ops,
        b.external,
        b.skew.name(),
        cfg.symmetry,
        extensions_in_force(cfg)
    );
    s += &format!("distinct states   {}\n", o.distinct);
    s += &format!("generated states  {}\n", o.generated);
    s += &format!("depth             {}\n", o.depth);
    s += &format!("seconds           {:.3}\n", o.seconds);
    s += &format!("distinct states/s {:.0}\n", o.rate());
    let (optimistic, birthday) = o.omission_estimate();
    s += &format!(
        "fingerprint collisions: expected omitted states {optimistic:.1e} (optimistic, as \
         TLC), {birthday:.1e} (birthday bound n^2/2^65)\n"
    );
    s += &format!(
        "memory: seen set {:.1} MiB, largest level in memory {:.1} MiB, spilled {:.1} MiB\n",
        mib(o.seen_bytes),
        mib(o.frontier_mem_peak),
        mib(o.spilled_bytes)
    );
    if o.all_violated {
        s += "stopped early: every checked property is violated (counts cover the levels \
              explored; use --property none for the whole space)\n";
    }
    for v in &r.verdicts {
        if let (None, Some(why)) = (&v.counterexample, &v.vacuous) {
            s += &format!("{}: cannot tell, vacuous: {why}\n", v.property.name());
            continue;
        }
        match &v.counterexample {
            None => {
                s += &format!(
                    "{}: holds (exhaustively, {} states)\n",
                    v.property.name(),
                    o.distinct
                )
            }
            Some(cx) => {
                s += &format!(
                    "{}: VIOLATED, shortest counterexample {} steps ({} states):\n",
                    v.property.name(),
                    cx.steps.len(),
                    cx.steps.len() + 1
                );
                for step in &cx.steps {
                    s += &format!("  {step}\n");
                }
                s += &format!("  replay: --replay {}\n", cx.path);
            }
        }
    }
    s
}
