//! Realizability: for each of the 16 lattice points, the smallest stack of
//! mechanisms that prevents exactly that set of anomalies, from the checker's search
//! (`agentsim_checker::jobs::realize`), its four verdicts (states of each exhaustive prevention,
//! steps of each shortest witness), and the same stacks re-checked at larger bounds.
//!
//! Bounds. The search runs at the matrix's bounds (each anomaly in its matrix scenario, whose
//! MaxOps are A1 2, A2 1, A3 2, A6 1). The 16 realizing stacks are then checked again with
//! every scenario's MaxOps raised to [`LARGER_MAX_OPS`] (the largest at which the 64 checks
//! stay within seconds; timings: docs/benchmarks.md), and [`larger`] reports whether each
//! still prevents exactly its point there. Nothing is claimed beyond those bounds.
//!
//! `--json` (of `agentsim lattice --realize`) is the issue's shape: an array of
//! `{"excludes", "runtime", "verdicts": {"A1": {"admitted", "witness_steps", "states"}, …}}`
//! sorted by `excludes` (the arrays of names compared lexicographically). A point no stack
//! realizes has `"runtime": null`, no verdicts, and `"evidence"`: the anomalies of the point
//! every candidate still admits, each with the shortest witness any candidate has.

use crate::artifacts::figures::{hasse_stacks, HasseStacks};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{figure_file, table_files, Artifact, Ctx, Step};
use agentsim_checker::jobs::realize::{self, Answer, Realizability, RealizeConfig, Verdicts};
use agentsim_checker::jobs::runtime_matrix::{MatrixError, Verdict};
use agentsim_models::lattice::{self, Point};
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use serde_json::{json, Value};

/// The `realize` step.
pub const STEP: Step = Step {
    name: "realize",
    about: "a smallest stack of mechanisms realizing each of the 16 lattice points",
    run: step_files,
};

/// MaxOps of every scenario in the larger-bounds re-check.
pub const LARGER_MAX_OPS: u32 = 3;

/// Runs the search at the matrix's bounds, or with every MaxOps set to `max_ops`.
pub fn search(max_ops: Option<u32>, threads: usize) -> Result<Realizability, MatrixError> {
    search_with(max_ops, threads, &mut |_, _| {})
}

/// [`search`], calling `progress(points_realized, stacks_checked)` after each stack.
pub fn search_with(
    max_ops: Option<u32>,
    threads: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Realizability, MatrixError> {
    realize::realize_with(
        &RealizeConfig {
            max_ops,
            threads,
            ..RealizeConfig::default()
        },
        progress,
    )
}

/// The realizing stack of each point, in lattice order (`None`: not realized).
pub fn stacks(r: &Realizability) -> Vec<(Point, Option<Stack>)> {
    r.points
        .iter()
        .map(|p| match &p.answer {
            Answer::Realized { by, .. } => (p.excludes, Some(by.stack)),
            Answer::Unrealized(_) => (p.excludes, None),
        })
        .collect()
}

/// One realizing stack re-checked at other bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recheck {
    pub excludes: Point,
    pub stack: Stack,
    pub max_ops: u32,
    pub verdicts: Verdicts,
}

impl Recheck {
    /// Whether the stack still prevents exactly its point.
    pub fn holds(&self) -> bool {
        self.verdicts.excluded() == self.excludes
    }
}

/// Every realizing stack of `r` checked with every MaxOps set to `max_ops`.
pub fn larger(
    r: &Realizability,
    max_ops: u32,
    threads: usize,
) -> Result<Vec<Recheck>, MatrixError> {
    let cfg = RealizeConfig {
        max_ops: Some(max_ops),
        threads,
        ..RealizeConfig::default()
    };
    stacks(r)
        .into_iter()
        .filter_map(|(p, s)| s.map(|s| (p, s)))
        .map(|(excludes, stack)| {
            Ok(Recheck {
                excludes,
                stack,
                max_ops,
                verdicts: realize::verdicts(stack, &cfg)?,
            })
        })
        .collect()
}

