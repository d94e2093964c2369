//! The user's own run under the chosen stack: the trial that reproduced the observed order
//! under vanilla, replayed (same seed, same scheduling choices) under the stack, and what
//! became of each agent's operations: aborted and retried, dropped at the read and retried,
//! retracted, or delayed (its last event later than under vanilla).
//!
//! A replay under another stack follows the same draws until the stack's decisions diverge
//! from vanilla's; what it shows is this run under the stack, not every run.

use agentsim_models::runtime::Stack;
use agentsim_sim::engine::TraceEvent;
use agentsim_sim::replay_line::ReplayLine;
use agentsim_sim::runner::run_one;
use agentsim_sim::scenario::Scenario;
use agentsim_sim::schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the stack changed for one agent of the observed run.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    pub agent: String,
    pub records_vanilla: usize,
    pub records_stack: usize,
    pub aborted: u64,
    pub dropped: u64,
    pub retracted: u64,
    /// Its operations a retraction's cascade aborted (aborted records beyond its own aborts
    /// at commit), more than under vanilla.
    pub cascaded: u64,
    /// Records whose effects externalized in another order than under vanilla.
    pub reordered: u64,
    /// Records whose tool call resolved against another registry than under vanilla.
    pub resolved: u64,
    /// Its last event, in ms, under vanilla and under the stack.
    pub done_ms_vanilla: u64,
    pub done_ms_stack: u64,
}

impl Change {
    /// One line for people.
    pub fn text(&self) -> String {
        let mut what = Vec::new();
        if self.aborted > 0 {
            what.push(format!("aborted {}× at commit and retried", self.aborted));
        }
        if self.dropped > 0 {
            what.push(format!("dropped {}× at the read and retried", self.dropped));
        }
        if self.cascaded > 0 {
            what.push(format!(
                "{} operation(s) aborted by a retraction's cascade",
                self.cascaded
            ));
        }
        if self.reordered > 0 {
            what.push(format!(
                "effects of {} operation(s) externalized in issue order",
                self.reordered
            ));
        }
        if self.resolved > 0 {
            what.push(format!(
                "the tool call of {} operation(s) resolved against the registry it planned with",
                self.resolved
            ));
        }
        if self.records_stack < self.records_vanilla {
            what.push(format!(
                "{} of its {} operations never committed",
                self.records_vanilla - self.records_stack,
                self.records_vanilla
            ));
        }
        if self.done_ms_stack > self.done_ms_vanilla {
            what.push(format!(
                "delayed {} ms (done at {} ms, vanilla {} ms)",
                self.done_ms_stack - self.done_ms_vanilla,
                self.done_ms_stack,
                self.done_ms_vanilla
            ));
        }
        if what.is_empty() {
            what.push("unchanged".to_owned());
        }
        format!("{}: {}", self.agent, what.join("; "))
    }
}

#[derive(Default)]
struct Tally {
    records: usize,
    aborted: u64,
    dropped: u64,
    retracted: u64,
    /// Aborted records in the history (its own aborts at commit and a cascade's).
    aborted_records: u64,
    done_ms: u64,
    /// Per committed record, in order: its completion order and its commit registry.
    shapes: Vec<(
        Vec<agentsim_models::names::Cell>,
        agentsim_models::record::Registry,
    )>,
}

fn tally(
    sc: &Scenario,
    trace: &[TraceEvent],
    records: &[agentsim_models::record::OpRecord],
) -> BTreeMap<String, Tally> {
    let mut out: BTreeMap<String, Tally> = BTreeMap::new();
    for a in &sc.agents {
        out.entry(a.name.clone()).or_default();
    }
    for r in records {
        let name = sc.names.agent_name(r.agent);
        let t = out.entry(name).or_default();
        t.records += 1;
        t.aborted_records += u64::from(r.aborted);
        if !r.aborted {
            let co = r.co.iter().map(|(c, _)| *c).collect();
            t.shapes.push((co, r.write_registry.clone()));
        }
    }
    for e in trace {
        let t = out.entry(sc.names.agent_name(e.agent)).or_default();
        t.done_ms = t.done_ms.max(e.time_ms);
        if e.text.starts_with("dropped at read") {
            t.dropped += 1;
        } else if e.text.starts_with("abort #") {
            t.aborted += 1;
        } else if e.text.starts_with("retract #") {
            t.retracted += 1;
        }
    }
    out
}

/// The observed run (`line`, a vanilla trial) under `stack`, agent by agent.
pub fn under(sc: &Scenario, line: &ReplayLine, stack: Stack) -> anyhow::Result<Vec<Change>> {
    // The vanilla schedule's event count does not bind a run under another stack.
    let schedule = Schedule {
        events: 0,
        ..line.schedule.clone()
    };
    let v = run_one(sc, Stack::VANILLA, line.seed, line.trial, &schedule, None)?;
    let s = run_one(sc, stack, line.seed, line.trial, &schedule, None)?;
    let tv = tally(sc, &v.run.trace, &v.history.records);
    let ts = tally(sc, &s.run.trace, &s.history.records);
    Ok(tv
        .iter()
        .filter(|(_, t)| t.records > 0)
        .map(|(agent, t)| {
            let u = ts.get(agent);
            let pairs = || u.into_iter().flat_map(|u| t.shapes.iter().zip(&u.shapes));
            Change {
                reordered: pairs().filter(|(a, b)| a.0 != b.0).count() as u64,
                resolved: pairs().filter(|(a, b)| a.1 != b.1).count() as u64,
                agent: agent.clone(),
                records_vanilla: t.records,
                records_stack: u.map_or(0, |u| u.records),
                aborted: u.map_or(0, |u| u.aborted),
                dropped: u.map_or(0, |u| u.dropped),
                cascaded: u.map_or(0, |u| {
                    let cascade = |t: &Tally| t.aborted_records.saturating_sub(t.aborted);
                    cascade(u).saturating_sub(cascade(t))
                }),
                retracted: u.map_or(0, |u| u.retracted),
                done_ms_vanilla: t.done_ms,
                done_ms_stack: u.map_or(0, |u| u.done_ms),
            }
        })
        .collect())
}
