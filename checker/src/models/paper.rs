//! The paper-faithful model of SPEC §1 on stateright, over the packed encoding.
//!
//! State: `log`, `inflight[a]`, `registry`, `memory`, exactly as the paper's `Memory.tla`
//! (`--paper`). Switches that keep the vanilla store: canonical writes (extension 1), the
//! all-writers restriction, skew (on every cell, or on external cells only), and symmetry over agents. Symmetry maps a
//! state to the least encoding over all renamings of agents; it is sound because nothing in
//! the actions or the properties names a particular agent (A1 only asks that two differ).
//! Extensions that need a runtime's decisions (provenance, retraction, tool versions) live in
//! [`crate::models::composed`]. Passing here says nothing about runtimes other than vanilla.

use crate::config::{Bounds, BoundsError, Extensions, AGENTS_MAX, MAX_OPS_MAX, TOOLS_MAX};
use crate::engine::space::{fingerprint_of, PendingView, Space, StateView};
use crate::models::action::{cell_value, seq_mask, Action, Choices, View};
use crate::models::packed::{Layout, Rec};
use crate::models::statecodec;
use crate::property::{PropSet, Property};
use agentsim_models::names::Tool;
use agentsim_models::names::{Cell, Value};
use agentsim_models::record::{Registry, ToolEntry, ValueMap};

pub use crate::models::packed::PackedState;

const WORDS_MAX: usize = 1 + AGENTS_MAX as usize + MAX_OPS_MAX as usize;

/// The paper-faithful model (plus the store-level switches above).
#[derive(Clone, Debug)]
pub struct PaperModel {
    bounds: Bounds,
    layout: Layout,
    choices: Choices,
    symmetry: bool,
    agent_perms: Vec<Vec<u32>>,
    /// The properties stateright's own checker evaluates (`Model::properties`).
    pub check: PropSet,
}

impl PaperModel {
    /// Builds the model; rejects extensions that need a runtime.
    pub fn new(bounds: Bounds, ext: Extensions, symmetry: bool) -> Result<Self, BoundsError> {
        bounds.validate()?;
        if ext.provenance || ext.retraction || ext.tool_versions {
            return Err(BoundsError::PaperExtensions);
        }
        Ok(PaperModel {
            bounds,
            layout: Layout::new(&bounds),
            choices: Choices::new(bounds, ext),
            symmetry: symmetry && bounds.agents > 1,
            agent_perms: permutations(bounds.agents),
            check: PropSet::of(&Property::ANOMALIES),
        })
    }

    fn agents(&self) -> usize {
        self.bounds.agents as usize
    }

    fn header(&self, s: &PackedState) -> (u32, u32, u32) {
        self.layout.unpack_header(s.0[0])
    }

    fn records(&self, s: &PackedState, out: &mut [Rec; MAX_OPS_MAX as usize]) -> usize {
        let log = &s.0[1 + self.agents()..];
        for (i, &w) in log.iter().enumerate() {
            out[i] = self.layout.unpack_record(w, i);
        }
        log.len()
    }

    fn start_read(&self, s: &PackedState, agent: u8, rs: u8, tool: u8, rv: u32) -> PackedState {
        let (len, reg, _) = self.header(s);
        let p = Rec {
            read_set: u32::from(rs),
            read_values: rv,
            read_registry: reg,
            tool: u32::from(tool),
            read_time: len,
            ..Rec::default()
        };
        let mut words = s.0.clone();
        words[1 + agent as usize] = self.layout.pack_pending(&p);
        PackedState(words)
    }

    fn complete_write(&self, s: &PackedState, agent: u8, a: Action) -> PackedState {
        let Action::CompleteWrite { io, co, values, .. } = a else {
            unreachable!("complete_write takes a CompleteWrite")
        };
        let (len, reg, mem) = self.header(s);
        let slot = 1 + agent as usize;
        let mut rec = self
            .layout
            .unpack_pending(s.0[slot])
            .expect("CompleteWrite is enabled only with a pending op");
        let ws = seq_mask(io);
        assert_eq!(ws, seq_mask(co), "io and co order the same write set");
        (rec.agent, rec.write_set, rec.write_values) = (u32::from(agent), ws, values);
        (rec.write_registry, rec.write_time, rec.io, rec.co) = (reg, len + 1, io, co);
        let keep = (0..self.bounds.cells)
            .filter(|c| ws & (1 << c) == 0)
            .fold(0, |m, c| m | (0xF << (4 * c)));
        let memory = (mem & keep) | (values & !keep);
        let mut words = Vec::with_capacity(s.0.len() + 1);
        words.push(self.layout.pack_header(len + 1, reg, memory));
        words.extend_from_slice(&s.0[1..]);
        words[slot] = 0;
        words.push(self.layout.pack_record(&rec));
        PackedState(words.into_boxed_slice())
    }

