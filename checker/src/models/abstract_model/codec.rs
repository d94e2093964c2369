//! A compact byte encoding of abstract states, canonical under the model's reductions: the
//! kept records in the least of their canonical commit orders
//! ([`Summary::canonical_orders`]) and, with symmetry, the in-flight slots sorted and the
//! least encoding over renamings of interchangeable cells. It is a function of the class
//! (the symmetry tests check it on every reachable state): fingerprints hash it, and a decoded
//! state is the class representative, which has the same futures and verdicts as every member.
//!
//! Layout (little-endian): memory u16, tools u8, versions u16, ops u8, sticky u8, latest u16,
//! produced u32; per agent slot `0` (idle) or `1` and 9 bytes; node count and 8 bytes per
//! node; entry count and 3 bytes per entry. Cells ≤ 4 keep every map within 16 bits. The
//! round-trip test shows it is injective on reachable states; it says nothing else.

use super::state::AbsState;
use agentsim_models::monitor::{
    remap, Entry, Node, Order, PendingSummary, Props, Summary, NODES_MAX,
};

const PENDING_BYTES: usize = 10;

fn pending_bytes(p: &Option<PendingSummary>, newpos: &[u8; 16]) -> [u8; PENDING_BYTES] {
    let mut b = [0u8; PENDING_BYTES];
    let Some(p) = p else { return b };
    let flags = u8::from(p.changed)
        | u8::from(p.newer) << 1
        | u8::from(p.stale) << 2
        | u8::from(p.l1_bad) << 3
        | u8::from(p.residue_bad) << 4
        | u8::from(p.dead_pred) << 5;
    let preds = remap(p.preds, newpos);
    b[0] = 1;
    b[1] = p.rs;
    b[2..4].copy_from_slice(&(p.rv as u16).to_le_bytes());
    b[4] = p.tool;
    b[5] = flags;
    b[6..8].copy_from_slice(&(p.depth as u16).to_le_bytes());
    b[8..10].copy_from_slice(&preds.to_le_bytes());
    b
}

/// The ways to rename cells that a canonical encoding minimizes over.
#[derive(Clone, Debug)]
pub struct CellPerms(Vec<Vec<u32>>);

impl CellPerms {
    /// Only the identity.
    pub fn none() -> CellPerms {
        CellPerms(Vec::new())
    }

    /// Every permutation of `0..cells` but the identity.
    pub fn all(cells: u32) -> CellPerms {
        let mut out = vec![Vec::new()];
        for c in 0..cells {
            out = out
                .into_iter()
                .flat_map(|p: Vec<u32>| {
                    (0..=p.len()).map(move |k| {
                        let mut q = p.clone();
                        q.insert(k, c);
                        q
                    })
                })
                .collect();
        }
        out.retain(|p| p.iter().enumerate().any(|(k, &c)| c != k as u32));
        CellPerms(out)
    }
}

fn perm_mask(m: u8, p: &[u32]) -> u8 {
    (0..p.len())
        .filter(|&c| m & (1 << c) != 0)
        .fold(0, |acc, c| acc | 1 << p[c])
}

fn perm_map(m: u32, p: &[u32], width: u32) -> u32 {
    let field = (1u32 << width) - 1;
    (0..p.len() as u32).fold(0, |acc, c| {
        acc | ((m >> (width * c)) & field) << (width * p[c as usize])
    })
}

/// `s` with cell `c` renamed `p[c]`, written over `t` (whose buffers are reused).
fn rename_into(s: &AbsState, p: &[u32], t: &mut AbsState) {
    t.clone_from(s);
    t.memory = perm_map(s.memory, p, 4);
    let sm = &mut t.summary;
    sm.latest = perm_map(sm.latest, p, 4);
    sm.produced = u64::from(perm_map(sm.produced as u32, p, 8));
    for q in sm.pending.iter_mut().flatten() {
        (q.rs, q.rv, q.depth) = (
            perm_mask(q.rs, p),
            perm_map(q.rv, p, 4),
            perm_map(q.depth, p, 4),
        );
    }
    for n in &mut sm.nodes {
        (n.ws, n.wv) = (perm_mask(n.ws, p), perm_map(n.wv, p, 4));
    }
    for e in &mut sm.entries {
        e.cell = p[usize::from(e.cell)] as u8;
    }
    sm.entries.sort_unstable();
}

