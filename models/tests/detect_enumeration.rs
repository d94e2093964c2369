//! Agreement of the spec and fast detectors, proven by exhaustive enumeration at small bounds.
//!
//! Each test enumerates *every* history in its space (sizes 0..=max, every per-record choice,
//! every read time the model allows: `read_time ≤ index`, `write_time = index + 1`) and asserts
//! spec == fast for every detector, with both of fast A1's paths (scan and count-bisection)
//! forced. The full product "3 records × 2 agents × 2 cells × {NULL, v1, v2} × registries ×
//! aborts × preds × free reads" has ~10^14 histories, so the space is split into bounded
//! products, each exhaustive and each pinned by its count:
//!
//! * `model_three_records`: every history of SPEC §1's model with canonical writes — 3 records,
//!   2 agents, 2 cells, 3 values, every read and write set, reads from memory (no skew).
//! * `skewed_two_records`: 2 records, free reads (skew), writes free outside the write set,
//!   aborted or not — the space where `L1_struct`, A3-residue and the abort reading bite.
//! * `skewed_one_cell_three_records`: 3 records on one cell, free reads, aborted or not.
//! * `registries_two_records`: A2 — every (read registry, planned tool, write registry) with
//!   tool versions, per record, aborted or not.
//! * `effects_one_record`: A6 — every issue order of every write, every completion sequence of
//!   length ≤ 3 (permutations and non-permutations).
//! * `provenance_five_records`: A3 — every preds set and abort pattern of up to 5 records.
//!
//! No symmetry reduction is used: renaming agents, cells or values would be sound for the spec
//! form but would hide a fast form that is not equivariant. A pass proves agreement on these
//! spaces; that the spec form itself transcribes SPEC §3 is checked by reading it and by the
//! pinned witnesses in `detect_pitfalls.rs`.

mod detect_support;

use agentsim_models::{Cell, OpRecord, Tool, Value, ValueMap};
use detect_support::*;

/// Σ_{n ≤ max} choicesⁿ · n! (record k has k + 1 read times).
fn expected_count(choices: u64, max: u64) -> u64 {
    (0..=max)
        .map(|n| choices.pow(n as u32) * (1..=n).product::<u64>())
        .sum()
}

/// Spec == fast on every history of the space, on two threads; returns the count.
fn run(choices: &[OpRecord], max: usize, reads: Reads) -> u64 {
    let count = agree_on_all(choices, max, reads, 2);
    assert_eq!(count, expected_count(choices.len() as u64, max as u64));
    eprintln!("{count} histories, {} choices per record", choices.len());
    count
}

#[test]
fn model_three_records() {
    let mut choices = Vec::new();
    for agent in 0..2 {
        for rs in subsets(2) {
            for ws in subsets(2) {
                for wv in maps_on(&ws, 2) {
                    choices.push(dataflow(agent, &rs, &ValueMap::new(), &ws, &wv));
                }
            }
        }
    }
    assert_eq!(choices.len(), 128);
    assert_eq!(run(&choices, 3, Reads::Memory), 12_615_809);
}

