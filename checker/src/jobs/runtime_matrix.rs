//! The runtime × anomaly matrix (SPEC §5, the paper's Table 2): for every runtime and each of
//! A1, A2, A3, A6, an exhaustive check of "never Ak" in a small scenario built to make Ak
//! possible, plus A4 (split view, SPEC §6) as a fifth column. Admitted: the shortest
//! witness's length. Prevented: the states explored.
//!
//! Scenarios (all with canonical writes; `--max-ops` overrides every MaxOps):
//! A1 — 2 agents, 1 cell, 1 value, no tools, MaxOps 2;
//! A2 — 1 agent, 1 cell, 1 value, 1 tool, MaxOps 1, with tool versions;
//! A3 — 1 agent, 1 cell, 1 value, no tools, MaxOps 2, with provenance and retraction;
//! A6 — 1 agent, 2 cells, 1 value, no tools, MaxOps 1;
//! A4 — 2 agents, 1 cell, 1 value, no tools, MaxOps 3, on the replicated store with 1
//! secondary lagging at most 1 entry.
//! A4 needs replicas, which the single-store runtimes do not have; their A4 entry is the
//! runtime composed with the replicated store, its reads going to whichever replica the agent
//! asks (any-replica): none of them routes reads, so each admits A4 (its concurrency control
//! decides what commits, not where a read is served) — except `si+all-writers`, where two
//! reads at one committed version belong to two concurrent writers of that cell and
//! first-committer-wins aborts one (see [`expected`]). Two more rows, `vanilla+session-reads`
//! and `vanilla+pinned-reads`, run only the A4 column under the other read disciplines
//! (their A1–A6 are vanilla's: the disciplines change reads only).
//! The extra row `si+all-writers` is `si` under the all-writers hypothesis, expressed as a
//! model constraint: `CompleteWrite` is enabled only with a write set containing the read
//! set (`rs ⊆ ws`), so no op commits read-only and si validates every commit.
//! "Prevented" holds at these bounds only.

use crate::config::{Bounds, Extensions, Replication, Skew};
use crate::jobs::replicated_run;
use crate::jobs::run::{check, CheckConfig, CheckError};
use crate::property::Property;
use agentsim_models::anomaly::Scope;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::{Mechanism, RuntimeKind, Stack};
use agentsim_models::Anomaly;

/// Why a matrix entry could not be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatrixError {
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The anomaly has no scenario in the matrix (see [`scenario`]).
    #[error("{0} is not a column of the matrix")]
    NotAColumn(Anomaly),
    /// The exploration stopped (its bound on states, the memory ceiling or a cancel) before it
    /// decided: neither a prevention nor a witness.
    #[error("{anomaly} under {stack}: the exploration stopped at {states} states, undecided")]
    Undecided {
        anomaly: Anomaly,
        stack: Stack,
        states: u64,
    },
}

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
    /// The runtime's canonical name, or `si+all-writers`.
    pub label: String,
    pub stack: Stack,
    pub all_writers: bool,
    /// How reads are routed in the A4 column.
    pub reads: ReadDiscipline,
    /// In the order of [`ANOMALIES`]; `None`: not run in this row.
    pub entries: Vec<Option<Entry>>,
}

/// The matrix's columns: every anomaly with a [`scenario`] ([`is_column`]), lattice order
/// first ([`Anomaly::LATTICE`]), then the others in catalogue order (A4).
pub const ANOMALIES: [Anomaly; COLUMNS] = {
    let mut out = [Anomaly::A1; COLUMNS];
    let mut n = 0;
    let mut k = 0;
    while k < Anomaly::LATTICE.len() {
        out[n] = Anomaly::LATTICE[k];
        n += 1;
        k += 1;
    }
    k = 0;
    while k < Anomaly::ALL.len() {
        let a = Anomaly::ALL[k];
        if a.lattice_bit().is_none() && is_column(a) {
            out[n] = a;
            n += 1;
        }
        k += 1;
    }
    out
};

/// How many columns the matrix has.
const COLUMNS: usize = {
    let mut n = 0;
    let mut k = 0;
    while k < Anomaly::ALL.len() {
        n += is_column(Anomaly::ALL[k]) as usize;
        k += 1;
    }
    n
};

/// Whether `a` is a column of the matrix ([`scenario`] gives it one).
const fn is_column(a: Anomaly) -> bool {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A4 | Anomaly::A6 => true,
        // A diagnostic of flat traces; the matrix checks A3 in its preds form.
        Anomaly::A3Residue => false,
    }
}

