//! The fast path of the line reader: a schema-directed scanner over a line's bytes.
//!
//! [`super::json`] builds a generic tree of the line and [`super::read`] walks it key by key;
//! that is the spec form, and the only place an error message is made. This scanner reads
//! the keys the schema knows straight into byte ranges (strings without escapes are ranges
//! of the line, integers are parsed as they are scanned), with no tree and no allocation
//! once its scratch vectors are warm, and then interns the names in the spec form's order
//! ([`super::read`]'s `FIELD_ORDER`: `aborted`, `agent`, `co`, `io`, …; the entries of an
//! object sorted by name, a value before its cell), so every id is the one the spec form
//! assigns.
//!
//! It declines (returns `false`) whenever it meets anything outside the common shape: an
//! escape or control character in a string, a number that is not a plain integer, replica
//! metadata, an unknown, duplicate or missing key, a value of the wrong type, trailing
//! text. Declining before any name is interned leaves the name tables untouched; after
//! interning it declines only where the line is certainly an error (a tool twice in a
//! registry, a cell twice in a value map, `read_time` after `write_time`, a `co` that is not
//! a permutation of `io`, a pred that is not earlier), and then the spec form reports it,
//! whatever the tables hold. So the reader's result, records and errors alike, is the spec
//! form's: `models/tests/jsonl_fast.rs` checks it on generated, mutated and hostile lines.
//! A decline says nothing about the line: the spec form decides.

use super::fields::{is_permutation, reset, slot};
use agentsim_models::names::{Agent, Cell, Interner, Names, Tool, Value};
use agentsim_models::record::{normalize_set, OpRecord, Registry, ToolEntry, ValueMap};

/// A string without escapes: bytes `.0..1` of the line.
#[derive(Clone, Copy, Debug, Default)]
struct Str(u32, u32);

/// A value position: a string, or `None` for JSON `null`.
type Val = Option<Str>;

/// A range of one of the scratch vectors.
type Span = (u32, u32);

/// The reusable state of the scanner (kept warm from line to line).
#[derive(Default)]
pub(crate) struct Scanner {
    cells: Vec<Str>,
    pairs: Vec<(Str, Val)>,
    tools: Vec<(Str, u32)>,
    preds: Vec<u64>,
    order: Vec<u32>,
    recent_agents: Recent,
    recent_cells: Recent,
    recent_tools: Recent,
    /// The values this line has interned so far, by [`short_key`]: a line names each fresh
    /// value three times (`co`, `io`, `write_values`). Emptied at every line, so it never
    /// outlives a renumbering of the values.
    line_values: Vec<(u128, Value)>,
}

/// A name of at most 15 bytes (`text[s]`) as one number, read from the line in one go where
/// the line has 16 bytes from its start; 0x80 | len in the top byte (so no key is 0).
#[inline(always)]
fn short_key(text: &str, s: Str) -> Option<u128> {
    let (from, to) = (s.0 as usize, s.1 as usize);
    let len = to - from;
    let w = text.as_bytes().get(from..from + 16)?;
    if len >= 16 {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(w[at..at + 8].try_into().expect("8 bytes"));
    // The low `n` bytes of a word (none for 0, all for 8), in two halves: no 128-bit shift.
    let keep = |n: usize| u64::MAX.checked_shr(64 - 8 * n as u32).unwrap_or(0);
    let (lo, hi) = match len {
        0..=8 => (word(0) & keep(len), 0),
        _ => (word(0), word(8) & keep(len - 8)),
    };
    Some(u128::from(lo) | u128::from(hi | ((0x80 | len as u64) << 56)) << 64)
}

/// `text[a]` against `text[b]` in the order of their bytes (`str`'s order). Two names with
/// short keys compare as their keys with the bytes reversed: the first byte is then the most
/// significant, a name's padding is zeros, and a scanned name holds no zero byte (a control
/// character declines), so a shorter name that is a prefix of the other is less; the length
/// in the last byte decides nothing that the bytes have not.
#[inline]
fn name_cmp(text: &str, a: Str, b: Str) -> std::cmp::Ordering {
    match (short_key(text, a), short_key(text, b)) {
        (Some(ka), Some(kb)) => ka.swap_bytes().cmp(&kb.swap_bytes()),
        _ => text[a.0 as usize..a.1 as usize].cmp(&text[b.0 as usize..b.1 as usize]),
    }
}

/// The ids of names seen lately (up to 15 bytes), in a direct-mapped table: a line names
/// the same few cells many times, and a history has few agents, cells and tools. Valid for
/// one name table: [`Scanner::forget_names`] empties it when the reader's tables change.
/// Values are not kept here: a caller may renumber them between lines (`retain_values`).
#[derive(Clone)]
struct Recent {
    /// Arrays, not vectors: a slot (a byte of the hash) is in bounds with no test.
    keys: Box<[u128; RECENT]>,
    ids: Box<[u32; RECENT]>,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            keys: Box::new([0; RECENT]),
            ids: Box::new([0; RECENT]),
        }
    }
}

