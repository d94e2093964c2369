//! Output folders that hold one run: a folder written before is refused, or, with `--force`,
//! cleared of what this tool wrote there, and never of anything else.
//!
//! A command that writes a run's files into a folder (`simulate --trace-out DIR`, `lattice
//! --witnesses --out DIR`) calls [`Folder::claim`] before any work: an absent or empty folder
//! is taken as is; a folder with files is refused, because the old run's `trial-*.jsonl` would
//! sit beside the new ones and `detect DIR/*.jsonl` would judge both runs. With `--force` the
//! folder is cleared, but only of the files listed in its manifest ([`MANIFEST`]), the list
//! the tool writes there with every run; a folder that also holds anything else (a file or a
//! folder the manifest does not list, or no manifest at all) is refused even with `--force`,
//! nothing removed, and the message names what is in the way. [`Folder::start`] then writes the
//! manifest first (so a run that stops half-way is still cleared by the next `--force`) and
//! each file atomically.
//!
//! `agentsim reproduce --out` is not such a folder: it rewrites `results/` in place, file by
//! file, its index `README.md` lists what it wrote, and `reproduce --check` names every file in
//! `figures/` and `tables/` that no step makes; so `results/` holds no manifest.

use crate::artifacts::output::write_atomic;
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// The manifest's file name, in the output folder.
pub const MANIFEST: &str = ".agentsim-manifest";

/// An output folder claimed for one run.
#[derive(Debug)]
pub struct Folder {
    dir: PathBuf,
    flag: String,
    force: bool,
}

impl Folder {
    /// Checks that `dir` may take this run's files (the module header says when); `flag`
    /// names it in messages. Nothing is removed yet.
    pub fn claim(dir: &Path, flag: &str, force: bool) -> Result<Folder> {
        let f = Folder {
            dir: dir.to_owned(),
            flag: flag.to_owned(),
            force,
        };
        f.stale()?;
        Ok(f)
    }

    /// The files of an earlier run to remove (the manifest's, present), or the refusal.
    fn stale(&self) -> Result<Vec<PathBuf>> {
        let dir = &self.dir;
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("{}: cannot list the folder", dir.display()))
            }
        };
        let mut names = Vec::new();
        for e in entries {
            let e = e.with_context(|| format!("{}: cannot list the folder", dir.display()))?;
            names.push(e.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let (flag, shown) = (&self.flag, dir.display());
        if !self.force {
            bail!(
                "{shown}: the output folder of {flag} is not empty ({}); name a new or empty \
                 folder, or pass --force to clear what agentsim wrote there before",
                sample(&names)
            );
        }
        let listed = self.listed()?;
        let foreign: Vec<String> = names
            .iter()
            .filter(|n| *n != MANIFEST && !listed.contains(n))
            .cloned()
            .collect();
        if !foreign.is_empty() {
            let why = if listed.is_empty() && !names.iter().any(|n| n == MANIFEST) {
                "agentsim did not write them (the folder has no manifest)"
            } else {
                "agentsim's manifest does not list them"
            };
            bail!(
                "{shown}: the output folder of {flag} holds files agentsim did not write \
                 ({}): {why}; --force clears only agentsim's files, so move them or name \
                 another folder",
                sample(&foreign)
            );
        }
        Ok(names.iter().map(|n| dir.join(n)).collect())
    }

    /// The names the folder's manifest lists (none without one).
    fn listed(&self) -> Result<Vec<String>> {
        let path = self.dir.join(MANIFEST);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("{}: reading it", path.display())),
        };
        Ok(text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            // Only plain names in the folder itself: a listed path never reaches outside it.
            .filter(|l| !l.contains('/') && *l != "." && *l != "..")
            .map(str::to_owned)
            .collect())
    }

    /// Clears the earlier run's files (with `--force`), then writes the manifest listing
    /// `names`, the files the run is about to write; the caller then writes each (atomically,
    /// at [`Folder::path`]).
    pub fn start(&self, command: &str, names: &[String]) -> Result<()> {
        for old in self.stale()? {
            if old.file_name().is_some_and(|n| n == MANIFEST) {
                continue;
            }
            fs::remove_file(&old).with_context(|| format!("{}: removing it", old.display()))?;
        }
        let mut manifest = format!(
            "# Written by `agentsim {command}`: the files of its last run in this folder, one \
             per line.\n# `--force` removes exactly these before the next run writes here.\n"
        );
        for name in names {
            manifest.push_str(name);
            manifest.push('\n');
        }
        write_atomic(&self.dir.join(MANIFEST), manifest.as_bytes())
    }

    /// The path of file `name` in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Up to three names and a count, for messages.
fn sample(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    match names.len() {
        0..=3 => shown.join(", "),
        n => format!("{}, … {n} entries", shown.join(", ")),
    }
}
