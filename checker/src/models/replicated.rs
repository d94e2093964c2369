//! The replicated store of SPEC §6 as an explorable space, composed with any runtime.
//!
//! State: the store under a runtime `R` (the primary's memory and the op log), the
//! primary's per-cell log with `k` secondaries ([`ReplicaSet`], bounded lag), the session
//! floors, and the read metadata `(cell, replica, committed version)` of every record. Actions:
//! * [`RepAction::Read`] — `StartRead(a)`: the agent asks one replica for its read set, the
//!   [`ReadDiscipline`] routes it (any-replica: as asked; session: as asked if that replica has
//!   applied the agent's own writes and every version it was served, else the primary;
//!   primary-pinned: the primary), and the served values go to the runtime as the op's
//!   observed values (`BeginRequest::observed`);
//! * [`RepAction::Write`] — `CompleteWrite(a)` with canonical values (NULL outside the write
//!   set) completing in issue order; if the runtime commits it, each written cell gets a new
//!   version at the primary;
//! * [`RepAction::Apply`] — a secondary applies the next entry of one cell's log.
//!
//! Bounded lag, as in `agentsim_models::replica::set`: a write is never refused; a secondary
//! that the write would leave more than `max_lag` behind first catches up synchronously. Reads
//! and writes take one of `MaxOps` log slots as in SPEC §1; replication steps are free (the lag
//! bound keeps them finite). With `vanilla` this is the models' `Replicated` store, step for
//! step (a test drives both over every reachable state and compares logs and replicas).
//!
//! Invariants asserted after every step (on in release): the runtime's memory is the
//! primary's head value of every cell; every read metadata version is at most the head.
//! A4 is decided by the spec-form detector on the log with its read metadata. What a pass
//! does not prove: nothing beyond the bounds; no failover, no divergent replicas, no tools.

use crate::config::{Bounds, BoundsError, Extensions, Replication, AGENTS_MAX};
use crate::engine::space::{fingerprint_of, Space, StateView};
pub use crate::models::replicated_action::{replica_name, value_name, RepAction};
use crate::property::PropSet;
use agentsim_models::names::{Agent, Cell, Replica, Value};
use agentsim_models::record::{OpRecord, ReadMeta, Registry, ValueMap};
use agentsim_models::replica::{route_read, ReadDiscipline, ReplicaSet, PRIMARY};
use agentsim_models::runtime::{
    BeginOutcome, BeginRequest, CommitOutcome, CommitRequest, Guarded, Options, Runtime,
    RuntimeKind, Stack,
};
use std::collections::BTreeMap;

/// A state: the runtime, the replicas, and what reads saw.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
pub struct RepState<R: Runtime> {
    pub rt: Guarded<R>,
    pub replicas: ReplicaSet,
    /// Session discipline only: per (agent, cell), the lowest version a read may be served.
    floors: BTreeMap<(Agent, Cell), u64>,
    /// The read metadata of each agent's in-flight op.
    pending: BTreeMap<Agent, Vec<ReadMeta>>,
    /// `meta[i]`: the read metadata of record `i`.
    meta: Vec<Vec<ReadMeta>>,
}

impl<R: Runtime> RepState<R> {
    /// The runtime's log with each record's read metadata attached.
    pub fn log(&self) -> Vec<OpRecord> {
        let mut log = self.rt.log().to_vec();
        for (r, m) in log.iter_mut().zip(&self.meta) {
            r.read_meta = m.clone();
        }
        log
    }

    /// The read metadata of `agent`'s in-flight op (empty if none).
    pub fn pending_meta(&self, agent: Agent) -> &[ReadMeta] {
        self.pending.get(&agent).map_or(&[], Vec::as_slice)
    }
}

/// SPEC §6 composed with runtime `R`.
#[derive(Clone, Debug)]
pub struct ReplicatedModel<R: Runtime> {
    bounds: Bounds,
    ext: Extensions,
    rep: Replication,
    init: RepState<R>,
}

