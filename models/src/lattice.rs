//! The lattice of consistency models (SPEC §4), computed rather than written out.
//!
//! A consistency model is the set of anomalies it *excludes*, a subset of {A1, A2, A3, A6}:
//! the Boolean lattice ⟨2^A, ⊆⟩ with 16 points. Cover edges add one exclusion; maximal chains
//! are the 4! orders of adding all four. The named chain adds A1, A3, A6, A2 in that order
//! (L0 = true, L1 = ¬A1, L2 = L1 ∧ ¬A3, L3 = L2 ∧ ¬A6, L4 = L3 ∧ ¬A2).

use crate::anomaly::Anomaly;

/// A point of the lattice: a bit set over [`Anomaly::LATTICE`] (bit i = `Anomaly::LATTICE[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Point(pub u8);

impl Point {
    /// The set of the lattice anomalies among `anomalies` (those outside the lattice, A4 and
    /// the A3 residue form, are no point's members).
    pub fn of(anomalies: &[Anomaly]) -> Point {
        Point(anomalies.iter().fold(0, |m, &a| m | bit(a)))
    }

    /// Whether `a` is in the set (never, for an anomaly outside the lattice).
    pub fn contains(self, a: Anomaly) -> bool {
        self.0 & bit(a) != 0
    }

    /// The members, in lattice order.
    pub fn members(self) -> Vec<Anomaly> {
        Anomaly::LATTICE
            .into_iter()
            .filter(|&a| self.contains(a))
            .collect()
    }

    /// Number of members.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `self ⊆ other`.
    pub fn subset_of(self, other: Point) -> bool {
        self.0 & !other.0 == 0
    }

    /// `{A1,A3}` style label; `{}` for the empty set.
    pub fn label(self) -> String {
        let names: Vec<_> = self.members().iter().map(|a| a.name()).collect();
        format!("{{{}}}", names.join(","))
    }
}

/// The bit of `a` in a point; 0 (no bit) outside the lattice.
fn bit(a: Anomaly) -> u8 {
    a.lattice_bit().map_or(0, |b| 1 << b)
}

/// The order in which the named chain adds exclusions.
pub const NAMED_ORDER: [Anomaly; 4] = [Anomaly::A1, Anomaly::A3, Anomaly::A6, Anomaly::A2];

/// All 16 points, by size then bits.
pub fn points() -> Vec<Point> {
    let mut p: Vec<Point> = (0u8..16).map(Point).collect();
    p.sort_by_key(|p| (p.len(), p.0));
    p
}

/// Cover edges `(lower, upper)`: `upper` excludes exactly one anomaly more.
pub fn cover_edges() -> Vec<(Point, Point)> {
    let mut edges = Vec::new();
    for lo in points() {
        for hi in points() {
            if lo.subset_of(hi) && hi.len() == lo.len() + 1 {
                edges.push((lo, hi));
            }
        }
    }
    edges
}

/// Every maximal chain from ∅ to the full set, each as its five points, in lexicographic
/// order of the anomaly orders.
pub fn maximal_chains() -> Vec<Vec<Point>> {
    let mut chains = Vec::new();
    extend(vec![Point(0)], &mut chains);
    chains
}

fn extend(chain: Vec<Point>, out: &mut Vec<Vec<Point>>) {
    let top = *chain.last().expect("chains start at the bottom");
    if top.len() == 4 {
        out.push(chain);
        return;
    }
    for a in Anomaly::LATTICE {
        if !top.contains(a) {
            let mut next = chain.clone();
            next.push(Point(top.0 | bit(a)));
            extend(next, out);
        }
    }
}

/// The named chain L0..L4 as points (sets of excluded anomalies).
pub fn named_chain() -> Vec<Point> {
    let mut chain = vec![Point(0)];
    for a in NAMED_ORDER {
        let top = *chain.last().expect("non-empty");
        chain.push(Point(top.0 | bit(a)));
    }
    chain
}

/// The highest level Lk a history satisfies, given the set of anomalies it exhibits:
/// the largest k such that it exhibits none of the first k anomalies of the named chain.
pub fn level(exhibited: Point) -> u8 {
    NAMED_ORDER
        .iter()
        .take_while(|&&a| !exhibited.contains(a))
        .count() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_spec() {
        assert_eq!(points().len(), 16);
        assert_eq!(cover_edges().len(), 32);
        let chains = maximal_chains();
        assert_eq!(chains.len(), 24);
        assert!(chains.contains(&named_chain()));
        for c in &chains {
            assert_eq!(c.len(), 5);
            for w in c.windows(2) {
                assert!(cover_edges().contains(&(w[0], w[1])));
            }
        }
    }

    #[test]
    fn levels() {
        assert_eq!(level(Point::of(&[])), 4);
        assert_eq!(level(Point::of(&[Anomaly::A1])), 0);
        assert_eq!(level(Point::of(&[Anomaly::A3, Anomaly::A2])), 1);
        assert_eq!(level(Point::of(&[Anomaly::A6])), 2);
        assert_eq!(level(Point::of(&[Anomaly::A2])), 3);
        assert_eq!(Point::of(&[Anomaly::A6, Anomaly::A1]).label(), "{A1,A6}");
    }
}
