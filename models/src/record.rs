//! Operation records (SPEC §2): what one read → generate → write operation left in the log.
//!
//! Sets are sorted, duplicate-free vectors; value maps are total maps `Cells → Values ∪ {NULL}`
//! stored sparsely (NULL entries omitted), so two maps are equal exactly when the total maps are.
//! A record says nothing about whether it is anomalous: that is the detectors' job (SPEC §3).

use crate::names::{Agent, Cell, Replica, Tool, Value};

/// A total map from cells to values, NULL where unset. Sorted by cell, no NULL entries.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct ValueMap(Vec<(Cell, Value)>);

impl ValueMap {
    /// The all-NULL map.
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// The value of `c` (NULL if unset).
    #[inline]
    pub fn get(&self, c: Cell) -> Value {
        match self.0.binary_search_by_key(&c, |&(k, _)| k) {
            Ok(i) => self.0[i].1,
            Err(_) => Value::NULL,
        }
    }

    /// Sets `c` to `v` (setting NULL removes the entry).
    #[inline]
    pub fn set(&mut self, c: Cell, v: Value) {
        match self.0.binary_search_by_key(&c, |&(k, _)| k) {
            Ok(i) if v.is_null() => {
                self.0.remove(i);
            }
            Ok(i) => self.0[i].1 = v,
            Err(_) if v.is_null() => {}
            Err(i) => self.0.insert(i, (c, v)),
        }
    }

    /// Makes the map all-NULL, keeping its allocation.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The non-NULL entries, sorted by cell.
    #[inline]
    pub fn entries(&self) -> &[(Cell, Value)] {
        &self.0
    }

    /// Renames every cell and value (both injectively: distinct ids stay distinct; NULL to
    /// NULL), keeping the map sorted by cell.
    pub fn rename(&mut self, cell: impl Fn(Cell) -> Cell, value: impl Fn(Value) -> Value) {
        for e in &mut self.0 {
            *e = (cell(e.0), value(e.1));
        }
        self.0.sort_unstable_by_key(|&(c, _)| c);
    }

    /// Builds a map from any pairs; a later pair for the same cell wins.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Cell, Value)>) -> Self {
        let mut m = ValueMap::new();
        for (c, v) in pairs {
            m.set(c, v);
        }
        m
    }
}

/// A registry entry: a tool and its signature version (extension 4; version 0 without it).
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
pub struct ToolEntry {
    pub tool: Tool,
    pub version: u32,
}

/// A registry snapshot: sorted by tool, at most one entry per tool.
#[derive(
    Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Registry(Vec<ToolEntry>);

/// By hand for `clone_from`, which keeps the allocation (the reader copies the last registry
/// into most records).
impl Clone for Registry {
    fn clone(&self) -> Self {
        Registry(self.0.clone())
    }

    fn clone_from(&mut self, source: &Self) {
        self.0.clone_from(&source.0);
    }
}

impl Registry {
    /// The empty registry.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// Every tool `0..n` at version 0 (the model's `registry = Tools` at Init).
    pub fn all(n: u32) -> Self {
        Self(
            (0..n)
                .map(|t| ToolEntry {
                    tool: Tool(t),
                    version: 0,
                })
                .collect(),
        )
    }

    /// Builds a registry from entries; a later entry for the same tool wins.
    pub fn from_entries(entries: impl IntoIterator<Item = ToolEntry>) -> Self {
        let mut r = Registry::new();
        for e in entries {
            r.insert(e);
        }
        r
    }

    /// The entry of `t`, if present.
    #[inline]
    pub fn get(&self, t: Tool) -> Option<ToolEntry> {
        self.0
            .binary_search_by_key(&t, |e| e.tool)
            .ok()
            .map(|i| self.0[i])
    }

    /// Whether `t` is present (at any version).
    #[inline]
    pub fn contains(&self, t: Tool) -> bool {
        self.get(t).is_some()
    }

    /// Adds or replaces the entry of `e.tool`.
    pub fn insert(&mut self, e: ToolEntry) {
        match self.0.binary_search_by_key(&e.tool, |x| x.tool) {
            Ok(i) => self.0[i] = e,
            Err(i) => self.0.insert(i, e),
        }
    }

    /// Renames every tool (injectively: distinct tools stay distinct), keeping the registry
    /// sorted by tool.
    pub fn rename(&mut self, tool: impl Fn(Tool) -> Tool) {
        for e in &mut self.0 {
            e.tool = tool(e.tool);
        }
        self.0.sort_unstable_by_key(|e| e.tool);
    }

