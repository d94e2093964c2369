//! Message sequence charts (CPL.md "Executions"): events, their causal order, `latest`, `prev`.
//!
//! An [`Msc`] keeps its events in one valid execution order (the order they were read or
//! built in); local indices, message matching and the valuation after each event follow from
//! it. [`Causal`] computes ≤ literally, as the reflexive–transitive closure of local order and
//! message edges, so the reference evaluator does not borrow the monitor's vector clocks.
//! A validated MSC is acyclic and every receive has exactly one earlier send addressed to its
//! lifeline; validation does not check that the valuations are plausible for any program.

use super::value::Value;
use std::collections::BTreeMap;

/// What an event does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A local step.
    Act,
    /// A local decision point (a guard is read here); brings no new knowledge.
    Choice,
    /// Sends message `msg` to lifeline `to`.
    Send {
        /// Message id, unique among sends.
        msg: u64,
        /// Target lifeline.
        to: usize,
    },
    /// Receives message `msg`.
    Recv {
        /// Message id of the matching send.
        msg: u64,
    },
}

/// One event: its lifeline, kind, and the variables it sets (others keep their values).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Index into [`Msc::lifelines`].
    pub lifeline: usize,
    /// What the event does.
    pub kind: Kind,
    /// `(variable index, new value)` pairs.
    pub set: Vec<(usize, Value)>,
}

/// Why a list of events is not an MSC.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MscError {
    /// An index is out of range.
    #[error("event {event}: {what} index {index} is out of range")]
    OutOfRange {
        /// Event position.
        event: usize,
        /// `lifeline`, `to` or `variable`.
        what: &'static str,
        /// The bad index.
        index: usize,
    },
    /// A send to its own lifeline.
    #[error("event {event}: a send to its own lifeline")]
    SelfSend {
        /// Event position.
        event: usize,
    },
    /// Two sends with one message id.
    #[error("event {event}: message {msg} is sent twice")]
    DuplicateSend {
        /// Event position.
        event: usize,
        /// Message id.
        msg: u64,
    },
    /// A receive with no earlier send, a second receive, or one on the wrong lifeline.
    #[error("event {event}: message {msg}: {why}")]
    BadReceive {
        /// Event position.
        event: usize,
        /// Message id.
        msg: u64,
        /// What is wrong.
        why: &'static str,
    },
}

/// A validated message sequence chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Msc {
    /// Lifeline names.
    pub lifelines: Vec<String>,
    /// Variable names.
    pub vars: Vec<String>,
    /// Events in a valid execution order.
    pub events: Vec<Event>,
    /// Local index (1-based) of every event.
    pub index: Vec<u32>,
    /// For a receive, the position of its send.
    pub send_of: Vec<Option<usize>>,
}

impl Msc {
    /// Validates `events` (in execution order) and derives indices and message matching.
    pub fn new(
        lifelines: Vec<String>,
        vars: Vec<String>,
        events: Vec<Event>,
    ) -> Result<Msc, MscError> {
        let mut count = vec![0u32; lifelines.len()];
        let mut index = Vec::with_capacity(events.len());
        let mut send_of = vec![None; events.len()];
        let mut sends: BTreeMap<u64, (usize, usize, bool)> = BTreeMap::new();
        for (i, ev) in events.iter().enumerate() {
            let range = |what, index, len: usize| match index < len {
                true => Ok(()),
                false => Err(MscError::OutOfRange {
                    event: i,
                    what,
                    index,
                }),
            };
            range("lifeline", ev.lifeline, lifelines.len())?;
            for &(v, _) in &ev.set {
                range("variable", v, vars.len())?;
            }
            count[ev.lifeline] += 1;
            index.push(count[ev.lifeline]);
            match ev.kind {
                Kind::Act | Kind::Choice => {}
                Kind::Send { msg, to } => {
                    range("to", to, lifelines.len())?;
                    if to == ev.lifeline {
                        return Err(MscError::SelfSend { event: i });
                    }
                    if sends.insert(msg, (i, to, false)).is_some() {
                        return Err(MscError::DuplicateSend { event: i, msg });
                    }
                }
                Kind::Recv { msg } => send_of[i] = Some(match_receive(&mut sends, i, ev, msg)?),
            }
        }
        Ok(Msc {
            lifelines,
            vars,
            events,
            index,
            send_of,
        })
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are no events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The previous event on the same lifeline, for every event.
    pub fn prev(&self) -> Vec<Option<usize>> {
        let mut out = vec![None; self.len()];
        let mut last = vec![None; self.lifelines.len()];
        for (i, ev) in self.events.iter().enumerate() {
            out[i] = last[ev.lifeline];
            last[ev.lifeline] = Some(i);
        }
        out
    }

    /// The full valuation of each event's lifeline after the event (`None`: never set).
    pub fn valuations(&self) -> Vec<Vec<Option<Value>>> {
        let mut store = vec![vec![None; self.vars.len()]; self.lifelines.len()];
        let mut out = Vec::with_capacity(self.len());
        for ev in &self.events {
            for &(v, x) in &ev.set {
                store[ev.lifeline][v] = Some(x);
            }
            out.push(store[ev.lifeline].clone());
        }
        out
    }

    /// Whether `order` (a permutation of event positions) is a linear extension of ≤.
    pub fn is_linear_extension(&self, order: &[usize]) -> bool {
        let mut seen = vec![false; self.len()];
        let prev = self.prev();
        for &e in order {
            if e >= self.len() || seen[e] {
                return false;
            }
            let ready = prev[e].is_none_or(|p| seen[p]) && self.send_of[e].is_none_or(|s| seen[s]);
            if !ready {
                return false;
            }
            seen[e] = true;
        }
        order.len() == self.len()
    }
}

fn match_receive(
    sends: &mut BTreeMap<u64, (usize, usize, bool)>,
    i: usize,
    ev: &Event,
    msg: u64,
) -> Result<usize, MscError> {
    let bad = |why| MscError::BadReceive { event: i, msg, why };
    let Some(entry) = sends.get_mut(&msg) else {
        return Err(bad("received before (or without) its send"));
    };
    if entry.1 != ev.lifeline {
        return Err(bad("received on a lifeline it was not sent to"));
    }
    if entry.2 {
        return Err(bad("received twice"));
    }
    entry.2 = true;
    Ok(entry.0)
}

/// The causal order ≤ of an MSC, computed literally by graph reachability.
#[derive(Clone, Debug)]
pub struct Causal {
    /// `leq[f * n + e]`: f ≤ e.
    leq: Vec<bool>,
    n: usize,
    /// Events of each lifeline in local order.
    by_lifeline: Vec<Vec<usize>>,
    prev: Vec<Option<usize>>,
}

impl Causal {
    /// Closes local order and message edges reflexively and transitively.
    pub fn new(msc: &Msc) -> Causal {
        let n = msc.len();
        let prev = msc.prev();
        let mut leq = vec![false; n * n];
        let mut stack = Vec::new();
        for e in 0..n {
            stack.push(e);
            while let Some(g) = stack.pop() {
                if leq[g * n + e] {
                    continue;
                }
                leq[g * n + e] = true;
                stack.extend(prev[g]);
                stack.extend(msc.send_of[g]);
            }
        }
        let mut by_lifeline = vec![Vec::new(); msc.lifelines.len()];
        for (i, ev) in msc.events.iter().enumerate() {
            by_lifeline[ev.lifeline].push(i);
        }
        Causal {
            leq,
            n,
            by_lifeline,
            prev,
        }
    }

