//! The checker's constants (SPEC §1) and extension switches, validated once.
//!
//! `Bounds` are the model constants: `Agents`, `Cells`, `Values` (non-NULL, so `values = 2`
//! is {v1, v2}), `Tools`, `MaxOps`, `ExternalCells` (the first `external` cells) and
//! `AllowSkew` ([`Skew`]). The paper's `AllowSkew` frees the read values of every cell
//! (`(~AllowSkew) => (rv = memory)` in its `Memory.tla`): [`Skew::Every`], a read of any cell
//! may return any value of Values ∪ {NULL}. [`Skew::External`] is this project's extension 5:
//! only reads of `ExternalCells` are free (cells an outside writer changes), every other read
//! equals memory. `ExternalCells` means something only to that extension, so validation
//! refuses it elsewhere. The TLA+ twin has both (`AllowSkew`, `SkewExternalOnly`). Validation
//! rejects bounds the compact encoding cannot represent and combinations that would leave a
//! constant without effect; it does not say a run at the accepted bounds is cheap. [`Replication`] adds the replicated store's
//! constants (SPEC §6) and says which SPEC §1 switches that model does not have.

use agentsim_models::replica::ReadDiscipline;
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
    /// `ExternalCells` = the first `external` cells (only [`Skew::External`] reads it).
    pub external: u32,
    /// `AllowSkew`: which reads may deviate from memory.
    pub skew: Skew,
}

/// Which reads may deviate from memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Skew {
    /// `AllowSkew = FALSE`: every read equals memory.
    #[default]
    Off,
    /// The paper's `AllowSkew = TRUE`: a read of any cell may return any value.
    Every,
    /// Extension 5 (`SkewExternalOnly`): reads of `ExternalCells` may return any value,
    /// reads of the other cells equal memory.
    External,
}

impl Skew {
    /// The reading's name in reports: `off`, `every-cell`, `external-only`.
    pub fn name(self) -> &'static str {
        match self {
            Skew::Off => "off",
            Skew::Every => "every-cell",
            Skew::External => "external-only",
        }
    }
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
            skew: Skew::Off,
        }
    }

    /// Whether reads of `cell` may deviate from memory.
    pub fn skewed(&self, cell: u32) -> bool {
        match self.skew {
            Skew::Off => false,
            Skew::Every => cell < self.cells,
            Skew::External => cell < self.external,
        }
    }

    /// Whether some read may deviate from memory.
    pub fn any_skew(&self) -> bool {
        (0..self.cells).any(|c| self.skewed(c))
    }

    /// Whether every cell is treated alike by the reads (no cell is singled out as external),
    /// so that renaming cells is a symmetry of the read choices.
    pub fn cells_alike(&self) -> bool {
        (0..self.cells).all(|c| self.skewed(c) == self.skewed(0))
    }

    /// Checks every bound; the error names the offending constant.
    pub fn validate(&self) -> Result<(), BoundsError> {
        range(Bound::Agents, self.agents, 1, AGENTS_MAX)?;
        range(Bound::Cells, self.cells, 1, CELLS_MAX)?;
        range(Bound::Values, self.values, 1, VALUES_MAX)?;
        range(Bound::Tools, self.tools, 0, TOOLS_MAX)?;
        range(Bound::MaxOps, self.max_ops, 1, MAX_OPS_MAX)?;
        range(Bound::External, self.external, 0, self.cells)?;
        match (self.skew, self.external) {
            (Skew::External, 0) => Err(BoundsError::SkewExternalNone),
            (Skew::Off | Skew::Every, n) if n > 0 => Err(BoundsError::ExternalUnused(self.skew)),
            _ => Ok(()),
        }
    }
}

fn range(bound: Bound, got: impl Into<u64>, min: u32, max: u32) -> Result<(), BoundsError> {
    let got = got.into();
    if got < u64::from(min) || got > u64::from(max) {
        return Err(BoundsError::OutOfRange {
            bound,
            got,
            min,
            max,
        });
    }
    Ok(())
}

/// A model constant, as SPEC §1 and §6 name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Agents,
    Cells,
    Values,
    Tools,
    MaxOps,
    External,
    Secondaries,
    MaxLag,
}

impl Bound {
    /// The constant's name in SPEC §1 and §6.
    pub fn name(self) -> &'static str {
        match self {
            Bound::Agents => "Agents",
            Bound::Cells => "Cells",
            Bound::Values => "Values",
            Bound::Tools => "Tools",
            Bound::MaxOps => "MaxOps",
            Bound::External => "ExternalCells",
            Bound::Secondaries => "Secondaries",
            Bound::MaxLag => "MaxLag",
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the replicated model (SPEC §6) does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotReplicated {
    Tools,
    Skew,
    RetractionOrToolVersions,
    Symmetry,
}

impl std::fmt::Display for NotReplicated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotReplicated::Tools => "tools",
            NotReplicated::Skew => "skewed reads (replicas are the skew)",
            NotReplicated::RetractionOrToolVersions => "retraction or tool versions",
            NotReplicated::Symmetry => "symmetry reduction",
        })
    }
}

