//! From the example traces to fixes: each anomalous example history and trace under
//! `scenarios/` fitted to a scenario (`agentsim fit`), its observed anomalies' rates under
//! vanilla, and the stack `agentsim fix` chooses with its costs on that scenario. The fitted
//! scenarios are written with the chosen runtime beside the table (`fits/<input>.toml`).
//!
//! The inputs are compiled in (a LangGraph database is copied to a scratch file for the
//! reader), so the step runs from any folder. What it shows is what the fitted scenarios'
//! observed timings produce; an example with one observation per step is replayed at its
//! observed durations, so its vanilla rate is that of its own run, not of a population.

use crate::artifacts::figures::Estimate;
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_ingest::{Options, Source};
use agentsim_models::Anomaly;
use agentsim_sim::fit::Fitted;
use agentsim_sim::stats::Proportion;
use observe::with_runtime;
use serde_json::json;
use std::path::Path;

pub mod changes;
pub mod contains;
pub mod idiom;
pub mod observe;
mod otel_times;
pub mod plan;

/// The `fit-fix` step.
pub const STEP: Step = Step {
    name: "fit-fix",
    about: "the anomalous example traces fitted to scenarios, and the stack fix chooses for each",
    run: step_files,
};

/// The anomalous examples (the clean ones have nothing to fix): repository path and bytes.
const EXAMPLES: &[(&str, Option<Source>, &[u8])] = &[
    (
        "scenarios/histories/a1_stale_generation.jsonl",
        None,
        include_bytes!("../../../../scenarios/histories/a1_stale_generation.jsonl"),
    ),
    (
        "scenarios/histories/a2_phantom_tool.jsonl",
        None,
        include_bytes!("../../../../scenarios/histories/a2_phantom_tool.jsonl"),
    ),
    (
        "scenarios/histories/a3_causal_cascade.jsonl",
        None,
        include_bytes!("../../../../scenarios/histories/a3_causal_cascade.jsonl"),
    ),
    (
        "scenarios/histories/a6_tool_reordering.jsonl",
        None,
        include_bytes!("../../../../scenarios/histories/a6_tool_reordering.jsonl"),
    ),
    (
        "scenarios/histories/l1_struct_witness.jsonl",
        None,
        include_bytes!("../../../../scenarios/histories/l1_struct_witness.jsonl"),
    ),
    (
        "scenarios/traces/otel/memory_lost_update.json",
        Some(Source::Genai),
        include_bytes!("../../../../scenarios/traces/otel/memory_lost_update.json"),
    ),
    (
        "scenarios/traces/otel/memory_versions_only.json",
        Some(Source::Genai),
        include_bytes!("../../../../scenarios/traces/otel/memory_versions_only.json"),
    ),
    (
        "scenarios/traces/otel/phantom_signature.json",
        Some(Source::Genai),
        include_bytes!("../../../../scenarios/traces/otel/phantom_signature.json"),
    ),
    (
        "scenarios/traces/otel/phantom_tool.json",
        Some(Source::Genai),
        include_bytes!("../../../../scenarios/traces/otel/phantom_tool.json"),
    ),
    (
        "scenarios/traces/otel/tool_reordering.json",
        Some(Source::Genai),
        include_bytes!("../../../../scenarios/traces/otel/tool_reordering.json"),
    ),
    (
        "scenarios/traces/langgraph/stale_read.sqlite",
        Some(Source::Langgraph),
        include_bytes!("../../../../scenarios/traces/langgraph/stale_read.sqlite"),
    ),
    (
        "scenarios/traces/langgraph/toolnode_fanout.sqlite",
        Some(Source::Langgraph),
        include_bytes!("../../../../scenarios/traces/langgraph/toolnode_fanout.sqlite"),
    ),
];

/// The run seed.
const SEED: u64 = 1;

/// One example's row.
pub struct Row {
    pub input: &'static str,
    pub records: usize,
    pub anomalies: Vec<&'static str>,
    pub vanilla: Vec<agentsim_sim::stats::Proportion>,
    pub stack: Option<String>,
    pub verified: usize,
    pub candidates: usize,
    pub token_overhead: Estimate,
    pub makespan_overhead: Estimate,
    pub fitted: String,
}

fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick { 100 } else { 1000 };
    let rows = run_all(trials, crate::experiments::run::default_threads())?;
    let mut out = table_files("fit_fix", &table(&rows, trials));
    for r in &rows {
        let stem = Path::new(r.input)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        out.push(Artifact {
            path: format!("fits/{}.toml", stem.unwrap_or_default()),
            bytes: r.fitted.clone().into_bytes(),
            about: format!("{} fitted, with the runtime fix chose", r.input),
        });
    }
    Ok(out)
}

