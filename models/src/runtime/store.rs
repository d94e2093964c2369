//! The single store of SPEC §1: the log (whose length is the logical clock), the memory, the
//! registry, and each agent's in-flight operation. A runtime wraps it ([`Guarded`]) and adds
//! its control; the replicated store ([`crate::replica::Replicated`]) keeps one too.
//!
//! The store itself decides nothing: it reads, appends and flags records as it is told. What
//! it guarantees is structural (one op in flight per agent, `co` a permutation of `io`, write
//! times strictly increasing, a flagged record never live again); whether the resulting log is
//! anomalous is the detectors' job. Its fields are private: only these methods change the log,
//! so the writer index derived from it cannot fall out of step.
//!
//! [`Guarded`]: super::Guarded

use super::{BeginRequest, CommitRequest, Options, RegistryChange, Snapshot};
use crate::names::{Agent, Cell, Value};
use crate::record::{OpRecord, ReadMeta, Registry, ToolEntry, ValueMap};

/// An operation between its read and its commit.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Pending {
    pub request: BeginRequest,
    pub snapshot: Snapshot,
}

/// Log, memory, registry and in-flight operations. Only these methods change them: a per-cell
/// writer index is derived from the log.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Store {
    log: Vec<OpRecord>,
    memory: ValueMap,
    registry: Registry,
    /// In-flight operations by agent (at most one each).
    inflight: Inflight,
    /// Whether reads record provenance `preds` (extension 2).
    provenance: bool,
    /// For each cell (indexed by cell id), the log indices of the records that committed a
    /// write to it, in log order (retracted ones included; filter on `aborted`). Derived from
    /// `log`; it keeps provenance from scanning the whole log, and only provenance reads it,
    /// so it is kept only with provenance on (empty otherwise). Its length is one past the
    /// highest cell written, so equal logs give equal indices.
    writers: Vec<Vec<usize>>,
}

/// The in-flight operations, sorted by agent, at most one per agent: a map with the
/// iteration order, equality and hash of a `BTreeMap<Agent, Pending>`, kept as a flat vector
/// because a run has a handful of agents and begins and commits on every operation (a B-tree
/// allocates a node and moves entries on each). Its `Hash` feeds the same items as the map's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Inflight(Vec<(Agent, Pending)>);

impl Inflight {
    /// No operation in flight.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    #[inline]
    fn position(&self, agent: Agent) -> Result<usize, usize> {
        self.0.binary_search_by_key(&agent, |&(a, _)| a)
    }

    /// The operation `agent` has in flight, if any.
    #[inline]
    pub fn get(&self, agent: &Agent) -> Option<&Pending> {
        self.position(*agent).ok().map(|i| &self.0[i].1)
    }

    /// Whether `agent` has an operation in flight.
    #[inline]
    pub fn contains_key(&self, agent: &Agent) -> bool {
        self.position(*agent).is_ok()
    }

    /// Sets `agent`'s operation; returns the one it replaces.
    #[inline]
    fn insert(&mut self, agent: Agent, p: Pending) -> Option<Pending> {
        match self.position(agent) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, p)),
            Err(i) => {
                self.0.insert(i, (agent, p));
                None
            }
        }
    }

    /// Removes and returns `agent`'s operation.
    #[inline]
    fn remove(&mut self, agent: &Agent) -> Option<Pending> {
        let i = self.position(*agent).ok()?;
        Some(self.0.remove(i).1)
    }

    /// How many agents have an operation in flight.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// (agent, operation) pairs in agent order.
    pub fn iter(&self) -> impl Iterator<Item = (&Agent, &Pending)> {
        self.into_iter()
    }

    /// The operations in agent order.
    pub fn values(&self) -> impl Iterator<Item = &Pending> {
        self.0.iter().map(|(_, p)| p)
    }
}

impl<'a> IntoIterator for &'a Inflight {
    type Item = (&'a Agent, &'a Pending);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Agent, Pending)>,
        fn(&'a (Agent, Pending)) -> (&'a Agent, &'a Pending),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(a, p)| (a, p))
    }
}

