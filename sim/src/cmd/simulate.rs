//! `agentsim simulate SCENARIO.toml`: run a scenario's trials and summarise them — each
//! anomaly as k/N with a Wilson 95 % interval, mean tokens, aborts, drops and makespan — and
//! print one replay line for the first anomalous trial.
//!
//! Same seed → byte-identical output, whatever `--threads`. A summary estimates rates under
//! the modelled timing; it does not prove an anomaly impossible (0/N is not "never").
//!
//! `--fail-on A1,A2,…` makes the run a gate: exit 1 when some trial exhibits a listed anomaly
//! (stderr names it with the replay line of the first trial that does), else 0; exit 2 when
//! the run cannot tell (no trial completed, a trial hit `events_max` before an anomaly was
//! seen, or A4, which the single-store engine never records), unless `--allow-cannot-tell`.
//!
//! A scheduler explores interleavings only where two events are enabled together. When an
//! explicit `--scheduler` had no such choice in any trial, stderr says so (a `hint:`): every
//! schedule was then the latency order, and another scheduler would print the same numbers.

use crate::artifacts::folder::Folder;
use crate::artifacts::output::{preflight, preflight_dir, write_atomic};
use crate::cmd::progress::{ProgressArgs, Watched};
use crate::cmd::run_args::RunArgs;
use crate::cmd::sharding::{self, Seeded};
use crate::limits;
use agentsim_models::runtime::Stack;
use agentsim_models::{Anomaly, Reason, Verdict};
use agentsim_sim::generator::recorded;
use agentsim_sim::metrics::{reported, Aggregate};
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::{RunConfig, RunResult};
use agentsim_sim::scenario::{OnMissing, Scenario};
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::shard::TrialSource;
use anyhow::{anyhow, Context, Result};
use clap::Args as ClapArgs;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run a scenario's seeded trials and summarise the anomalies found.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario file (TOML; see docs/simulator.md, "Scenario files").
    pub scenario: PathBuf,
    /// Runtime, overriding the scenario's (e.g. vanilla, ssi, causal, saga, registry-pin).
    #[arg(long)]
    pub runtime: Option<Stack>,
    /// Run seed, overriding the scenario's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Number of trials (1..=1000000), overriding the scenario's.
    #[arg(long, value_parser = limits::trials)]
    pub trials: Option<u64>,
    /// `random` (the default) or `pct:D` (PCT with bug depth D).
    #[arg(long)]
    pub scheduler: Option<SchedulerSpec>,
    /// Exit 1 if any trial exhibits one of these anomalies (comma-separated: A1,A2,A3,A6,
    /// A3_residue, as `[[expect]]` names them; A4 cannot be told here); exit 2 if the run
    /// cannot tell (see `--allow-cannot-tell`).
    #[arg(long, value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<Anomaly>,
    #[command(flatten)]
    pub gate: super::gate::GateArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write every trial's history as DIR/trial-<k>.jsonl and the replay lines of the
    /// anomalous trials to DIR/replay.txt.
    #[arg(long, value_name = "DIR")]
    pub trace_out: Option<PathBuf>,
    /// With --trace-out: reuse a folder an earlier run wrote, removing the files its manifest
    /// (`.agentsim-manifest`) lists; a folder holding any other file is still refused.
    #[arg(long, requires = "trace_out")]
    pub force: bool,
    /// Write every generation as a recording (JSONL) that a `recorded` generator replays.
    #[arg(long, value_name = "FILE")]
    pub record_out: Option<PathBuf>,
    /// With a recorded generator: `error` (default) or `stub` on a key the recording lacks.
    #[arg(long)]
    pub on_missing: Option<OnMissing>,
    /// Worker threads, 1..=256 (the output does not depend on it); default: all cores.
    #[arg(long, value_parser = limits::threads)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub progress: ProgressArgs,
    #[command(flatten)]
    pub shard: sharding::ShardArgs,
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    crate::artifacts::paths::Paths::new()
        .scenario(&args.scenario)
        .folder("--trace-out", args.trace_out.as_deref())
        .output("--record-out", args.record_out.as_deref())
        .output("--partial-out", args.shard.partial_out.as_deref())
        .check()?;
    let traces = match &args.trace_out {
        Some(dir) => {
            preflight_dir(dir)?;
            Some(Folder::claim(dir, "--trace-out", args.force)?)
        }
        None => None,
    };
    if let Some(file) = &args.record_out {
        preflight(file)?;
    }
    let sc = Scenario::load(&args.scenario)?;
    let cfg = config(&args, &sc)?;
    if let Some((slice, file)) = args.shard.slice()? {
        if !args.fail_on.is_empty() {
            return Err(anyhow!(
                "--fail-on gates the whole run: it does not combine with --partial-out (run \
                 it on the unsharded command)"
            ));
        }
        if args.trace_out.is_some() || args.record_out.is_some() {
            return Err(anyhow!(
                "--trace-out and --record-out need every trial: they do not combine with \
                 --partial-out"
            ));
        }
        return sharding::write_partial(&Job::of(&args.scenario, &cfg), slice, file, cfg.threads);
    }
    let mut src = Watched::new("simulate", Some(cfg.trials), args.progress);
    let res = src.run(&cfg).map_err(|e| anyhow!("{e}"))?;
    src.finish();
    if let Some(dir) = &traces {
        write_traces(dir, &cfg, &res)?;
    }
    if let Some(file) = &args.record_out {
        write_recording(file, &res)?;
    }
    let code = print_run(&cfg, &res, args.json)?;
    if args.scheduler.is_some() {
        if let Some(hint) = no_choice_hint(&cfg, &res) {
            eprintln!("{hint}");
        }
    }
    if args.fail_on.is_empty() {
        return Ok(code);
    }
    gate(&cfg, &res, &args.fail_on, args.gate)
}

