//! The driver of `agentsim reproduce`: run a list of [`Step`]s, then write their files, or
//! regenerate them into a fresh folder and compare byte for byte with the committed ones.
//!
//! The list of steps is the experiments' (`crate::experiments::steps`); this file knows
//! nothing about what a step computes. A passing comparison proves the committed files are what
//! this build generates; it says nothing about whether the generating code is right.

use super::output::write_atomic;
use super::{Artifact, Ctx, Step};
use anyhow::Context;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `steps` in order and returns their files; fails if two files share a path.
pub fn run_steps(steps: &[Step], quick: bool) -> anyhow::Result<Vec<(Step, Vec<Artifact>)>> {
    run_steps_with(steps, quick, &mut |_| {})
}

/// Where a step is, for progress reports: its index (from 0) of `of`, and how long it took
/// once it is done (`None`: it is starting).
pub struct StepEvent<'a> {
    pub index: usize,
    pub of: usize,
    pub name: &'a str,
    pub took: Option<Duration>,
}

/// [`run_steps`], calling `event` as each step starts and ends.
pub fn run_steps_with(
    steps: &[Step],
    quick: bool,
    event: &mut dyn FnMut(StepEvent<'_>),
) -> anyhow::Result<Vec<(Step, Vec<Artifact>)>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let of = steps.len();
    for (index, step) in steps.iter().enumerate() {
        event(StepEvent {
            index,
            of,
            name: step.name,
            took: None,
        });
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
        event(StepEvent {
            index,
            of,
            name: step.name,
            took: Some(ctx.elapsed()),
        });
        out.push((*step, files));
    }
    Ok(out)
}

/// The progress line of a step event.
pub fn step_line(e: &StepEvent<'_>) -> String {
    let at = format!("reproduce: step {} ({}/{})", e.name, e.index + 1, e.of);
    match e.took {
        None => format!("{at} started"),
        Some(d) => format!("{at} done in {:.1} s", secs(d)),
    }
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
         Benchmark figures are in `docs/benchmarks.md`, written by hand with their commands.\n\n",
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

/// What a comparison found, each list sorted.
#[derive(Debug, Default)]
pub struct Mismatches {
    pub differs: Vec<String>,
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
}

impl Mismatches {
    /// Whether every file matched and nothing is left over.
    pub fn is_empty(&self) -> bool {
        self.differs.is_empty() && self.missing.is_empty() && self.unexpected.is_empty()
    }
}

/// Writes every file under `out`, atomically.
pub fn write(out: &Path, files: &[Artifact]) -> anyhow::Result<()> {
    for f in files {
        write_atomic(&out.join(&f.path), &f.bytes)?;
    }
    Ok(())
}

/// Writes `files` into a fresh temporary folder and compares them byte for byte with `out`;
/// with `complete`, files under `figures/` and `tables/` of `out` that no step made are
/// reported too. Returns what differs and the fresh folder (removed when nothing differs).
pub fn compare(
    out: &Path,
    files: &[Artifact],
    complete: bool,
) -> anyhow::Result<(Mismatches, PathBuf)> {
    let fresh = std::env::temp_dir().join(format!("agentsim-reproduce-{}", std::process::id()));
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh).with_context(|| format!("clearing {}", fresh.display()))?;
    }
    write(&fresh, files)?;
    let mut found = Mismatches::default();
    for f in files {
        let new = std::fs::read(fresh.join(&f.path))
            .with_context(|| format!("reading back {}", fresh.join(&f.path).display()))?;
        match std::fs::read(out.join(&f.path)) {
            Ok(old) if old == new => {}
            Ok(_) => found.differs.push(f.path.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                found.missing.push(f.path.clone())
            }
            Err(e) => {
                let path = out.join(&f.path);
                return Err(e).with_context(|| format!("reading {}", path.display()));
            }
        }
    }
    if complete {
        found.unexpected = strays(out, files)?;
    }
    if found.is_empty() {
        std::fs::remove_dir_all(&fresh).with_context(|| format!("removing {}", fresh.display()))?;
    }
    Ok((found, fresh))
}

/// Files under `figures/` and `tables/` of `out` that no step produced (left over from a
/// renamed or removed step), as `/`-separated relative paths.
fn strays(out: &Path, files: &[Artifact]) -> anyhow::Result<Vec<String>> {
    let made: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut stray = Vec::new();
    for dir in ["figures", "tables"] {
        let Ok(entries) = std::fs::read_dir(out.join(dir)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("listing {}", out.join(dir).display()))?;
            let rel = format!("{dir}/{}", entry.file_name().to_string_lossy());
            if !made.contains(rel.as_str()) {
                stray.push(rel);
            }
        }
    }
    stray.sort();
    Ok(stray)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_file(_: &Ctx) -> anyhow::Result<Vec<Artifact>> {
        Ok(vec![Artifact {
            path: "tables/x.md".into(),
            bytes: b"x".to_vec(),
            about: "x".into(),
        }])
    }

    const STEP: Step = Step {
        name: "x",
        about: "one file",
        run: one_file,
    };

    #[test]
    fn a_duplicate_path_is_an_error() {
        let err = run_steps(&[STEP, STEP], true).expect_err("duplicate paths");
        assert!(err.to_string().contains("two steps write"), "{err}");
    }

    #[test]
    fn the_index_names_every_file() {
        let done = run_steps(&[STEP], false).expect("runs");
        let index = String::from_utf8(readme(&done, false).bytes).expect("utf8");
        assert!(index.contains("[tables/x.md](tables/x.md)"), "{index}");
        assert!(index.contains("`agentsim reproduce --only x`"), "{index}");
    }
}