impl Store {
    /// The model's Init: empty log, all-NULL memory, the given registry, no provenance.
    pub fn new(registry: Registry) -> Self {
        Self::with_options(registry, Options::default())
    }

    /// Init with options (provenance on or off).
    pub fn with_options(registry: Registry, opts: Options) -> Self {
        Self {
            log: Vec::new(),
            memory: ValueMap::new(),
            registry,
            inflight: Inflight::new(),
            provenance: opts.provenance,
            writers: Vec::new(),
        }
    }

    /// Makes room for `records` more records in the log (a driver that knows how many a run
    /// appends saves the log's regrowth; the log is the same either way).
    #[inline]
    pub fn reserve(&mut self, records: usize) {
        self.log.reserve(records);
    }

    /// The records, in log order.
    #[inline]
    pub fn log(&self) -> &[OpRecord] {
        &self.log
    }

    /// Hands over the log, for a driver done with the run (no copy).
    pub fn into_log(self) -> Vec<OpRecord> {
        self.log
    }

    /// The memory: the value of every cell.
    #[inline]
    pub fn memory(&self) -> &ValueMap {
        &self.memory
    }

    /// The live registry.
    #[inline]
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The operations in flight.
    #[inline]
    pub fn inflight(&self) -> &Inflight {
        &self.inflight
    }

    /// Whether reads record provenance `preds` (extension 2).
    #[inline]
    pub fn has_provenance(&self) -> bool {
        self.provenance
    }

    /// The logical clock, `len(log)`.
    #[inline]
    pub fn clock(&self) -> u64 {
        self.log.len() as u64
    }

    /// What `req` reads now: `read_time = len(log)`, the memory (or the values the caller
    /// observed under skew), the registry (or the tool list the caller's client cached), and
    /// the provenance if it is on.
    #[inline]
    pub fn read(&self, req: &BeginRequest) -> Snapshot {
        Snapshot {
            read_time: self.clock(),
            read_values: req.observed.clone().unwrap_or_else(|| self.memory.clone()),
            registry: req
                .observed_registry
                .clone()
                .unwrap_or_else(|| self.registry.clone()),
            preds: if self.provenance {
                self.provenance(req)
            } else {
                Vec::new()
            },
        }
    }

    /// Provenance (extension 2): for each read cell, the latest non-aborted writer with
    /// `write_time ≤ read_time`, plus transitively their preds. Sorted, unique.
    pub fn provenance(&self, req: &BeginRequest) -> Vec<u32> {
        let mut preds = Vec::new();
        for &c in &req.read_set {
            if let Some(k) = self.latest_live_writer(c) {
                preds.push(k as u32);
                preds.extend_from_slice(&self.log[k].preds);
            }
        }
        preds.sort_unstable();
        preds.dedup();
        preds
    }

    /// The latest record that wrote `c` and is not aborted, if any. Needs provenance on (the
    /// writer index is kept only then).
    pub fn latest_live_writer(&self, c: Cell) -> Option<usize> {
        assert!(
            self.provenance,
            "the writer index is kept only with provenance on"
        );
        let writers = self.writers.get(c.0 as usize)?;
        let k = writers
            .iter()
            .rev()
            .copied()
            .find(|&k| !self.log[k].aborted);
        if let Some(k) = k {
            assert!(
                self.log[k].writes(c),
                "writer index out of step with the log"
            );
        }
        k
    }

    /// Records the agent's in-flight operation.
    #[inline]
    pub fn start(&mut self, req: &BeginRequest, snapshot: Snapshot) {
        self.start_owned(req.clone(), snapshot);
    }

    /// [`Store::start`] taking the request by value: its read set becomes the record's, with
    /// no copy.
    #[inline]
    pub fn start_owned(&mut self, req: BeginRequest, snapshot: Snapshot) {
        assert!(
            !self.inflight.contains_key(&req.agent),
            "agent already has an op in flight"
        );
        assert!(
            req.read_set.windows(2).all(|w| w[0] < w[1]),
            "read_set must be sorted and unique"
        );
        self.inflight.insert(
            req.agent,
            Pending {
                request: req,
                snapshot,
            },
        );
    }

