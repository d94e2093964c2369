//! A scenario of the user's own system from an observed run (a history or an ingested
//! trace): what `agentsim fit` writes and `agentsim fix` measures stacks on.
//!
//! One simulated agent per observed agent (a second lane `agent#2` when one agent's
//! operations overlap in time; lanes whose operations are the same and never retracted fold
//! into one `[[agents]]` with `count`); each agent's script replays its operations in order
//! (cells read and written, the planned tool, effects completing out of issue order where they
//! did), a maintainer agent makes the registry changes the registries show, a supervisor makes
//! the retractions the `aborted` flags show, and provenance is on when the input has `preds`.
//! Durations come from the clock of [`timeline`]: a log-normal fitted by maximum likelihood per
//! agent and step kind with enough samples ([`lognormal::FIT_SAMPLES_MIN`]), else the observed
//! value (or range, for folded copies). The text is ordinary scenario TOML with the choices in
//! comments.
//!
//! What a fit does not give: the branches the run did not take, the conditions of any branch,
//! tools it never called, the values (the stub generator makes its own), a retry policy. A
//! fitted scenario contains the observed run ([`op_keys`] is how a command checks that a
//! trial reproduced it); how likely other runs are depends on durations fitted from what was
//! observed, nothing more.

pub mod lognormal;
pub mod timeline;

mod render;

pub use timeline::Timing;

use agentsim_models::History;
use std::collections::{BTreeMap, BTreeSet};

/// What to fit: the history, its clock if the input had one, and how to name things.
#[derive(Clone, Debug)]
pub struct Observed<'a> {
    pub history: &'a History,
    /// One per record, from the input's wall times; `None`: the slot clock.
    pub times: Option<Vec<Timing>>,
    /// How the header names the input (e.g. `otel trace t.json`).
    pub source: String,
    /// The scenario's `name`.
    pub name: String,
    pub trials: u64,
    pub seed: u64,
}

/// Why nothing could be fitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FitError {
    #[error("no steps: the input holds no operation to fit a scenario from")]
    NoSteps,
    #[error("{got} timings for {records} records")]
    Timings { got: usize, records: usize },
    /// A scenario declares its cells and tools by name, and an empty name cannot be declared.
    #[error("record {record}: a {what} with an empty name, which a scenario cannot declare")]
    EmptyName { record: usize, what: &'static str },
}

/// A record as the order check compares it: the `[[agents]]` entry that ran it, what it read
/// and wrote, where it read in the log, and whether it ended aborted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OpKey {
    pub agent: String,
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub read_time: u64,
    pub aborted: bool,
}

/// The fitted scenario.
#[derive(Clone, Debug)]
pub struct Fitted {
    pub toml: String,
    /// The observed run's records as [`op_keys`] gives them for a trial that reproduces it.
    pub expected: Vec<OpKey>,
    /// The header's lines (without `# `).
    pub header: Vec<String>,
    /// Samples behind each fitted quantity: (what, samples, how many log-normal fits).
    pub samples: Vec<(&'static str, usize, usize)>,
}

/// Where record `i` read in the log: how many earlier records committed at or before its
/// `read_time` (SPEC §2: a write at the read's instant is visible). A simulated history's
/// read time is already that count; an input's log times need not be consecutive, so the
/// order check compares positions, not instants.
pub fn seen(h: &History, i: usize) -> u64 {
    let r = &h.records[i];
    h.records[..i].partition_point(|w| w.write_time <= r.read_time) as u64
}

/// The records of `h` as [`OpKey`]s; `group` maps an agent's name to its `[[agents]]` name.
pub fn op_keys(h: &History, group: &dyn Fn(&str) -> String) -> Vec<OpKey> {
    let names = |cells: &[agentsim_models::names::Cell]| -> Vec<String> {
        let mut v: Vec<String> = cells.iter().map(|&c| h.names.cell_name(c)).collect();
        v.sort();
        v
    };
    h.records
        .iter()
        .enumerate()
        .map(|(i, r)| OpKey {
            agent: group(&h.names.agent_name(r.agent)),
            read: names(&r.read_set),
            write: names(&r.write_set),
            read_time: seen(h, i),
            aborted: r.aborted,
        })
        .collect()
}

/// One observed operation on a lane.
#[derive(Clone, Debug)]
struct Op {
    record: usize,
    read: Vec<String>,
    write: Vec<String>,
    tool: Option<String>,
    reorder: bool,
    aborted: bool,
}

/// Lanes with the same operations, simulated as one `[[agents]]` entry with `count`.
#[derive(Clone, Debug)]
struct Group {
    name: String,
    lanes: Vec<usize>,
    /// Per lane, its records in order (the lanes' operations match one to one).
    records: Vec<Vec<usize>>,
    ops: Vec<Op>,
}

/// A registry change or a retraction at a time on the run's clock.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Registry { change: &'static str, tool: String },
    Retract { agent: String },
}

