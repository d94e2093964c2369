//! `agentsim reproduce [--out DIR] [--check] [--quick] [--only STEP]`: every table and figure
//! regenerated into `results/`, byte for byte.
//!
//! Without `--check` it runs the steps of [`crate::experiments::steps`] and writes each file atomically
//! into `--out`, then the index `README.md`. With `--check` it writes the same files into a fresh
//! temporary folder instead, compares them byte for byte with `--out`, and exits 1 naming every
//! file that differs, is missing, or sits in `figures/`/`tables/` although no step makes it.
//! A passing check proves the committed files are what this build generates; it says nothing
//! about whether the generating code is right.

use crate::artifacts::reproduce::{self, Mismatches};
use crate::artifacts::{Artifact, Step};
use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Regenerate every table and figure into results/ (or check that it is up to date).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Output folder.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Regenerate into a temporary folder and compare byte for byte with --out; exit 1 naming
    /// every file that differs or is missing.
    #[arg(long)]
    pub check: bool,
    /// Smaller samples for a fast run; its outputs differ from the committed full run, so
    /// `--check --quick` fails wherever the sample size matters.
    #[arg(long)]
    pub quick: bool,
    /// Run only this step (repeatable); the index README.md is then left alone.
    #[arg(long, value_name = "STEP")]
    pub only: Vec<String>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The validated run.
struct Config {
    out: PathBuf,
    check: bool,
    quick: bool,
    json: bool,
    steps: Vec<Step>,
    /// Whether the whole set runs (so the index is written and stray files are reported).
    complete: bool,
}

fn config(args: Args) -> Result<Config> {
    let all = crate::experiments::steps();
    let mut steps = Vec::new();
    for name in &args.only {
        match all.iter().find(|s| s.name == name) {
            Some(s) if !steps.iter().any(|t: &Step| t.name == s.name) => steps.push(*s),
            Some(_) => {}
            None => {
                let names: Vec<_> = all.iter().map(|s| s.name).collect();
                bail!(
                    "--only {name}: no such step; the steps are {}",
                    names.join(", ")
                );
            }
        }
    }
    let complete = steps.is_empty();
    Ok(Config {
        out: args.out,
        check: args.check,
        quick: args.quick,
        json: args.json,
        steps: if complete { all } else { steps },
        complete,
    })
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let cfg = config(args)?;
    let started = Instant::now();
    let done = reproduce::run_steps(&cfg.steps, cfg.quick)?;
    let mut files: Vec<Artifact> = done.iter().flat_map(|(_, f)| f.iter().cloned()).collect();
    if cfg.complete {
        files.push(reproduce::readme(&done, cfg.quick));
    }
    let code = if cfg.check {
        check(&cfg, &files)?
    } else {
        reproduce::write(&cfg.out, &files)?;
        report(&cfg, &files, &Mismatches::default())?;
        ExitCode::SUCCESS
    };
    eprintln!(
        "reproduce: {} files in {:.2} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(code)
}

fn check(cfg: &Config, files: &[Artifact]) -> Result<ExitCode> {
    let (found, fresh) = reproduce::compare(&cfg.out, files, cfg.complete)?;
    report(cfg, files, &found)?;
    if found.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for (what, list) in [
        ("differs", &found.differs),
        ("missing", &found.missing),
        ("made by no step", &found.unexpected),
    ] {
        for p in list {
            eprintln!("reproduce --check: {what}: {}", cfg.out.join(p).display());
        }
    }
    eprintln!(
        "reproduce --check: fresh copies are in {}; run `agentsim reproduce` and commit {}",
        fresh.display(),
        cfg.out.display()
    );
    Ok(ExitCode::from(1))
}

/// Prints the summary on stdout; a closed pipe (`| head`) is an error, not a panic.
fn report(cfg: &Config, files: &[Artifact], found: &Mismatches) -> Result<()> {
    let text = summary(cfg, files, found);
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("writing the summary to stdout")
}

fn summary(cfg: &Config, files: &[Artifact], found: &Mismatches) -> String {
    if cfg.json {
        let v = serde_json::json!({
            "out": cfg.out.display().to_string(),
            "check": cfg.check,
            "quick": cfg.quick,
            "steps": cfg.steps.iter().map(|s| s.name).collect::<Vec<_>>(),
            "files": files.iter().map(|f| serde_json::json!({
                "path": f.path, "bytes": f.bytes.len(),
            })).collect::<Vec<_>>(),
            "differs": found.differs,
            "missing": found.missing,
            "unexpected": found.unexpected,
            "ok": found.is_empty(),
        });
        return format!("{}\n", serde_json::to_string_pretty(&v).expect("json"));
    }
    let verb = if cfg.check { "checked" } else { "wrote" };
    let mut s = String::new();
    for f in files {
        s.push_str(&format!("{verb} {}\n", cfg.out.join(&f.path).display()));
    }
    if cfg.check && found.is_empty() {
        s.push_str(&format!(
            "all {} files match {}\n",
            files.len(),
            cfg.out.display()
        ));
    }
    s
}
