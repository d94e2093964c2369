//! The checked properties: "never A" for each anomaly of the catalogue (SPEC §3, §6), plus
//! `L1_struct` and the snapshot-insufficiency property.
//!
//! A property is named through [`Anomaly`], the one catalogue every layer matches, so adding an
//! anomaly is a compile error here until it is given a property and an evaluation. The
//! reference evaluation ([`Property::violated_by`]) runs the spec-form detectors of
//! `agentsim_models::detect` on decoded [`OpRecord`]s; the paper model adds a fast evaluation
//! on its own unpacked records (`crate::models::paper_props`) that a test holds equal to this one on
//! every reachable state of small spaces. A property that holds was checked on every reachable
//! state at the given bounds; nothing is claimed beyond them.

use agentsim_models::detect::{a4, spec};
use agentsim_models::record::OpRecord;
use agentsim_models::Anomaly;
use std::cmp::Ordering;

/// A property the checker can check; each is an invariant ("always").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Never the anomaly. `Never(A4)` is meaningful on the replicated model only, whose records
    /// carry `read_meta`; on the single-store models it holds vacuously.
    Never(Anomaly),
    /// Always `L1_struct` (every read equals the latest committed write).
    L1Struct,
    /// Never (A1 ∧ L1_struct): its counterexample shows `L1_struct` does not imply ¬A1.
    A1Snapshot,
}

/// A name that is not a property (empty when a whole list was blank).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", unknown(.0))]
pub struct UnknownProperty(pub String);

fn unknown(name: &str) -> String {
    let names = Property::names();
    if name.is_empty() {
        format!("an empty property list; name some of {names}, or all, or none")
    } else {
        format!("unknown property `{name}`; expected one of {names}, all, none")
    }
}

impl Property {
    /// Never A1.
    pub const A1: Property = Property::Never(Anomaly::A1);
    /// Never A2.
    pub const A2: Property = Property::Never(Anomaly::A2);
    /// Never A3 (preds form).
    pub const A3: Property = Property::Never(Anomaly::A3);
    /// Never A3 in residue form.
    pub const A3_RESIDUE: Property = Property::Never(Anomaly::A3Residue);
    /// Never A4 (split view).
    pub const A4: Property = Property::Never(Anomaly::A4);
    /// Never A6.
    pub const A6: Property = Property::Never(Anomaly::A6);

    /// Every property, in report order (the order of [`Property::index`]).
    pub const ALL: [Property; 8] = [
        Property::A1,
        Property::A2,
        Property::A3,
        Property::A3_RESIDUE,
        Property::A6,
        Property::L1Struct,
        Property::A1Snapshot,
        Property::A4,
    ];

    /// What `--property all` selects: the four lattice anomalies.
    pub const ANOMALIES: [Property; Anomaly::LATTICE.len()] = {
        let mut out = [Property::L1Struct; Anomaly::LATTICE.len()];
        let mut k = 0;
        while k < out.len() {
            out[k] = Property::Never(Anomaly::LATTICE[k]);
            k += 1;
        }
        out
    };

    /// The position in [`Property::ALL`]: the report order and the bit in a [`PropSet`].
    pub const fn index(self) -> u8 {
        match self {
            Property::Never(a) => match a {
                Anomaly::A1 => 0,
                Anomaly::A2 => 1,
                Anomaly::A3 => 2,
                Anomaly::A3Residue => 3,
                Anomaly::A6 => 4,
                Anomaly::A4 => 7,
            },
            Property::L1Struct => 5,
            Property::A1Snapshot => 6,
        }
    }

    /// The report name: the anomaly's name for `Never`, else `L1_struct` / `A1_snapshot`.
    pub fn name(self) -> &'static str {
        match self {
            Property::Never(a) => a.name(),
            Property::L1Struct => "L1_struct",
            Property::A1Snapshot => "A1_snapshot",
        }
    }

    /// The anomaly a `Never` property excludes.
    pub fn anomaly(self) -> Option<Anomaly> {
        match self {
            Property::Never(a) => Some(a),
            Property::L1Struct | Property::A1Snapshot => None,
        }
    }

    fn names() -> String {
        let names: Vec<&str> = Property::ALL.iter().map(|p| p.name()).collect();
        names.join(", ")
    }

    /// Parses one name (ignoring ASCII case).
    pub fn parse(s: &str) -> Result<Property, UnknownProperty> {
        Property::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownProperty(s.trim().to_owned()))
    }

    /// Parses a comma-separated list: names, `all` (A1,A2,A3,A6) or `none`; sorted, unique.
    /// A blank list is an error: `none` says "no property" explicitly.
    pub fn parse_list(s: &str) -> Result<Vec<Property>, UnknownProperty> {
        if s.trim().is_empty() {
            return Err(UnknownProperty(String::new()));
        }
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.to_ascii_lowercase().as_str() {
                "all" => out.extend(Property::ANOMALIES),
                "none" => {}
                _ => out.push(Property::parse(part)?),
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn bit(self) -> u8 {
        1 << self.index()
    }

    /// Whether the log violates this property (reference evaluation, spec detectors).
    pub fn violated_by(self, log: &[OpRecord]) -> bool {
        match self {
            Property::Never(a) => match a {
                Anomaly::A1 => !spec::a1(log).is_empty(),
                Anomaly::A2 => !spec::a2(log).is_empty(),
                Anomaly::A3 => !spec::a3(log).is_empty(),
                Anomaly::A3Residue => !spec::a3_residue(log).is_empty(),
                Anomaly::A4 => !a4::spec(log).is_empty(),
                Anomaly::A6 => !spec::a6(log).is_empty(),
            },
            Property::L1Struct => !spec::l1_struct(log).is_empty(),
            Property::A1Snapshot => !spec::a1(log).is_empty() && spec::l1_struct(log).is_empty(),
        }
    }
}

// [`Property::ALL`] lists every property once, each at its [`Property::index`]: a new anomaly
// is a compile error here until it is listed.
const _: () = {
    assert!(Property::ALL.len() == Anomaly::ALL.len() + 2);
    let mut k = 0;
    while k < Property::ALL.len() {
        assert!(Property::ALL[k].index() as usize == k);
        k += 1;
    }
};

impl PartialOrd for Property {
    fn partial_cmp(&self, other: &Property) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Property {
    fn cmp(&self, other: &Property) -> Ordering {
        self.index().cmp(&other.index())
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
        let e = Property::parse_list("A5").unwrap_err().to_string();
        assert!(e.contains("A5") && e.contains("A3_residue"), "{e}");
    }

    #[test]
    fn every_anomaly_has_a_property_and_all_is_in_index_order() {
        for (k, p) in Property::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(p.index()), k, "{p:?}");
        }
        for a in Anomaly::ALL {
            assert!(Property::ALL.contains(&Property::Never(a)), "{a}");
            assert_eq!(Property::Never(a).name(), a.name());
        }
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