/// Fits a scenario to `obs` (see the module docs).
pub fn fit(obs: &Observed<'_>) -> Result<Fitted, FitError> {
    let h = obs.history;
    if h.records.is_empty() {
        return Err(FitError::NoSteps);
    }
    empty_names(h)?;
    let times = match &obs.times {
        Some(t) if t.len() != h.records.len() => {
            return Err(FitError::Timings {
                got: t.len(),
                records: h.records.len(),
            })
        }
        Some(t) => t.clone(),
        None => timeline::slots(h),
    };
    let (lane_of, lane_names) = timeline::lanes(h, &times);
    let ops = lane_ops(h, &lane_of, lane_names.len());
    let mut groups = fold(&lane_names, &ops);
    let mut notes = Vec::new();
    legal_names(&mut groups, &mut notes);
    let mut group_of_lane = vec![String::new(); lane_names.len()];
    for g in &groups {
        for &l in &g.lanes {
            group_of_lane[l] = g.name.clone();
        }
    }
    let expected = expected(h, &lane_of, &group_of_lane);
    let mut events = registry_events(h, &times, &mut notes);
    events.extend(retractions(h, &times, &group_of_lane, &ops, &mut notes));
    events.sort();
    let cx = render::Cx {
        obs,
        h,
        times: &times,
        groups: &groups,
        events: &events,
        notes,
    };
    Ok(render::render(cx, expected))
}

fn lane_ops(h: &History, lane_of: &[usize], lanes: usize) -> Vec<Vec<Op>> {
    let mut ops: Vec<Vec<Op>> = vec![Vec::new(); lanes];
    let names = |cells: &[agentsim_models::names::Cell]| -> Vec<String> {
        cells.iter().map(|&c| h.names.cell_name(c)).collect()
    };
    for (i, r) in h.records.iter().enumerate() {
        let io: Vec<_> = r.io.iter().map(|(c, _)| *c).collect();
        let co: Vec<_> = r.co.iter().map(|(c, _)| *c).collect();
        ops[lane_of[i]].push(Op {
            record: i,
            read: names(&r.read_set),
            write: names(&r.write_set),
            tool: r.planned_tool.map(|t| h.names.tool_name(t)),
            reorder: io != co,
            aborted: r.aborted,
        });
    }
    ops
}

