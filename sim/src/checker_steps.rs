//! The checker's steps of `agentsim reproduce`: the runtime × anomaly matrix (SPEC §5, the
//! paper's Table 2, with A4 of SPEC §6 as a fifth column) and state counts versus bound (paper-faithful vs canonical writes vs
//! canonical writes with symmetry). Both are computed by exhaustive exploration here; a pass
//! says what holds at these bounds only.

use crate::figures::{matrix, states, MatrixCell, MatrixData, MatrixRow};
use crate::figures::{StateCountData, StatePoint, StateSeries};
use crate::reproduce::{figure_file, table_files, Artifact, Ctx};
use agentsim_checker::config::{Bounds, Extensions};
use agentsim_checker::matrix::{self as cmatrix, ANOMALIES};
use agentsim_checker::run::{check, CheckConfig};
use agentsim_models::runtime::RuntimeKind;

/// Exploration threads (results do not depend on it).
const THREADS: usize = 2;

/// The matrix of `agentsim matrix` (default bounds), as a figure and a table.
pub fn matrix_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
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

/// Distinct states versus MaxOps at 2 agents, 1 cell, 1 value, 2 tools. Paper-faithful stops
/// at MaxOps 2: MaxOps 3 takes about 150 s and 12 GB (results/BENCH.md), too much for this
/// step; `--quick` stops every series at MaxOps 2.
pub fn states_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let top = if ctx.quick { 2 } else { 3 };
    let configs: [(&str, bool, bool, u32); 3] = [
        ("paper-faithful", false, false, 2),
        ("canonical", true, false, top),
        ("canonical+symmetry", true, true, top),
    ];
    let mut series = Vec::new();
    for (name, canonical, symmetry, max) in configs {
        let mut points = Vec::new();
        for max_ops in 1..=max {
            ctx.progress(&format!("states: {name}, MaxOps {max_ops}"));
            let bounds = Bounds {
                values: 1,
                ..Bounds::paper(2, 1, max_ops)
            };
            let ext = Extensions {
                canonical_writes: canonical,
                ..Extensions::default()
            };
            let cfg = CheckConfig {
                bounds,
                ext,
                runtime: RuntimeKind::Vanilla.into(),
                symmetry,
                properties: Vec::new(),
                threads: THREADS,
                max_states: u64::MAX,
            };
            let report = check(&cfg)?;
            assert!(
                report.outcome.complete,
                "state-count runs must exhaust the space"
            );
            points.push(StatePoint {
                bound: max_ops,
                states: report.outcome.distinct,
            });
        }
        series.push(StateSeries {
            config: name.to_owned(),
            points,
        });
    }
    let data = StateCountData {
        bound_desc: "MaxOps (2 agents, 1 cell, 1 value, 2 tools)".to_owned(),
        series,
    };
    let about = "checker distinct states vs bound: paper-faithful, canonical, +symmetry";
    let mut files = vec![figure_file("checker_states", about, states::render(&data))];
    files.extend(table_files("checker_states", &data.table()));
    Ok(files)
}
