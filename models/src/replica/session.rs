//! The session guarantees that separate the `session` discipline from `any-replica`.
//!
//! Two classic client-centric guarantees, checked over the replicated store's
//! [`Observation`]s (which carry the version a replica actually *served*, not only the
//! committed version that histories record):
//! * **read-your-writes**: a read of `c` by agent `a` is served at least the version of `a`'s
//!   latest own write to `c` committed at or before the read;
//! * **monotonic reads**: a read of `c` by `a` is served at least every version of `c` that
//!   `a` was served before.
//!
//! The check recomputes both floors from the primary log's writers and the observation order,
//! independently of the runtime's own bookkeeping. A4 is not a session anomaly: two agents
//! (or one agent moving forward) can split without breaking either guarantee. A clean result
//! says these two guarantees held on this run, nothing about other session guarantees
//! (writes-follow-reads, monotonic writes).

use super::log::PrimaryLog;
use super::runtime::Observation;
use crate::names::{Agent, Cell};
use std::collections::BTreeMap;

/// Which session guarantee a read broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SessionAnomaly {
    /// The agent did not see its own earlier write.
    ReadYourWrites,
    /// The agent was served an older version than it had already seen.
    MonotonicReads,
}

impl SessionAnomaly {
    /// The short name used in tables.
    pub fn name(self) -> &'static str {
        match self {
            SessionAnomaly::ReadYourWrites => "RYW",
            SessionAnomaly::MonotonicReads => "MR",
        }
    }
}

/// Observation `observation` broke `kind`: it was served `served` below `floor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionViolation {
    pub observation: usize,
    pub kind: SessionAnomaly,
    pub served: u64,
    pub floor: u64,
}

/// Every violation of read-your-writes and monotonic reads, sorted.
pub fn session_violations(obs: &[Observation], primary: &PrimaryLog) -> Vec<SessionViolation> {
    let mut seen: BTreeMap<(Agent, Cell), u64> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, o) in obs.iter().enumerate() {
        let own = primary
            .entries(o.cell)
            .iter()
            .filter(|e| e.writer == o.agent && e.commit_time <= o.read_time)
            .map(|e| e.version)
            .max()
            .unwrap_or(0);
        let mut flag = |kind, floor: u64| {
            if o.served < floor {
                out.push(SessionViolation {
                    observation: i,
                    kind,
                    served: o.served,
                    floor,
                });
            }
        };
        flag(SessionAnomaly::ReadYourWrites, own);
        let before = seen.entry((o.agent, o.cell)).or_insert(0);
        flag(SessionAnomaly::MonotonicReads, *before);
        *before = (*before).max(o.served);
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{Replica, Value};

    fn obs(agent: u32, served: u64, read_time: u64) -> Observation {
        Observation {
            agent: Agent(agent),
            cell: Cell(0),
            requested: Replica(1),
            replica: Replica(1),
            committed: 2,
            served,
            value: Value(served as u32),
            read_time,
        }
    }

    #[test]
    fn both_guarantees_are_recomputed_from_the_log() {
        let mut log = PrimaryLog::new();
        log.append(Cell(0), Value(1), Agent(0), 1);
        log.append(Cell(0), Value(2), Agent(1), 2);
        // a0 wrote version 1 at time 1: serving it version 0 at time 3 breaks RYW.
        // a1 then reads version 2 and later version 1: MR.
        let run = [obs(0, 0, 3), obs(1, 2, 3), obs(1, 1, 4), obs(0, 1, 5)];
        let v = session_violations(&run, &log);
        let kinds: Vec<_> = v.iter().map(|x| (x.observation, x.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (0, SessionAnomaly::ReadYourWrites),
                (2, SessionAnomaly::ReadYourWrites),
                (2, SessionAnomaly::MonotonicReads),
            ]
        );
        assert_eq!(v[2].floor, 2);
    }
}