/// A bound the checker cannot run with.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BoundsError {
    #[error("{bound} = {got} is out of range: expected {min}..={max}")]
    OutOfRange {
        bound: Bound,
        got: u64,
        min: u32,
        max: u32,
    },
    #[error("the replicated model has no {0}")]
    NotReplicated(NotReplicated),
    #[error("provenance, retraction and tool versions need the runtime model")]
    PaperExtensions,
    /// External-only skew with no external cell would free no read.
    #[error("skew on ExternalCells only, with ExternalCells empty, frees no read")]
    SkewExternalNone,
    /// `ExternalCells` is non-empty but the skew reading does not consult it.
    #[error(
        "ExternalCells is read only by skew on external cells; with {} it has no effect",
        match .0 { Skew::Every => "AllowSkew on every cell", _ => "no skew" }
    )]
    ExternalUnused(Skew),
    #[error(transparent)]
    Stack(#[from] agentsim_models::runtime::StackError),
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

/// Largest number of secondaries and largest lag bound of the replicated model.
pub const SECONDARIES_MAX: u32 = 3;
pub const MAX_LAG_MAX: u64 = 3;

/// The replicated store's constants (SPEC §6): `secondaries` secondaries, each lagging at most
/// `max_lag` entries per cell behind the primary, and how reads are routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Replication {
    pub secondaries: u32,
    pub max_lag: u64,
    pub discipline: ReadDiscipline,
}

impl Replication {
    /// Checks the constants and that the rest of the configuration is one the replicated
    /// model has: it has no tools, no skew, no retraction, no tool versions and no symmetry
    /// reduction (A4 is about reads, and these would only grow the space or mean nothing).
    pub fn validate(
        &self,
        b: &Bounds,
        ext: &Extensions,
        symmetry: bool,
    ) -> Result<(), BoundsError> {
        range(Bound::Secondaries, self.secondaries, 1, SECONDARIES_MAX)?;
        range(Bound::MaxLag, self.max_lag, 0, MAX_LAG_MAX as u32)?;
        b.validate()?;
        let refuse = |what| Err(BoundsError::NotReplicated(what));
        if b.tools != 0 {
            return refuse(NotReplicated::Tools);
        }
        if b.skew != Skew::Off || b.external != 0 {
            return refuse(NotReplicated::Skew);
        }
        if ext.retraction || ext.tool_versions {
            return refuse(NotReplicated::RetractionOrToolVersions);
        }
        if symmetry {
            return refuse(NotReplicated::Symmetry);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_refuses_what_the_model_lacks() {
        let rep = Replication {
            secondaries: 1,
            max_lag: 1,
            discipline: ReadDiscipline::AnyReplica,
        };
        let mut b = Bounds::paper(2, 1, 3);
        let ext = Extensions::default();
        let err = |b: &Bounds, r: &Replication, sym| r.validate(b, &ext, sym).unwrap_err();
        assert!(err(&b, &rep, false).to_string().contains("no tools"));
        b.tools = 0;
        assert!(rep.validate(&b, &ext, false).is_ok());
        assert!(err(&b, &rep, true).to_string().contains("symmetry"));
        let none = Replication {
            secondaries: 0,
            ..rep
        };
        assert!(err(&b, &none, false)
            .to_string()
            .contains("Secondaries = 0"));
        let far = Replication { max_lag: 9, ..rep };
        assert!(err(&b, &far, false).to_string().contains("MaxLag = 9"));
        let huge = Replication {
            max_lag: u64::MAX,
            ..rep
        };
        let e = err(&b, &huge, false).to_string();
        assert!(e.contains(&format!("MaxLag = {}", u64::MAX)), "{e}");
    }

    #[test]
    fn rejects_out_of_range_naming_the_constant() {
        let mut b = Bounds::paper(1, 1, 2);
        assert!(b.validate().is_ok());
        b.cells = 9;
        let e = b.validate().unwrap_err().to_string();
        assert!(e.contains("Cells = 9"), "{e}");
        b.cells = 1;
        b.external = 2;
        assert!(b.validate().is_err());
    }

    #[test]
    fn paper_skew_frees_every_cell_and_the_extension_only_external_ones() {
        let mut b = Bounds::paper(1, 2, 2);
        assert!(!b.any_skew() && b.cells_alike());
        b.skew = Skew::Every;
        assert!(b.skewed(0) && b.skewed(1) && !b.skewed(2));
        assert!(b.cells_alike() && b.validate().is_ok());
        b.skew = Skew::External;
        assert_eq!(b.validate(), Err(BoundsError::SkewExternalNone));
        b.external = 1;
        assert!(b.validate().is_ok());
        assert!(b.skewed(0) && !b.skewed(1) && !b.cells_alike());
        b.external = 2;
        assert!(b.skewed(1) && b.cells_alike());
        for skew in [Skew::Off, Skew::Every] {
            b.skew = skew;
            let e = b.validate().unwrap_err();
            assert_eq!(e, BoundsError::ExternalUnused(skew));
            assert!(e.to_string().contains("no effect"), "{e}");
        }
    }
}
