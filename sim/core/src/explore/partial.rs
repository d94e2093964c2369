//! A share of an exploration as data, and the join of the shares into the exploration one
//! process computes. The tree is split by prefix into a fixed list of tasks ([`SHARD_TASKS`]
//! wanted, the same list whatever the shard count or the threads, and the same as an unsharded
//! run's: with reduction the split decides which paths run); shard `I` of `N` runs the
//! tasks `owners` deals it (the live tasks round in tree order, the blocked ones from the
//! other end), so the shards get similar work, not just similar task counts. A share ([`ShardRun`]) carries what the join
//! needs: the tasks it ran, the paths and the budget counters, what stopped it, every class
//! key it saw (classes are a set: two shards can meet the same class, so the join counts the
//! union, not the sum) and the shortest witness of each anomaly set with its replay line.
//!
//! The join of shares that cover every task once is the unsharded exploration for a complete
//! search, field for field, because the tasks partition the paths one process runs (the same
//! property that makes the result independent of the thread count). What it does not give:
//! the counts of a search a budget stopped — each shard spends its own `max_schedules` and
//! `max_memory_mb`, so a stopped join is *cannot tell* like a stopped run, with other counts.
//!
//! A stateful search ([`super::Stateful`]) is sharded the same way, each shard with its own
//! set of states: a state two shards meet is expanded in both (re-expanded, never missed),
//! so the join has the anomaly sets and verdicts of one process, and its counts (states,
//! paths, merged paths) and witnesses are the shards' (added, and the shortest of theirs).

use super::{conclude, run_tasks, Exploration, ExploreConfig, ExploreError, Found, Stopped};
use super::{parking, Ran, Stateful, Witness};
use crate::replay_line::ReplayLine;
use crate::scenario::Scenario;
use agentsim_models::Anomaly;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The live tasks wanted from the split: the most shards that get work each.
pub const SHARD_TASKS: usize = super::SPLIT_TASKS;

/// One shard's share of one runtime's exploration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRun {
    /// Tasks the whole tree was split into.
    pub tasks: u64,
    /// The tasks this shard ran, ascending.
    pub ran: Vec<u64>,
    pub schedules: u64,
    pub budget_cut: u64,
    pub truncated: u64,
    /// Paths that ended with an agent parked in a polling loop (absent: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub spinning: u64,
    /// Whether polling loops were parked (absent: the scenario has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parking: Option<bool>,
    pub depth_max: u64,
    /// Paths the reduction cut as redundant.
    pub redundant: u64,
    /// `schedules`, `memory` or `signal`; absent when every task finished.
    pub stopped: Option<String>,
    /// Every class key seen, 32 hex digits each, ascending.
    pub classes: Vec<String>,
    /// What a stateful search kept in this shard (absent: a stateless search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful: Option<ShardStates>,
    /// The shortest witness found of each anomaly set, in set order.
    pub sets: Vec<ShardSet>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What one shard of a stateful search kept ([`super::Stateful`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardStates {
    /// States in the shard's set.
    pub states: u64,
    /// Paths that ended at a state met before.
    pub merged: u64,
}

/// The shortest witness a shard found of one anomaly set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardSet {
    pub anomalies: Vec<Anomaly>,
    pub events: u64,
    /// The `X1` replay line.
    pub replay: String,
}

/// Why shares do not join.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    #[error("no shares to join")]
    Empty,
    #[error("{name}: field `tasks`: the tree was split into {this} tasks here, {first} in {of}")]
    Tasks {
        name: String,
        this: u64,
        first: u64,
        of: String,
    },
    #[error("{name}: field `ran`: task {task} is out of range or ran twice")]
    TaskTwice { name: String, task: u64 },
    #[error("task {task} of {tasks} is in no share (a shard is missing)")]
    TaskMissing { task: u64, tasks: u64 },
    #[error("{name}: field `classes`: `{key}` is not 32 hex digits")]
    Class { name: String, key: String },
    #[error("{name}: field `stopped`: `{value}` is not schedules, memory or signal")]
    Stopped { name: String, value: String },
    #[error("{name}: field `replay`: {why}")]
    Replay { name: String, why: String },
    #[error("{name}: field `stateful`: {why} (the shards of one search are all stateful or none)")]
    Stateful { name: String, why: &'static str },
}

fn stopped_name(s: Stopped) -> &'static str {
    match s {
        Stopped::Schedules => "schedules",
        Stopped::Memory => "memory",
        Stopped::Signal => "signal",
    }
}

fn stopped_of(name: &str, s: &str) -> Result<Stopped, JoinError> {
    match s {
        "schedules" => Ok(Stopped::Schedules),
        "memory" => Ok(Stopped::Memory),
        "signal" => Ok(Stopped::Signal),
        _ => Err(JoinError::Stopped {
            name: name.to_owned(),
            value: s.to_owned(),
        }),
    }
}

