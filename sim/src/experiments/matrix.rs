//! The runtime × anomaly matrix (SPEC §5, the paper's Table 2, with A4 of SPEC §6 as a fifth
//! column) as a `reproduce` step: every cell by exhaustive exploration at the bounds of
//! `agentsim matrix`. A pass says what holds at these bounds only.

use crate::artifacts::figures::{matrix, MatrixCell, MatrixData, MatrixRow};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_checker::matrix::{self as cmatrix, ANOMALIES};

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
    let mut data = MatrixData {
        bounds: "each anomaly at the bounds of `agentsim matrix`; A4 on 1 secondary, lag 1"
            .to_owned(),
        anomalies: ANOMALIES.iter().map(|p| p.name().to_owned()).collect(),
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
    let about = "runtime × anomaly matrix: admitted (shortest witness) or prevented (states)";
    let mut files = vec![figure_file("matrix", about, matrix::render(&data))];
    files.extend(table_files("matrix", &data.table()));
    Ok(files)
}
