//! The steps of `agentsim reproduce`: each computes its data and returns named files (tables as
//! `.md`/`.csv`/`.json`, figures as `.svg`); the driver writes them and an index.
//!
//! A step is one function `fn(&Ctx) -> anyhow::Result<Vec<Artifact>>` listed in [`steps`]. It
//! must compute everything it writes from the harness (checker, simulator, models) — never from
//! numbers typed in — and must be deterministic: `--check` regenerates every file and compares
//! bytes. Steps that do not exist yet, and the data struct each must fill
//! (see `crate::figures` for the fields):
//!
//! | step        | figure data struct                 | renderer                   |
//! |-------------|------------------------------------|----------------------------|
//! | `matrix`    | `figures::MatrixData`              | `figures::matrix::render`  |
//! | `twins`     | `figures::TwinsData`               | `figures::twins::render`   |
//! | `workloads` | `figures::WorkloadData` (one each) | `figures::workloads::render` |
//! | `sweep`     | `figures::SweepData`               | `figures::sweep::render`   |
//! | `states`    | `figures::StateCountData`          | `figures::states::render`  |
//!
//! Each data struct also gives its table (`data.table()`, long format, fixed decimals), so a
//! step is, for example:
//!
//! ```text
//! fn matrix_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
//!     let data: MatrixData = /* run the checker; ctx.quick for smaller bounds */;
//!     ctx.progress("...");                      // silent unless the step is past 1 s
//!     let mut files = vec![figure_file("matrix", "runtime x anomaly", matrix::render(&data))];
//!     files.extend(table_files("matrix", &data.table()));
//!     Ok(files)
//! }
//! ```
//!
//! plus one entry in [`steps`]. A pass of `--check` proves the committed files are what the code
//! produces; it does not prove the code computes the right thing.

use crate::figures::{hasse, HasseData};
use crate::tables::{Cell, Table};
use agentsim_models::lattice::{self, Point};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// One output file: a path relative to the output folder (`/`-separated), its bytes and a
/// one-line description for the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Relative path, e.g. `figures/lattice_hasse.svg`.
    pub path: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// What it shows, for `README.md`.
    pub about: String,
}

/// What a step may ask of the run.
pub struct Ctx {
    /// Smaller samples for a fast run; the outputs differ from the committed full run.
    pub quick: bool,
    step: &'static str,
    started: Instant,
}

impl Ctx {
    /// A context for `step`, started now.
    pub fn new(step: &'static str, quick: bool) -> Ctx {
        Ctx {
            quick,
            step,
            started: Instant::now(),
        }
    }

    /// Reports progress on stderr, but only once the step has run for more than a second, so
    /// fast steps stay silent.
    pub fn progress(&self, message: &str) {
        if self.elapsed() > Duration::from_secs(1) {
            eprintln!("reproduce: {}: {message}", self.step);
        }
    }

    /// Time since the step started (progress only; never written into an output file).
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A step: a name (for `--only` and the index), a description and the function.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Short name, e.g. `lattice`.
    pub name: &'static str,
    /// What it computes.
    pub about: &'static str,
    /// Computes the data and returns the files.
    pub run: fn(&Ctx) -> anyhow::Result<Vec<Artifact>>,
}

/// Every step, in the order they run and appear in the index.
pub fn steps() -> Vec<Step> {
    vec![
        Step {
            name: "lattice",
            about: "the lattice of consistency models (SPEC §4)",
            run: lattice_step,
        },
        Step {
            name: "lattice-witnesses",
            about: "a shortest witness history for each of the 16 lattice points, by the checker",
            run: crate::cmd::lattice::witnesses_step,
        },
        Step {
            name: "matrix",
            about: "the runtime × anomaly matrix by exhaustive checking (SPEC §5, Table 2)",
            run: crate::checker_steps::matrix_step,
        },
        Step {
            name: "states",
            about: "checker state counts vs bound: paper-faithful, canonical, symmetry",
            run: crate::checker_steps::states_step,
        },
        Step {
            name: "twins",
            about: "the prevention twins, k/N without and with each mechanism (SPEC §7)",
            run: crate::experiments::steps::twins_step,
        },
        Step {
            name: "workloads",
            about: "the three workloads under vanilla/pessimistic/si/ssi and L2 (SPEC §7)",
            run: crate::experiments::steps::workloads_step,
        },
        Step {
            name: "sweep",
            about: "the contention sweep (SPEC §7)",
            run: crate::experiments::steps::sweep_step,
        },
        Step {
            name: "deployed",
            about: "deployed reproductions before and after their fixes (SPEC §7)",
            run: deployed_step,
        },
        Step {
            name: "split-view",
            about: "the A4 split-view twin: k/N split views per read discipline (SPEC §6)",
            run: crate::experiments::guard_replica_steps::split_view_step,
        },
        Step {
            name: "cpl-guards",
            about: "guarded agents: k/N stale merges without and with the CPL guard",
            run: crate::experiments::guard_replica_steps::cpl_guard_step,
        },
    ]
}

