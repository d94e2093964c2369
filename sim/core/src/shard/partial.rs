//! The partial-result format (`agentsim-partial`, version [`VERSION`], JSON) and the merge:
//! a partial names the command, its arguments, the scenario digest, the seed, the build, the
//! trial range and two kinds of per-trial rows, never a rounded figure: per engine run the
//! range's [`TrialMetrics`] (`runs`), and per run of a command's own trial loop its named
//! integer facts (`facts`, new in version 2: the split bit of a read discipline, the stale
//! actions of a guard arm). [`merge`] accepts partials that agree and whose ranges are
//! disjoint and cover every trial. It checks consistency, not honesty: a forged row with a
//! matching header merges.
//!
//! Version 1 (metrics rows only) is refused with its file and version named rather than read:
//! every version-1 partial was written by an older build, whose partials a merge refuses
//! anyway because the build differs, so reading it would only move the refusal later.

use super::{Shard, ShardError, TrialRange};
use crate::metrics::TrialMetrics;
use crate::runner::RunConfig;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The `format` field of every partial.
pub const FORMAT: &str = "agentsim-partial";
/// The partial format version this build writes and reads (2: `facts` rows beside `runs`).
pub const VERSION: u32 = 2;

/// The build a partial came from: partials of different builds do not merge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Build {
    /// The crate version.
    pub version: String,
    /// A digest of what else decides the output (target, profile, the executable's bytes).
    pub digest: String,
}

/// What identifies one run of a command: a partial's run k must be the merge's run k.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunKey {
    pub scenario: String,
    pub runtime: String,
    pub scheduler: String,
    pub on_missing: Option<String>,
    pub seed: u64,
    pub trials: u64,
}

impl RunKey {
    /// The key of a run configuration.
    pub fn of(cfg: &RunConfig<'_>) -> RunKey {
        RunKey {
            scenario: cfg.scenario.file.display().to_string(),
            runtime: cfg.runtime.name().to_string(),
            scheduler: cfg.scheduler.name(),
            on_missing: cfg.on_missing.map(|m| format!("{m:?}")),
            seed: cfg.seed,
            trials: cfg.trials,
        }
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} under {} ({}, seed {}, {} trials)",
            self.scenario, self.runtime, self.scheduler, self.seed, self.trials
        )
    }
}

/// One run's trials within a partial's range, in trial order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialRun {
    pub key: RunKey,
    /// Each trial as a positional row (see [`rows`]).
    #[serde(with = "rows")]
    pub trials: Vec<TrialMetrics>,
}

/// What identifies one run of a command's own trial loop, and names its facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactKey {
    /// The run within the command (`split-view any-replica`, `cpl-twin without`).
    pub name: String,
    /// The name of each fact of a trial, in row order.
    pub columns: Vec<String>,
    pub trials: u64,
}

impl fmt::Display for FactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} trials of [{}])",
            self.name,
            self.trials,
            self.columns.join(", ")
        )
    }
}

/// One fact run's trials within a partial's range, in trial order: row i is trial
/// `range.lo + i`, one integer per column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactRun {
    pub key: FactKey,
    pub rows: Vec<Vec<u64>>,
}

/// A trial's metrics as a positional JSON row, `[trial, anomalies, a3_residue, level,
/// [records, commits, aborts, drops, retries, retractions, retracted, compensations,
/// generations, tokens_total, tokens_wasted, makespan_ms, events], truncated, schedule]`:
/// a third of the bytes of keyed objects, which is what reading a thousand partials costs.
/// The destructuring below is exhaustive, so a new metric fails to compile here.
mod rows {
    use crate::engine::Counts;
    use crate::metrics::TrialMetrics;
    use agentsim_models::detect::Anomaly;
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serializer};

    type Row = (u64, Vec<Anomaly>, bool, u8, [u64; 13], bool, String);

    pub fn serialize<S: Serializer>(trials: &[TrialMetrics], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(trials.len()))?;
        for t in trials {
            let TrialMetrics {
                trial,
                anomalies,
                a3_residue,
                level,
                records,
                counts,
                schedule,
            } = t;
            let (mut copy, mut row_counts) = (*counts, [0; 13]);
            row_counts[0] = *records;
            for (to, from) in row_counts[1..].iter_mut().zip(slots(&mut copy)) {
                *to = *from;
            }
            let truncated = counts.truncated;
            let row = (
                trial, anomalies, a3_residue, level, row_counts, truncated, schedule,
            );
            seq.serialize_element(&row)?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TrialMetrics>, D::Error> {
        let rows: Vec<Row> = Vec::deserialize(d)?;
        Ok(rows
            .into_iter()
            .map(
                |(trial, anomalies, a3_residue, level, c, truncated, schedule)| {
                    let mut counts = Counts {
                        truncated,
                        ..Counts::default()
                    };
                    for (to, from) in slots(&mut counts).into_iter().zip(&c[1..]) {
                        *to = *from;
                    }
                    let records = c[0];
                    TrialMetrics {
                        trial,
                        anomalies,
                        a3_residue,
                        level,
                        records,
                        counts,
                        schedule,
                    }
                },
            )
            .collect())
    }

    /// The counters in the order a row holds them after `records` (`truncated` is a column
    /// of its own): the one list both directions use.
    fn slots(c: &mut Counts) -> [&mut u64; 12] {
        let Counts {
            commits,
            aborts,
            drops,
            retries,
            retractions,
            retracted,
            compensations,
            generations,
            tokens_total,
            tokens_wasted,
            makespan_ms,
            events,
            truncated: _,
        } = c;
        [
            commits,
            aborts,
            drops,
            retries,
            retractions,
            retracted,
            compensations,
            generations,
            tokens_total,
            tokens_wasted,
            makespan_ms,
            events,
        ]
    }
}

