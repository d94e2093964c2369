//! Hand-written schedules through the runtimes, classified by the spec-form
//! detectors: the workloads of SPEC §7 at their smallest, and one minimal schedule per anomaly
//! run through all nine runtimes, which must admit it exactly when the runtime's level admits
//! it (Table 2 of the paper, with `si`'s read-only caveat). These schedules show existence
//! (the weaker runtimes do produce each anomaly); the property tests cover absence.

use agentsim_models::detect::spec;
use agentsim_models::runtime::{
    AbortReason, BeginOutcome, BeginRequest, CommitOutcome, CommitRequest, DropReason, Guarded,
    Options, RegistryChange, RuntimeKind, Stack,
};
use agentsim_models::{Agent, Anomaly, Cell, History, Registry, Report, Tool, Value};

const PROVENANCE: Options = Options { provenance: true };

fn rt(kind: RuntimeKind) -> Guarded<Stack> {
    Guarded::new(kind, Registry::all(2), PROVENANCE)
}

fn kind(name: &str) -> RuntimeKind {
    RuntimeKind::parse(name).expect("a known runtime")
}

fn begin(rt: &mut Guarded<Stack>, a: u32, reads: &[u32], tool: Option<u32>) -> BeginOutcome {
    let read_set = reads.iter().map(|&c| Cell(c)).collect();
    rt.begin(&BeginRequest::new(Agent(a), read_set, tool.map(Tool)))
}

fn commit(rt: &mut Guarded<Stack>, a: u32, writes: &[(u32, u32)]) -> CommitOutcome {
    let w: Vec<_> = writes.iter().map(|&(c, v)| (Cell(c), Value(v))).collect();
    rt.commit(&CommitRequest::new(Agent(a), &w))
}

fn report(rt: &Guarded<Stack>) -> Report {
    let h = History::from_records(rt.log().to_vec());
    h.validate().expect("runtimes emit well-formed histories");
    spec::detect(&h)
}

fn begun(out: BeginOutcome) {
    assert!(matches!(out, BeginOutcome::Begun(_)), "{out:?}");
}

// ---- the workloads of SPEC §7 ----

const DOC: u32 = 0;
const REVIEW: u32 = 1;
const EDITOR: u32 = 0;
const REVIEWER: u32 = 1;

/// Reviewer reads `doc`; the editor reads and rewrites it while the reviewer generates.
fn edit_review(kind: RuntimeKind) -> (Guarded<Stack>, BeginOutcome) {
    let mut rt = rt(kind);
    begun(begin(&mut rt, REVIEWER, &[DOC], None));
    let editor = begin(&mut rt, EDITOR, &[DOC], None);
    if matches!(editor, BeginOutcome::Begun(_)) {
        commit(&mut rt, EDITOR, &[(DOC, 2)]);
    }
    commit(&mut rt, REVIEWER, &[(REVIEW, 1)]);
    (rt, editor)
}

#[test]
fn edit_review_vanilla_is_stale() {
    let (rt, _) = edit_review(kind("vanilla"));
    let r = report(&rt);
    assert_eq!(r.a1.len(), 1);
    assert_eq!((r.a1[0].reader, r.a1[0].writer), (1, 0));
}

#[test]
fn edit_review_pessimistic_drops_the_second_reader() {
    let (rt, editor) = edit_review(kind("pessimistic"));
    let conflict = DropReason::LockConflict {
        cell: Cell(DOC),
        holder: Agent(REVIEWER),
    };
    assert_eq!(editor, BeginOutcome::Dropped(conflict));
    assert_eq!(rt.log().len(), 1, "a dropped op leaves no record");
    assert!(!report(&rt).has(Anomaly::A1));
}

const TICKET: u32 = 0;
const PRIORITY: u32 = 1;
const REPORTER: u32 = 0;
const TRIAGER: u32 = 1;
const ENGINEER: u32 = 2;

/// Triage: the reporter files a ticket, the triager prioritizes it; the engineer reads both,
/// the reporter amends the ticket meanwhile, and the engineer's decision writes nothing.
fn triage(kind: RuntimeKind) -> (Guarded<Stack>, CommitOutcome) {
    let mut rt = rt(kind);
    begun(begin(&mut rt, REPORTER, &[], None));
    commit(&mut rt, REPORTER, &[(TICKET, 1)]);
    begun(begin(&mut rt, TRIAGER, &[TICKET], None));
    commit(&mut rt, TRIAGER, &[(PRIORITY, 1)]);
    begun(begin(&mut rt, ENGINEER, &[TICKET, PRIORITY], None));
    begun(begin(&mut rt, REPORTER, &[], None));
    commit(&mut rt, REPORTER, &[(TICKET, 2)]);
    let engineer = commit(&mut rt, ENGINEER, &[]);
    (rt, engineer)
}

#[test]
fn triage_read_only_commit_si_admits_a1_ssi_aborts() {
    let (si, out) = triage(kind("si"));
    assert!(matches!(out, CommitOutcome::Committed { index: 3, .. }));
    assert_eq!(report(&si).a1.len(), 1);
    let (ssi, out) = triage(kind("ssi"));
    let stale = AbortReason::StaleRead {
        cell: Cell(TICKET),
        writer: 2,
    };
    assert!(matches!(out, CommitOutcome::Aborted { reason, .. } if reason == stale));
    assert!(!report(&ssi).has(Anomaly::A1));
}

// ---- A3: a chain of readers, root retracted ----