    /// The least encoding of `s` over all agent renamings, written into `best`.
    fn canonical(&self, s: &PackedState, best: &mut [u128; WORDS_MAX]) -> usize {
        let n = s.0.len();
        let a = self.agents();
        let (pos, bits) = self.layout.agent_field();
        let field = ((1u128 << bits) - 1) << pos;
        let mut cand = [0u128; WORDS_MAX];
        best[..n].copy_from_slice(&s.0);
        for perm in &self.agent_perms[1..] {
            cand[0] = s.0[0];
            for k in 0..a {
                cand[1 + perm[k] as usize] = s.0[1 + k];
            }
            for (dst, &w) in cand[1 + a..n].iter_mut().zip(&s.0[1 + a..]) {
                let old = ((w & field) >> pos) as usize;
                *dst = (w & !field) | (u128::from(perm[old]) << pos);
            }
            if cand[..n] < best[..n] {
                best[..n].copy_from_slice(&cand[..n]);
            }
        }
        n
    }

    fn pending_view(&self, p: Rec) -> PendingView {
        let b = &self.bounds;
        PendingView {
            read_set: (0..b.cells)
                .filter(|c| p.read_set & (1 << c) != 0)
                .collect(),
            read_values: value_map(p.read_values, b.cells),
            read_registry: registry(p.read_registry, b.tools),
            planned_tool: p.tool.checked_sub(1),
            read_time: u64::from(p.read_time),
            preds: Vec::new(),
        }
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

/// Every permutation of `0..n`, identity first.
fn permutations(n: u32) -> Vec<Vec<u32>> {
    let mut out = vec![(0..n).collect::<Vec<_>>()];
    let mut k = 0;
    while k < out.len() {
        let p = out[k].clone();
        for i in 0..n as usize {
            for j in i + 1..n as usize {
                let mut q = p.clone();
                q.swap(i, j);
                if !out.contains(&q) {
                    out.push(q);
                }
            }
        }
        k += 1;
    }
    out
}

impl stateright::Model for PaperModel {
    type State = PackedState;
    type Action = Action;

    fn init_states(&self) -> Vec<PackedState> {
        let all = (1u32 << self.bounds.tools) - 1;
        let mut words = vec![0u128; 1 + self.agents()];
        words[0] = self.layout.pack_header(0, all, 0);
        vec![PackedState(words.into_boxed_slice())]
    }

    fn actions(&self, s: &PackedState, actions: &mut Vec<Action>) {
        let (len, reg, memory) = self.header(s);
        let mut pending = [false; AGENTS_MAX as usize];
        let mut reads = [0u32; AGENTS_MAX as usize];
        for a in 0..self.agents() {
            if let Some(p) = self.layout.unpack_pending(s.0[1 + a]) {
                (pending[a], reads[a]) = (true, p.read_set);
            }
        }
        let mut tools = [0u32; TOOLS_MAX as usize];
        let mut nt = 0;
        for t in (0..self.bounds.tools).filter(|t| reg & (1 << t) != 0) {
            tools[nt] = t;
            nt += 1;
        }
        let view = View {
            log_len: len,
            pending: &pending[..self.agents()],
            registry: &tools[..nt],
            changeable: &[],
            memory,
            pending_reads: &reads[..self.agents()],
            retractable: &[],
        };
        self.choices.enumerate(&view, actions);
    }

    fn next_state(&self, s: &PackedState, a: Action) -> Option<PackedState> {
        match a {
            Action::StartRead {
                agent,
                read_set,
                tool,
                read_values,
            } => Some(self.start_read(s, agent, read_set, tool, read_values)),
            Action::CompleteWrite { agent, .. } => Some(self.complete_write(s, agent, a)),
            Action::RemoveTool(t) => {
                let (len, reg, mem) = self.header(s);
                assert!(reg & (1 << t) != 0, "RemoveTool needs the tool present");
                let mut words = s.0.clone();
                words[0] = self.layout.pack_header(len, reg & !(1 << t), mem);
                Some(PackedState(words))
            }
            Action::ChangeSignature(_) | Action::Retract(_) => None,
        }
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        fn never(m: &PaperModel, s: &PackedState, p: Property) -> bool {
            !m.check.contains(p) || m.violations(s, PropSet::of(&[p])).is_empty()
        }
        vec![
            stateright::Property::always("A1", |m, s| never(m, s, Property::A1)),
            stateright::Property::always("A2", |m, s| never(m, s, Property::A2)),
            stateright::Property::always("A6", |m, s| never(m, s, Property::A6)),
        ]
    }
}

impl Space for PaperModel {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn fingerprint(&self, s: &PackedState) -> u64 {
        if !self.symmetry {
            return fingerprint_of(&s.0[..]);
        }
        let mut best = [0u128; WORDS_MAX];
        let n = self.canonical(s, &mut best);
        fingerprint_of(&best[..n])
    }

    fn violations(&self, s: &PackedState, check: PropSet) -> PropSet {
        let mut recs = [Rec::default(); MAX_OPS_MAX as usize];
        let n = self.records(s, &mut recs);
        let mut out = PropSet::default();
        for p in check.iter() {
            if crate::models::paper_props::violated_by_packed(p, &recs[..n]) {
                out.insert(p);
            }
        }
        out
    }

    fn view(&self, s: &PackedState) -> StateView {
        let (_, reg, mem) = self.header(s);
        let mut recs = [Rec::default(); MAX_OPS_MAX as usize];
        let n = self.records(s, &mut recs);
        StateView {
            log: recs[..n]
                .iter()
                .map(|r| r.to_record(&self.bounds))
                .collect(),
            inflight: (0..self.agents())
                .map(|a| {
                    self.layout
                        .unpack_pending(s.0[1 + a])
                        .map(|p| self.pending_view(p))
                })
                .collect(),
            registry: registry(reg, self.bounds.tools),
            memory: value_map(mem, self.bounds.cells),
        }
    }

    fn encode(&self, s: &PackedState, out: &mut Vec<u8>) {
        statecodec::encode(&self.layout, self.agents(), s, out);
    }

    fn decode(&self, bytes: &[u8]) -> (PackedState, usize) {
        statecodec::decode(&self.layout, self.agents(), bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Skew;
    use crate::engine::explore::{explore, ExploreOptions};

    fn counts(b: Bounds, ext: Extensions, sym: bool, threads: usize) -> (u64, u64, u32) {
        let m = PaperModel::new(b, ext, sym).unwrap();
        let opts = ExploreOptions {
            threads,
            check: PropSet::default(),
            max_states: u64::MAX,
        };
        let o = explore(&m, &opts);
        (o.distinct, o.generated, o.depth)
    }

    /// TLC's figures for the paper's `Memory.tla`.
    #[test]
    fn matches_tlc_one_agent_one_cell_max_ops_two() {
        let b = Bounds::paper(1, 1, 2);
        assert_eq!(
            counts(b, Extensions::default(), false, 1),
            (31_942, 33_497, 7)
        );
        assert_eq!(
            counts(b, Extensions::default(), false, 2),
            (31_942, 33_497, 7)
        );
    }

    #[test]
    fn matches_tlc_one_agent_two_cells_max_ops_one() {
        let b = Bounds::paper(1, 2, 1);
        assert_eq!(
            counts(b, Extensions::default(), false, 2),
            (10_168, 10_937, 5)
        );
    }

    /// stateright's own BFS agrees on the distinct count (it does not count as TLC does).
    #[test]
    fn stateright_checker_agrees() {
        use stateright::{Checker, Model};
        let m = PaperModel::new(Bounds::paper(1, 2, 1), Extensions::default(), false).unwrap();
        let c = m.checker().spawn_bfs().join();
        assert_eq!(c.unique_state_count(), 10_168);
    }

    /// Every reachable state of `m`: fast property evaluation equals the spec detectors.
    /// Returns how many states violate each property.
    fn agreement(m: &PaperModel) -> [usize; Property::ALL.len()] {
        use stateright::Model;
        let all = PropSet::of(&Property::ALL);
        let mut seen = std::collections::HashSet::new();
        let mut stack = m.init_states();
        let mut hits = [0usize; Property::ALL.len()];
        let mut actions = Vec::new();
        while let Some(s) = stack.pop() {
            if !seen.insert(s.clone()) {
                continue;
            }
            let log = m.view(&s).log;
            let got = m.violations(&s, all);
            for (k, p) in Property::ALL.into_iter().enumerate() {
                assert_eq!(got.contains(p), p.violated_by(&log), "{p:?} on {log:?}");
                hits[k] += usize::from(got.contains(p));
            }
            actions.clear();
            m.actions(&s, &mut actions);
            stack.extend(actions.iter().filter_map(|&a| m.next_state(&s, a)));
        }
        hits
    }

    #[test]
    fn fast_properties_match_spec_detectors() {
        let canonical = Extensions {
            canonical_writes: true,
            ..Extensions::default()
        };
        let mut skewed = Bounds::paper(2, 1, 2);
        (skewed.values, skewed.tools, skewed.skew) = (1, 1, Skew::Every);
        let mut wide = Bounds::paper(1, 2, 1);
        wide.tools = 1;
        let mut hits = agreement(&PaperModel::new(skewed, canonical, false).unwrap());
        let more = agreement(&PaperModel::new(wide, Extensions::default(), false).unwrap());
        for (h, m) in hits.iter_mut().zip(more) {
            *h += m;
        }
        // Every property except A3 (no preds without provenance) and A4 (no replicas) is
        // exercised.
        let silent = |k: usize| matches!(Property::ALL[k], Property::A3 | Property::A4);
        assert!(
            hits.iter().enumerate().all(|(k, &h)| (h > 0) != silent(k)),
            "{hits:?}"
        );
    }

    /// Symmetry keeps the verdicts and shrinks the space.
    #[test]
    fn symmetry_is_sound_and_smaller() {
        let mut b = Bounds::paper(2, 1, 2);
        (b.values, b.tools) = (1, 1);
        let ext = Extensions {
            canonical_writes: true,
            ..Extensions::default()
        };
        let run = |sym| {
            let m = PaperModel::new(b, ext, sym).unwrap();
            let opts = ExploreOptions {
                threads: 2,
                check: PropSet::of(&Property::ALL),
                max_states: u64::MAX,
            };
            explore(&m, &opts)
        };
        let (full, sym) = (run(false), run(true));
        assert_eq!(full.violated, sym.violated);
        assert!(sym.distinct < full.distinct);
        assert!(sym.distinct * 2 >= full.distinct, "at most a 2! reduction");
        assert_eq!(full.depth, sym.depth);
    }

    /// The symmetric fingerprint is a function of the class, so counts cannot depend on which
    /// member a level meets first: for every agent renaming σ and every reachable `s`, the
    /// state σ(s) — reached by σ of the path to `s`, not computed by the canonical form —
    /// has `s`'s fingerprint, and σ of every action of `s` is an action of σ(s).
    #[test]
    fn symmetric_fingerprint_is_a_class_function() {
        use stateright::Model;
        let mut b = Bounds::paper(3, 1, 2);
        (b.values, b.tools) = (1, 1);
        let ext = Extensions {
            canonical_writes: true,
            ..Extensions::default()
        };
        let m = PaperModel::new(b, ext, true).unwrap();
        let rename = |a: Action, p: &[u32]| match a {
            Action::StartRead {
                agent,
                read_set,
                tool,
                read_values,
            } => Action::StartRead {
                agent: p[usize::from(agent)] as u8,
                read_set,
                tool,
                read_values,
            },
            Action::CompleteWrite {
                agent,
                io,
                co,
                values,
            } => Action::CompleteWrite {
                agent: p[usize::from(agent)] as u8,
                io,
                co,
                values,
            },
            other => other,
        };
        let mut states = 0;
        for p in permutations(3) {
            let mut seen = std::collections::HashSet::new();
            let init = m.init_states().remove(0);
            let mut stack = vec![(init.clone(), init)];
            let (mut xs, mut ys) = (Vec::new(), Vec::new());
            while let Some((s, t)) = stack.pop() {
                if !seen.insert(s.clone()) {
                    continue;
                }
                assert_eq!(m.fingerprint(&s), m.fingerprint(&t), "{p:?}: {s:?} / {t:?}");
                xs.clear();
                ys.clear();
                m.actions(&s, &mut xs);
                m.actions(&t, &mut ys);
                assert_eq!(xs.len(), ys.len());
                for &a in &xs {
                    let b = rename(a, &p);
                    assert!(ys.contains(&b), "{p:?}: {b:?} not enabled");
                    match (m.next_state(&s, a), m.next_state(&t, b)) {
                        (Some(n), Some(u)) => stack.push((n, u)),
                        (None, None) => {}
                        _ => panic!("{p:?}: {a:?} and {b:?} differ in enabledness"),
                    }
                }
            }
            states = seen.len();
        }
        assert!(states > 1_000, "{states}");
    }

    #[test]
    fn permutations_are_all_distinct() {
        let p = permutations(3);
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], vec![0, 1, 2]);
    }
}