impl ReplicatedModel<Stack> {
    /// The model under a stack chosen at run time (provenance forced where it reads `preds`).
    /// The stack must be valid.
    pub fn of_stack(
        b: Bounds,
        ext: Extensions,
        rep: Replication,
        stack: Stack,
    ) -> Result<Self, BoundsError> {
        stack.validate()?;
        let opts = Options {
            provenance: ext.provenance || stack.provenance(),
        };
        ReplicatedModel::new(b, ext, rep, Guarded::new(stack, Registry::all(0), opts))
    }

    /// The model under a named runtime ([`ReplicatedModel::of_stack`] of its stack).
    pub fn of_kind(
        b: Bounds,
        ext: Extensions,
        rep: Replication,
        kind: RuntimeKind,
    ) -> Result<Self, BoundsError> {
        ReplicatedModel::of_stack(b, ext, rep, kind.stack())
    }
}

impl<R: Runtime> ReplicatedModel<R> {
    /// The model starting from `init` (fresh, empty registry).
    pub fn new(
        b: Bounds,
        ext: Extensions,
        rep: Replication,
        init: Guarded<R>,
    ) -> Result<Self, BoundsError> {
        rep.validate(&b, &ext, false)?;
        assert!(init.log().is_empty(), "the initial runtime must be fresh");
        assert!(init.store().registry().entries().is_empty(), "no tools");
        let replicas = ReplicaSet::new(rep.secondaries, rep.max_lag);
        Ok(ReplicatedModel {
            bounds: b,
            ext,
            rep,
            init: RepState {
                rt: init,
                replicas,
                floors: BTreeMap::new(),
                pending: BTreeMap::new(),
                meta: Vec::new(),
            },
        })
    }

    /// The replication constants.
    pub fn replication(&self) -> Replication {
        self.rep
    }

    fn cells(&self, mask: u8) -> Vec<Cell> {
        (0..self.bounds.cells)
            .filter(|c| mask & (1 << c) != 0)
            .map(Cell)
            .collect()
    }

    /// Where the discipline sends `agent`'s read of `cells` that asked for `asked`.
    fn route(&self, s: &RepState<R>, agent: Agent, cells: &[Cell], asked: Replica) -> Replica {
        let floor = |c: Cell| s.floors.get(&(agent, c)).copied().unwrap_or(0);
        route_read(self.rep.discipline, &s.replicas, cells, asked, floor)
    }

    fn raise_floor(&self, s: &mut RepState<R>, agent: Agent, cell: Cell, version: u64) {
        if self.rep.discipline == ReadDiscipline::Session {
            let f = s.floors.entry((agent, cell)).or_insert(0);
            *f = (*f).max(version);
        }
    }

    fn read(&self, s: &mut RepState<R>, agent: Agent, read_set: u8, asked: Replica) {
        let cells = self.cells(read_set);
        let replica = self.route(s, agent, &cells, asked);
        let mut observed = ValueMap::new();
        let mut meta = Vec::with_capacity(cells.len());
        let mut served = Vec::with_capacity(cells.len());
        for &cell in &cells {
            let got = s.replicas.read(replica, cell);
            let version = s.replicas.primary().head(cell);
            observed.set(cell, got.value);
            meta.push(ReadMeta {
                cell,
                replica,
                version,
            });
            served.push((cell, got.version));
        }
        let req = BeginRequest {
            observed: Some(observed),
            ..BeginRequest::new(agent, cells, None)
        };
        if let BeginOutcome::Begun(_) = s.rt.begin(&req) {
            s.pending.insert(agent, meta);
            for (cell, version) in served {
                self.raise_floor(s, agent, cell, version);
            }
        }
    }

    fn write(&self, s: &mut RepState<R>, agent: Agent, write_set: u8, values: u32) {
        let writes: Vec<(Cell, Value)> = self
            .cells(write_set)
            .into_iter()
            .map(|c| (c, Value((values >> (4 * c.0)) & 0xF)))
            .collect();
        let meta = s.pending.remove(&agent).expect("a write has a begun op");
        let outcome = s.rt.commit(&CommitRequest::new(agent, &writes));
        let index = match outcome {
            CommitOutcome::Committed { index, write_time } => {
                for &(c, v) in &writes {
                    let version = s.replicas.write(c, v, agent, write_time);
                    self.raise_floor(s, agent, c, version);
                }
                index
            }
            CommitOutcome::Aborted { index, .. } => index,
        };
        assert_eq!(index, s.meta.len(), "records are appended in order");
        s.meta.push(meta);
    }

