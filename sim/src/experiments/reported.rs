//! Bugs people reported, reproduced on the real framework (docs/reported.md): for each report,
//! the trace of one run on the release that had the bug and one on the release that fixed it
//! (the framework's own spans, or its MCP clients' JSON-RPC log), with what each run itself saw
//! (its truth). `detect` reads both traces; on the
//! affected one `fit` and `fix` give the stack that prevents the anomaly, which is compared with
//! the maintainers' mechanism. Each row also says whether `detect` agrees with each run's truth
//! (or cannot tell: a lower bound that finds nothing on the fixed run).
//!
//! The traces and truths are compiled in from the corpus folder
//! (`integrations/python/agentsim_corpus/reported/fixtures/`, made by
//! `python -m agentsim_corpus.reported.record REPORT` in each release's venv), so the step
//! needs no Python and runs from any folder.

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use crate::experiments::fit_fix::{self, observe};
use crate::verdicts::Verdicts;
use agentsim_ingest::{Options, Report as Ingested, Source};
use agentsim_models::{Anomaly, History, Verdict};
use anyhow::{anyhow, Context, Result};
use std::path::Path;

/// The `reported` step.
pub const STEP: Step = Step {
    name: "reported",
    about: "bugs people reported, on the affected and the fixed release: detect, and fix's stack",
    run: step_files,
};

/// One run of a reproduction: its release, the trace `detect` reads and its own truth.
pub struct Run {
    pub release: &'static str,
    /// How the trace is read: the framework's spans (`otel`) or its MCP clients' log (`mcp`).
    pub from: Source,
    /// The trace's path in the repository (shown, and the scratch file's name).
    pub trace_path: &'static str,
    pub trace: &'static [u8],
    pub truth: &'static [u8],
    /// The `--tool-memory` mapping the trace is read with, if any (`.map.toml`).
    pub mapping: Option<&'static [u8]>,
}

/// One report and its two runs.
pub struct Reported {
    /// `owner/repo#N`.
    pub report: &'static str,
    /// The package whose releases the runs pin.
    pub package: &'static str,
    pub anomaly: Anomaly,
    pub affected: Run,
    pub fixed: Run,
    /// What the maintainers changed, in a few words.
    pub maintainers: &'static str,
    /// The mechanism (SPEC §5 name) the maintainers' change amounts to, or `Err` with what a
    /// change that is no such mechanism leaves open.
    pub mechanism: Result<&'static str, &'static str>,
}

macro_rules! run {
    ($release:literal, $stem:literal, $from:expr, $trace:literal) => {
        Run {
            release: $release,
            from: $from,
            trace_path: concat!(
                "integrations/python/agentsim_corpus/reported/fixtures/",
                $stem,
                $trace
            ),
            trace: include_bytes!(concat!(
                "../../../integrations/python/agentsim_corpus/reported/fixtures/",
                $stem,
                $trace
            )),
            truth: include_bytes!(concat!(
                "../../../integrations/python/agentsim_corpus/reported/fixtures/",
                $stem,
                ".truth.json"
            )),
            mapping: None,
        }
    };
    ($release:literal, $stem:literal, $from:expr, $trace:literal, mapped) => {
        Run {
            mapping: Some(include_bytes!(concat!(
                "../../../integrations/python/agentsim_corpus/reported/fixtures/",
                $stem,
                ".map.toml"
            ))),
            ..run!($release, $stem, $from, $trace)
        }
    };
}