/// A `--fail-on` anomaly: any the simulator counts (its summary's rows, the A3 residue among
/// them), and A4, which it answers *cannot tell*.
fn parse_fail_on(s: &str) -> Result<Anomaly, String> {
    match Anomaly::parse(s) {
        Some(a) if a == Anomaly::A4 || reported().any(|r| r == a) => Ok(a),
        _ => {
            let names: Vec<&str> = reported().map(Anomaly::name).collect();
            Err(format!(
                "unknown anomaly `{s}` (expected {} or A4)",
                names.join(", ")
            ))
        }
    }
}

/// The `--fail-on` gate over a finished run: each violated anomaly named on stderr with the
/// replay line of the first trial that exhibits it, then the exit code.
fn gate(
    cfg: &RunConfig<'_>,
    res: &RunResult,
    fail_on: &[Anomaly],
    gate: super::gate::GateArgs,
) -> Result<ExitCode> {
    let agg = &res.aggregate;
    let verdicts: Vec<(String, Verdict)> = fail_on
        .iter()
        .map(|&a| {
            let v = verdict_in(cfg.scenario, cfg.runtime, agg, a);
            (a.name().to_owned(), v)
        })
        .collect();
    for (&a, (_, v)) in fail_on.iter().zip(&verdicts) {
        if *v != Verdict::Violated {
            continue;
        }
        let first = res.trials.iter().find(|t| t.metrics.has(a));
        let first = first.context("a violated anomaly has a trial that exhibits it")?;
        let line = replay_line(cfg, first.metrics.trial, &first.metrics.schedule)?;
        let k = agg.rate(a).map_or(0, |p| p.k);
        eprintln!(
            "--fail-on {a}: {k}/{} trials exhibit {a}; the first: {}",
            agg.trials,
            line.command()
        );
    }
    Ok(gate.finish("--fail-on", &verdicts))
}

/// [`verdict`], and *cannot tell, vacuous* where no trial showed `a` and the scenario cannot
/// produce it under `runtime` at all (`agentsim_sim::vacuity`): 0/N of what cannot happen says
/// nothing.
pub fn verdict_in(sc: &Scenario, runtime: Stack, agg: &Aggregate, a: Anomaly) -> Verdict {
    let v = verdict(agg, a);
    if v != Verdict::Holds {
        return v;
    }
    match agentsim_sim::vacuity::vacuous(sc, runtime, a) {
        Some(why) => Verdict::CannotTell(Reason::Vacuous(why)),
        None => v,
    }
}