/// Entries of a [`Recent`] table.
const RECENT: usize = 256;

impl Recent {
    /// The id of `text[s]` in `table` (interned if new).
    #[inline(always)]
    fn id(&mut self, table: &mut Interner, text: &str, s: Str) -> u32 {
        let (from, to) = (s.0 as usize, s.1 as usize);
        let Some(key) = short_key(text, s) else {
            return table.intern(&text[from..to]);
        };
        let fold = (key as u64) ^ ((key >> 64) as u64);
        let slot = (fold.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % RECENT;
        if self.keys[slot] == key {
            return self.ids[slot];
        }
        self.miss(table, &text[from..to], key, slot)
    }

    /// A name not in its slot: interned, and put there.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, table: &mut Interner, name: &str, key: u128, slot: usize) -> u32 {
        let id = table.intern(name);
        (self.keys[slot], self.ids[slot]) = (key, id);
        id
    }

    fn clear(&mut self) {
        self.keys.fill(0);
    }
}

/// Where each key's value was found on the line.
#[derive(Clone, Copy, Debug, Default)]
struct Fields {
    seen: u16,
    agent: Str,
    planned_tool: Val,
    read_time: u64,
    write_time: u64,
    write_time_at: u32,
    aborted: bool,
    read_set: Span,
    write_set: Span,
    read_values: Span,
    write_values: Span,
    io: Span,
    co: Span,
    read_registry: (Span, Span),
    write_registry: (Span, Span),
    /// Each registry's text was the last registry's (the memo's, before this line).
    registry_hits: [bool; 2],
    preds: Span,
    /// The bytes of `io`'s value, and whether `co`'s were the same (then `co` is not
    /// scanned: its effects are `io`'s).
    io_text: Span,
    co_is_io: bool,
}

/// What the spec form's checks need beside the line.
pub(crate) struct Context<'a> {
    /// A pred must be below this (the record's 0-based index).
    pub pred_limit: u64,
    /// The last registry parsed, by its raw text (shared with the spec form).
    pub last_registry: &'a mut (String, Registry),
    /// Scratch for the permutation check.
    pub effects: &'a mut Vec<(agentsim_models::names::Cell, Value)>,
}

/// Each key of [`super::KEYS`] as it appears in a written line: quoted, with its colon.
const KEY_LITERALS: [&str; 16] = [
    "\"agent\":",
    "\"read_set\":",
    "\"read_values\":",
    "\"read_registry\":",
    "\"planned_tool\":",
    "\"read_time\":",
    "\"write_set\":",
    "\"write_values\":",
    "\"write_registry\":",
    "\"write_time\":",
    "\"io\":",
    "\"co\":",
    "\"aborted\":",
    "\"preds\":",
    "\"read_replica\":",
    "\"read_version\":",
];

/// Whether `hay` starts with `lit`, compared a word at a time in line: keys are short, and a
/// call to the library's `memcmp` for each of a line's fourteen keys cost more than the
/// comparison.
#[inline]
fn has_prefix(hay: &[u8], lit: &[u8]) -> bool {
    let n = lit.len();
    if hay.len() < n {
        return false;
    }
    let w8 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let w4 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    match n {
        0..4 => hay[..n] == *lit,
        4..8 => w4(hay, 0) == w4(lit, 0) && w4(hay, n - 4) == w4(lit, n - 4),
        _ => {
            let mut at = 0;
            while at + 8 < n {
                if w8(hay, at) != w8(lit, at) {
                    return false;
                }
                at += 8;
            }
            w8(hay, n - 8) == w8(lit, n - 8)
        }
    }
}

/// The id of value `v` of the line `text` (interned if new), looked up first among the
/// values the line has already interned (`seen`).
#[inline(always)]
fn line_value(seen: &mut Vec<(u128, Value)>, names: &mut Names, text: &str, v: Val) -> Value {
    let Some(s) = v else { return Value::NULL };
    let name = &text[s.0 as usize..s.1 as usize];
    let Some(key) = short_key(text, s) else {
        return names.value(name);
    };
    if let Some(&(_, id)) = seen.iter().find(|(k, _)| *k == key) {
        return id;
    }
    // The short key is the literal key a literal table wants (`agentsim_models::value_key`).
    let id = names.value_with_key(name, key);
    seen.push((key, id));
    id
}