/// The reports reproduced, in the order of docs/reported.md.
pub fn reports() -> Vec<Reported> {
    vec![
        Reported {
            report: "pydantic/pydantic-ai#2628",
            package: "pydantic-ai",
            anomaly: Anomaly::A6,
            affected: run!(
                "1.0.1",
                "pydantic_ai_2628-1.0.1",
                Source::Otel,
                ".spans.jsonl"
            ),
            fixed: run!(
                "1.0.2",
                "pydantic_ai_2628-1.0.2",
                Source::Otel,
                ".spans.jsonl"
            ),
            maintainers: "sequential=True: a response's calls run one at a time, in order",
            mechanism: Ok("sequencer"),
        },
        Reported {
            report: "microsoft/agent-framework#7386",
            package: "agent-framework-core",
            anomaly: Anomaly::A6,
            affected: run!(
                "1.18.0",
                "agent_framework_7386-1.18.0",
                Source::Otel,
                ".spans.jsonl"
            ),
            fixed: run!(
                "1.19.0",
                "agent_framework_7386-1.19.0",
                Source::Otel,
                ".spans.jsonl"
            ),
            maintainers: "allow_concurrent_invocation=False: one message's calls run in order",
            mechanism: Ok("sequencer"),
        },
        Reported {
            report: "strands-agents/harness-sdk#614",
            package: "strands-agents",
            anomaly: Anomaly::A6,
            affected: run!(
                "1.5.0",
                "strands_tool_executor-1.5.0",
                Source::Otel,
                ".spans.jsonl"
            ),
            fixed: run!(
                "1.6.0",
                "strands_tool_executor-1.6.0",
                Source::Otel,
                ".spans.jsonl"
            ),
            maintainers: "SequentialToolExecutor: a response's tool uses run one at a time, in \
                          order",
            mechanism: Ok("sequencer"),
        },
        Reported {
            report: "strands-agents/harness-sdk#4112",
            package: "strands-agents",
            anomaly: Anomaly::A2,
            affected: run!(
                "1.54.0",
                "strands_mcp_tools_changed-1.54.0",
                Source::Mcp,
                ".mcp.jsonl"
            ),
            fixed: run!(
                "1.55.0",
                "strands_mcp_tools_changed-1.55.0",
                Source::Mcp,
                ".mcp.jsonl"
            ),
            maintainers: "on_tools_changed: list_changed re-lists the tools and calls back",
            mechanism: Err(
                "a later plan reads the new list, but a change while a generation is in flight \
                 still reaches the call",
            ),
        },
        Reported {
            report: "strands-agents/harness-sdk#3028",
            package: "strands-agents",
            anomaly: Anomaly::A3,
            affected: run!(
                "1.45.0",
                "strands_graph_failed_node-1.45.0",
                Source::Otel,
                ".spans.jsonl",
                mapped
            ),
            fixed: run!(
                "1.46.0",
                "strands_graph_failed_node-1.46.0",
                Source::Otel,
                ".spans.jsonl",
                mapped
            ),
            maintainers: "a failed nested node is recorded failed, so a conditional edge skips \
                          its consumers",
            mechanism: Ok("validate-preds"),
        },
        Reported {
            report: "strands-agents/harness-sdk#1176",
            package: "strands-agents",
            anomaly: Anomaly::A1,
            affected: run!(
                "1.21.0",
                "strands_concurrent_invocations-1.21.0",
                Source::Otel,
                ".spans.jsonl",
                mapped
            ),
            fixed: run!(
                "1.22.0",
                "strands_concurrent_invocations-1.22.0",
                Source::Otel,
                ".spans.jsonl",
                mapped
            ),
            maintainers: "ConcurrencyException: an invocation that overlaps another on one agent \
                          is refused before it touches the history",
            mechanism: Ok("lock"),
        },
    ]
}

/// What one run gave.
pub struct RunResult {
    /// The run's own answer: did the anomaly happen (the truth file's flag).
    pub truth: bool,
    /// `detect`'s verdict on the report's anomaly.
    pub verdict: Verdict,
    /// What `fit` and `fix` give (affected runs that `detect` finds violated), or why nothing.
    pub stack: Option<Result<Fixed, String>>,
}

/// `fit` and `fix` on one run.
pub struct Fixed {
    /// The fitted scenario's vanilla runs showing the anomaly: `A6 1000/1000`.
    pub vanilla: String,
    /// Whether some vanilla run of the fitted scenario shows the report's anomaly.
    pub shows: bool,
    /// The cheapest verified stack.
    pub stack: String,
}

impl RunResult {
    /// Whether `detect` says what the run saw (*violated* where it happened, *holds* where
    /// not), `None` when it cannot tell.
    pub fn agrees(&self) -> Option<bool> {
        match self.verdict {
            Verdict::Violated => Some(self.truth),
            Verdict::Holds => Some(!self.truth),
            Verdict::CannotTell(_) => None,
        }
    }
}

/// One report's row.
pub struct Row {
    pub reported: Reported,
    pub affected: RunResult,
    pub fixed: RunResult,
}

fn step_files(ctx: &Ctx) -> Result<Vec<Artifact>> {
    let trials = if ctx.quick { 100 } else { 1000 };
    let rows = run_all(trials, crate::experiments::run::default_threads())?;
    Ok(table_files("reported", &table(&rows, trials)))
}