/// Fits and fixes every example with `trials` trials per stack.
pub fn run_all(trials: u64, threads: usize) -> anyhow::Result<Vec<Row>> {
    let scratch = std::env::temp_dir().join(format!("agentsim-fit-fix-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let rows = EXAMPLES
        .iter()
        .map(|&(input, from, bytes)| one(&scratch, input, from, bytes, trials, threads))
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    rows
}

fn one(
    scratch: &Path,
    input: &'static str,
    from: Option<Source>,
    bytes: &[u8],
    trials: u64,
    threads: usize,
) -> anyhow::Result<Row> {
    let name = Path::new(input).file_name().unwrap_or_default();
    let file = scratch.join(name);
    std::fs::write(&file, bytes)?;
    let (history, report) = match from {
        None => (agentsim_jsonl::read_history(&file)?, None),
        Some(from) => {
            let options = Options {
                from: Some(from),
                ..Options::default()
            };
            let ing = agentsim_ingest::load(&file, &options)?;
            (ing.history, Some(ing.report))
        }
    };
    let obs = observe::observe(history, report, from, &file, input)?;
    let (fitted, exhibits, p) = fit_and_plan(&obs, input, trials, threads)?;
    let chosen = p.chosen();
    let runtime = chosen.map_or("vanilla".to_owned(), |c| c.stack.to_string());
    Ok(Row {
        input,
        records: obs.history.records.len(),
        anomalies: names(&exhibits),
        vanilla: p.vanilla.iter().map(|(_, r)| *r).collect(),
        stack: chosen.map(|c| c.stack.to_string()),
        verified: p.candidates.iter().filter(|c| c.verified).count(),
        candidates: p.candidates.len(),
        token_overhead: chosen.map_or(Estimate::MISSING, |c| c.token_overhead),
        makespan_overhead: chosen.map_or(Estimate::MISSING, |c| c.makespan_overhead),
        fitted: with_runtime(&fitted.toml, &runtime),
    })
}

/// What `fix` does with an observation read from `shown`, quietly: fit it (the scenario
/// `fit-<stem>`, as if at `shown` with the extension `fit.toml`), and plan the candidate stacks
/// for the anomalies its history exhibits on the fitted scenario, seeded with `SEED` (1).
pub fn fit_and_plan(
    obs: &observe::Observation,
    shown: &str,
    trials: u64,
    threads: usize,
) -> anyhow::Result<(Fitted, Vec<Anomaly>, plan::Plan)> {
    let sc_path = Path::new(shown).with_extension("fit.toml");
    let name = observe::scenario_name(Path::new(shown));
    let (fitted, sc) = observe::fitted(obs, name, &sc_path, trials, SEED)?;
    let exhibits = obs.exhibits();
    let stacks = plan::candidates(&exhibits, threads)?;
    let p = plan::plan(
        &sc,
        &exhibits,
        &stacks,
        trials,
        SEED,
        threads,
        &mut |_, _| {},
    )?;
    Ok((fitted, exhibits, p))
}

fn table(rows: &[Row], trials: u64) -> Table {
    let mut t = Table::new(
        format!("From a trace to a fix: the examples fitted, {trials} trials per stack"),
        &[
            "input",
            "records",
            "anomalies",
            "vanilla_rate",
            "stack",
            "verified",
            "candidates",
            "token_overhead",
            "token_lo",
            "token_hi",
            "makespan_overhead",
            "makespan_lo",
            "makespan_hi",
        ],
    );
    for r in rows {
        let rates: Vec<String> = r
            .anomalies
            .iter()
            .zip(&r.vanilla)
            .map(|(a, p)| format!("{a} {}/{} [{:.3}, {:.3}]", p.k, p.n, p.lo, p.hi))
            .collect();
        t.push(vec![
            Cell::Text(r.input.to_owned()),
            Cell::Int(r.records as i64),
            Cell::Text(format!("{{{}}}", r.anomalies.join(", "))),
            Cell::Text(rates.join("; ")),
            Cell::Text(
                r.stack
                    .clone()
                    .unwrap_or_else(|| "none verified".to_owned()),
            ),
            Cell::Int(r.verified as i64),
            Cell::Int(r.candidates as i64),
            Cell::float(r.token_overhead.mean, 3),
            Cell::float(r.token_overhead.lo, 3),
            Cell::float(r.token_overhead.hi, 3),
            Cell::float(r.makespan_overhead.mean, 3),
            Cell::float(r.makespan_overhead.lo, 3),
            Cell::float(r.makespan_overhead.hi, 3),
        ]);
    }
    t
}

/// Anomaly names, in the order given.
pub fn names(xs: &[Anomaly]) -> Vec<&'static str> {
    xs.iter().map(|a| a.name()).collect()
}

/// `{A1, A6}`.
pub fn set(xs: &[Anomaly]) -> String {
    format!("{{{}}}", names(xs).join(", "))
}

/// A proportion as JSON: k, n, rate and its Wilson 95 % interval.
pub fn proportion_json(p: &Proportion) -> serde_json::Value {
    json!({"k": p.k, "n": p.n, "rate": p.rate, "lo": p.lo, "hi": p.hi})
}