/// Bit of each required key in [`Fields::seen`] (slots of [`super::KEYS`]).
const REQUIRED_MASK: u16 = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 9;

impl Scanner {
    /// Forgets the ids of recent names (the next line is interned into other tables).
    pub(crate) fn forget_names(&mut self) {
        self.recent_agents.clear();
        self.recent_cells.clear();
        self.recent_tools.clear();
    }

    /// Parses `text` into `rec` the way the spec form would, or returns `None` (declined:
    /// let the spec form decide). `Some(offset)` is the byte offset of `write_time`'s value.
    pub(crate) fn parse(
        &mut self,
        text: &str,
        names: &mut Names,
        rec: &mut OpRecord,
        cx: Context<'_>,
    ) -> Option<u32> {
        self.clear();
        let f = self.scan(text.as_bytes(), cx.last_registry.0.as_bytes())?;
        if f.seen & REQUIRED_MASK != REQUIRED_MASK {
            return None;
        }
        // From here names are interned: decline only where the line is certainly an error.
        self.fill(text, &f, names, rec, cx)?;
        Some(f.write_time_at)
    }

    /// Phase one: the whole line scanned and checked against the grammar and the schema's
    /// types, nothing interned.
    fn scan(&mut self, b: &[u8], memo: &[u8]) -> Option<Fields> {
        if b.len() >= u32::MAX as usize {
            return None;
        }
        // Three tries, cheapest first. (1) In the writer's order of keys, with no key to
        // look up. (2) Keys in any order, still with no whitespace test at each token: a
        // line our writer wrote has none between tokens. Such a scan accepts exactly the
        // lines without whitespace between tokens, with the fields the scan that skips it
        // finds (whitespace is no token, so it stops the first at once: a writer that puts
        // spaces after its colons costs a dozen bytes of the first key). (3) Only when some
        // byte could be whitespace, the line again, skipping it.
        if let Some(f) = self.scan_in_order(Cursor::<false> { b, p: 0 }, memo) {
            return Some(f);
        }
        self.clear();
        if let Some(f) = self.scan_in(Cursor::<false> { b, p: 0 }, memo) {
            return Some(f);
        }
        if !b.iter().any(|&c| c <= b' ') {
            return None;
        }
        self.clear();
        self.scan_in(Cursor::<true> { b, p: 0 }, memo)
    }

    /// [`Scanner::scan_in`] for a line whose fourteen keys come in the writer's order
    /// ([`super::KEYS`]) with no whitespace: each key is compared with the one expected
    /// there, commas and braces included, and its value read by its own arm of
    /// [`Scanner::value`], so that no key is looked up and none is checked for a repeat.
    /// Declines every other line, which [`Scanner::scan_in`] then reads: on the lines both
    /// accept, they find the same fields.
    fn scan_in_order(&mut self, mut s: Cursor<'_, false>, memo: &[u8]) -> Option<Fields> {
        let mut f = Fields::default();
        macro_rules! keys {
            ($($k:literal $lit:literal),*) => {$(
                if !has_prefix(&s.b[s.p..], $lit) {
                    return None;
                }
                s.p += $lit.len();
                self.value(&mut s, $k, &mut f, memo)?;
            )*};
        }
        keys!(
            0 b"{\"agent\":", 1 b",\"read_set\":", 2 b",\"read_values\":",
            3 b",\"read_registry\":", 4 b",\"planned_tool\":", 5 b",\"read_time\":",
            6 b",\"write_set\":", 7 b",\"write_values\":", 8 b",\"write_registry\":",
            9 b",\"write_time\":", 10 b",\"io\":", 11 b",\"co\":", 12 b",\"aborted\":",
            13 b",\"preds\":"
        );
        f.seen = (1 << 14) - 1;
        (s.p + 1 == s.b.len() && s.b[s.p] == b'}').then_some(f)
    }

    /// Empties the scratch vectors of a scan.
    fn clear(&mut self) {
        self.cells.clear();
        self.pairs.clear();
        self.tools.clear();
        self.preds.clear();
    }

