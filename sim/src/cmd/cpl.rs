//! `agentsim cpl`: Causal Past Logic guards (CPL.md).
//!
//! `twin SCENARIO [--trials N] [--seed S] [--threads T] [--json]`: the guard twin of a scenario
//! with `[cpl]`; exit 0 when the run completed, whatever the counts.
//! `eval GUARDS.cpl MSC.jsonl` runs the knowledge-vector monitor (messages through the binary
//! wire) and the literal reference evaluator over the MSC in file order, and prints every named
//! guard at every event's lifeline; any disagreement is a bug, printed with both values, exit 1.
//! `bench` times the monitor on the reference workloads (`crate::bench::cpl`, also
//! `agentsim bench cpl`); `twin` runs a scenario's guard twin in the simulator
//! (`crate::cmd::cpl_twin`, `crate::experiments::cpl_guards`).
//! Agreement on one file proves nothing about other files; `models/tests/cpl_exhaustive.rs`
//! is the bounded proof.

use agentsim_cpl::{
    compile, jsonl, parse_guards, run, Causal, Formula, Kind, Msc, Program, Reference, Symbols,
};
use agentsim_models::escape_text;
use anyhow::{Context, Result};
use clap::{Args as ClapArgs, Subcommand};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Evaluate or benchmark Causal Past Logic guards.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub command: CplCommand,
}

/// The `cpl` subcommands.
#[derive(Debug, Subcommand)]
pub enum CplCommand {
    /// Every named guard at every event: monitor and reference, which must agree.
    Eval(EvalArgs),
    /// Per-event time and bytes per message on the reference workloads of CPL.md (the same
    /// as `agentsim bench cpl`).
    Bench(crate::cmd::bench::CplArgs),
    /// A scenario's guard twin: k/N stale actions without the guard and with it.
    Twin(crate::cmd::cpl_twin::TwinArgs),
}

/// `agentsim cpl eval`.
#[derive(Debug, ClapArgs)]
pub struct EvalArgs {
    /// Guard file (`let name = φ;` definitions).
    pub guards: PathBuf,
    /// MSC as JSON Lines, one event per line in execution order.
    pub msc: PathBuf,
    /// Print a JSON array of {"event", "lifeline", "guard", "value"}.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    match args.command {
        CplCommand::Eval(a) => eval(a),
        CplCommand::Bench(a) => crate::cmd::bench::cpl(a),
        CplCommand::Twin(a) => crate::cmd::cpl_twin::run(a),
    }
}

/// Guard values of one event: `(monitor, reference)` per named guard.
struct Row {
    values: Vec<(bool, bool)>,
}

