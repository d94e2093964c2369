//! The flags of `agentsim check` and what they resolve to directly (the property list, the
//! frontier's storage), below both the concrete and the abstract check.

use agentsim_checker::engine::control::{self, Limits};
use agentsim_checker::engine::fair::{Fairness, LiveProperty};
use agentsim_checker::engine::frontier::Storage;
use agentsim_checker::Property;
use agentsim_models::replica::ReadDiscipline;
use agentsim_models::runtime::Stack;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use std::path::PathBuf;

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
    /// --replicas), all, none; or the liveness properties starvation,livelock (checked
    /// on their own, best with --abstract and no --max-ops: see --fairness).
    #[arg(long, default_value = "all", value_parser = properties)]
    pub property: Properties,
    /// With starvation or livelock: the agents' fairness, wf (weak, default), sf (strong) or
    /// none.
    #[arg(long, value_parser = fairness)]
    pub fairness: Option<Fairness>,
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
    #[arg(long, value_parser = crate::limits::threads)]
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
    /// Replay an action-index path (`0/4/17`), or an ITF file written by --trace-out, instead
    /// of exploring, and print its steps.
    #[arg(long, value_name = "PATH|FILE.itf.json")]
    pub replay: Option<String>,
    /// Check the history-free abstract model (SPEC §5.2); see `check_abstract`.
    #[arg(long = "abstract")]
    pub abstract_model: bool,
    /// `--allow-cannot-tell`: exit 0 rather than 2 when a property's verdict is "cannot
    /// tell" (vacuous: no history at these bounds and extensions can violate it); the report
    /// still says so.
    #[command(flatten)]
    pub gate: crate::cmd::gate::GateArgs,
    /// With --abstract: write the first violated property's concretized history (JSON Lines).
    #[arg(long, value_name = "FILE.jsonl", requires = "abstract_model")]
    pub history_out: Option<PathBuf>,
}

/// The parsed `--property` list: the safety properties (sorted, unique), or the liveness
/// ones (starvation, livelock), never both.
#[derive(Clone, Debug)]
pub struct Properties(pub Vec<Property>, pub Vec<LiveProperty>);

pub(super) fn properties(s: &str) -> Result<Properties, String> {
    let (live, safety): (Vec<&str>, Vec<&str>) = s
        .split(',')
        .map(str::trim)
        .partition(|n| LiveProperty::parse(n).is_some());
    if live.is_empty() {
        return Property::parse_list(s)
            .map(|p| Properties(p, Vec::new()))
            .map_err(|e| format!("{e}, starvation, livelock"));
    }
    if !safety.is_empty() {
        return Err(format!(
            "{} with {}: liveness and safety properties are checked in separate runs",
            live.join(","),
            safety.join(",")
        ));
    }
    let mut live: Vec<LiveProperty> = live.iter().filter_map(|n| LiveProperty::parse(n)).collect();
    live.sort();
    live.dedup();
    Ok(Properties(Vec::new(), live))
}

fn fairness(s: &str) -> Result<Fairness, String> {
    Fairness::parse(s).ok_or_else(|| format!("unknown fairness `{s}`; expected wf, sf or none"))
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
    let cancel =
        crate::cmd::check_watch::cancel_on_signals().context("installing the SIGINT handler")?;
    Ok(Storage {
        expect_states: a.expect_states,
        frontier_mem_bytes: a.frontier_mem_mb.saturating_mul(1 << 20),
        spill_dir,
        limits: Limits {
            cancel: Some(cancel),
            max_memory_bytes,
        },
        progress: crate::cmd::check_watch::reporter(a.quiet, a.progress),
    })
}