    fn scan_in<const WS: bool>(&mut self, mut s: Cursor<'_, WS>, memo: &[u8]) -> Option<Fields> {
        let b = s.b;
        let mut f = Fields::default();
        s.eat(b'{')?;
        if s.peek()? == b'}' {
            return None;
        }
        // Keys mostly come in the writer's order: the next one is tried as a literal first.
        let mut next = 0;
        loop {
            let k = match KEY_LITERALS.get(next) {
                Some(lit) if has_prefix(&b[s.p..], lit.as_bytes()) => {
                    s.p += lit.len();
                    next
                }
                _ => {
                    let key = s.string()?;
                    s.eat(b':')?;
                    slot(&b[key.0 as usize..key.1 as usize])?
                }
            };
            next = k + 1;
            let bit = 1u16 << k;
            if f.seen & bit != 0 {
                return None;
            }
            f.seen |= bit;
            self.value(&mut s, k, &mut f, memo)?;
            match s.peek()? {
                b',' => s.p += 1,
                b'}' => {
                    s.p += 1;
                    break;
                }
                _ => return None,
            }
        }
        s.ws();
        (s.p == b.len()).then_some(f)
    }

    /// The value of key slot `k`.
    #[inline(always)]
    fn value<const WS: bool>(
        &mut self,
        s: &mut Cursor<'_, WS>,
        k: usize,
        f: &mut Fields,
        memo: &[u8],
    ) -> Option<()> {
        match k {
            0 => f.agent = s.string()?,
            1 => f.read_set = self.cell_list(s)?,
            2 => f.read_values = self.value_map(s)?,
            3 => (f.read_registry, f.registry_hits[0]) = self.registry(s, memo)?,
            4 => f.planned_tool = s.val()?,
            5 => f.read_time = s.uint()?,
            6 => f.write_set = self.cell_list(s)?,
            7 => f.write_values = self.value_map(s)?,
            8 => (f.write_registry, f.registry_hits[1]) = self.registry(s, memo)?,
            9 => {
                s.ws();
                f.write_time_at = s.p as u32;
                f.write_time = s.uint()?;
            }
            10 => {
                s.ws();
                let from = s.p as u32;
                f.io = self.effects(s)?;
                f.io_text = (from, s.p as u32);
            }
            11 => {
                // Most lines complete their effects in the order they issued them: the same
                // text twice, scanned once.
                s.ws();
                let io = &s.b[f.io_text.0 as usize..f.io_text.1 as usize];
                if !io.is_empty() && s.b[s.p..].starts_with(io) {
                    s.p += io.len();
                    f.co_is_io = true;
                } else {
                    f.co = self.effects(s)?;
                }
            }
            12 => f.aborted = s.boolean()?,
            13 => {
                let from = self.preds.len() as u32;
                s.array(|s| {
                    self.preds.push(s.uint()?);
                    Some(())
                })?;
                f.preds = (from, self.preds.len() as u32);
            }
            // Replica metadata: rare, and checked across keys; the spec form reads it.
            _ => return None,
        }
        Some(())
    }

    fn cell_list<const WS: bool>(&mut self, s: &mut Cursor<'_, WS>) -> Option<Span> {
        let from = self.cells.len() as u32;
        s.array(|s| {
            self.cells.push(s.string()?);
            Some(())
        })?;
        Some((from, self.cells.len() as u32))
    }

    fn value_map<const WS: bool>(&mut self, s: &mut Cursor<'_, WS>) -> Option<Span> {
        let from = self.pairs.len() as u32;
        s.object(|s, key| {
            let v = s.val()?;
            self.pairs.push((key, v));
            Some(())
        })?;
        Some((from, self.pairs.len() as u32))
    }

    fn effects<const WS: bool>(&mut self, s: &mut Cursor<'_, WS>) -> Option<Span> {
        let from = self.pairs.len() as u32;
        s.array(|s| {
            s.eat(b'[')?;
            let cell = s.string()?;
            s.eat(b',')?;
            let v = s.val()?;
            s.eat(b']')?;
            self.pairs.push((cell, v));
            Some(())
        })?;
        Some((from, self.pairs.len() as u32))
    }

    /// A registry: its entries, and its raw text (for the memo of the last registry). The
    /// text of the last registry read (`memo`, valid JSON) is skipped unscanned: a JSON
    /// value's bytes determine where it ends.
    fn registry<const WS: bool>(
        &mut self,
        s: &mut Cursor<'_, WS>,
        memo: &[u8],
    ) -> Option<((Span, Span), bool)> {
        s.ws();
        let (raw, from) = (s.p as u32, self.tools.len() as u32);
        if !memo.is_empty() && s.b[s.p..].starts_with(memo) {
            s.p += memo.len();
            return Some((((from, from), (raw, s.p as u32)), true));
        }
        s.array(|s| {
            let entry = match s.peek()? {
                b'"' => (s.string()?, 0),
                _ => tool_object(s)?,
            };
            self.tools.push(entry);
            Some(())
        })?;
        Some((((from, self.tools.len() as u32), (raw, s.p as u32)), false))
    }

