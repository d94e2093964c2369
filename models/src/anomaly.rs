//! The anomaly catalogue: every anomaly agentsim detects, as one type that every layer matches.
//!
//! Detectors ([`crate::detect::Report::has`]), the checker's properties, the simulator's
//! metrics, the tables, the `--json` keys and `--fail-on` all name anomalies through
//! [`Anomaly`], and each of them decides what to do with an anomaly in an exhaustive `match`.
//! Adding a variant is therefore a compile error at every place that must handle it: that is
//! the point of keeping one catalogue (see CONTRIBUTING.md, "A new anomaly").
//!
//! The catalogue holds the four anomalies of the lattice (SPEC §4: A1, A2, A3, A6), the residue
//! form of A3 (SPEC §3: decidable on a flat trace without `preds`; it over-approximates A3 and
//! is named apart) and A4 (split view, SPEC §6: meaningful only on histories whose reads carry
//! replica metadata, and outside the lattice). What an anomaly *is* lives in the spec-form
//! detectors of [`crate::detect::spec`] and [`crate::detect::a4`]; this file only names them.

use std::fmt;
use std::str::FromStr;

/// An anomaly of the catalogue (SPEC §3, §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Anomaly {
    /// A1 stale-generation: another agent committed a different value to a cell read while the
    /// reader was generating.
    A1,
    /// A2 phantom-tool: the planned tool left the registry (or changed) before the write.
    A2,
    /// A3 causal-cascade, preds form: a live record with an aborted predecessor.
    A3,
    /// A3's residue form: a read of a value that no committed record had written.
    A3Residue,
    /// A4 split-view (replicated store): two reads at one committed version saw different values.
    A4,
    /// A6 tool-effect reordering: effects completed in an order other than their issue order.
    A6,
}

/// Where an anomaly can be decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// On every history (single store or replicated).
    Any,
    /// Only on histories whose reads carry replica metadata (`read_replica`/`read_version`).
    Replicated,
}

impl Anomaly {
    /// The whole catalogue, in report order (the order of the names as strings).
    pub const ALL: [Anomaly; 6] = [
        Anomaly::A1,
        Anomaly::A2,
        Anomaly::A3,
        Anomaly::A3Residue,
        Anomaly::A4,
        Anomaly::A6,
    ];

    /// The four anomalies of the lattice (SPEC §4), in lattice order: bit i of a
    /// [`crate::lattice::Point`] is `LATTICE[i]`.
    pub const LATTICE: [Anomaly; 4] = [Anomaly::A1, Anomaly::A2, Anomaly::A3, Anomaly::A6];

    /// The short name used in every output, table and `--json` key (`"A1"`, `"A3_residue"` …).
    pub const fn name(self) -> &'static str {
        match self {
            Anomaly::A1 => "A1",
            Anomaly::A2 => "A2",
            Anomaly::A3 => "A3",
            Anomaly::A3Residue => "A3_residue",
            Anomaly::A4 => "A4",
            Anomaly::A6 => "A6",
        }
    }

    /// What the anomaly is called in prose (SPEC §3).
    pub const fn title(self) -> &'static str {
        match self {
            Anomaly::A1 => "stale-generation",
            Anomaly::A2 => "phantom-tool",
            Anomaly::A3 => "causal-cascade",
            Anomaly::A3Residue => "causal-cascade residue",
            Anomaly::A4 => "split-view",
            Anomaly::A6 => "tool-effect reordering",
        }
    }

    /// Its bit in a lattice point, or `None` for the anomalies outside the lattice.
    pub const fn lattice_bit(self) -> Option<u8> {
        match self {
            Anomaly::A1 => Some(0),
            Anomaly::A2 => Some(1),
            Anomaly::A3 => Some(2),
            Anomaly::A6 => Some(3),
            // An over-approximation of A3, not a consistency model of its own.
            Anomaly::A3Residue => None,
            // Replicated store only (SPEC §6): the lattice is over the single-store anomalies.
            Anomaly::A4 => None,
        }
    }

    /// Where it can be decided.
    pub const fn scope(self) -> Scope {
        match self {
            Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A3Residue | Anomaly::A6 => {
                Scope::Any
            }
            Anomaly::A4 => Scope::Replicated,
        }
    }

    /// Parses a name, ignoring ASCII case.
    pub fn parse(s: &str) -> Option<Anomaly> {
        Anomaly::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(s.trim()))
    }

    /// The names of `anomalies`, joined with `sep`.
    pub fn join(anomalies: &[Anomaly], sep: &str) -> String {
        let names: Vec<&str> = anomalies.iter().map(|a| a.name()).collect();
        names.join(sep)
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown anomaly `{0}`; expected one of {names}", names = Anomaly::join(&Anomaly::ALL, ", "))]
pub struct UnknownAnomaly(pub String);

impl FromStr for Anomaly {
    type Err = UnknownAnomaly;

    fn from_str(s: &str) -> Result<Anomaly, UnknownAnomaly> {
        Anomaly::parse(s).ok_or_else(|| UnknownAnomaly(s.to_owned()))
    }
}

impl serde::Serialize for Anomaly {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Reads the catalogue name [`Anomaly::name`] writes (partial results carry verdicts this way).
impl<'de> serde::Deserialize<'de> for Anomaly {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Anomaly, D::Error> {
        let name = String::deserialize(d)?;
        Anomaly::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown anomaly `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort_as_strings() {
        for a in Anomaly::ALL {
            assert_eq!(a.name().parse::<Anomaly>(), Ok(a));
            assert_eq!(Anomaly::parse(&a.name().to_lowercase()), Some(a));
        }
        // Maps keyed by the enum and by the name iterate in the same order.
        let mut by_name = Anomaly::ALL.map(Anomaly::name);
        by_name.sort_unstable();
        assert_eq!(by_name, Anomaly::ALL.map(Anomaly::name));
        let err = "A5".parse::<Anomaly>().unwrap_err().to_string();
        assert!(err.contains("A3_residue") && err.contains("A4"), "{err}");
    }

    #[test]
    fn the_lattice_is_the_four_single_store_anomalies() {
        let bits: Vec<u8> = Anomaly::LATTICE
            .iter()
            .map(|a| a.lattice_bit().expect("a lattice anomaly"))
            .collect();
        assert_eq!(bits, [0, 1, 2, 3]);
        let outside: Vec<Anomaly> = Anomaly::ALL
            .into_iter()
            .filter(|a| a.lattice_bit().is_none())
            .collect();
        assert_eq!(outside, [Anomaly::A3Residue, Anomaly::A4]);
        assert_eq!(Anomaly::A4.scope(), Scope::Replicated);
    }
}
