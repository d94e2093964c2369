//! A deterministic, realistic history for the detector benchmark.
//!
//! Runs SPEC §1's model directly: at each step a seeded `ChaCha8Rng` picks an agent, which
//! either starts an operation (reads 1–3 cells, mostly from a hot set, from memory at
//! `read_time = len(log)`, sees the registry, may plan a tool, records provenance preds) or
//! completes its pending one (writes 1–2 cells with fresh values, read-modify-write on a read
//! cell most of the time, `write_time = len(log) + 1`). Generation windows overlap as many
//! agents' pending operations do, so A1 is common on hot cells. Rare events feed the other
//! detectors: skewed reads (A3 residue, `L1_struct`), aborts and retractions (A3), registry
//! removals and signature changes (A2), reversed effect completion (A6). The history is a
//! workload for timing; its anomaly rates mean nothing about any real system.
//!
//! Records leave the generator through [`stream`] once they are [`RETRACT_WINDOW`] records old
//! (a retraction flags one of the records still held), so a history of any length is made in
//! constant memory; [`generate`] collects the stream.

use agentsim_models::{Agent, Cell, History, OpRecord, Registry, Tool, Value, ValueMap};
use std::collections::VecDeque;

/// How many of the latest records a retraction may flag (they are held until then).
pub const RETRACT_WINDOW: usize = 4096;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The knobs of the generated history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    pub records: usize,
    pub agents: u32,
    pub cells: u32,
    pub hot_cells: u32,
    pub tools: u32,
    pub seed: u64,
}

impl Workload {
    /// 8 agents on 64 cells (16 hot), 4 tools.
    pub fn standard(records: usize, seed: u64) -> Workload {
        Workload {
            records,
            agents: 8,
            cells: 64,
            hot_cells: 16,
            tools: 4,
            seed,
        }
    }
}

/// An operation between its read and its write.
struct Pending {
    read_set: Vec<Cell>,
    read_values: ValueMap,
    read_registry: Registry,
    planned_tool: Option<Tool>,
    read_time: u64,
    preds: Vec<u32>,
}

struct Model<F> {
    rng: ChaCha8Rng,
    w: Workload,
    /// The latest records, not yet emitted (a retraction may still flag them).
    recent: VecDeque<OpRecord>,
    /// Records made so far (emitted or recent): `len(log)`.
    len: usize,
    emit: F,
    /// Per cell: the current value and the record that wrote it.
    memory: Vec<(Value, Option<u32>)>,
    registry: Registry,
    pending: Vec<Option<Pending>>,
    next_value: u32,
}

/// Generates the history of `w.records` records (same workload, same records).
pub fn generate(w: Workload) -> History {
    let mut records = Vec::with_capacity(w.records);
    stream(w, |r| records.push(r));
    History::from_records(records)
}

/// Generates the same records as [`generate`], handing each to `emit` in log order.
pub fn stream(w: Workload, emit: impl FnMut(OpRecord)) {
    assert!(
        w.agents > 0 && w.cells > 0,
        "a workload needs agents and cells"
    );
    assert!(
        w.hot_cells > 0 && w.hot_cells <= w.cells,
        "hot cells must be 1..=cells"
    );
    let mut m = Model {
        rng: ChaCha8Rng::seed_from_u64(w.seed),
        w,
        recent: VecDeque::with_capacity(RETRACT_WINDOW + 1),
        len: 0,
        emit,
        memory: vec![(Value::NULL, None); w.cells as usize],
        registry: Registry::all(w.tools),
        pending: (0..w.agents).map(|_| None).collect(),
        next_value: 1,
    };
    // Each record takes two steps (start, complete) plus rare registry events.
    let steps_max = 4 * w.records + 64;
    for _ in 0..steps_max {
        if m.len >= w.records {
            break;
        }
        m.step();
    }
    assert_eq!(m.len, w.records, "raise steps_max: the generator stalled");
    while let Some(r) = m.recent.pop_front() {
        (m.emit)(r);
    }
}

