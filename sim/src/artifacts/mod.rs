//! What the harness writes: tables, figures and the files that carry them.
//!
//! An experiment (`crate::experiments`) computes its data and returns [`Artifact`]s: each table
//! as `.md`/`.csv`/`.json` ([`table_files`]), each figure as `.svg` ([`figure_file`]). The
//! renderers ([`figures`], [`tables`]) are pure functions of plain data; [`output`] writes files
//! atomically; [`reproduce`] runs a list of [`Step`]s and compares or writes their files. Nothing
//! here knows which experiments exist: this layer sits below them.

pub mod figures;
pub mod folder;
pub mod output;
pub mod paths;
pub mod reproduce;
pub mod tables;

use agentsim_sim::shard::{Local, TrialSource};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tables::Table;

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
pub struct Ctx<'s> {
    /// Smaller samples for a fast run; the outputs differ from the committed full run.
    pub quick: bool,
    step: &'static str,
    started: Instant,
    /// Where a sampling step's trials come from: every trial (`None`), or a shard's, or
    /// trials merged from partials (`agentsim reproduce --only STEP --shard I/N`).
    source: RefCell<Option<&'s mut dyn TrialSource>>,
}

impl<'s> Ctx<'s> {
    /// A context for `step`, started now, that runs every trial.
    pub fn new(step: &'static str, quick: bool) -> Ctx<'s> {
        Ctx {
            quick,
            step,
            started: Instant::now(),
            source: RefCell::new(None),
        }
    }

    /// A context for `step` whose sampling steps take their trials from `source`.
    pub fn with_source(step: &'static str, quick: bool, source: &'s mut dyn TrialSource) -> Self {
        Ctx {
            source: RefCell::new(Some(source)),
            ..Ctx::new(step, quick)
        }
    }

    /// Runs `f` on the step's trial source. A step that samples takes every trial through
    /// here, so that it shards; one that does not never calls it.
    pub fn trials<T>(&self, f: impl FnOnce(&mut dyn TrialSource) -> T) -> T {
        match self.source.borrow_mut().as_deref_mut() {
            Some(src) => f(src),
            None => f(&mut Local),
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

/// A step of `agentsim reproduce`: a name (for `--only` and the index), a description and the
/// function that computes its files. It must compute everything it writes from the harness
/// (checker, simulator, models), never from numbers typed in, and be deterministic.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Short name, e.g. `lattice`.
    pub name: &'static str,
    /// What it computes.
    pub about: &'static str,
    /// Computes the data and returns the files.
    pub run: fn(&Ctx) -> anyhow::Result<Vec<Artifact>>,
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

/// Writes a table as `<out>/tables/<stem>.{md,csv,json}` (the files `reproduce` makes), each
/// atomically; returns the paths written.
pub fn write_tables(out: &Path, stem: &str, table: &Table) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for a in table_files(stem, table) {
        let path = out.join(&a.path);
        output::write_atomic(&path, &a.bytes)?;
        written.push(path);
    }
    Ok(written)
}