#[test]
fn skewed_two_records() {
    let mut choices = Vec::new();
    for agent in 0..2 {
        for rs in subsets(2) {
            for rv in maps_on(&rs, 2) {
                for ws in subsets(2) {
                    for wv in maps_with_outside(&ws, 2, 2, 1) {
                        for aborted in [false, true] {
                            let mut r = dataflow(agent, &rs, &rv, &ws, &wv);
                            r.aborted = aborted;
                            choices.push(r);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(choices.len(), 1600);
    assert_eq!(run(&choices, 2, Reads::Free), 5_121_601);
}

#[test]
fn skewed_one_cell_three_records() {
    let mut choices = Vec::new();
    for agent in 0..2 {
        for rs in subsets(1) {
            for rv in maps_on(&rs, 2) {
                for ws in subsets(1) {
                    for wv in maps_on(&ws, 2) {
                        for aborted in [false, true] {
                            let mut r = dataflow(agent, &rs, &rv, &ws, &wv);
                            r.aborted = aborted;
                            choices.push(r);
                        }
                    }
                }
            }
        }
    }
    assert_eq!(choices.len(), 64);
    assert_eq!(run(&choices, 3, Reads::Free), 1_581_121);
}

#[test]
fn registries_two_records() {
    let mut choices = Vec::new();
    for read_registry in registries() {
        for planned_tool in [None, Some(Tool(0)), Some(Tool(1))] {
            for write_registry in registries() {
                for aborted in [false, true] {
                    choices.push(OpRecord {
                        read_registry: read_registry.clone(),
                        planned_tool,
                        write_registry: write_registry.clone(),
                        aborted,
                        ..OpRecord::default()
                    });
                }
            }
        }
    }
    assert_eq!(choices.len(), 486);
    assert_eq!(run(&choices, 2, Reads::Free), 472_879);
}

/// Every sequence of length ≤ `max` over `(c, v)` pairs, 2 cells × {NULL, v1, v2}.
fn sequences(max: usize) -> Vec<Vec<(Cell, Value)>> {
    let pairs: Vec<_> = (0..2)
        .flat_map(|c| (0..3).map(move |v| (Cell(c), Value(v))))
        .collect();
    let mut all = vec![vec![]];
    let mut layer = vec![vec![]];
    for _ in 0..max {
        layer = layer
            .iter()
            .flat_map(|s: &Vec<_>| {
                pairs.iter().map(move |&p| {
                    let mut s = s.clone();
                    s.push(p);
                    s
                })
            })
            .collect();
        all.extend(layer.iter().cloned());
    }
    all
}

#[test]
fn effects_one_record() {
    let mut choices = Vec::new();
    for ws in subsets(2) {
        for wv in maps_on(&ws, 2) {
            let mut orders = vec![effects_in_order(&ws, &wv)];
            if ws.len() == 2 {
                orders.push(orders[0].iter().rev().copied().collect());
            }
            for io in &orders {
                for co in sequences(3) {
                    for aborted in [false, true] {
                        let mut r = dataflow(0, &[], &ValueMap::new(), &ws, &wv);
                        (r.io, r.co, r.aborted) = (io.clone(), co.clone(), aborted);
                        choices.push(r);
                    }
                }
            }
        }
    }
    assert_eq!(choices.len(), 25 * 259 * 2);
    assert_eq!(run(&choices, 1, Reads::Free), 12_951);
}

#[test]
fn provenance_five_records() {
    let mut count = 0u64;
    for n in 0..=5usize {
        let pred_bits = n * n.saturating_sub(1) / 2;
        for preds_mask in 0u64..1 << pred_bits {
            for aborted_mask in 0u32..1 << n {
                let h = provenance_history(n, preds_mask, aborted_mask);
                assert_agree(&h);
                count += 1;
            }
        }
    }
    eprintln!("{count} provenance histories");
    assert_eq!(count, 1 + 2 + 8 + 64 + 1024 + 32_768);
}

/// n records; record k writes v1 to c1 and reads c1 (v1 from record 1 on, read at k − 1);
/// bit `(k, p)` of `preds_mask` puts p < k in preds(k); bit k of `aborted_mask` aborts k.
fn provenance_history(n: usize, preds_mask: u64, aborted_mask: u32) -> agentsim_models::History {
    let c = [Cell(0)];
    let mut bit = 0;
    let mut records = Vec::with_capacity(n);
    for k in 0..n {
        let read = ValueMap::from_pairs([(Cell(0), Value(u32::from(k > 0)))]);
        let mut r = dataflow(
            (k % 2) as u32,
            &c,
            &read,
            &c,
            &ValueMap::from_pairs([(c[0], Value(1))]),
        );
        r.read_time = k.saturating_sub(1) as u64;
        r.write_time = k as u64 + 1;
        r.aborted = aborted_mask & (1 << k) != 0;
        for p in 0..k {
            if preds_mask & (1 << bit) != 0 {
                r.preds.push(p as u32);
            }
            bit += 1;
        }
        records.push(r);
    }
    agentsim_models::History::from_records(records)
}