/// The replicated store of the A4 column: 1 secondary, lag at most 1.
pub fn replication(reads: ReadDiscipline) -> Replication {
    Replication {
        secondaries: 1,
        max_lag: 1,
        discipline: reads,
    }
}

/// The scenario in which "never `a`" is checked; `None` for the A3 residue form, a diagnostic of
/// flat traces that has no column (the matrix checks A3 in its preds form).
pub fn scenario(a: Anomaly, max_ops: Option<u32>) -> Option<(Bounds, Extensions)> {
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
        skew: Skew::Off,
    };
    Some(match a {
        Anomaly::A1 => (base(2, 1, 0, 2), canonical),
        Anomaly::A2 => (
            base(1, 1, 1, 1),
            Extensions {
                tool_versions: true,
                ..canonical
            },
        ),
        Anomaly::A3 => (
            base(1, 1, 0, 2),
            Extensions {
                provenance: true,
                retraction: true,
                ..canonical
            },
        ),
        Anomaly::A3Residue => return None,
        Anomaly::A6 => (base(1, 2, 0, 1), canonical),
        Anomaly::A4 => (base(2, 1, 0, 3), canonical),
    })
}

/// Whether SPEC §5 / Table 2 expects `kind` to admit `p`: A1 only at L0, A3 at L0–L1, A6 at
/// L0–L2, A2 at L0–L3; `si` admits A1 unless every op writes what it reads. A4 (SPEC §6),
/// with reads to any replica, is admitted by every runtime except `si` under all-writers: two
/// live reads of a cell at one committed version were both taken before either op committed,
/// so with `rs ⊆ ws` they are two concurrent writers of that cell, and first-committer-wins
/// aborts one of them. (Pinned reads prevent A4 in every row; see [`entry`].)
/// The residue form has no expectation (no column): `None`.
///
/// For any stack the expectation is what its mechanisms compose to: A1 prevented by `lock`
/// or `validate` (or `validate-writers` under all-writers), A3 by `validate-preds` with
/// `cascade`, A6 by `sequencer`, A2 by `pin` or `validate-tool`, A4 under all-writers by
/// either validation; for the named runtimes that is the level rule above (a test holds the
/// two equal). Each mechanism's share is one arm of an exhaustive match, so a new mechanism
/// does not compile until it says what it is expected to prevent.
pub fn expected(stack: Stack, all_writers: bool, a: Anomaly) -> Option<bool> {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A4 | Anomaly::A6 => Some(
            !stack
                .mechanisms()
                .any(|m| prevents(m, stack, all_writers, a)),
        ),
        // Not a column (see [`scenario`]).
        Anomaly::A3Residue => None,
    }
}

/// Whether mechanism `m` of `stack` prevents `a` (see [`expected`]): every mechanism is
/// named, so a new one is a compile error here until its effect on the matrix is said.
fn prevents(m: Mechanism, stack: Stack, all_writers: bool, a: Anomaly) -> bool {
    use Mechanism::*;
    match m {
        Lock => a == Anomaly::A1,
        Validate => a == Anomaly::A1 || (all_writers && a == Anomaly::A4),
        ValidateWriters => all_writers && matches!(a, Anomaly::A1 | Anomaly::A4),
        ValidatePreds => a == Anomaly::A3 && stack.contains(Cascade),
        Cascade => a == Anomaly::A3 && stack.contains(ValidatePreds),
        Sequencer => a == Anomaly::A6,
        Pin | ValidateTool => a == Anomaly::A2,
    }
}

/// What one exhaustive check of "never `a`" found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub admitted: bool,
    /// Steps of the shortest witness, when admitted.
    pub witness_steps: Option<usize>,
    /// Distinct states explored.
    pub states: u64,
}

/// The bound on distinct states of every matrix check (the scenarios stay far below it).
pub const MAX_STATES: u64 = 50_000_000;