    /// The invariants of the module docs.
    fn check(&self, s: &RepState<R>) {
        for c in (0..self.bounds.cells).map(Cell) {
            let head = s.replicas.read(PRIMARY, c).value;
            assert_eq!(
                s.rt.store().memory().get(c),
                head,
                "memory is the primary's head"
            );
        }
        for m in s.meta.iter().chain(s.pending.values()).flatten() {
            assert!(m.version <= s.replicas.primary().head(m.cell));
        }
    }

    fn reads(&self, agent: u8, out: &mut Vec<RepAction>) {
        for read_set in 0..(1u8 << self.bounds.cells) {
            // A read of nothing goes nowhere: one action, not one per replica.
            let asks = if read_set == 0 {
                0
            } else {
                self.rep.secondaries
            };
            for replica in 0..=asks as u8 {
                out.push(RepAction::Read {
                    agent,
                    read_set,
                    replica,
                });
            }
        }
    }

    fn writes(&self, agent: u8, read_set: u8, out: &mut Vec<RepAction>) {
        for write_set in 0..(1u8 << self.bounds.cells) {
            if self.ext.all_writers && read_set & !write_set != 0 {
                continue;
            }
            let mut maps = vec![0u32];
            for c in (0..self.bounds.cells).filter(|c| write_set & (1 << c) != 0) {
                let values = 0..=self.bounds.values;
                maps = maps
                    .iter()
                    .flat_map(|&m| values.clone().map(move |v| m | (v << (4 * c))))
                    .collect();
            }
            for values in maps {
                out.push(RepAction::Write {
                    agent,
                    write_set,
                    values,
                });
            }
        }
    }
}

fn mask(cells: &[Cell]) -> u8 {
    cells.iter().fold(0, |m, c| m | 1 << c.0)
}

impl<R: Runtime> stateright::Model for ReplicatedModel<R> {
    type State = RepState<R>;
    type Action = RepAction;

    fn init_states(&self) -> Vec<RepState<R>> {
        vec![self.init.clone()]
    }

    fn actions(&self, s: &RepState<R>, out: &mut Vec<RepAction>) {
        let st = s.rt.store();
        if (st.log().len() as u32) < self.bounds.max_ops {
            for a in 0..self.bounds.agents.min(AGENTS_MAX) {
                match st.inflight().get(&Agent(a)) {
                    Some(p) => self.writes(a as u8, mask(&p.request.read_set), out),
                    None => self.reads(a as u8, out),
                }
            }
        }
        for (r, c) in s.replicas.pending() {
            out.push(RepAction::Apply {
                replica: r.0 as u8,
                cell: c.0 as u8,
            });
        }
    }

    fn next_state(&self, s: &RepState<R>, action: RepAction) -> Option<RepState<R>> {
        let mut next = s.clone();
        match action {
            RepAction::Read {
                agent,
                read_set,
                replica,
            } => {
                let asked = Replica(replica.into());
                self.read(&mut next, Agent(agent.into()), read_set, asked);
            }
            RepAction::Write {
                agent,
                write_set,
                values,
            } => self.write(&mut next, Agent(agent.into()), write_set, values),
            RepAction::Apply { replica, cell } => {
                next.replicas
                    .apply(Replica(replica.into()), Cell(cell.into()));
            }
        }
        self.check(&next);
        Some(next)
    }
}

impl<R: Runtime> Space for ReplicatedModel<R> {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn fingerprint(&self, s: &RepState<R>) -> u64 {
        fingerprint_of(s)
    }

    fn violations(&self, s: &RepState<R>, check: PropSet) -> PropSet {
        let log = s.log();
        let mut out = PropSet::default();
        for p in check.iter().filter(|p| p.violated_by(&log)) {
            out.insert(p);
        }
        out
    }

