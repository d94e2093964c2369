//! Exploring against sampling: the example scenarios and the worked examples of
//! `docs/exploring.md`, under vanilla and every named runtime, explored exhaustively
//! (`agentsim_sim::explore`, abstract time, reduction on) at a stated repeat cap, and beside
//! each the union of the anomaly sets that 10,000 sampled trials (5,000 under each of two
//! schedulers) of the same capped scenario
//! found under `random` and under `pct:3`. The last column is the gap: sets exploring reaches
//! that sampling never showed.
//!
//! The repeat caps and per-agent step budgets keep the whole step within a minute on one
//! core; both are in the table, and `agentsim bench explore` reports the largest caps that
//! finish in a time budget. No wall-clock figure is written (the files must be the same bytes
//! on every run). Where no path was cut by the step budget, a sampled set that exploring did
//! not reach would be a bug in one of them: the step refuses to write the table then. Where
//! the budget cut paths, sampled trials (which have no step budget) may show sets past it.
//! What the table does not show: anything past the cap or the step budget, and whether the
//! scenario's own latencies ever produce an explored order (sampling answers that).

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{self, table_files, Artifact, Ctx};
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::explore::{explore, Exploration, ExploreConfig, STEPS_PER_AGENT_DEFAULT};
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

/// Sampled trials per scheduler, 10,000 in all (`--quick`: [`TRIALS_QUICK`]).
pub const TRIALS: u64 = 5_000;
pub const TRIALS_QUICK: u64 = 250;
/// The schedulers sampled.
const SCHEDULERS: [SchedulerSpec; 2] = [SchedulerSpec::Random, SchedulerSpec::Pct { depth: 3 }];

/// A compiled-in scenario, the repeat cap and the per-agent step budget it is explored at.
struct Case {
    file: &'static str,
    text: &'static str,
    repeat_max: u32,
    steps_per_agent: u64,
}

macro_rules! case {
    ($file:expr, $cap:expr, $steps:expr) => {
        Case {
            file: $file,
            text: include_str!(concat!("../../../", $file)),
            repeat_max: $cap,
            steps_per_agent: $steps,
        }
    };
}

/// The scenarios, in table order, each at a cap and step budget that explore every runtime
/// in about a second or less (plan-execute's polling loop and triage's fan-out need the
/// smaller budget; where it cuts a path the row says so and is not complete).
const CASES: [Case; 6] = [
    case!(
        "scenarios/examples/edit-review.toml",
        2,
        STEPS_PER_AGENT_DEFAULT
    ),
    case!("scenarios/examples/plan-execute.toml", 1, 12),
    case!("scenarios/examples/triage.toml", 1, 12),
    case!(
        "scenarios/explore/stale-review.toml",
        1,
        STEPS_PER_AGENT_DEFAULT
    ),
    case!(
        "scenarios/explore/retired-tool.toml",
        1,
        STEPS_PER_AGENT_DEFAULT
    ),
    case!(
        "scenarios/explore/effect-order.toml",
        1,
        STEPS_PER_AGENT_DEFAULT
    ),
];

/// One scenario under one runtime.
struct Row {
    scenario: String,
    repeat: String,
    runtime: Stack,
    /// No bound cut a path and nothing stopped the search ([`Exploration::complete`]).
    complete: bool,
    /// "every interleaving" for a complete search, else what cut it ([`bound_text`]).
    bound: String,
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
            let cfg = ExploreConfig {
                steps_per_agent: c.steps_per_agent,
                threads: super::run::default_threads(),
                ..ExploreConfig::new(kind.stack())
            };
            rows.push(row(&sc, c.file, &repeat, &cfg, trials)?);
        }
    }
    Ok(table_files("explore", &table(&rows, trials)))
}

