//! The explorer's seen set: 64-bit fingerprints in sharded open-addressing tables.
//!
//! Each shard is a flat `Vec<u64>` with linear probing, `0` marking an empty slot (a zero
//! fingerprint is stored as [`ZERO_STAND_IN`], so it shares a slot with that one value: one
//! more collision pair among 2⁶⁴ values). A slot costs 8 bytes and nothing else (no control
//! bytes, no per-entry header); a shard grows by 1.5× once it is `LOAD_MAX` full, so the
//! table is 53–80 % full, i.e. 10–15 bytes per state, and the rehash peak is one shard's old
//! plus new array (1/256 of the set), not a doubling of the whole set. A shard rehashes
//! under its lock, so a thread that meets it waits (an 18.9 M-state run made about 3,900
//! futex calls, a few percent of its time); 4096 shards made that rarer but kept 80 % more
//! resident memory (the allocator holds many small freed arrays), so 256 it stays
//! (`docs/benchmarks.md`). Each lock sits on its own cache line, so two threads taking
//! neighbouring shards do not contend for one line. `expect` pre-sizes
//! the shards (with room for their uneven filling) so a run of known size does not rehash.
//! Slots are addressed by Lemire's range reduction, so capacities need not be powers of two.
//!
//! A passing test here shows the table never loses or invents a fingerprint; it says nothing
//! about fingerprint collisions between distinct states (see [`omission_estimate`]).

use std::sync::Mutex;

/// Bits of a fingerprint (its top bits) that choose the shard.
const SHARD_BITS: u32 = 8;
/// Number of independently locked (and independently grown) shards.
pub const SHARDS: usize = 1 << SHARD_BITS;
/// A shard grows when this fraction of its slots is used.
const LOAD_MAX: f64 = 0.8;
/// The smallest shard capacity.
const SHARD_MIN: usize = 64;
/// Stored in place of the fingerprint 0, which marks an empty slot.
pub const ZERO_STAND_IN: u64 = 0x9E37_79B9_7F4A_7C15;

/// One open-addressing table of non-zero fingerprints.
#[derive(Clone, Debug)]
pub struct FpTable {
    slots: Vec<u64>,
    len: usize,
}

impl FpTable {
    /// A table that holds `expect` fingerprints without growing.
    pub fn with_expected(expect: usize) -> FpTable {
        let cap = ((expect as f64 / LOAD_MAX) as usize + 1).max(SHARD_MIN);
        FpTable {
            slots: vec![0; cap],
            len: 0,
        }
    }

