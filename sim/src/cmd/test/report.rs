//! A suite's result as data ([`Report`]), its text form and its JSON form, and the merge of
//! sharded partials: a partial is the report of a shard's cases plus what the shard ran
//! ([`ShardInfo`]); the merged report is the unsharded one, so its text, JSON and JUnit are
//! the same bytes.
//!
//! A merge trusts the partials' verdicts (it runs nothing); it checks that they are one suite
//! (same files and contents, same filter, same shard count) and that they cover every case
//! exactly once.

use super::case::{CaseResult, Outcome};
use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::process::ExitCode;

/// The command name a report carries (and `agentsim merge` recognises).
pub const COMMAND: &str = "test";

/// A suite's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub command: String,
    pub files: Vec<FileReport>,
    pub passed: u64,
    pub failed: u64,
    pub cannot_tell: u64,
    pub skipped: u64,
    /// Present in a shard's partial only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
}

/// One file of the suite: its cases, or why it was skipped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileReport {
    pub file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub cases: Vec<CaseResult>,
}

/// What a shard ran, for the merge's checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardInfo {
    pub index: u64,
    pub count: u64,
    /// Cases of the whole suite (every shard's together).
    pub cases_total: u64,
    pub filter: Option<String>,
    /// FNV-1a 64 over every file's name and bytes, in suite order.
    pub digest: String,
}

impl Report {
    /// A report over `files`, its counts computed.
    pub fn new(files: Vec<FileReport>, shard: Option<ShardInfo>) -> Report {
        let cases = || files.iter().flat_map(|f| &f.cases);
        let count = |o: Outcome| cases().filter(|c| c.outcome == o).count() as u64;
        Report {
            command: COMMAND.to_owned(),
            passed: count(Outcome::Pass),
            failed: count(Outcome::Fail),
            cannot_tell: count(Outcome::CannotTell),
            skipped: files.iter().filter(|f| f.skipped.is_some()).count() as u64,
            files,
            shard,
        }
    }

    /// Cases decided.
    pub fn cases(&self) -> u64 {
        self.passed + self.failed + self.cannot_tell
    }

    /// 2 when a case cannot be told (or nothing was tested), 1 when one failed, else 0.
    pub fn exit_code(&self) -> ExitCode {
        let shard_share = self.shard.is_some();
        if self.cannot_tell > 0 || (self.cases() == 0 && !shard_share) {
            ExitCode::from(2)
        } else if self.failed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }

    /// The closing line: `N passed, M failed` then the skipped and undecided counts if any.
    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed, self.failed);
        if self.skipped > 0 {
            let _ = write!(s, ", {} skipped", self.skipped);
        }
        if self.cannot_tell > 0 {
            let _ = write!(s, ", {} cannot tell", self.cannot_tell);
        }
        s
    }

    /// The text output: one line per case (and a replay line under a witnessed failure),
    /// one per skipped file, in file order, then the closing line.
    pub fn text(&self) -> String {
        use agentsim_models::escape_text;
        let mut s = String::new();
        for f in &self.files {
            if let Some(why) = &f.skipped {
                let _ = writeln!(s, "SKIP  {}: {why}", escape_text(&f.file));
            }
            for c in &f.cases {
                // An exploration has no seed or trials: every interleaving is run once.
                let how = if c.by == "explore" {
                    c.by.clone()
                } else {
                    format!("{}, seed {}, {} trials", c.by, c.seed, c.trials)
                };
                let _ = writeln!(
                    s,
                    "{:<5} {}:{}  {} [{how}]: {}",
                    c.outcome.word(),
                    escape_text(&f.file),
                    c.line,
                    escape_text(&c.name),
                    c.evidence
                );
                if let Some(r) = &c.replay {
                    let _ = writeln!(s, "      replay: {r}");
                }
            }
        }
        if self.cases() == 0 && self.shard.is_none() {
            let _ = writeln!(s, "nothing to test: no [[expect]] matched");
        }
        let _ = writeln!(s, "{}", self.summary());
        s
    }

    /// The JSON output (pretty, one object, a newline at the end).
    pub fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }
}

/// Merges shard partials (as read, with their file names for messages) into the unsharded
/// report.
pub fn merge(parts: Vec<(String, Report)>) -> Result<Report> {
    let Some((first_name, first)) = parts.first() else {
        bail!("no partials to merge");
    };
    let Some(info) = first.shard.clone() else {
        bail!("{first_name}: not a partial (no `shard`): it is already a whole suite's report");
    };
    let mut seen = vec![false; usize::try_from(info.count).unwrap_or(0)];
    let mut files: Vec<FileReport> = first
        .files
        .iter()
        .map(|f| FileReport {
            cases: Vec::new(),
            ..f.clone()
        })
        .collect();
    for (name, p) in &parts {
        let Some(s) = &p.shard else {
            bail!("{name}: not a partial (no `shard`)");
        };
        if (s.count, s.cases_total, &s.filter, &s.digest)
            != (info.count, info.cases_total, &info.filter, &info.digest)
        {
            bail!(
                "{name}: a shard of another suite run than {first_name} (shard count, cases, \
                 --filter or file contents differ)"
            );
        }
        let slot = seen.get_mut(
            usize::try_from(s.index)
                .unwrap_or(usize::MAX)
                .wrapping_sub(1),
        );
        match slot {
            Some(done) if !*done => *done = true,
            _ => bail!(
                "{name}: shard {}/{} is given twice or out of range",
                s.index,
                s.count
            ),
        }
        let same_files = p.files.len() == files.len()
            && p.files
                .iter()
                .zip(&files)
                .all(|(a, b)| (&a.file, &a.skipped) == (&b.file, &b.skipped));
        if !same_files {
            bail!("{name}: its files differ from {first_name}'s");
        }
        for (into, from) in files.iter_mut().zip(&p.files) {
            into.cases.extend(from.cases.iter().cloned());
        }
    }
    if let Some(missing) = seen.iter().position(|d| !d) {
        bail!("shard {}/{} is missing", missing + 1, info.count);
    }
    let mut next = 0;
    for f in &mut files {
        f.cases.sort_by_key(|c| c.index);
        for c in &f.cases {
            if c.index != next {
                bail!("case {next} is missing or given twice across the partials");
            }
            next += 1;
        }
    }
    if next != info.cases_total {
        bail!("the partials hold {next} cases of {}", info.cases_total);
    }
    Ok(Report::new(files, None))
}
