//! Shared builders for the detector and JSON Lines tests: exhaustive per-record choice lists,
//! a history enumerator, and a random history generator for proptest.
//!
//! The enumerator visits every sequence of per-record choices up to a length, with every
//! read time the model allows (`read_time ≤ index`, `write_time = index + 1`, SPEC §1), each
//! exactly once; it says nothing about which choices are interesting: the tests pick them.
#![allow(dead_code)] // each test binary uses a different part

use agentsim_models::detect::stream::{Limits, Options, Stream};
use agentsim_models::detect::{fast, spec, Summary};
use agentsim_models::{Agent, Cell, History, Names, OpRecord, Registry, Tool, ToolEntry, Value};
use agentsim_models::{ValueKey, ValueMap};

/// Every subset of `cells` cells, as sorted vectors, smallest first.
pub fn subsets(cells: u32) -> Vec<Vec<Cell>> {
    (0u32..1 << cells)
        .map(|m| (0..cells).filter(|c| m & (1 << c) != 0).map(Cell).collect())
        .collect()
}

/// Every total map NULL outside `set` and in `{NULL, v1..v_values}` on it.
pub fn maps_on(set: &[Cell], values: u32) -> Vec<ValueMap> {
    let mut maps = vec![ValueMap::new()];
    for &c in set {
        maps = maps
            .into_iter()
            .flat_map(|m| {
                (0..=values).map(move |v| {
                    let mut m = m.clone();
                    m.set(c, Value(v));
                    m
                })
            })
            .collect();
    }
    maps
}

/// Every map in `{NULL, v1..v_values}` on `set` and in `{NULL, v1..v_outside}` off it.
pub fn maps_with_outside(set: &[Cell], cells: u32, values: u32, outside: u32) -> Vec<ValueMap> {
    let mut maps = vec![ValueMap::new()];
    for c in (0..cells).map(Cell) {
        let top = if set.contains(&c) { values } else { outside };
        maps = maps
            .into_iter()
            .flat_map(|m| {
                (0..=top).map(move |v| {
                    let mut m = m.clone();
                    m.set(c, Value(v));
                    m
                })
            })
            .collect();
    }
    maps
}

/// The effects `(c, wv[c])` of a write set in the set's order (the identity issue order).
pub fn effects_in_order(ws: &[Cell], wv: &ValueMap) -> Vec<(Cell, Value)> {
    ws.iter().map(|&c| (c, wv.get(c))).collect()
}

/// A record with the given data-flow fields; registries full, no tool, no effects reordering.
pub fn dataflow(agent: u32, rs: &[Cell], rv: &ValueMap, ws: &[Cell], wv: &ValueMap) -> OpRecord {
    OpRecord {
        agent: Agent(agent),
        read_set: rs.to_vec(),
        read_values: rv.clone(),
        read_registry: Registry::all(2),
        write_set: ws.to_vec(),
        write_values: wv.clone(),
        write_registry: Registry::all(2),
        io: effects_in_order(ws, wv),
        co: effects_in_order(ws, wv),
        ..OpRecord::default()
    }
}

/// How read values are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// As in the choice (skew: any value).
    Free,
    /// As the model without skew: memory at `read_time` (the latest non-aborted write to each
    /// read cell among records `0..read_time`, NULL if none).
    Memory,
}

/// Visits every history of at most `max` records, record k being any choice with any
/// `read_time ∈ 0..=k` and `write_time = k + 1`. Returns the number of histories visited.
pub fn enumerate(
    choices: &[OpRecord],
    max: usize,
    reads: Reads,
    visit: &mut impl FnMut(&History),
) -> u64 {
    let mut h = History::from_records(Vec::with_capacity(max));
    h.names = Names::synthetic(2, 2, 2, 2);
    let mut count = 0;
    extend(&mut h, choices, max, reads, visit, &mut count);
    count
}

/// [`enumerate`] with [`assert_agree`] as the visitor, on `threads` threads: thread t takes the
/// histories whose first record is choice i with i % threads == t (thread 0 also the empty one).
pub fn agree_on_all(choices: &[OpRecord], max: usize, reads: Reads, threads: usize) -> u64 {
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut h = History::from_records(Vec::with_capacity(max));
                    h.names = Names::synthetic(2, 2, 2, 2);
                    let mut count = 0;
                    let first = |i: usize| i % threads == t;
                    let visit = &mut |h: &History| assert_agree(h);
                    if t == 0 {
                        visit(&h);
                        count += 1;
                    }
                    if max > 0 {
                        extend_filtered(&mut h, choices, max, reads, visit, &mut count, &first);
                    }
                    count
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    })
}

