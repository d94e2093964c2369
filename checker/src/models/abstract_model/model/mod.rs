//! The history-free model (SPEC §5.2) as an explorable space: memory, registry, the
//! [`Summary`] (in-flight ops in relative form, the kept records, the monitors' state), and
//! an op counter only when the log is bounded.
//!
//! Actions are the concrete model's ([`Action`], enumerated by the same [`Choices`] from the
//! same kind of view) under an action abstraction β ([`AbstractModel::abstract_action`])
//! that forgets the fields the summary does not keep, one abstract action per image; and
//! `Retract(k)` names a position among the kept records instead of a log index (the
//! concrete `Retract` of a record the summary no longer keeps changes nothing here: it is a
//! stutter). So every abstract path is the image of a concrete one ([`super::concretize`]).
//! A stack of [`Mechanism`]s decides begins, commits and retractions. Memory is kept only
//! when a monitor reads values (otherwise reads' values are forgotten by β anyway).
//!
//! Unbounded (`max_ops: None`): no counter, `CompleteWrite` always enabled. Without
//! retraction the state then has no length component at all, and an exploration that closes
//! decides the property for histories of every length at these agents, cells, values and
//! tools. With retraction every live writer is a node, so the state grows with the log: an
//! unbounded model with retraction is refused. Once a bounded log is full, memory and the
//! ops in flight are forgotten (no read or commit can use them). Symmetry over agents is the sorted order of
//! the in-flight slots (nothing else names an agent). What a pass does not prove: anything
//! about a configuration the equivalence tests have not compared with the concrete model.
//! Symmetry here also renames cells when no cell is distinguished (no skew, the paper's skew
//! on every cell, or external-only skew with every cell external): nothing in the actions, mechanisms or properties names a particular cell.

use super::codec::{self, CellPerms};
use super::mechanism::Policies;
use super::memo;
use crate::config::{Bounds, BoundsError, Extensions, AGENTS_MAX, TOOLS_MAX};
use crate::models::action::{seq_mask, Action, Choices, Seq, View};
use crate::models::composed::VERSION_MAX;
use crate::property::{PropSet, Property};
use agentsim_models::monitor::{
    cells, nibbles, Need, Prop, Props, Read, Summary, Write, NODES_MAX,
};
use agentsim_models::names::{Cell, Tool, Value};
use agentsim_models::record::{Registry, ToolEntry, ValueMap};
use agentsim_models::runtime::{Mechanism, Stack};
use agentsim_models::Anomaly;

pub use super::state::AbsState;

mod explore;

