//! `agentsim lattice`: the 16 points, 32 cover edges, 24 maximal chains and the named chain.

use agentsim_models::lattice::{self, Point};
use clap::Args as ClapArgs;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Print the lattice of consistency models (SPEC §4).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Print one JSON object.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print a Graphviz digraph of the Hasse diagram, the named chain in bold.
    #[arg(long)]
    pub dot: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
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