/// Reads every report's runs, detects, and fixes the affected ones, `trials` trials per stack.
pub fn run_all(trials: u64, threads: usize) -> Result<Vec<Row>> {
    let scratch = std::env::temp_dir().join(format!("agentsim-reported-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let rows = reports()
        .into_iter()
        .map(|r| {
            let affected = one(&scratch, &r, &r.affected, true, trials, threads)?;
            let fixed = one(&scratch, &r, &r.fixed, false, trials, threads)?;
            Ok(Row {
                reported: r,
                affected,
                fixed,
            })
        })
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    rows
}

/// The truth file's flag for `anomaly` (`"a6": true`), checked against the run's release.
pub fn truth_of(run: &Run, anomaly: Anomaly) -> Result<bool> {
    let stem = run.trace_path.split('.').next().unwrap_or(run.trace_path);
    let shown = format!("{stem}.truth.json");
    let v: serde_json::Value =
        serde_json::from_slice(run.truth).with_context(|| format!("reading {shown}"))?;
    let version = v.get("version").and_then(|x| x.as_str());
    if version != Some(run.release) {
        return Err(anyhow!(
            "{shown}: version: expected {}, found {version:?}",
            run.release
        ));
    }
    let key = anomaly.name().to_ascii_lowercase();
    v.get(&key)
        .and_then(|x| x.as_bool())
        .ok_or_else(|| anyhow!("{shown}: {key}: expected true or false"))
}

fn ingest(scratch: &Path, run: &Run) -> Result<(History, Ingested, std::path::PathBuf)> {
    let name = Path::new(run.trace_path).file_name().unwrap_or_default();
    let file = scratch.join(name);
    std::fs::write(&file, run.trace)?;
    let tool_memory = match run.mapping {
        Some(bytes) => {
            let map = file.with_extension("map.toml");
            std::fs::write(&map, bytes)?;
            Some(map)
        }
        None => None,
    };
    let options = Options {
        from: Some(run.from),
        tool_memory,
        ..Options::default()
    };
    let ing = agentsim_ingest::load(&file, &options)?;
    Ok((ing.history, ing.report, file))
}

fn one(
    scratch: &Path,
    r: &Reported,
    run: &Run,
    fix: bool,
    trials: u64,
    threads: usize,
) -> Result<RunResult> {
    let truth = truth_of(run, r.anomaly)?;
    let (history, report, file) = ingest(scratch, run)?;
    // The spec form of the detectors, from the state the trace began in: these traces are
    // a few records, and the spec, fast and stream forms agree (models/tests).
    let summary = agentsim_models::detect::spec::summary_from(
        &history,
        &report.initial.values,
        agentsim_models::detect::witnesses::MAX_WITNESSES_DEFAULT,
        false,
    );
    let verdict = Verdicts::of(&summary, run.trace_path, Some(&report)).get(r.anomaly);
    let stack = (fix && verdict == Verdict::Violated)
        .then(|| fixed_by(history, report, run, r.anomaly, &file, trials, threads));
    Ok(RunResult {
        truth,
        verdict,
        stack,
    })
}

/// What `fit` and `fix` give on the run, or why no stack was verified.
fn fixed_by(
    history: History,
    report: Ingested,
    run: &Run,
    anomaly: Anomaly,
    file: &Path,
    trials: u64,
    threads: usize,
) -> Result<Fixed, String> {
    let shown = run.trace_path;
    let go = || -> Result<Result<Fixed, String>> {
        let obs = observe::observe(history, Some(report), Some(run.from), file, shown)?;
        let (_, _, p) = fit_fix::fit_and_plan(&obs, shown, trials, threads)?;
        let vanilla = (p.vanilla.iter())
            .map(|(a, r)| format!("{a} {}/{}", r.k, r.n))
            .collect::<Vec<_>>()
            .join(", ");
        let shows = (p.vanilla.iter()).any(|(a, r)| *a == anomaly && r.k > 0);
        Ok(match p.chosen() {
            Some(c) => Ok(Fixed {
                vanilla,
                shows,
                stack: c.stack.to_string(),
            }),
            None => Err(format!(
                "none of {} candidates verified on the fitted scenario",
                p.candidates.len()
            )),
        })
    };
    go().unwrap_or_else(|e| Err(format!("{e:#}")))
}

/// How `fix`'s stack relates to the maintainers' mechanism (`Err`: their change is none, and
/// what it leaves open).
pub fn relation(stack: &str, mechanism: Result<&str, &str>) -> String {
    let mechanism = match mechanism {
        Ok(m) => m,
        Err(open) => {
            return format!(
                "stronger ({stack} prevents it; the maintainers' change narrows it: {open})"
            )
        }
    };
    let parts: Vec<&str> = stack.split('+').collect();
    if parts == [mechanism] {
        "same mechanism".to_owned()
    } else if parts.contains(&mechanism) {
        format!("stronger ({stack} adds to {mechanism})")
    } else {
        format!("different ({stack}, not {mechanism})")
    }
}

fn verdict_cell(v: &Verdict) -> String {
    match v {
        Verdict::CannotTell(_) => "cannot tell".to_owned(),
        told => told.to_string(),
    }
}

fn table(rows: &[Row], trials: u64) -> Table {
    let mut t = Table::new(
        format!(
            "Bugs people reported: the real framework's traces on the affected and the fixed \
             release, detect on each, and the stack fix chooses ({trials} trials per stack)"
        ),
        &[
            "report",
            "affected",
            "fixed",
            "anomaly",
            "truth",
            "detect_affected",
            "detect_fixed",
            "agrees",
            "fit_vanilla",
            "fix_stack",
            "maintainers_fix",
            "relation",
        ],
    );
    let yes = |b: bool| if b { "yes" } else { "no" };
    let agrees = |r: &RunResult| r.agrees().map_or("cannot tell", yes);
    for r in rows {
        let rep = &r.reported;
        let (vanilla, stack, relation) = match &r.affected.stack {
            Some(Ok(f)) => (
                f.vanilla.clone(),
                f.stack.clone(),
                relation(&f.stack, rep.mechanism),
            ),
            Some(Err(why)) => ("-".to_owned(), format!("none ({why})"), "-".to_owned()),
            None => (
                "-".to_owned(),
                "- (nothing found to fix)".to_owned(),
                "-".to_owned(),
            ),
        };
        t.push(vec![
            Cell::text(rep.report),
            Cell::text(format!("{}@{}", rep.package, rep.affected.release)),
            Cell::text(rep.fixed.release),
            Cell::text(rep.anomaly.name()),
            Cell::text(format!(
                "{} / {}",
                yes(r.affected.truth),
                yes(r.fixed.truth)
            )),
            Cell::text(verdict_cell(&r.affected.verdict)),
            Cell::text(verdict_cell(&r.fixed.verdict)),
            Cell::text(format!("{} / {}", agrees(&r.affected), agrees(&r.fixed))),
            Cell::text(vanilla),
            Cell::text(stack),
            Cell::text(match rep.mechanism {
                Ok(m) => format!("{} ({m})", rep.maintainers),
                Err(_) => format!("{} (no prevention mechanism)", rep.maintainers),
            }),
            Cell::text(relation),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_names_same_stronger_and_different() {
        assert_eq!(relation("sequencer", Ok("sequencer")), "same mechanism");
        assert!(relation("occ+sequencer", Ok("sequencer")).starts_with("stronger"));
        assert!(relation("occ", Ok("sequencer")).starts_with("different"));
        assert!(relation("pin", Err("a window")).starts_with("stronger (pin prevents it"));
    }

    #[test]
    fn detect_says_what_each_run_saw_and_fix_prevents_it() {
        for row in run_all(100, 1).expect("the reported step runs") {
            let name = row.reported.report;
            // detect finds the class where the bug happened, and never contradicts a run's
            // truth; on the fixed run it may only say it cannot tell.
            let a = &row.affected;
            assert_eq!(
                a.agrees(),
                Some(true),
                "{name} affected: {} ({})",
                a.verdict,
                a.truth
            );
            let f = &row.fixed;
            assert_ne!(
                f.agrees(),
                Some(false),
                "{name} fixed: {} ({})",
                f.verdict,
                f.truth
            );
            match &row.affected.stack {
                Some(Ok(f)) => assert!(f.shows, "{name}: fit's vanilla runs: {}", f.vanilla),
                _ => panic!("{name}: no verified stack"),
            }
            assert!(
                row.fixed.stack.is_none(),
                "{name}: a stack for the fixed run"
            );
        }
    }

    #[test]
    fn every_truth_file_names_its_release_and_the_anomaly() {
        for r in reports() {
            assert_eq!(
                truth_of(&r.affected, r.anomaly).ok(),
                Some(true),
                "{}",
                r.report
            );
            assert_eq!(
                truth_of(&r.fixed, r.anomaly).ok(),
                Some(false),
                "{}",
                r.report
            );
        }
    }
}