impl<F: FnMut(OpRecord)> Model<F> {
    fn step(&mut self) {
        if self.rng.random_bool(0.000_5) {
            self.change_registry();
        }
        if self.rng.random_bool(0.000_5) && !self.recent.is_empty() {
            let i = self.rng.random_range(0..self.recent.len());
            self.recent[i].aborted = true; // a supervisor retracts a recent committed op
        }
        let a = self.rng.random_range(0..self.w.agents) as usize;
        match self.pending[a].take() {
            None => self.pending[a] = Some(self.start()),
            Some(p) => self.complete(a, p),
        }
    }

    fn change_registry(&mut self) {
        let t = Tool(self.rng.random_range(0..self.w.tools));
        if self.rng.random_bool(0.5) {
            self.registry.change_signature(t);
        } else if !self.registry.remove(t) {
            self.registry.insert(agentsim_models::ToolEntry {
                tool: t,
                version: 0,
            });
        }
    }

    fn cell(&mut self) -> Cell {
        if self.rng.random_bool(0.8) {
            Cell(self.rng.random_range(0..self.w.hot_cells))
        } else {
            Cell(self.rng.random_range(0..self.w.cells))
        }
    }

    fn start(&mut self) -> Pending {
        let n = self.rng.random_range(1..=3);
        let mut read_set: Vec<Cell> = (0..n).map(|_| self.cell()).collect();
        read_set.sort_unstable();
        read_set.dedup();
        let mut read_values = ValueMap::new();
        let mut preds = Vec::new();
        for &c in &read_set {
            let (mut v, writer) = self.memory[c.index()];
            if self.rng.random_bool(0.000_5) {
                v = self.fresh(); // a skewed read: a value nobody wrote
            }
            read_values.set(c, v);
            preds.extend(writer);
        }
        preds.sort_unstable();
        preds.dedup();
        let entries = self.registry.entries();
        let planned_tool = if !entries.is_empty() && self.rng.random_bool(0.5) {
            Some(entries[self.rng.random_range(0..entries.len())].tool)
        } else {
            None
        };
        Pending {
            read_set,
            read_values,
            read_registry: self.registry.clone(),
            planned_tool,
            read_time: self.len as u64,
            preds,
        }
    }

    fn fresh(&mut self) -> Value {
        self.next_value += 1;
        Value(self.next_value)
    }

    fn complete(&mut self, agent: usize, p: Pending) {
        let mut write_set = vec![if self.rng.random_bool(0.7) {
            p.read_set[0]
        } else {
            self.cell()
        }];
        if self.rng.random_bool(0.3) {
            write_set.push(self.cell());
        }
        write_set.sort_unstable();
        write_set.dedup();
        let io: Vec<(Cell, Value)> = write_set.iter().map(|&c| (c, self.fresh())).collect();
        let mut co = io.clone();
        if co.len() > 1 && self.rng.random_bool(0.02) {
            co.reverse();
        }
        let aborted = self.rng.random_bool(0.002);
        let index = self.len as u32;
        if !aborted {
            for &(c, v) in &io {
                self.memory[c.index()] = (v, Some(index));
            }
        }
        self.len += 1;
        self.recent.push_back(OpRecord {
            agent: Agent(agent as u32),
            read_set: p.read_set,
            read_values: p.read_values,
            read_registry: p.read_registry,
            planned_tool: p.planned_tool,
            read_time: p.read_time,
            write_values: ValueMap::from_pairs(io.iter().copied()),
            write_set,
            write_registry: self.registry.clone(),
            write_time: u64::from(index) + 1,
            io,
            co,
            aborted,
            preds: p.preds,
            read_meta: Vec::new(),
        });
        if self.recent.len() > RETRACT_WINDOW {
            let r = self.recent.pop_front().expect("more than the window");
            (self.emit)(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::detect::fast;

    #[test]
    fn deterministic_well_formed_and_anomalous() {
        let h = generate(Workload::standard(20_000, 7));
        assert_eq!(h, generate(Workload::standard(20_000, 7)));
        assert_eq!(h.validate(), Ok(()));
        let r = fast::detect(&h);
        for (name, n) in [("A1", r.a1.len()), ("A3", r.a3.len()), ("A6", r.a6.len())] {
            assert!(n > 0, "{name} never occurs");
        }
        assert!(!r.l1_struct.is_empty());
    }
}
