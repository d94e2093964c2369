//! Interned names: agents, cells, tools and values as small integers.
//!
//! Detectors, runtimes and the checker work on `u32` ids so that records are cheap to
//! compare, hash and sort. A [`Names`] table maps ids back to the strings a user wrote.
//! Value id 0 is NULL (SPEC §1: "a sentinel not in Values; it is value 0 in code").

use crate::value_key::{Literals, ValueKey};
use std::fmt;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize, serde::Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into a table.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// An agent (an LLM-driven actor that runs operations).
    Agent,
    "a"
);
id_type!(
    /// A shared memory cell.
    Cell,
    "c"
);
id_type!(
    /// A tool in the registry.
    Tool,
    "t"
);
id_type!(
    /// A replica of the replicated store (SPEC §6). In the model, replica 0 is the primary;
    /// in a history read from JSON Lines, ids are interned names and no replica is special.
    Replica,
    "r"
);

/// A cell value; `Value::NULL` (id 0) is the sentinel for "never written".
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Value(pub u32);

impl Value {
    /// The NULL sentinel, not a member of `Values`.
    pub const NULL: Value = Value(0);

    /// Whether this is NULL.
    pub fn is_null(self) -> bool {
        self.0 == 0
    }
}

/// A key for a value id, and back (`crate::value_key` knows ids only as numbers).
impl ValueKey {
    /// The key of value id `v` of a name table (NULL for NULL).
    #[inline]
    pub fn id(v: Value) -> ValueKey {
        ValueKey::of_id(v.0)
    }

    /// The value id, when the key is one (NULL is `Value::NULL`).
    #[inline]
    pub fn as_id(self) -> Option<Value> {
        self.id_number().map(Value)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_null() {
            write!(f, "NULL")
        } else {
            write!(f, "v{}", self.0)
        }
    }
}

/// One interning table: string ↔ dense id, in order of first appearance.
///
/// The names live in one arena string; an open-addressing table of ids (linear probing, at
/// most half full) finds a name's id by hashing it. Lookups never iterate the table, so its
/// layout (which depends on a per-process random hash seed, against inputs built to collide)
/// never reaches an id or an output: ids are the order of first appearance, always.
#[derive(Clone, Default)]
pub struct Interner {
    text: String,
    /// `ends[id]` is where name `id` ends in `text` (it starts where `id − 1` ends).
    ends: Vec<usize>,
    /// `EMPTY`, or an id in the low 32 bits and the high half of its name's hash above (so a
    /// probe rarely touches a name that is not the one sought); the length is 0 or a power
    /// of two.
    slots: Vec<u64>,
    /// The last few ids interned or found, with their names' hashes: a line repeats its
    /// fresh values (`co`, `io`, `write_values`), and these are checked before the table
    /// (the hash first, so a name is compared only when it is almost surely the one). Any id
    /// here is an answer when its name matches, so stale entries are harmless.
    recent: [(u64, u32); 4],
    recent_next: usize,
}

const EMPTY: u64 = u64::MAX;

impl PartialEq for Interner {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.ends == other.ends
    }
}

impl Eq for Interner {}

impl fmt::Debug for Interner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries((0..self.len() as u32).filter_map(|id| self.name(id)))
            .finish()
    }
}

impl Interner {
    /// The id of `name`, assigning the next one if it is new.
    #[inline]
    pub fn intern(&mut self, name: &str) -> u32 {
        let h = hash(name.as_bytes());
        // Small tables stay in cache; the ring pays off for large ones (values).
        if self.ends.len() > 256 {
            if let Some(&(_, id)) = self
                .recent
                .iter()
                .find(|&&(rh, id)| rh == h && self.name(id) == Some(name))
            {
                return id;
            }
        }
        let id = self.intern_hashed(name, h);
        self.remember(h, id);
        id
    }

