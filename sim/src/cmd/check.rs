//! `agentsim check`: exhaustive exploration of SPEC §1 at small bounds, like TLC, with the
//! figures TLC reports (distinct, generated, depth) and shortest counterexamples.
//!
//! Exit 0: every checked property holds on every reachable state at these bounds (nothing is
//! claimed beyond them). Exit 1: a property is violated; its shortest counterexample is
//! printed as steps plus a replay path, and `--trace-out` writes the first violated
//! property's trace as ITF JSON. `--replay PATH` with the same flags re-prints a path's steps
//! and the checked properties it violates (text or `--json`; `--trace-out` writes its ITF
//! after the verdict); exit 1 when it violates one, as for a search. Exit 2: bad
//! flags or bounds, or the `--max-states` bound or the `--max-memory-mb` ceiling stopped the
//! search (the partial counts are printed first), or no property is violated but one is
//! *cannot tell* because it is vacuous (`agentsim_checker::jobs::vacuity`: no history at these
//! bounds and extensions can violate it), unless `--allow-cannot-tell`. Exit 130: SIGINT or
//! SIGTERM stopped it (partial counts printed, spill files removed); see `check_watch` for
//! progress lines.
//!
//! `--replicas K` checks the replicated store of SPEC §6 instead (`--max-lag`,
//! `--read-discipline`; property `A4`, split view), composed with `--runtime` for writes; see
//! `agentsim_checker::models::replicated`. Flags that model has no meaning for are refused (exit 2).