/// A partial result: one process's share of a seeded command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub format: String,
    pub version: u32,
    /// The command (`twins`, `sweep`, …) and the arguments that decide its output.
    pub command: String,
    pub args: serde_json::Value,
    /// FNV-1a 64 (hex) of the scenario text the command ran.
    pub scenario_digest: String,
    pub seed: u64,
    pub build: Build,
    /// Trials per run, and this partial's range of them.
    pub trials: u64,
    pub range: TrialRange,
    pub shard: Option<Shard>,
    pub runs: Vec<PartialRun>,
    /// The runs of the command's own trial loops, in the order it asked for them.
    pub facts: Vec<FactRun>,
}

/// What every partial of one sharded command shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub command: String,
    pub args: serde_json::Value,
    pub scenario_digest: String,
    pub seed: u64,
    pub build: Build,
}

#[derive(Deserialize)]
struct Head {
    format: Option<String>,
    version: Option<u32>,
}

impl Partial {
    /// The partial's JSON text (one line, keys in a fixed order, newline-terminated).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a partial serializes");
        s.push('\n');
        s
    }

    /// Parses and checks a partial's text; errors name `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Partial, ShardError> {
        let malformed = |e: serde_json::Error| ShardError::Malformed {
            file: file.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let head: Head = serde_json::from_str(text).map_err(malformed)?;
        if head.format.as_deref() != Some(FORMAT) {
            return Err(ShardError::NotPartial {
                file: file.to_owned(),
            });
        }
        if head.version != Some(VERSION) {
            return Err(ShardError::Version {
                file: file.to_owned(),
                found: head.version.map_or("none".into(), |v| v.to_string()),
            });
        }
        let p: Partial = serde_json::from_str(text).map_err(malformed)?;
        p.check().map_err(|why| ShardError::Inconsistent {
            file: file.to_owned(),
            why,
        })?;
        Ok(p)
    }

    /// The partial's own consistency: range within the trials, each run's trials exactly the
    /// range's, in order.
    fn check(&self) -> Result<(), String> {
        let r = self.range;
        if r.lo > r.hi || r.hi > self.trials {
            return Err(format!("range {r} is not within {} trials", self.trials));
        }
        if let Some(s) = self.shard {
            if s.index == 0 || s.index > s.count || s.range(self.trials) != r {
                return Err(format!(
                    "shard {s} of {} trials is not range {r}",
                    self.trials
                ));
            }
        }
        for (i, run) in self.runs.iter().enumerate() {
            if run.key.trials != self.trials {
                return Err(format!(
                    "run {i} has {} trials, not {}",
                    run.key.trials, self.trials
                ));
            }
            if run.trials.len() as u64 != r.len() {
                return Err(format!(
                    "run {i} holds {} trials, range {r} needs {}",
                    run.trials.len(),
                    r.len()
                ));
            }
            if let Some((k, t)) = (r.lo..).zip(&run.trials).find(|(k, t)| t.trial != *k) {
                return Err(format!(
                    "run {i}: trial {} where trial {k} belongs",
                    t.trial
                ));
            }
            if let Some(t) = run.trials.iter().find(|t| t.level > 4) {
                return Err(format!(
                    "run {i}: trial {} has level {} (0-4)",
                    t.trial, t.level
                ));
            }
        }
        self.facts
            .iter()
            .enumerate()
            .try_for_each(|(i, f)| f.check(i, r, self.trials))
    }

    fn header(&self) -> Header {
        Header {
            command: self.command.clone(),
            args: self.args.clone(),
            scenario_digest: self.scenario_digest.clone(),
            seed: self.seed,
            build: self.build.clone(),
        }
    }
}

impl FactRun {
    /// Run `i`'s consistency: its trials are the partial's, it holds the range's rows, and
    /// each row has one fact per column.
    fn check(&self, i: usize, r: TrialRange, trials: u64) -> Result<(), String> {
        if self.key.trials != trials {
            return Err(format!(
                "fact run {i} has {} trials, not {trials}",
                self.key.trials
            ));
        }
        if self.rows.len() as u64 != r.len() {
            return Err(format!(
                "fact run {i} holds {} trials, range {r} needs {}",
                self.rows.len(),
                r.len()
            ));
        }
        let width = self.key.columns.len();
        match (r.lo..).zip(&self.rows).find(|(_, row)| row.len() != width) {
            Some((k, row)) => Err(format!(
                "fact run {i}: trial {k} has {} facts, the columns name {width}",
                row.len()
            )),
            None => Ok(()),
        }
    }
}