    /// Phase two: names interned in the spec form's order, the record filled.
    fn fill(
        &mut self,
        text: &str,
        f: &Fields,
        names: &mut Names,
        rec: &mut OpRecord,
        cx: Context<'_>,
    ) -> Option<()> {
        reset(rec);
        rec.aborted = f.aborted;
        rec.agent = Agent(self.recent_agents.id(&mut names.agents, text, f.agent));
        let pairs = &self.pairs;
        self.line_values.clear();
        let seen = &mut self.line_values;
        // `co` before `io`, as the spec form interns them; a `co` whose text is `io`'s names
        // nothing `io` does not, in the same order.
        for (span, out) in [(f.co, &mut rec.co), (f.io, &mut rec.io)] {
            for &(c, v) in &pairs[span.0 as usize..span.1 as usize] {
                let cell = Cell(self.recent_cells.id(&mut names.cells, text, c));
                out.push((cell, line_value(seen, names, text, v)));
            }
        }
        if f.co_is_io {
            rec.co.clone_from(&rec.io);
        }
        if let Some(s) = f.planned_tool {
            rec.planned_tool = Some(Tool(self.recent_tools.id(&mut names.tools, text, s)));
        }
        for &p in &self.preds[f.preds.0 as usize..f.preds.1 as usize] {
            if p >= cx.pred_limit {
                return None;
            }
            rec.preds.push(p as u32);
        }
        normalize_set(&mut rec.preds);
        let memo = cx.last_registry;
        // A write registry that was the memo's text when scanned: taken before the read
        // registry can replace the memo (its entries were not scanned).
        let [read_hit, write_hit] = f.registry_hits;
        let write_first = write_hit && !read_hit && f.read_registry.1 != (0, 0);
        if write_first {
            rec.write_registry.clone_from(&memo.1);
        }
        self.registry_into(text, f.read_registry, names, &mut rec.read_registry, memo)?;
        self.cells_into(text, f.read_set, names, &mut rec.read_set);
        rec.read_time = f.read_time;
        self.map_into(text, f.read_values, names, &mut rec.read_values)?;
        if !write_first {
            self.registry_into(text, f.write_registry, names, &mut rec.write_registry, memo)?;
        }
        self.cells_into(text, f.write_set, names, &mut rec.write_set);
        rec.write_time = f.write_time;
        self.map_into(text, f.write_values, names, &mut rec.write_values)?;
        if rec.read_time > rec.write_time {
            return None;
        }
        is_permutation(&rec.io, &rec.co, cx.effects).then_some(())
    }

    fn cells_into(&mut self, text: &str, span: Span, names: &mut Names, out: &mut Vec<Cell>) {
        for &c in &self.cells[span.0 as usize..span.1 as usize] {
            out.push(Cell(self.recent_cells.id(&mut names.cells, text, c)));
        }
        normalize_set(out);
    }

    /// A value map's entries in name order (a value before its cell); a name twice declines.
    fn map_into(
        &mut self,
        text: &str,
        span: Span,
        names: &mut Names,
        out: &mut ValueMap,
    ) -> Option<()> {
        let t = |s: Str| &text[s.0 as usize..s.1 as usize];
        let pairs = &self.pairs[span.0 as usize..span.1 as usize];
        self.order.clear();
        self.order.extend(0..pairs.len() as u32);
        if pairs.len() == 2 {
            // Most maps have one or two entries: two names compared once, by key when short.
            match name_cmp(text, pairs[0].0, pairs[1].0) {
                std::cmp::Ordering::Equal => return None,
                std::cmp::Ordering::Greater => self.order.reverse(),
                std::cmp::Ordering::Less => {}
            }
        } else if pairs.len() > 2 {
            self.order
                .sort_by(|&a, &b| t(pairs[a as usize].0).cmp(t(pairs[b as usize].0)));
            let same = |w: &[u32]| t(pairs[w[0] as usize].0) == t(pairs[w[1] as usize].0);
            if self.order.windows(2).any(same) {
                return None;
            }
        }
        for &i in &self.order {
            let (cell, v) = self.pairs[i as usize + span.0 as usize];
            let value = line_value(&mut self.line_values, names, text, v);
            out.set(
                Cell(self.recent_cells.id(&mut names.cells, text, cell)),
                value,
            );
        }
        Some(())
    }

