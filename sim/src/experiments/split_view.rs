//! The A4 split-view twin in seeded simulation (SPEC §6): a replicated-store
//! scenario, its trials under each read discipline, and its table.
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
//! Each trial's facts (did it split, did it break a session guarantee) are a fact run per
//! discipline ([`twin_from`]), so a sharded run keeps them and a merge folds the same rows.
//!
//! The replicated store is driven by this fixed script rather than by the engine's scheduled
//! agents (the engine's single store has no replicas); the file is read by the simulator's one
//! scenario loader (`agentsim_sim::source`), so its errors read like every scenario's.
//! A pass says nothing about workloads other than this one.

use super::run::proportion_cells;
use crate::artifacts::tables::{Cell as TableCell, Table};
use crate::artifacts::{table_files, Artifact, Ctx, Step};
use agentsim_models::detect::a4;
use agentsim_models::replica::{session_violations, ReadDiscipline, Replicated, PRIMARY};
use agentsim_models::runtime::{BeginRequest, CommitRequest};
use agentsim_models::{Agent, Cell, History, Names, Replica, Value};
use agentsim_sim::dist::{below, chance};
use agentsim_sim::rng::{stream, trial_rng};
use agentsim_sim::shard::{FactKey, Local, ShardError, TrialRange, TrialSource};
use agentsim_sim::source::{parse_toml, read_source, ScenarioError, Source};
use agentsim_sim::stats::Proportion;
use serde::Deserialize;
use serde_json::json;
use std::path::Path;
use toml::Spanned;

/// The `split-view` step.
pub const STEP: Step = Step {
    name: "split-view",
    about: "the A4 split-view twin: k/N split views per read discipline (SPEC §6)",
    run: step_files,
};

/// The committed scenario, compiled in.
const FILE: &str = "scenarios/split-view.toml";
const TEXT: &str = include_str!("../../../scenarios/split-view.toml");

/// A validated split-view scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub trials: u64,
    pub seed: u64,
    pub secondaries: u32,
    pub max_lag: u64,
    pub readers: u32,
    pub rounds: u32,
    pub apply_probability: f64,
}

/// The file as written, with the positions of the values that are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    #[serde(default)]
    description: Option<String>,
    trials: Spanned<u64>,
    seed: u64,
    secondaries: Spanned<u32>,
    max_lag: u64,
    readers: Spanned<u32>,
    rounds: Spanned<u32>,
    apply_probability: Spanned<f64>,
    /// `[[expect]]`: claims `agentsim test` checks (`agentsim_sim::scenario::expect`).
    #[serde(default)]
    #[serde(rename = "expect")]
    _expect: Option<toml::Value>,
}

/// Caps that keep a typo from running for hours; raise them here if a study needs more.
pub const TRIALS_MAX: u64 = agentsim_sim::scenario::TRIALS_MAX;
const SIZE_MAX: u32 = 64;

/// A number outside its documented range (a command-line override).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {value} is not in 1..={max}")]
pub struct OutOfRange {
    pub key: &'static str,
    pub value: u64,
    pub max: u64,
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::parse(path, &read_source(path)?)
    }

    /// Parses and checks scenario text; `file` names it in errors.
    pub fn parse(file: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let src = Source { file, text };
        let raw: Raw = parse_toml(src)?;
        let p = &raw.apply_probability;
        if !(0.0..=1.0).contains(p.get_ref()) {
            let msg = format!("{} is not in [0, 1]", p.get_ref());
            return Err(src.error(p.span(), "apply_probability", msg));
        }
        let sizes = [
            ("secondaries", &raw.secondaries),
            ("readers", &raw.readers),
            ("rounds", &raw.rounds),
        ];
        for (key, v) in sizes {
            if !(1..=SIZE_MAX).contains(v.get_ref()) {
                let msg = format!("{} is not in 1..={SIZE_MAX}", v.get_ref());
                return Err(src.error(v.span(), key, msg));
            }
        }
        check_trials(*raw.trials.get_ref())
            .map_err(|e| src.error(raw.trials.span(), "trials", e.to_string()))?;
        Ok(Scenario {
            name: raw.name,
            description: raw.description,
            trials: *raw.trials.get_ref(),
            seed: raw.seed,
            secondaries: *raw.secondaries.get_ref(),
            max_lag: raw.max_lag,
            readers: *raw.readers.get_ref(),
            rounds: *raw.rounds.get_ref(),
            apply_probability: *raw.apply_probability.get_ref(),
        })
    }

    /// The scenario with its trial count and seed overridden (from the command line).
    pub fn with(mut self, trials: Option<u64>, seed: Option<u64>) -> Result<Self, OutOfRange> {
        if let Some(t) = trials {
            check_trials(t)?;
            self.trials = t;
        }
        self.seed = seed.unwrap_or(self.seed);
        Ok(self)
    }
}

