//! The paper model's fast property evaluation, on its unpacked records ([`Rec`]).
//!
//! The reference is [`Property::violated_by`] on decoded records; a test in `crate::models::paper`
//! holds the two equal on every reachable state of small spaces. The paper model has no aborts,
//! no `preds` and no replica metadata, so A3 and A4 cannot occur in it.

use crate::models::action::cell_value;
use crate::models::packed::Rec;
use crate::property::Property;
use agentsim_models::Anomaly;

/// Whether the paper-model log violates `p` (fast evaluation on unpacked records).
pub fn violated_by_packed(p: Property, log: &[Rec]) -> bool {
    match p {
        Property::Never(a) => match a {
            Anomaly::A1 => fast_a1(log),
            Anomaly::A2 => log.iter().any(|r| {
                r.tool != 0 && r.read_registry & (1 << (r.tool - 1)) != 0 && {
                    r.write_registry & (1 << (r.tool - 1)) == 0
                }
            }),
            Anomaly::A3 => false,
            Anomaly::A3Residue => fast_residue(log),
            Anomaly::A6 => log.iter().any(|r| r.io.len >= 2 && r.io != r.co),
            // Paper-model records carry no replica metadata.
            Anomaly::A4 => false,
        },
        Property::L1Struct => !fast_l1(log),
        Property::A1Snapshot => fast_a1(log) && fast_l1(log),
    }
}

fn fast_a1(log: &[Rec]) -> bool {
    log.iter().any(|ri| {
        log.iter().any(|rj| {
            let shared = ri.read_set & rj.write_set;
            ri.agent != rj.agent
                && shared != 0
                && ri.read_time < rj.write_time
                && rj.write_time < ri.write_time
                && (0..8).any(|c| {
                    shared & (1 << c) != 0
                        && cell_value(ri.read_values, c) != cell_value(rj.write_values, c)
                })
        })
    })
}

/// The latest value written to `c` by a record other than `skip` with write_time ≤ `time`.
fn latest(log: &[Rec], skip: usize, c: u32, time: u32) -> Option<u32> {
    let mut best: Option<(u32, u32)> = None;
    for (k, rk) in log.iter().enumerate() {
        if k != skip
            && rk.write_set & (1 << c) != 0
            && rk.write_time <= time
            && best.is_none_or(|(t, _)| t <= rk.write_time)
        {
            best = Some((rk.write_time, cell_value(rk.write_values, c)));
        }
    }
    best.map(|(_, v)| v)
}

fn fast_l1(log: &[Rec]) -> bool {
    log.iter().enumerate().all(|(j, rj)| {
        (0..8)
            .filter(|c| rj.read_set & (1 << c) != 0)
            .all(|c| latest(log, j, c, rj.read_time).unwrap_or(0) == cell_value(rj.read_values, c))
    })
}

fn fast_residue(log: &[Rec]) -> bool {
    log.iter().enumerate().any(|(j, rj)| {
        (0..8).filter(|c| rj.read_set & (1 << c) != 0).any(|c| {
            let v = cell_value(rj.read_values, c);
            v != 0
                && !log.iter().enumerate().any(|(k, rk)| {
                    k != j
                        && rk.write_set & (1 << c) != 0
                        && cell_value(rk.write_values, c) == v
                        && rk.write_time <= rj.read_time
                })
        })
    })
}
