//! The shipped examples and workloads explored without step budgets: every scenario of
//! `scenarios/examples/` and `scenarios/workloads/` that does not retract, at its own counts
//! (no repeat cap), under
//! vanilla and every named runtime, by the stateful search (`agentsim explore --stateful
//! --steps-per-agent unbounded`: plain enumeration with a seen set of abstract states, see
//! `agentsim_sim::explore::Stateful`), with its states, the paths that ended at a state seen
//! before, the anomaly sets it reached and the verdict on each reported anomaly. Beside it,
//! today's default search (reduced, at the default per-agent step budget) of the same
//! scenario, and whether the two agree where that one finishes.
//!
//! The two plan-execute scenarios are not in the table: their supervisor retracts, so the
//! stateful search keys them by the concrete fingerprint (log, times and event count in the
//! key: a retraction can withdraw an anomaly, which the abstract key does not follow), their
//! polling loops never close, and without a step budget a path under a runtime that spins
//! (`pessimistic`'s lock waits) runs until `events_max`. Under vanilla the search still ends
//! (docs/benchmarks.md); elsewhere they need a step budget, as in the `explore` table.
//!
//! A stateful search that runs more than [`STATEFUL_PATHS_MAX`] paths is stopped there and
//! the cell says *cannot tell* with that reason (the default search stops at
//! [`SCHEDULES_MAX`] paths): fixed caps in paths, not in seconds, and one thread (with more,
//! which path meets a state first, and so the counts and witnesses, depend on the race;
//! `agentsim_sim::explore::Stateful`), so the files are the same bytes on every run. Seconds
//! and peak memory are `agentsim bench explore`'s (docs/benchmarks.md), never written here.

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{self, table_files, Artifact, Ctx};
use agentsim_models::runtime::{RuntimeKind, Stack};
use agentsim_models::Anomaly;
use agentsim_sim::explore::{
    explore, Exploration, ExploreConfig, Reach, Search, Stopped, STEPS_PER_AGENT_DEFAULT,
    STEPS_UNBOUNDED,
};
use agentsim_sim::scenario::Scenario;
use std::collections::BTreeSet;

/// The `explore_unbounded` step.
pub const STEP: artifacts::Step = artifacts::Step {
    name: "explore-unbounded",
    about: "the examples and workloads explored statefully without step budgets, per runtime",
    run: step_files,
};

/// The most paths the stateful search runs before it stops (*cannot tell*, the cap); every
/// cell of the table finishes far below it (1,568 paths at most).
pub const STATEFUL_PATHS_MAX: u64 = 5_000;
/// The most paths the default search runs before it stops (*cannot tell*, the cap).
pub const SCHEDULES_MAX: u64 = 20_000;

/// The compiled-in scenarios, in table order.
const FILES: [(&str, &str); 4] = [
    (
        "scenarios/examples/edit-review.toml",
        include_str!("../../../scenarios/examples/edit-review.toml"),
    ),
    (
        "scenarios/examples/triage.toml",
        include_str!("../../../scenarios/examples/triage.toml"),
    ),
    (
        "scenarios/workloads/edit-review.toml",
        include_str!("../../../scenarios/workloads/edit-review.toml"),
    ),
    (
        "scenarios/workloads/triage.toml",
        include_str!("../../../scenarios/workloads/triage.toml"),
    ),
];

/// One scenario under one runtime.
struct Row {
    scenario: String,
    repeat: u32,
    runtime: Stack,
    stateful: Exploration,
    stateless: Exploration,
}

fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let mut rows = Vec::new();
    for (file, text) in FILES {
        let sc = super::run::builtin(file, text)?;
        for kind in RuntimeKind::ALL {
            ctx.progress(&format!("{file} under {}", kind.name()));
            rows.push(row(&sc, file, kind.stack())?);
        }
    }
    Ok(table_files("explore_unbounded", &table(&rows)))
}

/// The stateful search without a step budget, and the default search, of `sc` under `rt`.
fn row(sc: &Scenario, file: &str, rt: Stack) -> anyhow::Result<Row> {
    let base = ExploreConfig {
        threads: 1,
        max_schedules: Some(SCHEDULES_MAX),
        ..ExploreConfig::new(rt)
    };
    let stateful = ExploreConfig {
        search: Search::Plain,
        stateful: true,
        steps_per_agent: STEPS_UNBOUNDED,
        max_schedules: Some(STATEFUL_PATHS_MAX),
        ..base.clone()
    };
    let stateful = explore(sc, &stateful).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let stateless = explore(sc, &base).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    if stateful.complete && stateless.complete {
        // Both cover every interleaving: a difference is a bug in one of them.
        anyhow::ensure!(
            sets(&stateful) == sets(&stateless) && verdicts(&stateful) == verdicts(&stateless),
            "{file} under {rt}: the stateful and the stateless searches disagree"
        );
    }
    Ok(Row {
        scenario: file.trim_start_matches("scenarios/").to_owned(),
        repeat: sc.repeat_max(),
        runtime: rt,
        stateful,
        stateless,
    })
}