use super::{check_abstract, check_watch};
use crate::artifacts::output::{preflight, write_atomic};
use agentsim_checker::engine::control::{self, Limits, Stopped};
use agentsim_checker::engine::frontier::Storage;
use agentsim_checker::jobs::replicated_run;
use agentsim_checker::jobs::run::{self, CheckConfig, CheckReport, Replayed};
use agentsim_checker::{
    Bound, Bounds, BoundsError, Extensions, NotReplicated, Property, Replication, Skew,
};
use agentsim_models::anomaly::Scope;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::Stack;
use agentsim_models::Anomaly;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exhaustively check the Memory model (SPEC §1), optionally under a runtime (SPEC §5).
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Runtime: vanilla, pessimistic, si, ssi, causal, causal-no-cascade, saga,
    /// registry-validate, registry-pin, or a `+`-joined stack of those and the mechanisms
    /// lock, validate-writers, validate, validate-preds, cascade, sequencer, pin,
    /// validate-tool (e.g. lock+sequencer).
    #[arg(long, default_value = "vanilla")]
    pub runtime: Stack,
    /// Paper-faithful: vanilla with every extension off (the paper's TLC transition system).
    #[arg(long)]
    pub paper: bool,
    #[arg(long, default_value_t = 2)]
    pub agents: u32,
    #[arg(long, default_value_t = 1)]
    pub cells: u32,
    /// Number of non-NULL values.
    #[arg(long, default_value_t = 2)]
    pub values: u32,
    /// Tools (default 2; the replicated model has none, so 0 with --replicas).
    #[arg(long)]
    pub tools: Option<u32>,
    /// Records a history may have (default 2; with --abstract, no bound when absent).
    #[arg(long)]
    pub max_ops: Option<u32>,
    /// ExternalCells: the first N cells (only --skew-external reads it).
    #[arg(long, default_value_t = 0)]
    pub external: u32,
    /// AllowSkew, as the paper's Memory.tla: a read of any cell may return any value.
    #[arg(long)]
    pub skew: bool,
    /// Extension 5: only reads of the --external cells may return any value; the other
    /// cells' reads equal memory.
    #[arg(long, conflicts_with = "skew")]
    pub skew_external: bool,
    /// Symmetry reduction over agents.
    #[arg(long)]
    pub symmetry: bool,
    /// Properties: A1,A2,A3,A6 (also A3_residue, L1_struct, A1_snapshot; A4 with
    /// --replicas), all, none.
    #[arg(long, default_value = "all", value_parser = properties)]
    pub property: Properties,
    /// Check the replicated store (SPEC §6) with this many secondaries.
    #[arg(long, value_name = "K")]
    pub replicas: Option<u32>,
    /// With --replicas: how many entries per cell a secondary may lag (default 1; 0 is
    /// synchronous replication).
    #[arg(long, value_name = "L")]
    pub max_lag: Option<u64>,
    /// With --replicas: any-replica (any), session, primary-pinned (pinned); default
    /// any-replica.
    #[arg(long, value_name = "DISCIPLINE")]
    pub read_discipline: Option<ReadDiscipline>,
    /// Worker threads, 1..=256 (the counts do not depend on it); default: all cores.
    #[arg(long, value_parser = crate::cmd::limits::threads)]
    pub threads: Option<usize>,
    /// Extension 1: write values are NULL outside the write set.
    #[arg(long)]
    pub canonical_writes: bool,
    /// Extension 2: record provenance (preds) at StartRead.
    #[arg(long)]
    pub provenance: bool,
    /// Extension 3: enable `Retract(i)`.
    #[arg(long)]
    pub retraction: bool,
    /// Extension 4: enable `ChangeSignature(t)` (one change per tool).
    #[arg(long)]
    pub tool_versions: bool,
    /// Every op must write every cell it read (the hypothesis under which si excludes A1).
    #[arg(long)]
    pub all_writers: bool,
    /// Stop after this many distinct states (exit 2).
    #[arg(long, default_value_t = 2_000_000_000)]
    pub max_states: u64,
    /// Pre-size the fingerprint set for this many distinct states (avoids rehashing).
    #[arg(long, default_value_t = 0)]
    pub expect_states: u64,
    /// MiB of packed frontier kept in memory per BFS level; the rest is spilled to disk.
    #[arg(long, default_value_t = 1024)]
    pub frontier_mem_mb: u64,
    /// Directory for frontier spill files (default: the system temp directory).
    #[arg(long, value_name = "DIR")]
    pub spill_dir: Option<PathBuf>,
    /// Stop cleanly, with the partial counts, once the process's resident memory reaches this
    /// many MiB (exit 2). Default: half the machine's memory (4096 where it is unknown).
    #[arg(long, value_name = "MIB")]
    pub max_memory_mb: Option<u64>,
    /// Print progress on stderr (a line per BFS level and every 5 s inside one) from the
    /// start, even when stderr is not a terminal. Without it, a terminal gets progress once a
    /// run passes 2 s.
    #[arg(long)]
    pub progress: bool,
    /// No progress on stderr.
    #[arg(long, conflicts_with = "progress")]
    pub quiet: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write the first violated property's counterexample as ITF JSON.
    #[arg(long, value_name = "FILE.itf.json")]
    pub trace_out: Option<PathBuf>,
    /// Replay an action-index path (`0/4/17`) instead of exploring, and print its steps.
    #[arg(long, value_name = "PATH")]
    pub replay: Option<String>,
    /// Check the history-free abstract model (SPEC §5.2); see `check_abstract`.
    #[arg(long = "abstract")]
    pub abstract_model: bool,
    /// Exit 0 rather than 2 when a property's verdict is "cannot tell" (vacuous: no history
    /// at these bounds and extensions can violate it); the report still says so.
    #[arg(long)]
    pub allow_cannot_tell: bool,
    /// With --abstract: write the first violated property's concretized history (JSON Lines).
    #[arg(long, value_name = "FILE.jsonl", requires = "abstract_model")]
    pub history_out: Option<PathBuf>,
}

/// A bounds error in the words of this command's flags.
pub fn bounds_message(e: &BoundsError) -> String {
    match e {
        BoundsError::OutOfRange {
            bound,
            got,
            min,
            max,
        } => {
            let flag = match bound {
                Bound::Agents => "agents",
                Bound::Cells => "cells",
                Bound::Values => "values",
                Bound::Tools => "tools",
                Bound::MaxOps => "max-ops",
                Bound::External => "external",
                Bound::Secondaries => "replicas",
                Bound::MaxLag => "max-lag",
            };
            format!("--{flag} {got} is out of range: expected {min}..={max}")
        }
        BoundsError::NotReplicated(what) => {
            let fix = match what {
                NotReplicated::Tools => "pass --tools 0",
                NotReplicated::Skew => "drop --skew, --skew-external and --external",
                NotReplicated::RetractionOrToolVersions => "drop --retraction, --tool-versions",
                NotReplicated::Symmetry => "drop --symmetry",
            };
            format!("--replicas: the replicated model has no {what} ({fix})")
        }
        BoundsError::PaperExtensions => e.to_string(),
        BoundsError::SkewExternalNone => {
            "--skew-external needs --external N (N >= 1): with no external cell it frees no read"
                .to_owned()
        }
        BoundsError::ExternalUnused(skew) => format!(
            "--external is read only by --skew-external; {}",
            match skew {
                Skew::Every => {
                    "--skew frees every cell's reads (the paper's AllowSkew): drop --external, \
                     or free only the first N cells with --skew-external --external N"
                }
                _ => "add --skew-external, or drop --external",
            }
        ),
        BoundsError::Stack(e) => format!("--runtime: {e}"),
    }
}

