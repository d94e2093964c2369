//! `agentsim explore S --shard I/N --partial-out FILE` and the explore branch of `agentsim
//! merge`: a shard runs its share of the schedule tree under every runtime the run names
//! ([`agentsim_sim::explore::explore_shard`]) and writes it as a partial; the merge checks that
//! the partials are the shards of one exploration (command, format, scenario path and text,
//! flags, build, shard count, each shard once) and prints what the unsharded run prints, with
//! its exit code.
//!
//! Same bytes: the `--json` and the text of a complete search, except the text's seconds,
//! which are the shards' seconds added (the work, not the wall time). Not the same: a search
//! that a budget stopped (each shard spends its own `--max-schedules` and `--max-memory-mb`;
//! the merge is *cannot tell* with other counts), and a stateful search's counts and
//! witnesses (each shard keeps its own set of states: the merge adds the states, and the
//! verdicts and anomaly sets are the unsharded run's). A shard that a signal stops writes nothing
//! and exits 130. A merge trusts the partials (it runs nothing) and needs the scenario file
//! at the same path, with the same text, for the report's name.

use super::{config, emit, search, Args, Explored};
use crate::artifacts::output::write_atomic;
use crate::cmd::check_watch::INTERRUPTED;
use crate::cmd::sharding::{build, hex};
use agentsim_models::runtime::Stack;
use agentsim_sim::bounds::{Quantiles, QuantilesError};
use agentsim_sim::explore::{explore_shard, merge_shards, ExploreConfig, Search, ShardRun};
use agentsim_sim::scenario::{OnMissing, Scenario};
use agentsim_sim::shard::{Build, Shard};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The command an explore partial names (and `agentsim merge` recognises).
pub const COMMAND: &str = "explore";
/// The partial's format; a merge refuses any other (2: the search is one field, `search`).
const FORMAT: u64 = 2;

/// One shard's partial.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub command: String,
    pub format: u64,
    pub shard: ShardNo,
    /// The scenario path as given (replay lines carry it).
    pub scenario: String,
    /// FNV-1a 64 of the scenario file's bytes.
    pub scenario_digest: String,
    pub config: Config,
    pub build: Build,
    /// One per runtime of `config.runtimes`, in that order.
    pub runs: Vec<Run>,
}

/// Which shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardNo {
    pub index: u64,
    pub count: u64,
}

/// The flags that decide the exploration's output (all shards must agree).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub runtimes: Vec<String>,
    /// The search the shards ran, as the merge must report it.
    pub search: SearchHeader,
    /// `--stateful` (absent: a stateless search).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stateful: bool,
    /// `--no-park` (absent: polling loops parked where they can be).
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_park: bool,
    pub steps_per_agent: u64,
    pub max_schedules: Option<u64>,
    pub max_memory_mb: Option<u64>,
    pub on_missing: Option<String>,
    pub coverage: bool,
    pub allow_cannot_tell: bool,
    /// `--fail-on`: the anomalies the exit code gates on (absent: none named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_on: Vec<String>,
    /// `--max-repeat`: the cap on every agent's repeat the shards explored under.
    pub max_repeat: Option<u32>,
}

/// [`Search`] as a partial writes it: `"plain"`, `{"reduced": {"symmetry": B}}` (symmetry
/// as run: on only with reduction) or `{"timed": {"quantiles": "LO,HI"}}` (as `--quantiles`
/// takes them). A timed search is the plain enumeration, and the header cannot say
/// otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SearchHeader {
    Plain,
    Reduced { symmetry: bool },
    Timed { quantiles: String },
}

impl SearchHeader {
    fn of(s: Search) -> SearchHeader {
        match s {
            Search::Plain => SearchHeader::Plain,
            Search::Reduced { symmetry } => SearchHeader::Reduced { symmetry },
            Search::Timed(q) => SearchHeader::Timed {
                quantiles: q.to_string(),
            },
        }
    }

    /// The search, or what is wrong with the quantiles.
    fn search(&self) -> Result<Search, QuantilesError> {
        Ok(match self {
            SearchHeader::Plain => Search::Plain,
            SearchHeader::Reduced { symmetry } => Search::Reduced {
                symmetry: *symmetry,
            },
            SearchHeader::Timed { quantiles } => Search::Timed(Quantiles::parse(quantiles)?),
        })
    }
}

/// One runtime's share and the seconds it took.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub runtime: String,
    pub seconds: f64,
    pub share: ShardRun,
}

