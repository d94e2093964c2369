//! Operations over the replicated store: reads routed to replicas, writes to the primary.
//!
//! [`Replicated`] plays the role a [`Guarded`](crate::runtime::Guarded) runtime plays for the
//! single store, with one more input: each [`begin`](Replicated::begin) names the replica the agent
//! asks to read from, and the [`ReadDiscipline`] decides where the read actually goes. The
//! served values are handed to the single [`Store`] as the op's observed values (the
//! contract's `BeginRequest::observed`), so the log is an ordinary history; at commit each
//! record gets its [`ReadMeta`] (replica and committed version per cell read) and its writes
//! are committed at the primary with last-writer-wins semantics.
//!
//! It does not take a [`Runtime`](crate::runtime::Runtime) on purpose: a runtime's begin has
//! no replica to route, and inventing one would hide the agent's choice that A4 depends on
//! (the checker's replicated model composes the disciplines with any runtime instead). Every read
//! is also kept as an [`Observation`] with the version the replica actually served, which the
//! history format does not carry, so that the session guarantees can be checked.
//!
//! A pass of the asserts here says the driver used the runtime correctly (one op in flight per
//! agent, known replicas, no skew); which anomalies a discipline admits is shown by the
//! exhaustive tests in `models/tests/replica_disciplines.rs`.

use super::set::ReplicaSet;
use super::{ReadDiscipline, PRIMARY};
use crate::names::{Agent, Cell, Replica, Value};
use crate::record::{OpRecord, ReadMeta, Registry, ValueMap};
use crate::runtime::{BeginRequest, CommitRequest, Options, Store};
use std::collections::BTreeMap;

/// One read as it happened: who, which cell, where it was routed, and what it saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Observation {
    pub agent: Agent,
    pub cell: Cell,
    /// The replica the agent asked for.
    pub requested: Replica,
    /// The replica the discipline routed the read to.
    pub replica: Replica,
    /// The cell's committed version (the primary's head) at the read.
    pub committed: u64,
    /// The version the replica served (its applied prefix).
    pub served: u64,
    pub value: Value,
    /// The single store's clock at the read (`read_time`).
    pub read_time: u64,
}

/// The replicated store with its read discipline, its op log and its observations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replicated {
    store: Store,
    replicas: ReplicaSet,
    discipline: ReadDiscipline,
    /// Per agent and cell, the lowest version a session read may be served (own writes and
    /// versions already seen). Kept only under [`ReadDiscipline::Session`].
    floors: BTreeMap<Agent, BTreeMap<Cell, u64>>,
    /// The read metadata of each in-flight op, attached to its record at commit.
    pending_meta: BTreeMap<Agent, Vec<ReadMeta>>,
    observations: Vec<Observation>,
}

impl Replicated {
    /// An empty store with `secondaries` secondaries lagging at most `max_lag` per cell.
    pub fn new(discipline: ReadDiscipline, secondaries: u32, max_lag: u64) -> Self {
        Self {
            store: Store::with_options(Registry::new(), Options::default()),
            replicas: ReplicaSet::new(secondaries, max_lag),
            discipline,
            floors: BTreeMap::new(),
            pending_meta: BTreeMap::new(),
            observations: Vec::new(),
        }
    }

    /// The read discipline.
    pub fn discipline(&self) -> ReadDiscipline {
        self.discipline
    }

    /// The replica states.
    pub fn replicas(&self) -> &ReplicaSet {
        &self.replicas
    }

    /// The single store holding the op log (records carry `read_meta`).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The records, in log order.
    pub fn log(&self) -> &[OpRecord] {
        self.store.log()
    }

    /// Every read so far, in the order they happened.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// Whether `agent` has an op in flight.
    pub fn in_flight(&self, agent: Agent) -> bool {
        self.store.inflight().contains_key(&agent)
    }

    /// Where the discipline sends a read of `read_set` by `agent` that asked for `requested`.
    pub fn route(&self, agent: Agent, read_set: &[Cell], requested: Replica) -> Replica {
        let floors = self.floors.get(&agent);
        route_read(self.discipline, &self.replicas, read_set, requested, |c| {
            floors.and_then(|f| f.get(&c)).copied().unwrap_or(0)
        })
    }

    /// Begins an op that reads `req.read_set` from `requested` (as routed); returns the
    /// replica that served it. Reads never block and are never dropped.
    pub fn begin(&mut self, req: &BeginRequest, requested: Replica) -> Replica {
        assert!(
            req.observed.is_none(),
            "the replicated store models no skew"
        );
        assert!(
            self.replicas.contains(requested),
            "unknown replica {requested}"
        );
        assert!(
            !self.in_flight(req.agent),
            "agent already has an op in flight"
        );
        let replica = self.route(req.agent, &req.read_set, requested);
        let read_time = self.store.clock();
        let mut observed = ValueMap::new();
        let mut meta = Vec::with_capacity(req.read_set.len());
        for &cell in &req.read_set {
            let served = self.replicas.read(replica, cell);
            let committed = self.replicas.primary().head(cell);
            assert!(served.version <= committed);
            observed.set(cell, served.value);
            meta.push(ReadMeta {
                cell,
                replica,
                version: committed,
            });
            self.observations.push(Observation {
                agent: req.agent,
                cell,
                requested,
                replica,
                committed,
                served: served.version,
                value: served.value,
                read_time,
            });
            self.raise_floor(req.agent, cell, served.version);
        }
        let routed = BeginRequest {
            observed: Some(observed),
            ..req.clone()
        };
        let snapshot = self.store.read(&routed);
        self.store.start(&routed, snapshot);
        self.pending_meta.insert(req.agent, meta);
        replica
    }

