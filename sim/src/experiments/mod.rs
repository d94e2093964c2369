//! The experiments: each file owns one of them — its scenario loading, its run, and its tables
//! and figures — and exposes a [`Step`] for `agentsim reproduce`. Commands call the same
//! functions with their own flags; this file only lists the steps.
//!
//! The paper's experiments in simulation (SPEC §7: prevention twins, the three workloads, the
//! contention sweep, the deployed reproductions, the A4 and CPL guard twins) and the checker's
//! (the lattice, its witnesses, the runtime × anomaly matrix, state counts). Every number is
//! computed from the harness; nothing is typed in. A simulated rate estimates what the modelled
//! timing produces; it says nothing about a real deployment's timing.

pub mod abstract_matrix;
pub mod costs;
pub mod cpl_guards;
pub mod deployed;
pub mod explore;
pub mod explore_unbounded;
pub mod fit_fix;
pub mod front;
pub mod lattice;
pub mod lattice_witnesses;
pub mod liveness;
pub mod mechanism_twins;
pub mod paired;
pub mod realize;
pub mod reported;
pub mod run;
pub mod runtime_matrix;
pub mod split_view;
pub mod states;
pub mod sweep;
pub mod twin_specs;
pub mod twins;
pub mod workloads;

use crate::artifacts::Step;

/// Every step of `agentsim reproduce`, in the order they run and appear in the index.
pub fn steps() -> Vec<Step> {
    vec![
        lattice::STEP,
        lattice_witnesses::STEP,
        runtime_matrix::STEP,
        realize::STEP,
        abstract_matrix::STEP,
        liveness::STEP,
        states::STEP,
        twins::STEP,
        mechanism_twins::STEP,
        workloads::STEP,
        sweep::STEP,
        costs::STEP,
        deployed::STEP,
        split_view::STEP,
        cpl_guards::STEP,
        fit_fix::STEP,
        reported::STEP,
        explore::STEP,
        explore_unbounded::STEP,
    ]
}

/// The step `name` names: its own name, or the same with `_` for `-` (the step list once mixed
/// both, and the docs and old commands used both), or `witnesses` for `lattice-witnesses`
/// (its name in the sharding chapter). `None` for no step.
pub fn step_named(name: &str) -> Option<Step> {
    let canonical = match name.replace('_', "-") {
        n if n == "witnesses" => "lattice-witnesses".to_owned(),
        n => n,
    };
    steps().into_iter().find(|s| s.name == canonical)
}

/// The steps that sample, and so shard (`agentsim reproduce --only STEP --shard I/N
/// --partial-out FILE`, then `agentsim merge`): each takes every trial through its context's
/// source. The others do not shard: `lattice`, `lattice-witnesses`, `matrix`, `realize`,
/// `abstract-matrix`, `liveness` and `states` are exhaustive (no trials to split); `costs` first runs the
/// exhaustive realize search that picks its stacks, which every shard would repeat, and samples
/// its workloads and its sweep at different trial counts, which one partial's single trial
/// range cannot hold; `reported` reads a few committed traces and fixes two small fitted
/// scenarios; `deployed` drives its four reproductions through their own loops, not a
/// trial source, and takes under a tenth of a second whole; `explore` is mostly its exhaustive
/// searches, which every shard would repeat.
pub const SAMPLING: [&str; 6] = [
    "twins",
    "mechanism-twins",
    "workloads",
    "sweep",
    "split-view",
    "cpl-guards",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::reproduce::{readme, run_steps};
    use std::collections::BTreeSet;

    #[test]
    fn steps_have_unique_names_and_paths() {
        let done = run_steps(&steps(), true).expect("steps run");
        let names: BTreeSet<_> = done.iter().map(|(s, _)| s.name).collect();
        assert_eq!(names.len(), done.len());
        let index = String::from_utf8(readme(&done, false).bytes).expect("utf8");
        for (_, files) in &done {
            for f in files {
                assert!(index.contains(&format!("[{0}]({0})", f.path)), "{}", f.path);
            }
        }
    }
}
