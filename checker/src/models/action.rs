//! Actions of SPEC §1 as small `Copy` values, and their enumeration in a fixed order.
//!
//! Both models (the packed paper model and the runtime-composed model) enumerate the very
//! same action list for equivalent states, so an action-index path (`0/3/1`) replays in
//! either. Every choice of an existential is its own action, as TLC counts successors:
//! `StartRead(a)` per (rs, pt, rv), `CompleteWrite(a)` per (ws, wv, io, co).
//! Enumeration says nothing about which actions a runtime lets commit: that is `next_state`.

use crate::config::{Bounds, Extensions};

/// A sequence of at most 8 small ids (cells), 4 bits each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seq {
    pub len: u8,
    pub items: u32,
}

impl Seq {
    /// The `k`-th element.
    pub fn get(self, k: usize) -> u32 {
        assert!(k < self.len as usize, "Seq index out of range");
        (self.items >> (4 * k)) & 0xF
    }

    /// The elements in order.
    pub fn iter(self) -> impl Iterator<Item = u32> {
        (0..self.len as usize).map(move |k| self.get(k))
    }

    /// Builds a sequence from ids below 16.
    pub fn from_slice(xs: &[u32]) -> Seq {
        assert!(xs.len() <= 8, "Seq holds at most 8 items");
        let mut s = Seq::default();
        for (k, &x) in xs.iter().enumerate() {
            assert!(x < 16, "Seq items are 4-bit");
            s.items |= x << (4 * k);
        }
        s.len = xs.len() as u8;
        s
    }
}

/// One transition of the model, with every existential choice fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `StartRead(a)`: `read_set` mask, `tool` 0 = NULL else t+1, `read_values` 4 bits/cell.
    StartRead {
        agent: u8,
        read_set: u8,
        tool: u8,
        read_values: u32,
    },
    /// `CompleteWrite(a)`: `io` and `co` are orderings of the write set (cells), `values`
    /// the total map `wv`, 4 bits per cell.
    CompleteWrite {
        agent: u8,
        io: Seq,
        co: Seq,
        values: u32,
    },
    /// `RemoveTool(t)`.
    RemoveTool(u8),
    /// `ChangeSignature(t)` (extension 4).
    ChangeSignature(u8),
    /// `Retract(i)` (extension 3).
    Retract(u8),
}

/// Reads the value of `cell` from a 4-bit-per-cell map.
pub fn cell_value(map: u32, cell: u32) -> u32 {
    (map >> (4 * cell)) & 0xF
}

/// The mask of a sequence's elements.
pub fn seq_mask(s: Seq) -> u32 {
    s.iter().fold(0, |m, c| m | (1 << c))
}

/// What enumeration needs to know about a state.
pub struct View<'a> {
    pub log_len: u32,
    /// Per agent: has an op in flight.
    pub pending: &'a [bool],
    /// Tools present in the registry, ascending.
    pub registry: &'a [u32],
    /// Tools whose signature may still change (extension 4), ascending.
    pub changeable: &'a [u32],
    /// Memory, 4 bits per cell.
    pub memory: u32,
    /// Per agent: the read set of its pending op (for the all-writers restriction).
    pub pending_reads: &'a [u32],
    /// Log indices a `Retract` may target (live records), ascending.
    pub retractable: &'a [u32],
}

/// Choices precomputed from the bounds: permutations and write-value maps per write set.
#[derive(Clone, Debug)]
pub struct Choices {
    pub bounds: Bounds,
    pub ext: Extensions,
    /// `perms[mask]`: every ordering of the cells in `mask`.
    perms: Vec<Vec<Seq>>,
    /// `write_maps[mask]`: every allowed total map `wv` for write set `mask`.
    write_maps: Vec<Vec<u32>>,
}

impl Choices {
    /// Precomputes the per-write-set choices.
    pub fn new(bounds: Bounds, ext: Extensions) -> Choices {
        let c = bounds.cells;
        let masks = 1u32 << c;
        let perms = (0..masks).map(|m| permutations(m, c)).collect();
        let write_maps = (0..masks)
            .map(|m| {
                let free = if ext.canonical_writes { m } else { masks - 1 };
                maps_over(free, c, bounds.values)
            })
            .collect();
        Choices {
            bounds,
            ext,
            perms,
            write_maps,
        }
    }

    /// Appends every enabled action of a state, in the canonical order.
    pub fn enumerate(&self, v: &View<'_>, out: &mut Vec<Action>) {
        let b = &self.bounds;
        let room = v.log_len < b.max_ops;
        for a in 0..b.agents {
            if !room {
                break;
            }
            if v.pending[a as usize] {
                self.writes(a, v.pending_reads[a as usize], out);
            } else {
                self.reads(a, v, out);
            }
        }
        for &t in v.registry {
            out.push(Action::RemoveTool(t as u8));
        }
        if self.ext.tool_versions {
            for &t in v.changeable {
                out.push(Action::ChangeSignature(t as u8));
            }
        }
        if self.ext.retraction {
            for &i in v.retractable {
                out.push(Action::Retract(i as u8));
            }
        }
    }