    /// Commits the agent's op: appends its record (with its read metadata) and commits its
    /// writes at the primary. Returns the record's index. Never aborts.
    pub fn commit(&mut self, req: &CommitRequest) -> usize {
        let meta = self
            .pending_meta
            .remove(&req.agent)
            .expect("commit without an op in flight");
        let registry = self.store.registry().clone();
        let index = self.store.append(req, &req.completion, registry, false);
        self.store.set_read_meta(index, meta);
        let record = &self.store.log()[index];
        let (write_time, writes) = (record.write_time, record.write_set.clone());
        for c in writes {
            let value = req.write_values.get(c);
            let version = self.replicas.write(c, value, req.agent, write_time);
            self.raise_floor(req.agent, c, version);
        }
        index
    }

    /// The agent gives up its op: no record (its reads stay observed).
    pub fn abandon(&mut self, agent: Agent) {
        self.store.abandon(agent);
        self.pending_meta.remove(&agent);
    }

    /// Secondary `r` applies its next entry of `c` (the replication step).
    pub fn apply(&mut self, r: Replica, c: Cell) -> u64 {
        self.replicas.apply(r, c)
    }

    fn raise_floor(&mut self, agent: Agent, cell: Cell, version: u64) {
        if self.discipline != ReadDiscipline::Session {
            return;
        }
        let floor = self
            .floors
            .entry(agent)
            .or_default()
            .entry(cell)
            .or_insert(0);
        *floor = (*floor).max(version);
    }
}

/// Where `discipline` sends a read of `cells` that asked for `asked`: as asked, always the
/// primary, or (session) as asked only if that replica has applied every cell up to the
/// reader's `floor` (the newest version the reader wrote or saw there), else the primary.
/// Shared by [`Replicated`] and the checker's replicated model.
pub fn route_read(
    discipline: ReadDiscipline,
    replicas: &ReplicaSet,
    cells: &[Cell],
    asked: Replica,
    floor: impl Fn(Cell) -> u64,
) -> Replica {
    match discipline {
        ReadDiscipline::AnyReplica => asked,
        ReadDiscipline::PrimaryPinned => PRIMARY,
        ReadDiscipline::Session => {
            let fresh = cells
                .iter()
                .all(|&c| replicas.applied(asked, c) >= floor(c));
            if fresh {
                asked
            } else {
                PRIMARY
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Cell = Cell(0);
    const S1: Replica = Replica(1);

    fn read(rt: &mut Replicated, agent: u32, replica: Replica) -> Replica {
        let routed = rt.begin(&BeginRequest::new(Agent(agent), vec![C], None), replica);
        rt.commit(&CommitRequest::new(Agent(agent), &[]));
        routed
    }

    fn write(rt: &mut Replicated, agent: u32, value: u32) {
        rt.begin(&BeginRequest::new(Agent(agent), vec![], None), PRIMARY);
        rt.commit(&CommitRequest::new(Agent(agent), &[(C, Value(value))]));
    }

    #[test]
    fn records_carry_replica_and_committed_version() {
        let mut rt = Replicated::new(ReadDiscipline::AnyReplica, 1, 1);
        write(&mut rt, 0, 1);
        assert_eq!(read(&mut rt, 1, S1), S1);
        assert_eq!(read(&mut rt, 0, PRIMARY), PRIMARY);
        let log = rt.log();
        assert_eq!(log[1].read_values.get(C), Value::NULL);
        assert_eq!(log[2].read_values.get(C), Value(1));
        let meta = |i: usize| log[i].read_meta.clone();
        let at = |replica| ReadMeta {
            cell: C,
            replica,
            version: 1,
        };
        assert_eq!(meta(1), vec![at(S1)]);
        assert_eq!(meta(2), vec![at(PRIMARY)]);
        assert_eq!(rt.observations()[0].served, 0);
        assert_eq!(rt.observations()[1].served, 1);
    }

    #[test]
    fn pinned_reads_go_to_the_primary() {
        let mut rt = Replicated::new(ReadDiscipline::PrimaryPinned, 1, 1);
        write(&mut rt, 0, 1);
        assert_eq!(read(&mut rt, 1, S1), PRIMARY);
        assert_eq!(rt.log()[1].read_values.get(C), Value(1));
    }

    #[test]
    fn session_reads_see_their_own_writes() {
        let mut rt = Replicated::new(ReadDiscipline::Session, 1, 1);
        write(&mut rt, 0, 1);
        assert_eq!(
            read(&mut rt, 0, S1),
            PRIMARY,
            "s1 has not applied a0's write"
        );
        assert_eq!(
            read(&mut rt, 1, S1),
            S1,
            "a1 wrote nothing: s1 is fresh enough"
        );
        rt.apply(S1, C);
        assert_eq!(read(&mut rt, 0, S1), S1);
    }

    #[test]
    #[should_panic(expected = "already has an op in flight")]
    fn one_op_in_flight_per_agent() {
        let mut rt = Replicated::new(ReadDiscipline::AnyReplica, 1, 1);
        let req = BeginRequest::new(Agent(0), vec![C], None);
        rt.begin(&req, PRIMARY);
        rt.begin(&req, PRIMARY);
    }
}
