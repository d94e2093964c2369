//! From timed agent steps to an agentsim history (SPEC §2): the one place where times become
//! log positions.
//!
//! Every source (OpenTelemetry spans, LangGraph checkpoints) reduces what it read to
//! [`Step`]s: who ran the step, the instant it read and the instant it committed (any ordered
//! `u128`, e.g. Unix nanoseconds, or superstep positions), what it read and wrote, its effects
//! in issue and completion order, its registries. [`build`] then puts the steps in commit order
//! (the log order, `write_time = index + 1`) and gives each the log length at its read instant
//! (`read_time` = the number of steps that committed strictly before it read). A commit at the
//! very instant of a read counts as *not* seen: with known values that cannot hide an A1, since
//! a read that did see the write reads its value.
//!
//! Values a source could not see are derived here, never made up: a [`Seen::Derive`] read gets
//! the value of the latest committed (non-aborted) write to the cell at its `read_time`, or
//! `v0` (the value the cell had before the trace began) if there is none; a
//! [`Written::NewVersion`] write gets `v<k>`, its ordinal among the cell's writes. Comparing
//! those is comparing versions: a rewrite of an equal value counts as a change, which is what
//! the report says for such cells. With `provenance` on, each record's `preds` are the
//! producers of what it read and, transitively, theirs (SPEC §1 extension 2) — exact when every
//! read sees the latest commit, as a LangGraph superstep does.

use agentsim_models::record::{normalize_set, OpRecord, Registry, ToolEntry, ValueMap};
use agentsim_models::{History, Names, Value};
use std::collections::BTreeMap;

/// A value a step read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// The source recorded the value (`None` = NULL).
    Value(Option<String>),
    /// The source says the cell was read but not what it held: derive it from the log.
    Derive,
}

/// A value a step wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Written {
    /// The source recorded the value (`None` = NULL, e.g. a deletion).
    Value(Option<String>),
    /// The source says the cell was written but not with what: a new version.
    NewVersion,
}

/// One agent step as a source saw it, before it has a place in the log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    pub agent: String,
    /// When it read (its snapshot); clamped to `commit_at`.
    pub read_at: u128,
    /// When it committed; ties keep the order of the input.
    pub commit_at: u128,
    pub reads: Vec<(String, Seen)>,
    /// At most one entry per cell (the step's final write of it).
    pub writes: Vec<(String, Written)>,
    /// Effects (cells of `writes`) in issue order and in completion order.
    pub io: Vec<String>,
    pub co: Vec<String>,
    pub read_registry: Vec<(String, u32)>,
    pub write_registry: Vec<(String, u32)>,
    pub planned_tool: Option<String>,
    pub aborted: bool,
    /// Committed, then retracted (SPEC §1 extension 3): its writes were seen by later reads,
    /// and the record ends aborted, so a survivor that read them is an A3.
    pub retracted: bool,
}

/// How `preds` are filled (SPEC §1 extension 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// `preds` stay empty.
    Off,
    /// The latest committed write of each cell read (a LangGraph task reads the reduced state,
    /// whose value need not be any one write's).
    LatestWrite,
    /// The latest committed write of each cell read, when the value read is the value it
    /// wrote: a read that saw something else (a rollback the source does not show) did not
    /// read from it.
    MatchingWrite,
}

/// Builds the history of `steps`; `provenance` fills `preds` from what each step read.
pub fn build(steps: Vec<Step>, provenance: bool) -> History {
    let p = match provenance {
        true => Provenance::LatestWrite,
        false => Provenance::Off,
    };
    build_with(steps, p)
}

/// [`build`] with a choice of [`Provenance`].
pub fn build_with(mut steps: Vec<Step>, provenance: Provenance) -> History {
    // Stable: equal commit instants keep the source's order.
    steps.sort_by_key(|s| s.commit_at);
    let commits: Vec<u128> = steps.iter().map(|s| s.commit_at).collect();
    build_ordered(&commits, steps, provenance)
}

