//! The replicated model (SPEC §6), checked exhaustively at small bounds:
//! the shortest A4 witness under any-replica reads (pinned by steps, path and text), its
//! prevention under primary-pinned reads and under synchronous replication (pinned by the
//! states explored), and what the session discipline gives: it splits across agents (another
//! agent's write is not in a reader's session floor) but not for a lone writer-reader. Each
//! witness is re-checked with both forms of the A4 detector on its final log.

use agentsim_checker::config::Replication;
use agentsim_checker::jobs::replicated_run::{check, replay};
use agentsim_checker::jobs::run::{CheckConfig, CheckReport, Counterexample};
use agentsim_checker::{Bounds, Extensions, Property, ReplicatedModel, Space};
use agentsim_models::detect::a4::{self, A4Read, A4Witness};
use agentsim_models::names::{Agent, Cell, Replica, Value};
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::RuntimeKind;

/// 1 cell, 1 value, no tools, MaxOps 3 (a write and two reads), 1 secondary, A4 only.
fn cfg(agents: u32) -> CheckConfig {
    CheckConfig {
        bounds: Bounds {
            tools: 0,
            values: 1,
            ..Bounds::paper(agents, 1, 3)
        },
        ext: Extensions::default(),
        runtime: RuntimeKind::Vanilla.into(),
        symmetry: false,
        properties: vec![Property::A4],
        threads: 2,
        max_states: 10_000_000,
    }
}

fn rep(discipline: ReadDiscipline, max_lag: u64) -> Replication {
    Replication {
        secondaries: 1,
        max_lag,
        discipline,
    }
}

fn run(agents: u32, d: ReadDiscipline, max_lag: u64) -> CheckReport {
    check(&cfg(agents), rep(d, max_lag)).unwrap()
}

fn witness(r: &CheckReport) -> &Counterexample {
    r.verdicts[0]
        .counterexample
        .as_ref()
        .expect("A4 is admitted")
}

/// The final log of a path, with its read metadata.
fn final_log(agents: u32, d: ReadDiscipline, path: &str) -> Vec<agentsim_models::OpRecord> {
    let m = ReplicatedModel::of_kind(cfg(agents).bounds, Extensions::default(), rep(d, 1), {
        RuntimeKind::Vanilla
    })
    .unwrap();
    let ids = agentsim_checker::engine::trace::parse_path(path).unwrap();
    let t = agentsim_checker::engine::trace::replay(&m, &ids).unwrap();
    m.view(t.states.last().unwrap()).log
}

fn split(first: (usize, u32, u32), second: (usize, u32, u32)) -> A4Witness {
    let read = |(record, replica, value): (usize, u32, u32)| A4Read {
        record,
        replica: Replica(replica),
        value: Value(value),
    };
    A4Witness {
        first: read(first),
        second: read(second),
        cell: Cell(0),
        version: 1,
    }
}

/// SPEC §6's witness: after v1 commits at version 1, the primary serves v1 and the lagging
/// secondary NULL, both at committed version 1.
#[test]
fn any_replica_splits_in_six_steps() {
    let r = run(2, ReadDiscipline::AnyReplica, 1);
    let cx = witness(&r);
    let want = [
        " 1. StartRead(a1) rs={} asks primary -> nothing read",
        " 2. CompleteWrite(a1) wv={c1: v1} -> record 0 committed at c1 @1",
        " 3. StartRead(a1) rs={c1} asks primary -> primary: c1=v1 @1",
        " 4. CompleteWrite(a1) wv={} -> record 1 committed",
        " 5. StartRead(a1) rs={c1} asks s1 -> s1: c1=NULL @1",
        " 6. CompleteWrite(a1) wv={} -> record 2 committed",
    ];
    assert_eq!(cx.steps, want);
    assert_eq!(cx.path, "0/0/2/1/0/2/0");
    // The search stops at the violating level (depth 7: six steps).
    assert_eq!((r.outcome.distinct, r.outcome.depth), (36_880, 7));
    assert!(r.outcome.all_violated);
    let log = final_log(2, ReadDiscipline::AnyReplica, &cx.path);
    let expected = vec![split((1, 0, 1), (2, 1, 0))];
    assert_eq!(a4::spec(&log), expected);
    assert_eq!(a4::fast(&log), expected);
    let again = replay(&cfg(2), rep(ReadDiscipline::AnyReplica, 1), &cx.path).unwrap();
    assert_eq!(again.trace.steps, cx.steps);
    // The replayed path is checked too: it splits.
    assert_eq!(again.violated, vec![Property::A4]);
}

