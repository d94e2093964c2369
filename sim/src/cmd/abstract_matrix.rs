//! `agentsim matrix --abstract`: the runtime × A1/A2/A3/A6 matrix on the history-free
//! abstract model (`experiments::abstract_matrix`), at `--agents` × `--cells` (default 3 × 2),
//! symmetry on. Each cell prints its verdict, how far it reaches ("all lengths" when the
//! unbounded exploration closed, else "up to MaxOps N" with N = `--max-ops`, default 4, used
//! by the A3 column whose retraction state needs a bound), distinct states, witness steps
//! and wall seconds. `--json` prints the same rows as an array of objects. Exit 1 if a cell
//! disagrees with SPEC §5 / Table 2. Verdicts hold at these agents, cells, values and tools.

use super::runtime_matrix::Args;
use crate::artifacts::tables::{Cell, Table};
use crate::cmd::progress::Items;
use crate::experiments::abstract_matrix::{run as run_matrix, step_options, table};
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut o = step_options();
    o.agents = args.agents.unwrap_or(o.agents);
    o.cells = args.cells.unwrap_or(o.cells);
    o.max_ops = args.max_ops.unwrap_or(o.max_ops);
    o.threads = super::runtime_matrix::threads(args);
    let mut progress = Items::new("matrix --abstract", "checks", args.progress);
    let mut checked = 0;
    let rows = run_matrix(&o, &mut |done, total| {
        checked = done;
        progress.done(done, Some(total));
    })?;
    progress.finish(checked);
    let t = table(&rows, &o, true);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&t))?);
    } else {
        print!("{}", t.to_markdown());
    }
    let agrees = rows
        .iter()
        .flat_map(|r| &r.entries)
        .all(|e| e.admitted == e.expected);
    Ok(if agrees {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn to_json(t: &Table) -> serde_json::Value {
    let rows = t.rows.iter().map(|row| {
        let obj: serde_json::Map<_, _> = t
            .columns
            .iter()
            .zip(row)
            .map(|(c, v)| {
                let v = match v {
                    Cell::Text(s) => s.clone().into(),
                    Cell::Int(i) => (*i).into(),
                    Cell::Float { value, .. } => (*value).into(),
                    Cell::Empty => serde_json::Value::Null,
                };
                (c.clone(), v)
            })
            .collect();
        serde_json::Value::Object(obj)
    });
    serde_json::Value::Array(rows.collect())
}