    /// The id of `name`, whose hash is `h`, assigning the next one if it is new.
    #[inline]
    fn intern_hashed(&mut self, name: &str, h: u64) -> u32 {
        if !self.slots.is_empty() {
            let slot = self.probe(name, h);
            match self.slots[slot] {
                EMPTY => {}
                e => return e as u32,
            }
        }
        let id = u32::try_from(self.ends.len()).expect("more than u32::MAX names");
        self.text.push_str(name);
        self.ends.push(self.text.len());
        if 2 * self.ends.len() > self.slots.len() {
            self.rehash((2 * self.slots.len()).max(16));
        } else {
            let slot = self.probe(name, h);
            self.slots[slot] = entry(id, h);
        }
        id
    }

    /// Interns every name of `from`, in its id order, pushing each one's id here onto `out`.
    /// The same ids as interning them one by one; faster for a large table, whose slots are
    /// far apart in memory: the slots of the next few names are loaded together first, so
    /// their cache misses overlap instead of coming one after another.
    pub fn intern_all(&mut self, from: &Interner, out: &mut Vec<u32>) {
        const AHEAD: usize = 8;
        let mut hashes = [0u64; AHEAD];
        let n = from.len() as u32;
        let mut id = 0;
        while id < n {
            let batch = (n - id).min(AHEAD as u32);
            for (k, h) in hashes.iter_mut().enumerate().take(batch as usize) {
                *h = hash(from.name(id + k as u32).expect("an interned id").as_bytes());
            }
            if self.slots.len() > 1 << 12 {
                let mask = self.slots.len() - 1;
                for h in &hashes[..batch as usize] {
                    std::hint::black_box(self.slots[home(*h, mask)]);
                }
            }
            for (k, &h) in hashes.iter().enumerate().take(batch as usize) {
                let name = from.name(id + k as u32).expect("an interned id");
                out.push(self.intern_hashed(name, h));
            }
            id += batch;
        }
    }

    #[inline]
    fn remember(&mut self, h: u64, id: u32) {
        self.recent[self.recent_next] = (h, id);
        self.recent_next = (self.recent_next + 1) % self.recent.len();
    }

    /// The id of `name`, if it was interned.
    #[inline]
    pub fn get(&self, name: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        match self.slots[self.probe(name, hash(name.as_bytes()))] {
            EMPTY => None,
            e => Some(e as u32),
        }
    }