/// The shard and the partial file, or `None` for an unsharded run.
pub fn flags(args: &Args) -> Result<Option<(Shard, &Path)>> {
    match (&args.shard, &args.partial_out) {
        (Some(s), Some(f)) => {
            let s = s.parse::<Shard>().map_err(|e| anyhow!("--shard: {e}"))?;
            Ok(Some((s, f.as_path())))
        }
        (None, None) => Ok(None),
        _ => bail!("--shard I/N and --partial-out FILE go together"),
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn on_missing_text(m: Option<OnMissing>) -> Option<String> {
    m.map(|m| match m {
        OnMissing::Error => "error".to_owned(),
        OnMissing::Stub => "stub".to_owned(),
    })
}

fn config_of(args: &Args, runtimes: &[Stack]) -> Config {
    Config {
        runtimes: runtimes.iter().map(|r| r.to_string()).collect(),
        search: SearchHeader::of(search(args)),
        stateful: args.stateful,
        no_park: args.no_park,
        steps_per_agent: args.steps_per_agent,
        max_schedules: Some(args.max_schedules),
        max_memory_mb: args.max_memory_mb,
        on_missing: on_missing_text(args.on_missing),
        coverage: args.coverage,
        allow_cannot_tell: args.gate.allow_cannot_tell,
        fail_on: args.fail_on.iter().map(|a| a.name().to_owned()).collect(),
        max_repeat: args.max_repeat,
    }
}

fn scenario_digest(file: &Path) -> Result<String> {
    let bytes =
        std::fs::read(file).with_context(|| format!("{}: reading the scenario", file.display()))?;
    Ok(hex(agentsim_sim::digest::fnv1a64(&bytes)))
}

/// Runs shard `shard` of the exploration `args` asks for and writes its partial to `file`.
pub fn write(
    args: &Args,
    sc: &Scenario,
    runtimes: &[Stack],
    (shard, file): (Shard, &Path),
    cancel: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<ExitCode> {
    let mut runs = Vec::with_capacity(runtimes.len());
    for &rt in runtimes {
        let cfg = config(args, rt, cancel, progress);
        let started = Instant::now();
        let share =
            explore_shard(sc, &cfg, shard.index, shard.count).map_err(|e| anyhow!("{e}"))?;
        if cancel.load(Ordering::SeqCst) {
            eprintln!("explore: a signal stopped shard {shard}; wrote no partial");
            return Ok(ExitCode::from(INTERRUPTED));
        }
        if let Some(why) = &share.stopped {
            eprintln!(
                "warning: explore under {rt}: shard {shard}: its {why} budget stopped it after \
                 {} schedules; the merge will be cannot tell",
                share.schedules
            );
        }
        runs.push(Run {
            runtime: rt.to_string(),
            seconds: started.elapsed().as_secs_f64(),
            share,
        });
    }
    let partial = Partial {
        command: COMMAND.to_owned(),
        format: FORMAT,
        shard: ShardNo {
            index: shard.index,
            count: shard.count,
        },
        scenario: args.scenario.display().to_string(),
        scenario_digest: scenario_digest(&args.scenario)?,
        config: config_of(args, runtimes),
        build: build()?.clone(),
        runs,
    };
    write_atomic(
        file,
        (serde_json::to_string_pretty(&partial)? + "\n").as_bytes(),
    )?;
    let ran: usize = partial.runs.iter().map(|r| r.share.ran.len()).sum();
    let schedules: u64 = partial.runs.iter().map(|r| r.share.schedules).sum();
    eprintln!(
        "explore: wrote {} (shard {shard}: {ran} tasks, {schedules} schedules, {} runtimes)",
        file.display(),
        partial.runs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `agentsim merge` on explore partials: `Some(exit code)` when the first file is one (JSON
/// with `"command": "explore"`), `None` to leave the files to the other merges.
pub fn merge_partials(files: &[PathBuf], json: bool) -> Result<Option<ExitCode>> {
    let Some(first) = files.first() else {
        return Ok(None);
    };
    let head = std::fs::read_to_string(first)
        .with_context(|| format!("{}: reading the partial", first.display()))?;
    let is_explore = serde_json::from_str::<serde_json::Value>(&head)
        .ok()
        .is_some_and(|v| v["command"] == COMMAND);
    if !is_explore {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(files.len());
    for f in files {
        let name = f.display().to_string();
        let text =
            std::fs::read_to_string(f).with_context(|| format!("{name}: reading the partial"))?;
        let p: Partial = serde_json::from_str(&text)
            .with_context(|| format!("{name}: not an explore partial"))?;
        parts.push((name, p));
    }
    let parts = check(parts)?;
    let (first_name, head) = &parts[0];
    let file = PathBuf::from(&head.scenario);
    let digest = scenario_digest(&file)?;
    if digest != head.scenario_digest {
        bail!(
            "{first_name}: {}: the scenario text now has digest {digest}, the partials were \
             made from {}",
            head.scenario,
            head.scenario_digest
        );
    }
    let mut sc = Scenario::load(&file)?;
    if let Some(n) = head.config.max_repeat {
        sc = sc.with_repeat_cap(n).context("--max-repeat")?.0;
    }
    let done = join(&sc, &parts)?;
    let c = &head.config;
    let fail_on = c
        .fail_on
        .iter()
        .map(|n| {
            super::parse_fail_on(n)
                .map_err(|e| anyhow!("{first_name}: field `config.fail_on`: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let gate = super::Gate {
        fail_on: &fail_on,
        args: crate::cmd::gate::GateArgs {
            allow_cannot_tell: c.allow_cannot_tell,
        },
    };
    emit(&sc, &done, json, c.coverage, gate, false).map(Some)
}

/// Checks that the partials are the shards of one exploration, each once; sorted by shard.
fn check(mut parts: Vec<(String, Partial)>) -> Result<Vec<(String, Partial)>> {
    let mine = build()?;
    let (first_name, first) = &parts[0];
    let count = first.shard.count;
    for (name, p) in &parts {
        if &p.build != mine {
            bail!(
                "{name}: made by build {} {}, this is {} {}; merge with the binary that ran \
                 the shards",
                p.build.version,
                p.build.digest,
                mine.version,
                mine.digest
            );
        }
        let differs = [
            (p.command != COMMAND, "command"),
            (p.format != FORMAT, "format"),
            (p.shard.count != count, "shard.count"),
            (p.scenario != first.scenario, "scenario"),
            (
                p.scenario_digest != first.scenario_digest,
                "scenario_digest",
            ),
            (p.config != first.config, "config"),
            (p.runs.len() != p.config.runtimes.len(), "runs"),
        ];
        if let Some((_, field)) = differs.iter().find(|(d, _)| *d) {
            bail!(
                "{name}: field `{field}` differs from {first_name}'s: not a shard of the same \
                 exploration"
            );
        }
    }
    parts.sort_by_key(|(_, p)| p.shard.index);
    let mut want = 1;
    for (name, p) in &parts {
        if p.shard.index == 0 || p.shard.index > count {
            bail!(
                "{name}: field `shard.index`: {} is not in 1..={count}",
                p.shard.index
            );
        }
        if p.shard.index != want {
            if p.shard.index < want {
                bail!("{name}: shard {}/{count} is given twice", p.shard.index);
            }
            bail!("shard {want}/{count} is missing");
        }
        want += 1;
    }
    if want <= count {
        bail!("shard {want}/{count} is missing");
    }
    Ok(parts)
}

/// Joins the checked partials runtime by runtime.
fn join(sc: &Scenario, parts: &[(String, Partial)]) -> Result<Vec<Explored>> {
    let head = &parts[0].1;
    let c = &head.config;
    let mut done = Vec::with_capacity(c.runtimes.len());
    for (r, rt) in c.runtimes.iter().enumerate() {
        let stack: Stack = rt
            .parse()
            .map_err(|e| anyhow!("{}: field `config.runtimes`: {e}", parts[0].0))?;
        let mut cfg = ExploreConfig::new(stack);
        cfg.search = c
            .search
            .search()
            .map_err(|e| anyhow!("{}: field `config.search`: {e}", parts[0].0))?;
        cfg.stateful = c.stateful;
        cfg.park = !c.no_park;
        cfg.steps_per_agent = c.steps_per_agent;
        cfg.on_missing = c
            .on_missing
            .as_deref()
            .map(OnMissing::parse)
            .transpose()
            .map_err(|e| anyhow!("{}: field `config.on_missing`: {e}", parts[0].0))?;
        let mut shares = Vec::with_capacity(parts.len());
        let mut seconds = 0.0;
        for (name, p) in parts {
            let run = &p.runs[r];
            if &run.runtime != rt {
                bail!(
                    "{name}: field `runs[{r}].runtime`: `{}`, not `{rt}`",
                    run.runtime
                );
            }
            seconds += run.seconds;
            shares.push((name.clone(), run.share.clone()));
        }
        let result = merge_shards(sc, &cfg, &shares).map_err(|e| anyhow!("{e}"))?;
        done.push(Explored {
            result,
            seconds,
            liveness: None,
        });
    }
    Ok(done)
}