/// [`build_with`] of steps already in log order, `commits` their commit instants: a source
/// that holds its steps packed hands them over one at a time, so they are never all held as
/// [`Step`]s at once.
pub fn build_ordered(
    commits: &[u128],
    steps: impl IntoIterator<Item = Step>,
    provenance: Provenance,
) -> History {
    let mut h = History::new(Names::new());
    // Each cell's visible writes, in log order: (index, value).
    let mut writes_of: BTreeMap<String, Vec<(usize, Option<String>)>> = BTreeMap::new();
    let mut versions: BTreeMap<String, u32> = BTreeMap::new();
    // Steps are dropped as their records are made, so a long trace is not held twice over.
    for (index, step) in steps.into_iter().enumerate() {
        assert_eq!(commits[index], step.commit_at, "steps come in log order");
        let read_at = step.read_at.min(step.commit_at);
        let read_time = commits.partition_point(|&c| c < read_at);
        assert!(read_time <= index, "a step reads before it commits");
        // The log as it stood at read_time, for the cells this step read: the last visible
        // write of each with a log index below read_time. Read times are not monotone in
        // commit order (a long generation reads early and commits late), so each step looks
        // its own instant up.
        let latest: BTreeMap<String, (usize, Option<String>)> = step
            .reads
            .iter()
            .filter_map(|(cell, _)| {
                let ws = writes_of.get(cell)?;
                let i = ws.partition_point(|(k, _)| *k < read_time).checked_sub(1)?;
                Some((cell.clone(), ws[i].clone()))
            })
            .collect();
        let reads: Vec<(String, Option<String>)> = step
            .reads
            .iter()
            .map(|(cell, seen)| {
                let v = match seen {
                    Seen::Value(v) => v.clone(),
                    Seen::Derive => match latest.get(cell) {
                        Some((_, v)) => v.clone(),
                        None => Some("v0".to_owned()),
                    },
                };
                (cell.clone(), v)
            })
            .collect();
        let writes: Vec<(String, Option<String>)> = step
            .writes
            .iter()
            .map(|(cell, w)| {
                let v = match w {
                    Written::Value(v) => v.clone(),
                    Written::NewVersion => {
                        let k = versions.entry(cell.clone()).or_insert(0);
                        *k += 1;
                        Some(format!("v{k}"))
                    }
                };
                (cell.clone(), v)
            })
            .collect();
        let preds = match provenance {
            Provenance::Off => Vec::new(),
            Provenance::LatestWrite => producers(&h.records, &reads, &latest, false),
            Provenance::MatchingWrite => producers(&h.records, &reads, &latest, true),
        };
        let record = record(
            &mut h.names,
            &step,
            &reads,
            &writes,
            read_time,
            index,
            preds,
        );
        h.records.push(record);
        if !step.aborted || step.retracted {
            for (cell, v) in writes {
                writes_of.entry(cell).or_default().push((index, v));
            }
        }
    }
    assert_eq!(h.len(), commits.len(), "a step for every commit instant");
    assert_eq!(h.validate(), Ok(()), "the builder made a malformed history");
    h
}

/// The producers of what `reads` read (the latest write of each cell; with `matching`, only
/// when the value read is the value it wrote), and transitively their preds.
fn producers(
    log: &[OpRecord],
    reads: &[(String, Option<String>)],
    latest: &BTreeMap<String, (usize, Option<String>)>,
    matching: bool,
) -> Vec<u32> {
    let mut preds: Vec<u32> = Vec::new();
    for (cell, read) in reads {
        let found = latest.get(cell).filter(|(_, w)| !matching || w == read);
        if let Some(&(k, _)) = found {
            preds.push(k as u32);
            preds.extend_from_slice(&log[k].preds);
        }
    }
    normalize_set(&mut preds);
    preds
}

