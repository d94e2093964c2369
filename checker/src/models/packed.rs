//! The compact state encoding of the paper model: one `u128` per record or pending op.
//!
//! A state is `[header, inflight[a1..], log[0..]]`. Field widths are derived from the bounds
//! (e.g. values need ⌈log2(V+1)⌉ bits), so a 1-cell record takes about 30 bits. The encoding
//! is injective on the states of SPEC §1 (a test round-trips it), which is what makes state
//! counts exact up to fingerprint collisions. `write_time` is not stored: in the paper model it
//! is always the record's index + 1. Decoding to [`OpRecord`]s is for properties and traces.

use crate::config::Bounds;
use crate::models::action::{cell_value, Seq};
use agentsim_models::names::{Agent, Cell, Tool, Value};
use agentsim_models::record::{OpRecord, Registry, ToolEntry, ValueMap};

/// A packed state of the paper model: `[header, inflight[0..A], log[0..len]]`.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct PackedState(pub Box<[u128]>);

/// One record (or pending op: write fields zero), unpacked into plain integers.
/// Value maps use 4 bits per cell, sets are bit masks, `tool` is 0 for NULL else t+1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rec {
    pub agent: u32,
    pub read_set: u32,
    pub read_values: u32,
    pub read_registry: u32,
    pub tool: u32,
    pub read_time: u32,
    pub write_set: u32,
    pub write_values: u32,
    pub write_registry: u32,
    pub write_time: u32,
    pub io: Seq,
    pub co: Seq,
}

/// Bit widths of every field, from the bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    cells: u32,
    tools: u32,
    agent_bits: u32,
    value_bits: u32,
    tool_bits: u32,
    time_bits: u32,
    cell_bits: u32,
}

fn bits_for(max: u32) -> u32 {
    32 - max.leading_zeros()
}

struct Writer {
    word: u128,
    pos: u32,
}

impl Writer {
    fn put(&mut self, value: u32, bits: u32) {
        assert!(
            bits == 32 || value < (1 << bits),
            "field overflows its width"
        );
        self.word |= u128::from(value) << self.pos;
        self.pos += bits;
        assert!(self.pos <= 128, "record exceeds 128 bits");
    }
}

struct Reader {
    word: u128,
}

impl Reader {
    fn take(&mut self, bits: u32) -> u32 {
        let v = (self.word & ((1u128 << bits) - 1)) as u32;
        self.word >>= bits;
        v
    }
}

impl Layout {
    /// The layout for validated bounds.
    pub fn new(b: &Bounds) -> Layout {
        let l = Layout {
            cells: b.cells,
            tools: b.tools,
            agent_bits: bits_for(b.agents - 1),
            value_bits: bits_for(b.values),
            tool_bits: bits_for(b.tools),
            time_bits: bits_for(b.max_ops),
            cell_bits: bits_for(b.cells - 1),
        };
        assert!(
            l.record_bits() <= 128,
            "bounds too large for the packed encoding"
        );
        l
    }

    fn map_bits(&self) -> u32 {
        self.cells * self.value_bits
    }

    /// Bits of the read part shared by a pending op and a record.
    fn read_bits(&self) -> u32 {
        self.cells + self.map_bits() + self.tools + self.tool_bits + self.time_bits
    }

    /// Bits of a full record.
    pub fn record_bits(&self) -> u32 {
        let seq = self.cells * self.cell_bits;
        self.read_bits() + self.agent_bits + self.cells + self.map_bits() + self.tools + 2 * seq
    }

    fn put_map(&self, w: &mut Writer, map: u32) {
        for c in 0..self.cells {
            w.put(cell_value(map, c), self.value_bits);
        }
    }

    fn take_map(&self, r: &mut Reader) -> u32 {
        (0..self.cells).fold(0, |m, c| m | (r.take(self.value_bits) << (4 * c)))
    }

    fn put_read(&self, w: &mut Writer, p: &Rec) {
        w.put(p.read_set, self.cells);
        self.put_map(w, p.read_values);
        w.put(p.read_registry, self.tools);
        w.put(p.tool, self.tool_bits);
        w.put(p.read_time, self.time_bits);
    }

    fn take_read(&self, r: &mut Reader, p: &mut Rec) {
        p.read_set = r.take(self.cells);
        p.read_values = self.take_map(r);
        p.read_registry = r.take(self.tools);
        p.tool = r.take(self.tool_bits);
        p.read_time = r.take(self.time_bits);
    }

    /// A pending op: bit 0 set, then the read part. 0 is the empty record.
    pub fn pack_pending(&self, p: &Rec) -> u128 {
        let mut w = Writer { word: 1, pos: 1 };
        self.put_read(&mut w, p);
        w.word
    }

    /// The pending op of an inflight word, `None` for the empty record.
    pub fn unpack_pending(&self, word: u128) -> Option<Rec> {
        if word == 0 {
            return None;
        }
        let mut r = Reader { word: word >> 1 };
        let mut p = Rec::default();
        self.take_read(&mut r, &mut p);
        Some(p)
    }

    fn put_seq(&self, w: &mut Writer, s: Seq) {
        for k in 0..self.cells as usize {
            w.put(
                if k < s.len as usize { s.get(k) } else { 0 },
                self.cell_bits,
            );
        }
    }

    fn take_seq(&self, r: &mut Reader, len: u32) -> Seq {
        let items: Vec<u32> = (0..self.cells).map(|_| r.take(self.cell_bits)).collect();
        Seq::from_slice(&items[..len as usize])
    }