/// The parsed `--property` list: sorted, unique.
#[derive(Clone, Debug)]
pub struct Properties(pub Vec<Property>);

fn properties(s: &str) -> Result<Properties, agentsim_checker::property::UnknownProperty> {
    Property::parse_list(s).map(Properties)
}

/// The model `check` explores, chosen once from the flags by [`resolve`]; the rest of the
/// command dispatches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckModel {
    /// The packed paper model (`agentsim_checker::paper`): `vanilla` without provenance,
    /// retraction or tool versions (`run::uses_paper_model`), with or without `--paper`.
    Paper,
    /// The composed runtime model (`agentsim_checker::composed`): the store under any other
    /// stack of mechanisms.
    Stack,
    /// The replicated store of SPEC §6 (`--replicas K`), composed with `--runtime` for writes.
    Replicated(Replication),
    /// The history-free abstract model of SPEC §5.2 (`--abstract`); `bounded` when
    /// `--max-ops` was given (without it the model keeps no op counter).
    Abstract { bounded: bool },
}

/// Validates the flags into a check configuration and the one model they select. Every
/// combination of flags a model has no meaning for is refused here (exit 2), in this order:
///
/// 1. `--paper` with a runtime other than vanilla, an extension, or `--skew-external`;
/// 2. the bounds (`Bounds::validate`, in the words of the flags);
/// 3. `--abstract` with `--replicas`, `--max-lag` or `--read-discipline`, then with `--replay`
///    (abstract paths are not concrete ones);
/// 4. without `--replicas`: `--max-lag` or `--read-discipline`, then a property only a
///    replicated store has (A4);
/// 5. `--replicas` with `--paper`, then whatever the replicated model lacks
///    (`Replication::validate`: tools, skew, retraction or tool versions, symmetry).
///
/// One exclusion stays with the checker because it depends on exploring rather than on
/// the flags alone: symmetry reduction on the composed model (`CheckError::Symmetry`), which
/// a `--replay` ignores. `--history-out` without `--abstract` and `--skew` with
/// `--skew-external` are refused by clap.
pub fn resolve(a: &Args) -> anyhow::Result<(CheckConfig, CheckModel)> {
    let ext = extensions(a);
    if a.paper && (a.runtime != Stack::VANILLA || !ext.is_paper() || a.skew_external) {
        bail!(
            "--paper means vanilla with every extension off; drop --runtime and extension flags \
             (--skew is the paper's AllowSkew; --skew-external is extension 5)"
        );
    }
    let cfg = config(a, ext)?;
    if a.abstract_model {
        if a.replicas.is_some() || a.max_lag.is_some() || a.read_discipline.is_some() {
            bail!(
                "--abstract is the single-store model; drop --replicas, --max-lag, \
                 --read-discipline"
            );
        }
        if a.replay.is_some() {
            bail!("--replay replays concrete paths: drop --abstract");
        }
        let bounded = a.max_ops.is_some();
        return Ok((cfg, CheckModel::Abstract { bounded }));
    }
    let Some(secondaries) = a.replicas else {
        if a.max_lag.is_some() || a.read_discipline.is_some() {
            bail!("--max-lag and --read-discipline need --replicas K (the replicated store)");
        }
        let replicated = |p: &Property| p.anomaly().map(Anomaly::scope) == Some(Scope::Replicated);
        if let Some(p) = cfg.properties.iter().find(|p| replicated(p)) {
            bail!(
                "--property {} needs a replicated store: add --replicas K (SPEC §6)",
                p.name()
            );
        }
        let model = if run::uses_paper_model(&cfg) {
            CheckModel::Paper
        } else {
            CheckModel::Stack
        };
        return Ok((cfg, model));
    };
    if a.paper {
        bail!("--paper is the single-store model of SPEC §1; drop it with --replicas");
    }
    let rep = Replication {
        secondaries,
        max_lag: a.max_lag.unwrap_or(1),
        discipline: a.read_discipline.unwrap_or(ReadDiscipline::AnyReplica),
    };
    rep.validate(&cfg.bounds, &cfg.ext, cfg.symmetry)
        .map_err(|e| anyhow::anyhow!(bounds_message(&e)))?;
    Ok((cfg, CheckModel::Replicated(rep)))
}