fn names(p: Point) -> Vec<&'static str> {
    p.members().iter().map(|a| a.name()).collect()
}

fn verdict_json(v: Verdict) -> Value {
    json!({
        "admitted": v.admitted,
        "witness_steps": v.witness_steps,
        "states": v.states,
    })
}

/// The `--json` array (see the module docs).
pub fn to_json(r: &Realizability) -> Value {
    let mut out: Vec<(Vec<&'static str>, Value)> = r
        .points
        .iter()
        .map(|p| {
            let excludes = names(p.excludes);
            let v = match &p.answer {
                Answer::Realized { by, .. } => {
                    let mut verdicts = serde_json::Map::new();
                    for a in Anomaly::LATTICE {
                        verdicts.insert(a.name().to_owned(), verdict_json(by.verdicts.of(a)));
                    }
                    json!({
                        "excludes": excludes,
                        "runtime": by.stack.to_string(),
                        "verdicts": verdicts,
                    })
                }
                Answer::Unrealized(e) => json!({
                    "excludes": excludes,
                    "runtime": null,
                    "evidence": e.always_admitted.iter().map(|(a, c)| json!({
                        "anomaly": a.name(),
                        "admitted_by_every_candidate": true,
                        "shortest_witness_steps": c.verdicts.of(*a).witness_steps,
                        "under": c.stack.to_string(),
                    })).collect::<Vec<_>>(),
                }),
            };
            (excludes, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Value::Array(out.into_iter().map(|(_, v)| v).collect())
}

fn cell(v: Verdict) -> String {
    match v.witness_steps {
        Some(n) if v.admitted => format!("admitted ({n} steps)"),
        _ => format!("prevented ({} st)", v.states),
    }
}

/// The level of `p` on the named chain, if it is on it.
fn chain_level(p: Point) -> Option<usize> {
    lattice::named_chain().iter().position(|&q| q == p)
}

/// One row per point: the stack, its alternatives of the same size, the four verdicts.
pub fn table(r: &Realizability) -> Table {
    let mut t = Table::new(
        "Realizability: a smallest stack of mechanisms preventing exactly each lattice point \
         (matrix bounds)",
        &[
            "excludes",
            "named_chain",
            "stack",
            "mechanisms",
            "alternatives",
            "A1",
            "A2",
            "A3",
            "A6",
        ],
    );
    for p in &r.points {
        let level = chain_level(p.excludes).map_or(Cell::Empty, |k| Cell::text(format!("L{k}")));
        let mut row = vec![Cell::text(p.excludes.label()), level];
        match &p.answer {
            Answer::Realized { by, alternatives } => {
                row.push(Cell::text(by.stack.to_string()));
                row.push(Cell::Int(by.stack.len() as i64));
                let alt: Vec<String> = alternatives.iter().map(Stack::to_string).collect();
                row.push(Cell::text(alt.join(" ")));
                for a in Anomaly::LATTICE {
                    row.push(Cell::text(cell(by.verdicts.of(a))));
                }
            }
            Answer::Unrealized(e) => {
                row.push(Cell::text("(none)"));
                row.push(Cell::Empty);
                let always: Vec<&str> = e.always_admitted.iter().map(|x| x.0.name()).collect();
                row.push(Cell::text(format!(
                    "every candidate admits {}",
                    always.join(", ")
                )));
                for _ in Anomaly::LATTICE {
                    row.push(Cell::Empty);
                }
            }
        }
        t.push(row);
    }
    t
}

/// One row per realizing stack at the larger bounds.
pub fn larger_table(rows: &[Recheck]) -> Table {
    let mut t = Table::new(
        "Realizability at larger bounds: each realizing stack with every MaxOps raised",
        &[
            "excludes", "stack", "max_ops", "holds", "A1", "A2", "A3", "A6",
        ],
    );
    for r in rows {
        let mut row = vec![
            Cell::text(r.excludes.label()),
            Cell::text(r.stack.to_string()),
            Cell::Int(i64::from(r.max_ops)),
            Cell::text(if r.holds() { "yes" } else { "no" }),
        ];
        for a in Anomaly::LATTICE {
            row.push(Cell::text(cell(r.verdicts.of(a))));
        }
        t.push(row);
    }
    t
}

/// Plain text for `agentsim lattice --realize`: the table and the notes.
pub fn text(r: &Realizability, bounds: &str) -> String {
    let mut s = format!("realizability at {bounds}:\n");
    s += &table(r).to_markdown();
    let unrealized: Vec<_> = r
        .points
        .iter()
        .filter_map(|p| match &p.answer {
            Answer::Unrealized(e) => Some((p.excludes, e)),
            Answer::Realized { .. } => None,
        })
        .collect();
    if unrealized.is_empty() {
        s += &format!(
            "every point is realized ({} stacks checked, smallest first)\n",
            r.checked.len()
        );
    }
    for (p, e) in unrealized {
        s += &format!(
            "{} is not realized by any stack of these mechanisms:\n",
            p.label()
        );
        for (a, c) in &e.always_admitted {
            s += &format!(
                "  every candidate admits {a}; shortest witness {} steps (under {})\n",
                c.verdicts.of(*a).witness_steps.unwrap_or(0),
                c.stack
            );
        }
        for (c, off) in &e.closest {
            let off: Vec<&str> = off.iter().map(|a| a.name()).collect();
            s += &format!("  closest: {} (off by {})\n", c.stack, off.join(", "));
        }
        s += "  a mechanism that prevents the anomalies listed would realize it\n";
    }
    s
}

/// The figure's data: every point labelled with its stack.
pub fn figure_data(r: &Realizability) -> HasseStacks {
    HasseStacks {
        stacks: stacks(r)
            .into_iter()
            .map(|(p, s)| {
                (
                    p,
                    s.map_or_else(|| "(unrealized)".to_owned(), |s| s.to_string()),
                )
            })
            .collect(),
    }
}

/// Realize at the matrix bounds, then the realizing stacks at [`LARGER_MAX_OPS`].
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let threads = super::run::default_threads();
    let r = search(None, threads)?;
    ctx.progress("search done; the larger bounds");
    let big = larger(&r, LARGER_MAX_OPS, threads)?;
    let about = "The 16 lattice points, top layer first, each with a smallest stack of mechanisms \
                 that realizes it at the checked bounds; the named chain in bold.";
    let mut files = vec![figure_file(
        "realize_hasse",
        about,
        hasse_stacks::render(&figure_data(&r)),
    )];
    files.extend(table_files("realize", &table(&r)));
    files.extend(table_files("realize_larger", &larger_table(&big)));
    let json = serde_json::to_string_pretty(&to_json(&r))? + "\n";
    files.push(Artifact {
        path: "tables/realize_points.json".to_owned(),
        bytes: json.into_bytes(),
        about: "lattice --realize --json at the matrix bounds".to_owned(),
    });
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON is the issue's shape: 16 elements sorted by `excludes`, each realized with
    /// verdicts matching its `excludes` exactly.
    #[test]
    fn json_has_the_issues_shape() {
        let r = search(None, 2).unwrap();
        let Value::Array(v) = to_json(&r) else {
            panic!("an array")
        };
        assert_eq!(v.len(), 16);
        let keys: Vec<Vec<String>> = v
            .iter()
            .map(|e| serde_json::from_value(e["excludes"].clone()).unwrap())
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(keys[0], Vec::<String>::new());
        for e in &v {
            let obj = e.as_object().unwrap();
            let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
            fields.sort_unstable();
            assert_eq!(fields, ["excludes", "runtime", "verdicts"]);
            let excludes = e["excludes"].as_array().unwrap();
            for a in Anomaly::LATTICE {
                let verdict = &e["verdicts"][a.name()];
                let inside = excludes.iter().any(|x| x == a.name());
                assert_eq!(verdict["admitted"], !inside, "{e}");
                assert_eq!(verdict["witness_steps"].is_null(), inside, "{e}");
                assert!(verdict["states"].as_u64().unwrap() > 0);
            }
        }
    }
}