/// Checks "never `a`" under `stack` in `a`'s scenario, exploring at most `max_states`
/// distinct states (an exploration it stops is an error, never a verdict); A4 on the
/// replicated store read `reads`.
pub fn verdict(
    stack: Stack,
    all_writers: bool,
    reads: ReadDiscipline,
    a: Anomaly,
    max_ops: Option<u32>,
    threads: usize,
    max_states: u64,
) -> Result<Verdict, MatrixError> {
    let Some((bounds, ext)) = scenario(a, max_ops) else {
        return Err(MatrixError::NotAColumn(a));
    };
    let cfg = CheckConfig {
        bounds,
        ext: Extensions { all_writers, ..ext },
        runtime: stack,
        symmetry: false,
        properties: vec![Property::Never(a)],
        threads,
        max_states,
    };
    let report = match a.scope() {
        Scope::Replicated => replicated_run::check(&cfg, replication(reads))?,
        Scope::Any => check(&cfg)?,
    };
    if !report.outcome.complete && !report.outcome.all_violated {
        return Err(MatrixError::Undecided {
            anomaly: a,
            stack,
            states: report.outcome.distinct,
        });
    }
    let cx = report.verdicts[0].counterexample.as_ref();
    Ok(Verdict {
        admitted: cx.is_some(),
        witness_steps: cx.map(|c| c.steps.len()),
        states: report.outcome.distinct,
    })
}

/// Checks "never `a`" for `stack` in `a`'s scenario; A4 on the replicated store read `reads`.
pub fn entry(
    stack: Stack,
    all_writers: bool,
    reads: ReadDiscipline,
    a: Anomaly,
    max_ops: Option<u32>,
    threads: usize,
) -> Result<Entry, MatrixError> {
    let Some(expected) = expected(stack, all_writers, a) else {
        return Err(MatrixError::NotAColumn(a));
    };
    let v = verdict(stack, all_writers, reads, a, max_ops, threads, MAX_STATES)?;
    // Pinned reads prevent A4 in every row.
    let expected = expected && !(a == Anomaly::A4 && reads == ReadDiscipline::PrimaryPinned);
    Ok(Entry {
        admitted: v.admitted,
        witness_steps: v.witness_steps,
        states: v.states,
        expected,
    })
}

/// Computes one runtime's row (A4 with any-replica reads).
pub fn row(
    stack: Stack,
    all_writers: bool,
    max_ops: Option<u32>,
    threads: usize,
) -> Result<Row, MatrixError> {
    row_with(stack, all_writers, max_ops, threads, &mut || {})
}

/// [`row`], calling `cell_done` after each entry is checked (for progress reports).
fn row_with(
    stack: Stack,
    all_writers: bool,
    max_ops: Option<u32>,
    threads: usize,
    cell_done: &mut dyn FnMut(),
) -> Result<Row, MatrixError> {
    let reads = ReadDiscipline::AnyReplica;
    let entries = ANOMALIES
        .iter()
        .map(|&p| {
            let e = entry(stack, all_writers, reads, p, max_ops, threads).map(Some);
            cell_done();
            e
        })
        .collect::<Result<_, _>>()?;
    let label = if all_writers {
        format!("{stack}+all-writers")
    } else {
        stack.to_string()
    };
    Ok(Row {
        label,
        stack,
        all_writers,
        reads,
        entries,
    })
}

/// A row for a read discipline other than any-replica: `vanilla` writes, A4 only.
pub fn reads_row(
    reads: ReadDiscipline,
    max_ops: Option<u32>,
    threads: usize,
) -> Result<Row, MatrixError> {
    let stack = Stack::VANILLA;
    let a4 = entry(stack, false, reads, Anomaly::A4, max_ops, threads)?;
    let mut entries = vec![None; ANOMALIES.len() - 1];
    entries.push(Some(a4));
    let short = match reads {
        ReadDiscipline::PrimaryPinned => "pinned",
        other => other.name(),
    };
    Ok(Row {
        label: format!("{stack}+{short}-reads"),
        stack,
        all_writers: false,
        reads,
        entries,
    })
}

/// Every runtime, then `si+all-writers`, then `vanilla+session-reads` and
/// `vanilla+pinned-reads` (A4 only).
pub fn matrix(max_ops: Option<u32>, threads: usize) -> Result<Vec<Row>, MatrixError> {
    matrix_with(max_ops, threads, &mut |_, _| {})
}

