//! The abstraction function α: the [`Summary`] of a concrete store, computed directly from
//! its log and in-flight ops (no replay, no incremental update).
//!
//! This is the second, independent computation of every summary field: the incremental one
//! in [`super::summary`] follows transitions, this one reads the definitions off the log
//! (A1's window as `read_time < write_time < write_time`, `L1_struct`'s latest writer, a
//! pred's `aborted` flag …). The equivalence tests walk a concrete state space and require
//! `step(α(s)) = α(step(s))` and `verdict(α(s)) = spec detectors(s)`; a pass says the two
//! agree on the states walked, at those bounds, nothing more.

use super::props::{Prop, Props};
use super::summary::{nibbles, Entry, Need, Node, PendingSummary, Summary};
use crate::detect::spec;
use crate::names::{Agent, Cell};
use crate::record::{OpRecord, ValueMap};
use crate::runtime::{Pending, Store};

/// A cell list as a mask.
pub fn cell_mask(cells: &[Cell]) -> u8 {
    cells.iter().fold(0, |m, c| m | 1 << c.0)
}

/// A value map as 4 bits per cell.
pub fn packed(m: &ValueMap) -> u32 {
    m.entries()
        .iter()
        .fold(0, |acc, &(c, v)| acc | (v.0 << (4 * c.0)))
}

fn live_writers<'a>(log: &'a [OpRecord], c: Cell) -> impl Iterator<Item = usize> + 'a {
    (0..log.len()).filter(move |&k| !log[k].aborted && log[k].writes(c))
}

/// The summary of `store` (agents `0..agents`), tagged with log indices.
pub fn summarize(need: &Need, store: &Store, agents: usize) -> Summary<u32> {
    let mut s = Summary::new(agents);
    if need.retraction {
        with_nodes(need, store, &mut s);
    } else {
        with_flags(need, store, &mut s);
    }
    for a in 0..agents {
        s.pending[a] = store
            .inflight()
            .get(&Agent(a as u32))
            .map(|p| pending(need, store, &s, p));
    }
    s
}

/// The fields every pending op has in both shapes.
fn pending(need: &Need, store: &Store, s: &Summary<u32>, p: &Pending) -> PendingSummary {
    let log = store.log();
    let rs = if need.read_sets() {
        cell_mask(&p.request.read_set)
    } else {
        0
    };
    let rv = packed(&p.snapshot.read_values);
    let read_time = p.snapshot.read_time as usize;
    let tool = p.request.planned_tool.filter(|_| need.tool_flags());
    let mut out = PendingSummary {
        rs,
        rv: if need.values() { rv & nibbles(rs) } else { 0 },
        tool: tool.map_or(0, |t| t.0 as u8 + 1),
        changed: tool.is_some_and(|t| store.registry().get(t) != p.snapshot.registry.get(t)),
        ..PendingSummary::default()
    };
    let read = &p.request.read_set;
    if !need.retraction {
        let after = || (read_time..log.len()).filter(|&j| !log[j].aborted);
        out.newer = need.newer && after().any(|j| read.iter().any(|&c| log[j].writes(c)));
        out.stale = need.watch.contains(Prop::A1)
            && after().any(|j| {
                read.iter().any(|&c| {
                    log[j].writes(c) && log[j].write_values.get(c) != p.snapshot.read_values.get(c)
                })
            });
        let (l1, residue) = read_status(log, read, &p.snapshot.read_values, read_time);
        out.l1_bad = need.watch.contains(Prop::L1Struct) && l1;
        out.residue_bad = need.watch.contains(Prop::A3Residue) && residue;
        return out;
    }
    for &c in read {
        if need.stack() {
            let d = live_writers(log, c).filter(|&k| k < read_time).count() as u32;
            out.depth |= d << (4 * c.0);
        }
    }
    if need.preds() {
        (out.preds, out.dead_pred) = preds_of(log, s, &p.snapshot.preds);
    }
    out
}

/// Whether a read at `read_time` of `read` with values `rv` breaks `L1_struct` / is residue.
fn read_status(log: &[OpRecord], read: &[Cell], rv: &ValueMap, read_time: usize) -> (bool, bool) {
    let (mut l1, mut residue) = (false, false);
    for &c in read {
        let v = rv.get(c);
        let below: Vec<usize> = live_writers(log, c).filter(|&k| k < read_time).collect();
        let latest = below.last().map_or(0, |&k| log[k].write_values.get(c).0);
        l1 |= v.0 != latest;
        residue |= !v.is_null() && !below.iter().any(|&k| log[k].write_values.get(c) == v);
    }
    (l1, residue)
}

