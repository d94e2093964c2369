//! `agentsim matrix`: every runtime × A1/A2/A3/A6/A4, admitted (shortest witness length) or
//! prevented (exhaustively, states explored), compared with SPEC §5 / Table 2 and, for A4,
//! SPEC §6 (admitted unless reads are pinned to the primary).
//!
//! The scenarios, how `si`'s all-writers restriction is expressed (a model constraint:
//! `CompleteWrite` needs `rs ⊆ ws`) and how the single-store runtimes get an A4 entry (composed
//! with the replicated store, reads to any replica) are documented in
//! `agentsim_checker::jobs::runtime_matrix`. The `+session-reads` / `+pinned-reads` rows run A4 only; their
//! other cells print `-` and are absent from `--json`. Exit 1 if any entry disagrees with the
//! expectation. "Prevented" is a claim at these bounds only.
//!
//! `--runtime S1,S2,…` runs the rows of those stacks instead (a named runtime or a `+`-joined
//! stack of mechanisms, each printed by its canonical name), each against what its
//! mechanisms compose to (`agentsim_checker::jobs::runtime_matrix::expected`); a stack on the named chain
//! shows its level there, any other `-`.
//!
//! Progress (`--progress`, `--quiet`, see `cmd::progress`): a line on stderr with the checks
//! (cells) done of the total; stdout is the same bytes either way.

use crate::cmd::progress::{Items, ProgressArgs};
use agentsim_checker::jobs::runtime_matrix::{self, Row, ANOMALIES};
use agentsim_models::lattice::{self, Point};
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use clap::Args as ClapArgs;
use serde_json::json;
use std::process::ExitCode;

/// Print the runtime × anomaly matrix.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// MaxOps for every scenario (default: the smallest that admits each anomaly).
    #[arg(long)]
    pub max_ops: Option<u32>,
    /// Worker threads, 1..=256 (the matrix does not depend on it); default: all cores.
    #[arg(long, value_parser = crate::limits::threads)]
    pub threads: Option<usize>,
    /// Print one JSON object: runtime → anomaly → {admitted, witness_steps, states}.
    #[arg(long)]
    pub json: bool,
    /// The matrix on the history-free abstract model, with how far each verdict reaches
    /// (see `matrix_abstract`); `--max-ops` then bounds the A3 column only (default 4).
    #[arg(long = "abstract")]
    pub abstract_model: bool,
    /// With --abstract: agents (default 3).
    #[arg(long, requires = "abstract_model")]
    pub agents: Option<u32>,
    /// With --abstract: cells (default 2).
    #[arg(long, requires = "abstract_model")]
    pub cells: Option<u32>,
    /// Only these runtimes: comma-separated named runtimes or `+`-joined stacks of
    /// mechanisms (e.g. `ssi,lock+sequencer`).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "STACK,...",
        conflicts_with = "abstract_model"
    )]
    pub runtime: Vec<Stack>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// The worker threads: `--threads` (1..=256 by its parser) or the one default.
pub fn threads(args: &Args) -> usize {
    args.threads.unwrap_or_else(crate::limits::default_threads)
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut progress = Items::new("matrix", "checks", args.progress);
    let mut checked = 0;
    let mut on_cell = |done, total| {
        checked = done;
        progress.done(done, Some(total));
    };
    let rows = if args.runtime.is_empty() {
        runtime_matrix::matrix_with(args.max_ops, threads(&args), &mut on_cell)?
    } else {
        let mut stacks: Vec<_> = args.runtime.to_vec();
        // One row per stack, first mention first (`lock,pessimistic` is one stack).
        let mut seen = Vec::new();
        stacks.retain(|s| {
            !seen.contains(s) && {
                seen.push(*s);
                true
            }
        });
        runtime_matrix::stack_rows_with(&stacks, args.max_ops, threads(&args), &mut on_cell)?
    };
    progress.finish(checked);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&rows))?);
    } else {
        print!("{}", text(&rows, !args.runtime.is_empty()));
    }
    let agrees = rows
        .iter()
        .flat_map(|r| r.entries.iter().flatten())
        .all(|e| e.admitted == e.expected);
    Ok(if agrees {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `--json` object.
pub fn to_json(rows: &[Row]) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    for r in rows {
        let mut cells = serde_json::Map::new();
        for (p, e) in ANOMALIES.iter().zip(&r.entries) {
            let Some(e) = e else { continue };
            cells.insert(
                p.name().to_owned(),
                json!({
                    "admitted": e.admitted,
                    "witness_steps": e.witness_steps,
                    "states": e.states,
                }),
            );
        }
        out.insert(r.label.clone(), serde_json::Value::Object(cells));
    }
    serde_json::Value::Object(out)
}

/// A row's level: a named runtime's claimed level, else the named-chain level of the point
/// its mechanisms compose to, else `-` (off the chain).
fn level(r: &Row) -> String {
    if let Some(kind) = r.stack.kind() {
        return format!("L{}", kind.level());
    }
    let prevented: Vec<Anomaly> = Anomaly::LATTICE
        .into_iter()
        .filter(|&a| runtime_matrix::expected(r.stack, r.all_writers, a) == Some(false))
        .collect();
    let point = Point::of(&prevented);
    lattice::named_chain()
        .iter()
        .position(|&p| p == point)
        .map_or_else(|| "-".to_owned(), |k| format!("L{k}"))
}

fn text(rows: &[Row], stacks_only: bool) -> String {
    let mut s = format!("{:<22} {:>5}", "runtime", "level");
    for p in ANOMALIES {
        s += &format!(" {:>22}", p.name());
    }
    s.push('\n');
    for r in rows {
        s += &format!("{:<22} {:>5}", r.label, level(r));
        for e in &r.entries {
            let Some(e) = e else {
                s += &format!(" {:>22}", "-");
                continue;
            };
            let cell = match e.witness_steps {
                Some(n) => format!("admitted ({n} steps)"),
                None => format!("prevented ({} st)", e.states),
            };
            let mark = if e.admitted == e.expected { "" } else { " !" };
            s += &format!(" {:>22}", format!("{cell}{mark}"));
        }
        s.push('\n');
    }
    let bad = rows
        .iter()
        .flat_map(|r| r.entries.iter().flatten())
        .filter(|e| e.admitted != e.expected)
        .count();
    if bad == 0 && stacks_only {
        s += "matches what each stack's mechanisms compose to (A1: lock or validate; A3: \
              validate-preds and cascade; A6: sequencer; A2: pin or validate-tool; A4: admitted)\n";
    } else if bad == 0 {
        s += "matches SPEC §5 / Table 2 (A1 at L0 and si; A3 at L0-L1; A6 at L0-L2; A2 at L0-L3)\n";
        s += "and SPEC §6 (A4 unless reads are pinned to the primary; the single-store \
              runtimes read any replica)\n";
    } else {
        s += &format!("{bad} entries (marked !) disagree with SPEC §5 / §6\n");
    }
    s
}
