//! Agreement of the spec and fast detectors, proven by exhaustive enumeration at small bounds.
//!
//! Each test enumerates *every* history in its space (sizes 0..=max, every per-record choice,
//! every read time the model allows: `read_time ≤ index`, `write_time = index + 1`) and asserts
//! spec == fast for every detector, with both of fast A1's paths (scan and count-bisection)
//! forced, from an empty initial state and from one where every cell holds a value (as a
//! trace that starts in the middle of a system's life does). The full product "3 records × 2
//! agents × 2 cells × {NULL, v1, v2} × registries × aborts × preds × free reads" has ~10^14
//! histories, so the space is split into bounded products, each exhaustive and each pinned by
//! its count:
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

use agentsim_models::OpRecord;
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
    let choices = model_choices();
    assert_eq!(choices.len(), 128);
    assert_eq!(run(&choices, 3, Reads::Memory), 12_615_809);
}

#[test]
fn skewed_two_records() {
    let choices = skewed_choices();
    assert_eq!(choices.len(), 1600);
    assert_eq!(run(&choices, 2, Reads::Free), 5_121_601);
}

#[test]
fn skewed_one_cell_three_records() {
    let choices = one_cell_choices();
    assert_eq!(choices.len(), 64);
    assert_eq!(run(&choices, 3, Reads::Free), 1_581_121);
}

#[test]
fn registries_two_records() {
    let choices = registry_choices();
    assert_eq!(choices.len(), 486);
    assert_eq!(run(&choices, 2, Reads::Free), 472_879);
}

#[test]
fn effects_one_record() {
    let choices = effects_choices();
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
