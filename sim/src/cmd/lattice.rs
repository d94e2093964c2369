//! `agentsim lattice`: the 16 points, 32 cover edges, 24 maximal chains and the named chain.
//!
//! `agentsim lattice --witnesses [--json] [--out DIR]` also asks the checker for a witness
//! history per point (one exhibiting exactly that set of anomalies, shortest first; see
//! `agentsim_checker::witnesses`) and prints a 16-row table plus each witness's steps;
//! `--out` writes each history as JSON Lines (`L{bits}-{members}.jsonl`, readable by
//! `agentsim detect`). The search is re-run every time; nothing is read from `results/`.

use crate::output::write_atomic;
use crate::reproduce::{table_files, Artifact, Ctx};
use crate::tables::{Cell, Table};
use agentsim_checker::witnesses::{self, lower_bound, Order, Witness};
use agentsim_models::jsonl;
use agentsim_models::lattice::{self, Point};
use anyhow::Context as _;
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Print the lattice of consistency models (SPEC §4).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Print one JSON object.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print a Graphviz digraph of the Hasse diagram, the named chain in bold.
    #[arg(long)]
    pub dot: bool,
    /// Find, with the checker, a shortest witness history for each of the 16 points.
    #[arg(long, conflicts_with = "dot")]
    pub witnesses: bool,
    /// With --witnesses: write one JSON Lines history per point into DIR.
    #[arg(long, value_name = "DIR", requires = "witnesses")]
    pub out: Option<PathBuf>,
    /// With --witnesses: search breadth-first (the BFS-first witness; slow at the largest
    /// bounds) instead of depth-first under the same bound; the lengths are the same.
    #[arg(long, requires = "witnesses")]
    pub bfs: bool,
    /// With --witnesses: give up (exit 2) if one search passes this many distinct states.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STATES)]
    pub max_states: u64,
}

