//! `agentsim split-view SCENARIO.toml`: the A4 twin of issue 10 in seeded simulation.
//!
//! Each trial runs the replicated store of SPEC §6 ([`Replicated`]): for `rounds` rounds a
//! writer commits a fresh value of one cell at the primary, then each of `readers` readers asks
//! to read it from a replica drawn uniformly from the primary and the `secondaries`, while
//! lagging secondaries catch up one entry with probability `apply_probability` before each
//! read. The same trial (same seed, same draws, same requested replicas) runs under every read
//! discipline, so the rows are a paired twin: `any-replica` splits in k/N trials, `session` in
//! some, `primary-pinned` in 0/N. A trial "splits" when the A4 detector finds a witness in its
//! history; session-guarantee violations are counted beside it.
//!
//! Exit 0 when the run completes and `primary-pinned` never split; 1 if it did (the prevention
//! property is violated); 2 on bad input. `--trial T` prints trial T's history (JSON Lines, with
//! `read_replica`/`read_version`) under `--discipline`, to replay it or feed it to
//! `agentsim detect`. A pass says nothing about workloads other than this one.

use crate::sim::dist::{below, chance};
use crate::sim::stats::Proportion;
use agentsim_models::detect::a4;
use agentsim_models::jsonl::write_history;
use agentsim_models::replica::{session_violations, ReadDiscipline, Replicated, PRIMARY};
use agentsim_models::runtime::{BeginRequest, CommitRequest};
use agentsim_models::{Agent, Cell, History, Names, Replica, Value};
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run the split-view (A4) twin on a replicated-store scenario.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The scenario (see `scenarios/split-view.toml`).
    pub scenario: PathBuf,
    /// Override the scenario's number of trials.
    #[arg(long)]
    pub trials: Option<u64>,
    /// Override the scenario's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Print this trial's history as JSON Lines (under `--discipline`) instead of the twin.
    #[arg(long)]
    pub trial: Option<u64>,
    /// The discipline for `--trial`.
    #[arg(long, default_value = "any-replica", value_parser = ReadDiscipline::parse)]
    pub discipline: ReadDiscipline,
}

/// The scenario file, one to one.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    pub trials: u64,
    pub seed: u64,
    pub secondaries: u32,
    pub max_lag: u64,
    pub readers: u32,
    pub rounds: u32,
    pub apply_probability: f64,
}

/// Caps that keep a typo from running for hours; raise them here if a study needs more.
const TRIALS_MAX: u64 = 1_000_000;
const SIZE_MAX: u32 = 64;

impl Scenario {
    /// Reads and checks a scenario; errors name the file (and the line for TOML errors).
    pub fn load(path: &std::path::Path) -> anyhow::Result<Scenario> {
        let file = path.display();
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {file}"))?;
        let s: Scenario = toml::from_str(&text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            anyhow::anyhow!("{file}:{line}: {}", e.message().trim())
        })?;
        s.check().map_err(|m| anyhow::anyhow!("{file}: {m}"))?;
        Ok(s)
    }

    fn check(&self) -> Result<(), String> {
        let p = self.apply_probability;
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("apply_probability: {p} is not in [0, 1]"));
        }
        for (key, v) in [("secondaries", self.secondaries), ("readers", self.readers)] {
            if !(1..=SIZE_MAX).contains(&v) {
                return Err(format!("{key}: {v} is not in 1..={SIZE_MAX}"));
            }
        }
        if !(1..=SIZE_MAX).contains(&self.rounds) {
            return Err(format!("rounds: {} is not in 1..={SIZE_MAX}", self.rounds));
        }
        if !(1..=TRIALS_MAX).contains(&self.trials) {
            return Err(format!(
                "trials: {} is not in 1..={TRIALS_MAX}",
                self.trials
            ));
        }
        Ok(())
    }
}

const CELL: Cell = Cell(0);
const WRITER: Agent = Agent(0);

/// Runs trial `trial` of `s` under `d`. The draws do not depend on `d`, so the trial is the
/// same schedule under every discipline.
pub fn run_trial(s: &Scenario, d: ReadDiscipline, trial: u64) -> Replicated {
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    rng.set_stream(trial);
    let mut rt = Replicated::new(d, s.secondaries, s.max_lag);
    for round in 0..s.rounds {
        rt.begin(&BeginRequest::new(WRITER, vec![], None), PRIMARY);
        rt.commit(&CommitRequest::new(WRITER, &[(CELL, Value(round + 1))]));
        for reader in (1..=s.readers).map(Agent) {
            let pending = rt.replicas().pending();
            if chance(&mut rng, s.apply_probability) && !pending.is_empty() {
                let (r, c) = pending[below(&mut rng, pending.len())];
                rt.apply(r, c);
            }
            let asked = Replica(below(&mut rng, s.secondaries as usize + 1) as u32);
            rt.begin(&BeginRequest::new(reader, vec![CELL], None), asked);
            rt.commit(&CommitRequest::new(reader, &[]));
        }
    }
    rt
}