/// Runs shard `index` of `count` (1-based) of `sc`'s exploration under `cfg`.
pub fn explore_shard(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    index: u64,
    count: u64,
) -> Result<ShardRun, ExploreError> {
    assert!(index >= 1, "shard indices are 1-based");
    assert!(index <= count, "a shard index is at most the count");
    let Ran {
        found,
        stopped,
        schedules,
        classes,
        redundant,
        tasks,
        ran,
        stateful,
    } = run_tasks(sc, cfg, Some((index, count)))?;
    let mut keys: Vec<u128> = classes.into_iter().collect();
    keys.sort_unstable();
    Ok(ShardRun {
        tasks: tasks as u64,
        ran,
        schedules,
        budget_cut: found.budget_cut,
        truncated: found.truncated,
        spinning: found.spinning,
        parking: parking(sc, cfg),
        depth_max: found.depth_max,
        redundant,
        stopped: stopped.map(|s| stopped_name(s).to_owned()),
        classes: keys.iter().map(|k| format!("{k:032x}")).collect(),
        stateful: stateful.map(|s| ShardStates {
            states: s.states,
            merged: s.merged,
        }),
        sets: found
            .sets
            .into_values()
            .map(|w| ShardSet {
                anomalies: w.anomalies,
                events: w.events,
                replay: w.line.to_string(),
            })
            .collect(),
    })
}

/// Joins the shares (named for messages, in shard order) of one runtime's exploration under
/// `cfg` into the exploration one process computes: they must come from the same split and
/// cover every task exactly once. `sc` is the scenario explored (its bounds decide the
/// verdicts, [`super::conclude`]).
pub fn merge_shards(
    sc: &Scenario,
    cfg: &ExploreConfig<'_>,
    parts: &[(String, ShardRun)],
) -> Result<Exploration, JoinError> {
    let Some((first_name, first)) = parts.first() else {
        return Err(JoinError::Empty);
    };
    let mut seen = vec![false; usize::try_from(first.tasks).unwrap_or(0)];
    let mut found = Found::default();
    let mut stopped = None;
    let mut schedules = 0u64;
    let mut redundant = 0u64;
    let mut classes = BTreeSet::new();
    let mut states = cfg.stateful.then(Stateful::default);
    for (name, p) in parts {
        if p.tasks != first.tasks {
            return Err(JoinError::Tasks {
                name: name.clone(),
                this: p.tasks,
                first: first.tasks,
                of: first_name.clone(),
            });
        }
        for &t in &p.ran {
            match usize::try_from(t).ok().and_then(|i| seen.get_mut(i)) {
                Some(done) if !*done => *done = true,
                _ => {
                    return Err(JoinError::TaskTwice {
                        name: name.clone(),
                        task: t,
                    })
                }
            }
        }
        join_one(name, p, &mut found, &mut classes)?;
        match (&mut states, p.stateful) {
            (Some(s), Some(p)) => {
                s.states += p.states;
                s.merged += p.merged;
            }
            (None, None) => {}
            (Some(_), None) => {
                return Err(JoinError::Stateful {
                    name: name.clone(),
                    why: "absent from a share of a stateful search",
                })
            }
            (None, Some(_)) => {
                return Err(JoinError::Stateful {
                    name: name.clone(),
                    why: "present in a share of a stateless search",
                })
            }
        }
        schedules += p.schedules;
        redundant += p.redundant;
        if let (None, Some(s)) = (stopped, &p.stopped) {
            stopped = Some(stopped_of(name, s)?);
        }
    }
    if let Some(t) = seen.iter().position(|d| !d) {
        return Err(JoinError::TaskMissing {
            task: t as u64,
            tasks: first.tasks,
        });
    }
    let classes = classes.len() as u64;
    let mut ex = conclude(sc, first.parking, cfg, found, stopped, schedules, classes);
    ex.redundant = redundant;
    ex.stateful = states;
    Ok(ex)
}