    /// The slot holding `name` (whose hash is `h`), or the empty slot where it would go.
    #[inline]
    fn probe(&self, name: &str, h: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = home(h, mask);
        loop {
            match self.slots[i] {
                EMPTY => return i,
                e if e >> 32 == h >> 32 && self.name(e as u32) == Some(name) => return i,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn rehash(&mut self, len: usize) {
        self.slots = vec![EMPTY; len];
        self.refill();
    }

    /// Puts every name into the slots, which are all empty. The names are distinct, so each
    /// goes into the first empty slot from its hash, with no comparison; and the slots of the
    /// next few names are loaded together first, so that in a large table their cache misses
    /// overlap.
    fn refill(&mut self) {
        const AHEAD: usize = 8;
        let mask = self.slots.len() - 1;
        let mut hashes = [0u64; AHEAD];
        let n = self.ends.len() as u32;
        let mut id = 0;
        while id < n {
            let batch = (n - id).min(AHEAD as u32) as usize;
            for (k, h) in hashes.iter_mut().enumerate().take(batch) {
                *h = hash(self.name(id + k as u32).expect("an interned id").as_bytes());
                std::hint::black_box(self.slots[home(*h, mask)]);
            }
            for (k, &h) in hashes.iter().enumerate().take(batch) {
                let mut i = home(h, mask);
                while self.slots[i] != EMPTY {
                    i = (i + 1) & mask;
                }
                self.slots[i] = entry(id + k as u32, h);
            }
            id += batch as u32;
        }
    }

    /// The name of `id`, if it exists.
    #[inline]
    pub fn name(&self, id: u32) -> Option<&str> {
        let end = *self.ends.get(id as usize)?;
        let start = match id {
            0 => 0,
            _ => self.ends[id as usize - 1],
        };
        Some(&self.text[start..end])
    }

    /// How many names are interned.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether no name is interned.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Forgets every name, keeping the allocations.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.slots.fill(EMPTY);
        self.recent = [(0, u32::MAX); 4];
    }

    /// Keeps only the ids for which `keep` holds, renumbered densely in their old order;
    /// returns the new id of each old id ([`Renumbering::get`]: `None` if dropped). Done in
    /// place: the id list is rewritten where it is and the slots are refilled where they are
    /// (halved while more than four times the kept names), so no second table exists at any
    /// moment, and the kept text slides down in its own buffer.
    pub fn retain(&mut self, keep: impl Fn(u32) -> bool) -> Renumbering {
        let map = Renumbering::of(self.len(), keep);
        // The kept names slide down within the text's own buffer (a kept name never moves
        // up), so no second text is allocated; a run of kept names moves in one copy (live
        // values mostly come in long runs).
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        let (mut start, mut to) = (0usize, 0usize);
        // The run being gathered: from `run` in the old text, to `to + (start - run)` in the new.
        let mut run = 0usize;
        for id in 0..self.ends.len() {
            let end = self.ends[id];
            match map.get(id as u32) {
                Some(new) => self.ends[new as usize] = to + (end - run),
                None => {
                    bytes.copy_within(run..start, to);
                    to += start - run;
                    run = end;
                }
            }
            start = end;
        }
        bytes.copy_within(run..start, to);
        to += start - run;
        bytes.truncate(to);
        // Whole names, each valid UTF-8, one after another: the check cannot fail.
        self.text = String::from_utf8(bytes).expect("kept names are whole names");
        let next = map.kept();
        self.ends.truncate(next);
        let mut len = self.slots.len().max(16);
        while len > 16 && len > 4 * next {
            len /= 2;
        }
        if len == self.slots.len() {
            self.renumber_slots(&map);
        } else {
            // The old slots go before the new ones are made.
            self.slots = Vec::new();
            self.slots = vec![EMPTY; len];
            self.refill();
        }
        self.recent = [(0, u32::MAX); 4];
        map
    }

    /// Drops the slots of the names `map` drops and renumbers the others, in place and in one
    /// pass in slot order (no name is read or hashed: a slot's bits give its chain's start).
    /// The pass starts after an empty slot, so no chain runs across its start. Each slot is
    /// emptied, and a kept entry goes back to the first empty slot from its chain's start: at
    /// or before where it was, since everything between was already passed. So every chain
    /// stays unbroken, which is what lookups need, and the slots are those a fresh table of
    /// the kept names would hold up to the order within a chain.
    fn renumber_slots(&mut self, map: &Renumbering) {
        let len = self.slots.len();
        let mask = len - 1;
        let Some(gap) = self.slots.iter().position(|&e| e == EMPTY) else {
            unreachable!("a table at most half full has an empty slot");
        };
        for k in 1..=len {
            let i = (gap + k) & mask;
            let e = self.slots[i];
            if e == EMPTY {
                continue;
            }
            self.slots[i] = EMPTY;
            if let Some(new) = map.get(e as u32) {
                let mut j = home(e, mask);
                while self.slots[j] != EMPTY {
                    j = (j + 1) & mask;
                }
                self.slots[j] = (e & !u64::from(u32::MAX)) | u64::from(new);
            }
        }
    }

    /// How many more names fit before the slot table doubles.
    pub fn room(&self) -> usize {
        (self.slots.len() / 2).saturating_sub(self.ends.len())
    }

    /// Makes room for `more` names (of `bytes` bytes in all) beyond those interned, so that
    /// interning them grows nothing: one table of the final size is made now instead of one
    /// for each doubling on the way. Changes no id.
    pub fn reserve(&mut self, more: usize, bytes: usize) {
        let want = self.ends.len().saturating_add(more);
        if want.saturating_mul(2) > self.slots.len() {
            self.rehash(want.saturating_mul(2).next_power_of_two().max(16));
        }
        self.ends.reserve(more);
        self.text.reserve(bytes);
    }
}

/// Where a name whose hash is `h` is looked for first: from the hash's high half, the half a
/// slot keeps, so that a slot's own bits say where its chain starts ([`Interner::retain`]).
#[inline]
fn home(h: u64, mask: usize) -> usize {
    (h >> 32) as usize & mask
}

/// A slot: the id, and the high half of the hash (never all ones with a real id).
#[inline]
fn entry(id: u32, h: u64) -> u64 {
    let e = (h & !u64::from(u32::MAX)) | u64::from(id);
    assert_ne!(e, EMPTY, "id u32::MAX with an all-ones hash");
    e
}

/// The hash of a name: a multiply-fold over 8-byte words from a per-process random seed.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = crate::mix::GOLDEN;
    let fold = |a: u64, b: u64| {
        let full = u128::from(a) * u128::from(b);
        (full as u64) ^ ((full >> 64) as u64)
    };
    let mut h = crate::mix::process_seed() ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = fold(h ^ word, K);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    fold(h ^ u64::from_le_bytes(tail), K ^ 0xA076_1D64_78BD_642F)
}

/// The ids a [`Interner::retain`] kept, and the new id of each: its rank among the kept ones.
/// One bit per old id and a count per 64 of them, so that a lookup (one per slot of the
/// table, in hash order) touches an eighth of a byte per id, not a word: the whole map of
/// a table of millions stays in the core's cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Renumbering {
    /// Bit `id % 64` of word `id / 64`: whether `id` was kept.
    bits: Vec<u64>,
    /// How many ids below word `w`'s first were kept.
    before: Vec<u32>,
    /// The ids numbered (kept or not).
    len: usize,
}

