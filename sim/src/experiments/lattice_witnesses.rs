//! A shortest witness history for each of the 16 anomaly sets, found by the checker (see
//! `agentsim_checker::jobs::lattice_witnesses`): the `lattice-witnesses` step of `reproduce` and what
//! `agentsim lattice --witnesses` prints. The search is re-run every time; nothing is read from
//! `results/`. A witness for the set S exhibits exactly S at its bounds (S is a subset of
//! {A1, A2, A3, A6}, as a lattice point is, but a lattice point names what a model *excludes*);
//! it says nothing about which runtime admits it.

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_checker::jobs::lattice_witnesses::{self, lower_bound, Order, Witness};
use agentsim_jsonl as jsonl;
use agentsim_models::lattice::{self, Point};
use std::fmt::Write as _;
use std::time::Instant;

/// The `lattice-witnesses` step.
pub const STEP: Step = Step {
    name: "lattice-witnesses",
    about: "a shortest witness history exhibiting each of the 16 anomaly sets, by the checker",
    run: step_files,
};

/// The default `--max-states`: far above what the searches need (docs/benchmarks.md).
pub const DEFAULT_MAX_STATES: u64 = 20_000_000;

/// Searches a witness for every point in lattice order, reporting each on stderr.
pub fn find_all(order: Order, max_states: u64) -> anyhow::Result<Vec<Witness>> {
    let mut ws = Vec::new();
    for p in lattice::points() {
        let t = Instant::now();
        let w = lattice_witnesses::find(p, order, max_states)
            .map_err(|e| anyhow::anyhow!("{e}; raise --max-states"))?;
        eprintln!(
            "lattice --witnesses: {}: {} steps, {} states, {:.2} s",
            p.label(),
            w.len(),
            w.explored,
            t.elapsed().as_secs_f64()
        );
        ws.push(w);
    }
    Ok(ws)
}

/// The witness's history as JSON Lines (an empty file for the empty history).
pub fn history_bytes(w: &Witness) -> String {
    jsonl::write_history(&w.history)
}

/// `L{k}` if `p` is exactly what level k of the named chain admits (so the witness is a
/// maximal history of Lk), else empty.
fn maximal_for(p: Point) -> Option<usize> {
    let all = Point(0b1111);
    lattice::named_chain()
        .iter()
        .position(|&excluded| Point(all.0 & !excluded.0) == p)
}

fn bounds_text(w: &Witness) -> String {
    let b = w.bounds;
    format!(
        "{}a {}c {}t {}v ops{}",
        b.agents, b.cells, b.tools, b.values, b.max_ops
    )
}

/// The 16-row table: the set exhibited, level, steps vs the lower bound, bounds, states explored.
pub fn witness_table(ws: &[Witness]) -> Table {
    let mut t = Table::new(
        "Shortest witness history per exhibited anomaly set (vanilla; canonical writes, \
         provenance, retraction)",
        &[
            "exhibits",
            "level",
            "maximal_for",
            "steps",
            "lower_bound",
            "optimal",
            "bounds",
            "states_explored",
            "file",
        ],
    );
    for w in ws {
        t.push(vec![
            Cell::text(w.point.label()),
            Cell::text(format!("L{}", lattice::level(w.point))),
            maximal_for(w.point).map_or(Cell::Empty, |k| Cell::text(format!("L{k}"))),
            Cell::Int(w.len() as i64),
            Cell::Int(lower_bound(w.point) as i64),
            Cell::text(if w.optimal() { "yes" } else { "no" }),
            Cell::text(bounds_text(w)),
            Cell::Int(w.explored as i64),
            Cell::text(w.file_name()),
        ]);
    }
    t
}

/// The table and each witness's steps, as `lattice --witnesses` prints them.
pub fn witness_text(ws: &[Witness]) -> String {
    let mut s = witness_table(ws).to_markdown();
    for w in ws {
        let _ = writeln!(
            s,
            "\n{} {}: {} steps at {}, replay {}",
            w.file_name(),
            w.point.label(),
            w.len(),
            bounds_text(w),
            w.path
        );
        for line in &w.steps {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

/// One witness as JSON.
pub fn witness_json(w: &Witness) -> serde_json::Value {
    let b = w.bounds;
    serde_json::json!({
        "exhibits": names(w.point),
        "level": lattice::level(w.point),
        "maximal_for": maximal_for(w.point).map(|k| format!("L{k}")),
        "steps": w.len(),
        "lower_bound": lower_bound(w.point),
        "optimal": w.optimal(),
        "bounds": {
            "agents": b.agents, "cells": b.cells, "tools": b.tools, "values": b.values,
            "max_ops": b.max_ops,
        },
        "states_explored": w.explored,
        "file": w.file_name(),
        "path": w.path,
        "trace": w.steps,
    })
}

/// The `reproduce` step: the table and one JSON Lines history per point in `witnesses/`.
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    ctx.progress("searching a witness for each of the 16 points");
    let ws = lattice_witnesses::find_all(Order::Depth, DEFAULT_MAX_STATES)
        .map_err(anyhow::Error::msg)?;
    let mut files = table_files("lattice-witnesses", &witness_table(&ws));
    for w in &ws {
        files.push(Artifact {
            path: format!("witnesses/{}", w.file_name()),
            bytes: history_bytes(w).into_bytes(),
            about: format!("a shortest history exhibiting exactly {}", w.point.label()),
        });
    }
    Ok(files)
}

fn names(p: Point) -> Vec<&'static str> {
    p.members().iter().map(|a| a.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::output::write_atomic;
    use agentsim_models::detect::fast;

    /// The reproduce step's files: the table and 16 histories that `agentsim detect` (its
    /// reader and the fast detectors) classifies as exactly their points.
    #[test]
    fn witness_files_round_trip_to_their_points() {
        let files = step_files(&Ctx::new("lattice-witnesses", true)).unwrap();
        let histories: Vec<_> = files
            .iter()
            .filter(|f| f.path.starts_with("witnesses/"))
            .collect();
        assert_eq!(histories.len(), 16);
        let dir = std::env::temp_dir().join(format!("agentsim-latwit-{}", std::process::id()));
        for (f, p) in histories.iter().zip(lattice::points()) {
            let path = dir.join(&f.path);
            write_atomic(&path, &f.bytes).unwrap();
            let h = jsonl::read_history(&path).unwrap();
            assert_eq!(Point::of(&fast::detect(&h).anomalies()), p, "{}", f.path);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        let md = files.iter().find(|f| f.path.ends_with(".md")).unwrap();
        let text = String::from_utf8(md.bytes.clone()).unwrap();
        assert_eq!(
            text.matches("| yes ").count(),
            16,
            "every witness is optimal"
        );
    }
}