#[test]
fn primary_pinned_prevents_a4_exhaustively() {
    let r = run(2, ReadDiscipline::PrimaryPinned, 1);
    assert!(r.verdicts[0].counterexample.is_none());
    assert!(r.outcome.complete);
    let o = r.outcome;
    assert_eq!((o.distinct, o.generated, o.depth), (39_469, 62_663, 9));
}

#[test]
fn synchronous_replication_prevents_a4_under_any_reads() {
    let r = run(2, ReadDiscipline::AnyReplica, 0);
    assert!(r.verdicts[0].counterexample.is_none());
    assert!(r.outcome.complete);
    assert_eq!(r.outcome.distinct, 91_888);
}

/// Session reads split across agents: a2 never wrote, so a lagging s1 is fresh enough for it.
#[test]
fn session_splits_across_agents_only() {
    let r = run(2, ReadDiscipline::Session, 1);
    let cx = witness(&r);
    assert_eq!(cx.steps.len(), 6);
    assert_eq!(
        cx.steps[2],
        " 3. StartRead(a1) rs={c1} asks primary -> primary: c1=v1 @1"
    );
    assert_eq!(
        cx.steps[4],
        " 5. StartRead(a2) rs={c1} asks s1 -> s1: c1=NULL @1"
    );
    let log = final_log(2, ReadDiscipline::Session, &cx.path);
    assert_eq!(log[1].agent, Agent(0));
    assert_eq!(log[2].agent, Agent(1));
    assert_eq!(a4::spec(&log), vec![split((1, 0, 1), (2, 1, 0))]);
    // A lone writer-reader never reads below its own write: no split at all.
    let alone = run(1, ReadDiscipline::Session, 1);
    assert!(alone.verdicts[0].counterexample.is_none());
    assert!(alone.outcome.complete);
    assert_eq!(alone.outcome.distinct, 1_927);
    // ...while any-replica splits it in the same six steps.
    assert_eq!(
        witness(&run(1, ReadDiscipline::AnyReplica, 1)).steps.len(),
        6
    );
}

/// The ITF document carries what A4 compares: each read's replica, version and value.
#[test]
fn itf_shows_reads_and_replicas() {
    let r = run(2, ReadDiscipline::AnyReplica, 1);
    let itf = &witness(&r).itf;
    let vars = itf["vars"].as_array().unwrap();
    assert!(vars.iter().any(|v| v == "reads") && vars.iter().any(|v| v == "replicas"));
    let last = itf["states"].as_array().unwrap().last().unwrap();
    let reads = last["reads"].as_array().unwrap();
    assert_eq!(reads.len(), 2);
    let tup = &reads[1]["#tup"];
    assert_eq!(
        (tup[2].as_str(), tup[4].as_str()),
        (Some("s1"), Some("NULL"))
    );
    assert_eq!(tup[3]["#bigint"], "1");
    assert_eq!(last["replicas"]["#map"][1][1]["#map"][0][1]["#bigint"], "0");
}

/// Configurations the replicated model does not have are refused, naming what is missing or
/// the constant out of range (the binary words these in its flags;
/// sim/tests/check/check_replicas.rs).
#[test]
fn nonsense_combinations_are_refused() {
    let mut c = cfg(2);
    c.bounds.tools = 2;
    let e = check(&c, rep(ReadDiscipline::AnyReplica, 1)).unwrap_err();
    assert_eq!(e.to_string(), "the replicated model has no tools", "{e}");
    let mut c = cfg(2);
    c.symmetry = true;
    assert!(check(&c, rep(ReadDiscipline::AnyReplica, 1)).is_err());
    let far = rep(ReadDiscipline::AnyReplica, 7);
    let e = check(&cfg(2), far).unwrap_err();
    assert!(e.to_string().contains("MaxLag = 7"), "{e}");
}
