//! Vacuity in the scenario engine: whether a scenario, under a runtime, can produce what an
//! anomaly's definition needs (SPEC §3) at all, decided from its scripts before anything is
//! explored or sampled. Where it cannot, "no path showed it" and "no trial showed it" say
//! nothing: the verdict is *cannot tell, vacuous* with what would make the anomaly possible,
//! as `agentsim check` says for its models (`agentsim_checker::jobs::vacuity`).
//!
//! What each anomaly needs of a scenario (read off the detectors' definitions):
//! * A1: a record of one agent that reads a cell a record of *another* agent writes (the
//!   write lands between the read and the commit).
//! * A2: a read that plans a tool, and a `registry` step that may remove it or change its
//!   signature (the planned tool leaves before the commit).
//! * A3: provenance (`provenance = true`, or a runtime that reads `preds`, such as `causal`),
//!   and a record whose write is read that may be aborted after: a `retract` step aimed at an
//!   agent that writes a cell some record reads (another agent's, or its own later one).
//! * A3_residue: the same retraction (memory keeps the retracted write, a later read sees a
//!   value no live record wrote); no provenance needed.
//! * A6: a `write` of two or more effects (two distinct cells, a `pick` and `include_read`
//!   counted), whose completions may come out of issue order.
//!
//! Vacuity is judged on the unguarded engine, with one allowance: a runtime other than
//! vanilla may abort records by itself, so under one the retraction needs of A3 and
//! A3_residue are taken as met (an abort might stand in for a retraction). That errs only
//! towards "not vacuous", where an exhaustive search still decides. The test
//! `vacuity_matches_exploration` holds the analysis to the explorer on a generated family,
//! both ways: "not vacuous" iff some explored path shows the anomaly under vanilla with
//! provenance on.

use crate::scenario::{AgentSpec, Scenario, Step};
use agentsim_models::names::Cell;
use agentsim_models::runtime::{RegistryChange, Stack};
use agentsim_models::Anomaly;
use std::collections::BTreeSet;

/// The cells one agent's script may read, and may write (a write's `include_read` adds the
/// cells its operation read), and whether it may write two or more distinct cells in one
/// `write`; plus whether some operation reads a cell an earlier one writes (or the script
/// repeats), so that its own later record may read its own write.
struct Access {
    reads: BTreeSet<Cell>,
    writes: BTreeSet<Cell>,
    two_effects: bool,
    reads_own: BTreeSet<Cell>,
}

fn access(a: &AgentSpec) -> Access {
    let steps = &a.script.steps;
    let mut acc = Access {
        reads: BTreeSet::new(),
        writes: BTreeSet::new(),
        two_effects: false,
        reads_own: BTreeSet::new(),
    };
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Read { cells, .. } => {
                acc.reads.extend(cells.iter().copied());
                // A cell this read may see that an earlier write of the same script wrote.
                let earlier = &acc.writes;
                acc.reads_own
                    .extend(cells.iter().filter(|c| earlier.contains(c)).copied());
            }
            Step::Write {
                cells,
                pick,
                include_read,
                ..
            } => {
                let own = pick.map_or(cells.len(), |k| (k as usize).min(cells.len()));
                let mut union: BTreeSet<Cell> = cells.iter().copied().collect();
                let mut read_count = 0;
                if *include_read {
                    if let Some(Step::Read { cells: r, pick, .. }) = a
                        .script
                        .op_start
                        .get(i)
                        .copied()
                        .flatten()
                        .map(|s| &steps[s])
                    {
                        union.extend(r.iter().copied());
                        read_count = pick.map_or(r.len(), |k| (k as usize).min(r.len()));
                    }
                }
                acc.two_effects |= union.len() >= 2 && own + read_count >= 2;
                acc.writes.extend(union);
            }
            _ => {}
        }
    }
    if a.repeat > 1 {
        // A later repetition reads what an earlier one wrote.
        let both: Vec<Cell> = acc.reads.intersection(&acc.writes).copied().collect();
        acc.reads_own.extend(both);
    }
    acc
}

/// Whether some `retract` step that may fire aims at an agent whose write some record may
/// read: another agent's, or the target's own later one.
fn retraction_read(sc: &Scenario, acc: &[Access]) -> bool {
    let targets = sc
        .agents
        .iter()
        .flat_map(|a| &a.script.steps)
        .filter_map(|s| match s {
            Step::Retract { targets, prob } if *prob > 0.0 => Some(targets),
            _ => None,
        });
    for t in targets.flatten() {
        let name = sc.names.agent_name(*t);
        for (i, a) in sc.agents.iter().enumerate() {
            if a.name != name {
                continue;
            }
            let others = acc
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .any(|(_, o)| !o.reads.is_disjoint(&acc[i].writes));
            if others || !acc[i].reads_own.is_empty() {
                return true;
            }
        }
    }
    false
}

/// Whether some read plans a tool that a `registry` step may remove or change.
fn tool_loss(sc: &Scenario) -> bool {
    let steps = || sc.agents.iter().flat_map(|a| &a.script.steps);
    let planned: BTreeSet<_> = steps()
        .filter_map(|s| match s {
            Step::Read { tool: Some(t), .. } => Some(*t),
            _ => None,
        })
        .collect();
    steps().any(|s| match s {
        Step::Registry { change, prob } if *prob > 0.0 => match change {
            RegistryChange::Remove(t) | RegistryChange::ChangeSignature(t) => planned.contains(t),
            RegistryChange::Add(_) => false,
        },
        _ => false,
    })
}

/// Why `sc` under `runtime` cannot produce `a` at all, or `None` if it can (see the module
/// header), e.g. `A3 needs provenance (set provenance = true, or run under causal)`.
pub fn vacuous(sc: &Scenario, runtime: Stack, a: Anomaly) -> Option<String> {
    let acc: Vec<Access> = sc.agents.iter().map(access).collect();
    let aborts = runtime != Stack::VANILLA;
    let retraction = || aborts || retraction_read(sc, &acc);
    const RETRACT: &str = "a retraction of a record whose write is read (add a `retract` step \
                           aimed at an agent that writes a cell another reads)";
    let why = match a {
        Anomaly::A1 => {
            let crossed = acc.iter().enumerate().any(|(i, r)| {
                acc.iter()
                    .enumerate()
                    .any(|(j, w)| i != j && !r.reads.is_disjoint(&w.writes))
            });
            (!crossed).then(|| "two agents, one reading a cell the other writes".to_owned())
        }
        Anomaly::A2 => (!tool_loss(sc)).then(|| {
            "a tool planned at a read that a `registry` step may remove or change".to_owned()
        }),
        Anomaly::A3 => {
            let preds = sc.provenance || runtime.provenance();
            match (preds, retraction()) {
                (true, true) => None,
                (false, true) => Some(
                    "provenance (set `provenance = true`, or run under a runtime that reads \
                     it, such as `causal`)"
                        .to_owned(),
                ),
                (true, false) => Some(RETRACT.to_owned()),
                (false, false) => Some(format!(
                    "provenance (set `provenance = true`) and {RETRACT}"
                )),
            }
        }
        Anomaly::A3Residue => (!retraction()).then(|| RETRACT.to_owned()),
        Anomaly::A6 => (!acc.iter().any(|x| x.two_effects)).then(|| {
            "a `write` of two or more cells (effects that can complete out of issue order)"
                .to_owned()
        }),
        // The engine's single store records no replica metadata (see `simulate`'s verdict).
        Anomaly::A4 => Some("a replicated store (run `agentsim split-view`)".to_owned()),
    }?;
    Some(format!("{} needs {why}", a.name()))
}

#[cfg(test)]
mod tests;
