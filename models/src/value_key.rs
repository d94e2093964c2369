//! Values by what they are: a key that two equal values share wherever they were read.
//!
//! A value id (a `Value`) means something only in the table that assigned it, and keeping
//! one table for a whole stream costs a lookup in a large table per value read and, when
//! values are mostly fresh, a compaction now and then. A [`ValueKey`] needs no table when the
//! name is short: a name of at most 15 bytes *is* its key (its bytes and its length), so
//! equal names have equal keys in every block of a file. A longer name is a value id of one
//! shared table, as before. A key is exact either way: two keys are equal exactly when the
//! names are (within one table of long names), never by a hash.
//!
//! [`Names::with_literal_values`](crate::Names::with_literal_values) makes a name table
//! whose value ids index a list of keys ([`Literals`]) instead of a table of names: what the
//! stream detector reads ([`crate::detect::stream::Stream::push_keyed`]).

/// A value's key, as a 128-bit number: 0 is NULL; a name of at most 15 bytes is its bytes
/// (little-endian) with `0x80 | len` in the top byte; anything else is a value id (a
/// `Value`'s number: `ValueKey::id`, in `names.rs`) of the name table that holds the long
/// names, below 2^32 (top byte 0).
/// Kept as two words, so that it aligns as a `u64` does (a kept write with its key is 40
/// bytes, not the 48 a `u128`'s alignment would make it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueKey([u64; 2]);

impl ValueKey {
    /// NULL's key.
    pub const NULL: ValueKey = ValueKey([0; 2]);

    /// The key whose number is `bits`.
    #[inline]
    pub fn from_bits(bits: u128) -> ValueKey {
        ValueKey([bits as u64, (bits >> 64) as u64])
    }

    /// The key's number.
    #[inline]
    pub fn bits(self) -> u128 {
        u128::from(self.0[0]) | u128::from(self.0[1]) << 64
    }

    /// The key of value id number `n` of a name table (0 is NULL).
    #[inline]
    pub fn of_id(n: u32) -> ValueKey {
        ValueKey([u64::from(n), 0])
    }

    /// The key that is the name itself, when it has at most 15 bytes.
    #[inline]
    pub fn literal(name: &str) -> Option<ValueKey> {
        let b = name.as_bytes();
        if b.len() >= 16 {
            return None;
        }
        let mut bytes = [0u8; 16];
        bytes[..b.len()].copy_from_slice(b);
        bytes[15] = 0x80 | b.len() as u8;
        Some(ValueKey::from_bits(u128::from_le_bytes(bytes)))
    }

    /// The key of id `n` in a list of keys by id − 1 (what a literal table, a merged block's
    /// keys and a keyed detector's witness keys all are): NULL for 0.
    #[inline]
    pub fn listed(keys: &[ValueKey], n: u32) -> ValueKey {
        match n {
            0 => ValueKey::NULL,
            k => keys[k as usize - 1],
        }
    }

    /// Whether this is NULL.
    #[inline]
    pub fn is_null(self) -> bool {
        self.0 == [0; 2]
    }

    /// The value id number, when the key is one (NULL is 0).
    #[inline]
    pub fn id_number(self) -> Option<u32> {
        (self.0[1] >> 56 == 0).then_some(self.0[0] as u32)
    }

    /// The name, when the key is the name itself.
    pub fn as_literal(&self) -> Option<String> {
        let bytes = self.bits().to_le_bytes();
        let tag = bytes[15];
        if tag & 0x80 == 0 {
            return None;
        }
        let len = usize::from(tag & 0x7f);
        // Made from a whole `&str` by `literal` (or the scanner, from a line's string).
        let name = std::str::from_utf8(&bytes[..len]).expect("a literal key is a name's bytes");
        Some(name.to_owned())
    }
}