/// A figure file `figures/<stem>.svg`.
pub fn figure_file(stem: &str, about: &str, svg: String) -> Artifact {
    Artifact {
        path: format!("figures/{stem}.svg"),
        bytes: svg.into_bytes(),
        about: about.to_string(),
    }
}

/// The three files of a table: `tables/<stem>.md`, `.csv` and `.json`.
pub fn table_files(stem: &str, table: &Table) -> Vec<Artifact> {
    let about = |fmt: &str| format!("{} ({fmt})", table.title);
    vec![
        Artifact {
            path: format!("tables/{stem}.md"),
            bytes: table.to_markdown().into_bytes(),
            about: about("Markdown"),
        },
        Artifact {
            path: format!("tables/{stem}.csv"),
            bytes: table.to_csv().into_bytes(),
            about: about("CSV"),
        },
        Artifact {
            path: format!("tables/{stem}.json"),
            bytes: table.to_json().into_bytes(),
            about: about("JSON"),
        },
    ]
}

fn lattice_step(_ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let data = HasseData::from_lattice();
    let about = "Hasse diagram of the 16-point lattice, named chain L0..L4 in bold";
    let mut files = vec![figure_file("lattice_hasse", about, hasse::render(&data))];
    files.extend(table_files("lattice", &lattice_table()));
    Ok(files)
}

/// The deployed reproductions: 1,000 trials each (100 with `--quick`), seed 0.
fn deployed_step(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let trials = if ctx.quick { 100 } else { 1000 };
    let rows = crate::deployed::run_all(crate::deployed::Config { trials, seed: 0 });
    Ok(table_files("deployed", &crate::deployed::table(&rows)))
}

/// One row per lattice point: what it excludes, where it sits on the named chain, the level it
/// guarantees, its covers and how many maximal chains pass through it.
pub fn lattice_table() -> Table {
    let mut t = Table::new(
        "Lattice of consistency models: points as sets of excluded anomalies",
        &[
            "point",
            "excluded",
            "named_chain",
            "guarantees",
            "lower_covers",
            "upper_covers",
            "maximal_chains_through",
        ],
    );
    let named = lattice::named_chain();
    let edges = lattice::cover_edges();
    let chains = lattice::maximal_chains();
    let all = Point(0b1111);
    for p in lattice::points() {
        let on_chain = named.iter().position(|&q| q == p);
        // A model excluding p admits at most the other anomalies; its guaranteed level is the
        // level of a history exhibiting exactly those.
        let guarantees = lattice::level(Point(all.0 & !p.0));
        let count = |f: &dyn Fn(&(Point, Point)) -> bool| edges.iter().filter(|e| f(e)).count();
        t.push(vec![
            Cell::text(p.label()),
            Cell::Int(i64::from(p.len())),
            on_chain.map_or(Cell::Empty, |k| Cell::text(format!("L{k}"))),
            Cell::text(format!("L{guarantees}")),
            Cell::Int(count(&|e| e.1 == p) as i64),
            Cell::Int(count(&|e| e.0 == p) as i64),
            Cell::Int(chains.iter().filter(|c| c.contains(&p)).count() as i64),
        ]);
    }
    t
}