/// Whether a run exhibits `a`: violated when some trial does; cannot tell when no trial
/// completed, when a trial was cut at `events_max` and none showed `a` (the rest of that
/// trial might have), or for A4 (the engine's single store records no replica metadata);
/// else holds (on these trials: 0/N is not "never").
pub fn verdict(agg: &Aggregate, a: Anomaly) -> Verdict {
    if agg.trials == 0 {
        return Verdict::CannotTell(Reason::EmptyInput);
    }
    let k = match agg.rate(a) {
        Some(p) => p.k,
        None => {
            return Verdict::CannotTell(Reason::Undecidable(format!(
                "{a} needs a replicated store; the simulator's single store records no \
                 replica metadata (run `agentsim split-view` for {a})"
            )))
        }
    };
    match (k, agg.truncated) {
        (0, 0) => Verdict::Holds,
        (0, cut) => Verdict::CannotTell(Reason::Budget(format!(
            "{cut} of {} trials hit events_max with agents still running and none showed {a}; \
             raise [schedule] events_max",
            agg.trials
        ))),
        _ => Verdict::Violated,
    }
}

/// The hint when the scheduler never had a choice: in every trial no two events were ever
/// enabled together, so every schedule was the latency order (`None` if some trial had a
/// choice, or its count is unknown because the trials came from partial results).
pub fn no_choice_hint(cfg: &RunConfig<'_>, res: &RunResult) -> Option<String> {
    let mut events = 0;
    for t in &res.trials {
        if t.choice_points? > 0 {
            return None;
        }
        events += t.metrics.events;
    }
    let w = cfg.scenario.window_ms;
    let why = match w {
        0 => "window_ms = 0, so only events due in the same millisecond are".to_owned(),
        w => format!("window_ms = {w}, and no two events were ever due within {w} ms"),
    };
    Some(format!(
        "hint: {} had no choice to make: no two events were ever enabled together in {} \
         trials ({events} events; {why}); every schedule is the latency order, so every \
         scheduler gives these numbers (raise [schedule] window_ms to let it reorder)",
        cfg.scheduler.name(),
        res.trials.len()
    ))
}

/// The summary on stdout (text or `--json`) and the truncation warning on stderr.
fn print_run(cfg: &RunConfig<'_>, res: &RunResult, json: bool) -> Result<ExitCode> {
    let replay = first_replay(cfg, res);
    let sc = cfg.scenario;
    if json {
        let out = JsonOut::new(cfg, &res.aggregate, replay.as_ref());
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", text(cfg, &res.aggregate, replay.as_ref()));
    }
    if res.aggregate.truncated > 0 {
        eprintln!(
            "warning: {} trials hit events_max = {} with agents still running; raise \
             [schedule] events_max if the scripts are meant to run longer",
            res.aggregate.truncated, sc.events_max
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn config<'a>(args: &Args, sc: &'a Scenario) -> Result<RunConfig<'a>> {
    let mut cfg = RunConfig::new(sc);
    if let Some(r) = args.runtime {
        cfg.runtime = r;
    }
    cfg.seed = args.seed.unwrap_or(sc.seed);
    // Both are within 1..=TRIALS_MAX: the flag by its parser, the file's by the loader.
    cfg.trials = args.trials.unwrap_or(sc.trials);
    cfg.scheduler = args.scheduler.clone().unwrap_or(SchedulerSpec::Random);
    cfg.threads = args.threads.unwrap_or_else(limits::default_threads);
    cfg.on_missing = args.on_missing;
    cfg.keep_histories = args.trace_out.is_some();
    cfg.record = args.record_out.is_some();
    Ok(cfg)
}

/// A simulation's work: what a partial of `simulate` carries as its arguments (the choices
/// as validated, by name; the merge reads the scenario file again and checks its digest).
#[derive(Debug, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub scenario: PathBuf,
    #[serde(with = "agentsim_models::runtime::stack::by_name")]
    pub runtime: Stack,
    pub scheduler: String,
    pub seed: u64,
    pub trials: u64,
    pub on_missing: Option<String>,
}