impl Renumbering {
    /// The renumbering of ids `0..len` that keeps those for which `keep` holds.
    pub fn of(len: usize, keep: impl Fn(u32) -> bool) -> Self {
        let words = len.div_ceil(64);
        let (mut bits, mut before) = (Vec::with_capacity(words), Vec::with_capacity(words));
        let mut kept = 0u32;
        for w in 0..words {
            let mut word = 0u64;
            for b in 0..(len - 64 * w).min(64) {
                word |= u64::from(keep((64 * w + b) as u32)) << b;
            }
            bits.push(word);
            before.push(kept);
            kept += word.count_ones();
        }
        Renumbering { bits, before, len }
    }

    /// The new id of `old`, or `None` if it was dropped (or never numbered).
    #[inline]
    pub fn get(&self, old: u32) -> Option<u32> {
        let (w, b) = (old as usize / 64, old % 64);
        let word = *self.bits.get(w)?;
        let below = word & ((1u64 << b) - 1);
        (word >> b & 1 == 1).then(|| self.before[w] + below.count_ones())
    }

    /// How many ids were kept.
    pub fn kept(&self) -> usize {
        match (self.before.last(), self.bits.last()) {
            (Some(&n), Some(w)) => n as usize + w.count_ones() as usize,
            _ => 0,
        }
    }

    /// How many ids were numbered, kept or not.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id was numbered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The new id of every old one, in old id order.
    pub fn to_vec(&self) -> Vec<Option<u32>> {
        (0..self.len as u32).map(|id| self.get(id)).collect()
    }
}

/// The values a [`Names::retain_values`] kept, by value id: NULL stays NULL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueRenumbering(Renumbering);

impl ValueRenumbering {
    /// The new id of value `old`, or `None` if it was dropped.
    #[inline]
    pub fn get(&self, old: Value) -> Option<Value> {
        match old.0 {
            0 => Some(Value::NULL),
            v => self.0.get(v - 1).map(|id| Value(id + 1)),
        }
    }
}