/// The value ids of a literal name table: id `k` (from 1) is `keys[k − 1]`, each key once
/// (so equal names get one id, as in an interning table), found through a small
/// open-addressing table of indices. Long names are interned in the table's own value
/// interner and listed by their id there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Literals {
    keys: Vec<ValueKey>,
    /// `u32::MAX` (empty) or an index into `keys`; a power of two long, at most half full.
    slots: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl Literals {
    /// The id of `key` (from 1), a new one if the key is new.
    #[inline]
    pub fn id(&mut self, key: ValueKey) -> u32 {
        if 2 * (self.keys.len() + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = home(key, mask);
        loop {
            match self.slots[i] {
                EMPTY => break,
                k if self.keys[k as usize] == key => return k + 1,
                _ => i = (i + 1) & mask,
            }
        }
        let k = u32::try_from(self.keys.len()).expect("fewer than u32::MAX values in a table");
        assert!(k < u32::MAX - 1, "fewer than u32::MAX values in a table");
        self.slots[i] = k;
        self.keys.push(key);
        k + 1
    }

    /// Every key, by id − 1.
    pub fn keys(&self) -> &[ValueKey] {
        &self.keys
    }

    /// The key of id `v` (NULL for 0).
    #[inline]
    pub fn key(&self, v: u32) -> ValueKey {
        ValueKey::listed(&self.keys, v)
    }

    /// How many ids were given.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Forgets every key, keeping the allocations.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.slots.fill(EMPTY);
    }

    fn grow(&mut self) {
        let len = (2 * self.slots.len()).max(64);
        self.slots.clear();
        self.slots.resize(len, EMPTY);
        let mask = len - 1;
        for (k, &key) in self.keys.iter().enumerate() {
            let mut i = home(key, mask);
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = k as u32;
        }
    }
}

/// Where a key is looked for first: each word of the key multiplied in turn, the two halves
/// of each full 128-bit product xored (so every byte of the name reaches the low bits: the
/// high half of one 64-bit product had left names that differ only in their last bytes,
/// `v1000000` and `v1000001`, in one long chain), from the process's random seed, as the
/// name tables' hash does, so that keys cannot be chosen to collide. Ids are the order of
/// first appearance whatever the slots, so the seed changes no id.
#[inline]
fn home(key: ValueKey, mask: usize) -> usize {
    let fold = |a: u64, b: u64| {
        let full = u128::from(a) * u128::from(b);
        (full as u64) ^ ((full >> 64) as u64)
    };
    let k = crate::mix::GOLDEN;
    let h = fold(crate::mix::process_seed() ^ key.0[0], k);
    fold(h ^ key.0[1], k ^ 0xA076_1D64_78BD_642F) as usize & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_name_is_its_own_key_and_a_long_one_is_not() {
        for name in [
            "",
            "a",
            "v1301",
            "fifteen bytes!!",
            "é€",
            "sixteen bytes!!!",
        ] {
            let key = ValueKey::literal(name);
            assert_eq!(key.is_some(), name.len() < 16, "{name:?}");
            if let Some(k) = key {
                assert_eq!(k.as_literal().as_deref(), Some(name));
                assert_eq!(k.id_number(), None);
                assert!(!k.is_null());
            }
        }
        assert_ne!(ValueKey::literal("a"), ValueKey::literal("a\0"));
        assert_eq!(ValueKey::of_id(7).id_number(), Some(7));
        assert_eq!(ValueKey::of_id(0), ValueKey::NULL);
        assert_eq!(ValueKey::of_id(u32::MAX).as_literal(), None);
    }

    /// Names that differ only in their last bytes spread over the table: the mean probe
    /// length of a table half full stays near its expected 1.5 (it was 74 for
    /// `v1000000…v1001999` when only high product bits were used).
    #[test]
    fn keys_that_differ_late_do_not_cluster() {
        for base in [1_000u64, 1_000_000, 10_000_000, 10_000_000_000_000] {
            let mask = 4095;
            let mut slots = vec![false; mask + 1];
            let mut probes = 0usize;
            for n in base..base + 2000 {
                let key = ValueKey::literal(&format!("v{n}")).expect("short");
                let mut i = home(key, mask);
                probes += 1;
                while slots[i] {
                    i = (i + 1) & mask;
                    probes += 1;
                }
                slots[i] = true;
            }
            assert!(probes < 2000 * 2, "{base}: {probes} probes for 2000 keys");
        }
    }

    #[test]
    fn literal_ids_are_dense_and_one_per_key() {
        let mut t = Literals::default();
        let names: Vec<String> = (0..5000).map(|k| format!("v{}", k % 1700)).collect();
        let mut first = std::collections::BTreeMap::new();
        for name in &names {
            let key = ValueKey::literal(name).expect("short");
            let next = first.len() as u32 + 1;
            let want = *first.entry(name.clone()).or_insert(next);
            assert_eq!(t.id(key), want, "{name}");
            assert_eq!(t.key(want), key);
        }
        assert_eq!(t.len(), 1700);
        t.clear();
        assert!(t.is_empty());
        assert_eq!(t.id(ValueKey::literal("x").expect("short")), 1);
    }
}