/// Partials merged: every run's trials, all of them, in trial order.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    pub header: Header,
    pub trials: u64,
    pub runs: Vec<PartialRun>,
    pub facts: Vec<FactRun>,
}

/// Checks that `parts` belong together (same header, trials and run keys) and that their
/// ranges are disjoint and cover every trial, and concatenates their trials in trial order.
pub fn merge(parts: Vec<(PathBuf, Partial)>) -> Result<Merged, ShardError> {
    let Some((first_file, first)) = parts.first() else {
        return Err(ShardError::Empty);
    };
    for (file, p) in &parts[1..] {
        agree(first_file, first, file, p)?;
    }
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].1.range);
    let mut next = 0u64;
    let mut prev: Option<usize> = None;
    for &i in &order {
        let r = parts[i].1.range;
        if r.is_empty() {
            continue;
        }
        if r.lo < next {
            let j = prev.expect("a range ends at `next` only after a partial");
            return Err(ShardError::Overlap {
                a: parts[j].0.clone(),
                a_range: parts[j].1.range,
                b: parts[i].0.clone(),
                b_range: r,
            });
        }
        if r.lo > next {
            return Err(missing(&parts, next, r.lo));
        }
        next = r.hi;
        prev = Some(i);
    }
    let trials = first.trials;
    if next < trials {
        return Err(missing(&parts, next, trials));
    }
    let header = first.header();
    let mut slots: Vec<Option<Partial>> = parts.into_iter().map(|(_, p)| Some(p)).collect();
    let mut runs: Vec<PartialRun> = Vec::new();
    let mut facts: Vec<FactRun> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        let p = slots[i].take().expect("each partial is taken once");
        if k == 0 {
            (runs, facts) = (p.runs, p.facts);
            continue;
        }
        for (run, part) in runs.iter_mut().zip(p.runs) {
            run.trials.extend(part.trials);
        }
        for (run, part) in facts.iter_mut().zip(p.facts) {
            run.rows.extend(part.rows);
        }
    }
    for run in &runs {
        assert_eq!(
            run.trials.len() as u64,
            trials,
            "the ranges cover every trial once"
        );
    }
    for run in &facts {
        assert_eq!(
            run.rows.len() as u64,
            trials,
            "the ranges cover every trial once"
        );
    }
    Ok(Merged {
        header,
        trials,
        runs,
        facts,
    })
}

fn agree(af: &Path, a: &Partial, bf: &Path, b: &Partial) -> Result<(), ShardError> {
    let differ = |field: &'static str, x: String, y: String| ShardError::Mismatch {
        first: af.to_owned(),
        other: bf.to_owned(),
        field,
        first_value: x,
        other_value: y,
    };
    let fields: [(&'static str, String, String); 6] = [
        ("command", a.command.clone(), b.command.clone()),
        ("args", a.args.to_string(), b.args.to_string()),
        (
            "scenario_digest",
            a.scenario_digest.clone(),
            b.scenario_digest.clone(),
        ),
        ("seed", a.seed.to_string(), b.seed.to_string()),
        ("build", format!("{:?}", a.build), format!("{:?}", b.build)),
        ("trials", a.trials.to_string(), b.trials.to_string()),
    ];
    for (field, x, y) in fields {
        if x != y {
            return Err(differ(field, x, y));
        }
    }
    if a.runs.len() != b.runs.len() {
        return Err(differ(
            "runs",
            a.runs.len().to_string(),
            b.runs.len().to_string(),
        ));
    }
    for (x, y) in a.runs.iter().zip(&b.runs) {
        if x.key != y.key {
            return Err(differ("run", x.key.to_string(), y.key.to_string()));
        }
    }
    if a.facts.len() != b.facts.len() {
        return Err(differ(
            "facts",
            a.facts.len().to_string(),
            b.facts.len().to_string(),
        ));
    }
    for (x, y) in a.facts.iter().zip(&b.facts) {
        if x.key != y.key {
            return Err(differ("facts", x.key.to_string(), y.key.to_string()));
        }
    }
    Ok(())
}

fn missing(parts: &[(PathBuf, Partial)], lo: u64, hi: u64) -> ShardError {
    let mut have: Vec<(TrialRange, String)> = parts
        .iter()
        .map(|(f, p)| (p.range, f.display().to_string()))
        .collect();
    have.sort();
    let have: Vec<String> = have.iter().map(|(r, f)| format!("{f} {r}")).collect();
    ShardError::Missing {
        range: TrialRange { lo, hi },
        trials: parts[0].1.trials,
        have: have.join(", "),
    }
}