/// [`matrix`], calling `progress(done, total)` after each check (cell) finishes, so a
/// command can report progress; the rows are the same.
pub fn matrix_with(
    max_ops: Option<u32>,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Row>, MatrixError> {
    let total = (RuntimeKind::ALL.len() + 1) * ANOMALIES.len() + 2;
    let mut done = 0;
    let mut tick = || {
        done += 1;
        progress(done, total);
    };
    let mut rows = Vec::new();
    for kind in RuntimeKind::ALL {
        rows.push(row_with(kind.stack(), false, max_ops, threads, &mut tick)?);
    }
    rows.push(row_with(
        RuntimeKind::Si.stack(),
        true,
        max_ops,
        threads,
        &mut tick,
    )?);
    for reads in [ReadDiscipline::Session, ReadDiscipline::PrimaryPinned] {
        rows.push(reads_row(reads, max_ops, threads)?);
        tick();
    }
    Ok(rows)
}

/// The rows of `stacks` (A1–A6 and A4 with any-replica reads), in the order given.
pub fn stack_rows(
    stacks: &[Stack],
    max_ops: Option<u32>,
    threads: usize,
) -> Result<Vec<Row>, MatrixError> {
    stack_rows_with(stacks, max_ops, threads, &mut |_, _| {})
}

/// [`stack_rows`], calling `progress(done, total)` after each check (cell) finishes.
pub fn stack_rows_with(
    stacks: &[Stack],
    max_ops: Option<u32>,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Row>, MatrixError> {
    let total = stacks.len() * ANOMALIES.len();
    let mut done = 0;
    let mut tick = || {
        done += 1;
        progress(done, total);
    };
    stacks
        .iter()
        .map(|&s| row_with(s, false, max_ops, threads, &mut tick))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2's shape: vanilla admits everything, registry-validate nothing of A1–A6 but A4
    /// (it does not route reads).
    #[test]
    fn expectations_follow_the_chain() {
        let reg = RuntimeKind::parse("registry").unwrap();
        let expected = |k: RuntimeKind, w, a| expected(k.stack(), w, a).expect("a column");
        for a in ANOMALIES {
            assert!(expected(RuntimeKind::Vanilla, false, a));
            assert_eq!(expected(reg, false, a), a == Anomaly::A4, "{a:?}");
        }
        assert!(expected(RuntimeKind::Si, false, Anomaly::A1));
        assert!(!expected(RuntimeKind::Si, true, Anomaly::A1));
        assert!(!expected(RuntimeKind::Saga, false, Anomaly::A6));
        assert!(expected(RuntimeKind::Saga, false, Anomaly::A2));
        assert!(expected(RuntimeKind::Saga, false, Anomaly::A4));
        assert!(!expected(RuntimeKind::Si, true, Anomaly::A4));
    }

    /// For the named runtimes the composition rule is SPEC §5's level rule: A1 only at L0
    /// and si (unless all-writers), A3 at L0–L1, A6 at L0–L2, A2 at L0–L3, A4 everywhere but
    /// si under all-writers.
    #[test]
    fn the_composition_of_a_named_stack_is_its_level() {
        for kind in RuntimeKind::ALL {
            for all_writers in [false, true] {
                if all_writers && kind != RuntimeKind::Si {
                    continue;
                }
                let level = kind.level();
                let si = kind == RuntimeKind::Si;
                for a in ANOMALIES {
                    let by_level = match a {
                        Anomaly::A4 => !(all_writers && si),
                        Anomaly::A1 => level == 0 || (si && !all_writers),
                        Anomaly::A3 => level <= 1,
                        Anomaly::A6 => level <= 2,
                        Anomaly::A2 => level <= 3,
                        Anomaly::A3Residue => unreachable!("not a column"),
                    };
                    assert_eq!(
                        expected(kind.stack(), all_writers, a),
                        Some(by_level),
                        "{kind} {all_writers} {a}"
                    );
                }
            }
        }
    }

    /// Every anomaly of the catalogue with a scenario is a column, and only those.
    #[test]
    fn the_columns_are_the_catalogue_entries_with_a_scenario() {
        for a in Anomaly::ALL {
            assert_eq!(scenario(a, None).is_some(), ANOMALIES.contains(&a), "{a}");
        }
        let err = entry(
            Stack::VANILLA,
            false,
            ReadDiscipline::AnyReplica,
            Anomaly::A3Residue,
            None,
            1,
        );
        assert_eq!(err, Err(MatrixError::NotAColumn(Anomaly::A3Residue)));
    }

    /// The A4 column separates the disciplines: session splits across agents, pinned not.
    #[test]
    fn a4_column_follows_the_read_discipline() {
        let session = reads_row(ReadDiscipline::Session, None, 2).unwrap();
        let pinned = reads_row(ReadDiscipline::PrimaryPinned, None, 2).unwrap();
        assert_eq!(pinned.label, "vanilla+pinned-reads");
        assert!(session.entries[..4].iter().all(Option::is_none));
        let a4 = |r: &Row| r.entries[4].expect("A4 is run");
        assert_eq!(a4(&session).witness_steps, Some(6));
        assert!(!a4(&pinned).admitted);
        assert_eq!(a4(&pinned).states, 39_469);
        assert!(a4(&pinned).expected == a4(&pinned).admitted);
    }
}
