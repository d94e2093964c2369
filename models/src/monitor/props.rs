//! The properties a history-free monitor decides, as a small bit set: which ones are watched
//! ([`Need::watch`](super::Need)) and which ones a summary says are violated.
//!
//! The names are SPEC §3's: A1, A2, A3 (preds form), A3 residue form, A6 and `L1_struct`
//! (here "violated" means `L1_struct` does not hold). A4 lives in the replicated store and has
//! its own monitor ([`super::a4`]). The list is derived from the catalogue
//! ([`Anomaly::ALL`] and [`Prop::decides`]), not restated: a new anomaly is a compile error in
//! [`Prop::decides`] until someone says whether a summary monitor decides it.

use crate::anomaly::Anomaly;
use std::fmt;

/// One property a summary monitor decides: an anomaly of the catalogue it can decide
/// ([`Prop::decides`]), or `L1_struct`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prop {
    Anomaly(Anomaly),
    /// Violated when `L1_struct` does not hold.
    L1Struct,
}

impl Prop {
    pub const A1: Prop = Prop::Anomaly(Anomaly::A1);
    pub const A2: Prop = Prop::Anomaly(Anomaly::A2);
    pub const A3: Prop = Prop::Anomaly(Anomaly::A3);
    #[allow(non_upper_case_globals)] // The name the monitor has always had.
    pub const A3Residue: Prop = Prop::Anomaly(Anomaly::A3Residue);
    pub const A6: Prop = Prop::Anomaly(Anomaly::A6);

    /// Whether a summary monitor decides anomaly `a`. A4 lives in the replicated store and has
    /// its own monitor ([`super::a4`]).
    pub const fn decides(a: Anomaly) -> bool {
        match a {
            Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A3Residue | Anomaly::A6 => true,
            Anomaly::A4 => false,
        }
    }

    /// How many properties there are: the anomalies decided, and `L1_struct`.
    const COUNT: usize = {
        let mut n = 1;
        let mut k = 0;
        while k < Anomaly::ALL.len() {
            if Prop::decides(Anomaly::ALL[k]) {
                n += 1;
            }
            k += 1;
        }
        n
    };

    /// Every property, in report order: the anomalies decided in catalogue order
    /// ([`Anomaly::ALL`]), then `L1_struct`.
    pub const ALL: [Prop; Prop::COUNT] = {
        let mut all = [Prop::L1Struct; Prop::COUNT];
        let (mut n, mut k) = (0, 0);
        while k < Anomaly::ALL.len() {
            if Prop::decides(Anomaly::ALL[k]) {
                all[n] = Prop::Anomaly(Anomaly::ALL[k]);
                n += 1;
            }
            k += 1;
        }
        all
    };

    /// The position in [`Prop::ALL`] of each anomaly decided, by `Anomaly as usize`.
    const INDEX: [u8; Anomaly::ALL.len()] = {
        let mut index = [u8::MAX; Anomaly::ALL.len()];
        let mut k = 0;
        while k < Prop::COUNT - 1 {
            if let Prop::Anomaly(a) = Prop::ALL[k] {
                index[a as usize] = k as u8;
            }
            k += 1;
        }
        index
    };

    /// The property of anomaly `a`, if a summary monitor decides it.
    pub const fn of(a: Anomaly) -> Option<Prop> {
        match Prop::decides(a) {
            true => Some(Prop::Anomaly(a)),
            false => None,
        }
    }

    /// Its position in [`Prop::ALL`] (its bit in a [`Props`]).
    const fn index(self) -> u8 {
        match self {
            Prop::Anomaly(a) => Prop::INDEX[a as usize],
            Prop::L1Struct => (Prop::COUNT - 1) as u8,
        }
    }

    fn bit(self) -> u8 {
        let k = self.index();
        assert!(k < 8, "{self:?} is not decided by a summary monitor");
        1 << k
    }
}

/// The names the monitor has always printed (`A1`, `A3Residue`, `L1Struct`).
impl fmt::Debug for Prop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prop::Anomaly(a) => fmt::Debug::fmt(a, f),
            Prop::L1Struct => f.write_str("L1Struct"),
        }
    }
}

/// A set of [`Prop`]s.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Props(u8);

impl Props {
    /// Every property.
    pub const ALL: Props = Props(u8::MAX >> (8 - Prop::ALL.len()));

    /// The set of `props`.
    pub fn of(props: &[Prop]) -> Props {
        Props(props.iter().fold(0, |m, p| m | p.bit()))
    }

    pub fn contains(self, p: Prop) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn insert(&mut self, p: Prop) {
        self.0 |= p.bit();
    }

    /// `p` added when `cond` holds.
    pub fn with_if(mut self, p: Prop, cond: bool) -> Props {
        if cond {
            self.insert(p);
        }
        self
    }

    pub fn union(self, other: Props) -> Props {
        Props(self.0 | other.0)
    }

    pub fn intersect(self, other: Props) -> Props {
        Props(self.0 & other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The set as bits (bit k is `Prop::ALL[k]`).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The set of `bits` (see [`Props::bits`]); bits beyond the properties are dropped.
    pub fn from_bits(bits: u8) -> Props {
        Props(bits & Props::ALL.0)
    }

    pub fn iter(self) -> impl Iterator<Item = Prop> {
        Prop::ALL.into_iter().filter(move |&p| self.contains(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let s = Props::of(&[Prop::A1, Prop::L1Struct]);
        assert!(s.contains(Prop::L1Struct));
        assert!(!s.contains(Prop::A3));
        assert_eq!(s.intersect(Props::of(&[Prop::A1])).iter().count(), 1);
        assert_eq!(Props::ALL.iter().count(), Prop::ALL.len());
        assert!(Props::default().with_if(Prop::A6, false).is_empty());
    }

    /// The bits and names are those of the hand-written list this replaced: they are in
    /// checker caches and messages.
    #[test]
    fn bits_and_names_are_stable() {
        let bits: Vec<u8> = Prop::ALL.iter().map(|p| p.bit()).collect();
        assert_eq!(bits, [1, 2, 4, 8, 16, 32]);
        let names: Vec<String> = Prop::ALL.iter().map(|p| format!("{p:?}")).collect();
        assert_eq!(names, ["A1", "A2", "A3", "A3Residue", "A6", "L1Struct"]);
        assert_eq!(Props::ALL.bits(), 0b11_1111);
        assert_eq!(Prop::of(Anomaly::A4), None);
    }
}