fn extend(
    h: &mut History,
    choices: &[OpRecord],
    max: usize,
    reads: Reads,
    visit: &mut impl FnMut(&History),
    count: &mut u64,
) {
    visit(h);
    *count += 1;
    if h.records.len() < max {
        extend_filtered(h, choices, max, reads, visit, count, &|_| true);
    }
}

/// Every one-record extension of `h` by a choice whose index passes `keep`, and below.
fn extend_filtered(
    h: &mut History,
    choices: &[OpRecord],
    max: usize,
    reads: Reads,
    visit: &mut impl FnMut(&History),
    count: &mut u64,
    keep: &dyn Fn(usize) -> bool,
) {
    let k = h.records.len();
    for (_, choice) in choices.iter().enumerate().filter(|&(i, _)| keep(i)) {
        for read_time in 0..=k as u64 {
            let mut r = choice.clone();
            r.read_time = read_time;
            r.write_time = k as u64 + 1;
            if reads == Reads::Memory {
                r.read_values = memory(&h.records[..read_time as usize], &r.read_set);
            }
            h.records.push(r);
            extend(h, choices, max, reads, visit, count);
            h.records.pop();
        }
    }
}

/// The memory after applying the non-aborted writes of `log`, restricted to `cells`.
pub fn memory(log: &[OpRecord], cells: &[Cell]) -> ValueMap {
    let mut m = ValueMap::new();
    for r in log.iter().filter(|r| !r.aborted) {
        for &c in r.write_set.iter().filter(|c| cells.contains(c)) {
            m.set(c, r.write_values.get(c));
        }
    }
    m
}

/// The initial states every agreement test runs each history from: empty (as the simulator's
/// and the checker's histories start), and both cells set to different values (a trace that
/// starts in the middle of a system's life, whose reader supplies its state). Cells are
/// independent in every detector that reads the initial state, so a cell set beside a cell
/// left NULL adds nothing to these two.
pub fn initial_states() -> [ValueMap; 2] {
    [
        ValueMap::new(),
        ValueMap::from_pairs([(Cell(0), Value(2)), (Cell(1), Value(1))]),
    ]
}

/// Asserts spec == fast (with default tuning and with both A1 paths forced) on `h`, and that
/// the stream detector gives the spec's counts and kept prefixes, keeping everything or only
/// the tightest window the history allows, keeping one witness per anomaly or all; from each
/// of [`initial_states`].
pub fn assert_agree(h: &History) {
    assert_eq!(h.validate(), Ok(()), "not well-formed: {h:?}");
    for initial in &initial_states() {
        let expected = spec::detect_from(h, initial);
        for scan_max in [0, usize::MAX] {
            let got = fast::detect_from(h, initial, fast::Tuning { scan_max });
            assert_eq!(
                got, expected,
                "spec != fast (scan_max {scan_max}, from {initial:?}) on {h:?}"
            );
        }
        for max in [1, usize::MAX] {
            let want = Summary::of_report(&expected, h.len() as u64, max);
            for limits in [Limits::unbounded(max), tight_limits(h, max)] {
                let got = stream_summary_from(h, initial, limits);
                assert_eq!(
                    got, want,
                    "stream != spec ({limits:?}, from {initial:?}) on {h:?}"
                );
            }
        }
    }
}

/// The stream detector's summary of `h` from an empty start ([`stream_summary_from`]).
pub fn stream_summary(h: &History, limits: Limits) -> Summary {
    stream_summary_from(h, &ValueMap::new(), limits)
}