/// Folds lanes whose operations match (and none of which was retracted: a retraction names an
/// `[[agents]]` entry, so it would reach every copy) into groups.
fn fold(lane_names: &[String], ops: &[Vec<Op>]) -> Vec<Group> {
    type Sig = (
        String,
        Vec<(Vec<String>, Vec<String>, Option<String>, bool)>,
    );
    // Copies of one agent (`planner_0`, `planner_1`; `ops`, `ops#2`) share a stem; two
    // agents that merely do the same thing are not copies.
    let sig = |l: usize| -> Option<Sig> {
        if ops[l].iter().any(|o| o.aborted) || stem_of(&lane_names[l]).is_empty() {
            return None;
        }
        let steps = ops[l]
            .iter()
            .map(|o| (o.read.clone(), o.write.clone(), o.tool.clone(), o.reorder))
            .collect();
        Some((stem_of(&lane_names[l]).to_owned(), steps))
    };
    let mut groups: Vec<Group> = Vec::new();
    let mut by_sig: BTreeMap<Sig, usize> = BTreeMap::new();
    for l in 0..lane_names.len() {
        match sig(l).and_then(|s| by_sig.get(&s).copied().map(|g| (g, s))) {
            Some((g, _)) => {
                groups[g].lanes.push(l);
                groups[g]
                    .records
                    .push(ops[l].iter().map(|o| o.record).collect());
            }
            None => {
                if let Some(s) = sig(l) {
                    by_sig.insert(s, groups.len());
                }
                groups.push(Group {
                    name: lane_names[l].clone(),
                    lanes: vec![l],
                    records: vec![ops[l].iter().map(|o| o.record).collect()],
                    ops: ops[l].clone(),
                });
            }
        }
    }
    let mut used: BTreeSet<String> = groups
        .iter()
        .filter(|g| g.lanes.len() == 1)
        .map(|g| g.name.clone())
        .collect();
    for g in groups.iter_mut().filter(|g| g.lanes.len() > 1) {
        let stem = stem_of(&lane_names[g.lanes[0]]);
        if !used.contains(stem) {
            g.name = stem.to_owned();
        }
        used.insert(g.name.clone());
    }
    groups
}

/// Renames the groups whose names a scenario cannot use (empty, or with `.`, which names a
/// copy) to legal ones (`.` → `_`, then a suffix while taken), each with a note.
fn legal_names(groups: &mut [Group], notes: &mut Vec<String>) {
    let mut taken: BTreeSet<String> = groups.iter().map(|g| g.name.clone()).collect();
    for g in groups.iter_mut() {
        if !g.name.is_empty() && !g.name.contains('.') {
            continue;
        }
        let base = match g.name.replace('.', "_") {
            b if b.is_empty() => "agent".to_owned(),
            b => b,
        };
        let (mut name, mut k) = (base.clone(), 2);
        while taken.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        notes.push(format!(
            "agent {:?} of the trace is named {name:?} here (a scenario's agent names are not \
             empty and have no `.`)",
            g.name
        ));
        taken.insert(name.clone());
        g.name = name;
    }
}

/// A name without its trailing copy number (`planner_1`, `ops#2`, `worker.3` → the stem).
fn stem_of(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches(['_', '#', '.', '-'])
}

fn expected(h: &History, lane_of: &[usize], group_of_lane: &[String]) -> Vec<OpKey> {
    let mut keys = op_keys(h, &|_| String::new());
    for (k, &l) in keys.iter_mut().zip(lane_of) {
        k.agent = group_of_lane[l].clone();
    }
    keys
}

type Snapshot = (u64, BTreeMap<String, u32>);

