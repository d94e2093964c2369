//! The guard twin: a scenario with `[cpl]` run with its guards as written and
//! with every `act` guarded by the section's `unguarded` guard instead, on the same trial
//! seeds; per arm, trials with a stale action (the scenario's `stale` formula, decided by the
//! reference evaluator) as k/N with a Wilson 95 % interval, plus actions done and refused,
//! waits, blocked trials and message sizes.
//!
//! Trial k of both arms has the same seed, so the draws agree until a guard decides otherwise;
//! the two scenarios differ in the guard only ([`Scenario::with_guard`]). Trials run on any
//! number of threads and are collected in trial order, so the result is byte-identical
//! whatever the thread count. A 0/N with the guard says no sampled interleaving produced a
//! stale action; the bounded proof that the monitor decides the guard exactly is
//! `models/tests/cpl_exhaustive.rs`, and every decision here is checked against the reference.
//!
//! Each arm is a fact run of the trials' [`CplTrial`] counters ([`run_from`]), so a sharded
//! twin keeps them per trial and a merge sums the same rows in the same order.

use super::run::{default_threads, proportion_cells};
use crate::artifacts::tables::{Cell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_sim::engine::{run_trial, CplTrial, TrialSetup};
use agentsim_sim::runner::{generator, trial_seed};
use agentsim_sim::scenario::Scenario;
use agentsim_sim::scheduler::SchedulerSpec;
use agentsim_sim::shard::{FactKey, Local, ShardError, TrialRange, TrialSource};
use agentsim_sim::stats::Proportion;
use serde::Serialize;

/// The `cpl-guards` step.
pub const STEP: Step = Step {
    name: "cpl-guards",
    about: "guarded agents: k/N stale merges without and with the CPL guard",
    run: step_files,
};

/// The twin's scenario and its guard file, compiled in so that an installed binary
/// reproduces without the source tree.
const SCENARIO: &str = include_str!("../../../scenarios/cpl/stale-evidence.toml");
const GUARDS: &str = include_str!("../../../scenarios/cpl/code_review.cpl");

/// The twin's scenario, as `reproduce` runs it.
pub fn scenario() -> anyhow::Result<Scenario> {
    Scenario::parse_embedded(
        std::path::Path::new("scenarios/cpl/stale-evidence.toml"),
        SCENARIO,
        &[("code_review.cpl", GUARDS)],
    )
    .map_err(|e| anyhow::anyhow!("{e}"))
}

/// One arm of the twin: which guard, and what its trials did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Arm {
    /// The guard every `act` step used.
    pub guard: String,
    /// Trials with at least one stale action.
    pub stale: Proportion,
    /// Trials in which some agent was still waiting at a `recv` at the end.
    pub blocked: Proportion,
    /// Actions done, refused, stale, over all trials.
    pub done: u64,
    pub refusals: u64,
    pub stale_actions: u64,
    /// `recv` steps that had to wait, over all trials.
    pub waits: u64,
    pub messages: u64,
    /// Mean wire size of a message (binary encoding), bytes.
    pub bytes_per_message: f64,
}

/// The twin: without the mechanism (the `unguarded` guard) and with it (the guards as written).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Twin {
    pub scenario: String,
    pub trials: u64,
    pub seed: u64,
    pub without: Arm,
    pub with: Arm,
}

impl Twin {
    /// Human-readable lines.
    pub fn display(&self) -> String {
        let arm = |side: &str, a: &Arm| {
            format!(
                "{side:<7} {:<12} stale {:<30} done {} refused {} waits {} blocked {}/{} \
                 messages {} ({:.1} B each)\n",
                a.guard,
                a.stale.display(),
                a.done,
                a.refusals,
                a.waits,
                a.blocked.k,
                a.blocked.n,
                a.messages,
                a.bytes_per_message
            )
        };
        format!(
            "{}: {} trials, seed {}\n{}{}",
            self.scenario,
            self.trials,
            self.seed,
            arm("without", &self.without),
            arm("with", &self.with)
        )
    }
}

/// Runs both arms of `sc`'s guard twin.
pub fn run(sc: &Scenario, trials: u64, seed: u64, threads: usize) -> anyhow::Result<Twin> {
    run_from(&mut Local, sc, trials, seed, threads)
}

