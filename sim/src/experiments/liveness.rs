//! The liveness table as a `reproduce` step: every named runtime × fairness (wf, sf) ×
//! property (starvation, livelock) on the history-free abstract model without a length bound
//! (`agentsim check --abstract --property P --fairness F`), at 2 agents × 2 cells, 1 value,
//! no tool. Each exploration closes, so a verdict covers runs of every length at these
//! constants. A violated cell names the starving agent and its lasso's stem and cycle
//! lengths. The runtimes with a TLA+ twin (`tla/AbstractLive.tla`: vanilla, pessimistic, si,
//! ssi) have one config per cell, and `tla/check.sh` holds each cell equal to TLC's verdict.
//! The table carries no seconds (they are not reproducible).

use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_checker::config::{Bounds, Extensions};
use agentsim_checker::engine::fair::{Fairness, LiveProperty, LiveVerdict};
use agentsim_checker::jobs::liveness::{check_liveness, verdict_word, LiveConfig, LiveReport};
use agentsim_checker::jobs::run::CheckConfig;
use agentsim_models::runtime::RuntimeKind;

/// The `liveness` step.
pub const STEP: Step = Step {
    name: "liveness",
    about: "which runtime is live under which fairness: starvation and livelock on the abstract model, 2 agents × 2 cells, every length",
    run: step,
};

/// The table's constants: agents, cells.
pub const AGENTS: u32 = 2;
pub const CELLS: u32 = 2;

/// The runtimes `tla/AbstractLive.tla` models.
pub const TLA_TWINS: [&str; 4] = ["vanilla", "pessimistic", "si", "ssi"];

/// The check of one cell.
pub fn cell(kind: RuntimeKind, fairness: Fairness) -> anyhow::Result<LiveReport> {
    let cfg = LiveConfig {
        check: CheckConfig {
            bounds: Bounds {
                values: 1,
                tools: 0,
                ..Bounds::paper(AGENTS, CELLS, 1)
            },
            ext: Extensions::default(),
            runtime: kind.stack(),
            symmetry: false,
            properties: Vec::new(),
            threads: 2,
            max_states: u64::MAX,
        },
        abstract_model: true,
        bounded: false,
        properties: LiveProperty::ALL.to_vec(),
        fairness,
    };
    check_liveness(&cfg).map_err(|e| anyhow::anyhow!("{kind}: {e}"))
}

/// One row per runtime × fairness × property.
pub fn table() -> anyhow::Result<Table> {
    let mut t = Table::new(
        format!(
            "liveness on the abstract model, no length bound: runtime × fairness at {AGENTS} \
             agents × {CELLS} cells, 1 value"
        ),
        &[
            "runtime", "fairness", "property", "verdict", "agent", "stem", "cycle", "states",
            "tlc_twin",
        ],
    );
    for kind in RuntimeKind::ALL {
        for fairness in [Fairness::Weak, Fairness::Strong] {
            let r = cell(kind, fairness)?;
            anyhow::ensure!(r.complete, "{kind}: the exploration did not close");
            for x in &r.results {
                let lasso = x.lasso.as_ref();
                let reason_free = !matches!(x.verdict, LiveVerdict::CannotTell(_));
                anyhow::ensure!(reason_free, "{kind} {}: cannot tell", x.property.name());
                t.push(vec![
                    Cell::text(kind.to_string()),
                    Cell::text(fairness.name()),
                    Cell::text(x.property.name()),
                    Cell::text(verdict_word(&x.verdict)),
                    x.agent.clone().map_or(Cell::Empty, Cell::text),
                    lasso.map_or(Cell::Empty, |l| Cell::Int(l.stem.len() as i64)),
                    lasso.map_or(Cell::Empty, |l| Cell::Int(l.cycle.len() as i64)),
                    Cell::Int(r.states as i64),
                    Cell::text(if TLA_TWINS.contains(&kind.to_string().as_str()) {
                        "yes"
                    } else {
                        "no"
                    }),
                ]);
            }
        }
    }
    Ok(t)
}

fn step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    ctx.progress("liveness: every runtime × fairness on the abstract model");
    Ok(table_files("liveness", &table()?))
}