/// The name tables of one history. Values start at id 1: id 0 is NULL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    pub agents: Interner,
    pub cells: Interner,
    pub tools: Interner,
    /// Replica names (SPEC §6), used only by histories with per-read metadata.
    pub replicas: Interner,
    values: Interner,
    /// With [`Names::with_literal_values`]: value ids index these keys, and `values` holds
    /// only the names too long to be their own key.
    literals: Option<Literals>,
}

impl Names {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names `a0.., c0.., t0.., v1..` for the given counts, as the checker and tests use.
    pub fn synthetic(agents: u32, cells: u32, tools: u32, values: u32) -> Self {
        let mut n = Names::new();
        for i in 0..agents {
            n.agent(&format!("a{}", i + 1));
        }
        for i in 0..cells {
            n.cell(&format!("c{}", i + 1));
        }
        for i in 0..tools {
            n.tool(&format!("t{}", i + 1));
        }
        for i in 0..values {
            n.value(&format!("v{}", i + 1));
        }
        n
    }

    pub fn agent(&mut self, name: &str) -> Agent {
        Agent(self.agents.intern(name))
    }
    pub fn cell(&mut self, name: &str) -> Cell {
        Cell(self.cells.intern(name))
    }
    pub fn tool(&mut self, name: &str) -> Tool {
        Tool(self.tools.intern(name))
    }
    /// A table whose value ids stand for [`ValueKey`]s: a name of at most 15 bytes is its
    /// own key and is not stored; a longer one is interned, and its key is its id among the
    /// long names. Equal names still get one id ([`Literals`]), so a record's values compare
    /// as in any table; across tables, compare keys ([`Names::value_key`]).
    pub fn with_literal_values() -> Self {
        Names {
            literals: Some(Literals::default()),
            ..Names::default()
        }
    }

    /// Whether value ids stand for keys ([`Names::with_literal_values`]).
    pub fn has_literal_values(&self) -> bool {
        self.literals.is_some()
    }

    /// Interns a non-NULL value.
    #[inline]
    pub fn value(&mut self, name: &str) -> Value {
        match self.literals {
            None => Value(self.values.intern(name) + 1),
            Some(_) => self.literal(name, ValueKey::literal(name)),
        }
    }

    /// [`Names::value`] of a short name whose literal key ([`ValueKey::literal`]) the caller
    /// has already made (`key`, its bits; used only by a literal table).
    #[doc(hidden)] // for the JSON Lines scanner (`agentsim-jsonl`)
    #[inline]
    pub fn value_with_key(&mut self, name: &str, key: u128) -> Value {
        match self.literals {
            None => Value(self.values.intern(name) + 1),
            Some(_) => self.literal(name, Some(ValueKey::from_bits(key))),
        }
    }

    #[inline]
    fn literal(&mut self, name: &str, key: Option<ValueKey>) -> Value {
        let key = key.unwrap_or_else(|| ValueKey::id(Value(self.values.intern(name) + 1)));
        Value(self.literals.as_mut().expect("a literal table").id(key))
    }

    /// The key of value `v`: its id, or in a literal table the key it stands for.
    #[inline]
    pub fn value_key(&self, v: Value) -> ValueKey {
        match &self.literals {
            None => ValueKey::id(v),
            Some(l) => l.key(v.0),
        }
    }

    /// A literal table's keys, by value id − 1 ([`Names::with_literal_values`]); `None` in a
    /// table that is not literal.
    #[doc(hidden)] // for the JSON Lines block merger (`agentsim-jsonl`)
    pub fn literals(&self) -> Option<&Literals> {
        self.literals.as_ref()
    }

    /// Interns every value name of `local` into this table, in `local`'s id order, and sets
    /// `out` to the interner id (value id − 1) each local one now has here.
    #[doc(hidden)] // for the JSON Lines block merger (`agentsim-jsonl`)
    pub fn absorb_values(&mut self, local: &Names, out: &mut Vec<u32>) {
        out.clear();
        self.values.intern_all(&local.values, out);
    }