/// [`run`] with each arm's trials taken from `src` (all, a shard's, or merged).
pub fn run_from(
    src: &mut dyn TrialSource,
    sc: &Scenario,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Twin> {
    let spec = sc
        .cpl
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("{}: no [cpl] section", sc.file.display()))?;
    let unguarded = spec.unguarded.ok_or_else(|| {
        anyhow::anyhow!("{}: [cpl] names no `unguarded` guard", sc.file.display())
    })?;
    anyhow::ensure!(
        spec.stale.is_some(),
        "{}: [cpl] has no `stale` formula",
        sc.file.display()
    );
    let guarded = guard_of(sc)?;
    let weak = sc.with_guard(unguarded);
    let name = |g: usize| spec.guard_name(g).to_owned();
    let run = Trials {
        trials,
        seed,
        threads,
    };
    Ok(Twin {
        scenario: sc.name.clone(),
        trials,
        seed,
        without: arm(src, "without", &weak, name(unguarded), run)?,
        with: arm(src, "with", sc, name(guarded), run)?,
    })
}

/// The guard of the scenario's `act` steps (they must all use one).
fn guard_of(sc: &Scenario) -> anyhow::Result<usize> {
    let mut guards: Vec<usize> = sc
        .agents
        .iter()
        .flat_map(|a| a.script.steps.iter())
        .filter_map(|s| match s {
            agentsim_sim::scenario::Step::Act { guard, .. } => Some(*guard),
            _ => None,
        })
        .collect();
    guards.sort_unstable();
    guards.dedup();
    match guards[..] {
        [g] => Ok(g),
        _ => anyhow::bail!(
            "{}: the twin needs every `act` step to use one guard (found {})",
            sc.file.display(),
            guards.len()
        ),
    }
}

/// The trials of an arm: how many, from which seed, on how many threads.
#[derive(Clone, Copy)]
struct Trials {
    trials: u64,
    seed: u64,
    threads: usize,
}

/// A trial's [`CplTrial`] as a fact row, in this column order.
const FACTS: [&str; 9] = [
    "messages", "received", "bytes", "waits", "done", "refusals", "stale", "blocked", "events",
];

fn to_row(t: &CplTrial) -> Vec<u64> {
    let CplTrial {
        messages,
        received,
        bytes,
        waits,
        done,
        refusals,
        stale,
        blocked,
        events,
    } = *t;
    vec![
        messages, received, bytes, waits, done, refusals, stale, blocked, events,
    ]
}

fn from_row(row: &[u64]) -> CplTrial {
    let [messages, received, bytes, waits, done, refusals, stale, blocked, events] =
        <[u64; 9]>::try_from(row).expect("the source checks a row's width");
    CplTrial {
        messages,
        received,
        bytes,
        waits,
        done,
        refusals,
        stale,
        blocked,
        events,
    }
}

fn arm(
    src: &mut dyn TrialSource,
    side: &str,
    sc: &Scenario,
    guard: String,
    t: Trials,
) -> anyhow::Result<Arm> {
    let key = FactKey {
        name: format!("cpl-twin {side} ({guard})"),
        columns: FACTS.map(String::from).to_vec(),
        trials: t.trials,
    };
    let compute = |r: TrialRange| {
        let runs = run_range(sc, r, t.seed, t.threads).map_err(|e| ShardError::Trial {
            key: key.name.clone(),
            message: format!("{e:#}"),
        })?;
        Ok(runs.iter().map(to_row).collect())
    };
    let facts = src.facts(&key, &compute)?;
    let runs: Vec<CplTrial> = facts.rows.iter().map(|r| from_row(r)).collect();
    // Merged rows are trusted, not re-run: saturate so a forged count cannot wrap.
    let sum = |f: fn(&CplTrial) -> u64| runs.iter().map(f).fold(0u64, u64::saturating_add);
    let count = |f: fn(&CplTrial) -> bool| runs.iter().filter(|t| f(t)).count() as u64;
    let messages = sum(|t| t.messages);
    Ok(Arm {
        guard,
        stale: Proportion::new(count(|t| t.stale > 0), t.trials),
        blocked: Proportion::new(count(|t| t.blocked > 0), t.trials),
        done: sum(|t| t.done),
        refusals: sum(|t| t.refusals),
        stale_actions: sum(|t| t.stale),
        waits: sum(|t| t.waits),
        messages,
        bytes_per_message: sum(|t| t.bytes) as f64 / messages.max(1) as f64,
    })
}