fn record(
    names: &mut Names,
    step: &Step,
    reads: &[(String, Option<String>)],
    writes: &[(String, Option<String>)],
    read_time: usize,
    index: usize,
    preds: Vec<u32>,
) -> OpRecord {
    let value = |names: &mut Names, v: &Option<String>| match v {
        Some(v) => names.value(v),
        None => Value::NULL,
    };
    let read_values = ValueMap::from_pairs(
        reads
            .iter()
            .map(|(c, v)| (names.cell(c), value(names, v)))
            .collect::<Vec<_>>(),
    );
    let mut read_set: Vec<_> = reads.iter().map(|(c, _)| names.cell(c)).collect();
    normalize_set(&mut read_set);
    let written: BTreeMap<&str, &Option<String>> =
        writes.iter().map(|(c, v)| (c.as_str(), v)).collect();
    let write_values = ValueMap::from_pairs(
        writes
            .iter()
            .map(|(c, v)| (names.cell(c), value(names, v)))
            .collect::<Vec<_>>(),
    );
    let mut write_set: Vec<_> = writes.iter().map(|(c, _)| names.cell(c)).collect();
    normalize_set(&mut write_set);
    let mut effects = |order: &[String]| -> Vec<_> {
        order
            .iter()
            .map(|c| {
                let v = written.get(c.as_str()).copied().cloned().flatten();
                (names.cell(c), value(names, &v))
            })
            .collect()
    };
    let io = effects(&step.io);
    let co = effects(&step.co);
    let mut registry = |entries: &[(String, u32)]| {
        Registry::from_entries(entries.iter().map(|(t, version)| ToolEntry {
            tool: names.tool(t),
            version: *version,
        }))
    };
    let read_registry = registry(&step.read_registry);
    let write_registry = registry(&step.write_registry);
    OpRecord {
        agent: names.agent(&step.agent),
        read_set,
        read_values,
        read_registry,
        planned_tool: step.planned_tool.as_deref().map(|t| names.tool(t)),
        read_time: read_time as u64,
        write_set,
        write_values,
        write_registry,
        write_time: index as u64 + 1,
        io,
        co,
        aborted: step.aborted || step.retracted,
        preds,
        read_meta: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::detect::fast;

    fn step(agent: &str, read_at: u128, commit_at: u128) -> Step {
        Step {
            agent: agent.into(),
            read_at,
            commit_at,
            ..Step::default()
        }
    }

    #[test]
    fn times_become_log_positions() {
        // b reads at 5 and commits at 30; a commits at 10, inside b's window.
        let mut a = step("a", 0, 10);
        a.writes = vec![("doc".into(), Written::Value(Some("2".into())))];
        let mut b = step("b", 5, 30);
        b.reads = vec![("doc".into(), Seen::Value(Some("1".into())))];
        let h = build(vec![b, a], false);
        assert_eq!(h.records[0].write_time, 1);
        assert_eq!(h.records[1].read_time, 0);
        assert_eq!(h.records[1].write_time, 2);
        assert_eq!(fast::detect(&h).a1.len(), 1);
    }

    #[test]
    fn derived_reads_see_the_latest_commit_and_new_versions_count() {
        let mut w1 = step("w", 0, 10);
        w1.writes = vec![("m".into(), Written::NewVersion)];
        let mut r = step("r", 15, 40);
        r.reads = vec![("m".into(), Seen::Derive), ("n".into(), Seen::Derive)];
        let mut w2 = step("w2", 16, 20);
        w2.writes = vec![("m".into(), Written::NewVersion)];
        let h = build(vec![w1, r, w2], true);
        let n = &h.names;
        let r = &h.records[2];
        let m = n.cells.get("m").map(agentsim_models::Cell).unwrap();
        assert_eq!(n.value_display(r.read_values.get(m)), "v1");
        let c_n = n.cells.get("n").map(agentsim_models::Cell).unwrap();
        assert_eq!(n.value_display(r.read_values.get(c_n)), "v0");
        assert_eq!(n.value_display(h.records[1].write_values.get(m)), "v2");
        assert_eq!(r.preds, vec![0]);
        // w2 rewrote m inside r's window: a version-based A1.
        assert_eq!(fast::detect(&h).a1.len(), 1);
    }

    #[test]
    fn retracted_writes_were_seen_and_their_readers_are_a3() {
        let mut w = step("w", 0, 10);
        w.writes = vec![("k".into(), Written::Value(Some("x".into())))];
        w.retracted = true;
        let mut r = step("r", 20, 30);
        r.reads = vec![("k".into(), Seen::Derive)];
        let h = build(vec![w, r], true);
        let k = agentsim_models::Cell(h.names.cells.get("k").unwrap());
        assert_eq!(h.names.value_display(h.records[1].read_values.get(k)), "x");
        assert!(h.records[0].aborted);
        assert_eq!(h.records[1].preds, vec![0]);
        assert_eq!(fast::detect(&h).a3.len(), 1);
    }

    #[test]
    fn a_late_commit_that_read_early_sees_the_log_as_it_was() {
        // a reads at 0 and commits last; b writes m first; d reads after b's commit.
        let mut a = step("a", 0, 50);
        a.reads = vec![("m".into(), Seen::Derive)];
        a.writes = vec![("m".into(), Written::NewVersion)];
        let mut b = step("b", 20, 30);
        b.writes = vec![("m".into(), Written::NewVersion)];
        let mut d = step("d", 35, 40);
        d.reads = vec![("m".into(), Seen::Derive)];
        let h = build(vec![a, b, d], false);
        let m = agentsim_models::Cell(h.names.cells.get("m").unwrap());
        // d (read_time 1) saw b's write; a (read_time 0, processed after d) did not.
        assert_eq!(h.names.value_display(h.records[1].read_values.get(m)), "v1");
        assert_eq!(h.names.value_display(h.records[2].read_values.get(m)), "v0");
        assert_eq!(fast::detect(&h).a1.len(), 1);
    }

    #[test]
    fn aborted_writes_are_never_seen() {
        let mut w = step("w", 0, 10);
        w.writes = vec![("k".into(), Written::Value(Some("x".into())))];
        w.aborted = true;
        let mut r = step("r", 20, 30);
        r.reads = vec![("k".into(), Seen::Derive)];
        let h = build(vec![w, r], true);
        let k = agentsim_models::Cell(h.names.cells.get("k").unwrap());
        assert_eq!(h.names.value_display(h.records[1].read_values.get(k)), "v0");
        assert!(h.records[1].preds.is_empty());
    }
}