    fn reads(&self, a: u32, v: &View<'_>, out: &mut Vec<Action>) {
        let b = &self.bounds;
        let skew_mask = (0..b.cells)
            .filter(|&c| b.skewed(c))
            .fold(0, |m, c| m | 1 << c);
        let rvs = maps_over(skew_mask, b.cells, b.values);
        let keep = (0..b.cells)
            .filter(|c| skew_mask & (1 << c) == 0)
            .fold(0, |m, c| m | (0xF << (4 * c)));
        for rs in 0..(1u32 << b.cells) {
            for tool in std::iter::once(0).chain(v.registry.iter().map(|t| t + 1)) {
                for &skewed in &rvs {
                    out.push(Action::StartRead {
                        agent: a as u8,
                        read_set: rs as u8,
                        tool: tool as u8,
                        read_values: (v.memory & keep) | skewed,
                    });
                }
            }
        }
    }

    fn writes(&self, a: u32, read_set: u32, out: &mut Vec<Action>) {
        for ws in 0..(1u32 << self.bounds.cells) {
            if self.ext.all_writers && read_set & !ws != 0 {
                continue;
            }
            for &values in &self.write_maps[ws as usize] {
                for &io in &self.perms[ws as usize] {
                    for &co in &self.perms[ws as usize] {
                        out.push(Action::CompleteWrite {
                            agent: a as u8,
                            io,
                            co,
                            values,
                        });
                    }
                }
            }
        }
    }
}

/// Every total map that is free (any of NULL..=values) on `free` and NULL elsewhere.
fn maps_over(free: u32, cells: u32, values: u32) -> Vec<u32> {
    let mut maps = vec![0u32];
    for c in 0..cells {
        if free & (1 << c) == 0 {
            continue;
        }
        maps = maps
            .iter()
            .flat_map(|&m| (0..=values).map(move |v| m | (v << (4 * c))))
            .collect();
    }
    maps
}

/// Every ordering of the cells in `mask`, in lexicographic order.
fn permutations(mask: u32, cells: u32) -> Vec<Seq> {
    let items: Vec<u32> = (0..cells).filter(|c| mask & (1 << c) != 0).collect();
    let mut out = Vec::new();
    permute(&items, &mut Vec::new(), &mut out);
    out
}

fn permute(rest: &[u32], prefix: &mut Vec<u32>, out: &mut Vec<Seq>) {
    if rest.is_empty() {
        out.push(Seq::from_slice(prefix));
        return;
    }
    for k in 0..rest.len() {
        let mut r = rest.to_vec();
        let x = r.remove(k);
        prefix.push(x);
        permute(&r, prefix, out);
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_and_map_counts() {
        assert_eq!(permutations(0b111, 3).len(), 6);
        assert_eq!(permutations(0, 3), vec![Seq::default()]);
        assert_eq!(maps_over(0b11, 2, 2).len(), 9);
        assert_eq!(maps_over(0b10, 2, 2), vec![0, 0x10, 0x20]);
    }

    /// 1 agent, 2 cells, idle: 4 read sets × (NULL + 2 tools) StartReads, 2 RemoveTools.
    #[test]
    fn enumerates_reads_and_removals() {
        let ch = Choices::new(Bounds::paper(1, 2, 1), Extensions::default());
        let mut out = Vec::new();
        let view = View {
            log_len: 0,
            pending: &[false],
            registry: &[0, 1],
            changeable: &[],
            memory: 0,
            pending_reads: &[0],
            retractable: &[],
        };
        ch.enumerate(&view, &mut out);
        assert_eq!(out.len(), 4 * 3 + 2);
        assert_eq!(out[13], Action::RemoveTool(1));
    }

    /// Pending, 2 cells, paper: Σ over ws of 9 maps × |ws|!² = 9 × (1 + 1 + 1 + 4) = 63.
    #[test]
    fn enumerates_free_and_canonical_writes() {
        let view = View {
            log_len: 0,
            pending: &[true],
            registry: &[],
            changeable: &[],
            memory: 0,
            pending_reads: &[0b01],
            retractable: &[],
        };
        let mut out = Vec::new();
        Choices::new(Bounds::paper(1, 2, 1), Extensions::default()).enumerate(&view, &mut out);
        assert_eq!(out.len(), 63);
        let ext = Extensions {
            canonical_writes: true,
            ..Extensions::default()
        };
        out.clear();
        Choices::new(Bounds::paper(1, 2, 1), ext).enumerate(&view, &mut out);
        assert_eq!(out.len(), 1 + 3 + 3 + 9 * 4);
        let ext = Extensions {
            all_writers: true,
            ..ext
        };
        out.clear();
        Choices::new(Bounds::paper(1, 2, 1), ext).enumerate(&view, &mut out);
        assert_eq!(out.len(), 3 + 9 * 4);
    }
}