fn extensions(a: &Args) -> Extensions {
    Extensions {
        canonical_writes: a.canonical_writes,
        provenance: a.provenance,
        retraction: a.retraction,
        tool_versions: a.tool_versions,
        all_writers: a.all_writers,
    }
}

/// The check configuration of the flags, its bounds validated.
fn config(a: &Args, ext: Extensions) -> anyhow::Result<CheckConfig> {
    let skew = match (a.skew, a.skew_external) {
        (true, _) => Skew::Every,
        (false, true) => Skew::External,
        (false, false) => Skew::Off,
    };
    let bounds = Bounds {
        agents: a.agents,
        cells: a.cells,
        values: a.values,
        tools: a.tools.unwrap_or(if a.replicas.is_some() { 0 } else { 2 }),
        max_ops: a.max_ops.unwrap_or(2),
        external: a.external,
        skew,
    };
    bounds
        .validate()
        .map_err(|e| anyhow::anyhow!(bounds_message(&e)))?;
    let properties = a.property.0.clone();
    Ok(CheckConfig {
        bounds,
        ext,
        runtime: a.runtime,
        symmetry: a.symmetry,
        properties,
        threads: a
            .threads
            .unwrap_or_else(crate::cmd::limits::default_threads),
        max_states: a.max_states,
    })
}

/// Validates the storage flags; the spill directory must exist and be a directory.
pub fn storage(a: &Args) -> anyhow::Result<Storage> {
    let spill_dir = a.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    if !spill_dir.is_dir() {
        bail!("--spill-dir {}: not a directory", spill_dir.display());
    }
    let probe = spill_dir.join(format!(".agentsim-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .with_context(|| format!("--spill-dir {}: not writable", spill_dir.display()))?;
    let max_memory_bytes = match a.max_memory_mb {
        Some(0) => bail!("--max-memory-mb 0: give a ceiling of at least 1 MiB"),
        Some(mb) => mb.saturating_mul(1 << 20),
        None => control::default_memory_limit(),
    };
    // The seen set is pre-sized at 10 bytes a state (8-byte slots at 80 % load): refuse a
    // pre-size that alone passes the ceiling instead of failing to allocate it.
    let seen_bytes = a.expect_states.saturating_mul(10);
    if seen_bytes > max_memory_bytes {
        bail!(
            "--expect-states {} needs {} MiB for the seen set, above the {} MiB memory ceiling: \
             lower --expect-states or raise --max-memory-mb",
            a.expect_states,
            seen_bytes >> 20,
            max_memory_bytes >> 20
        );
    }
    let cancel = check_watch::cancel_on_signals().context("installing the SIGINT handler")?;
    Ok(Storage {
        expect_states: a.expect_states,
        frontier_mem_bytes: a.frontier_mem_mb.saturating_mul(1 << 20),
        spill_dir,
        limits: Limits {
            cancel: Some(cancel),
            max_memory_bytes,
        },
        progress: check_watch::reporter(a.quiet, a.progress),
    })
}

/// A search stopped by a signal or the memory ceiling: the partial counts on stdout, then
/// exit 130, or exit 2 saying what to raise.
/// `extra` are keys the caller's `--json` adds to every report (the abstract model's).
pub(crate) fn stopped(
    report: &CheckReport,
    stop: Stopped,
    json: bool,
    extra: serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<ExitCode> {
    let o = &report.outcome;
    if json {
        let mut doc = to_json(report);
        if let Some(obj) = doc.as_object_mut() {
            obj.extend(extra);
        }
        doc["stopped"] = json!(match stop {
            Stopped::Cancelled => "interrupted",
            Stopped::Memory { .. } => "memory",
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let found: Vec<&str> = o.violated.iter().map(|p| p.name()).collect();
        println!(
            "partial counts (stopped): {} distinct, {} generated, depth {}, {:.1} s; \
             violated so far: {}",
            o.distinct,
            o.generated,
            o.depth,
            o.seconds,
            if found.is_empty() {
                "none".to_owned()
            } else {
                found.join(", ")
            }
        );
    }
    match stop {
        Stopped::Cancelled => {
            eprintln!("interrupted: spill files removed");
            Ok(ExitCode::from(check_watch::INTERRUPTED))
        }
        Stopped::Memory {
            limit_bytes,
            rss_bytes,
        } => bail!(
            "stopped at the memory ceiling: {} MiB resident, --max-memory-mb {}: raise \
             --max-memory-mb, lower --frontier-mem-mb to spill more of each level to \
             --spill-dir, or shrink the bounds",
            rss_bytes >> 20,
            limit_bytes >> 20
        ),
    }
}

/// Runs the command on the model its flags select.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (cfg, model) = resolve(&args)?;
    let rep = match model {
        CheckModel::Abstract { bounded } => return check_abstract::run(&args, &cfg, bounded),
        CheckModel::Replicated(rep) => Some(rep),
        CheckModel::Paper | CheckModel::Stack => None,
    };
    if let Some(path) = &args.trace_out {
        preflight(path).context("--trace-out")?;
    }
    if let Some(path) = &args.replay {
        let r = match rep {
            Some(rep) => replicated_run::replay(&cfg, rep, path),
            None => run::replay(&cfg, path),
        }
        .map_err(anyhow::Error::msg)?;
        return replayed(&r, &cfg, &args);
    }
    let storage = storage(&args)?;
    if !args.quiet {
        eprintln!("exploring ({} threads)...", cfg.threads);
    }
    let report = match rep {
        Some(rep) => replicated_run::check_with(&cfg, rep, &storage)?,
        None => run::check_with(&cfg, &storage)?,
    };
    if let Some(stop) = report.outcome.stopped {
        return stopped(&report, stop, args.json, serde_json::Map::new());
    }
    if !report.outcome.complete && !report.outcome.all_violated {
        bail!(
            "stopped after {} distinct states without exhausting the space: raise --max-states",
            report.outcome.distinct
        );
    }
    // The verdict first: a trace file that cannot be written must not cost the result.
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&report))?);
    } else {
        print!("{}", text(&report, &cfg, rep));
    }
    if let Some(path) = &args.trace_out {
        write_trace(&report, path)?;
    }
    Ok(exit_code(&report, args.allow_cannot_tell))
}

