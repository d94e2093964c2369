//! `agentsim lattice`: the 16 points, 32 cover edges, 24 maximal chains and the named chain.
//!
//! `agentsim lattice --witnesses [--json] [--out DIR]` also asks the checker for a witness
//! history per anomaly set S (one exhibiting exactly S, shortest first; a point is what a model
//! excludes, a witness what a history exhibits; see
//! `agentsim_checker::jobs::lattice_witnesses`) and prints a 16-row table plus each witness's steps;
//! `--out` writes each history as JSON Lines (`L{bits}-{members}.jsonl`, readable by
//! `agentsim detect`). The search is re-run every time; nothing is read from `results/`.
//!
//! `agentsim lattice --realize [--json] [--max-ops N]` asks the checker for a smallest stack
//! of mechanisms realizing each point (see `experiments::realize`): the 16-row table, or the
//! issue's JSON array; `--max-ops` raises every scenario's MaxOps for the whole search.
//! With `--progress` (or on a terminal after 2 s; never with `--quiet`) it prints on stderr,
//! after each stack checked, the lattice points realized so far of 16.

use crate::artifacts::folder::Folder;
use crate::artifacts::output::write_atomic;
use crate::cmd::progress::{ProgressArgs, Ticker};
use crate::experiments::lattice_witnesses::{self, DEFAULT_MAX_STATES};
use crate::experiments::realize;
use agentsim_checker::jobs::lattice_witnesses::Order;
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
    /// Find, with the checker, a shortest history exhibiting each of the 16 anomaly sets.
    #[arg(long, conflicts_with = "dot")]
    pub witnesses: bool,
    /// With --witnesses: write one JSON Lines history per anomaly set into DIR.
    #[arg(long, value_name = "DIR", requires = "witnesses")]
    pub out: Option<PathBuf>,
    /// With --out: reuse a folder an earlier run wrote, removing the files its manifest
    /// (`.agentsim-manifest`) lists; a folder holding any other file is still refused.
    #[arg(long, requires = "out")]
    pub force: bool,
    /// With --witnesses: search breadth-first (the BFS-first witness; slow at the largest
    /// bounds) instead of depth-first under the same bound; the lengths are the same.
    #[arg(long, requires = "witnesses")]
    pub bfs: bool,
    /// Find, with the checker, a smallest stack of mechanisms preventing exactly each point.
    #[arg(long, conflicts_with_all = ["dot", "witnesses"])]
    pub realize: bool,
    /// With --realize: every scenario's MaxOps (default: the matrix's bounds).
    #[arg(long, value_name = "N", requires = "realize")]
    pub max_ops: Option<u32>,
    /// With --realize: worker threads of each check, 1..=256.
    #[arg(
        long,
        default_value_t = 2,
        requires = "realize",
        value_parser = crate::limits::threads
    )]
    pub threads: usize,
    /// With --witnesses: give up (exit 2) if one search passes this many distinct states.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STATES)]
    pub max_states: u64,
    /// With --realize: progress on stderr (`--progress`, `--quiet`).
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.witnesses {
        return run_witnesses(&args);
    }
    if args.realize {
        return run_realize(&args);
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
    let folder = match &args.out {
        Some(dir) => {
            crate::artifacts::output::preflight_dir(dir)?;
            Some(Folder::claim(dir, "--out", args.force)?)
        }
        None => None,
    };
    let order = if args.bfs {
        Order::Breadth
    } else {
        Order::Depth
    };
    let ws = lattice_witnesses::find_all(order, args.max_states)?;
    if let Some(dir) = &folder {
        let names: Vec<String> = ws.iter().map(|w| w.file_name()).collect();
        dir.start("lattice --witnesses --out", &names)?;
        for w in &ws {
            let bytes = lattice_witnesses::history_bytes(w);
            write_atomic(&dir.path(&w.file_name()), bytes.as_bytes())?;
        }
    }
    let text = if args.json {
        let all: Vec<_> = ws.iter().map(lattice_witnesses::witness_json).collect();
        let v = serde_json::json!({ "witnesses": all });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        lattice_witnesses::witness_text(&ws)
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

fn run_realize(args: &Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    if args.max_ops == Some(0) {
        anyhow::bail!("--max-ops must be at least 1");
    }
    let started = Instant::now();
    let mut ticker = Ticker::new(args.progress);
    let r = realize::search_with(args.max_ops, args.threads, &mut |points, stacks| {
        if let Some(s) = ticker.due() {
            eprintln!(
                "lattice --realize: {points}/16 points realized, {stacks} stacks checked, {s:.1} s"
            );
        }
    })?;
    let text = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&realize::to_json(&r))?)
    } else {
        let bounds = match args.max_ops {
            Some(n) => format!("every scenario's MaxOps = {n}"),
            None => "the matrix bounds".to_owned(),
        };
        realize::text(&r, &bounds)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing the realizability table to stdout")?;
    eprintln!(
        "lattice --realize: {} stacks checked, {:.2} s",
        r.checked.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
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