    /// A registry, or the last one again when its raw text is the same; a tool twice declines.
    fn registry_into(
        &mut self,
        text: &str,
        (span, raw): (Span, Span),
        names: &mut Names,
        out: &mut Registry,
        memo: &mut (String, Registry),
    ) -> Option<()> {
        if raw == (0, 0) {
            return Some(());
        }
        let raw = &text[raw.0 as usize..raw.1 as usize];
        if memo.0 == raw {
            out.clone_from(&memo.1);
            return Some(());
        }
        for i in span.0 as usize..span.1 as usize {
            let (tool, version) = self.tools[i];
            let tool = Tool(self.recent_tools.id(&mut names.tools, text, tool));
            if out.contains(tool) {
                return None;
            }
            out.insert(ToolEntry { tool, version });
        }
        memo.0.clear();
        memo.0.push_str(raw);
        memo.1.clone_from(out);
        Some(())
    }
}

/// `{"tool": name, "version": n}` (either order, `version` optional, below 2^32).
fn tool_object<const WS: bool>(s: &mut Cursor<'_, WS>) -> Option<(Str, u32)> {
    let (mut tool, mut version) = (None, None);
    let b = s.b;
    s.object(|s, key| {
        match &b[key.0 as usize..key.1 as usize] {
            b"tool" if tool.is_none() => tool = Some(s.string()?),
            b"version" if version.is_none() => version = Some(u32::try_from(s.uint()?).ok()?),
            _ => return None,
        }
        Some(())
    })?;
    Some((tool?, version.unwrap_or(0)))
}

/// Whether a string ends, or leaves the fast path, at byte `c`: a quote, an escape, a control.
#[inline]
fn is_stop(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

/// The offset of the first [`is_stop`] byte among the first eight of `rest`, tested as one
/// word (most names are shorter than eight bytes); `None` when `rest` is shorter than eight
/// or none of the eight stops (then the caller looks byte by byte). A byte's high bit is
/// kept out of each test, so no borrow crosses from one byte into the next: a byte stops
/// where its low seven bits are a quote, a backslash or below 0x20, and its own high bit is
/// clear.
#[inline]
fn stop_in_word(rest: &[u8]) -> Option<usize> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let w = u64::from_le_bytes(rest.get(..8)?.try_into().expect("8 bytes"));
    let low = w & LOW7;
    // Per byte (seven bits, plus the high bit as a carry-out): high bit set where the byte
    // is zero, i.e. where `low` equals the byte tested for.
    let zero = |x: u64| !((x & LOW7) + LOW7) & HIGH;
    let quote = zero(low ^ (ONES * u64::from(b'"')));
    let slash = zero(low ^ (ONES * u64::from(b'\\')));
    // High bit set where the seven low bits are below 0x20.
    let control = !(low + ONES * (0x80 - 0x20)) & HIGH;
    let stops = (quote | slash | control) & !w & HIGH;
    (stops != 0).then(|| stops.trailing_zeros() as usize / 8)
}

/// A position in a line; `WS`: whether the line may have whitespace between tokens (a line
/// with no space, tab or carriage return has none, and then no token skips any).
struct Cursor<'a, const WS: bool> {
    b: &'a [u8],
    p: usize,
}

