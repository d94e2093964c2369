//! The observed run on one clock: when each record read and committed, in milliseconds from
//! the start of the run, and which sequential *lane* (one simulated agent) ran it.
//!
//! With wall times (an OpenTelemetry trace) the clock is the trace's. A history carries only
//! log positions, so each position becomes [`SLOT_MS`]: record `i` commits at `(i + 1) ·
//! SLOT_MS`, and a read with `read_time = r` happens inside the gap after the last commit it
//! sees: gap `g` is the number of earlier records with `write_time ≤ r` (SPEC §2: a write at
//! the read's instant is visible to it), at `g · SLOT_MS + READ_OFFSET_MS` plus a small step
//! per earlier read of that gap. Log times need not be consecutive (a gap in them is no
//! record), and a read at its own record's write instant still reads before that commit. Reads of one
//! gap are ordered by how far their registry has moved from the first one seen (removed tools,
//! raised versions), so a registry change can fall between them. The slot clock keeps the
//! log's order and nothing else: its durations are not observations.

use agentsim_models::record::OpRecord;
use agentsim_models::History;
use std::collections::BTreeMap;

/// Milliseconds per log position on the slot clock.
pub const SLOT_MS: u64 = 1000;
/// Where in its gap the first read of the gap falls.
const READ_OFFSET_MS: u64 = 100;
/// The step between reads of one gap.
const READ_STEP_MS: u64 = 10;
/// The most reads of one gap placed apart; later ones share the last place.
const READS_PER_GAP_MAX: u64 = 80;

/// What the input said about one record's timing and tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    pub read_ms: u64,
    pub commit_ms: u64,
    /// How long its effects (tool calls, memory writes) ran before the commit.
    pub effect_ms: Option<u64>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// The slot clock of a history (see the module docs).
pub fn slots(h: &History) -> Vec<Timing> {
    let progress: Vec<u64> = h.records.iter().map(|r| registry_progress(h, r)).collect();
    let mut by_gap: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for i in 0..h.records.len() {
        // Write times ascend (the history validated), so the records seen are a prefix.
        by_gap.entry(super::seen(h, i)).or_default().push(i);
    }
    let mut out = vec![Timing::default(); h.records.len()];
    for (gap, mut members) in by_gap {
        members.sort_by_key(|&i| (progress[i], i));
        for (rank, i) in members.into_iter().enumerate() {
            let rank = (rank as u64).min(READS_PER_GAP_MAX);
            out[i].read_ms = gap * SLOT_MS + READ_OFFSET_MS + rank * READ_STEP_MS;
        }
    }
    for (i, t) in out.iter_mut().enumerate() {
        // Gap `g ≤ i` and the last place in a gap is before its end: the read precedes the commit.
        t.commit_ms = (i as u64 + 1) * SLOT_MS;
    }
    out
}

/// How far a record's read registry has moved from the tools of the whole history: a tool
/// absent counts one, each signature version counts one.
fn registry_progress(h: &History, r: &OpRecord) -> u64 {
    let all = h
        .records
        .iter()
        .flat_map(|r| {
            r.read_registry
                .entries()
                .iter()
                .chain(r.write_registry.entries())
        })
        .map(|e| e.tool)
        .collect::<std::collections::BTreeSet<_>>();
    if r.read_registry.entries().is_empty() {
        return 0;
    }
    let present = r.read_registry.entries().len() as u64;
    let versions: u64 = r
        .read_registry
        .entries()
        .iter()
        .map(|e| u64::from(e.version))
        .sum();
    (all.len() as u64 - present.min(all.len() as u64)) + versions
}

/// Puts each record on a lane: the agent's first lane whose last commit is not after the
/// record's read (an agent runs one operation at a time), else a new lane `agent#k`.
/// Returns each record's lane index and the lanes' names, in order of first use.
pub fn lanes(h: &History, times: &[Timing]) -> (Vec<usize>, Vec<String>) {
    let taken: std::collections::BTreeSet<String> = h
        .records
        .iter()
        .map(|r| h.names.agent_name(r.agent))
        .collect();
    let mut names: Vec<String> = Vec::new();
    let mut last_commit: Vec<u64> = Vec::new();
    let mut of_agent: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut lane_of = Vec::with_capacity(h.records.len());
    for (i, r) in h.records.iter().enumerate() {
        let agent = h.names.agent_name(r.agent);
        let lanes = of_agent.entry(agent.clone()).or_default();
        let free = lanes
            .iter()
            .copied()
            .find(|&l| last_commit[l] <= times[i].read_ms);
        let lane = match free {
            Some(l) => l,
            None => {
                let mut name = agent.clone();
                let mut k = lanes.len() + 1;
                while k > 1 && (taken.contains(&name) || names.contains(&name)) {
                    name = format!("{agent}#{k}");
                    k += 1;
                }
                names.push(name);
                last_commit.push(0);
                lanes.push(names.len() - 1);
                names.len() - 1
            }
        };
        last_commit[lane] = times[i].commit_ms;
        lane_of.push(lane);
    }
    (lane_of, names)
}
