//! Two more twins as steps of `agentsim reproduce`: the A4 split-view twin (issue 10: k/N
//! trials with a split view under each read discipline) and the CPL guard twin (issue 9: k/N
//! stale merges without and with the candidate-identity guard). Each writes one table.
//!
//! Both scenario files are read from the source tree (`scenarios/`), as `agentsim split-view`
//! and `agentsim cpl twin` read them; the guard file is resolved next to its scenario. A
//! passing `reproduce --check` proves the tables are what the code generates on these seeds;
//! the commands' own tests pin what the counts must be.

use crate::cmd::split_view;
use crate::reproduce::{table_files, Artifact, Ctx};
use crate::sim::cpl_twin;
use crate::sim::scenario::Scenario;
use crate::sim::stats::Proportion;
use crate::tables::{Cell, Table};
use std::path::{Path, PathBuf};

/// A scenario file of the source tree.
fn source_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// The k, N, rate and interval cells of a proportion.
fn proportion_cells(p: &Proportion) -> [Cell; 5] {
    [
        Cell::Int(p.k as i64),
        Cell::Int(p.n as i64),
        Cell::float(p.rate, 4),
        Cell::float(p.lo, 4),
        Cell::float(p.hi, 4),
    ]
}

/// The split-view twin of `scenarios/split-view.toml` (100 trials with `--quick`).
pub fn split_view_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let mut s = split_view::Scenario::load(&source_file("scenarios/split-view.toml"))?;
    if ctx.quick {
        s.trials = s.trials.min(100);
    }
    let rows = split_view::twin(&s);
    let mut t = Table::new(
        format!(
            "split view (A4): {} trials, seed {}, {} secondaries, max lag {}",
            s.trials, s.seed, s.secondaries, s.max_lag
        ),
        &[
            "discipline",
            "split_k",
            "n",
            "split_rate",
            "split_lo",
            "split_hi",
            "session_violations_k",
            "first_split_trial",
        ],
    );
    for r in &rows {
        let mut row = vec![Cell::text(r.discipline.name())];
        row.extend(proportion_cells(&r.split));
        row.push(Cell::Int(r.session.k as i64));
        row.push(r.first_split.map_or(Cell::Empty, |t| Cell::Int(t as i64)));
        t.push(row);
    }
    Ok(table_files("split_view", &t))
}

/// The guard twin of `scenarios/cpl/stale-evidence.toml` (100 trials with `--quick`).
pub fn cpl_guard_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let sc = Scenario::load(&source_file("scenarios/cpl/stale-evidence.toml"))?;
    let trials = if ctx.quick {
        sc.trials.min(100)
    } else {
        sc.trials
    };
    let twin = cpl_twin::run(&sc, trials, sc.seed, super::default_threads())?;
    let mut t = Table::new(
        format!(
            "guarded agents (CPL): {}, {} trials per arm, seed {}",
            twin.scenario, twin.trials, twin.seed
        ),
        &[
            "arm",
            "guard",
            "stale_k",
            "n",
            "stale_rate",
            "stale_lo",
            "stale_hi",
            "merges",
            "refusals",
            "waits",
            "blocked_k",
            "messages",
            "bytes_per_message",
        ],
    );
    for (side, arm) in [("without", &twin.without), ("with", &twin.with)] {
        let mut row = vec![Cell::text(side), Cell::text(arm.guard.as_str())];
        row.extend(proportion_cells(&arm.stale));
        row.extend([
            Cell::Int(arm.done as i64),
            Cell::Int(arm.refusals as i64),
            Cell::Int(arm.waits as i64),
            Cell::Int(arm.blocked.k as i64),
            Cell::Int(arm.messages as i64),
            Cell::float(arm.bytes_per_message, 1),
        ]);
        t.push(row);
    }
    Ok(table_files("cpl_stale_evidence", &t))
}