impl Job {
    fn of(file: &std::path::Path, cfg: &RunConfig<'_>) -> Job {
        Job {
            scenario: file.to_owned(),
            runtime: cfg.runtime,
            scheduler: cfg.scheduler.name(),
            seed: cfg.seed,
            trials: cfg.trials,
            on_missing: cfg.on_missing.map(|m| match m {
                OnMissing::Error => "error".to_owned(),
                OnMissing::Stub => "stub".to_owned(),
            }),
        }
    }

    fn config<'a>(&self, sc: &'a Scenario, threads: usize) -> Result<RunConfig<'a>> {
        let mut cfg = RunConfig::new(sc);
        cfg.runtime = self.runtime;
        cfg.scheduler =
            SchedulerSpec::parse(&self.scheduler).map_err(|e| anyhow!("scheduler: {e}"))?;
        cfg.seed = self.seed;
        cfg.trials = self.trials;
        cfg.threads = threads.max(1);
        cfg.on_missing = match &self.on_missing {
            Some(m) => Some(OnMissing::parse(m).map_err(|e| anyhow!("on_missing: {e}"))?),
            None => None,
        };
        Ok(cfg)
    }
}

impl Seeded for Job {
    const COMMAND: &'static str = "simulate";
    type Output = (Scenario, RunResult);

    fn seed(&self) -> u64 {
        self.seed
    }

    fn trials_total(&self) -> Option<u64> {
        Some(self.trials)
    }

    fn scenario_digest(&self) -> Result<u64> {
        let bytes = std::fs::read(&self.scenario)
            .with_context(|| format!("{}: reading the scenario", self.scenario.display()))?;
        Ok(agentsim_sim::digest::fnv1a64(&bytes))
    }

    fn compute(
        &self,
        src: &mut dyn agentsim_sim::shard::TrialSource,
        threads: usize,
    ) -> Result<Self::Output> {
        let sc = Scenario::load(&self.scenario)?;
        let res = src
            .run(&self.config(&sc, threads)?)
            .map_err(|e| anyhow!("{e}"))?;
        Ok((sc, res))
    }

    fn print(&self, (sc, res): &Self::Output, run: &RunArgs) -> Result<ExitCode> {
        print_run(&self.config(sc, 1)?, res, run.json)
    }
}

/// The replay line of trial k.
pub fn replay_line(cfg: &RunConfig<'_>, trial: u64, schedule: &str) -> Result<ReplayLine> {
    Ok(ReplayLine {
        scenario: cfg.scenario.file.clone(),
        runtime: cfg.runtime,
        seed: cfg.seed,
        trial,
        schedule: agentsim_sim::schedule::Schedule::parse(schedule)?,
        on_missing: cfg.on_missing,
        repeat_max: cfg.scenario.repeat_cap,
    })
}

fn first_replay(cfg: &RunConfig<'_>, res: &RunResult) -> Option<ReplayLine> {
    let t = res
        .trials
        .iter()
        .find(|t| reported().any(|a| t.metrics.has(a)))?;
    replay_line(cfg, t.metrics.trial, &t.metrics.schedule).ok()
}