    /// The agent's in-flight operation. Panics if there is none: committing an op that was
    /// never begun (or was dropped) is a driver bug, not an input error.
    #[inline]
    pub fn pending(&self, agent: Agent) -> &Pending {
        self.inflight
            .get(&agent)
            .expect("commit without an op in flight")
    }

    /// Forgets the agent's in-flight operation, if any (no record).
    pub fn abandon(&mut self, agent: Agent) -> Option<Pending> {
        self.inflight.remove(&agent)
    }

    /// Appends the record of the agent's in-flight operation and, unless `aborted`, applies
    /// its writes to memory. `co` is the externalization order (indices into `req.issue`).
    /// Returns the new record's index.
    pub fn append(
        &mut self,
        req: &CommitRequest,
        co: &[usize],
        write_registry: Registry,
        aborted: bool,
    ) -> usize {
        let pending = self
            .inflight
            .remove(&req.agent)
            .expect("commit without an op in flight");
        assert_eq!(
            co.len(),
            req.issue.len(),
            "co must order every issued effect"
        );
        assert_permutation(co);
        let io: Vec<_> = req
            .issue
            .iter()
            .map(|&c| (c, req.write_values.get(c)))
            .collect();
        let co: Vec<_> = co.iter().map(|&k| io[k]).collect();
        let mut write_set = req.issue.clone();
        if write_set.len() > 1 {
            write_set.sort_unstable();
            write_set.dedup();
        }
        assert_eq!(
            write_set.len(),
            req.issue.len(),
            "a cell is issued at most once"
        );
        let write_time = self.clock() + 1;
        if !aborted {
            for &c in &write_set {
                self.memory.set(c, req.write_values.get(c));
                if self.provenance {
                    let i = c.0 as usize;
                    if self.writers.len() <= i {
                        self.writers.resize_with(i + 1, Vec::new);
                    }
                    self.writers[i].push(self.log.len());
                }
            }
        }
        assert!(pending.snapshot.read_time < write_time);
        self.log.push(OpRecord {
            agent: req.agent,
            read_set: pending.request.read_set,
            read_values: pending.snapshot.read_values,
            read_registry: pending.snapshot.registry,
            planned_tool: pending.request.planned_tool,
            read_time: pending.snapshot.read_time,
            write_set,
            write_values: req.write_values.clone(),
            write_registry,
            write_time,
            io,
            co,
            aborted,
            preds: pending.snapshot.preds,
            read_meta: Vec::new(),
        });
        self.log.len() - 1
    }

    /// `Retract(i)` of SPEC §1 extension 3, and a cascade's abort of a dependent: flags a live
    /// record aborted. Returns whether it was live (an unknown or already aborted index
    /// changes nothing). Memory keeps the record's writes (SPEC §1).
    pub fn retract_one(&mut self, index: usize) -> bool {
        match self.log.get_mut(index) {
            Some(r) if !r.aborted => {
                r.aborted = true;
                true
            }
            _ => false,
        }
    }

    /// Attaches the read metadata of the replicated store (SPEC §6) to the record just
    /// appended; the single store never sets it.
    pub fn set_read_meta(&mut self, index: usize, meta: Vec<ReadMeta>) {
        assert_eq!(
            index + 1,
            self.log.len(),
            "read metadata goes on the newest record"
        );
        let record = &mut self.log[index];
        assert!(record.read_meta.is_empty(), "read metadata is set once");
        record.read_meta = meta;
    }

    /// Applies a registry change to the live registry.
    pub fn change_registry(&mut self, change: RegistryChange) {
        match change {
            RegistryChange::Remove(t) => {
                self.registry.remove(t);
            }
            RegistryChange::ChangeSignature(t) => {
                self.registry.change_signature(t);
            }
            RegistryChange::Add(t) => {
                if !self.registry.contains(t) {
                    self.registry.insert(ToolEntry {
                        tool: t,
                        version: 0,
                    });
                }
            }
        }
    }