/// Why an abstract model or check cannot be built or run.
#[derive(Debug, thiserror::Error)]
pub enum AbstractError {
    #[error(transparent)]
    Bounds(#[from] BoundsError),
    #[error(transparent)]
    Stack(#[from] agentsim_models::runtime::StackError),
    /// Outside what the abstract model covers (the message says what).
    #[error("{0}")]
    Unsupported(String),
}

/// What to build.
#[derive(Clone, Debug)]
pub struct AbstractConfig {
    /// The constants; `max_ops` is ignored when `bounded` is false.
    pub bounds: Bounds,
    pub ext: Extensions,
    pub stack: Stack,
    /// The properties the monitors must decide.
    pub watch: PropSet,
    /// Keep an op counter and stop appending at `bounds.max_ops`.
    pub bounded: bool,
    pub symmetry: bool,
}

/// The history-free model.
#[derive(Clone, Debug)]
pub struct AbstractModel {
    cfg: AbstractConfig,
    choices: Choices,
    need: Need,
    /// Whether the summary reads "co differs from io" (A6 watched, no sequencer).
    orders: bool,
    /// Per write-set mask: its cells ascending, and descending (β's two orderings).
    orderings: Vec<(Seq, Seq)>,
    /// The cell renamings symmetry minimizes over.
    cell_perms: CellPerms,
    /// This model's identity in the explorer's memo tables ([`memo`]).
    memo_id: u64,
}

/// The monitor properties that decide `p`.
pub fn props_for(p: Property) -> Props {
    match p {
        Property::Never(a) => match a {
            Anomaly::A1 => Props::of(&[Prop::A1]),
            Anomaly::A2 => Props::of(&[Prop::A2]),
            Anomaly::A3 => Props::of(&[Prop::A3]),
            Anomaly::A3Residue => Props::of(&[Prop::A3Residue]),
            Anomaly::A6 => Props::of(&[Prop::A6]),
            // The single store records no replica metadata: A4 holds vacuously.
            Anomaly::A4 => Props::default(),
        },
        Property::L1Struct => Props::of(&[Prop::L1Struct]),
        Property::A1Snapshot => Props::of(&[Prop::A1, Prop::L1Struct]),
    }
}

impl AbstractModel {
    /// Builds the model; provenance is forced on where the stack reads it.
    pub fn new(cfg: AbstractConfig) -> Result<Self, AbstractError> {
        let mut cfg = cfg;
        let mut b = cfg.bounds;
        if !cfg.bounded {
            b.max_ops = 1;
        }
        b.validate()?;
        if cfg.ext.retraction && !cfg.bounded {
            return Err(AbstractError::Unsupported(
                "the history-free model with retraction needs a bound on the log: any live \
                 record may be retracted later, so every live writer stays in the state"
                    .into(),
            ));
        }
        cfg.ext.provenance |= cfg.stack.provenance();
        let mut need = Need {
            watch: cfg
                .watch
                .iter()
                .fold(Props::default(), |m, p| m.union(props_for(p))),
            retraction: cfg.ext.retraction,
            skew: cfg.bounds.any_skew(),
            provenance: cfg.ext.provenance,
            reads: cfg.ext.all_writers,
            ..Need::default()
        };
        cfg.stack.add_needs(&mut need);
        let mut choice_bounds = cfg.bounds;
        if !cfg.bounded {
            choice_bounds.max_ops = u32::MAX;
        }
        let orderings = (0..1u32 << cfg.bounds.cells)
            .map(|m| {
                let mut up: Vec<u32> = cells(m as u8).collect();
                let sorted = Seq::from_slice(&up);
                up.reverse();
                (sorted, Seq::from_slice(&up))
            })
            .collect();
        let b = &cfg.bounds;
        let cells_alike = b.cells_alike();
        let cell_perms = if cfg.symmetry && cells_alike {
            CellPerms::all(b.cells)
        } else {
            CellPerms::none()
        };
        Ok(AbstractModel {
            cell_perms,
            memo_id: memo::model_id(),
            choices: Choices::new(choice_bounds, cfg.ext),
            orders: need.watch.contains(Prop::A6) && !cfg.stack.contains(Mechanism::Sequencer),
            orderings,
            cfg,
            need,
        })
    }

    /// What the summary tracks.
    pub fn need(&self) -> &Need {
        &self.need
    }

    /// The configuration (with provenance forced where the stack needs it).
    pub fn config(&self) -> &AbstractConfig {
        &self.cfg
    }

    /// The initial state.
    pub fn init(&self) -> AbsState {
        AbsState {
            summary: Summary::new(self.cfg.bounds.agents as usize),
            memory: 0,
            tools: ((1u32 << self.cfg.bounds.tools) - 1) as u8,
            versions: 0,
            ops: 0,
        }
    }

    fn commit(&self, s: &mut AbsState, agent: usize, a: Action) {
        let Action::CompleteWrite { io, co, values, .. } = a else {
            unreachable!("commit takes a CompleteWrite")
        };
        let ws = seq_mask(io) as u8;
        let stack = &self.cfg.stack;
        let live = !stack.aborts(&self.need, &s.summary, agent, ws);
        let co = stack.externalized(io, co);
        // Memory is read only through values the summary keeps.
        if live && self.need.values() {
            let keep = !nibbles(ws);
            s.memory = (s.memory & keep) | (values & !keep);
        }
        if self.cfg.bounded {
            s.ops += 1;
        }
        let w = Write {
            live,
            ws,
            wv: values,
            reordered: io.len >= 2 && co != io,
            pinned: stack.pinned(),
        };
        s.summary.commit(&self.need, agent, &w, ());
        if self.full(s.ops) {
            s.summary.seal(&self.need);
            s.memory = 0;
        }
    }

    /// Whether a log of `ops` records is full (bounded only): nothing begins or commits
    /// again, so what only a read or a commit would use is forgotten ([`Summary::seal`]).
    pub fn full(&self, ops: u8) -> bool {
        self.cfg.bounded && u32::from(ops) >= self.cfg.bounds.max_ops
    }

    /// β: the abstract action a concrete action is, forgetting what the summary does not
    /// keep — the read set, planned tool and values read when nothing tracks them, written
    /// values outside the write set (or all of them when no monitor reads values), and the
    /// issue and completion orders except whether they differ when A6 is watched without a
    /// sequencer. `Retract(i)` is renamed by the caller (it needs the state: see `alpha`).
    /// Concrete actions with one image lead from one state to states with one α.
    pub fn abstract_action(&self, a: Action) -> Action {
        let need = &self.need;
        match a {
            Action::StartRead {
                agent,
                read_set,
                tool,
                read_values,
            } => {
                let rs = if need.read_sets() { read_set } else { 0 };
                Action::StartRead {
                    agent,
                    read_set: rs,
                    tool: if need.tool_flags() { tool } else { 0 },
                    read_values: if need.values() {
                        read_values & nibbles(rs)
                    } else {
                        0
                    },
                }
            }
            Action::CompleteWrite {
                agent,
                io,
                co,
                values,
            } => {
                let ws = seq_mask(io) as usize;
                let reordered = self.orders && io.len >= 2 && co != io;
                let (sorted, back) = self.orderings[ws];
                Action::CompleteWrite {
                    agent,
                    io: sorted,
                    co: if reordered { back } else { sorted },
                    values: if need.values() {
                        values & nibbles(ws as u8)
                    } else {
                        0
                    },
                }
            }
            other => other,
        }
    }

    /// The verdicts on `s`, as checker properties.
    pub fn verdict(&self, s: &AbsState, check: PropSet) -> PropSet {
        let v = s.summary.verdict(&self.need);
        let mut out = PropSet::default();
        for p in check.iter() {
            let violated = match p {
                Property::A1Snapshot => v.contains(Prop::A1) && !v.contains(Prop::L1Struct),
                Property::A4 => false,
                _ => props_for(p).iter().any(|q| v.contains(q)),
            };
            if violated {
                out.insert(p);
            }
        }
        out
    }

    /// The representative `s` is counted as: the state its canonical encoding decodes to
    /// (records in canonical commit order and, with symmetry, in-flight slots sorted and
    /// cells renamed), the same for every member of `s`'s class.
    pub fn canonical(&self, s: &AbsState) -> AbsState {
        let mut b = Vec::new();
        codec::encode(s, self.cfg.symmetry, &self.cell_perms, &mut b);
        codec::decode(s.summary.pending.len(), &b).0
    }

    /// The abstract actions out of `s` (what [`stateright::Model::actions`] memoizes): the
    /// concrete enumeration from the same kind of view, under β.
    fn enumerate(&self, s: &AbsState, actions: &mut Vec<Action>) {
        let a = self.cfg.bounds.agents as usize;
        let mut pending = [false; AGENTS_MAX as usize];
        let mut reads = [0u32; AGENTS_MAX as usize];
        for (k, p) in s.summary.pending.iter().enumerate() {
            if let Some(p) = p {
                (pending[k], reads[k]) = (true, u32::from(p.rs));
            }
        }
        let mut tools = [0u32; TOOLS_MAX as usize];
        let mut changeable = [0u32; TOOLS_MAX as usize];
        let (mut nt, mut nc) = (0, 0);
        for t in (0..self.cfg.bounds.tools).filter(|t| s.tools & (1 << t) != 0) {
            tools[nt] = t;
            nt += 1;
            if u32::from((s.versions >> (4 * t)) & 0xF) < VERSION_MAX {
                changeable[nc] = t;
                nc += 1;
            }
        }
        const POSITIONS: [u32; NODES_MAX] = {
            let mut p = [0u32; NODES_MAX];
            let mut k = 0;
            while k < NODES_MAX {
                p[k] = k as u32;
                k += 1;
            }
            p
        };
        let retractable = &POSITIONS[..s.summary.nodes.len()];
        let view = View {
            log_len: u32::from(s.ops),
            pending: &pending[..a],
            registry: &tools[..nt],
            changeable: &changeable[..nc],
            memory: s.memory,
            pending_reads: &reads[..a],
            retractable,
        };
        let start = actions.len();
        self.choices.enumerate(&view, actions);
        // The abstract alphabet is β of the concrete one: one action per distinct image.
        // β keeps the agent and the kind, and the enumeration is agent-major, so an image can
        // only repeat one of the same agent's: the search looks back to where that agent's
        // images begin (`seg`), which keeps the first-occurrence order.
        let (mut k, mut seg, mut seg_agent) = (start, start, None);
        for i in start..actions.len() {
            let a = self.abstract_action(actions[i]);
            let agent = match a {
                Action::StartRead { agent, .. } | Action::CompleteWrite { agent, .. } => {
                    Some(agent)
                }
                _ => None,
            };
            if agent != seg_agent {
                (seg, seg_agent) = (k, agent);
            }
            if !actions[seg..k].contains(&a) {
                actions[k] = a;
                k += 1;
            }
        }
        actions.truncate(k);
    }
}

impl stateright::Model for AbstractModel {
    type State = AbsState;
    type Action = Action;

    fn init_states(&self) -> Vec<AbsState> {
        vec![self.init()]
    }

    fn actions(&self, s: &AbsState, actions: &mut Vec<Action>) {
        memo::actions(self.memo_id, enumeration_key(s), actions, |out| {
            self.enumerate(s, out)
        });
    }

    fn next_state(&self, s: &AbsState, action: Action) -> Option<AbsState> {
        let mut n = s.clone();
        match action {
            Action::StartRead {
                agent,
                read_set,
                tool,
                read_values,
            } => {
                if !self.cfg.stack.begins(&s.summary, agent.into(), read_set) {
                    return None;
                }
                let read = Read {
                    rs: read_set,
                    rv: read_values,
                    tool,
                };
                n.summary.begin(&self.need, agent.into(), read);
            }
            Action::CompleteWrite { agent, .. } => self.commit(&mut n, agent.into(), action),
            Action::RemoveTool(t) => {
                assert!(n.tools & (1 << t) != 0, "RemoveTool needs the tool present");
                n.tools &= !(1 << t);
                n.versions &= !(0xF << (4 * t));
                n.summary.tool_changed(t);
            }
            Action::ChangeSignature(t) => {
                n.versions += 1 << (4 * t);
                n.summary.tool_changed(t);
            }
            Action::Retract(k) => {
                let dead = self.cfg.stack.retracted(&s.summary, k.into());
                n.summary.kill(&self.need, dead);
            }
        }
        Some(n)
    }
}

/// Everything the action enumeration reads of `s`: per agent whether it is in flight and its
/// read set, memory, registry, op count and the number of kept records.
fn enumeration_key(s: &AbsState) -> u128 {
    let sm = &s.summary;
    assert!(sm.pending.len() <= 8, "at most 8 agents");
    let mut key = 0u128;
    for (k, p) in sm.pending.iter().enumerate() {
        if let Some(p) = p {
            assert!(p.rs >> 4 == 0, "at most 4 cells");
            key |= u128::from(1 | p.rs << 1) << (5 * k);
        }
    }
    assert!(s.memory >> 16 == 0, "at most 4 cells");
    key | u128::from(s.memory) << 40
        | u128::from(s.tools) << 56
        | u128::from(s.versions) << 64
        | u128::from(s.ops) << 80
        | (sm.nodes.len() as u128) << 88
}

fn value_map(map: u32, cells: u32) -> ValueMap {
    ValueMap::from_pairs((0..cells).map(|c| (Cell(c), Value((map >> (4 * c)) & 0xF))))
}

/// The registry of an abstract state.
pub fn registry_of(s: &AbsState, tools: u32) -> Registry {
    Registry::from_entries(
        (0..tools)
            .filter(|t| s.tools & (1 << t) != 0)
            .map(|t| ToolEntry {
                tool: Tool(t),
                version: u32::from((s.versions >> (4 * t)) & 0xF),
            }),
    )
}
