//! The runtime × anomaly matrix (SPEC §5, the paper's Table 2, with A4 of SPEC §6 as a fifth
//! column) as a `reproduce` step: every cell by exhaustive exploration at the bounds of
//! `agentsim matrix`. A pass says what holds at these bounds only.

use crate::artifacts::figures::{runtime_matrix, MatrixCell, MatrixData, MatrixRow};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_checker::jobs::runtime_matrix::{self as cmatrix, ANOMALIES};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::Anomaly;

/// The `matrix` step.
pub const STEP: Step = Step {
    name: "matrix",
    about: "the runtime × anomaly matrix by exhaustive checking (SPEC §5, Table 2)",
    run: matrix_step,
};

/// Exploration threads (results do not depend on it).
const THREADS: usize = 2;

/// The matrix of `agentsim matrix` (default bounds), as a figure and a table.
fn matrix_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    ctx.progress("matrix: checking every runtime × anomaly");
    let rows = cmatrix::matrix(None, THREADS)?;
    let canonical = ANOMALIES
        .iter()
        .all(|&a| cmatrix::scenario(a, None).is_some_and(|(_, e)| e.canonical_writes));
    let mut data = MatrixData {
        bounds: format!(
            "each anomaly at its own bounds (`agentsim matrix`){}",
            if canonical { ", canonical writes" } else { "" }
        ),
        anomalies: ANOMALIES.iter().map(|p| p.name().to_owned()).collect(),
        column_bounds: ANOMALIES.iter().map(|&a| column_bounds(a)).collect(),
        rows: Vec::new(),
    };
    for row in rows {
        for e in row.entries.iter().flatten() {
            assert_eq!(
                e.admitted, e.expected,
                "matrix disagrees with SPEC §5 / §6 for {}",
                row.label
            );
        }
        let cells =
            row.entries.iter().map(
                |e| match e.map(|e| (e.admitted, e.witness_steps, e.states)) {
                    None => MatrixCell::NotRun,
                    Some((true, Some(steps), _)) => MatrixCell::Admitted {
                        witness_len: steps as u32,
                    },
                    Some((true, None, states)) => MatrixCell::Inconclusive { states },
                    Some((false, _, states)) => MatrixCell::Prevented { states },
                },
            );
        data.rows.push(MatrixRow {
            runtime: row.label.clone(),
            cells: cells.collect(),
        });
    }
    let about = "Runtime × anomaly matrix by exhaustive checking at small bounds: each cell says whether \
                 the runtime admits the anomaly (with the length of a shortest witness) or prevents \
                 it (with the distinct states explored).";
    let mut files = vec![figure_file("matrix", about, runtime_matrix::render(&data))];
    files.extend(table_files("matrix", &data.table()));
    Ok(files)
}

/// The lines under a column's header: the bounds and extensions its scenario is checked at,
/// each short enough for a cell's width.
fn column_bounds(a: Anomaly) -> Vec<String> {
    let Some((b, ext)) = cmatrix::scenario(a, None) else {
        return Vec::new();
    };
    let n = |k: u32, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    let mut lines = vec![
        format!(
            "{}, {}",
            n(b.agents, "agent", "agents"),
            n(b.cells, "cell", "cells")
        ),
        format!(
            "{}, {}",
            n(b.values, "value", "values"),
            n(b.tools, "tool", "tools")
        ),
        format!("MaxOps {}", b.max_ops),
    ];
    if a == Anomaly::A4 {
        let r = cmatrix::replication(ReadDiscipline::AnyReplica);
        let s = n(r.secondaries, "secondary", "secondaries");
        lines.push(format!("{s}, lag {}", r.max_lag));
    }
    let switches = [
        (ext.provenance, "provenance"),
        (ext.retraction, "retraction"),
        (ext.tool_versions, "tool versions"),
    ];
    lines.extend(switches.iter().filter(|s| s.0).map(|s| s.1.to_owned()));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_prints_the_bounds_it_was_checked_at() {
        assert_eq!(
            column_bounds(Anomaly::A1),
            ["2 agents, 1 cell", "1 value, 0 tools", "MaxOps 2"]
        );
        let a3 = column_bounds(Anomaly::A3);
        assert_eq!(&a3[3..], ["provenance", "retraction"]);
        assert_eq!(column_bounds(Anomaly::A4)[3], "1 secondary, lag 1");
        assert!(column_bounds(Anomaly::A3Residue).is_empty());
    }
}
