//! `agentsim test PATH…`: the `[[expect]]` claims of scenario files as a test suite. Files
//! and folders (recursively, `*.toml`, sorted) are loaded by their kind; each expectation is
//! one case, decided by its file's engine and printed `PASS`/`FAIL` with its file, line,
//! runtime and evidence; files that state none are listed as skipped. The closing line reads
//! `N passed, M failed` (then `, K skipped`). Exit 0 when every case passes, 1 when one fails,
//! 2 on a bad file or a case that cannot be told.
//!
//! `--junit FILE` and `--json` are the CI forms; `--shard I/N --partial-out FILE` runs a share
//! of the cases, and `agentsim merge` joins the partials into the unsharded bytes. Cases run in
//! suite order, each run's trials spread over `--threads`, so every output is the same bytes
//! whatever the thread count.
//!
//! A pass is the claim checked on these trials (or, by exploration, these bounds); a sampled
//! `never` is not a proof that the anomaly cannot happen.

pub mod case;
pub mod collect;
pub mod junit;
pub mod report;

use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use crate::cmd::progress::{Items, ProgressArgs};
use crate::limits;
use agentsim_sim::digest::Fnv1a;
use agentsim_sim::shard::Shard;
use anyhow::{anyhow, Context, Result};
use case::{Case, Runs};
use clap::Args as ClapArgs;
use collect::{SuiteFile, What};
use report::{FileReport, Report, ShardInfo};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run the `[[expect]]` claims of scenario files as a test suite.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Scenario files and folders (searched recursively for `*.toml`).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Only the cases whose `file:line name` contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Print one JSON object on stdout instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Also write the result as JUnit XML (for GitHub's and GitLab's test reporters).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Worker threads for each run's trials, 1..=256 (the output does not depend on it);
    /// default: all cores.
    #[arg(long, value_parser = limits::threads)]
    pub threads: Option<usize>,
    /// Run shard I of N (1-based) of the cases and write them with --partial-out.
    #[arg(long, value_name = "I/N", requires = "partial_out")]
    pub shard: Option<String>,
    /// Write this shard's cases as a partial result for `agentsim merge`.
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub partial_out: Option<PathBuf>,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let shard = args
        .shard
        .as_deref()
        .map(|s| s.parse::<Shard>().map_err(|e| anyhow!("--shard: {e}")))
        .transpose()?;
    let names = collect::files(&args.paths)?;
    let mut paths = Paths::new();
    for f in &names {
        paths = paths.input("a suite file", f);
    }
    paths
        .output("--junit", args.junit.as_deref())
        .output("--partial-out", args.partial_out.as_deref())
        .check()?;
    for out in [&args.junit, &args.partial_out].into_iter().flatten() {
        preflight(out)?;
    }
    let files = names
        .iter()
        .map(|f| collect::load(f))
        .collect::<Result<Vec<SuiteFile>, _>>()?;
    let threads = args.threads.unwrap_or_else(limits::default_threads);
    let plan = Plan::new(&files, args.filter.as_deref());
    let share = match shard {
        Some(s) => {
            let r = s.range(plan.total);
            r.lo..r.hi
        }
        None => 0..plan.total,
    };
    let mut progress = Items::new("test", "cases", args.progress);
    let mut runs = Runs::default();
    let mut reports = Vec::new();
    let mut done = 0;
    for (id, (f, cases)) in files.iter().zip(&plan.cases).enumerate() {
        let Some(cases) = cases else { continue };
        let mut out = FileReport {
            file: f.file.display().to_string(),
            skipped: match &f.what {
                What::Skipped(why) => Some(why.clone()),
                What::Cases { .. } => None,
            },
            cases: Vec::new(),
        };
        for c in cases.iter().filter(|c| share.contains(&c.index)) {
            out.cases
                .push(case::decide(c, id as u64, &mut runs, threads)?);
            done += 1;
            progress.done(done, Some(share.end.saturating_sub(share.start) as usize));
        }
        reports.push(out);
    }
    progress.finish(done);
    let info = shard.map(|s| ShardInfo {
        index: s.index,
        count: s.count,
        cases_total: plan.total,
        filter: args.filter.clone(),
        digest: digest(&names),
    });
    let report = Report::new(reports, info);
    if let Some(file) = &args.partial_out {
        write_atomic(file, report.json()?.as_bytes())?;
    }
    emit(&report, args.json, args.junit.as_deref())
}

/// Prints the report (text or JSON) and writes the JUnit file; the exit code.
pub fn emit(report: &Report, json: bool, junit_out: Option<&Path>) -> Result<ExitCode> {
    if let Some(file) = junit_out {
        write_atomic(file, junit::render(report).as_bytes())?;
    }
    if json {
        print!("{}", report.json()?);
    } else {
        print!("{}", report.text());
    }
    Ok(report.exit_code())
}

/// The suite's cases in order, by file (`None`: a file the filter leaves out entirely).
struct Plan<'a> {
    cases: Vec<Option<Vec<Case<'a>>>>,
    total: u64,
}

impl<'a> Plan<'a> {
    fn new(files: &'a [SuiteFile], filter: Option<&str>) -> Plan<'a> {
        let mut total = 0;
        let mut all = Vec::new();
        for f in files {
            let What::Cases { loaded, expects } = &f.what else {
                all.push(filter.is_none().then(Vec::new));
                continue;
            };
            let mut cases = Vec::new();
            for exp in expects {
                let c = Case {
                    index: total,
                    file: &f.file,
                    loaded,
                    exp,
                };
                let id = format!("{}:{} {}", f.file.display(), exp.line, c.name());
                if filter.is_none_or(|t| id.contains(t)) {
                    cases.push(c);
                    total += 1;
                }
            }
            all.push((!cases.is_empty()).then_some(cases));
        }
        Plan { cases: all, total }
    }
}

/// FNV-1a 64 over every suite file's name and bytes, so a merge can tell partials of
/// different suites apart.
fn digest(files: &[PathBuf]) -> String {
    let mut h = Fnv1a::new();
    for f in files {
        h.field(&f.display().to_string());
        h.bytes(&std::fs::read(f).unwrap_or_default());
        h.bytes(&[0xff]);
    }
    crate::cmd::sharding::hex(h.finish())
}

/// `agentsim merge` on test partials: `Some(exit code)` when the first partial is one (a
/// suite's JSON with `"command": "test"`), `None` to leave the files to the trial merge.
pub fn merge_partials(
    partials: &[PathBuf],
    json: bool,
    junit_out: Option<&Path>,
) -> Result<Option<ExitCode>> {
    let Some(first) = partials.first() else {
        return Ok(None);
    };
    let head = std::fs::read_to_string(first)
        .with_context(|| format!("{}: reading the partial", first.display()))?;
    let is_test = serde_json::from_str::<serde_json::Value>(&head)
        .ok()
        .is_some_and(|v| v["command"] == report::COMMAND);
    if !is_test {
        return Ok(None);
    }
    let mut parts = Vec::new();
    for f in partials {
        let name = f.display().to_string();
        let text =
            std::fs::read_to_string(f).with_context(|| format!("{name}: reading the partial"))?;
        let r: Report =
            serde_json::from_str(&text).with_context(|| format!("{name}: not a test partial"))?;
        parts.push((name, r));
    }
    let merged = report::merge(parts)?;
    if let Some(out) = junit_out {
        preflight(out)?;
    }
    emit(&merged, json, junit_out).map(Some)
}
