//! `agentsim reproduce [--out DIR] [--check] [--quick] [--only STEP]`: every table and figure
//! regenerated into `results/`, byte for byte.
//!
//! Without `--check` it runs the steps of [`crate::experiments::steps`] and writes each file atomically
//! into `--out`, then the index `README.md`. With `--check` it writes the same files into a fresh
//! temporary folder instead, compares them byte for byte with `--out`, and exits 1 naming every
//! file that differs, is missing, or sits in `figures/`/`tables/` although no step makes it.
//! A passing check proves the committed files are what this build generates; it says nothing
//! about whether the generating code is right.
//!
//! `--only STEP --shard I/N --partial-out FILE` runs a sampling step's share of its trials
//! (the steps of [`crate::experiments::SAMPLING`]) and writes a partial; `agentsim merge
//! PARTIAL... --out DIR` then writes the step's files into DIR and prints the summary that
//! `reproduce --only STEP --out DIR` prints, the files byte for byte the same.
//!
//! On stderr, each step over a second says when it is done; `--progress` adds a line as
//! every step starts and ends (`reproduce: step NAME (3/14) done in 4.1 s`), `--quiet` drops
//! them. Stdout and the files are the same either way.

use crate::artifacts::reproduce::{self, Mismatches};
use crate::artifacts::{Artifact, Ctx, Step};
use crate::cmd::progress::ProgressArgs;
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, ShardArgs};
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::TrialSource;
use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use serde::{Deserialize, Serialize};
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
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
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
    progress: ProgressArgs,
}

/// The experiments' steps, then the gallery of `agentsim view` pages (a command's work, so it
/// is listed here rather than among the experiments below).
fn all_steps() -> Vec<Step> {
    let mut all = crate::experiments::steps();
    all.push(super::view::gallery::STEP);
    all
}

/// The canonical name of a step `--only` names.
fn named(name: &str) -> Option<&'static str> {
    let gallery = super::view::gallery::STEP;
    (name == gallery.name)
        .then_some(gallery.name)
        .or_else(|| crate::experiments::step_named(name).map(|s| s.name))
}

fn config(args: Args) -> Result<Config> {
    let all = all_steps();
    let mut steps = Vec::new();
    for name in &args.only {
        match all.iter().find(|s| Some(s.name) == named(name)).cloned() {
            Some(s) if !steps.iter().any(|t: &Step| t.name == s.name) => steps.push(s),
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
        progress: args.progress,
    })
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    if let Some((slice, file)) = args.shard.slice()? {
        let job = Job::of(&args)?;
        return sharding::write_partial(&job, slice, file, 1);
    }
    let cfg = config(args)?;
    let started = Instant::now();
    let done = reproduce::run_steps_with(&cfg.steps, cfg.quick, &mut |e| {
        if step_shown(cfg.progress, &e) {
            eprintln!("{}", reproduce::step_line(&e));
        }
    })?;
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

/// Whether a step event gets a line: every start and end with `--progress`, none with
/// `--quiet`, else (as before `--progress` existed) the end of each step over a second.
fn step_shown(flags: ProgressArgs, e: &reproduce::StepEvent<'_>) -> bool {
    if flags.quiet {
        return false;
    }
    flags.progress
        || e.took
            .is_some_and(|d| d > std::time::Duration::from_secs(1))
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

/// A sampling step's work, as a partial of `reproduce` carries it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub step: String,
    pub quick: bool,
}

impl Job {
    /// The sharded step of `args`: one `--only` step that samples, not `--check`.
    fn of(args: &Args) -> Result<Job> {
        let [step] = &args.only[..] else {
            bail!("a sharded reproduce runs one step: give exactly one --only STEP");
        };
        if args.check {
            bail!("--check compares whole runs: merge the shards, then run --check on the result");
        }
        let Some(named) = crate::experiments::step_named(step) else {
            let names: Vec<_> = crate::experiments::steps().iter().map(|s| s.name).collect();
            bail!(
                "--only {step}: no such step; the steps are {}",
                names.join(", ")
            );
        };
        if !crate::experiments::SAMPLING.contains(&named.name) {
            bail!(
                "--only {step}: this step does not shard (the sampling steps are {})",
                crate::experiments::SAMPLING.join(", ")
            );
        }
        Ok(Job {
            step: named.name.to_owned(),
            quick: args.quick,
        })
    }

    fn step(&self) -> Result<Step> {
        match crate::experiments::step_named(&self.step)
            .filter(|s| crate::experiments::SAMPLING.contains(&s.name))
        {
            Some(s) => Ok(s),
            None => bail!("field `step`: `{}` is not a sampling step", self.step),
        }
    }
}

impl sharding::Seeded for Job {
    const COMMAND: &'static str = "reproduce";
    type Output = (Step, Vec<Artifact>);

    /// The harness seed; a step's scenario may carry its own, which the build digest covers.
    fn seed(&self) -> u64 {
        crate::experiments::run::SEED
    }

    /// The steps' scenarios are compiled in, so the build digest covers their text; this
    /// names the step and the sample size.
    fn scenario_digest(&self) -> Result<u64> {
        let mut h = Fnv1a::new();
        h.field(&self.step)
            .field(if self.quick { "quick" } else { "full" });
        Ok(h.finish())
    }

    fn compute(&self, src: &mut dyn TrialSource, _: usize) -> Result<Self::Output> {
        let step = self.step()?;
        let ctx = Ctx::with_source(step.name, self.quick, src);
        let files =
            (step.run)(&ctx).map_err(|e| e.context(format!("reproduce step {}", step.name)))?;
        Ok((step, files))
    }

    /// Writes the step's files into `--out` and prints `reproduce --only STEP`'s summary.
    fn print(&self, (step, files): &Self::Output, run: &RunArgs) -> Result<ExitCode> {
        let Some(out) = &run.out else {
            bail!(
                "a reproduce step's merge writes its files: give --out DIR (results/ to update it)"
            );
        };
        let cfg = Config {
            out: out.clone(),
            check: false,
            quick: self.quick,
            json: run.json,
            steps: vec![*step],
            complete: false,
            progress: ProgressArgs::default(),
        };
        reproduce::write(&cfg.out, files)?;
        report(&cfg, files, &Mismatches::default())?;
        Ok(ExitCode::SUCCESS)
    }
}