    /// f ≤ e.
    pub fn leq(&self, f: usize, e: usize) -> bool {
        self.leq[f * self.n + e]
    }

    /// The events of lifeline `b`, in local order.
    pub fn events_of(&self, b: usize) -> &[usize] {
        &self.by_lifeline[b]
    }

    /// `latest(e, b)`: the b-event f ≤ e with the highest local index.
    pub fn latest(&self, e: usize, b: usize) -> Option<usize> {
        self.by_lifeline
            .get(b)?
            .iter()
            .rev()
            .copied()
            .find(|&f| self.leq(f, e))
    }

    /// `prev(e)`: the previous event on e's lifeline.
    pub fn prev(&self, e: usize) -> Option<usize> {
        self.prev[e]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(lifeline: usize, kind: Kind) -> Event {
        Event {
            lifeline,
            kind,
            set: Vec::new(),
        }
    }

    fn two_party() -> Msc {
        let names = vec!["A".to_owned(), "B".to_owned()];
        let events = vec![
            ev(0, Kind::Act),
            ev(0, Kind::Send { msg: 7, to: 1 }),
            ev(1, Kind::Act),
            ev(1, Kind::Recv { msg: 7 }),
            ev(0, Kind::Act),
        ];
        Msc::new(names, Vec::new(), events).unwrap()
    }

    #[test]
    fn latest_and_prev_follow_messages() {
        let msc = two_party();
        let c = Causal::new(&msc);
        assert_eq!(msc.index, vec![1, 2, 1, 2, 3]);
        assert_eq!(c.latest(3, 0), Some(1));
        assert_eq!(c.latest(2, 0), None);
        assert_eq!(c.latest(4, 1), None);
        assert_eq!(c.latest(4, 0), Some(4));
        assert_eq!(c.prev(3), Some(2));
        assert_eq!(c.prev(0), None);
        assert!(msc.is_linear_extension(&[2, 0, 1, 4, 3]));
        assert!(!msc.is_linear_extension(&[0, 2, 3, 1, 4]));
    }

    #[test]
    fn bad_receives_are_rejected() {
        let names = vec!["A".to_owned(), "B".to_owned()];
        let early = vec![
            ev(1, Kind::Recv { msg: 1 }),
            ev(0, Kind::Send { msg: 1, to: 1 }),
        ];
        let err = Msc::new(names.clone(), Vec::new(), early).unwrap_err();
        assert!(matches!(
            err,
            MscError::BadReceive {
                event: 0,
                msg: 1,
                ..
            }
        ));
        let wrong = vec![
            ev(0, Kind::Send { msg: 1, to: 1 }),
            ev(0, Kind::Recv { msg: 1 }),
        ];
        let err = Msc::new(names.clone(), Vec::new(), wrong).unwrap_err();
        assert!(matches!(err, MscError::BadReceive { event: 1, .. }));
        let own = vec![ev(0, Kind::Send { msg: 1, to: 0 })];
        assert_eq!(
            Msc::new(names, Vec::new(), own),
            Err(MscError::SelfSend { event: 0 })
        );
    }
}