/// The stream detector's summary of `h` from state `initial` (residue on, agents kept). A
/// keyed detector ([`Stream::keyed`]) is run beside it, each value given a key: odd ids their
/// own literal name, even ones an id of some other table; its summary, read back through its
/// witness keys, must be the same.
pub fn stream_summary_from(h: &History, initial: &ValueMap, limits: Limits) -> Summary {
    let opts = Options {
        limits,
        residue: true,
        keep_agents: true,
    };
    let mut s = Stream::new(opts);
    let mut keyed = Stream::keyed(opts);
    let most = (h.records.iter().flat_map(values_of))
        .chain(initial.entries().iter().map(|e| e.1 .0))
        .max()
        .unwrap_or(0) as usize;
    let keys = &test_keys(most)[..most];
    for &(c, v) in initial.entries() {
        s.start_in(c, ValueKey::id(v));
        keyed.start_in(c, ValueKey::listed(keys, v.0));
    }
    for (k, r) in h.records.iter().enumerate() {
        s.push(r, k as u64 + 1, &mut ())
            .expect("a valid history streams");
        keyed
            .push_keyed(r, keys, k as u64 + 1, &mut ())
            .expect("a valid history streams keyed");
        // The bound a compactor trusts: never below what a compaction would have to keep.
        for d in [&s, &keyed] {
            let mut live = 0;
            d.live_values(&mut |_| live += 1);
            assert!(
                d.held_values() >= live,
                "record {k}: {} < {live}",
                d.held_values()
            );
        }
    }
    keyed.close(&mut ());
    let unkey = |v: Value| match keyed.witness_key(v) {
        k if k.is_null() => Value::NULL,
        k => match (k.as_id(), k.as_literal()) {
            (Some(id), _) => Value((id.0 - 1) / 3),
            (None, Some(name)) => Value(name[1..].parse().expect("v and a number")),
            (None, None) => unreachable!("a key is an id or a literal"),
        },
    };
    let mut by_key = keyed.summary().clone();
    by_key.l1_struct.kept.iter_mut().for_each(|w| {
        (w.read, w.expected) = (unkey(w.read), unkey(w.expected));
    });
    by_key
        .a3_residue
        .kept
        .iter_mut()
        .for_each(|w| w.value = unkey(w.value));
    by_key.a4.kept.iter_mut().for_each(|w| {
        (w.first.value, w.second.value) = (unkey(w.first.value), unkey(w.second.value));
    });
    let plain = s.finish(&mut ());
    assert_eq!(by_key, plain, "keyed != plain ({limits:?}) on {h:?}");
    plain
}

/// The keys `stream_summary` gives value ids `1..=n` (at `id − 1`): odd ids their literal
/// names `v1`, `v3`, …; even ids `3·id + 1` of some table of long names.
fn test_keys(n: usize) -> std::sync::Arc<Vec<ValueKey>> {
    use std::sync::{Arc, Mutex, OnceLock};
    static KEYS: OnceLock<Mutex<Arc<Vec<ValueKey>>>> = OnceLock::new();
    let cell = KEYS.get_or_init(Mutex::default);
    let mut keys = cell.lock().expect("not poisoned");
    if keys.len() < n {
        let key = |v: u32| match v % 2 {
            1 => ValueKey::literal(&format!("v{v}")).expect("short"),
            _ => ValueKey::id(Value(3 * v + 1)),
        };
        *keys = Arc::new((1..=(2 * n).max(64) as u32).map(key).collect());
    }
    Arc::clone(&keys)
}

/// Every value id a record names.
fn values_of(r: &OpRecord) -> Vec<u32> {
    let maps = [&r.read_values, &r.write_values];
    let in_maps = maps
        .into_iter()
        .flat_map(|m| m.entries().iter().map(|e| e.1 .0));
    let in_effects = r.io.iter().chain(&r.co).map(|e| e.1 .0);
    in_maps.chain(in_effects).collect()
}

/// The smallest window `h` admits (its longest read-to-commit window) and no cap.
pub fn tight_limits(h: &History, max_witnesses: usize) -> Limits {
    let window_max = h
        .records
        .iter()
        .filter(|r| !r.read_set.is_empty())
        .map(|r| r.write_time - r.read_time)
        .max()
        .unwrap_or(0);
    Limits {
        max_witnesses,
        window_max,
        live_max: usize::MAX,
    }
}

/// Every registry over tools t1, t2 where each tool is absent, at version 0 or at version 1.
pub fn registries() -> Vec<Registry> {
    let entry = |t: u32, state: u32| {
        (state > 0).then(|| ToolEntry {
            tool: Tool(t),
            version: state - 1,
        })
    };
    (0..9)
        .map(|m| Registry::from_entries([entry(0, m % 3), entry(1, m / 3)].into_iter().flatten()))
        .collect()
}

/// One random record's raw choices; [`assemble`] turns a vector of them into a history.
#[derive(Clone, Debug)]
pub struct RawRecord {
    pub agent: u32,
    pub read_mask: u8,
    pub read_values: [u32; 4],
    pub write_mask: u8,
    pub write_values: [u32; 4],
    pub registries: (u8, u8, u8),
    pub co_shape: u8,
    pub aborted: bool,
    pub preds_mask: u64,
    pub time_gap: u64,
    pub read_lag: u64,
}

