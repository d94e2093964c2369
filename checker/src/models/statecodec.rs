//! A bit-exact byte encoding of [`PackedState`]s, for frontiers kept packed or spilled.
//!
//! A `PackedState` is a boxed `[u128]` (16 bytes of pointer and length plus a heap block of
//! 16 bytes per word and the allocator's header), although its words use far fewer bits: at 3
//! agents, 1 cell, MaxOps 6 a header takes 7 bits, a pending op 11 and a record 17. The
//! encoding writes each word at its [`Layout`] width, an empty pending op as its single zero
//! presence bit, and the records the header's length says there are, padded to a byte per
//! state. It is the identity on states (round-trip tests), so it changes no count.

use crate::models::packed::{Layout, PackedState};

struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    fill: u32,
}

impl BitWriter<'_> {
    fn put(&mut self, mut word: u128, mut bits: u32) {
        assert!(
            bits == 128 || word >> bits == 0,
            "word wider than its field"
        );
        while bits > 0 {
            let take = bits.min(32);
            self.acc |= ((word as u64) & ((1u64 << take) - 1)) << self.fill;
            self.fill += take;
            (word, bits) = (word >> take, bits - take);
            while self.fill >= 8 {
                self.out.push(self.acc as u8);
                (self.acc, self.fill) = (self.acc >> 8, self.fill - 8);
            }
        }
    }

    fn finish(self) {
        if self.fill > 0 {
            self.out.push(self.acc as u8);
        }
    }
}

struct BitReader<'a> {
    bytes: &'a [u8],
    at: usize,
    acc: u64,
    fill: u32,
}

impl BitReader<'_> {
    fn take(&mut self, bits: u32) -> u128 {
        let mut word = 0u128;
        let mut got = 0;
        while got < bits {
            let take = (bits - got).min(32);
            while self.fill < take {
                self.acc |= u64::from(self.bytes[self.at]) << self.fill;
                (self.at, self.fill) = (self.at + 1, self.fill + 8);
            }
            word |= u128::from(self.acc & ((1u64 << take) - 1)) << got;
            (self.acc, self.fill) = (self.acc >> take, self.fill - take);
            got += take;
        }
        word
    }
}

/// Appends the encoding of `s` (a state with `agents` inflight slots) to `out`.
pub fn encode(layout: &Layout, agents: usize, s: &PackedState, out: &mut Vec<u8>) {
    let (len, _, _) = layout.unpack_header(s.0[0]);
    assert_eq!(
        s.0.len(),
        1 + agents + len as usize,
        "header length matches the log"
    );
    let mut w = BitWriter {
        out,
        acc: 0,
        fill: 0,
    };
    w.put(s.0[0], layout.header_bits());
    for &p in &s.0[1..1 + agents] {
        w.put(p & 1, 1);
        if p & 1 == 1 {
            w.put(p >> 1, layout.pending_bits() - 1);
        } else {
            assert_eq!(p, 0, "an absent pending op is the zero word");
        }
    }
    for &r in &s.0[1 + agents..] {
        w.put(r, layout.record_bits());
    }
    w.finish();
}

/// Decodes a state written by [`encode`] at the front of `bytes`; returns it and its size.
pub fn decode(layout: &Layout, agents: usize, bytes: &[u8]) -> (PackedState, usize) {
    let mut r = BitReader {
        bytes,
        at: 0,
        acc: 0,
        fill: 0,
    };
    let header = r.take(layout.header_bits());
    let (len, _, _) = layout.unpack_header(header);
    let mut words = Vec::with_capacity(1 + agents + len as usize);
    words.push(header);
    for _ in 0..agents {
        let present = r.take(1);
        words.push(if present == 1 {
            (r.take(layout.pending_bits() - 1) << 1) | 1
        } else {
            0
        });
    }
    for _ in 0..len {
        words.push(r.take(layout.record_bits()));
    }
    // Bits left in the accumulator are the padding of the last byte read.
    assert!(r.fill < 8, "a state ends within its last byte");
    (PackedState(words.into_boxed_slice()), r.at)
}

#[cfg(test)]
mod tests {
    use crate::config::{Bounds, Extensions};
    use crate::engine::space::Space;
    use crate::models::paper::PaperModel;
    use stateright::Model;
    use std::collections::HashSet;

    /// Every reachable state round-trips, alone and packed back to back.
    fn round_trips(m: &PaperModel) -> usize {
        let mut seen = HashSet::new();
        let mut stack = m.init_states();
        let mut actions = Vec::new();
        let mut all = Vec::new();
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            let start = all.len();
            m.encode(&s, &mut all);
            let (back, used) = m.decode(&all[start..]);
            assert_eq!(back, s);
            assert_eq!(used, all.len() - start);
            actions.clear();
            m.actions(&s, &mut actions);
            stack.extend(actions.iter().filter_map(|&a| m.next_state(&s, a)));
        }
        let mut at = 0;
        let mut count = 0;
        while at < all.len() {
            let (s, used) = m.decode(&all[at..]);
            assert!(seen.contains(&s));
            (at, count) = (at + used, count + 1);
        }
        assert_eq!(count, seen.len());
        count
    }

    #[test]
    fn every_reachable_state_round_trips() {
        let ext = Extensions::default();
        let one = PaperModel::new(Bounds::paper(1, 2, 1), ext, false).unwrap();
        assert_eq!(round_trips(&one), 10_168);
        let mut b = Bounds::paper(3, 1, 2);
        (b.values, b.tools) = (1, 1);
        let canonical = Extensions {
            canonical_writes: true,
            ..ext
        };
        let three = PaperModel::new(b, canonical, true).unwrap();
        assert!(round_trips(&three) > 1_000);
    }
}