fn write_traces(dir: &Folder, cfg: &RunConfig<'_>, res: &RunResult) -> Result<()> {
    let width = (res.trials.len().max(2) - 1).to_string().len().max(5);
    let name = |trial: u64| format!("trial-{trial:0width$}.jsonl");
    let mut names: Vec<String> = res.trials.iter().map(|t| name(t.metrics.trial)).collect();
    names.push("replay.txt".to_owned());
    dir.start("simulate --trace-out", &names)?;
    let mut lines = String::new();
    for t in &res.trials {
        let h = t
            .history
            .as_ref()
            .context("histories are kept with --trace-out")?;
        let path = dir.path(&name(t.metrics.trial));
        write_atomic(&path, agentsim_jsonl::write_history(h).as_bytes())?;
        if !t.metrics.anomalies.is_empty() {
            let l = replay_line(cfg, t.metrics.trial, &t.metrics.schedule)?;
            let _ = writeln!(
                lines,
                "{} # {}",
                l,
                Anomaly::join(&t.metrics.anomalies, ",")
            );
        }
    }
    write_atomic(&dir.path("replay.txt"), lines.as_bytes())
}

fn write_recording(file: &std::path::Path, res: &RunResult) -> Result<()> {
    let mut all: Vec<&String> = res.trials.iter().flat_map(|t| &t.recorded).collect();
    all.sort();
    all.dedup();
    // One generation per key: the first line for a key wins (keys are the first 3 fields).
    let mut out = recorded::header();
    out.push('\n');
    let mut last_key = String::new();
    for l in all {
        let key = key_of(l);
        if key != last_key {
            out.push_str(l);
            out.push('\n');
            last_key = key;
        }
    }
    write_atomic(file, out.as_bytes())
}

fn key_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    format!("{}|{}|{}", v["agent"], v["step"], v["digest"])
}

fn text(cfg: &RunConfig<'_>, agg: &Aggregate, replay: Option<&ReplayLine>) -> String {
    use agentsim_sim::stats::percent;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {} ({}), runtime {}, scheduler {}, seed {}, {} trials",
        agentsim_models::escape_text(&cfg.scenario.name),
        crate::artifacts::paths::shown(&cfg.scenario.file),
        cfg.runtime.name(),
        cfg.scheduler.name(),
        cfg.seed,
        agg.trials
    );
    let _ = writeln!(
        s,
        "{:<11} {:>12}  {:>7}  95% Wilson interval",
        "anomaly", "k/N", "rate"
    );
    for a in reported() {
        let (name, p) = (a.name(), &agg.anomalies[&a]);
        let _ = writeln!(
            s,
            "{name:<11} {:>12}  {:>6}%  [{}%, {}%]",
            format!("{}/{}", p.k, p.n),
            percent(p.rate),
            percent(p.lo),
            percent(p.hi)
        );
    }
    let l = agg.levels;
    let _ = writeln!(
        s,
        "levels      L0 {}  L1 {}  L2 {}  L3 {}  L4 {}",
        l[0], l[1], l[2], l[3], l[4]
    );
    let _ = writeln!(
        s,
        "per trial   tokens {:.1} (wasted {:.1})  commits {:.2}  aborts {:.2}  drops {:.2}  \
         retries {:.2}  retractions {:.2}  makespan {:.1} ms",
        agg.tokens_total.mean,
        agg.tokens_wasted.mean,
        agg.commits.mean,
        agg.aborts.mean,
        agg.drops.mean,
        agg.retries.mean,
        agg.retractions.mean,
        agg.makespan_ms.mean
    );
    match replay {
        Some(r) => {
            let _ = writeln!(s, "replay: {}", r.command());
        }
        None => {
            let _ = writeln!(s, "no anomaly in {} trials", agg.trials);
        }
    }
    s
}

#[derive(Serialize)]
struct JsonOut<'a> {
    scenario: &'a str,
    file: String,
    runtime: String,
    scheduler: String,
    seed: u64,
    trials: u64,
    aggregate: &'a Aggregate,
    replay: Option<String>,
}

impl<'a> JsonOut<'a> {
    fn new(cfg: &'a RunConfig<'_>, agg: &'a Aggregate, replay: Option<&ReplayLine>) -> Self {
        JsonOut {
            scenario: &cfg.scenario.name,
            file: cfg.scenario.file.display().to_string(),
            runtime: cfg.runtime.name(),
            scheduler: cfg.scheduler.name(),
            seed: cfg.seed,
            trials: cfg.trials,
            aggregate: agg,
            replay: replay.map(ToString::to_string),
        }
    }
}
