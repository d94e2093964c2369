//! A4 spec form vs fast form (SPEC §3: "they must agree on every history up to a small bound
//! and on random histories"): every history of up to four one-cell reads, every history of two
//! records over two cells, then proptest on larger random histories with replica metadata.
//! Agreement is equality of the complete, sorted witness sets. A pass says the two forms
//! compute the same thing; that the spec form is the right thing is what its literal loops
//! are for.

use agentsim_models::detect::stream::{Limits, Options, Stream};
use agentsim_models::detect::{a4, Witnesses};
use agentsim_models::{Agent, Cell, OpRecord, ReadMeta, Replica, Value, ValueKey, ValueMap};

/// The stream detector's A4 list equals the spec form's in completion order, cut at `max`.
fn stream_agrees(h: &[OpRecord], max: usize) {
    let opts = Options {
        limits: Limits::unbounded(max),
        residue: false,
        keep_agents: false,
    };
    let mut s = Stream::new(opts);
    // And a keyed detector, each value its own literal name: the same list, read back.
    let mut keyed = Stream::keyed(opts);
    let keys: Vec<ValueKey> = (1..=64)
        .map(|v| ValueKey::literal(&format!("v{v}")).expect("short"))
        .collect();
    for (k, r) in h.iter().enumerate() {
        s.push(r, k as u64 + 1, &mut ()).expect("streams");
        keyed
            .push_keyed(r, &keys, k as u64 + 1, &mut ())
            .expect("streams keyed");
    }
    let mut want = Witnesses::new(max);
    a4::spec_in_completion_order(h, &mut want);
    assert_eq!(s.finish(&mut ()).a4, want, "{h:?}");
    keyed.close(&mut ());
    let unkey = |v: Value| match keyed.witness_key(v) {
        k if k.is_null() => Value::NULL,
        k => Value(keys.iter().position(|&x| x == k).expect("a key given") as u32 + 1),
    };
    let mut got = keyed.summary().a4.clone();
    for w in &mut got.kept {
        (w.first.value, w.second.value) = (unkey(w.first.value), unkey(w.second.value));
    }
    assert_eq!(got, want, "keyed, {h:?}");
}
use proptest::prelude::*;

/// One cell's read in a record: not read, read without metadata, or read with metadata.
#[derive(Clone, Copy, Debug)]
enum CellRead {
    None,
    Bare(u32),
    Meta {
        replica: u32,
        version: u64,
        value: u32,
    },
}

fn cell_reads() -> Vec<CellRead> {
    let mut out = vec![CellRead::None, CellRead::Bare(0), CellRead::Bare(1)];
    for replica in 0..2 {
        for version in 0..2 {
            for value in 0..2 {
                out.push(CellRead::Meta {
                    replica,
                    version,
                    value,
                });
            }
        }
    }
    out
}

fn record(agent: u32, reads: &[CellRead], aborted: bool) -> OpRecord {
    let mut r = OpRecord {
        agent: Agent(agent),
        aborted,
        ..OpRecord::default()
    };
    let mut values = ValueMap::new();
    for (c, read) in reads.iter().enumerate() {
        let cell = Cell(c as u32);
        match *read {
            CellRead::None => continue,
            CellRead::Bare(v) => values.set(cell, Value(v)),
            CellRead::Meta {
                replica,
                version,
                value,
            } => {
                values.set(cell, Value(value));
                r.read_meta.push(ReadMeta {
                    cell,
                    replica: Replica(replica),
                    version,
                });
            }
        }
        r.read_set.push(cell);
    }
    r.read_values = values;
    r
}

/// Every choice per record: (reads of each cell, aborted).
fn choices(cells: usize) -> Vec<OpRecord> {
    let mut combos: Vec<Vec<CellRead>> = vec![vec![]];
    for _ in 0..cells {
        combos = combos
            .iter()
            .flat_map(|p| {
                cell_reads().into_iter().map(move |c| {
                    let mut p = p.clone();
                    p.push(c);
                    p
                })
            })
            .collect();
    }
    let mut out = Vec::new();
    for reads in &combos {
        for aborted in [false, true] {
            out.push(record(0, reads, aborted));
        }
    }
    out
}

/// Checks agreement on every sequence of `len` records drawn from `choices`; returns how many
/// histories were checked and how many had a split.
fn enumerate(choices: &[OpRecord], len: usize) -> (usize, usize) {
    let (mut checked, mut split) = (0, 0);
    let mut idx = vec![0usize; len];
    loop {
        let h: Vec<OpRecord> = idx.iter().map(|&i| choices[i].clone()).collect();
        let spec = a4::spec(&h);
        assert_eq!(a4::fast(&h), spec, "{h:?}");
        for max in [1, usize::MAX] {
            stream_agrees(&h, max);
        }
        checked += 1;
        split += usize::from(!spec.is_empty());
        let Some(k) = (0..len).rev().find(|&k| idx[k] + 1 < choices.len()) else {
            return (checked, split);
        };
        idx[k] += 1;
        idx[k + 1..].fill(0);
    }
}

#[test]
fn agree_on_every_small_one_cell_history() {
    let one = choices(1);
    assert_eq!(one.len(), 22);
    let mut total = 0;
    for len in 0..=4 {
        total += enumerate(&one, len).0;
    }
    assert_eq!(total, 1 + 22 + 484 + 10_648 + 234_256);
}

#[test]
fn agree_on_every_two_record_two_cell_history() {
    let two = choices(2);
    assert_eq!(two.len(), 242);
    let (checked, split) = enumerate(&two, 2);
    assert_eq!(checked, 242 * 242);
    assert!(split > 0);
}

fn arb_record(cells: u32, versions: u64, values: u32) -> impl Strategy<Value = OpRecord> {
    let read = (0..4u32, 0..versions, 0..=values, any::<bool>());
    (
        0..3u32,
        prop::collection::vec(read, cells as usize),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(agent, reads, aborted)| {
            let reads: Vec<CellRead> = reads
                .into_iter()
                .map(|(replica, version, value, meta)| match (replica, meta) {
                    (3, _) => CellRead::None,
                    (_, false) => CellRead::Bare(value),
                    (r, true) => CellRead::Meta {
                        replica: r,
                        version,
                        value,
                    },
                })
                .collect();
            record(agent, &reads, aborted)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn agree_on_random_histories(h in prop::collection::vec(arb_record(3, 3, 2), 0..40)) {
        let spec = a4::spec(&h);
        prop_assert_eq!(a4::fast(&h), spec.clone());
        for max in [0, 2, usize::MAX] {
            stream_agrees(&h, max);
        }
        for w in &spec {
            prop_assert!(w.first.record < w.second.record);
            prop_assert!(w.first.value != w.second.value);
        }
    }
}
