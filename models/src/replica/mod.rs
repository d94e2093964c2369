//! The replicated store of SPEC §6, where split views (A4) live.
//!
//! The single store of SPEC §1 has one memory, so two reads at the same logical time cannot
//! disagree. Here a **primary** keeps an append-only, monotone-versioned log per cell
//! ([`PrimaryLog`]) and `k` **secondaries** apply that log in order, each lagging by at most
//! `max_lag` entries per cell ([`ReplicaSet`]). A read goes to one replica, chosen by the
//! agent and then routed by the runtime's [`ReadDiscipline`]; it records
//! `(replica, committed version, value)` in the op's [`ReadMeta`](crate::record::ReadMeta).
//! [`Replicated`] drives operations against it and emits ordinary [`OpRecord`]s, so the
//! single-store detectors still apply and the A4 detector ([`crate::detect::a4`]) reads the
//! metadata.
//!
//! ## What each discipline admits (proved by exhaustive exploration in `tests/replica_*.rs`)
//! | discipline       | A4 split view | read-your-writes violation | monotonic-reads violation |
//! |------------------|---------------|----------------------------|---------------------------|
//! | `any-replica`    | admits        | admits                     | admits                    |
//! | `session`        | admits        | prevents                   | prevents                  |
//! | `primary-pinned` | prevents      | prevents                   | prevents                  |
//!
//! Why: a pinned read serves the primary's head, so its value is a function of the cell's
//! committed version and two reads at one version cannot differ. A session read goes to the
//! requested replica only if that replica has applied the agent's own writes and everything
//! the agent already saw (else to the primary), which rules out the two session anomalies but
//! not A4: another agent's session may sit on a lagging secondary (cross-agent split), and
//! even one agent may read a lagging secondary and then the primary at the same committed
//! version (reads move forward, but from NULL to `v`). With `max_lag = 0` every discipline
//! prevents all three. Writes go to the primary with last-writer-wins (vanilla) semantics, so
//! A1 and the other single-store anomalies are admitted as under `vanilla`; the disciplines
//! are about reads only.
//!
//! What a pass does not prove: the model has no failover, no divergent (Byzantine) replicas,
//! and each secondary applies each cell's log independently (cross-cell causality is not
//! modelled).

pub mod log;
pub mod runtime;
pub mod session;
pub mod set;

pub use log::{Entry, PrimaryLog};
pub use runtime::{route_read, Observation, Replicated};
pub use session::{session_violations, SessionAnomaly, SessionViolation};
pub use set::ReplicaSet;

use crate::names::Replica;

/// The primary's replica id in the model.
pub const PRIMARY: Replica = Replica(0);

/// How the runtime routes a read the agent asked to send to some replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadDiscipline {
    /// The read goes where the agent asked: any replica, however far behind.
    AnyReplica,
    /// Read-your-writes and monotonic reads: the asked replica if it has applied, for every
    /// cell read, the agent's own writes and every version the agent was already served;
    /// otherwise the primary.
    Session,
    /// Every read goes to the primary.
    PrimaryPinned,
}

impl ReadDiscipline {
    /// All three, weakest first.
    pub const ALL: [ReadDiscipline; 3] = [
        ReadDiscipline::AnyReplica,
        ReadDiscipline::Session,
        ReadDiscipline::PrimaryPinned,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            ReadDiscipline::AnyReplica => "any-replica",
            ReadDiscipline::Session => "session",
            ReadDiscipline::PrimaryPinned => "primary-pinned",
        }
    }

    /// The short spellings `check --read-discipline` published: `any` and `pinned`.
    pub fn alias(self) -> Option<&'static str> {
        match self {
            ReadDiscipline::AnyReplica => Some("any"),
            ReadDiscipline::Session => None,
            ReadDiscipline::PrimaryPinned => Some("pinned"),
        }
    }

    /// Parses a name or its short alias; the error lists the valid names.
    pub fn parse(s: &str) -> Result<ReadDiscipline, UnknownDiscipline> {
        ReadDiscipline::ALL
            .into_iter()
            .find(|d| d.name() == s || d.alias() == Some(s))
            .ok_or_else(|| UnknownDiscipline(s.to_owned()))
    }
}

/// A name that is no read discipline.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown read discipline `{0}` (valid: any-replica, session, primary-pinned; any and pinned for short)")]
pub struct UnknownDiscipline(pub String);

impl std::str::FromStr for ReadDiscipline {
    type Err = UnknownDiscipline;

    fn from_str(s: &str) -> Result<ReadDiscipline, UnknownDiscipline> {
        ReadDiscipline::parse(s)
    }
}

impl std::fmt::Display for ReadDiscipline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in ReadDiscipline::ALL {
            assert_eq!(ReadDiscipline::parse(d.name()), Ok(d));
        }
        assert_eq!("any".parse(), Ok(ReadDiscipline::AnyReplica));
        assert_eq!("pinned".parse(), Ok(ReadDiscipline::PrimaryPinned));
        let e = ReadDiscipline::parse("nearest").unwrap_err().to_string();
        assert!(e.contains("any-replica, session, primary-pinned"), "{e}");
    }
}