    /// Forgets a literal table's ids (the long names stay interned).
    pub fn clear_literals(&mut self) {
        if let Some(l) = &mut self.literals {
            l.clear();
        }
    }

    /// The name of a value key: NULL is `None`; a long name's key is an id of this table's
    /// long names (or of its values, in a table that is not literal).
    pub fn key_name(&self, k: ValueKey) -> Option<String> {
        if k.is_null() {
            return None;
        }
        match k.as_id() {
            Some(v) => Some(
                self.values
                    .name(v.0 - 1)
                    .map_or_else(|| v.to_string(), str::to_owned),
            ),
            None => k.as_literal(),
        }
    }

    pub fn agent_name(&self, a: Agent) -> String {
        self.agents
            .name(a.0)
            .map_or_else(|| a.to_string(), str::to_owned)
    }
    pub fn cell_name(&self, c: Cell) -> String {
        self.cells
            .name(c.0)
            .map_or_else(|| c.to_string(), str::to_owned)
    }
    pub fn replica(&mut self, name: &str) -> Replica {
        Replica(self.replicas.intern(name))
    }
    pub fn replica_name(&self, r: Replica) -> String {
        self.replicas
            .name(r.0)
            .map_or_else(|| r.to_string(), str::to_owned)
    }
    pub fn tool_name(&self, t: Tool) -> String {
        self.tools
            .name(t.0)
            .map_or_else(|| t.to_string(), str::to_owned)
    }
    /// The value's name, or `None` for NULL.
    pub fn value_name(&self, v: Value) -> Option<String> {
        if v.is_null() {
            return None;
        }
        if self.literals.is_some() {
            return self.key_name(self.value_key(v));
        }
        Some(
            self.values
                .name(v.0 - 1)
                .map_or_else(|| v.to_string(), str::to_owned),
        )
    }
    /// The interned name of a non-NULL value, borrowed (`None` for NULL or a value never
    /// interned, and in a literal table for a name that is its own key).
    #[inline]
    pub fn interned_value(&self, v: Value) -> Option<&str> {
        if v.is_null() {
            return None;
        }
        let v = match &self.literals {
            None => v,
            Some(l) => l.key(v.0).as_id()?,
        };
        self.values.name(v.0 - 1)
    }
    /// The value's name, `NULL` for NULL (for human-readable output).
    pub fn value_display(&self, v: Value) -> String {
        self.value_name(v).unwrap_or_else(|| "NULL".to_owned())
    }
    /// Number of non-NULL values interned (in a literal table, of long names).
    pub fn value_count(&self) -> usize {
        self.values.len()
    }
    /// How many more values fit before the value table grows (doubles its slots).
    pub fn value_room(&self) -> usize {
        self.values.room()
    }
    /// Makes room for `more` values of `bytes` bytes in all ([`Interner::reserve`]).
    pub fn reserve_values(&mut self, more: usize, bytes: usize) {
        self.values.reserve(more, bytes);
    }
    /// The bytes of the value names interned.
    pub fn value_bytes(&self) -> usize {
        self.values.text.len()
    }
    /// Keeps only the values for which `keep` holds (value ids, NULL excluded), renumbered in
    /// their old order; returns the new value of each old one ([`ValueRenumbering::get`]:
    /// `None` if dropped; NULL maps to NULL). For long streams whose values are mostly
    /// fresh: the table then holds what is live, not the history.
    pub fn retain_values(&mut self, keep: impl Fn(Value) -> bool) -> ValueRenumbering {
        ValueRenumbering(self.values.retain(|id| keep(Value(id + 1))))
    }
    /// Forgets every name, keeping the allocations.
    pub fn clear(&mut self) {
        for t in [
            &mut self.agents,
            &mut self.cells,
            &mut self.tools,
            &mut self.replicas,
            &mut self.values,
        ] {
            t.clear();
        }
        self.clear_literals();
    }