/// A renaming-invariant description of cell `c` in `s`: equal states up to renaming give
/// renamed cells equal signatures, so sorting cells by it is a canonical first step.
fn signature(s: &AbsState, c: u32) -> (u32, u32, u32, u32, u32) {
    let sm = &s.summary;
    let bit = 1u8 << c;
    let (mut writers, mut both, mut readers, mut depth) = (0, 0, 0, 0);
    for n in sm.nodes.iter().filter(|n| n.ws & bit != 0) {
        writers += 1;
        both += u32::from(n.ws != bit) + 2 * ((n.wv >> (4 * c)) & 0xF);
    }
    for q in sm.pending.iter().flatten().filter(|q| q.rs & bit != 0) {
        readers += 1 + 16 * ((q.rv >> (4 * c)) & 0xF);
        depth += (q.depth >> (4 * c)) & 0xF;
    }
    let entries = sm.entries.iter().filter(|e| u32::from(e.cell) == c).count() as u32;
    let mem = ((s.memory >> (4 * c)) & 0xF) | ((sm.latest >> (4 * c)) & 0xF) << 4;
    (mem, writers, both, readers, depth * 64 + entries)
}

/// Buffers an encoder reuses from one state to the next (the explorer encodes every
/// successor it generates, so allocating per call shows in its profile).
#[derive(Debug)]
pub struct Scratch {
    renamed: AbsState,
    /// The best encoding so far over cell renamings, and the one being tried.
    best: Vec<u8>,
    alt: Vec<u8>,
    /// The same over candidate commit orders, inside one renaming.
    order_alt: Vec<u8>,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Scratch {
        Scratch {
            renamed: AbsState {
                summary: agentsim_models::monitor::Summary::new(0),
                memory: 0,
                tools: 0,
                versions: 0,
                ops: 0,
            },
            best: Vec::new(),
            alt: Vec::new(),
            order_alt: Vec::new(),
        }
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

/// Appends the canonical encoding of `s`: the least over `cells` renamings of
/// [`encode_one`]'s. Renamings that do not sort the cells' signatures cannot be least
/// among those that do, so only sorting ones are tried.
pub fn encode(s: &AbsState, symmetry: bool, cells: &CellPerms, out: &mut Vec<u8>) {
    encode_with(s, symmetry, cells, &mut Scratch::new(), out);
}

/// [`encode`] with buffers reused from `scratch`; the same bytes.
pub fn encode_with(
    s: &AbsState,
    symmetry: bool,
    cells: &CellPerms,
    scratch: &mut Scratch,
    out: &mut Vec<u8>,
) {
    if cells.0.is_empty() {
        encode_one_with(s, symmetry, &mut scratch.order_alt, out);
        return;
    }
    let n = cells.0[0].len();
    assert!(n <= 4, "at most 4 cells");
    let mut sig = [(0, 0, 0, 0, 0); 4];
    for (c, x) in sig.iter_mut().enumerate().take(n) {
        *x = signature(s, c as u32);
    }
    // Renaming p sends cell c to p[c]: it sorts if p[c] < p[d] whenever sig[c] < sig[d].
    let sorts = |p: &[u32]| (0..n).all(|c| (0..n).all(|d| sig[c] >= sig[d] || p[c] < p[d]));
    // The identity sorts exactly when the signatures are ascending already.
    let identity_sorts = (1..n).all(|c| sig[c - 1] <= sig[c]);
    let Scratch {
        renamed,
        best,
        alt,
        order_alt,
    } = scratch;
    let mut first = true;
    if identity_sorts {
        best.clear();
        encode_one_with(s, symmetry, order_alt, best);
        first = false;
    }
    for p in cells.0.iter().filter(|p| sorts(p)) {
        rename_into(s, p, renamed);
        // A renaming that maps `s` onto itself field by field encodes the same bytes (most
        // states of a model without values are such: their kept writers write every cell).
        if !first && *renamed == *s {
            continue;
        }
        let into = if first { &mut *best } else { &mut *alt };
        into.clear();
        encode_one_with(renamed, symmetry, order_alt, into);
        if !first && alt[..] < best[..] {
            std::mem::swap(best, alt);
        }
        first = false;
    }
    assert!(!first, "some renaming sorts the signatures");
    out.extend_from_slice(best);
}

/// Appends the encoding of `s` with its records in canonical order (`symmetry`: the
/// in-flight slots sorted): the least over the candidate orders of
/// [`Summary::canonical_orders`], which makes it a function of the summary up to reordering.
pub fn encode_one(s: &AbsState, symmetry: bool, out: &mut Vec<u8>) {
    encode_one_with(s, symmetry, &mut Vec::new(), out);
}

/// [`encode_one`] with `alt` as the buffer candidates are written into.
fn encode_one_with(s: &AbsState, symmetry: bool, alt: &mut Vec<u8>, out: &mut Vec<u8>) {
    let sm = &s.summary;
    assert!(
        s.memory >> 16 == 0 && sm.latest >> 16 == 0,
        "at most 4 cells"
    );
    assert!(sm.pending.len() <= 8, "at most 8 agents");
    let start = out.len();
    let mut first = true;
    sm.canonical_orders(&mut |o| {
        if first {
            encode_in(s, symmetry, o, out);
            first = false;
            return;
        }
        alt.clear();
        encode_in(s, symmetry, o, alt);
        if alt[..] < out[start..] {
            out.truncate(start);
            out.extend_from_slice(alt);
        }
    });
    assert!(!first, "a summary has a canonical order");
}

/// Appends the encoding of `s` with its records in `order`.
fn encode_in(s: &AbsState, symmetry: bool, order: &Order, out: &mut Vec<u8>) {
    let sm = &s.summary;
    // Everything but the entries fits a fixed buffer (≤ 8 slots, ≤ NODES_MAX nodes), written
    // at a cursor and appended once: the explorer encodes every successor it generates.
    let mut buf = [0u8; FIXED_MAX];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        buf[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    put(&(s.memory as u16).to_le_bytes());
    put(&[s.tools]);
    put(&s.versions.to_le_bytes());
    put(&[s.ops, sm.sticky.bits()]);
    put(&(sm.latest as u16).to_le_bytes());
    put(&(sm.produced as u32).to_le_bytes());
    let newpos = &order.newpos;
    let mut slots = [[0u8; PENDING_BYTES]; 8];
    let agents = sm.pending.len();
    for (slot, p) in slots.iter_mut().zip(&sm.pending) {
        *slot = pending_bytes(p, newpos);
    }
    if symmetry {
        slots[..agents].sort_unstable();
    }
    for b in &slots[..agents] {
        put(if b[0] == 0 { &b[..1] } else { &b[..] });
    }
    put(&[sm.nodes.len() as u8]);
    for &old in &order.order[..sm.nodes.len()] {
        let n = &sm.nodes[usize::from(old)];
        let (wv, preds, a1) = (
            (n.wv as u16).to_le_bytes(),
            remap(n.preds, newpos).to_le_bytes(),
            remap(n.a1, newpos).to_le_bytes(),
        );
        let flags = u8::from(n.dead_pred) | u8::from(n.a2) << 1 | u8::from(n.a6) << 2;
        put(&[n.ws, wv[0], wv[1], preds[0], preds[1], a1[0], a1[1], flags]);
    }
    put(&[sm.entries.len() as u8]);
    out.reserve(at + 3 * sm.entries.len());
    out.extend_from_slice(&buf[..at]);
    for e in &sm.entries {
        out.extend_from_slice(&[e.cell, e.value, e.depth]);
    }
}

/// The bytes of an encoding before its entries, at most: header, 8 slots, the nodes.
const FIXED_MAX: usize = 13 + 8 * PENDING_BYTES + 1 + NODES_MAX * 8 + 1;

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u8(&mut self) -> u8 {
        self.at += 1;
        self.b[self.at - 1]
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | u32::from(self.u16()) << 16
    }
}

/// Decodes a state written by [`encode`] for `agents` agents: the state and its length.
pub fn decode(agents: usize, bytes: &[u8]) -> (AbsState, usize) {
    let mut r = Reader { b: bytes, at: 0 };
    let memory = u32::from(r.u16());
    let (tools, versions, ops) = (r.u8(), r.u16(), r.u8());
    let sticky = Props::from_bits(r.u8());
    let latest = u32::from(r.u16());
    let produced = u64::from(r.u32());
    let mut pending = Vec::with_capacity(agents);
    for _ in 0..agents {
        if r.u8() == 0 {
            pending.push(None);
            continue;
        }
        let rs = r.u8();
        let rv = u32::from(r.u16());
        let (tool, flags) = (r.u8(), r.u8());
        let depth = u32::from(r.u16());
        let preds = r.u16();
        let bit = |k: u8| flags & (1 << k) != 0;
        pending.push(Some(PendingSummary {
            rs,
            rv,
            tool,
            changed: bit(0),
            newer: bit(1),
            stale: bit(2),
            l1_bad: bit(3),
            residue_bad: bit(4),
            depth,
            preds,
            dead_pred: bit(5),
        }));
    }
    let nodes = (0..r.u8())
        .map(|_| {
            let ws = r.u8();
            let wv = u32::from(r.u16());
            let (preds, a1) = (r.u16(), r.u16());
            let f = r.u8();
            Node {
                tag: (),
                ws,
                wv,
                preds,
                dead_pred: f & 1 != 0,
                a1,
                a2: f & 2 != 0,
                a6: f & 4 != 0,
            }
        })
        .collect();
    let entries = (0..r.u8())
        .map(|_| Entry {
            cell: r.u8(),
            value: r.u8(),
            depth: r.u8(),
        })
        .collect();
    let summary = Summary {
        pending,
        nodes,
        entries,
        latest,
        produced,
        sticky,
    };
    let s = AbsState {
        summary,
        memory,
        tools,
        versions,
        ops,
    };
    (s, r.at)
}
