//! Interned names: agents, cells, tools and values as small integers.
//!
//! Detectors, runtimes and the checker work on `u32` ids so that records are cheap to
//! compare, hash and sort. A [`Names`] table maps ids back to the strings a user wrote.
//! Value id 0 is NULL (SPEC §1: "a sentinel not in Values; it is value 0 in code").

use std::collections::BTreeMap;
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interner {
    names: Vec<String>,
    ids: BTreeMap<String, u32>,
}

impl Interner {
    /// The id of `name`, assigning the next one if it is new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than u32::MAX names");
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The id of `name`, if it was interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The name of `id`, if it exists.
    #[inline]
    pub fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    /// How many names are interned.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name is interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
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
    /// Interns a non-NULL value.
    pub fn value(&mut self, name: &str) -> Value {
        Value(self.values.intern(name) + 1)
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
        Some(
            self.values
                .name(v.0 - 1)
                .map_or_else(|| v.to_string(), str::to_owned),
        )
    }
    /// The interned name of a non-NULL value, borrowed (`None` for NULL or a value never
    /// interned).
    #[inline]
    pub fn interned_value(&self, v: Value) -> Option<&str> {
        if v.is_null() {
            return None;
        }
        self.values.name(v.0 - 1)
    }
    /// The value's name, `NULL` for NULL (for human-readable output).
    pub fn value_display(&self, v: Value) -> String {
        self.value_name(v).unwrap_or_else(|| "NULL".to_owned())
    }
    /// Number of non-NULL values interned.
    pub fn value_count(&self) -> usize {
        self.values.len()
    }
    /// Looks up a value by name without interning.
    pub fn find_value(&self, name: &str) -> Option<Value> {
        self.values.get(name).map(|id| Value(id + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