/// One row of the twin.
#[derive(Clone, Debug)]
pub struct Row {
    pub discipline: ReadDiscipline,
    pub split: Proportion,
    pub session: Proportion,
    /// The first trial that split, to replay with `--trial`.
    pub first_split: Option<u64>,
}

/// Runs every trial under every discipline.
pub fn twin(s: &Scenario) -> Vec<Row> {
    ReadDiscipline::ALL
        .into_iter()
        .map(|d| {
            let (mut split, mut session, mut first_split) = (0, 0, None);
            for t in 0..s.trials {
                let rt = run_trial(s, d, t);
                if !a4::fast(rt.log()).is_empty() {
                    split += 1;
                    first_split.get_or_insert(t);
                }
                let v = session_violations(rt.observations(), rt.replicas().primary());
                session += u64::from(!v.is_empty());
            }
            Row {
                discipline: d,
                split: Proportion::new(split, s.trials),
                session: Proportion::new(session, s.trials),
                first_split,
            }
        })
        .collect()
}

/// The history of one trial, with names a reader recognises.
pub fn history(s: &Scenario, rt: &Replicated) -> History {
    let mut names = Names::new();
    names.agent("writer");
    for r in 1..=s.readers {
        names.agent(&format!("reader{r}"));
    }
    names.cell("doc");
    for v in 1..=s.rounds {
        names.value(&format!("v{v}"));
    }
    names.replica("primary");
    for k in 1..=s.secondaries {
        names.replica(&format!("s{k}"));
    }
    History {
        records: rt.log().to_vec(),
        names,
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut s = Scenario::load(&args.scenario)?;
    s.trials = args.trials.unwrap_or(s.trials);
    s.seed = args.seed.unwrap_or(s.seed);
    s.check().map_err(|m| anyhow::anyhow!("{m}"))?;
    if let Some(t) = args.trial {
        if t >= s.trials {
            bail!("--trial {t}: the scenario has trials 0..{}", s.trials);
        }
        print!(
            "{}",
            write_history(&history(&s, &run_trial(&s, args.discipline, t)))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = twin(&s);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&s, &rows))?);
    } else {
        print!("{}", table(&s, &rows));
    }
    let pinned = rows
        .iter()
        .find(|r| r.discipline == ReadDiscipline::PrimaryPinned);
    Ok(match pinned {
        Some(r) if r.split.k > 0 => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

fn to_json(s: &Scenario, rows: &[Row]) -> serde_json::Value {
    let rows: Vec<_> = rows
        .iter()
        .map(|r| {
            json!({ "discipline": r.discipline.name(), "split": r.split,
                    "session_violations": r.session, "first_split": r.first_split })
        })
        .collect();
    json!({ "scenario": s.name, "seed": s.seed, "trials": s.trials,
            "secondaries": s.secondaries, "max_lag": s.max_lag, "rows": rows })
}

fn table(s: &Scenario, rows: &[Row]) -> String {
    let mut out = format!(
        "{}: seed {}, {} trials, {} secondaries, max_lag {}\n\
         | discipline | A4 split views | session violations | replay |\n|---|---|---|---|\n",
        s.name, s.seed, s.trials, s.secondaries, s.max_lag
    );
    for r in rows {
        let replay = r.first_split.map_or_else(String::new, |t| {
            format!("--trial {t} --discipline {}", r.discipline.name())
        });
        out.push_str(&format!(
            "| {} | {} | {} | {replay} |\n",
            r.discipline.name(),
            r.split.display(),
            r.session.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(max_lag: u64) -> Scenario {
        Scenario {
            name: "t".into(),
            description: None,
            trials: 200,
            seed: 7,
            secondaries: 2,
            max_lag,
            readers: 2,
            rounds: 2,
            apply_probability: 0.5,
        }
    }

    #[test]
    fn pinning_prevents_what_any_replica_admits() {
        let rows = twin(&scenario(1));
        assert!(rows[0].split.k > 0, "any-replica must split sometimes");
        // Readers never write, and the lag bound keeps each served version at or above the
        // previous round's head: this workload cannot break the session guarantees.
        assert_eq!(rows[0].session.k, 0);
        assert!(rows[1].split.k > 0, "session still splits across readers");
        assert_eq!(rows[1].session.k, 0);
        assert_eq!(rows[2].split.k, 0);
        assert_eq!(rows[2].session.k, 0);
    }

    #[test]
    fn synchronous_replication_never_splits() {
        assert!(twin(&scenario(0)).iter().all(|r| r.split.k == 0));
    }

    #[test]
    fn trials_are_deterministic() {
        let s = scenario(1);
        let a = run_trial(&s, ReadDiscipline::AnyReplica, 3);
        let b = run_trial(&s, ReadDiscipline::AnyReplica, 3);
        assert_eq!(a, b);
        assert_eq!(
            write_history(&history(&s, &a)),
            write_history(&history(&s, &b))
        );
    }
}