/// Explores and samples `sc` under `rt`.
fn row(
    sc: &Scenario,
    file: &str,
    repeat: &str,
    cfg: &ExploreConfig<'_>,
    trials: u64,
) -> anyhow::Result<Row> {
    let rt = cfg.runtime;
    let ex = explore(sc, cfg).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let mut sampled = BTreeSet::new();
    for sched in SCHEDULERS {
        let cfg = RunConfig {
            runtime: rt,
            trials,
            seed: super::run::SEED,
            scheduler: sched,
            // Results do not depend on the thread count.
            threads: super::run::default_threads(),
            ..RunConfig::new(sc)
        };
        let r = agentsim_sim::run(&cfg).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        for t in r.trials {
            sampled.insert(reported().filter(|&a| t.metrics.has(a)).collect::<Vec<_>>());
        }
    }
    let explored: BTreeSet<Vec<Anomaly>> = ex.sets.keys().cloned().collect();
    // Sampling runs the same capped scenario, so only the step budget, `events_max` and a
    // ceiling can hide from this search what a trial shows.
    if ex.stopped.is_none() && ex.budget_cut == 0 && ex.truncated == 0 {
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
        complete: ex.complete,
        bound: bound_text(&ex),
        schedules: ex.schedules,
        classes: ex.classes,
        explored,
        sampled,
    })
}

/// "every interleaving" for a complete search; else every bound that cut it, with the paths
/// it cut: "repeat ≤ 1 (538 paths); ≤ 12 steps per agent (12 paths cut)". A cut search's sets
/// are what it reached, never all there are.
fn bound_text(ex: &Exploration) -> String {
    if ex.complete {
        return "every interleaving".to_owned();
    }
    let cut = ex.cut();
    let mut parts = Vec::new();
    if let Some(n) = ex.repeat_cap.filter(|_| cut.repeat > 0) {
        parts.push(format!("repeat ≤ {n} ({} paths)", cut.repeat));
    }
    if cut.steps_per_agent > 0 {
        parts.push(format!(
            "≤ {} steps per agent ({} paths cut)",
            ex.steps_per_agent, cut.steps_per_agent
        ));
    }
    if cut.events_max > 0 {
        parts.push(format!(
            "events_max = {} ({} paths cut)",
            ex.events_max, cut.events_max
        ));
    }
    if ex.stopped.is_some() {
        parts.push(format!("stopped after {} schedules", ex.schedules));
    }
    parts.join("; ")
}

/// `{} {A1} {A1, A6}` (also the explore-unbounded table's).
pub(super) fn sets_text<'a>(sets: impl IntoIterator<Item = &'a Vec<Anomaly>>) -> String {
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
            "bound",
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
            Cell::text(&r.bound),
            Cell::Int(r.schedules as i64),
            Cell::Int(r.classes as i64),
            Cell::text(sets_text(&r.explored)),
            Cell::text(sets_text(&r.sampled)),
            Cell::text(sets_text(missed)),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(name: &str) -> Scenario {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios/bounds")
            .join(name);
        Scenario::load(&p).expect("shipped scenario")
    }

    /// A row of a cut search (the 45-wait editor at 40 steps per agent; the same at a repeat
    /// cap) is not complete and names what cut it; only a complete one says "every
    /// interleaving".
    #[test]
    fn a_cut_search_reads_cut_in_the_table() {
        let sc = bounds("editor-45-waits.toml");
        let cut = explore(&sc, &ExploreConfig::new(sc.runtime)).unwrap();
        assert!(!cut.complete);
        assert_eq!(bound_text(&cut), "≤ 40 steps per agent (1 paths cut)");
        let mut cfg = ExploreConfig::new(sc.runtime);
        cfg.steps_per_agent = 48;
        let whole = explore(&sc, &cfg).unwrap();
        assert!(whole.complete);
        assert_eq!(bound_text(&whole), "every interleaving");
        let (capped, _) = super::super::run::builtin(
            "scenarios/examples/edit-review.toml",
            include_str!("../../../scenarios/examples/edit-review.toml"),
        )
        .unwrap()
        .with_repeat_cap(1)
        .unwrap();
        let ex = explore(&capped, &ExploreConfig::new(capped.runtime)).unwrap();
        assert!(!ex.complete);
        assert!(
            bound_text(&ex).starts_with("repeat ≤ 1 ("),
            "{}",
            bound_text(&ex)
        );
        let row = Row {
            scenario: String::new(),
            repeat: String::new(),
            runtime: ex.runtime,
            complete: ex.complete,
            bound: bound_text(&ex),
            schedules: ex.schedules,
            classes: ex.classes,
            explored: BTreeSet::new(),
            sampled: BTreeSet::new(),
        };
        let t = table(&[row], 1).to_markdown();
        assert!(t.contains("| no "), "{t}");
        assert!(!t.contains("every interleaving"), "{t}");
    }
}
