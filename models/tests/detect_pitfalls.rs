//! Regression tests for the public detector pitfalls named in SPEC §3, and the SPEC's witnesses.
//!
//! Each pitfall is written down as the wrong detector a public tool uses, next to a history on
//! which it answers differently from ours; spec and fast both give our answer. A pass shows
//! our detectors avoid these three mistakes; it does not rule out others.

use agentsim_models::detect::{fast, spec, A1Witness, A2Reason, A2Witness, A6Witness};
use agentsim_models::{Agent, Cell, History, OpRecord, Registry, Tool, ToolEntry, Value, ValueMap};

const C: Cell = Cell(0);

fn rec(agent: u32, read_time: u64, write_time: u64) -> OpRecord {
    OpRecord {
        agent: Agent(agent),
        read_time,
        write_time,
        ..OpRecord::default()
    }
}

fn reads(mut r: OpRecord, v: u32) -> OpRecord {
    r.read_set = vec![C];
    r.read_values = ValueMap::from_pairs([(C, Value(v))]);
    r
}

fn writes(mut r: OpRecord, v: u32) -> OpRecord {
    r.write_set = vec![C];
    r.write_values = ValueMap::from_pairs([(C, Value(v))]);
    r
}

fn both(h: &History) -> agentsim_models::Report {
    let s = spec::detect(h);
    assert_eq!(fast::detect(h), s);
    s
}

/// Pitfall: A1 without the different-agents clause.
fn a1_any_agent(r: &[OpRecord]) -> bool {
    r.iter().any(|ri| {
        r.iter().any(|rj| {
            ri.read_set.iter().any(|&c| {
                rj.writes(c)
                    && ri.read_time < rj.write_time
                    && rj.write_time < ri.write_time
                    && ri.read_values.get(c) != rj.write_values.get(c)
            })
        })
    })
}

#[test]
fn a1_requires_different_agents() {
    // a1 reads c (NULL) at 0 and, while generating, another op of the same agent writes v1.
    let h = History::from_records(vec![writes(rec(0, 0, 1), 1), reads(rec(0, 0, 2), 0)]);
    assert!(
        a1_any_agent(&h.records),
        "the pitfall flags the agent's own write"
    );
    assert!(both(&h).a1.is_empty());
    // The same history with two agents is A1 for both.
    let mut h2 = h.clone();
    h2.records[0].agent = Agent(1);
    assert!(a1_any_agent(&h2.records));
    assert_eq!(
        both(&h2).a1,
        vec![A1Witness {
            reader: 1,
            writer: 0,
            cell: C
        }]
    );
}

/// Pitfall: A2 against the tools the log shows used (planned by some other record), not the
/// write-time registry.
fn a2_tools_used(r: &[OpRecord]) -> bool {
    r.iter().enumerate().any(|(i, ri)| {
        ri.planned_tool.is_some_and(|t| {
            let used_elsewhere = r
                .iter()
                .enumerate()
                .any(|(k, rk)| k != i && rk.planned_tool == Some(t));
            ri.read_registry.contains(t) && !used_elsewhere
        })
    })
}

fn planning(agent: u32, wt: u64, tool: u32, read: &Registry, write: &Registry) -> OpRecord {
    let mut r = rec(agent, wt - 1, wt);
    r.planned_tool = Some(Tool(tool));
    r.read_registry = read.clone();
    r.write_registry = write.clone();
    r
}

#[test]
fn a2_uses_the_write_time_registry() {
    let full = Registry::all(2);
    let mut without_t1 = full.clone();
    without_t1.remove(Tool(0));
    // t1 was used before, then removed while the second op generated: a phantom.
    let h = History::from_records(vec![
        planning(0, 1, 0, &full, &full),
        planning(1, 2, 0, &full, &without_t1),
    ]);
    assert!(!a2_tools_used(&h.records), "the pitfall sees t1 in use");
    let removed = A2Witness {
        record: 1,
        tool: Tool(0),
        reason: A2Reason::Removed,
    };
    assert_eq!(both(&h).a2, vec![removed]);
    // A tool nobody else used, still registered at write time, is no phantom.
    let h = History::from_records(vec![planning(0, 1, 1, &full, &full)]);
    assert!(
        a2_tools_used(&h.records),
        "the pitfall flags a tool never used before"
    );
    assert!(both(&h).a2.is_empty());
    // Extension 4: a signature change is a phantom too.
    let mut bumped = full.clone();
    bumped.change_signature(Tool(1));
    let h = History::from_records(vec![planning(0, 1, 1, &full, &bumped)]);
    let reason = A2Reason::VersionChanged { read: 0, write: 1 };
    assert_eq!(
        both(&h).a2,
        vec![A2Witness {
            record: 0,
            tool: Tool(1),
            reason
        }]
    );
    let entry = ToolEntry {
        tool: Tool(1),
        version: 1,
    };
    assert_eq!(bumped.get(Tool(1)), Some(entry));
}

/// Pitfall: A6 as `io != co` only.
fn a6_io_ne_co(r: &[OpRecord]) -> bool {
    r.iter().any(|ri| ri.io != ri.co)
}

#[test]
fn a6_needs_a_permutation_of_at_least_two() {
    let e = |c: u32, v: u32| (Cell(c), Value(v));
    let with = |io: Vec<_>, co: Vec<_>| {
        let mut r = rec(0, 0, 1);
        (r.io, r.co) = (io, co);
        History::from_records(vec![r])
    };
    // An effect that never completed: co is shorter, not a reordering.
    let lost = with(vec![e(0, 1), e(1, 1)], vec![e(0, 1)]);
    // One effect with its completion unrecorded.
    let single = with(vec![e(0, 1)], vec![]);
    // Same length, different multiset (a duplicate).
    let dup = with(vec![e(0, 1), e(1, 1)], vec![e(1, 1), e(1, 1)]);
    for h in [&lost, &single, &dup] {
        assert!(a6_io_ne_co(&h.records));
        assert!(both(h).a6.is_empty());
    }
    let swapped = with(vec![e(0, 1), e(1, 2)], vec![e(1, 2), e(0, 1)]);
    assert_eq!(both(&swapped).a6, vec![A6Witness { record: 0 }]);
}

/// SPEC §3: `L1_struct` does not imply ¬A1 — both read NULL at 0, a1 writes v1 at 1, a2
/// commits at 2.
#[test]
fn snapshot_insufficiency_witness() {
    let h = History::from_records(vec![
        writes(reads(rec(0, 0, 1), 0), 1),
        reads(rec(1, 0, 2), 0),
    ]);
    let r = both(&h);
    assert!(r.l1_struct_holds());
    assert_eq!(
        r.a1,
        vec![A1Witness {
            reader: 1,
            writer: 0,
            cell: C
        }]
    );
}