/// Runs `steps` in order and returns their files; fails if two files share a path.
pub fn run_steps(steps: &[Step], quick: bool) -> anyhow::Result<Vec<(Step, Vec<Artifact>)>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let ctx = Ctx::new(step.name, quick);
        let files =
            (step.run)(&ctx).map_err(|e| e.context(format!("reproduce step {}", step.name)))?;
        for f in &files {
            anyhow::ensure!(
                seen.insert(f.path.clone()),
                "two steps write {} (the second is {})",
                f.path,
                step.name
            );
        }
        let took = ctx.elapsed();
        if took > Duration::from_secs(1) {
            let n = steps.len();
            eprintln!(
                "reproduce: [{}/{n}] {} done in {:.1} s",
                i + 1,
                step.name,
                secs(took)
            );
        }
        out.push((*step, files));
    }
    Ok(out)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The index `README.md`: every file with what it shows and the command that remakes it.
pub fn readme(done: &[(Step, Vec<Artifact>)], quick: bool) -> Artifact {
    let mode = if quick {
        "This run used `--quick` (smaller samples): these are not the committed results."
    } else {
        "Full run."
    };
    let mut s = String::from(
        "# results/\n\n\
         What the harness generates. Every file in `figures/` and `tables/` and this index are\n\
         written by `agentsim reproduce` (`cargo run --release -- reproduce`); none is edited by\n\
         hand, and `agentsim reproduce --check` fails, naming the file, if any byte differs.\n\
         `BENCH.md` is written by hand from the benchmark commands it names.\n\n",
    );
    s.push_str(mode);
    s.push_str("\n\n| file | what | made by |\n| --- | --- | --- |\n");
    let flag = if quick { " --quick" } else { "" };
    for (step, files) in done {
        for f in files {
            let cmd = format!("`agentsim reproduce{flag} --only {}`", step.name);
            s.push_str(&format!("| [{0}]({0}) | {1} | {cmd} |\n", f.path, f.about));
        }
    }
    Artifact {
        path: "README.md".to_string(),
        bytes: s.into_bytes(),
        about: "this index".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_table_pins_the_lattice() {
        let t = lattice_table();
        assert_eq!(t.rows.len(), 16);
        let bottom = &t.rows[0];
        assert_eq!(bottom[0], Cell::text("{}"));
        assert_eq!(bottom[2], Cell::text("L0"));
        assert_eq!(bottom[3], Cell::text("L0"));
        assert_eq!(bottom[5], Cell::Int(4));
        assert_eq!(bottom[6], Cell::Int(24));
        let a1 = t
            .rows
            .iter()
            .find(|r| r[0] == Cell::text("{A1}"))
            .expect("{A1}");
        assert_eq!(a1[2], Cell::text("L1"));
        assert_eq!(a1[3], Cell::text("L1"));
        assert_eq!(a1[6], Cell::Int(6));
        // Excluding only A3 guarantees nothing on the named chain: A1 may still happen.
        let a3 = t
            .rows
            .iter()
            .find(|r| r[0] == Cell::text("{A3}"))
            .expect("{A3}");
        assert_eq!(a3[2], Cell::Empty);
        assert_eq!(a3[3], Cell::text("L0"));
        let top = t.rows.last().expect("16 rows");
        assert_eq!(top[3], Cell::text("L4"));
        let edges: i64 = t
            .rows
            .iter()
            .map(|r| match r[5] {
                Cell::Int(n) => n,
                _ => 0,
            })
            .sum();
        assert_eq!(edges, 32);
    }

    #[test]
    fn steps_have_unique_names_and_paths() {
        let done = run_steps(&steps(), true).expect("steps run");
        let names: BTreeSet<_> = done.iter().map(|(s, _)| s.name).collect();
        assert_eq!(names.len(), done.len());
        let index = String::from_utf8(readme(&done, false).bytes).expect("utf8");
        for (_, files) in &done {
            for f in files {
                assert!(index.contains(&format!("[{0}]({0})", f.path)), "{}", f.path);
            }
        }
    }

    #[test]
    fn a_duplicate_path_is_an_error() {
        let twice = [steps()[0], steps()[0]];
        let err = run_steps(&twice, true).expect_err("duplicate paths");
        assert!(err.to_string().contains("two steps write"), "{err}");
    }
}