/// The default `--max-states`: far above what the searches need (results/BENCH.md).
pub const DEFAULT_MAX_STATES: u64 = 20_000_000;

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.witnesses {
        return run_witnesses(&args);
    }
    let out = if args.json {
        json()
    } else if args.dot {
        dot()
    } else {
        text()
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn run_witnesses(args: &Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let order = if args.bfs {
        Order::Breadth
    } else {
        Order::Depth
    };
    let mut ws = Vec::new();
    for p in lattice::points() {
        let t = Instant::now();
        let w = witnesses::find(p, order, args.max_states)
            .map_err(|e| anyhow::anyhow!("{e}; raise --max-states"))?;
        eprintln!(
            "lattice --witnesses: {}: {} steps, {} states, {:.2} s",
            p.label(),
            w.len(),
            w.explored,
            t.elapsed().as_secs_f64()
        );
        ws.push(w);
    }
    if let Some(dir) = &args.out {
        for w in &ws {
            write_atomic(&dir.join(w.file_name()), history_bytes(w).as_bytes())?;
        }
    }
    let text = if args.json {
        let v = serde_json::json!({ "witnesses": ws.iter().map(witness_json).collect::<Vec<_>>() });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        witness_text(&ws)
    };
    // A closed pipe (`| head`) is an error, not a panic.
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing the witnesses to stdout")?;
    let explored: u64 = ws.iter().map(|w| w.explored).sum();
    eprintln!(
        "lattice --witnesses: 16 searches, {explored} states, {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// The witness's history as JSON Lines (an empty file for the empty history).
pub fn history_bytes(w: &Witness) -> String {
    jsonl::write_history(&w.history)
}

/// `L{k}` if `p` is exactly what level k of the named chain admits (so the witness is a
/// maximal history of Lk), else empty.
fn maximal_for(p: Point) -> Option<usize> {
    let all = Point(0b1111);
    lattice::named_chain()
        .iter()
        .position(|&excluded| Point(all.0 & !excluded.0) == p)
}

fn bounds_text(w: &Witness) -> String {
    let b = w.bounds;
    format!(
        "{}a {}c {}t {}v ops{}",
        b.agents, b.cells, b.tools, b.values, b.max_ops
    )
}

/// The 16-row table: point, level, steps vs the lower bound, bounds, states explored.
pub fn witness_table(ws: &[Witness]) -> Table {
    let mut t = Table::new(
        "Shortest witness history per lattice point (vanilla; canonical writes, provenance, \
         retraction)",
        &[
            "point",
            "level",
            "maximal_for",
            "steps",
            "lower_bound",
            "optimal",
            "bounds",
            "states_explored",
            "file",
        ],
    );
    for w in ws {
        t.push(vec![
            Cell::text(w.point.label()),
            Cell::text(format!("L{}", lattice::level(w.point))),
            maximal_for(w.point).map_or(Cell::Empty, |k| Cell::text(format!("L{k}"))),
            Cell::Int(w.len() as i64),
            Cell::Int(lower_bound(w.point) as i64),
            Cell::text(if w.optimal() { "yes" } else { "no" }),
            Cell::text(bounds_text(w)),
            Cell::Int(w.explored as i64),
            Cell::text(w.file_name()),
        ]);
    }
    t
}

fn witness_text(ws: &[Witness]) -> String {
    let mut s = witness_table(ws).to_markdown();
    for w in ws {
        let _ = writeln!(
            s,
            "\n{} {}: {} steps at {}, replay {}",
            w.file_name(),
            w.point.label(),
            w.len(),
            bounds_text(w),
            w.path
        );
        for line in &w.steps {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

fn witness_json(w: &Witness) -> serde_json::Value {
    let b = w.bounds;
    serde_json::json!({
        "point": names(w.point),
        "level": lattice::level(w.point),
        "maximal_for": maximal_for(w.point).map(|k| format!("L{k}")),
        "steps": w.len(),
        "lower_bound": lower_bound(w.point),
        "optimal": w.optimal(),
        "bounds": {
            "agents": b.agents, "cells": b.cells, "tools": b.tools, "values": b.values,
            "max_ops": b.max_ops,
        },
        "states_explored": w.explored,
        "file": w.file_name(),
        "path": w.path,
        "trace": w.steps,
    })
}

/// The `reproduce` step: the table and one JSON Lines history per point in `witnesses/`.
pub fn witnesses_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    ctx.progress("searching a witness for each of the 16 points");
    let ws = witnesses::find_all(Order::Depth, DEFAULT_MAX_STATES).map_err(anyhow::Error::msg)?;
    let mut files = table_files("lattice-witnesses", &witness_table(&ws));
    for w in &ws {
        files.push(Artifact {
            path: format!("witnesses/{}", w.file_name()),
            bytes: history_bytes(w).into_bytes(),
            about: format!("a shortest history exhibiting exactly {}", w.point.label()),
        });
    }
    Ok(files)
}

fn names(p: Point) -> Vec<&'static str> {
    p.members().iter().map(|a| a.name()).collect()
}

fn json() -> String {
    let chain_json = |c: &Vec<Point>| c.iter().map(|&p| names(p)).collect::<Vec<_>>();
    let v = serde_json::json!({
        "points": lattice::points().into_iter().map(names).collect::<Vec<_>>(),
        "cover_edges": lattice::cover_edges()
            .into_iter()
            .map(|(a, b)| [names(a), names(b)])
            .collect::<Vec<_>>(),
        "maximal_chains": lattice::maximal_chains().iter().map(chain_json).collect::<Vec<_>>(),
        "named_chain": chain_json(&lattice::named_chain()),
    });
    format!("{}\n", serde_json::to_string_pretty(&v).expect("json"))
}

fn is_named_edge(a: Point, b: Point) -> bool {
    lattice::named_chain()
        .windows(2)
        .any(|w| w[0] == a && w[1] == b)
}

fn dot() -> String {
    let mut s = String::from("digraph lattice {\n  rankdir=BT;\n  node [shape=box];\n");
    let named = lattice::named_chain();
    for p in lattice::points() {
        let level = named.iter().position(|&q| q == p);
        let label = match level {
            Some(k) => format!("L{k} {}", p.label()),
            None => p.label(),
        };
        let style = if level.is_some() { ", style=bold" } else { "" };
        writeln!(s, "  p{} [label=\"{label}\"{style}];", p.0).expect("string");
    }
    for (a, b) in lattice::cover_edges() {
        let style = if is_named_edge(a, b) {
            "penwidth=3"
        } else {
            "color=gray70"
        };
        writeln!(s, "  p{} -> p{} [{style}];", a.0, b.0).expect("string");
    }
    s.push_str("}\n");
    s
}

fn text() -> String {
    let points = lattice::points();
    let edges = lattice::cover_edges();
    let chains = lattice::maximal_chains();
    let mut s = String::new();
    writeln!(
        s,
        "points ({}), as sets of excluded anomalies:",
        points.len()
    )
    .expect("string");
    for p in &points {
        writeln!(s, "  {}", p.label()).expect("string");
    }
    writeln!(s, "cover edges ({}):", edges.len()).expect("string");
    for (a, b) in &edges {
        let mark = if is_named_edge(*a, *b) {
            "  (named chain)"
        } else {
            ""
        };
        writeln!(s, "  {} < {}{mark}", a.label(), b.label()).expect("string");
    }
    writeln!(s, "maximal chains ({}):", chains.len()).expect("string");
    for c in &chains {
        let labels: Vec<_> = c.iter().map(|p| p.label()).collect();
        writeln!(s, "  {}", labels.join(" < ")).expect("string");
    }
    writeln!(s, "named chain:").expect("string");
    for (k, p) in lattice::named_chain().iter().enumerate() {
        writeln!(s, "  L{k} = {}", p.label()).expect("string");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::detect::fast;

    /// The reproduce step's files: the table and 16 histories that `agentsim detect` (its
    /// reader and the fast detectors) classifies as exactly their points.
    #[test]
    fn witness_files_round_trip_to_their_points() {
        let files = witnesses_step(&Ctx::new("lattice-witnesses", true)).unwrap();
        let histories: Vec<_> = files
            .iter()
            .filter(|f| f.path.starts_with("witnesses/"))
            .collect();
        assert_eq!(histories.len(), 16);
        let dir = std::env::temp_dir().join(format!("agentsim-latwit-{}", std::process::id()));
        for (f, p) in histories.iter().zip(lattice::points()) {
            let path = dir.join(&f.path);
            write_atomic(&path, &f.bytes).unwrap();
            let h = jsonl::read_history(&path).unwrap();
            assert_eq!(Point::of(&fast::detect(&h).anomalies()), p, "{}", f.path);
        }
        std::fs::remove_dir_all(&dir).unwrap();
        let md = files.iter().find(|f| f.path.ends_with(".md")).unwrap();
        let text = String::from_utf8(md.bytes.clone()).unwrap();
        assert_eq!(
            text.matches("| yes ").count(),
            16,
            "every witness is optimal"
        );
    }
}
