//! Exploring against sampling: the example scenarios and the worked examples of
//! `docs/exploring.md`, under vanilla and every named runtime, explored exhaustively
//! (`agentsim_sim::explore`, abstract time, reduction on) at a stated repeat cap, and beside
//! each the union of the anomaly sets that 10,000 sampled trials of the same capped scenario
//! found under `random` and under `pct:3`. The last column is the gap: sets exploring reaches
//! that sampling never showed.
//!
//! The caps keep the whole step within a minute on one core; they are in the table, and
//! `agentsim bench explore` reports the largest caps that finish in a budget. No wall-clock
//! figure is written (the files must be the same bytes on every run). A sampled set that
//! exploring did not reach would be a bug in one of them: the step refuses to write the table
//! then. What the table does not show: anything past the cap or the step budget, and whether
//! the scenario's own latencies ever produce an explored order (sampling answers that).

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{self, table_files, Artifact, Ctx};
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::explore::{explore, ExploreConfig};
use agentsim_sim::metrics::reported;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::RunConfig;
use std::collections::BTreeSet;

/// The `explore` step.
pub const STEP: artifacts::Step = artifacts::Step {
    name: "explore",
    about: "explored anomaly sets per runtime against 10,000 sampled trials (the sampling gap)",
    run: step_files,
};

/// Sampled trials per scheduler (`--quick`: [`TRIALS_QUICK`]).
pub const TRIALS: u64 = 10_000;
pub const TRIALS_QUICK: u64 = 500;
/// The schedulers sampled.
const SCHEDULERS: [SchedulerSpec; 2] = [SchedulerSpec::Random, SchedulerSpec::Pct { depth: 3 }];

/// A compiled-in scenario and the repeat cap it is explored at.
struct Case {
    file: &'static str,
    text: &'static str,
    repeat_max: u32,
}

macro_rules! case {
    ($file:expr, $cap:expr) => {
        Case {
            file: $file,
            text: include_str!(concat!("../../../", $file)),
            repeat_max: $cap,
        }
    };
}

/// The scenarios, in table order, each at a cap that explores every runtime in about a
/// second or less.
const CASES: [Case; 6] = [
    case!("scenarios/examples/edit-review.toml", 1),
    case!("scenarios/examples/plan-execute.toml", 1),
    case!("scenarios/examples/triage.toml", 1),
    case!("scenarios/explore/stale-review.toml", 1),
    case!("scenarios/explore/retired-tool.toml", 1),
    case!("scenarios/explore/effect-order.toml", 1),
];

/// One scenario under one runtime.
struct Row {
    scenario: String,
    repeat: String,
    runtime: Stack,
    complete: bool,
    schedules: u64,
    classes: u64,
    explored: BTreeSet<Vec<Anomaly>>,
    sampled: BTreeSet<Vec<Anomaly>>,
}

fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick { TRIALS_QUICK } else { TRIALS };
    let mut rows = Vec::new();
    for c in &CASES {
        let sc = super::run::builtin(c.file, c.text)?;
        let (sc, cap) = sc
            .with_repeat_cap(c.repeat_max)
            .map_err(|e| anyhow::anyhow!("{}: {e}", c.file))?;
        let repeat = if cap.lowered {
            format!("≤ {}", cap.max)
        } else {
            format!("own ({})", sc.repeat_max())
        };
        for kind in RuntimeKind::ALL {
            ctx.progress(&format!("{} under {}", c.file, kind.name()));
            rows.push(row(&sc, c.file, &repeat, kind.stack(), trials)?);
        }
    }
    Ok(table_files("explore", &table(&rows, trials)))
}

/// Explores and samples `sc` under `rt`.
fn row(sc: &Scenario, file: &str, repeat: &str, rt: Stack, trials: u64) -> anyhow::Result<Row> {
    let ex = explore(sc, &ExploreConfig::new(rt)).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let mut sampled = BTreeSet::new();
    for sched in SCHEDULERS {
        let cfg = RunConfig {
            runtime: rt,
            trials,
            seed: super::run::SEED,
            scheduler: sched,
            ..RunConfig::new(sc)
        };
        let r = agentsim_sim::run(&cfg).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        for t in r.trials {
            sampled.insert(reported().filter(|&a| t.metrics.has(a)).collect::<Vec<_>>());
        }
    }
    let explored: BTreeSet<Vec<Anomaly>> = ex.sets.keys().cloned().collect();
    if ex.complete && ex.budget_cut == 0 {
        let missing: Vec<_> = sampled.difference(&explored).collect();
        anyhow::ensure!(
            missing.is_empty(),
            "{file} under {rt}: sampling found {missing:?}, which the complete search did not"
        );
    }
    Ok(Row {
        scenario: file.trim_start_matches("scenarios/").to_owned(),
        repeat: repeat.to_owned(),
        runtime: rt,
        complete: ex.complete && ex.budget_cut == 0,
        schedules: ex.schedules,
        classes: ex.classes,
        explored,
        sampled,
    })
}

/// `{} {A1} {A1, A6}`.
fn sets_text<'a>(sets: impl IntoIterator<Item = &'a Vec<Anomaly>>) -> String {
    let all: Vec<String> = sets
        .into_iter()
        .map(|s| format!("{{{}}}", Anomaly::join(s, ", ")))
        .collect();
    if all.is_empty() {
        "none".to_owned()
    } else {
        all.join(" ")
    }
}

fn table(rows: &[Row], trials: u64) -> Table {
    let mut t = Table::new(
        format!(
            "Explored anomaly sets against {trials} sampled trials per scheduler \
             (random, pct:3) of the same capped scenario"
        ),
        &[
            "scenario",
            "repeat",
            "runtime",
            "complete",
            "schedules",
            "classes",
            "explored sets",
            "sampled sets",
            "missed by sampling",
        ],
    );
    for r in rows {
        let missed: Vec<&Vec<Anomaly>> = r.explored.difference(&r.sampled).collect();
        t.push(vec![
            Cell::text(&r.scenario),
            Cell::text(&r.repeat),
            Cell::text(r.runtime.to_string()),
            Cell::text(if r.complete { "yes" } else { "no" }),
            Cell::Int(r.schedules as i64),
            Cell::Int(r.classes as i64),
            Cell::text(sets_text(&r.explored)),
            Cell::text(sets_text(&r.sampled)),
            Cell::text(sets_text(missed)),
        ]);
    }
    t
}
