//! The runtime × anomaly matrix on the abstract model: every runtime (and `si+all-writers`)
//! × A1, A2, A3, A6 in the scenarios of [`super::runtime_matrix::scenario`] (the same extensions,
//! values and tools), at the agents and cells asked for.
//!
//! Each cell says how far its verdict reaches. Without a length bound the abstract state has
//! no length component; if the exploration closes, the verdict covers histories of every
//! length ("all lengths"). The A3 column needs retraction, whose abstract state keeps every
//! live writer: it is run with the op counter ("up to MaxOps N"). A cell whose unbounded run
//! does not close within `max_states` falls back to the bound too. Verdicts hold at the
//! stated agents, cells, values and tools only; the cut-off argument for more agents is in
//! the docs, as an argument.

use super::check_abstract::check_abstract;
use crate::config::Extensions;
use crate::engine::frontier::Storage;
use crate::jobs::run::CheckConfig;
use crate::jobs::runtime_matrix::{expected, scenario};
use crate::models::abstract_model::model::AbstractError;
use crate::property::Property;
use agentsim_models::runtime::RuntimeKind;
use agentsim_models::Anomaly;
use std::time::Instant;

/// The matrix's columns on the abstract model (A4 needs replicas, which it does not have).
pub const COLUMNS: [Anomaly; 4] = [Anomaly::A1, Anomaly::A2, Anomaly::A3, Anomaly::A6];

/// How far a verdict reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every history length (unbounded, closed).
    AllLengths,
    /// Histories of at most this many records.
    UpToMaxOps(u32),
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reach::AllLengths => f.write_str("all lengths"),
            Reach::UpToMaxOps(n) => write!(f, "up to MaxOps {n}"),
        }
    }
}

/// One cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbstractEntry {
    pub admitted: bool,
    /// Steps of the shortest (concretized) witness, when admitted.
    pub witness_steps: Option<usize>,
    /// For a prevented cell, how far the verdict reaches; for an admitted one, whether the
    /// search that found the witness had a length bound.
    pub reach: Reach,
    /// Distinct abstract states of the run that decided the cell.
    pub states: u64,
    /// Wall seconds of that run (exploration, witness search, concretization).
    pub seconds: f64,
    /// What SPEC §5 / Table 2 expects.
    pub expected: bool,
}

/// One runtime's row.
#[derive(Clone, Debug)]
pub struct AbstractRow {
    pub label: String,
    pub kind: RuntimeKind,
    pub all_writers: bool,
    /// In the order of [`COLUMNS`].
    pub entries: Vec<AbstractEntry>,
}

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct MatrixOptions {
    pub agents: u32,
    pub cells: u32,
    /// Length bound for the cells that need one (retraction) or whose unbounded run does
    /// not close, and for every cell when `unbounded_first` is off.
    pub max_ops: u32,
    /// Try every cell without a length bound first.
    pub unbounded_first: bool,
    pub symmetry: bool,
    pub threads: usize,
    pub max_states: u64,
}

/// The check configuration of one cell.
pub fn cell_config(
    kind: RuntimeKind,
    all_writers: bool,
    a: Anomaly,
    o: &MatrixOptions,
) -> Result<CheckConfig, AbstractError> {
    let not_a_column =
        || AbstractError::Unsupported(format!("{a} is not an abstract matrix column"));
    let (mut bounds, ext) = scenario(a, Some(o.max_ops)).ok_or_else(not_a_column)?;
    if !COLUMNS.contains(&a) {
        return Err(not_a_column());
    }
    (bounds.agents, bounds.cells) = (o.agents, o.cells);
    Ok(CheckConfig {
        bounds,
        ext: Extensions { all_writers, ..ext },
        runtime: kind.stack(),
        symmetry: o.symmetry,
        properties: vec![Property::Never(a)],
        threads: o.threads,
        max_states: o.max_states,
    })
}

/// Decides one cell: unbounded when it can close, else up to `o.max_ops`.
pub fn entry(
    kind: RuntimeKind,
    all_writers: bool,
    a: Anomaly,
    o: &MatrixOptions,
) -> Result<AbstractEntry, AbstractError> {
    let cfg = cell_config(kind, all_writers, a, o)?;
    let storage = Storage::default();
    let try_unbounded = o.unbounded_first && !cfg.ext.retraction;
    let start = Instant::now();
    let mut run = None;
    if try_unbounded {
        let r = check_abstract(&cfg, false, &storage)?;
        if r.all_lengths || r.report.violated() {
            run = Some((r, Reach::AllLengths));
        }
    }
    let (r, reach) = match run {
        Some(x) => x,
        None => (
            check_abstract(&cfg, true, &storage)?,
            Reach::UpToMaxOps(o.max_ops),
        ),
    };
    let cx = r.report.verdicts[0].counterexample.as_ref();
    Ok(AbstractEntry {
        admitted: cx.is_some(),
        witness_steps: cx.map(|c| c.steps.len()),
        reach,
        states: r.report.outcome.distinct,
        seconds: start.elapsed().as_secs_f64(),
        expected: expected(kind.stack(), all_writers, a).expect("every column has an expectation"),
    })
}

/// Every runtime, then `si+all-writers`.
pub fn abstract_matrix(o: &MatrixOptions) -> Result<Vec<AbstractRow>, AbstractError> {
    abstract_matrix_with(o, &mut |_, _| {})
}

/// [`abstract_matrix`], calling `progress(done, total)` after each cell is checked, so a
/// command can report progress; the rows are the same.
pub fn abstract_matrix_with(
    o: &MatrixOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<AbstractRow>, AbstractError> {
    let total = (RuntimeKind::ALL.len() + 1) * COLUMNS.len();
    let mut done = 0;
    let rows = RuntimeKind::ALL
        .iter()
        .map(|&k| (k, false))
        .chain([(RuntimeKind::Si, true)]);
    let mut out = Vec::new();
    for (kind, all_writers) in rows {
        let entries = COLUMNS
            .iter()
            .map(|&a| {
                let e = entry(kind, all_writers, a, o);
                done += 1;
                progress(done, total);
                e
            })
            .collect::<Result<_, _>>()?;
        let label = if all_writers {
            format!("{}+all-writers", kind.name())
        } else {
            kind.name().to_owned()
        };
        out.push(AbstractRow {
            label,
            kind,
            all_writers,
            entries,
        });
    }
    Ok(out)
}
