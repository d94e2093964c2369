//! The properties a history-free monitor decides, as a small bit set: which ones are watched
//! ([`Need::watch`](super::Need)) and which ones a summary says are violated.
//!
//! The names are SPEC §3's: A1, A2, A3 (preds form), A3 residue form, A6 and `L1_struct`
//! (here "violated" means `L1_struct` does not hold). A4 lives in the replicated store and has
//! its own monitor ([`super::a4`]).

/// One property a summary monitor decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prop {
    A1,
    A2,
    A3,
    A3Residue,
    A6,
    /// Violated when `L1_struct` does not hold.
    L1Struct,
}

impl Prop {
    /// Every property, in report order.
    pub const ALL: [Prop; 6] = [
        Prop::A1,
        Prop::A2,
        Prop::A3,
        Prop::A3Residue,
        Prop::A6,
        Prop::L1Struct,
    ];

    fn bit(self) -> u8 {
        1 << (self as u8)
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
    pub const ALL: Props = Props(0b11_1111);

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
}