impl<const WS: bool> Cursor<'_, WS> {
    /// Skips JSON whitespace (a line written by our writer has none, so the first byte is
    /// tested alone: anything above a space is not whitespace).
    #[inline]
    fn ws(&mut self) {
        if !WS || self.b.get(self.p).is_some_and(|&c| c > b' ') {
            return;
        }
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.b.get(self.p) {
            self.p += 1;
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.p).copied()
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.p += 1)
    }

    /// A string with no escape and no control character.
    #[inline(always)]
    fn string(&mut self) -> Option<Str> {
        self.eat(b'"')?;
        let from = self.p;
        let rest = self.b.get(from..)?;
        let len = match stop_in_word(rest) {
            Some(len) => len,
            None => rest.iter().position(|&c| is_stop(c))?,
        };
        if rest[len] != b'"' {
            return None;
        }
        self.p = from + len + 1;
        Some(Str(from as u32, (from + len) as u32))
    }

    /// A string or `null`.
    #[inline(always)]
    fn val(&mut self) -> Option<Val> {
        match self.peek()? {
            b'n' => self.word(b"null").map(|()| None),
            _ => self.string().map(Some),
        }
    }

    fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.word(b"true").map(|()| true),
            _ => self.word(b"false").map(|()| false),
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        let ok = self.b.get(self.p..self.p + w.len()) == Some(w);
        ok.then(|| self.p += w.len())
    }

    /// A plain non-negative integer (no sign, fraction, exponent or leading zero) in u64.
    #[inline]
    fn uint(&mut self) -> Option<u64> {
        self.ws();
        let from = self.p;
        let mut n: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = self.b.get(self.p) {
            n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            self.p += 1;
        }
        let len = self.p - from;
        let leading_zero = len > 1 && self.b[from] == b'0';
        (len > 0 && !leading_zero).then_some(n)
    }

    /// `[` items `]`, comma-separated.
    #[inline]
    fn array(&mut self, item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.list(b'[', b']', item)
    }

    /// `{` key `:` value … `}`; `entry` reads each value, given its key.
    #[inline]
    fn object(&mut self, mut entry: impl FnMut(&mut Self, Str) -> Option<()>) -> Option<()> {
        self.list(b'{', b'}', |s| {
            let key = s.string()?;
            s.eat(b':')?;
            entry(s, key)
        })
    }

    /// `open` items `close`, comma-separated, each read by `item`.
    #[inline]
    fn list(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.p += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.p += 1,
                c if c == close => {
                    self.p += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{
        has_prefix, is_stop, name_cmp, short_key, stop_in_word, Cursor, Scanner, Str, KEY_LITERALS,
    };

    /// What one scan found: the fields and the scratch they point into.
    fn scanned(sc: &Scanner, f: Option<super::Fields>) -> String {
        let cells: Vec<_> = sc.cells.iter().map(|s| (s.0, s.1)).collect();
        let pairs: Vec<_> = sc
            .pairs
            .iter()
            .map(|(a, b)| ((a.0, a.1), b.map(|v| (v.0, v.1))))
            .collect();
        let tools: Vec<_> = sc.tools.iter().map(|(s, v)| (s.0, s.1, *v)).collect();
        format!("{f:?} {cells:?} {pairs:?} {tools:?} {:?}", sc.preds)
    }

    /// The scan in the writer's key order finds what the general scan finds, on every line
    /// it accepts, and it accepts the writer's lines: null and tool names, tool objects,
    /// empty and two-entry maps, a `co` that is or is not `io`'s text, a memo hit; and it
    /// declines lines that differ in order, spacing, keys or the text after the brace.
    #[test]
    fn the_scan_in_order_is_the_general_scan() {
        let line = |tool: &str, reg: &str, co: &str, tail: &str| {
            format!(
                "{{\"agent\":\"a1\",\"read_set\":[\"c2\",\"c10\"],\"read_values\":\
                 {{\"c2\":\"v1\",\"c10\":null}},\"read_registry\":{reg},\"planned_tool\":{tool},\
                 \"read_time\":3,\"write_set\":[\"c1\"],\"write_values\":{{\"c1\":\"v9\"}},\
                 \"write_registry\":{reg},\"write_time\":12,\"io\":[[\"c1\",\"v9\"],[\"c2\",null]],\
                 \"co\":{co},\"aborted\":false,\"preds\":[0,2]{tail}"
            )
        };
        let regs = ["[\"t0\",\"t1\"]", "[{\"tool\":\"t0\",\"version\":2}]", "[]"];
        let cos = [
            "[[\"c1\",\"v9\"],[\"c2\",null]]",
            "[[\"c2\",null],[\"c1\",\"v9\"]]",
        ];
        let mut accepted = 0;
        for tool in ["null", "\"t1\""] {
            for reg in regs {
                for co in cos {
                    for tail in ["}", "}x", "", ",\"read_version\":1}", " }"] {
                        for memo in ["", reg] {
                            let text = line(tool, reg, co, tail);
                            let b = text.as_bytes();
                            let mut fast = Scanner::default();
                            let f =
                                fast.scan_in_order(Cursor::<false> { b, p: 0 }, memo.as_bytes());
                            let mut general = Scanner::default();
                            let g = general.scan_in(Cursor::<true> { b, p: 0 }, memo.as_bytes());
                            assert_eq!(f.is_some(), tail == "}", "{text}");
                            if f.is_some() {
                                accepted += 1;
                                assert_eq!(scanned(&fast, f), scanned(&general, g), "{text}");
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(accepted, 24);
        // Keys out of the writer's order: declined here, read by the general scan.
        let swapped = line("null", regs[0], cos[0], "}").replacen("\"read_set\"", "\"x\"", 1);
        let b = swapped.as_bytes();
        assert!(Scanner::default()
            .scan_in_order(Cursor::<false> { b, p: 0 }, b"")
            .is_none());
    }

    /// Two names compare as `str`s do: prefixes, equal names, bytes above 0x7f, names too
    /// long for a key, and names too near the end of the text for one.
    #[test]
    fn names_compare_as_strs() {
        let names = [
            "",
            "a",
            "b",
            "c1",
            "c10",
            "c1a",
            "c2",
            "\u{e9}",
            "a\u{e9}",
            "zzzzzzzzzzzzzzz",
            "zzzzzzzzzzzzzzzz",
            "zzzzzzzzzzzzzzz~",
        ];
        for x in names {
            for y in names {
                for pad in [0, 20] {
                    let text = format!("{x}\"{y}\"{}", "p".repeat(pad));
                    let a = Str(0, x.len() as u32);
                    let b = Str(x.len() as u32 + 1, (x.len() + 1 + y.len()) as u32);
                    assert_eq!(name_cmp(&text, a, b), x.cmp(y), "{x:?} {y:?} {pad}");
                }
            }
        }
    }

    /// A short key is the name's bytes, zero-extended, with 0x80 | its length in the top
    /// byte, for every length that has one and at every offset; none at 16 bytes or more,
    /// nor where the line has no 16 bytes from the name's start.
    #[test]
    fn short_keys_are_the_bytes_and_the_length() {
        let text: String = (0..40u8).map(|k| char::from(b'!' + (k * 7) % 90)).collect();
        for from in 0..text.len() {
            for len in 0..=(text.len() - from).min(20) {
                let got = short_key(&text, Str(from as u32, (from + len) as u32));
                let want = (len < 16 && from + 16 <= text.len()).then(|| {
                    let mut bytes = [0u8; 16];
                    bytes[..len].copy_from_slice(&text.as_bytes()[from..from + len]);
                    bytes[15] = 0x80 | len as u8;
                    u128::from_le_bytes(bytes)
                });
                assert_eq!(got, want, "{from}+{len}");
                // And it is the literal key of the name (what a literal table stores).
                if let Some(w) = want {
                    let key = agentsim_models::ValueKey::literal(&text[from..from + len]);
                    assert_eq!(key.map(|k| k.bits()), Some(w));
                }
            }
        }
    }

    /// The word test finds the first stop byte of eight, as the byte loop would: every byte
    /// value at every position, among fillers around each edge the bit tricks meet (a
    /// space, `!`, DEL, bytes with the high bit whose low seven bits are a quote or a
    /// backslash), and anything shorter than a word declines.
    #[test]
    fn a_word_stops_where_the_bytes_do() {
        let fillers = [
            b'a', b' ', b'!', 0x1f, 0x7f, 0x80, 0xa2, 0xdc, 0xff, b'"', b'\\',
        ];
        for filler in fillers {
            for at in 0..8 {
                for b in 0..=255u8 {
                    let mut word = [filler; 8];
                    word[at] = b;
                    let want = word.iter().position(|&c| is_stop(c));
                    assert_eq!(stop_in_word(&word), want, "{word:?}");
                    let mut longer = word.to_vec();
                    longer.push(b'"');
                    assert_eq!(stop_in_word(&longer), want, "{longer:?}");
                    assert_eq!(stop_in_word(&word[..7]), None);
                }
            }
        }
    }

    /// The word-at-a-time comparison is `starts_with`, for every key and every cut of lines
    /// that start with a key, with another, or with nothing like one.
    #[test]
    fn has_prefix_is_starts_with() {
        let line = "{\"agent\":\"a0\",\"read_set\":[],\"write_registry\":[],\"io\":[],\"co\":[]}";
        let mut hays: Vec<Vec<u8>> = KEY_LITERALS.iter().map(|k| k.as_bytes().to_vec()).collect();
        hays.extend((0..line.len()).map(|i| line.as_bytes()[i..].to_vec()));
        hays.push(b"\"write_registrx\":[".to_vec());
        hays.push(b"\"xo\":".to_vec());
        let lits: Vec<&[u8]> = KEY_LITERALS
            .iter()
            .map(|k| k.as_bytes())
            .chain([
                &b""[..],
                b"\"",
                b"\"io",
                b"\"agent\"",
                b"\"write_registry\":[]",
            ])
            .collect();
        for hay in &hays {
            for cut in 0..=hay.len() {
                for lit in &lits {
                    let h = &hay[..cut];
                    assert_eq!(has_prefix(h, lit), h.starts_with(lit), "{h:?} {lit:?}");
                }
            }
        }
    }
}