/// The registry changes between consecutive observed registries, each halfway between the
/// last observation of the old registry and the first of the new one. An empty registry is
/// taken as not observed (sources that do not record registries write none).
fn registry_events(h: &History, times: &[Timing], notes: &mut Vec<String>) -> Vec<(u64, Event)> {
    let snap = |reg: &agentsim_models::record::Registry| -> BTreeMap<String, u32> {
        reg.entries()
            .iter()
            .map(|e| (h.names.tool_name(e.tool), e.version))
            .collect()
    };
    let mut snaps: Vec<Snapshot> = Vec::new();
    for (r, t) in h.records.iter().zip(times) {
        if !r.read_registry.entries().is_empty() {
            snaps.push((t.read_ms, snap(&r.read_registry)));
        }
        if !r.write_registry.entries().is_empty() {
            snaps.push((t.commit_ms, snap(&r.write_registry)));
        }
    }
    snaps.sort_by_key(|s| s.0);
    let Some((_, first)) = snaps.first().cloned() else {
        return Vec::new();
    };
    let all: BTreeSet<String> = tools(h);
    let mut out: Vec<(u64, Event)> = all
        .iter()
        .filter(|t| !first.contains_key(*t))
        .map(|t| (0, change("remove", t)))
        .collect();
    let (mut current, mut last_ms) = (first, 0);
    for (ms, state) in snaps {
        if state == current {
            last_ms = ms;
            continue;
        }
        let at = if ms > last_ms {
            last_ms + ((ms - last_ms) / 2).max(1)
        } else {
            notes.push(format!(
                "a registry change falls at the instant it was first seen ({ms} ms)"
            ));
            ms
        };
        for (tool, &v) in &current {
            match state.get(tool) {
                None => out.push((at, change("remove", tool))),
                Some(&w) if w > v => {
                    out.extend((v..w).map(|_| (at, change("signature", tool))));
                }
                Some(&w) if w < v => notes.push(format!(
                    "tool `{tool}` went back from version {v} to {w}; the simulator's \
                     versions only rise, so that change is left out"
                )),
                Some(_) => {}
            }
        }
        for tool in state.keys().filter(|t| !current.contains_key(*t)) {
            out.push((at, change("add", tool)));
        }
        current = state;
        last_ms = ms;
    }
    out
}

fn change(change: &'static str, tool: &str) -> Event {
    Event::Registry {
        change,
        tool: tool.to_owned(),
    }
}

/// The first record that names a cell or a tool with the empty string, which `detect` reads
/// but a scenario cannot declare.
fn empty_names(h: &History) -> Result<(), FitError> {
    for (record, r) in h.records.iter().enumerate() {
        let cells = r.read_set.iter().chain(&r.write_set);
        if cells.into_iter().any(|&c| h.names.cell_name(c).is_empty()) {
            return Err(FitError::EmptyName {
                record,
                what: "cell",
            });
        }
        let registry = r.read_registry.entries().iter();
        let tools = registry
            .chain(r.write_registry.entries())
            .map(|e| e.tool)
            .chain(r.planned_tool);
        if tools.into_iter().any(|t| h.names.tool_name(t).is_empty()) {
            return Err(FitError::EmptyName {
                record,
                what: "tool",
            });
        }
    }
    Ok(())
}

/// Every tool named in a registry or planned.
fn tools(h: &History) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for r in &h.records {
        for e in r
            .read_registry
            .entries()
            .iter()
            .chain(r.write_registry.entries())
        {
            all.insert(h.names.tool_name(e.tool));
        }
        if let Some(t) = r.planned_tool {
            all.insert(h.names.tool_name(t));
        }
    }
    all
}

