//! The catalogue of mechanisms (SPEC §5.1), as data: one enum matched exhaustively, and for
//! each mechanism its [`Spec`] — where it acts, which anomaly it targets, whether it needs
//! provenance, which mechanisms it needs and which it excludes (with why). [`Stack`] reads
//! the needs and exclusions to refuse an invalid stack; nothing else is derived from
//! `targets`, which is the claim the checker tests, not a fact it assumes.
//!
//! The replicated store's read disciplines (`session`, `primary-pinned`, in
//! [`crate::replica`]) are not in this catalogue: they decide *where* a read is served on a
//! store with replicas, which the single store of SPEC §1 does not have, while every
//! mechanism here decides *whether* a request proceeds and what its record says. They
//! already compose with every stack (the checker's replicated model takes any runtime and a
//! discipline), and their target, A4, is outside the 16-point lattice.
//!
//! [`Stack`]: super::Stack

use super::{
    AbortReason, BeginRequest, Cascade, CommitRequest, DropReason, Externalization, Lock, Pending,
    Pin, Runtime, Sequence, Stack, Store, Validate, ValidatePreds, ValidateTool, ValidateWriters,
};
use crate::record::Registry;
use std::fmt;

pub use super::catalogue::{ActsAt, Mechanism, Spec};

impl Mechanism {
    /// Every mechanism, in catalogue order.
    pub const ALL: [Mechanism; 8] = [
        Mechanism::Lock,
        Mechanism::ValidateWriters,
        Mechanism::Validate,
        Mechanism::ValidatePreds,
        Mechanism::Cascade,
        Mechanism::Sequencer,
        Mechanism::Pin,
        Mechanism::ValidateTool,
    ];

    /// What this mechanism is.
    pub fn spec(self) -> &'static Spec {
        match self {
            Mechanism::Lock => &super::lock::SPEC,
            Mechanism::ValidateWriters => &super::validate::SPEC_WRITERS,
            Mechanism::Validate => &super::validate::SPEC,
            Mechanism::ValidatePreds => &super::causal::SPEC_PREDS,
            Mechanism::Cascade => &super::causal::SPEC_CASCADE,
            Mechanism::Sequencer => &super::sequencer::SPEC,
            Mechanism::Pin => &super::registry::SPEC_PIN,
            Mechanism::ValidateTool => &super::registry::SPEC_VALIDATE,
        }
    }

    /// The CLI name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The mechanism called `name`, if any.
    pub fn parse(name: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Its index in catalogue order (its bit in a [`Stack`]).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Calls `$call` on the policy of mechanism `$m`, bound to `$p`.
macro_rules! with_policy {
    ($m:expr, $p:ident => $call:expr) => {
        match $m {
            Mechanism::Lock => {
                let $p = Lock;
                $call
            }
            Mechanism::ValidateWriters => {
                let $p = ValidateWriters;
                $call
            }
            Mechanism::Validate => {
                let $p = Validate;
                $call
            }
            Mechanism::ValidatePreds => {
                let $p = ValidatePreds;
                $call
            }
            Mechanism::Cascade => {
                let $p = Cascade;
                $call
            }
            Mechanism::Sequencer => {
                let $p = Sequence;
                $call
            }
            Mechanism::Pin => {
                let $p = Pin;
                $call
            }
            Mechanism::ValidateTool => {
                let $p = ValidateTool;
                $call
            }
        }
    };
}

/// A mechanism alone is a runtime: plain dispatch to its policy.
impl Runtime for Mechanism {
    fn stack(&self) -> Stack {
        Stack::of(&[*self])
    }

    #[inline]
    fn admit(&self, store: &Store, req: &BeginRequest) -> Result<(), DropReason> {
        with_policy!(self, p => p.admit(store, req))
    }

    #[inline]
    fn verdict(&self, store: &Store, op: &Pending, req: &CommitRequest) -> Option<AbortReason> {
        with_policy!(self, p => p.verdict(store, op, req))
    }

    #[inline]
    fn resolve<'a>(&self, op: &'a Pending) -> Option<&'a Registry> {
        with_policy!(self, p => p.resolve(op))
    }

    #[inline]
    fn externalization(&self) -> Externalization {
        with_policy!(self, p => p.externalization())
    }

    fn cascade(&self, store: &Store, root: usize) -> Vec<usize> {
        with_policy!(self, p => p.cascade(store, root))
    }

    fn check(&self, store: &Store, from: usize) {
        with_policy!(self, p => p.check(store, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.name()), Some(m));
            assert_eq!(Mechanism::ALL[m.index()], m);
            assert_eq!(m.stack().mechanisms().collect::<Vec<_>>(), [m]);
        }
        assert_eq!(Mechanism::parse("registry"), None);
    }

    /// Needs and exclusions are stated on both sides where they are symmetric, and name
    /// other mechanisms only.
    #[test]
    fn exclusions_are_symmetric() {
        for m in Mechanism::ALL {
            for &(other, why) in m.spec().excludes {
                assert_ne!(other, m);
                assert!(!why.is_empty());
                assert!(
                    other.spec().excludes.iter().any(|&(x, _)| x == m),
                    "{m} excludes {other} but not the other way"
                );
            }
            for &(other, _) in m.spec().needs {
                assert_ne!(other, m);
                assert!(m.spec().excludes.iter().all(|&(x, _)| x != other));
            }
        }
    }

    /// The hooks a mechanism overrides are the points its spec says it acts at, as far as a
    /// fresh store shows: only `Begin` mechanisms may drop, only `Externalization` ones
    /// sequence effects.
    #[test]
    fn acts_at_matches_the_hooks() {
        for m in Mechanism::ALL {
            let acts = |p| m.spec().acts_at.contains(&p);
            let sequenced = m.externalization() == Externalization::Sequenced;
            assert_eq!(sequenced, acts(ActsAt::Externalization), "{m}");
            assert!(!m.spec().acts_at.is_empty(), "{m}");
        }
        assert!(Mechanism::Lock.spec().acts_at.contains(&ActsAt::Begin));
        for m in Mechanism::ALL.into_iter().filter(|&m| m != Mechanism::Lock) {
            assert!(!m.spec().acts_at.contains(&ActsAt::Begin), "{m}");
        }
    }
}
