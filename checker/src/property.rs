//! The checked properties: "never Ak" over the state's log (SPEC §3), plus `L1_struct`.
//!
//! Each property has a reference evaluation on decoded [`OpRecord`]s through the spec-form
//! detectors of `agentsim_models::detect::spec`, and the paper model adds a fast evaluation on
//! unpacked records that a test holds equal to the reference on every reachable state of small
//! spaces. A property that holds was checked on every reachable state at the given bounds;
//! nothing is claimed beyond them.

use crate::action::cell_value;
use crate::packed::Rec;
use agentsim_models::detect::{a4, spec};
use agentsim_models::record::OpRecord;

/// A property the checker can check; each is an invariant ("always").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// Never A1 (stale generation).
    A1,
    /// Never A2 (phantom tool).
    A2,
    /// Never A3 (causal cascade, preds form).
    A3,
    /// Never A3 in residue form (a read value no committed writer produced).
    A3Residue,
    /// Never A6 (tool-effect reordering).
    A6,
    /// Always `L1_struct` (every read equals the latest committed write).
    L1Struct,
    /// Never (A1 ∧ L1_struct): its counterexample shows `L1_struct` does not imply ¬A1.
    A1Snapshot,
    /// Never A4 (split view, SPEC §6): meaningful on the replicated model only, whose records
    /// carry `read_meta`; on the single-store models it holds vacuously.
    A4,
}

impl Property {
    /// Every property, in report order.
    pub const ALL: [Property; 8] = [
        Property::A1,
        Property::A2,
        Property::A3,
        Property::A3Residue,
        Property::A6,
        Property::L1Struct,
        Property::A1Snapshot,
        Property::A4,
    ];

    /// What `--property all` selects: the four anomalies.
    pub const ANOMALIES: [Property; 4] = [Property::A1, Property::A2, Property::A3, Property::A6];

    /// The CLI and report name.
    pub fn name(self) -> &'static str {
        match self {
            Property::A1 => "A1",
            Property::A2 => "A2",
            Property::A3 => "A3",
            Property::A3Residue => "A3_residue",
            Property::A6 => "A6",
            Property::L1Struct => "L1_struct",
            Property::A1Snapshot => "A1_snapshot",
            Property::A4 => "A4",
        }
    }

    /// Parses a `--property` list: names, `all` (A1,A2,A3,A6) or `none`.
    pub fn parse_list(s: &str) -> Result<Vec<Property>, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "all" => out.extend(Property::ANOMALIES),
                "none" => {}
                _ => match Property::ALL
                    .iter()
                    .find(|p| p.name().eq_ignore_ascii_case(part))
                {
                    Some(&p) => out.push(p),
                    None => {
                        let names: Vec<_> = Property::ALL.iter().map(|p| p.name()).collect();
                        return Err(format!(
                            "--property: unknown property `{part}`; expected one of {}, all, none",
                            names.join(", ")
                        ));
                    }
                },
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// Whether the log violates this property (reference evaluation, spec detectors).
    pub fn violated_by(self, log: &[OpRecord]) -> bool {
        match self {
            Property::A1 => !spec::a1(log).is_empty(),
            Property::A2 => !spec::a2(log).is_empty(),
            Property::A3 => !spec::a3(log).is_empty(),
            Property::A3Residue => !spec::a3_residue(log).is_empty(),
            Property::A6 => !spec::a6(log).is_empty(),
            Property::L1Struct => !spec::l1_struct(log).is_empty(),
            Property::A1Snapshot => !spec::a1(log).is_empty() && spec::l1_struct(log).is_empty(),
            Property::A4 => !a4::spec(log).is_empty(),
        }
    }

    /// Fast evaluation on unpacked paper-model records (nothing aborted, no preds).
    pub fn violated_by_packed(self, log: &[Rec]) -> bool {
        match self {
            Property::A1 => fast_a1(log),
            Property::A2 => log.iter().any(|r| {
                r.tool != 0 && r.read_registry & (1 << (r.tool - 1)) != 0 && {
                    r.write_registry & (1 << (r.tool - 1)) == 0
                }
            }),
            Property::A3 => false,
            Property::A3Residue => fast_residue(log),
            Property::A6 => log.iter().any(|r| r.io.len >= 2 && r.io != r.co),
            Property::L1Struct => !fast_l1(log),
            Property::A1Snapshot => fast_a1(log) && fast_l1(log),
            // Paper-model records carry no replica metadata.
            Property::A4 => false,
        }
    }
}

/// A set of properties as a bit mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PropSet(u8);

impl PropSet {
    pub fn of(props: &[Property]) -> PropSet {
        PropSet(props.iter().fold(0, |m, p| m | p.bit()))
    }
    pub fn contains(self, p: Property) -> bool {
        self.0 & p.bit() != 0
    }
    pub fn insert(&mut self, p: Property) {
        self.0 |= p.bit();
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn minus(self, other: PropSet) -> PropSet {
        PropSet(self.0 & !other.0)
    }
    pub fn union(self, other: PropSet) -> PropSet {
        PropSet(self.0 | other.0)
    }
    pub fn bits(self) -> u8 {
        self.0
    }
    pub fn from_bits(bits: u8) -> PropSet {
        PropSet(bits)
    }
    pub fn iter(self) -> impl Iterator<Item = Property> {
        Property::ALL.into_iter().filter(move |&p| self.contains(p))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        assert_eq!(
            Property::parse_list("all").unwrap(),
            Property::ANOMALIES.to_vec()
        );
        assert_eq!(Property::parse_list("none").unwrap(), vec![]);
        assert_eq!(
            Property::parse_list("a6,A1,A1").unwrap(),
            vec![Property::A1, Property::A6]
        );
        let e = Property::parse_list("A5").unwrap_err();
        assert!(e.contains("A5") && e.contains("A3_residue"), "{e}");
    }

    #[test]
    fn prop_set_ops() {
        let s = PropSet::of(&[Property::A1, Property::A6]);
        assert!(s.contains(Property::A6));
        assert!(!s.contains(Property::A2));
        let t = s.minus(PropSet::of(&[Property::A1]));
        assert_eq!(t.iter().collect::<Vec<_>>(), vec![Property::A6]);
    }
}