fn eval(args: EvalArgs) -> Result<ExitCode> {
    let src = read_text(&args.guards)?;
    let guards = parse_guards(&src).map_err(|e| {
        let at = format!("{}:{}:{}", args.guards.display(), e.line, e.column);
        anyhow::anyhow!("{at}: expected {}, found {}", e.expected, e.found)
    })?;
    let text = read_text(&args.msc)?;
    let mut syms = Symbols::new();
    let msc = jsonl::parse_msc(&text, &mut syms).map_err(|e| {
        // The MSC reader knows the line and the key; the column is the line's start.
        let key = e.key.map(|k| format!(" key `{k}`:")).unwrap_or_default();
        anyhow::anyhow!("{}:{}:1:{key} {}", args.msc.display(), e.line, e.message)
    })?;
    let prog = compile(&guards, &msc.lifelines, &msc.vars, &mut syms)
        .with_context(|| format!("{}", args.guards.display()))?;
    let rows = evaluate(&prog, &guards.defs, &msc, &mut syms)?;
    let names: Vec<&str> = prog.guards.iter().map(|(n, _)| n.as_str()).collect();
    let mut bad = String::new();
    for (e, row) in rows.iter().enumerate() {
        for (g, &(m, r)) in row.values.iter().enumerate() {
            if m != r {
                let line = escape_text(&msc.lifelines[msc.events[e].lifeline]);
                writeln!(
                    bad,
                    "event {e} ({line}) guard {}: monitor {m}, reference {r}",
                    names[g]
                )?;
            }
        }
    }
    if !bad.is_empty() {
        eprint!("DISAGREEMENT (a bug in the monitor or the reference):\n{bad}");
        return Ok(ExitCode::from(1));
    }
    let out = if args.json {
        json(&msc, &names, &rows)
    } else {
        text_table(&msc, &names, &rows)
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// A file's text; text that is not UTF-8 is an error at the line and column of the first
/// invalid byte (the one reader of every scenario input does the same).
fn read_text(path: &std::path::Path) -> Result<String> {
    Ok(agentsim_sim::source::read_source(path)?)
}

fn evaluate(
    prog: &Program,
    defs: &[(String, Formula)],
    msc: &Msc,
    syms: &mut Symbols,
) -> Result<Vec<Row>> {
    let order: Vec<usize> = (0..msc.len()).collect();
    let monitor = run::run(prog, syms, msc, &order).context("running the monitor")?;
    let formulas: Vec<Formula> = defs.iter().map(|(_, f)| f.clone()).collect();
    let reference = Reference::new(&formulas, &msc.lifelines, &msc.vars);
    let table = reference.evaluate(msc, &Causal::new(msc), syms);
    Ok(monitor
        .iter()
        .zip(&table)
        .map(|(row, refs)| Row {
            values: prog
                .guards
                .iter()
                .zip(refs)
                .map(|(&(_, k), &r)| (row[k], r))
                .collect(),
        })
        .collect())
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Act => "act",
        Kind::Choice => "choice",
        Kind::Send { .. } => "send",
        Kind::Recv { .. } => "recv",
    }
}

fn text_table(msc: &Msc, names: &[&str], rows: &[Row]) -> String {
    // Lifeline names come from the MSC: escaped, so one cannot start a row of its own.
    let lifelines: Vec<_> = msc.lifelines.iter().map(|l| escape_text(l)).collect();
    let width = lifelines.iter().map(|l| l.len()).max().unwrap_or(8).max(8);
    let mut s = format!("{:>5}  ", "event");
    pad(&mut s, "lifeline", width);
    s.push_str("  kind  ");
    for n in names {
        write!(s, "  {n}").expect("string");
    }
    s.push('\n');
    for (e, row) in rows.iter().enumerate() {
        let ev = &msc.events[e];
        write!(s, "{e:>5}  ").expect("string");
        pad(&mut s, &lifelines[ev.lifeline], width);
        write!(s, "  {:<6}", kind_name(ev.kind)).expect("string");
        for (n, &(v, _)) in names.iter().zip(&row.values) {
            s.push_str("  ");
            pad(&mut s, if v { "true" } else { "false" }, n.len());
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
    }
    writeln!(
        s,
        "monitor and reference agree on {} values",
        rows.len() * names.len()
    )
    .expect("string");
    s
}

/// Appends `text` left-aligned in `width` bytes of columns. Not `{:<width$}`: the formatter
/// takes widths up to 65,535 only, and a name may be longer.
fn pad(s: &mut String, text: &str, width: usize) {
    s.push_str(text);
    let n = width.saturating_sub(text.chars().count());
    s.extend(std::iter::repeat_n(' ', n));
}

fn json(msc: &Msc, names: &[&str], rows: &[Row]) -> String {
    let mut out = Vec::new();
    for (e, row) in rows.iter().enumerate() {
        for (n, &(v, _)) in names.iter().zip(&row.values) {
            out.push(serde_json::json!({
                "event": e,
                "lifeline": msc.lifelines[msc.events[e].lifeline],
                "guard": n,
                "value": v,
            }));
        }
    }
    format!("{}\n", serde_json::to_string_pretty(&out).expect("json"))
}