    /// Empties the registry, keeping its allocation.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Removes `t`; returns whether it was present.
    pub fn remove(&mut self, t: Tool) -> bool {
        match self.0.binary_search_by_key(&t, |x| x.tool) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Bumps the signature version of `t`; returns whether it was present.
    pub fn change_signature(&mut self, t: Tool) -> bool {
        match self.0.binary_search_by_key(&t, |x| x.tool) {
            Ok(i) => {
                self.0[i].version += 1;
                true
            }
            Err(_) => false,
        }
    }

    /// The entries, sorted by tool.
    #[inline]
    pub fn entries(&self) -> &[ToolEntry] {
        &self.0
    }
}

/// Where one read of a cell was served in the replicated store (SPEC §6): the replica, and the
/// cell's **committed version** at the moment of the read (the primary's head for the cell,
/// 0 before any write). The value observed is the record's `read_values[cell]`. Two reads at
/// the same committed version that observe different values are a split view (A4).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ReadMeta {
    pub cell: Cell,
    pub replica: Replica,
    pub version: u64,
}

/// One operation record (SPEC §2). Field names follow the paper's `Memory.tla`.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct OpRecord {
    pub agent: Agent,
    /// Cells read, sorted and unique.
    pub read_set: Vec<Cell>,
    /// The total map of values seen at read time (only `read_set` entries matter to detectors).
    pub read_values: ValueMap,
    /// The registry seen at read time.
    pub read_registry: Registry,
    /// The tool the generation plans to call, if any.
    pub planned_tool: Option<Tool>,
    /// `len(log)` when the op read: reads do not advance the clock.
    pub read_time: u64,
    /// Cells written, sorted and unique.
    pub write_set: Vec<Cell>,
    /// The total map of written values (the model lets it be free outside `write_set`).
    pub write_values: ValueMap,
    /// The registry at write (commit) time.
    pub write_registry: Registry,
    /// `len(log) + 1` when the record was appended.
    pub write_time: u64,
    /// Effects in issue order.
    pub io: Vec<(Cell, Value)>,
    /// Effects in completion (externalization) order.
    pub co: Vec<(Cell, Value)>,
    /// Aborted at commit, or retracted later.
    pub aborted: bool,
    /// Log indices of earlier records this one depends on (provenance, extension 2), sorted.
    pub preds: Vec<u32>,
    /// Per-read replica metadata (SPEC §6), sorted by cell, at most one entry per cell, each
    /// cell in `read_set`. Empty for single-store histories; a cell without an entry has no
    /// known replica or version (A4 ignores it).
    pub read_meta: Vec<ReadMeta>,
}

impl OpRecord {
    /// The replica metadata of the read of `c`, if recorded.
    pub fn meta(&self, c: Cell) -> Option<ReadMeta> {
        self.read_meta
            .binary_search_by_key(&c, |m| m.cell)
            .ok()
            .map(|i| self.read_meta[i])
    }

    /// Whether `c` is in the read set.
    pub fn reads(&self, c: Cell) -> bool {
        self.read_set.binary_search(&c).is_ok()
    }

    /// Whether `c` is in the write set.
    pub fn writes(&self, c: Cell) -> bool {
        self.write_set.binary_search(&c).is_ok()
    }
}

/// Sorts and deduplicates a set given as a vector.
pub fn normalize_set<T: Ord>(v: &mut Vec<T>) {
    v.sort_unstable();
    v.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_map_is_a_total_map() {
        let mut m = ValueMap::new();
        assert_eq!(m.get(Cell(3)), Value::NULL);
        m.set(Cell(3), Value(2));
        m.set(Cell(1), Value(1));
        assert_eq!(m.entries(), &[(Cell(1), Value(1)), (Cell(3), Value(2))]);
        m.set(Cell(3), Value::NULL);
        assert_eq!(m, ValueMap::from_pairs([(Cell(1), Value(1))]));
    }

    #[test]
    fn registry_versions() {
        let mut r = Registry::all(2);
        assert!(r.change_signature(Tool(1)));
        assert_eq!(r.get(Tool(1)).map(|e| e.version), Some(1));
        assert!(r.remove(Tool(0)));
        assert!(!r.contains(Tool(0)));
        assert!(!r.remove(Tool(0)));
    }
}