    /// Looks up a value by name without interning (in a table that is not literal).
    pub fn find_value(&self, name: &str) -> Option<Value> {
        assert!(self.literals.is_none(), "find_value on a literal table");
        self.values.get(name).map(|id| Value(id + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value id is a key and back; a literal table gives equal names one id, keeps short
    /// names as their keys and interns long ones, and names each as it was written.
    #[test]
    fn a_literal_table_names_values_by_key() {
        assert_eq!(ValueKey::id(Value(7)).as_id(), Some(Value(7)));
        assert_eq!(ValueKey::id(Value::NULL), ValueKey::NULL);
        assert_eq!(ValueKey::literal("x").and_then(ValueKey::as_id), None);
        let mut n = Names::with_literal_values();
        let long = "a value too long to be its own key";
        let (a, b) = (n.value("short"), n.value(long));
        assert_eq!((n.value("short"), n.value(long)), (a, b));
        assert_ne!(a, b);
        assert_eq!(n.value_key(a), ValueKey::literal("short").expect("short"));
        assert_eq!(
            n.value_key(b),
            ValueKey::id(Value(1)),
            "the first long name"
        );
        assert_eq!(n.value_count(), 1, "only the long name is interned");
        for (v, name) in [(a, "short"), (b, long)] {
            assert_eq!(n.value_name(v).as_deref(), Some(name));
            assert_eq!(n.key_name(n.value_key(v)).as_deref(), Some(name));
        }
        assert_eq!(n.interned_value(b), Some(long));
        assert_eq!(n.interned_value(a), None);
        n.clear_literals();
        assert_eq!(n.value("again"), Value(1));
    }

    #[test]
    fn interning_is_dense_and_stable() {
        let mut n = Names::new();
        assert_eq!(n.cell("doc"), Cell(0));
        assert_eq!(n.cell("review"), Cell(1));
        assert_eq!(n.cell("doc"), Cell(0));
        assert_eq!(n.value("x"), Value(1));
        assert_eq!(n.value_name(Value::NULL), None);
        assert_eq!(n.value_name(Value(1)).as_deref(), Some("x"));
        assert_eq!(n.cell_name(Cell(1)), "review");
    }

    #[test]
    fn a_growing_table_keeps_every_id() {
        let mut t = Interner::default();
        for k in 0..10_000 {
            assert_eq!(t.intern(&format!("n{k}")), k);
        }
        for k in (0..10_000).rev() {
            assert_eq!(t.get(&format!("n{k}")), Some(k));
            assert_eq!(t.name(k), Some(format!("n{k}").as_str()));
        }
        assert_eq!(t.get("n10000"), None);
        assert_eq!(t.intern(""), 10_000);
        assert_eq!(t.get(""), Some(10_000));
        let map = t.retain(|id| id % 2 == 1);
        assert_eq!((map.get(3), map.get(4), t.len()), (Some(1), None, 5_000));
        assert_eq!(
            (map.get(10_000), map.get(10_001), map.kept()),
            (None, None, 5_000)
        );
        assert_eq!(t.get("n3"), Some(1));
        let mut n = Names::new();
        let (a, b) = (n.value("a"), n.value("b"));
        let map = n.retain_values(|v| v == b);
        assert_eq!(
            (map.get(Value::NULL), map.get(a), map.get(b)),
            (Some(Value::NULL), None, Some(a))
        );
        assert_eq!(n.find_value("b"), Some(Value(1)));
    }

    /// Retaining in place keeps the ids dense and in their old order, shrinks the slots to
    /// the kept names, and the table goes on growing from there as a fresh one would.
    #[test]
    fn retaining_in_place_is_a_fresh_table_of_the_kept_names() {
        let mut t = Interner::default();
        for k in 0..100_000u32 {
            t.intern(&format!("name-{k}"));
        }
        let big = t.slots.len();
        let keep = |id: u32| id % 1000 == 7 || id == 99_999;
        let map = t.retain(keep).to_vec();
        let mut fresh = Interner::default();
        for k in (0..100_000u32).filter(|&k| keep(k)) {
            assert_eq!(map[k as usize], Some(fresh.intern(&format!("name-{k}"))));
        }
        assert_eq!(map.iter().flatten().count(), 101);
        assert!(map
            .iter()
            .enumerate()
            .all(|(k, m)| m.is_some() == keep(k as u32)));
        assert_eq!(t, fresh);
        assert!(t.slots.len() < big / 100, "{} slots", t.slots.len());
        assert!(2 * t.len() < t.slots.len());
        for k in (0..100_000u32).filter(|&k| !keep(k)) {
            assert_eq!(t.get(&format!("name-{k}")), None);
        }
        assert_eq!(t.get("name-99999"), Some(100));
        assert_eq!(t.room(), t.slots.len() / 2 - 101);
        for k in 0..50_000u32 {
            let name = format!("again-{k}");
            assert_eq!(t.intern(&name), fresh.intern(&name));
        }
        assert_eq!(t, fresh);
        assert_eq!(t.get("again-49999"), Some(50_100));
        assert_eq!(t.retain(|_| false).to_vec(), vec![None; 50_101]);
        assert!(t.is_empty() && t.get("name-7").is_none());
    }

    /// A retain that keeps the slot table's size renumbers the slots in place
    /// (`renumber_slots`); over many rounds of dropping and adding, every kept name is found
    /// under its new id, no dropped one is found, and new names get a fresh table's ids.
    #[test]
    fn renumbering_in_place_keeps_every_chain() {
        let mut t = Interner::default();
        let mut fresh_names: Vec<String> = Vec::new();
        let mut next = 0u64;
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut kept_size = 0;
        for round in 0..40 {
            for _ in 0..3_000 {
                let name = format!("r{next}");
                next += 1;
                assert_eq!(t.intern(&name) as usize, fresh_names.len());
                fresh_names.push(name);
            }
            let slots = t.slots.len();
            // Drop about one in eight, at random (xorshift), so the table keeps its size.
            let drop: Vec<bool> = (0..t.len())
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng.is_multiple_of(8)
                })
                .collect();
            let map = t.retain(|id| !drop[id as usize]).to_vec();
            kept_size += usize::from(t.slots.len() == slots);
            let kept: Vec<String> = fresh_names
                .iter()
                .zip(&drop)
                .filter(|(_, &d)| !d)
                .map(|(n, _)| n.clone())
                .collect();
            for (old, name) in fresh_names.iter().enumerate() {
                assert_eq!(t.get(name), map[old], "round {round}: {name}");
            }
            let mut fresh = Interner::default();
            for name in &kept {
                fresh.intern(name);
            }
            assert_eq!(t, fresh);
            fresh_names = kept;
        }
        assert!(
            kept_size >= 30,
            "{kept_size} of 40 rounds renumbered in place"
        );
    }

    /// The rank form is the list of new ids it stands for: every length around a word's
    /// edge, kept sets empty, full and scattered.
    #[test]
    fn a_renumbering_is_the_rank_among_the_kept() {
        let keeps: [&dyn Fn(u32) -> bool; 5] = [
            &|_| false,
            &|_| true,
            &|id| id % 3 == 0,
            &|id| id % 64 == 63,
            &|id| id.wrapping_mul(2_654_435_761) >> 7 & 1 == 1,
        ];
        for len in [0, 1, 2, 63, 64, 65, 127, 128, 129, 1000] {
            for keep in keeps {
                let map = Renumbering::of(len, keep);
                let mut next = 0;
                let want: Vec<Option<u32>> = (0..len as u32)
                    .map(|id| {
                        keep(id).then(|| {
                            next += 1;
                            next - 1
                        })
                    })
                    .collect();
                assert_eq!(map.to_vec(), want, "len {len}");
                assert_eq!(map.kept(), next as usize);
                assert_eq!((map.len(), map.is_empty()), (len, len == 0));
                assert_eq!(map.get(len as u32), None);
                assert_eq!(map.get(u32::MAX), None);
            }
        }
    }
}