    fn view(&self, s: &RepState<R>) -> StateView {
        crate::models::composed::store_view(s.rt.store(), self.bounds.agents, s.log())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::replica::Replicated;
    use stateright::Model;
    use std::collections::HashSet;

    /// Mirrors one action on the models' `Replicated` store.
    fn mirror(m: &ReplicatedModel<Stack>, twin: &mut Replicated, a: RepAction) {
        match a {
            RepAction::Read {
                agent,
                read_set,
                replica,
            } => {
                let req = BeginRequest::new(Agent(agent.into()), m.cells(read_set), None);
                twin.begin(&req, Replica(replica.into()));
            }
            RepAction::Write {
                agent,
                write_set,
                values,
            } => {
                let writes: Vec<_> = m
                    .cells(write_set)
                    .into_iter()
                    .map(|c| (c, Value((values >> (4 * c.0)) & 0xF)))
                    .collect();
                twin.commit(&CommitRequest::new(Agent(agent.into()), &writes));
            }
            RepAction::Apply { replica, cell } => {
                twin.apply(Replica(replica.into()), Cell(cell.into()));
            }
        }
    }

    /// With `vanilla`, every reachable state's log (with read metadata) and replica states
    /// equal those of `agentsim_models::replica::Replicated` driven by the same actions.
    #[test]
    fn vanilla_composition_is_the_models_replicated_store() {
        let b = Bounds {
            tools: 0,
            values: 1,
            ..Bounds::paper(2, 1, 3)
        };
        for discipline in ReadDiscipline::ALL {
            let rep = Replication {
                secondaries: 1,
                max_lag: 1,
                discipline,
            };
            let init = Guarded::new(Stack::VANILLA, Registry::all(0), Options::default());
            let m = ReplicatedModel::new(b, Extensions::default(), rep, init).unwrap();
            let twin = Replicated::new(discipline, 1, 1);
            let mut seen = HashSet::new();
            let mut stack = vec![(m.init_states().remove(0), twin)];
            let mut actions = Vec::new();
            while let Some((s, twin)) = stack.pop() {
                if !seen.insert(m.fingerprint(&s)) {
                    continue;
                }
                actions.clear();
                m.actions(&s, &mut actions);
                for &a in &actions {
                    let next = m.next_state(&s, a).expect("every action is enabled");
                    if seen.contains(&m.fingerprint(&next)) {
                        continue;
                    }
                    let mut t = twin.clone();
                    mirror(&m, &mut t, a);
                    assert_eq!(next.log(), t.log(), "{discipline}: {a:?}");
                    assert_eq!(&next.replicas, t.replicas(), "{discipline}: {a:?}");
                    stack.push((next, t));
                }
            }
            assert!(seen.len() > 1_000, "{discipline}: {} states", seen.len());
        }
    }

    #[test]
    fn actions_read_any_replica_and_apply_what_lags() {
        let b = Bounds {
            tools: 0,
            values: 1,
            ..Bounds::paper(1, 1, 2)
        };
        let rep = Replication {
            secondaries: 2,
            max_lag: 1,
            discipline: ReadDiscipline::AnyReplica,
        };
        let m =
            ReplicatedModel::of_kind(b, Extensions::default(), rep, RuntimeKind::Vanilla).unwrap();
        let s = m.init_states().remove(0);
        let mut out = Vec::new();
        m.actions(&s, &mut out);
        // rs = {} once, rs = {c1} at primary, s1, s2.
        assert_eq!(out.len(), 4);
        let s = m.next_state(&s, out[0]).unwrap();
        out.clear();
        m.actions(&s, &mut out);
        assert_eq!(out.len(), 3, "write c1 nothing, NULL or v1");
        let s = m.next_state(&s, out[2]).unwrap();
        out.clear();
        m.actions(&s, &mut out);
        let applies: Vec<_> = out
            .iter()
            .filter(|a| matches!(a, RepAction::Apply { .. }))
            .collect();
        assert_eq!(applies.len(), 2, "both secondaries lag by one");
    }
}