fn sets(e: &Exploration) -> BTreeSet<Vec<Anomaly>> {
    e.sets.keys().cloned().collect()
}

fn verdicts(e: &Exploration) -> Vec<(Anomaly, Reach)> {
    e.findings.iter().map(|f| (f.anomaly, f.reach)).collect()
}

/// "every interleaving", or why the search is not complete.
fn bound(e: &Exploration) -> String {
    if e.complete {
        return "every interleaving".to_owned();
    }
    let cut = e.cut();
    let mut parts = Vec::new();
    match e.stopped {
        // The search stops when its path count reaches the cap.
        Some(Stopped::Schedules) => {
            parts.push(format!("stopped at the cap of {} paths", e.schedules))
        }
        Some(_) => parts.push("stopped".to_owned()),
        None => {}
    }
    if cut.steps_per_agent > 0 {
        parts.push(format!(
            "≤ {} steps per agent ({} paths cut)",
            e.steps_per_agent, cut.steps_per_agent
        ));
    }
    if cut.events_max > 0 {
        parts.push(format!(
            "events_max = {} ({} paths cut)",
            e.events_max, cut.events_max
        ));
    }
    format!("cannot tell: {}", parts.join("; "))
}

/// `A1 reachable, A2 unreachable, A3 cannot tell`, one per reported anomaly.
fn verdicts_text(e: &Exploration) -> String {
    let v: Vec<String> = e
        .findings
        .iter()
        .map(|f| {
            let r = match f.reach {
                Reach::Reachable => "reachable",
                Reach::Unreachable => "unreachable",
                Reach::CannotTell if f.vacuous() => "cannot tell (vacuous)",
                Reach::CannotTell => "cannot tell",
            };
            format!("{} {r}", f.anomaly)
        })
        .collect();
    v.join(", ")
}

/// Whether the stateful search found what the default one did, where that one finishes.
fn agreement(r: &Row) -> String {
    let (a, b) = (&r.stateful, &r.stateless);
    if !b.complete {
        return format!("stateless not complete ({})", bound(b));
    }
    if !a.complete {
        return "stateless complete; stateful cannot tell".to_owned();
    }
    if sets(a) == sets(b) && verdicts(a) == verdicts(b) {
        "equal".to_owned()
    } else {
        "differ".to_owned()
    }
}

fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        format!(
            "The examples and workloads that do not retract, at their own counts, explored statefully without a step \
             budget (cap {STATEFUL_PATHS_MAX} paths, one thread), against the default search at \
             {STEPS_PER_AGENT_DEFAULT} steps per agent (cap {SCHEDULES_MAX} paths)"
        ),
        &[
            "scenario",
            "repeat",
            "runtime",
            "complete",
            "bound",
            "states",
            "merged",
            "schedules",
            "anomaly sets",
            "verdicts",
            "stateless schedules",
            "agrees with stateless",
        ],
    );
    for r in rows {
        let s = &r.stateful;
        let kept = s.stateful.unwrap_or_default();
        t.push(vec![
            Cell::text(&r.scenario),
            Cell::Int(i64::from(r.repeat)),
            Cell::text(r.runtime.to_string()),
            Cell::text(if s.complete { "yes" } else { "no" }),
            Cell::text(bound(s)),
            Cell::Int(kept.states as i64),
            Cell::Int(kept.merged as i64),
            Cell::Int(s.schedules as i64),
            Cell::text(super::explore::sets_text(s.sets.keys())),
            Cell::text(verdicts_text(s)),
            Cell::Int(r.stateless.schedules as i64),
            Cell::text(agreement(r)),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stopped search reads *cannot tell* with the cap, and a complete one "every
    /// interleaving"; the agreement column compares only where both finished.
    #[test]
    fn a_capped_cell_says_cannot_tell_with_the_cap() {
        let sc = super::super::run::builtin(FILES[0].0, FILES[0].1).unwrap();
        let cfg = ExploreConfig {
            search: Search::Plain,
            stateful: true,
            steps_per_agent: STEPS_UNBOUNDED,
            max_schedules: Some(3),
            ..ExploreConfig::new(sc.runtime)
        };
        let stopped = explore(&sc, &cfg).unwrap();
        assert!(!stopped.complete);
        assert!(
            bound(&stopped).starts_with("cannot tell: stopped at the cap"),
            "{}",
            bound(&stopped)
        );
        let row = Row {
            scenario: String::new(),
            repeat: 1,
            runtime: sc.runtime,
            stateful: stopped.clone(),
            stateless: stopped,
        };
        assert!(agreement(&row).starts_with("stateless not complete"));
        let md = table(&[row]).to_markdown();
        assert!(md.contains("| no "), "{md}");
        assert!(md.contains("stopped at the cap of 3 paths"), "{md}");
        assert!(!md.contains("every interleaving"), "{md}");
    }
}
