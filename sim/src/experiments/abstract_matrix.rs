//! The runtime × anomaly matrix on the history-free abstract model (SPEC §5.2) as a
//! `reproduce` step and the body of `agentsim matrix --abstract`: every runtime (and
//! `si+all-writers`) × A1, A2, A3, A6 at 3 agents × 2 cells, symmetry on, each cell with how
//! far its verdict reaches.
//!
//! A cell is first run without a length bound; when that exploration closes, its verdict
//! covers histories of every length at these agents, cells, values and tools ("all lengths").
//! A3 needs retraction, whose abstract state keeps every live writer (the dependency graph of
//! the records that can still be retracted grows with the history), so its column is run with
//! the op counter and says "up to MaxOps N". The reproduced table carries no seconds (they are
//! not reproducible); the command prints them.

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_checker::jobs::abstract_matrix::{
    abstract_matrix_with, AbstractRow, MatrixOptions, Reach, COLUMNS,
};

/// The `abstract-matrix` step.
pub const STEP: Step = Step {
    name: "abstract-matrix",
    about: "the runtime × anomaly matrix on the abstract model at 3 agents × 2 cells, with reach",
    run: step,
};

/// The step's options: 3 agents, 2 cells, A3 up to MaxOps 4 (MaxOps 5 and 6 are in
/// `docs/benchmarks.md`; they take seconds to minutes).
pub fn step_options() -> MatrixOptions {
    MatrixOptions {
        agents: 3,
        cells: 2,
        max_ops: 4,
        unbounded_first: true,
        symmetry: true,
        threads: 2,
        max_states: u64::MAX,
    }
}

/// Runs the matrix.
/// `progress(done, total)` is called after each cell is checked.
pub fn run(
    o: &MatrixOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> anyhow::Result<Vec<AbstractRow>> {
    Ok(abstract_matrix_with(o, progress)?)
}

/// One row per cell: runtime, anomaly, verdict, reach, all lengths, states, witness steps,
/// whether it matches SPEC §5 / Table 2, and (when `seconds`) wall seconds.
pub fn table(rows: &[AbstractRow], o: &MatrixOptions, seconds: bool) -> Table {
    let mut cols = vec![
        "runtime",
        "anomaly",
        "verdict",
        "reach",
        "all_lengths",
        "states",
        "witness_steps",
        "matches_table_2",
    ];
    if seconds {
        cols.push("seconds");
    }
    let title = format!(
        "abstract model: runtime × anomaly at {} agents × {} cells, 1 value, symmetry",
        o.agents, o.cells
    );
    let mut t = Table::new(title, &cols);
    for r in rows {
        for (a, e) in COLUMNS.iter().zip(&r.entries) {
            let mut row = vec![
                Cell::text(r.label.clone()),
                Cell::text(a.name()),
                Cell::text(if e.admitted { "admitted" } else { "prevented" }),
                Cell::text(e.reach.to_string()),
                Cell::text(if e.reach == Reach::AllLengths {
                    "yes"
                } else {
                    "no"
                }),
                Cell::Int(e.states as i64),
                e.witness_steps.map_or(Cell::Empty, |n| Cell::Int(n as i64)),
                Cell::text(if e.admitted == e.expected {
                    "yes"
                } else {
                    "NO"
                }),
            ];
            if seconds {
                row.push(Cell::float(e.seconds, 3));
            }
            t.push(row);
        }
    }
    t
}

fn step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    ctx.progress("abstract-matrix: every runtime × anomaly on the abstract model");
    let o = step_options();
    let rows = run(&o, &mut |_, _| {})?;
    for r in &rows {
        for (a, e) in COLUMNS.iter().zip(&r.entries) {
            assert_eq!(
                e.admitted, e.expected,
                "the abstract matrix disagrees with SPEC §5 for {} {a}",
                r.label
            );
        }
    }
    Ok(table_files("abstract_matrix", &table(&rows, &o, false)))
}
