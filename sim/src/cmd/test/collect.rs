//! The files a suite is made of: the paths given, folders walked recursively for `*.toml` in
//! sorted order, and each file recognised by its top-level keys and loaded by the parser of its
//! kind (a scenario, a split-view file, a sweep), so a file is never refused for a key that
//! belongs to another kind.
//!
//! Every file is loaded before any case runs: one bad file stops the suite with its
//! `file:line:col` message (exit 2) rather than after minutes of trials.

use crate::experiments::split_view;
use agentsim_sim::scenario::expect::{self, Engine, Expectation};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::source::{read_source, ScenarioError, Source};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Bound on files a suite collects (a path that names a whole disk is a mistake).
pub const FILES_MAX: usize = 100_000;
/// Bound on folder depth while walking.
pub const DEPTH_MAX: usize = 64;

/// A file's kind, as its top-level keys say.
#[derive(Clone, Debug)]
pub enum Loaded {
    /// A simulator scenario (`agents`), with or without `[cpl]` guards or a recording.
    Scenario(Box<Scenario>),
    /// The replicated-store file of `agentsim split-view` (`secondaries`).
    SplitView(split_view::Scenario),
}

/// One file of the suite.
#[derive(Clone, Debug)]
pub struct SuiteFile {
    pub file: PathBuf,
    pub what: What,
}

/// What `agentsim test` does with a file.
#[derive(Clone, Debug)]
pub enum What {
    /// Its expectations run under its own engine.
    Cases {
        loaded: Loaded,
        expects: Vec<Expectation>,
    },
    /// Listed as skipped, with the reason.
    Skipped(String),
}

/// The `*.toml` files under `paths` (a file named directly is taken whatever its extension),
/// in argument order, each folder's files sorted; a file named twice is taken once.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("{}: cannot read", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, 0, &mut found)?;
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
        if out.len() > FILES_MAX {
            bail!("more than {FILES_MAX} files under the paths given; name fewer folders");
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|f| seen.insert(f.clone()));
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    walk_in(dir, depth, &mut seen, out)
}

/// Walks `dir`: its folders (a symlinked one too, once: `seen` holds the real path of every
/// folder entered, so a symlink loop ends) and its regular `*.toml` files. A `*.toml` that is
/// not a regular file (a FIFO, a socket, a device) is refused: reading it could block forever
/// or never end, and a suite that skipped it would say less than it seems to.
fn walk_in(
    dir: &Path,
    depth: usize,
    seen: &mut std::collections::BTreeSet<PathBuf>,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    if depth > DEPTH_MAX {
        bail!("{}: folders nest deeper than {DEPTH_MAX}", dir.display());
    }
    let real =
        std::fs::canonicalize(dir).with_context(|| format!("{}: cannot resolve", dir.display()))?;
    if !seen.insert(real) {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?;
    for e in entries {
        let path = e
            .with_context(|| format!("{}: cannot list", dir.display()))?
            .path();
        // `metadata` follows a symlink; a dangling one has none and is not a suite file.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk_in(&path, depth + 1, seen, out)?;
        } else if path.extension().is_some_and(|x| x == "toml") {
            if !meta.is_file() {
                bail!(
                    "{}: not a regular file (a FIFO, socket or device); a suite reads only \
                     regular files",
                    path.display()
                );
            }
            out.push(path);
        }
        if out.len() > FILES_MAX {
            bail!("more than {FILES_MAX} files under {}", dir.display());
        }
    }
    Ok(())
}

/// Loads one file by its kind.
pub fn load(file: &Path) -> Result<SuiteFile, ScenarioError> {
    let text = read_source(file)?;
    let src = Source { file, text: &text };
    let table: toml::Table = toml::from_str(&text).map_err(|e| src.from_toml(&e))?;
    let has = |k: &str| table.contains_key(k);
    let what = if has("agents") {
        let sc = Scenario::parse(file, &text)?;
        cases(
            Loaded::Scenario(Box::new(sc)),
            expect::parse(src, Engine::Simulate)?,
        )
    } else if has("secondaries") {
        let sv = split_view::Scenario::parse(file, &text)?;
        cases(
            Loaded::SplitView(sv),
            expect::parse(src, Engine::SplitView)?,
        )
    } else if has("grid") {
        if has("expect") {
            let at = text.find("[[expect]]").unwrap_or(0);
            return Err(src.error(
                at..at,
                "expect",
                "a sweep file's grid runs with `agentsim sweep`; `agentsim test` does not \
                 run sweeps, so it cannot check [[expect]] here",
            ));
        }
        What::Skipped("a sweep file (its grid runs with `agentsim sweep`)".to_owned())
    } else if (has("tool") || has("registry")) && !has("expect") {
        // A scenario folder may hold the mapping a trace beside it is read with.
        What::Skipped(
            "a tool-memory mapping file (`agentsim detect --from otel --tool-memory`), not a \
             scenario"
                .to_owned(),
        )
    } else {
        return Err(src.error(
            0..0,
            "(document)",
            "not a scenario file: no `agents` (a scenario), `secondaries` (a split-view \
             file) or `grid` (a sweep)",
        ));
    };
    Ok(SuiteFile {
        file: file.to_owned(),
        what,
    })
}

fn cases(loaded: Loaded, expects: Vec<Expectation>) -> What {
    if expects.is_empty() {
        return What::Skipped("no [[expect]]".to_owned());
    }
    What::Cases { loaded, expects }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_told_by_their_keys() {
        let dir = std::env::temp_dir().join(format!("agentsim-collect-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).expect("temp dir");
        let sweep = dir.join("sub/b.toml");
        std::fs::write(&sweep, "name = \"s\"\n[grid]\nagents = [2]\n").expect("write");
        let other = dir.join("a.toml");
        std::fs::write(&other, "title = \"not ours\"\n").expect("write");
        std::fs::write(dir.join("notes.txt"), "x").expect("write");
        let found = files(std::slice::from_ref(&dir)).expect("walks");
        assert_eq!(found, [other.clone(), sweep.clone()]);
        let s = load(&sweep).expect("a sweep loads");
        assert!(matches!(s.what, What::Skipped(ref r) if r.contains("sweep")));
        let e = load(&other).expect_err("an unknown kind");
        assert!(e.message.contains("not a scenario file"), "{e}");
        std::fs::write(
            &sweep,
            "name = \"s\"\n[grid]\n[[expect]]\nanomaly = \"A1\"\n",
        )
        .expect("write");
        let e = load(&sweep).expect_err("expectations in a sweep");
        assert_eq!(e.line, 3, "{e}");
        let mapping = dir.join("map.toml");
        std::fs::write(&mapping, "[[tool]]\nname = \"read\"\nreads = \"c/{k}\"\n").expect("write");
        let m = load(&mapping).expect("a mapping file loads");
        assert!(matches!(m.what, What::Skipped(ref r) if r.contains("mapping")));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