/// Every trial's [`CplTrial`], in trial order, on `threads` threads.
pub fn run_trials(
    sc: &Scenario,
    trials: u64,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<CplTrial>> {
    run_range(sc, TrialRange::all(trials), seed, threads)
}

/// The [`CplTrial`] of every trial in `r`, in trial order, on `threads` threads.
fn run_range(
    sc: &Scenario,
    r: TrialRange,
    seed: u64,
    threads: usize,
) -> anyhow::Result<Vec<CplTrial>> {
    let trials = r.len();
    let threads = threads.clamp(1, trials.max(1) as usize) as u64;
    let chunk = trials.div_ceil(threads).max(1);
    let parts: Vec<anyhow::Result<Vec<CplTrial>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (lo, hi) = ((t * chunk).min(trials), ((t + 1) * chunk).min(trials));
                s.spawn(move || range(sc, seed, r.lo + lo, r.lo + hi))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation thread panicked"))
            .collect()
    });
    let mut out = Vec::with_capacity(parts.iter().map(|p| p.as_ref().map_or(0, Vec::len)).sum());
    for p in parts {
        out.extend(p?);
    }
    assert_eq!(out.len() as u64, trials, "every trial ran once");
    Ok(out)
}

fn range(sc: &Scenario, seed: u64, lo: u64, hi: u64) -> anyhow::Result<Vec<CplTrial>> {
    let generator = generator(sc, None);
    let mut sched = SchedulerSpec::Random.build();
    let mut out = Vec::new();
    for k in lo..hi {
        let setup = TrialSetup {
            scenario: sc,
            trial_seed: trial_seed(seed, k),
            generator: generator.as_ref(),
            scheduler: sched.as_mut(),
            stop: None,
            trace: false,
            record: false,
        };
        let rt = sc.runtime.build(sc.registry(), sc.provenance);
        let run =
            run_trial(rt, setup).map_err(|e| anyhow::anyhow!("{}: {e}", sc.file.display()))?;
        anyhow::ensure!(
            !run.counters.truncated,
            "{}: trial {k} hit events_max; raise [schedule] events_max",
            sc.file.display()
        );
        out.push(run.cpl.expect("a scenario with [cpl] reports its messages"));
    }
    Ok(out)
}

/// The guard twin of `scenarios/cpl/stale-evidence.toml` (100 trials with `--quick`).
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let sc = scenario()?;
    let trials = if ctx.quick {
        sc.trials.min(100)
    } else {
        sc.trials
    };
    let threads = default_threads();
    let twin = ctx.trials(|src| run_from(src, &sc, trials, sc.seed, threads))?;
    let mut t = Table::new(
        format!(
            "guarded agents (CPL): {}, {} trials per arm, seed {}",
            twin.scenario, twin.trials, twin.seed
        ),
        &[
            "arm",
            "guard",
            "stale_k",
            "n",
            "stale_rate",
            "stale_lo",
            "stale_hi",
            "merges",
            "refusals",
            "waits",
            "blocked_k",
            "messages",
            "bytes_per_message",
        ],
    );
    for (side, arm) in [("without", &twin.without), ("with", &twin.with)] {
        let mut row = vec![Cell::text(side), Cell::text(arm.guard.as_str())];
        row.extend(proportion_cells(&arm.stale));
        row.extend([
            Cell::Int(arm.done as i64),
            Cell::Int(arm.refusals as i64),
            Cell::Int(arm.waits as i64),
            Cell::Int(arm.blocked.k as i64),
            Cell::Int(arm.messages as i64),
            Cell::float(arm.bytes_per_message, 1),
        ]);
        t.push(row);
    }
    Ok(table_files("cpl_stale_evidence", &t))
}