/// A strategy for raw records over 3 agents, 4 cells, {NULL, v1, v2, v3}, 2 tools.
pub fn arb_raw() -> impl proptest::strategy::Strategy<Value = RawRecord> {
    use proptest::prelude::*;
    let data = (
        0u32..3,
        any::<u8>(),
        [0u32..4, 0u32..4, 0u32..4, 0u32..4],
        any::<u8>(),
    );
    let values = [0u32..4, 0u32..4, 0u32..4, 0u32..4];
    let meta = (
        (0u8..9, 0u8..3, 0u8..9),
        0u8..5,
        prop::bool::weighted(0.2),
        any::<u64>(),
        any::<u64>(),
        0u64..3,
        0u64..12,
    );
    (data, values, meta).prop_map(|((agent, rm, rv, wm), wv, meta)| {
        let (registries, co_shape, aborted, p1, p2, time_gap, read_lag) = meta;
        RawRecord {
            agent,
            read_mask: rm & 0xf,
            read_values: rv,
            write_mask: wm & 0xf,
            write_values: wv,
            registries,
            co_shape,
            aborted,
            preds_mask: p1 & p2 & p2.rotate_left(17),
            time_gap,
            read_lag,
        }
    })
}

/// Builds a well-formed history: write times non-decreasing (gaps 0..=2, so ties occur), read
/// times up to 11 before, preds among the 64 previous records, registries with versions.
pub fn assemble(raw: &[RawRecord]) -> History {
    let regs = registries();
    let mut write_time = 0;
    let mut records = Vec::with_capacity(raw.len());
    for (k, x) in raw.iter().enumerate() {
        let cells = |m: u8| {
            (0..4)
                .filter(|c| m & (1 << c) != 0)
                .map(Cell)
                .collect::<Vec<_>>()
        };
        let map = |vals: [u32; 4]| {
            ValueMap::from_pairs((0..4).map(|c| (Cell(c), Value(vals[c as usize]))))
        };
        write_time += x.time_gap;
        let (rs, ws) = (cells(x.read_mask), cells(x.write_mask));
        let mut r = dataflow(x.agent, &rs, &map(x.read_values), &ws, &map(x.write_values));
        r.read_registry = regs[x.registries.0 as usize].clone();
        r.planned_tool = (x.registries.1 > 0).then(|| Tool(u32::from(x.registries.1) - 1));
        r.write_registry = regs[x.registries.2 as usize].clone();
        r.co = co_of(&r.io, x.co_shape);
        r.aborted = x.aborted;
        r.write_time = write_time;
        r.read_time = write_time.saturating_sub(x.read_lag);
        r.preds = (k.saturating_sub(64)..k)
            .filter(|p| x.preds_mask & (1 << (k - 1 - p)) != 0)
            .map(|p| p as u32)
            .collect();
        records.push(r);
    }
    let mut h = History::from_records(records);
    h.names = Names::synthetic(3, 4, 2, 3);
    h
}

/// A completion order derived from the issue order: same, reversed, rotated, one lost, or one
/// duplicated (the last two are not permutations).
fn co_of(io: &[(Cell, Value)], shape: u8) -> Vec<(Cell, Value)> {
    let mut co = io.to_vec();
    match shape {
        1 => co.reverse(),
        2 if !co.is_empty() => co.rotate_left(1),
        3 => {
            co.pop();
        }
        4 if !co.is_empty() => co[0] = co[co.len() - 1],
        _ => {}
    }
    co
}

// The choice lists of the enumeration families (`detect_enumeration.rs`), shared with the
// reader's tests (`jsonl_fast.rs`).

/// SPEC §1's model with canonical writes: 2 agents, 2 cells, 2 values (128 choices).
pub fn model_choices() -> Vec<OpRecord> {
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
    choices
}

/// Free reads, writes free outside the write set, aborted or not (1600 choices).
pub fn skewed_choices() -> Vec<OpRecord> {
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
    choices
}

/// One cell, free reads, aborted or not (64 choices).
pub fn one_cell_choices() -> Vec<OpRecord> {
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
    choices
}

/// Every (read registry, planned tool, write registry), aborted or not (486 choices).
pub fn registry_choices() -> Vec<OpRecord> {
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
    choices
}

/// Every sequence of length ≤ `max` over `(c, v)` pairs, 2 cells × {NULL, v1, v2}.
pub fn sequences(max: usize) -> Vec<Vec<(Cell, Value)>> {
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

/// Every issue order of every write and completion sequence of length ≤ 3 (12,950).
pub fn effects_choices() -> Vec<OpRecord> {
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
    choices
}

/// n records; record k writes v1 to c1 and reads c1 (v1 from record 1 on, read at k − 1);
/// bit `(k, p)` of `preds_mask` puts p < k in preds(k); bit k of `aborted_mask` aborts k.
pub fn provenance_history(n: usize, preds_mask: u64, aborted_mask: u32) -> History {
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
    History::from_records(records)
}