/// Adds one share's counters, witnesses and class keys.
fn join_one(
    name: &str,
    p: &ShardRun,
    found: &mut Found,
    classes: &mut BTreeSet<u128>,
) -> Result<(), JoinError> {
    for key in &p.classes {
        let k = (key.len() == 32)
            .then(|| u128::from_str_radix(key, 16).ok())
            .flatten()
            .ok_or_else(|| JoinError::Class {
                name: name.to_owned(),
                key: key.clone(),
            })?;
        classes.insert(k);
    }
    let mut part = Found {
        budget_cut: p.budget_cut,
        truncated: p.truncated,
        spinning: p.spinning,
        depth_max: p.depth_max,
        ..Found::default()
    };
    for s in &p.sets {
        let line = ReplayLine::parse(&s.replay).map_err(|e| JoinError::Replay {
            name: name.to_owned(),
            why: e.to_string(),
        })?;
        part.add_witness(Witness {
            anomalies: s.anomalies.clone(),
            events: s.events,
            line,
        });
    }
    found.merge(part);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::Search;
    use std::path::Path;

    fn scenario(name: &str) -> Scenario {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        Scenario::load(&root.join(name)).expect("a shipped scenario")
    }

    fn shares(sc: &Scenario, cfg: &ExploreConfig<'_>, n: u64) -> Vec<(String, ShardRun)> {
        (1..=n)
            .map(|i| {
                let run = explore_shard(sc, cfg, i, n).expect("explores");
                // Through the partial's JSON, as `agentsim merge` reads it.
                let text = serde_json::to_string(&run).expect("serializes");
                let back: ShardRun = serde_json::from_str(&text).expect("parses");
                assert_eq!(back, run);
                (format!("shard {i}"), back)
            })
            .collect()
    }

    /// The join of 1, 2 and 3 shards is the one-process exploration, field for field.
    #[test]
    fn shares_join_into_the_whole() {
        let files = [
            "explore/stale-review.toml",
            "explore/retired-tool.toml",
            "explore/effect-order.toml",
            "examples/triage.toml",
        ];
        for file in files {
            let sc = scenario(file);
            // The workload's plain enumeration is slow for a unit test; the CLI test has it.
            let plain = !file.starts_with("examples/");
            for reduction in [true, false].into_iter().filter(|&r| r || plain) {
                let mut cfg = ExploreConfig::new(sc.runtime);
                if !reduction {
                    cfg.search = Search::Plain;
                }
                cfg.steps_per_agent = 6;
                let whole = super::super::explore(&sc, &cfg).expect("explores");
                assert!(whole.stopped.is_none());
                for n in 1..=3 {
                    let joined = merge_shards(&sc, &cfg, &shares(&sc, &cfg, n)).expect("joins");
                    assert_eq!(format!("{joined:?}"), format!("{whole:?}"), "{file} {n}");
                }
            }
        }
    }

    /// The shards get similar work, not only similar task counts: on the triage example,
    /// where dealing every other task of a 16-task split gave two shards 19 % and 81 % of
    /// the paths, each of two shards runs at least 40 % and none of four more than 30 %.
    #[test]
    fn shards_get_similar_work() {
        let sc = scenario("examples/triage.toml");
        // The spinning search: parked, triage's tree (917 paths) is too small to share evenly.
        let cfg = ExploreConfig {
            park: false,
            ..ExploreConfig::new(sc.runtime)
        };
        let whole = super::super::explore(&sc, &cfg).expect("explores");
        for n in [2u64, 4] {
            let work: Vec<u64> = (1..=n)
                .map(|i| explore_shard(&sc, &cfg, i, n).expect("explores").schedules)
                .collect();
            assert_eq!(work.iter().sum::<u64>(), whole.schedules);
            let (lo, hi) = if n == 2 { (40, 60) } else { (15, 30) };
            for &w in &work {
                let pct = w * 100 / whole.schedules;
                assert!((lo..=hi).contains(&pct), "{n} shards: {work:?}");
            }
        }
    }

    /// Live tasks are dealt round from the first shard, blocked ones from the last.
    #[test]
    fn owners_deal_live_and_blocked_tasks_apart() {
        let part = |blocked: bool| super::super::Part {
            prefix: Vec::new(),
            alts: None,
            blocked,
            size: 1,
        };
        let parts: Vec<_> = [false, true, false, false, true, true, false]
            .into_iter()
            .map(part)
            .collect();
        assert_eq!(super::super::owners(&parts, 2), vec![0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(super::super::owners(&parts, 3), vec![0, 2, 1, 2, 1, 0, 0]);
        assert_eq!(super::super::owners(&parts, 1), vec![0; 7]);
    }

    /// A missing, doubled or foreign share is refused.
    #[test]
    fn bad_share_sets_are_refused() {
        // A tree the split cuts (a worked example's is one small task).
        let sc = scenario("examples/triage.toml");
        let mut cfg = ExploreConfig::new(sc.runtime);
        cfg.steps_per_agent = 16;
        let parts = shares(&sc, &cfg, 2);
        assert!(
            parts.iter().all(|(_, p)| !p.ran.is_empty()),
            "both shards have tasks"
        );
        let missing = merge_shards(&sc, &cfg, &parts[..1]).unwrap_err();
        assert!(
            matches!(missing, JoinError::TaskMissing { .. }),
            "{missing}"
        );
        let twice = vec![parts[0].clone(), parts[0].clone(), parts[1].clone()];
        let err = merge_shards(&sc, &cfg, &twice).unwrap_err();
        assert!(matches!(err, JoinError::TaskTwice { .. }), "{err}");
        let mut other = parts.clone();
        other[1].1.tasks += 1;
        let err = merge_shards(&sc, &cfg, &other).unwrap_err();
        assert!(matches!(err, JoinError::Tasks { .. }), "{err}");
        let mut bad = parts.clone();
        bad[1].1.classes.push("xyz".into());
        let err = merge_shards(&sc, &cfg, &bad).unwrap_err();
        assert!(matches!(err, JoinError::Class { .. }), "{err}");
        assert!(matches!(
            merge_shards(&sc, &cfg, &[]),
            Err(JoinError::Empty)
        ));
    }
}