    /// Number of fingerprints stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots (each 8 bytes).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn home(&self, fp: u64) -> usize {
        // The top bits chose the shard; the rest spread over the slots.
        ((u128::from(fp << SHARD_BITS) * self.slots.len() as u128) >> 64) as usize
    }

    /// Inserts `fp` (which must be non-zero); true if it was not there.
    fn insert_nonzero(&mut self, fp: u64) -> bool {
        assert_ne!(fp, 0, "0 marks an empty slot");
        let cap = self.slots.len();
        let mut i = self.home(fp);
        loop {
            let slot = self.slots[i];
            if slot == fp {
                return false;
            }
            if slot == 0 {
                self.slots[i] = fp;
                self.len += 1;
                return true;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Inserts a fingerprint; true if it was new.
    pub fn insert(&mut self, fp: u64) -> bool {
        if (self.len + 1) as f64 > self.slots.len() as f64 * LOAD_MAX {
            self.grow();
        }
        self.insert_nonzero(nonzero(fp))
    }

    /// Whether the fingerprint is stored.
    pub fn contains(&self, fp: u64) -> bool {
        let fp = nonzero(fp);
        let cap = self.slots.len();
        let mut i = self.home(fp);
        loop {
            match self.slots[i] {
                0 => return false,
                s if s == fp => return true,
                _ => i = if i + 1 == cap { 0 } else { i + 1 },
            }
        }
    }

    /// Rehashes into 1.5× the slots.
    fn grow(&mut self) {
        let bigger = self.slots.len() + self.slots.len() / 2;
        let old = std::mem::replace(&mut self.slots, vec![0; bigger]);
        let len = self.len;
        self.len = 0;
        for fp in old.into_iter().filter(|&s| s != 0) {
            self.insert_nonzero(fp);
        }
        assert_eq!(self.len, len, "a rehash keeps every fingerprint");
    }
}

fn nonzero(fp: u64) -> u64 {
    if fp == 0 {
        ZERO_STAND_IN
    } else {
        fp
    }
}

/// A shard on its own cache line (two lines: adjacent-line prefetch pairs them).
#[derive(Debug)]
#[repr(align(128))]
struct Shard(Mutex<FpTable>);

/// The sharded, thread-safe seen set.
#[derive(Debug)]
pub struct FpSet {
    shards: Vec<Shard>,
}

impl FpSet {
    /// A set pre-sized for `expect` fingerprints (0: start small and grow).
    pub fn new(expect: u64) -> FpSet {
        // Shards fill unevenly (a binomial spread): leave four standard deviations of room.
        let mean = expect as f64 / SHARDS as f64;
        let per_shard = (mean + 4.0 * mean.sqrt()) as usize;
        FpSet {
            shards: (0..SHARDS)
                .map(|_| Shard(Mutex::new(FpTable::with_expected(per_shard))))
                .collect(),
        }
    }

    fn shard(&self, fp: u64) -> std::sync::MutexGuard<'_, FpTable> {
        self.shards[(fp >> (64 - SHARD_BITS)) as usize]
            .0
            .lock()
            .expect("seen-set shard poisoned")
    }

    /// Inserts a fingerprint; true if it was new.
    pub fn insert(&self, fp: u64) -> bool {
        self.shard(fp).insert(fp)
    }

    /// Whether the fingerprint is stored.
    pub fn contains(&self, fp: u64) -> bool {
        self.shard(fp).contains(fp)
    }

    /// Fingerprints stored.
    pub fn len(&self) -> u64 {
        self.each(|t| t.len() as u64)
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held by the slot arrays.
    pub fn bytes(&self) -> u64 {
        self.each(|t| 8 * t.capacity() as u64)
    }

    fn each(&self, f: impl Fn(&FpTable) -> u64) -> u64 {
        self.shards
            .iter()
            .map(|s| f(&s.0.lock().expect("seen-set shard poisoned")))
            .sum()
    }
}

/// TLC's estimate of the states a 64-bit fingerprint set may have omitted: with `distinct`
/// states and `generated` successors computed, the chance that some collision hid a state
/// is about `distinct · (generated − distinct) / 2⁶⁴` ("optimistic", TLC); the birthday
/// bound over the distinct states alone is `distinct² / 2⁶⁵`. Both are returned, in that order.
pub fn omission_estimate(distinct: u64, generated: u64) -> (f64, f64) {
    let n = distinct as f64;
    let two64 = 2f64.powi(64);
    let optimistic = n * (generated.saturating_sub(distinct)) as f64 / two64;
    (optimistic, n * n / (2.0 * two64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::space::mix;
    use std::collections::HashSet;

    #[test]
    fn insert_contains_and_grow_agree_with_a_hash_set() {
        let mut t = FpTable::with_expected(0);
        let start = t.capacity();
        let mut reference = HashSet::new();
        for k in 0..20_000u64 {
            // Repeats every value once, in a scattered order.
            let fp = mix(k % 10_000);
            assert_eq!(t.insert(fp), reference.insert(fp), "insert {k}");
        }
        assert_eq!(t.len(), 10_000);
        assert!(t.capacity() > start, "the table grew");
        assert!(t.len() as f64 <= t.capacity() as f64 * LOAD_MAX);
        for k in 0..10_000u64 {
            assert!(t.contains(mix(k)));
            assert!(!t.contains(mix(k + 1_000_000)));
        }
    }

    #[test]
    fn zero_and_clustered_fingerprints_are_kept() {
        let mut t = FpTable::with_expected(8);
        assert!(t.insert(0));
        assert!(!t.insert(0));
        assert!(t.contains(0));
        // Equal home slot for all (same low bits scaled): probing must wrap around.
        for k in 1..=40u64 {
            assert!(t.insert(u64::MAX - k));
        }
        for k in 1..=40u64 {
            assert!(t.contains(u64::MAX - k));
        }
        assert_eq!(t.len(), 41);
    }

    #[test]
    fn presized_set_does_not_grow_and_counts_across_shards() {
        let s = FpSet::new(100_000);
        let bytes = s.bytes();
        for k in 0..100_000u64 {
            assert!(s.insert(mix(k)));
        }
        for k in 0..100_000u64 {
            assert!(!s.insert(mix(k)));
        }
        assert_eq!(s.len(), 100_000);
        assert_eq!(s.bytes(), bytes, "no shard grew");
    }

    #[test]
    fn omission_estimate_matches_the_birthday_bound() {
        let (opt, birthday) = omission_estimate(1 << 32, 3 << 32);
        assert!((birthday - 0.5).abs() < 1e-12);
        assert!((opt - 2.0).abs() < 1e-12);
        assert_eq!(omission_estimate(0, 0), (0.0, 0.0));
    }
}