/// A retraction of each aborted record, after it and every record that depends on it
/// committed (so they read it first), and before its agent's next live commit. A retraction
/// hits its agent's latest live record, so the aborted records that follow one another on a
/// lane (an invocation that ended in error spans several steps) are retracted together, at the
/// first instant all of them and their dependents committed, one retraction per record (each
/// hits the latest left). Retracting the first before the next one committed, as a retraction
/// per record at its own time would, can fall before the first's dependents read it.
fn retractions(
    h: &History,
    times: &[Timing],
    group_of_lane: &[String],
    ops: &[Vec<Op>],
    notes: &mut Vec<String>,
) -> Vec<(u64, Event)> {
    let done = |i: usize| -> u64 {
        h.records
            .iter()
            .enumerate()
            .filter(|(_, d)| d.preds.contains(&(i as u32)))
            .map(|(j, _)| times[j].commit_ms)
            .chain([times[i].commit_ms])
            .max()
            .unwrap_or(times[i].commit_ms)
    };
    let mut out = Vec::new();
    let mut clipped = BTreeSet::new();
    for (l, lane) in ops.iter().enumerate() {
        let mut k = 0;
        while k < lane.len() {
            if !lane[k].aborted {
                k += 1;
                continue;
            }
            let end = (k..lane.len())
                .find(|&m| !lane[m].aborted)
                .unwrap_or(lane.len());
            let run: Vec<usize> = lane[k..end].iter().map(|o| o.record).collect();
            let last = run[run.len() - 1];
            let mut at = run.iter().map(|&i| done(i)).max().unwrap_or(0) + 1;
            if let Some(next) = lane.get(end) {
                let limit = times[next.record].commit_ms;
                if at >= limit {
                    at = limit.saturating_sub(1).max(times[last].commit_ms);
                    clipped.extend(run.iter().copied().filter(|&i| done(i) + 1 > at));
                }
            }
            out.extend(run.iter().map(|_| {
                (
                    at,
                    Event::Retract {
                        agent: group_of_lane[l].clone(),
                    },
                )
            }));
            k = end;
        }
    }
    notes.extend(clipped.into_iter().map(|i| {
        format!(
            "record {i} ({}) is retracted before its agent's next commit, which comes before a \
             record that depends on it committed",
            h.names.agent_name(h.records[i].agent)
        )
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::Names;

    #[test]
    fn copies_share_a_stem_and_distinct_agents_do_not() {
        assert_eq!(stem_of("planner_0"), "planner");
        assert_eq!(stem_of("ops#2"), "ops");
        assert_eq!(stem_of("worker.3"), "worker");
        assert_ne!(stem_of("memory_editor"), stem_of("memory_updater"));
        assert_eq!(stem_of("42"), "");
    }

    /// An invocation that ended in error, as a trace shows it: two aborted steps of `drafter`
    /// (a write, then the failed generation), and `sender` reading the write after both
    /// committed. Both retractions come after `sender` committed (a retraction hits the latest
    /// live record, so retracting the first before the second committed would have had to come
    /// before `sender` read it, and its vanilla runs would show no A3).
    #[test]
    fn consecutive_aborted_records_are_retracted_after_their_dependents() {
        use agentsim_models::record::OpRecord;
        let mut names = Names::new();
        let (drafter, sender) = (names.agent("drafter"), names.agent("sender"));
        let draft = names.cell("profile/refund-9");
        let mut h = History::new(names);
        let rec = |agent, read_time, write_time| OpRecord {
            agent,
            read_time,
            write_time,
            ..OpRecord::default()
        };
        h.records = vec![
            OpRecord {
                write_set: vec![draft],
                aborted: true,
                ..rec(drafter, 0, 1)
            },
            OpRecord {
                aborted: true,
                ..rec(drafter, 1, 2)
            },
            OpRecord {
                read_set: vec![draft],
                preds: vec![0],
                ..rec(sender, 2, 3)
            },
        ];
        let times = timeline::slots(&h);
        let (lane_of, lane_names) = timeline::lanes(&h, &times);
        let ops = lane_ops(&h, &lane_of, lane_names.len());
        let mut notes = Vec::new();
        let events = retractions(&h, &times, &lane_names, &ops, &mut notes);
        let retract = Event::Retract {
            agent: "drafter".into(),
        };
        assert_eq!(events.len(), 2, "{events:?}");
        for (at, e) in &events {
            assert_eq!(e, &retract);
            assert!(*at > times[2].commit_ms, "{events:?} {times:?}");
        }
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_history_with_no_records_has_no_steps_to_fit() {
        let h = History::new(Names::new());
        let obs = Observed {
            history: &h,
            times: None,
            source: "history empty.jsonl".into(),
            name: "fit-empty".into(),
            trials: 10,
            seed: 1,
        };
        assert_eq!(fit(&obs).err(), Some(FitError::NoSteps));
    }
}
