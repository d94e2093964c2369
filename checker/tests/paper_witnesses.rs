//! The paper's witnesses, found by the checker's shortest-counterexample
//! search and pinned by length. Each witness is also re-checked with the spec detectors on
//! its final log, and its replay path is parsed and replayed to the same trace.

use agentsim_checker::engine::trace::{parse_path, replay, shortest, Trace};
use agentsim_checker::{
    Bounds, Extensions, PaperModel, PropSet, Property, RuntimeModel, Skew, Space,
};
use agentsim_models::detect::spec;
use agentsim_models::names::{Cell, Value};
use agentsim_models::runtime::RuntimeKind;

const MAX: u64 = 50_000_000;

fn witness<S: Space>(m: &S, p: Property) -> Trace<S::State, S::Action>
where
    S::State: Clone + Send + Sync,
{
    let mut found = shortest(m, PropSet::of(&[p]), MAX);
    let t = found.remove(&p).expect("a witness exists");
    let again = replay(m, &parse_path(&t.path_string()).unwrap()).unwrap();
    assert_eq!(
        again.actions, t.actions,
        "the replay line reproduces the trace"
    );
    t
}

fn paper(b: Bounds) -> PaperModel {
    PaperModel::new(b, Extensions::default(), false).unwrap()
}

#[test]
fn a1_in_four_steps_at_two_agents_max_ops_four() {
    let m = paper(Bounds::paper(2, 1, 4));
    let t = witness(&m, Property::A1);
    assert_eq!(t.steps(), 4);
    assert_eq!(t.states.len(), 5);
    assert!(!spec::a1(&m.view(t.states.last().unwrap()).log).is_empty());
}

#[test]
fn a2_at_max_ops_three() {
    let m = paper(Bounds::paper(2, 1, 3));
    let t = witness(&m, Property::A2);
    // StartRead planning t1, RemoveTool(t1), CompleteWrite.
    assert_eq!(t.steps(), 3);
    assert!(!spec::a2(&m.view(t.states.last().unwrap()).log).is_empty());
}

#[test]
fn a6_with_one_agent_two_cells_max_ops_two() {
    let m = paper(Bounds::paper(1, 2, 2));
    let t = witness(&m, Property::A6);
    assert_eq!(t.steps(), 2);
    assert!(!spec::a6(&m.view(t.states.last().unwrap()).log).is_empty());
}

#[test]
fn a3_residue_form_with_skew() {
    let mut b = Bounds::paper(1, 1, 2);
    b.skew = Skew::Every;
    let m = paper(b);
    let t = witness(&m, Property::A3_RESIDUE);
    // StartRead observing a value nobody wrote, CompleteWrite.
    assert_eq!(t.steps(), 2);
    // Without skew the residue form cannot occur.
    let plain = paper(Bounds::paper(1, 1, 2));
    assert!(shortest(&plain, PropSet::of(&[Property::A3_RESIDUE]), MAX).is_empty());
}

/// The paper's skew frees every cell's read; the external-only extension frees only the
/// external ones (`ExternalCells` = the first `external` cells, so c1 here): its witness reads a
/// value nobody wrote in c1, and c2 as memory has it (NULL).
#[test]
fn paper_skew_frees_every_cell_external_skew_only_the_external_ones() {
    let mut b = Bounds::paper(1, 2, 1);
    b.values = 1;
    b.skew = Skew::Every;
    assert_eq!(witness(&paper(b), Property::A3_RESIDUE).steps(), 2);
    (b.skew, b.external) = (Skew::External, 1);
    let m = paper(b);
    let t = witness(&m, Property::A3_RESIDUE);
    assert_eq!(t.steps(), 2);
    let log = m.view(t.states.last().unwrap()).log;
    let read = |c| log[0].read_values.get(Cell(c));
    assert_eq!((read(0), read(1)), (Value(1), Value::NULL));
}

#[test]
fn a3_preds_form_with_provenance_and_retraction_no_skew() {
    let ext = Extensions {
        provenance: true,
        retraction: true,
        ..Extensions::default()
    };
    let m = RuntimeModel::of_kind(Bounds::paper(1, 1, 2), ext, RuntimeKind::Vanilla).unwrap();
    let t = witness(&m, Property::A3);
    // Write c1, read it (preds {0}), write, retract record 0.
    assert_eq!(t.steps(), 5);
    assert!(!spec::a3(&m.view(t.states.last().unwrap()).log).is_empty());
    // The causal runtime (cascading abort) prevents it at the same bounds.
    let c = RuntimeModel::of_kind(
        Bounds::paper(1, 1, 2),
        ext,
        RuntimeKind::Causal { cascade: true },
    )
    .unwrap();
    assert!(shortest(&c, PropSet::of(&[Property::A3]), MAX).is_empty());
}

/// SPEC §3: L1_struct does not imply ¬A1 — 5 states at 2 agents, 1 cell, MaxOps 3.
#[test]
fn snapshot_insufficiency_witness() {
    let m = paper(Bounds::paper(2, 1, 3));
    let t = witness(&m, Property::A1Snapshot);
    assert_eq!(t.states.len(), 5);
    let log = m.view(t.states.last().unwrap()).log;
    assert!(spec::l1_struct(&log).is_empty());
    assert!(!spec::a1(&log).is_empty());
}