    /// A committed record (its `write_time` is implied by its index).
    pub fn pack_record(&self, rec: &Rec) -> u128 {
        let mut w = Writer { word: 0, pos: 0 };
        self.put_read(&mut w, rec);
        w.put(rec.agent, self.agent_bits);
        w.put(rec.write_set, self.cells);
        self.put_map(&mut w, rec.write_values);
        w.put(rec.write_registry, self.tools);
        self.put_seq(&mut w, rec.io);
        self.put_seq(&mut w, rec.co);
        w.word
    }

    /// Unpacks the record at log index `index`.
    pub fn unpack_record(&self, word: u128, index: usize) -> Rec {
        let mut r = Reader { word };
        let mut rec = Rec::default();
        self.take_read(&mut r, &mut rec);
        rec.agent = r.take(self.agent_bits);
        rec.write_set = r.take(self.cells);
        rec.write_values = self.take_map(&mut r);
        rec.write_registry = r.take(self.tools);
        rec.write_time = index as u32 + 1;
        rec.io = self.take_seq(&mut r, rec.write_set.count_ones());
        rec.co = self.take_seq(&mut r, rec.write_set.count_ones());
        rec
    }

    /// Bits of a pending word (its presence bit, then the read part).
    pub fn pending_bits(&self) -> u32 {
        1 + self.read_bits()
    }

    /// Bits of a header word.
    pub fn header_bits(&self) -> u32 {
        self.time_bits + self.tools + self.map_bits()
    }

    /// The bit position and width of a record's agent field (for symmetry renaming).
    pub fn agent_field(&self) -> (u32, u32) {
        (self.read_bits(), self.agent_bits)
    }

    /// The header word: `len(log)`, registry mask, memory.
    pub fn pack_header(&self, len: u32, registry: u32, memory: u32) -> u128 {
        let mut w = Writer { word: 0, pos: 0 };
        w.put(len, self.time_bits);
        w.put(registry, self.tools);
        self.put_map(&mut w, memory);
        w.word
    }

    /// `(len(log), registry mask, memory)` of a header word.
    pub fn unpack_header(&self, word: u128) -> (u32, u32, u32) {
        let mut r = Reader { word };
        let len = r.take(self.time_bits);
        let registry = r.take(self.tools);
        (len, registry, self.take_map(&mut r))
    }
}

fn value_map(map: u32, cells: u32) -> ValueMap {
    ValueMap::from_pairs((0..cells).map(|c| (Cell(c), Value(cell_value(map, c)))))
}

fn registry(mask: u32, tools: u32) -> Registry {
    Registry::from_entries(
        (0..tools)
            .filter(|t| mask & (1 << t) != 0)
            .map(|t| ToolEntry {
                tool: Tool(t),
                version: 0,
            }),
    )
}

fn cells_of(mask: u32, cells: u32) -> Vec<Cell> {
    (0..cells)
        .filter(|c| mask & (1 << c) != 0)
        .map(Cell)
        .collect()
}

impl Rec {
    /// The [`OpRecord`] this record stands for (nothing aborted, no preds).
    pub fn to_record(&self, b: &Bounds) -> OpRecord {
        let effects = |s: Seq| -> Vec<(Cell, Value)> {
            s.iter()
                .map(|c| (Cell(c), Value(cell_value(self.write_values, c))))
                .collect()
        };
        OpRecord {
            agent: Agent(self.agent),
            read_set: cells_of(self.read_set, b.cells),
            read_values: value_map(self.read_values, b.cells),
            read_registry: registry(self.read_registry, b.tools),
            planned_tool: self.tool.checked_sub(1).map(Tool),
            read_time: u64::from(self.read_time),
            write_set: cells_of(self.write_set, b.cells),
            write_values: value_map(self.write_values, b.cells),
            write_registry: registry(self.write_registry, b.tools),
            write_time: u64::from(self.write_time),
            io: effects(self.io),
            co: effects(self.co),
            aborted: false,
            preds: Vec::new(),
            read_meta: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Rec {
        Rec {
            agent: 2,
            read_set: 0b10,
            read_values: 0x21,
            read_registry: 0b01,
            tool: 1,
            read_time: 3,
            write_set: 0b11,
            write_values: 0x12,
            write_registry: 0b10,
            write_time: 5,
            io: Seq::from_slice(&[1, 0]),
            co: Seq::from_slice(&[0, 1]),
        }
    }

    #[test]
    fn record_round_trips() {
        let b = Bounds::paper(3, 2, 6);
        let l = Layout::new(&b);
        let rec = sample();
        assert_eq!(l.unpack_record(l.pack_record(&rec), 4), rec);
        let mut p = rec;
        (p.agent, p.write_set, p.write_values, p.write_registry) = (0, 0, 0, 0);
        (p.write_time, p.io, p.co) = (0, Seq::default(), Seq::default());
        assert_eq!(l.unpack_pending(l.pack_pending(&p)), Some(p));
        assert_eq!(l.unpack_pending(0), None);
        assert_eq!(
            l.unpack_header(l.pack_header(4, 0b10, 0x20)),
            (4, 0b10, 0x20)
        );
    }

    #[test]
    fn decodes_to_an_op_record() {
        let r = sample().to_record(&Bounds::paper(3, 2, 6));
        assert_eq!(r.read_set, vec![Cell(1)]);
        assert_eq!(r.read_values.get(Cell(1)), Value(2));
        assert_eq!(r.planned_tool, Some(Tool(0)));
        assert_eq!(r.io, vec![(Cell(1), Value(1)), (Cell(0), Value(2))]);
        assert!(r.read_registry.contains(Tool(0)));
        assert!(!r.write_registry.contains(Tool(0)));
    }
}
