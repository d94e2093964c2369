//! The checker's constants (SPEC §1) and extension switches, validated once.
//!
//! `Bounds` are the model constants: `Agents`, `Cells`, `Values` (non-NULL, so `values = 2`
//! is {v1, v2}), `Tools`, `MaxOps`, `ExternalCells` (the first `external` cells) and
//! `AllowSkew`. A read of cell c may deviate from memory (any value in Values ∪ {NULL}) iff
//! `skew ∧ c ∈ ExternalCells`; every other read equals memory — the same reading as the TLA+
//! twin. Validation only rejects bounds the compact encoding cannot represent; it does not
//! say a run at the accepted bounds is cheap.

use thiserror::Error;

/// Largest supported counts (the packed encoding's field widths are derived from them).
pub const AGENTS_MAX: u32 = 6;
pub const CELLS_MAX: u32 = 4;
pub const VALUES_MAX: u32 = 7;
pub const TOOLS_MAX: u32 = 4;
pub const MAX_OPS_MAX: u32 = 12;

/// The model constants of SPEC §1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub agents: u32,
    pub cells: u32,
    /// Number of non-NULL values.
    pub values: u32,
    pub tools: u32,
    pub max_ops: u32,
    /// `ExternalCells` = the first `external` cells.
    pub external: u32,
    /// `AllowSkew`.
    pub skew: bool,
}

impl Bounds {
    /// The paper's first pinned TLC configuration: 1 agent, 1 cell, MaxOps 2.
    pub fn paper(agents: u32, cells: u32, max_ops: u32) -> Bounds {
        Bounds {
            agents,
            cells,
            values: 2,
            tools: 2,
            max_ops,
            external: 0,
            skew: false,
        }
    }

    /// Whether reads of `cell` may deviate from memory.
    pub fn skewed(&self, cell: u32) -> bool {
        self.skew && cell < self.external
    }

    /// Checks every bound; the error names the offending flag.
    pub fn validate(&self) -> Result<(), BoundsError> {
        range("agents", self.agents, 1, AGENTS_MAX)?;
        range("cells", self.cells, 1, CELLS_MAX)?;
        range("values", self.values, 1, VALUES_MAX)?;
        range("tools", self.tools, 0, TOOLS_MAX)?;
        range("max-ops", self.max_ops, 1, MAX_OPS_MAX)?;
        range("external", self.external, 0, self.cells)?;
        Ok(())
    }
}

fn range(name: &'static str, got: u32, min: u32, max: u32) -> Result<(), BoundsError> {
    if got < min || got > max {
        return Err(BoundsError::OutOfRange {
            name,
            got,
            min,
            max,
        });
    }
    Ok(())
}

/// A bound the checker cannot run with.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BoundsError {
    #[error("--{name} {got} is out of range: expected {min}..={max}")]
    OutOfRange {
        name: &'static str,
        got: u32,
        min: u32,
        max: u32,
    },
    #[error("{0}")]
    Unsupported(String),
}

/// Extension switches (SPEC §1 "Extensions"); all off is paper-faithful.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Extensions {
    /// 1. `wv` is NULL outside the write set.
    pub canonical_writes: bool,
    /// 2. `preds` are recorded at StartRead (forced on by causal and above).
    pub provenance: bool,
    /// 3. `Retract(i)` is enabled (runtimes may also abort at commit, always).
    pub retraction: bool,
    /// 4. `ChangeSignature(t)` is enabled.
    pub tool_versions: bool,
    /// Not a SPEC extension: `CompleteWrite` must write every cell it read (`rs ⊆ ws`), the
    /// "all-writers" hypothesis under which `si` excludes A1.
    pub all_writers: bool,
}

impl Extensions {
    /// Whether every extension is off.
    pub fn is_paper(&self) -> bool {
        *self == Extensions::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_out_of_range_with_the_flag_name() {
        let mut b = Bounds::paper(1, 1, 2);
        assert!(b.validate().is_ok());
        b.cells = 9;
        let e = b.validate().unwrap_err().to_string();
        assert!(e.contains("--cells 9"), "{e}");
        b.cells = 1;
        b.external = 2;
        assert!(b.validate().is_err());
    }

    #[test]
    fn skew_needs_both_switches() {
        let mut b = Bounds::paper(1, 2, 2);
        b.external = 1;
        assert!(!b.skewed(0));
        b.skew = true;
        assert!(b.skewed(0));
        assert!(!b.skewed(1));
    }
}