/// Live preds as node positions, and whether some pred is aborted.
fn preds_of(log: &[OpRecord], s: &Summary<u32>, preds: &[u32]) -> (u16, bool) {
    let mut mask = 0u16;
    let mut dead = false;
    for &p in preds {
        if log[p as usize].aborted {
            dead = true;
        } else {
            let pos = s.position(&p).expect("a live pred is a kept writer");
            mask |= 1 << pos;
        }
    }
    (mask, dead)
}

fn with_flags(need: &Need, store: &Store, s: &mut Summary<u32>) {
    let log = store.log();
    let w = need.watch;
    let found = Props::default()
        .with_if(Prop::A1, !spec::a1(log).is_empty())
        .with_if(Prop::A2, !spec::a2(log).is_empty())
        .with_if(Prop::A3, !spec::a3(log).is_empty())
        .with_if(Prop::A3Residue, !spec::a3_residue(log).is_empty())
        .with_if(Prop::A6, !spec::a6(log).is_empty())
        .with_if(Prop::L1Struct, !spec::l1_struct(log).is_empty());
    s.sticky = found.intersect(w);
    for c in 0..8u32 {
        let cell = Cell(c);
        if need.values() {
            let latest = live_writers(log, cell).last();
            let v = latest.map_or(0, |k| log[k].write_values.get(cell).0);
            s.latest |= v << (4 * c);
        }
        if w.contains(Prop::A3Residue) && need.skew {
            for k in live_writers(log, cell) {
                s.produced |= 1 << (8 * c + log[k].write_values.get(cell).0);
            }
        }
    }
}

/// The A1 writers of live record `i`: live records of other agents that wrote a cell `i`
/// read, with another value, strictly inside `i`'s window.
fn a1_writers(log: &[OpRecord], i: usize) -> Vec<usize> {
    let ri = &log[i];
    (0..log.len())
        .filter(|&j| {
            let rj = &log[j];
            j != i
                && !rj.aborted
                && rj.agent != ri.agent
                && ri.read_time < rj.write_time
                && rj.write_time < ri.write_time
                && ri
                    .read_set
                    .iter()
                    .any(|&c| rj.writes(c) && ri.read_values.get(c) != rj.write_values.get(c))
        })
        .collect()
}

fn with_nodes(need: &Need, store: &Store, s: &mut Summary<u32>) {
    let log = store.log();
    let w = need.watch;
    let one = |r: &OpRecord| std::slice::from_ref(r).to_vec();
    let mut kept = Vec::new();
    for (i, r) in log.iter().enumerate().filter(|(_, r)| !r.aborted) {
        let a1 = w.contains(Prop::A1) && !a1_writers(log, i).is_empty();
        let a2 = w.contains(Prop::A2) && !spec::a2(&one(r)).is_empty();
        let a6 = w.contains(Prop::A6) && !spec::a6(&one(r)).is_empty();
        let a3 = w.contains(Prop::A3) && !r.preds.is_empty();
        let writer = need.stack() && !r.write_set.is_empty();
        if writer || a1 || a2 || a6 || a3 {
            kept.push((i, a2, a6));
        }
    }
    s.nodes = kept
        .iter()
        .map(|&(i, a2, a6)| {
            let r = &log[i];
            let ws = if need.stack() {
                cell_mask(&r.write_set)
            } else {
                0
            };
            Node {
                tag: i as u32,
                ws,
                wv: if need.values() {
                    packed(&r.write_values) & nibbles(ws)
                } else {
                    0
                },
                preds: 0,
                dead_pred: false,
                a1: 0,
                a2,
                a6,
            }
        })
        .collect();
    // Masks point at positions, known only now.
    for k in 0..s.nodes.len() {
        let i = s.nodes[k].tag as usize;
        if need.preds() {
            (s.nodes[k].preds, s.nodes[k].dead_pred) = preds_of(log, s, &log[i].preds);
        }
        if w.contains(Prop::A1) {
            for j in a1_writers(log, i) {
                let pos = s
                    .position(&(j as u32))
                    .expect("an A1 writer is a kept writer");
                s.nodes[k].a1 |= 1 << pos;
            }
        }
    }
    if need.entries() {
        entries(need, log, s);
    }
}

fn entries(need: &Need, log: &[OpRecord], s: &mut Summary<u32>) {
    let mut found = Props::default();
    for r in log {
        for &c in &r.read_set {
            let v = r.read_values.get(c);
            let d = live_writers(log, c)
                .filter(|&k| k < r.read_time as usize)
                .count();
            if d == 0 {
                found = found
                    .with_if(Prop::L1Struct, !v.is_null())
                    .with_if(Prop::A3Residue, !v.is_null());
            } else {
                s.entries.push(Entry {
                    cell: c.0 as u8,
                    value: v.0 as u8,
                    depth: d as u8,
                });
            }
        }
    }
    s.sticky = found.intersect(need.watch);
    s.entries.sort_unstable();
    s.entries.dedup();
}