/// Exit 1 when a property is violated; else 2 when one is *cannot tell* (vacuous), unless
/// `--allow-cannot-tell`, saying on stderr which and why; else 0. A gate never passes on
/// *cannot tell*: "holds" of a property no history can violate says nothing.
pub(crate) fn exit_code(report: &CheckReport, allow_cannot_tell: bool) -> ExitCode {
    if report.violated() {
        return ExitCode::from(1);
    }
    let vacuous: Vec<&str> = report
        .verdicts
        .iter()
        .filter(|v| v.vacuous.is_some())
        .map(|v| v.property.name())
        .collect();
    if vacuous.is_empty() || allow_cannot_tell {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "cannot tell: {} vacuous at these bounds and extensions (see the report); change \
         them as it says, or pass --allow-cannot-tell to accept",
        vacuous.join(", ")
    );
    ExitCode::from(2)
}

/// A replayed path: its steps and verdict (text or `--json`), its ITF under `--trace-out`
/// (written after the verdict is printed); exit 1 when it violates a checked property.
fn replayed(r: &Replayed, cfg: &CheckConfig, args: &Args) -> anyhow::Result<ExitCode> {
    let names = |ps: &[Property]| ps.iter().map(|p| p.name()).collect::<Vec<_>>();
    if args.json {
        let props: serde_json::Map<String, serde_json::Value> = cfg
            .properties
            .iter()
            .map(|p| {
                (
                    p.name().to_owned(),
                    json!({ "holds": !r.violated.contains(p) }),
                )
            })
            .collect();
        let doc = json!({
            "replay": r.trace.path,
            "steps": r.trace.steps,
            "violated": names(&r.violated),
            "properties": props,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for s in &r.trace.steps {
            println!("{s}");
        }
        match r.violated.as_slice() {
            [] if cfg.properties.is_empty() => println!("replay: no property checked"),
            [] => println!(
                "replay: no checked property is violated on this path ({})",
                names(&cfg.properties).join(", ")
            ),
            v => println!("replay: VIOLATES {}", names(v).join(", ")),
        }
    }
    if let Some(path) = &args.trace_out {
        let bytes = serde_json::to_vec_pretty(&r.trace.itf)?;
        write_atomic(path, &bytes).with_context(|| format!("--trace-out {}", path.display()))?;
    }
    Ok(ExitCode::from(u8::from(!r.violated.is_empty())))
}

pub(crate) fn write_trace(report: &CheckReport, path: &std::path::Path) -> anyhow::Result<()> {
    let first = report
        .verdicts
        .iter()
        .find_map(|v| v.counterexample.as_ref());
    if let Some(cx) = first {
        let bytes = serde_json::to_vec_pretty(&cx.itf)?;
        write_atomic(path, &bytes).with_context(|| format!("--trace-out {}", path.display()))?;
    } else {
        eprintln!("no property violated: {} not written", path.display());
    }
    Ok(())
}

/// The `--json` object.
pub fn to_json(r: &CheckReport) -> serde_json::Value {
    let o = &r.outcome;
    let omitted = o.omission_estimate();
    let props: serde_json::Map<String, serde_json::Value> = r
        .verdicts
        .iter()
        .map(|v| {
            let body = match (&v.counterexample, &v.vacuous) {
                (None, Some(why)) => json!({
                    "verdict": "cannot_tell",
                    "reason": format!("vacuous: {why}"),
                    "states": o.distinct,
                }),
                (None, None) => json!({ "holds": true, "trace": [], "states": o.distinct }),
                (Some(cx), _) => json!({
                    "holds": false,
                    "trace": cx.steps,
                    "steps": cx.steps.len(),
                    "path": cx.path,
                }),
            };
            (v.property.name().to_owned(), body)
        })
        .collect();
    json!({
        "model": r.model,
        "distinct_states": o.distinct,
        "generated_states": o.generated,
        "depth": o.depth,
        "seconds": o.seconds,
        "complete": o.complete,
        "states_per_second": o.rate().round(),
        "fingerprint_collision": {
            "optimistic_omitted_states": omitted.0,
            "birthday_bound": omitted.1,
        },
        "seen_set_bytes": o.seen_bytes,
        "frontier_mem_peak_bytes": o.frontier_mem_peak,
        "spilled_bytes": o.spilled_bytes,
        "properties": props,
    })
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

pub(crate) fn text(r: &CheckReport, cfg: &CheckConfig, rep: Option<Replication>) -> String {
    let o = &r.outcome;
    let b = &cfg.bounds;
    let mut s = String::new();
    if let Some(rep) = rep {
        s += &format!(
            "replicas: {} secondaries, max lag {}, reads {}\n",
            rep.secondaries, rep.max_lag, rep.discipline
        );
    }
    s += &format!(
        "model {} runtime {}: agents {} cells {} values {} tools {} max-ops {} external {} \
         skew {} symmetry {}\n",
        r.model,
        cfg.runtime,
        b.agents,
        b.cells,
        b.values,
        b.tools,
        b.max_ops,
        b.external,
        b.skew.name(),
        cfg.symmetry
    );
    s += &format!("distinct states   {}\n", o.distinct);
    s += &format!("generated states  {}\n", o.generated);
    s += &format!("depth             {}\n", o.depth);
    s += &format!("seconds           {:.3}\n", o.seconds);
    s += &format!("distinct states/s {:.0}\n", o.rate());
    let (optimistic, birthday) = o.omission_estimate();
    s += &format!(
        "fingerprint collisions: expected omitted states {optimistic:.1e} (optimistic, as \
         TLC), {birthday:.1e} (birthday bound n^2/2^65)\n"
    );
    s += &format!(
        "memory: seen set {:.1} MiB, largest level in memory {:.1} MiB, spilled {:.1} MiB\n",
        mib(o.seen_bytes),
        mib(o.frontier_mem_peak),
        mib(o.spilled_bytes)
    );
    if o.all_violated {
        s += "stopped early: every checked property is violated (counts cover the levels \
              explored; use --property none for the whole space)\n";
    }
    for v in &r.verdicts {
        if let (None, Some(why)) = (&v.counterexample, &v.vacuous) {
            s += &format!("{}: cannot tell, vacuous: {why}\n", v.property.name());
            continue;
        }
        match &v.counterexample {
            None => {
                s += &format!(
                    "{}: holds (exhaustively, {} states)\n",
                    v.property.name(),
                    o.distinct
                )
            }
            Some(cx) => {
                s += &format!(
                    "{}: VIOLATED, shortest counterexample {} steps ({} states):\n",
                    v.property.name(),
                    cx.steps.len(),
                    cx.steps.len() + 1
                );
                for step in &cx.steps {
                    s += &format!("  {step}\n");
                }
                s += &format!("  replay: --replay {}\n", cx.path);
            }
        }
    }
    s
}