    /// The current value of the memory at `c`.
    pub fn value(&self, c: Cell) -> Value {
        self.memory.get(c)
    }
}

/// Asserts that `co` is a permutation of `0..co.len()`. The common case (at most 64 effects)
/// checks against a bit set, so the commit path allocates nothing for it.
fn assert_permutation(co: &[usize]) {
    let n = co.len();
    if n <= 64 {
        let mut seen = 0u64;
        for &k in co {
            assert!(k < n, "co names an effect that was not issued");
            assert!(seen & (1 << k) == 0, "co names an effect twice");
            seen |= 1 << k;
        }
    } else {
        let mut seen = vec![false; n];
        for &k in co {
            assert!(k < n, "co names an effect that was not issued");
            assert!(!seen[k], "co names an effect twice");
            seen[k] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Tool;

    fn write(s: &mut Store, a: u32, c: u32, v: u32) -> usize {
        s.start(
            &BeginRequest::new(Agent(a), vec![], None),
            Snapshot::empty(),
        );
        let req = CommitRequest::new(Agent(a), &[(Cell(c), Value(v))]);
        s.append(&req, &[0], Registry::new(), false)
    }

    impl Snapshot {
        fn empty() -> Self {
            Snapshot {
                read_time: 0,
                read_values: ValueMap::new(),
                registry: Registry::new(),
                preds: Vec::new(),
            }
        }
    }

    #[test]
    fn observed_values_replace_memory_in_the_snapshot() {
        let mut s = Store::new(Registry::all(1));
        write(&mut s, 0, 0, 1);
        let mut req = BeginRequest::new(Agent(1), vec![Cell(0)], Some(Tool(0)));
        assert_eq!(s.read(&req).read_values.get(Cell(0)), Value(1));
        req.observed = Some(ValueMap::from_pairs([(Cell(0), Value(2))]));
        let snap = s.read(&req);
        assert_eq!(snap.read_values.get(Cell(0)), Value(2));
        assert_eq!(snap.read_time, 1);
        assert!(snap.preds.is_empty(), "provenance is off by default");
    }

    #[test]
    fn provenance_skips_aborted_writers() {
        let mut s = Store::with_options(Registry::new(), Options { provenance: true });
        write(&mut s, 0, 0, 1);
        write(&mut s, 0, 0, 2);
        let req = BeginRequest::new(Agent(1), vec![Cell(0)], None);
        assert_eq!(s.read(&req).preds, [1]);
        assert!(s.retract_one(1));
        assert!(!s.retract_one(1));
        assert_eq!(s.read(&req).preds, [0]);
        assert_eq!(s.value(Cell(0)), Value(2), "retraction keeps memory");
    }

    #[test]
    fn aborted_append_leaves_memory_alone() {
        let mut s = Store::new(Registry::new());
        s.start(
            &BeginRequest::new(Agent(0), vec![], None),
            Snapshot::empty(),
        );
        let req = CommitRequest::new(Agent(0), &[(Cell(0), Value(1)), (Cell(1), Value(2))]);
        let i = s.append(&req, &[1, 0], Registry::new(), true);
        assert!(s.log()[i].aborted);
        assert_eq!(s.memory, ValueMap::new());
        assert_eq!(s.log()[i].co, [(Cell(1), Value(2)), (Cell(0), Value(1))]);
        assert!(s.inflight.is_empty());
    }

    #[test]
    #[should_panic(expected = "twice")]
    fn co_must_be_a_permutation() {
        let mut s = Store::new(Registry::new());
        s.start(
            &BeginRequest::new(Agent(0), vec![], None),
            Snapshot::empty(),
        );
        let req = CommitRequest::new(Agent(0), &[(Cell(0), Value(1)), (Cell(1), Value(2))]);
        s.append(&req, &[0, 0], Registry::new(), false);
    }
}
