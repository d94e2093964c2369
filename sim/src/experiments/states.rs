//! Checker state counts versus bound as a `reproduce` step: paper-faithful vs canonical
//! writes vs canonical writes with symmetry, each by exhaustive exploration. The counts are
//! what the encoding and reductions give at these bounds; they prove no property.

use crate::artifacts::figures::{states, StateCountData, StatePoint, StateSeries};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_checker::config::{Bounds, Extensions};
use agentsim_checker::jobs::run::{check, CheckConfig};
use agentsim_models::runtime::RuntimeKind;

/// The `states` step.
pub const STEP: Step = Step {
    name: "states",
    about: "checker state counts vs bound: paper-faithful, canonical, symmetry",
    run: states_step,
};

/// Exploration threads (results do not depend on it).
const THREADS: usize = 2;

/// Distinct states versus MaxOps at 2 agents, 1 cell, 1 value, 2 tools. Paper-faithful stops
/// at MaxOps 2: MaxOps 3 takes about 150 s and 12 GB (docs/benchmarks.md), too much for this
/// step; `--quick` stops every series at MaxOps 2.
fn states_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
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
    let about = "Distinct states the checker explores against the bound (log scale), for the \
                 paper-faithful model, with canonical writes, and with symmetry reduction added.";
    let mut files = vec![figure_file("checker_states", about, states::render(&data))];
    files.extend(table_files("checker_states", &data.table()));
    Ok(files)
}
