//! What both span mappers (GenAI, [`super::map`]; OpenInference, `crate::openinference`) do
//! alike with the step spans of one agent invocation: the time the group covers, the name of
//! a group no agent span owns, and the actor an invocation is when another of its agent is
//! still open.

use super::lean::LeanSpan;
use super::span::Span;
use std::collections::BTreeMap;

/// A span's start and end (Unix ns), whichever reader made it.
pub trait Timed {
    fn start_end(&self) -> (u64, u64);
}

impl Timed for Span {
    fn start_end(&self) -> (u64, u64) {
        (self.start, self.end)
    }
}

impl Timed for LeanSpan {
    fn start_end(&self) -> (u64, u64) {
        (self.start, self.end)
    }
}

/// The time a group of step spans covers: its owning agent span's, else its members' hull.
pub fn extent<S: Timed>(spans: &[S], owner: Option<usize>, members: &[usize]) -> (u64, u64) {
    let at = |m: &usize| spans[*m].start_end();
    match owner {
        Some(a) => spans[a].start_end(),
        None => (
            members.iter().map(|m| at(m).0).min().unwrap_or(0),
            members.iter().map(|m| at(m).1).max().unwrap_or(0),
        ),
    }
}

/// The agent of a group that no agent span owns: `trace:` and the trace id's first 8 chars.
pub fn unowned(trace: &str) -> String {
    format!("trace:{}", &trace[..trace.len().min(8)])
}

/// The actor slots of each agent. One actor has one pending operation (SPEC §1): overlapping
/// invocations of one agent are different actors, each in the lowest slot free at its start.
#[derive(Debug, Default)]
pub struct Slots(BTreeMap<String, Vec<u64>>);

impl Slots {
    /// Takes the lowest slot of agent `base` free at `start` until `end`; returns it, and
    /// whether another invocation of `base` is still open at `start` (in any slot).
    pub fn take(&mut self, base: &str, start: u64, end: u64) -> (usize, bool) {
        let ends = self.0.entry(base.to_owned()).or_default();
        let k = match ends.iter().position(|&e| e <= start) {
            Some(k) => k,
            None => {
                ends.push(0);
                ends.len() - 1
            }
        };
        let overlaps = ends.iter().enumerate().any(|(j, &e)| j != k && e > start);
        ends[k] = end;
        (k, overlaps)
    }
}

/// The actor in slot `k` of agent `base`: `base`, then `base#2`, `base#3`, ….
pub fn actor(base: &str, k: usize) -> String {
    match k {
        0 => base.to_owned(),
        _ => format!("{base}#{}", k + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_invocations_of_one_agent_are_different_actors() {
        let mut s = Slots::default();
        assert_eq!(s.take("ops", 0, 10), (0, false));
        assert_eq!(s.take("ops", 5, 20), (1, true));
        assert_eq!(s.take("qa", 6, 7), (0, false));
        // Slot 0 is free again at 10; slot 1 is still open.
        assert_eq!(s.take("ops", 12, 30), (0, true));
        assert_eq!(s.take("ops", 40, 50), (0, false));
        assert_eq!(
            (actor("ops", 0), actor("ops", 1)),
            ("ops".into(), "ops#2".into())
        );
        assert_eq!(unowned("0123456789abcdef"), "trace:01234567");
        assert_eq!(unowned("ab"), "trace:ab");
    }
}
