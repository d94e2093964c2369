//! Witnesses for the 16 lattice points (SPEC §4, extension): for each subset S
//! of {A1, A2, A3, A6}, a reachable history whose anomaly set is *exactly* S, shortest first.
//!
//! The model is the vanilla composed model ([`RuntimeModel`] over `vanilla`) with canonical
//! writes (extension 1: same anomalies, fewer states), provenance (extension 2) and retraction
//! (extension 3), so A3 is the **preds form** (a surviving record with an aborted
//! predecessor), as `agentsim detect` reports it; the residue form is not searched. Each state's
//! log is classified by the fast detectors; every witness is replayed and its history checked
//! again by the spec detectors, which must agree with the fast ones.
//!
//! Each point is searched at the smallest bounds its members need ([`bounds_for`]): a second
//! agent for A1, a second cell for A6, a tool for A2, and one record per op the anomalies need
//! ([`records_needed`]). [`lower_bound`] is a bound-independent floor on the length: every
//! record costs a StartRead and a CompleteWrite, A2 needs a registry change and A3 a Retract
//! (vanilla never aborts). The search raises a depth cap from that floor and prunes a state
//! when its depth plus an admissible estimate of the remaining steps ([`search`]) exceeds
//! the cap, so the first witness found is a shortest one at any bounds whenever its length
//! equals the floor — as it does for all 16 (the tests require it).
//!
//! Plain BFS is too big at 2 agents, 2 cells, MaxOps 3: even pruned, breadth-first order needs
//! 2.7 million states for {A1,A3,A6} and more for the full set, because it must finish every
//! level below the witness's. So the default [`Order::Depth`] visits states depth-first under
//! the cap (IDA*), which finds a witness of the same length in a few hundred states;
//! [`Order::Breadth`] is kept to give the BFS-first witness where that is wanted. Neither says
//! which runtime *excludes* a point; that is the matrix's business.

pub mod point;
pub mod search;

use crate::config::{Bounds, Extensions, Skew};
use crate::engine::space::Space;
use crate::engine::trace::{replay, Trace};
use crate::models::action::Action;
use crate::models::composed::RuntimeModel;
use crate::models::render;
use agentsim_models::detect::{fast, spec, Anomaly};
use agentsim_models::history::History;
use agentsim_models::lattice::{self, Point};
use agentsim_models::names::Names;
use agentsim_models::runtime::RuntimeKind;
pub use point::{lower_bound, point_of, records_needed};
use search::path_of;
pub use search::{search, Order, Outcome};

/// The smallest bounds that contain a witness for `p` (one value, so A1 reads NULL and sees v1
/// written, or the reverse).
pub fn bounds_for(p: Point) -> Bounds {
    Bounds {
        agents: if p.contains(Anomaly::A1) { 2 } else { 1 },
        cells: if p.contains(Anomaly::A6) { 2 } else { 1 },
        values: 1,
        tools: u32::from(p.contains(Anomaly::A2)),
        max_ops: records_needed(p).max(1),
        external: 0,
        skew: Skew::Off,
    }
}

/// The extensions every search runs with.
pub fn extensions() -> Extensions {
    Extensions {
        canonical_writes: true,
        provenance: true,
        retraction: true,
        ..Extensions::default()
    }
}

/// The model a search runs on.
pub fn model(b: Bounds) -> RuntimeModel<agentsim_models::runtime::Stack> {
    RuntimeModel::of_kind(b, extensions(), RuntimeKind::Vanilla).expect("valid witness bounds")
}

/// A witness history for one lattice point, with how it was found.
#[derive(Clone, Debug)]
pub struct Witness {
    pub point: Point,
    pub bounds: Bounds,
    /// The replay line (`0/4/17`) in the model of [`model`]`(bounds)`.
    pub path: String,
    /// Readable steps, one per action.
    pub steps: Vec<String>,
    /// The final state's log, with synthetic names.
    pub history: History,
    /// Distinct states its search visited.
    pub explored: u64,
}

impl Witness {
    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it is the empty history.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether its length meets [`lower_bound`], i.e. no history at any bounds is shorter.
    pub fn optimal(&self) -> bool {
        self.len() == lower_bound(self.point)
    }

