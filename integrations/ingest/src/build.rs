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
use agentsim_models::{Cell, History, Names, Value};

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
///
/// Names are interned as each record is made, in the order a record lists them (reads, writes,
/// effects, registries, agent, planned tool), so ids are the order of first appearance; the
/// log of visible writes holds those ids, not copies of the names.
pub fn build_ordered(
    commits: &[u128],
    steps: impl IntoIterator<Item = Step>,
    provenance: Provenance,
) -> History {
    let mut h = History::new(Names::new());
    // Sized once: a vector of records grown as it fills is copied at each growth, and the
    // kernel zeroes every larger copy's pages.
    h.records.reserve_exact(commits.len());
    let mut log = Visible::default();
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
        let latest: Vec<Option<(usize, Value)>> = step
            .reads
            .iter()
            .map(|(cell, _)| log.latest(&h.names, cell, read_time))
            .collect();
        let made = Made {
            read_time,
            index,
            provenance,
        };
        let (record, writes) = record(&mut h.names, &mut log, &h.records, &step, &latest, made);
        h.records.push(record);
        if !step.aborted || step.retracted {
            for (cell, v) in writes {
                log.push(cell, index, v);
            }
        }
    }
    assert_eq!(h.len(), commits.len(), "a step for every commit instant");
    assert_eq!(h.validate(), Ok(()), "the builder made a malformed history");
    h
}

/// The visible (committed, or retracted) writes so far, by cell id, and each cell's count of
/// new versions.
#[derive(Default)]
struct Visible {
    /// `writes[cell]`: (log index, value), in log order.
    writes: Vec<Vec<(usize, Value)>>,
    versions: Vec<u32>,
}

impl Visible {
    /// The last visible write of `cell` with a log index below `read_time`.
    fn latest(&self, names: &Names, cell: &str, read_time: usize) -> Option<(usize, Value)> {
        let ws = self.writes.get(names.cells.get(cell)? as usize)?;
        let i = ws.partition_point(|(k, _)| *k < read_time).checked_sub(1)?;
        Some(ws[i])
    }

    fn push(&mut self, cell: Cell, index: usize, v: Value) {
        let c = cell.0 as usize;
        if self.writes.len() <= c {
            self.writes.resize_with(c + 1, Vec::new);
        }
        self.writes[c].push((index, v));
    }

    /// The next version's ordinal among `cell`'s writes (1 for its first).
    fn next_version(&mut self, cell: Cell) -> u32 {
        let c = cell.0 as usize;
        if self.versions.len() <= c {
            self.versions.resize(c + 1, 0);
        }
        self.versions[c] += 1;
        self.versions[c]
    }
}

/// The producers of what `reads` read (the latest write of each cell; with `matching`, only
/// when the value read is the value it wrote), and transitively their preds.
fn producers(
    log: &[OpRecord],
    reads: &[(Cell, Value)],
    latest: &[Option<(usize, Value)>],
    matching: bool,
) -> Vec<u32> {
    let mut preds: Vec<u32> = Vec::new();
    for (&(_, read), found) in reads.iter().zip(latest) {
        let found = found.filter(|&(_, w)| !matching || w == read);
        if let Some((k, _)) = found {
            preds.push(k as u32);
            preds.extend_from_slice(&log[k].preds);
        }
    }
    normalize_set(&mut preds);
    preds
}

/// Where a record goes in the log, and how its `preds` are filled.
#[derive(Clone, Copy)]
struct Made {
    read_time: usize,
    index: usize,
    provenance: Provenance,
}

/// The record of `step` (each read's latest visible write in `latest`), and its writes in the
/// step's order, to be made visible.
fn record(
    names: &mut Names,
    visible: &mut Visible,
    log: &[OpRecord],
    step: &Step,
    latest: &[Option<(usize, Value)>],
    made: Made,
) -> (OpRecord, Vec<(Cell, Value)>) {
    let value = |names: &mut Names, v: &Option<String>| match v {
        Some(v) => names.value(v),
        None => Value::NULL,
    };
    let reads: Vec<(Cell, Value)> = step
        .reads
        .iter()
        .zip(latest)
        .map(|((c, seen), latest)| {
            let cell = names.cell(c);
            let v = match (seen, latest) {
                (Seen::Value(v), _) => value(names, v),
                (Seen::Derive, Some((_, v))) => *v,
                (Seen::Derive, None) => names.value("v0"),
            };
            (cell, v)
        })
        .collect();
    let preds = match made.provenance {
        Provenance::Off => Vec::new(),
        Provenance::LatestWrite => producers(log, &reads, latest, false),
        Provenance::MatchingWrite => producers(log, &reads, latest, true),
    };
    let read_values = ValueMap::from_pairs(reads.iter().copied());
    let mut read_set: Vec<_> = reads.iter().map(|&(c, _)| c).collect();
    normalize_set(&mut read_set);
    let writes: Vec<(Cell, Value)> = step
        .writes
        .iter()
        .map(|(c, w)| {
            let cell = names.cell(c);
            let v = match w {
                Written::Value(v) => value(names, v),
                Written::NewVersion => {
                    let k = visible.next_version(cell);
                    names.value(&format!("v{k}"))
                }
            };
            (cell, v)
        })
        .collect();
    let write_values = ValueMap::from_pairs(writes.iter().copied());
    let mut write_set: Vec<_> = writes.iter().map(|&(c, _)| c).collect();
    normalize_set(&mut write_set);
    // An effect's value is the step's (last) write of its cell, NULL if it wrote none.
    let mut effects = |order: &[String]| -> Vec<_> {
        order
            .iter()
            .map(|c| {
                let cell = names.cell(c);
                let v = writes.iter().rev().find(|w| w.0 == cell);
                (cell, v.map_or(Value::NULL, |w| w.1))
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
    let record = OpRecord {
        agent: names.agent(&step.agent),
        read_set,
        read_values,
        read_registry,
        planned_tool: step.planned_tool.as_deref().map(|t| names.tool(t)),
        read_time: made.read_time as u64,
        write_set,
        write_values,
        write_registry,
        write_time: made.index as u64 + 1,
        io,
        co,
        aborted: step.aborted || step.retracted,
        preds,
        read_meta: Vec::new(),
    };
    (record, writes)
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
