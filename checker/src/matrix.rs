//! The runtime × anomaly matrix (SPEC §5, the paper's Table 2): for every runtime and each of
//! A1, A2, A3, A6, an exhaustive check of "never Ak" in a small scenario built to make Ak
//! possible. Admitted: the shortest witness's length. Prevented: the states explored.
//!
//! Scenarios (all with canonical writes; `--max-ops` overrides every MaxOps):
//! A1 — 2 agents, 1 cell, 1 value, no tools, MaxOps 2;
//! A2 — 1 agent, 1 cell, 1 value, 1 tool, MaxOps 1, with tool versions;
//! A3 — 1 agent, 1 cell, 1 value, no tools, MaxOps 2, with provenance and retraction;
//! A6 — 1 agent, 2 cells, 1 value, no tools, MaxOps 1.
//! The extra row `si+all-writers` is `si` under the all-writers hypothesis, expressed as a
//! model constraint: `CompleteWrite` is enabled only with a write set containing the read
//! set (`rs ⊆ ws`), so no op commits read-only and si validates every commit.
//! "Prevented" holds at these bounds only.

use crate::config::{Bounds, BoundsError, Extensions};
use crate::property::Property;
use crate::run::{check, CheckConfig};
use agentsim_models::runtime::RuntimeKind;

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub admitted: bool,
    /// Steps of the shortest witness, when admitted.
    pub witness_steps: Option<usize>,
    /// Distinct states explored.
    pub states: u64,
    /// What SPEC §5 / Table 2 expects.
    pub expected: bool,
}

/// One runtime's row.
#[derive(Clone, Debug)]
pub struct Row {
    /// The runtime's CLI name, or `si+all-writers`.
    pub label: String,
    pub kind: RuntimeKind,
    pub all_writers: bool,
    /// In the order of [`ANOMALIES`].
    pub entries: Vec<Entry>,
}

/// The matrix's columns.
pub const ANOMALIES: [Property; 4] = [Property::A1, Property::A2, Property::A3, Property::A6];

/// The scenario in which `p` is checked.
pub fn scenario(p: Property, max_ops: Option<u32>) -> (Bounds, Extensions) {
    let canonical = Extensions {
        canonical_writes: true,
        ..Extensions::default()
    };
    let base = |agents, cells, tools, ops| Bounds {
        agents,
        cells,
        values: 1,
        tools,
        max_ops: max_ops.unwrap_or(ops),
        external: 0,
        skew: false,
    };
    match p {
        Property::A2 => (
            base(1, 1, 1, 1),
            Extensions {
                tool_versions: true,
                ..canonical
            },
        ),
        Property::A3 => (
            base(1, 1, 0, 2),
            Extensions {
                provenance: true,
                retraction: true,
                ..canonical
            },
        ),
        Property::A6 => (base(1, 2, 0, 1), canonical),
        _ => (base(2, 1, 0, 2), canonical),
    }
}

/// Whether SPEC §5 / Table 2 expects `kind` to admit `p`: A1 only at L0, A3 at L0–L1, A6 at
/// L0–L2, A2 at L0–L3; `si` admits A1 unless every op writes what it reads.
pub fn expected(kind: RuntimeKind, all_writers: bool, p: Property) -> bool {
    let level = kind.level();
    match p {
        Property::A1 => level == 0 || (kind == RuntimeKind::Si && !all_writers),
        Property::A3 => level <= 1,
        Property::A6 => level <= 2,
        _ => level <= 3,
    }
}

/// Computes one row.
pub fn row(
    kind: RuntimeKind,
    all_writers: bool,
    max_ops: Option<u32>,
    threads: usize,
) -> Result<Row, BoundsError> {
    let mut entries = Vec::new();
    for p in ANOMALIES {
        let (bounds, ext) = scenario(p, max_ops);
        let cfg = CheckConfig {
            bounds,
            ext: Extensions { all_writers, ..ext },
            runtime: kind,
            symmetry: false,
            properties: vec![p],
            threads,
            max_states: 50_000_000,
        };
        let report = check(&cfg)?;
        let cx = report.verdicts[0].counterexample.as_ref();
        entries.push(Entry {
            admitted: cx.is_some(),
            witness_steps: cx.map(|c| c.steps.len()),
            states: report.outcome.distinct,
            expected: expected(kind, all_writers, p),
        });
    }
    let label = if all_writers {
        format!("{}+all-writers", kind.name())
    } else {
        kind.name().to_owned()
    };
    Ok(Row {
        label,
        kind,
        all_writers,
        entries,
    })
}

/// Every runtime, then `si+all-writers`.
pub fn matrix(max_ops: Option<u32>, threads: usize) -> Result<Vec<Row>, BoundsError> {
    let mut rows = Vec::new();
    for kind in RuntimeKind::ALL {
        rows.push(row(kind, false, max_ops, threads)?);
    }
    rows.push(row(RuntimeKind::Si, true, max_ops, threads)?);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2's shape: vanilla admits everything, registry-validate nothing.
    #[test]
    fn expectations_follow_the_chain() {
        for p in ANOMALIES {
            assert!(expected(RuntimeKind::Vanilla, false, p));
            let reg = RuntimeKind::parse("registry").unwrap();
            assert!(!expected(reg, false, p));
        }
        assert!(expected(RuntimeKind::Si, false, Property::A1));
        assert!(!expected(RuntimeKind::Si, true, Property::A1));
        assert!(!expected(RuntimeKind::Saga, false, Property::A6));
        assert!(expected(RuntimeKind::Saga, false, Property::A2));
    }
}