    /// File name of its JSONL history: `L{A1 A2 A3 A6 as 0/1}-{members}.jsonl`.
    pub fn file_name(&self) -> String {
        let bits: String = Anomaly::LATTICE
            .iter()
            .map(|&a| if self.point.contains(a) { '1' } else { '0' })
            .collect();
        let names: Vec<&str> = self.point.members().iter().map(|a| a.name()).collect();
        let tail = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join("-")
        };
        format!("L{bits}-{tail}.jsonl")
    }
}

/// How far past [`lower_bound`] a search may raise its depth cap.
pub const SLACK_MAX: usize = 2;

/// No witness within the search's limits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{point}: no witness within {cap} steps ({explored} states visited, at most {max_states} \
     per round)"
)]
pub struct NotFound {
    pub point: String,
    pub cap: usize,
    pub explored: u64,
    pub max_states: u64,
}

/// The witness for `p` at [`bounds_for`]`(p)`, or an error naming the point and the states
/// visited when none is found within `max_states` per round and [`SLACK_MAX`] extra steps.
pub fn find(p: Point, order: Order, max_states: u64) -> Result<Witness, NotFound> {
    let m = model(bounds_for(p));
    let o = search(&m, p, order, lower_bound(p) + SLACK_MAX, max_states);
    match o.actions {
        Some(actions) => Ok(witness(&m, p, &actions, o.explored)),
        None => Err(NotFound {
            point: p.label(),
            cap: o.cap,
            explored: o.explored,
            max_states,
        }),
    }
}

/// Every point's witness, in [`lattice::points`] order.
pub fn find_all(order: Order, max_states: u64) -> Result<Vec<Witness>, NotFound> {
    lattice::points()
        .into_iter()
        .map(|p| find(p, order, max_states))
        .collect()
}

/// Replays a witness and checks it: the spec and fast detectors agree on its history, which
/// is well-formed and exhibits exactly `p`.
fn witness<S: Space<Action = Action>>(m: &S, p: Point, actions: &[Action], explored: u64) -> Witness
where
    S::State: Clone + Send + Sync,
{
    let trace: Trace<S::State, Action> =
        replay(m, &path_of(m, actions)).expect("a found path replays");
    let b = m.bounds();
    let log = m.view(trace.states.last().expect("a trace has states")).log;
    let history = History {
        records: log,
        names: Names::synthetic(b.agents, b.cells, b.tools, b.values),
    };
    assert!(history.validate().is_ok(), "a reachable log is well-formed");
    let reference = spec::detect(&history);
    assert_eq!(reference, fast::detect(&history), "spec and fast agree");
    assert_eq!(
        Point::of(&reference.anomalies()),
        p,
        "the witness exhibits exactly p"
    );
    Witness {
        point: p,
        bounds: b,
        path: trace.path_string(),
        steps: render::steps(m, &trace),
        history,
        explored,
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_bounds_by_hand() {
        let lb = |a: &[Anomaly]| lower_bound(Point::of(a));
        assert_eq!(lb(&[]), 0);
        assert_eq!(lb(&[Anomaly::A6]), 2);
        assert_eq!(lb(&[Anomaly::A2]), 3);
        assert_eq!(lb(&[Anomaly::A1]), 4);
        assert_eq!(lb(&[Anomaly::A3]), 5);
        assert_eq!(lb(&[Anomaly::A1, Anomaly::A3]), 7);
        assert_eq!(lb(&Anomaly::LATTICE), 8);
    }

    #[test]
    fn bounds_grow_with_members() {
        let all = bounds_for(Point::of(&Anomaly::LATTICE));
        assert_eq!(
            (all.agents, all.cells, all.tools, all.max_ops),
            (2, 2, 1, 3)
        );
        let none = bounds_for(Point(0));
        assert_eq!(
            (none.agents, none.cells, none.tools, none.max_ops),
            (1, 1, 0, 1)
        );
    }

    /// At 1 agent, 1 cell, no tool, MaxOps 2 the A3 witness is the 5-step one of item 4.
    #[test]
    fn a3_alone_in_five_steps() {
        let p = Point::of(&[Anomaly::A3]);
        let w = find(p, Order::Breadth, 1_000_000).unwrap();
        assert_eq!(w.len(), 5);
        assert!(w.optimal());
        assert_eq!(w.history.records.len(), 2);
    }
}
