//! The replicated model's actions (SPEC §6) and how they read in a step list.
//!
//! `Read` is SPEC §1's `StartRead` plus the replica the agent asks for (the discipline may
//! route it elsewhere: the step list shows where it went); `Write` is `CompleteWrite` with
//! canonical values completing in issue order; `Apply` is the replication step, new in §6.
//! Replicas are named `primary`, `s1`, `s2`, … and values `NULL`, `v1`, … as in traces of the
//! single-store model. Text only: what an action does is `replicated::ReplicatedModel`'s.

use crate::config::Bounds;
use crate::engine::space::StepText;
use agentsim_models::names::Replica;
use agentsim_models::replica::PRIMARY;

/// One transition of the replicated model, every choice fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepAction {
    /// `StartRead(a)` of the cells in mask `read_set`, asking replica `replica` (0 = primary).
    Read {
        agent: u8,
        read_set: u8,
        replica: u8,
    },
    /// `CompleteWrite(a)` of the cells in mask `write_set`, values 4 bits per cell.
    Write {
        agent: u8,
        write_set: u8,
        values: u32,
    },
    /// Secondary `replica` applies its next entry of `cell`.
    Apply { replica: u8, cell: u8 },
}

impl StepText for RepAction {
    fn describe(&self, b: &Bounds) -> String {
        let cells = |mask: u8| {
            let names: Vec<_> = (0..b.cells)
                .filter(|c| mask & (1 << c) != 0)
                .map(|c| format!("c{}", c + 1))
                .collect();
            format!("{{{}}}", names.join(", "))
        };
        match *self {
            RepAction::Read {
                agent,
                read_set,
                replica,
            } => format!(
                "StartRead(a{}) rs={} asks {}",
                agent + 1,
                cells(read_set),
                replica_name(Replica(replica.into()))
            ),
            RepAction::Write {
                agent,
                write_set,
                values,
            } => {
                let wv: Vec<_> = (0..b.cells)
                    .filter(|c| write_set & (1 << c) != 0)
                    .map(|c| format!("c{}: {}", c + 1, value_name((values >> (4 * c)) & 0xF)))
                    .collect();
                format!("CompleteWrite(a{}) wv={{{}}}", agent + 1, wv.join(", "))
            }
            RepAction::Apply { replica, cell } => format!(
                "Apply({}, c{})",
                replica_name(Replica(replica.into())),
                cell + 1
            ),
        }
    }

    fn appends_record(&self) -> bool {
        matches!(self, RepAction::Write { .. })
    }
}

/// `primary`, `s1`, `s2`, …
pub fn replica_name(r: Replica) -> String {
    if r == PRIMARY {
        "primary".to_owned()
    } else {
        format!("s{}", r.0)
    }
}

/// `NULL`, `v1`, `v2`, …
pub fn value_name(v: u32) -> String {
    if v == 0 {
        "NULL".to_owned()
    } else {
        format!("v{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_read_in_spec_vocabulary() {
        let b = Bounds::paper(2, 2, 3);
        let read = RepAction::Read {
            agent: 1,
            read_set: 0b11,
            replica: 1,
        };
        assert_eq!(read.describe(&b), "StartRead(a2) rs={c1, c2} asks s1");
        let write = RepAction::Write {
            agent: 0,
            write_set: 0b10,
            values: 0x20,
        };
        assert_eq!(write.describe(&b), "CompleteWrite(a1) wv={c2: v2}");
        assert!(write.appends_record() && !read.appends_record());
        let apply = RepAction::Apply {
            replica: 2,
            cell: 0,
        };
        assert_eq!(apply.describe(&b), "Apply(s2, c1)");
        assert_eq!(replica_name(PRIMARY), "primary");
    }
}