/// Root writes c0; reader k reads c_{k-1} and writes c_k; then the root is retracted.
fn retracted_chain(kind: RuntimeKind, depth: u32) -> (Guarded<Stack>, Vec<usize>) {
    let mut rt = rt(kind);
    for k in 0..=depth {
        let reads: Vec<u32> = if k == 0 { vec![] } else { vec![k - 1] };
        begun(begin(&mut rt, k % 2, &reads, None));
        let out = commit(&mut rt, k % 2, &[(k, 1)]);
        assert!(matches!(out, CommitOutcome::Committed { .. }), "{out:?}");
    }
    let aborted = rt.retract(0);
    (rt, aborted)
}

#[test]
fn chain_retraction_causal_cascades_no_cascade_leaves_a3() {
    for depth in [2, 3, 5] {
        let (rt, aborted) = retracted_chain(kind("causal"), depth);
        let all: Vec<usize> = (0..=depth as usize).collect();
        assert_eq!(aborted, all, "depth {depth}");
        assert!(!report(&rt).has(Anomaly::A3));
        let (rt, aborted) = retracted_chain(kind("causal-no-cascade"), depth);
        assert_eq!(aborted, [0]);
        // Every reader in the chain depends on the root (preds are transitive).
        assert_eq!(report(&rt).a3.len(), depth as usize, "depth {depth}");
    }
}

// ---- A2: the planned tool's signature changes before dispatch ----

#[test]
fn registry_validate_aborts_pin_resolves() {
    let run = |name: &str| {
        let mut rt = rt(kind(name));
        begun(begin(&mut rt, 0, &[], Some(1)));
        rt.change_registry(RegistryChange::ChangeSignature(Tool(1)));
        let out = commit(&mut rt, 0, &[(0, 1)]);
        (rt, out)
    };
    let (rt, out) = run("registry-validate");
    let changed = AbortReason::ToolChanged { tool: Tool(1) };
    assert!(matches!(out, CommitOutcome::Aborted { reason, .. } if reason == changed));
    assert!(rt.log()[0].aborted);
    let (rt, out) = run("registry-pin");
    assert!(matches!(out, CommitOutcome::Committed { .. }));
    let rec = &rt.log()[0];
    assert_eq!(rec.write_registry.get(Tool(1)).map(|e| e.version), Some(0));
    assert_eq!(
        rt.store().registry().get(Tool(1)).map(|e| e.version),
        Some(1)
    );
    assert!(!report(&rt).has(Anomaly::A2));
    let (rt, _) = run("saga");
    assert_eq!(report(&rt).a2.len(), 1);
}

// ---- one minimal schedule per anomaly, through every runtime ----

fn schedule(kind: RuntimeKind, a: Anomaly) -> Guarded<Stack> {
    let mut rt = rt(kind);
    match a {
        // a1 reads c0; a0 blindly writes c0; a1 commits read-only.
        Anomaly::A1 => {
            begun(begin(&mut rt, 1, &[0], None));
            begun(begin(&mut rt, 0, &[], None));
            commit(&mut rt, 0, &[(0, 1)]);
            commit(&mut rt, 1, &[]);
        }
        Anomaly::A2 => {
            begun(begin(&mut rt, 0, &[], Some(0)));
            rt.change_registry(RegistryChange::Remove(Tool(0)));
            commit(&mut rt, 0, &[(0, 1)]);
        }
        Anomaly::A3 => {
            begun(begin(&mut rt, 0, &[], None));
            commit(&mut rt, 0, &[(0, 1)]);
            begun(begin(&mut rt, 1, &[0], None));
            commit(&mut rt, 1, &[(1, 1)]);
            rt.retract(0);
        }
        Anomaly::A6 => {
            begun(begin(&mut rt, 0, &[], None));
            let w = [(Cell(0), Value(1)), (Cell(1), Value(2))];
            rt.commit(&CommitRequest::new(Agent(0), &w).completing(vec![1, 0]));
        }
        Anomaly::A3Residue | Anomaly::A4 => unreachable!("one schedule per lattice anomaly"),
    }
    rt
}

/// Whether the runtime is meant to admit `a` (SPEC §4–5; `si` admits A1 via read-only commits).
fn admits(kind: RuntimeKind, a: Anomaly) -> bool {
    let level = match a {
        Anomaly::A1 => 1,
        Anomaly::A3 => 2,
        Anomaly::A6 => 3,
        Anomaly::A2 => 4,
        Anomaly::A3Residue | Anomaly::A4 => unreachable!("levels are over the lattice anomalies"),
    };
    kind.level() < level || (kind == RuntimeKind::Si && a == Anomaly::A1)
}

#[test]
fn each_runtime_admits_exactly_what_its_level_admits() {
    let mut table = Vec::new();
    for k in RuntimeKind::ALL {
        for a in Anomaly::LATTICE {
            let rt = schedule(k, a);
            let got = report(&rt).anomalies();
            let want: Vec<Anomaly> = [a].into_iter().filter(|&a| admits(k, a)).collect();
            table.push((k.name(), a.name(), got == want));
        }
    }
    let wrong: Vec<_> = table.iter().filter(|(_, _, ok)| !ok).collect();
    assert!(wrong.is_empty(), "{wrong:?}");
    // 4 + 3 (pessimistic) + 4 (si) + 3 + 2 (causal) + 3 (no cascade) + 1 (saga) + 0 + 0.
    let admitted = RuntimeKind::ALL
        .iter()
        .flat_map(|&k| Anomaly::LATTICE.map(|a| admits(k, a)))
        .filter(|&x| x)
        .count();
    assert_eq!(admitted, 20);
}