fn check_trials(trials: u64) -> Result<(), OutOfRange> {
    if (1..=TRIALS_MAX).contains(&trials) {
        return Ok(());
    }
    Err(OutOfRange {
        key: "trials",
        value: trials,
        max: TRIALS_MAX,
    })
}

const CELL: Cell = Cell(0);
const WRITER: Agent = Agent(0);

/// Runs trial `trial` of `s` under `d`. The draws do not depend on `d`, so the trial is the
/// same schedule under every discipline.
pub fn run_trial(s: &Scenario, d: ReadDiscipline, trial: u64) -> Replicated {
    let mut rng = trial_rng(s.seed, trial, stream::SPLIT_VIEW);
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
    twin_from(&mut Local, s).expect("a local split-view trial cannot fail")
}

/// The facts of a trial, in row order: it split (A4 found a witness), it broke a session
/// guarantee; 1 or 0 each.
pub const FACTS: [&str; 2] = ["split", "session_violation"];

/// Trial `t`'s facts under `d` (see [`FACTS`]).
fn trial_facts(s: &Scenario, d: ReadDiscipline, t: u64) -> Vec<u64> {
    let rt = run_trial(s, d, t);
    let split = !a4::fast(rt.log()).is_empty();
    let v = session_violations(rt.observations(), rt.replicas().primary());
    vec![u64::from(split), u64::from(!v.is_empty())]
}

/// [`twin`] with each discipline's trials taken from `src` (all, a shard's, or merged).
pub fn twin_from(src: &mut dyn TrialSource, s: &Scenario) -> Result<Vec<Row>, ShardError> {
    ReadDiscipline::ALL
        .into_iter()
        .map(|d| {
            let key = FactKey {
                name: format!("split-view {}", d.name()),
                columns: FACTS.map(String::from).to_vec(),
                trials: s.trials,
            };
            let compute = |r: TrialRange| Ok((r.lo..r.hi).map(|t| trial_facts(s, d, t)).collect());
            let facts = src.facts(&key, &compute)?;
            let (mut split, mut session, mut first_split) = (0, 0, None);
            // A fact is read as a bit (non-zero), so a merged row cannot count past N.
            for (t, row) in (facts.lo..).zip(&facts.rows) {
                if row[0] != 0 {
                    split += 1;
                    first_split.get_or_insert(t);
                }
                session += u64::from(row[1] != 0);
            }
            Ok(Row {
                discipline: d,
                split: Proportion::new(split, s.trials),
                session: Proportion::new(session, s.trials),
                first_split,
            })
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

/// The `--json` object of the twin.
pub fn to_json(s: &Scenario, rows: &[Row]) -> serde_json::Value {
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

/// The text table of the twin.
pub fn table(s: &Scenario, rows: &[Row]) -> String {
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

/// The split-view twin of `scenarios/split-view.toml` (100 trials with `--quick`).
fn step_files(ctx: &Ctx) -> anyhow::Result<Vec<Artifact>> {
    let mut s = Scenario::parse(Path::new(FILE), TEXT)?;
    if ctx.quick {
        s.trials = s.trials.min(100);
    }
    let rows = ctx.trials(|src| twin_from(src, &s))?;
    let mut t = Table::new(
        format!(
            "split view (A4): {} trials, seed {}, {} secondaries, max lag {}",
            s.trials, s.seed, s.secondaries, s.max_lag
        ),
        &[
            "discipline",
            "split_k",
            "n",
            "split_rate",
            "split_lo",
            "split_hi",
            "session_violations_k",
            "first_split_trial",
        ],
    );
    for r in &rows {
        let mut row = vec![TableCell::text(r.discipline.name())];
        row.extend(proportion_cells(&r.split));
        row.push(TableCell::Int(r.session.k as i64));
        row.push(
            r.first_split
                .map_or(TableCell::Empty, |t| TableCell::Int(t as i64)),
        );
        t.push(row);
    }
    Ok(table_files("split_view", &t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_jsonl::write_history;

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
