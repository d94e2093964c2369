//! `Guarded<Stack>`: the store under any stack of mechanisms chosen at run time, the one
//! runtime object the checker and the simulator drive. The choice itself is the [`Stack`]
//! (parsed from `--runtime`, a scenario or a replay line); this is what a choice becomes once
//! instantiated over a registry: a store with a log, which steps. A stack is a constant set
//! of mechanisms consulted in catalogue order, so there is one type for all of them and
//! nothing to dispatch by hand.

use super::{Guarded, Options, Stack};
use crate::record::Registry;

impl Guarded<Stack> {
    /// A fresh store over the initial `registry` under `stack` (a [`Stack`], or a named
    /// [`RuntimeKind`](super::RuntimeKind)); provenance is forced on where the stack reads
    /// `preds`.
    pub fn new(stack: impl Into<Stack>, registry: Registry, opts: Options) -> Guarded<Stack> {
        Guarded::with(stack.into(), registry, opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::Agent;
    use crate::runtime::{
        BeginRequest, CommitRequest, Externalization, Mechanism, Runtime, RuntimeKind,
    };

    #[test]
    fn every_kind_builds_and_names_itself() {
        for kind in RuntimeKind::ALL {
            let rt = Guarded::new(kind, Registry::all(2), Options::default());
            assert_eq!(rt.stack().kind(), Some(kind));
            assert_eq!(rt.name(), kind.name());
            let sequenced = kind.level() >= 3;
            let want = if sequenced {
                Externalization::Sequenced
            } else {
                Externalization::Immediate
            };
            assert_eq!(rt.externalization(), want, "{kind}");
            assert_eq!(
                rt.store().has_provenance(),
                kind.forces_provenance(),
                "{kind}"
            );
        }
    }

    #[test]
    fn a_mechanism_alone_and_its_one_member_stack_agree() {
        for m in Mechanism::ALL {
            let alone = Guarded::with(m, Registry::all(1), Options::default());
            let stack = Guarded::new(m, Registry::all(1), Options::default());
            assert_eq!(alone.stack(), stack.stack());
            assert_eq!(alone.store(), stack.store());
            assert_eq!(alone.runtime().stack(), Stack::of(&[m]));
        }
    }

    fn hash(rt: &Guarded<Stack>) -> u64 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        rt.hash(&mut h);
        h.finish()
    }

    /// The checker hashes runtime states: the same steps give equal states and hashes,
    /// different steps different ones.
    #[test]
    fn states_are_values() {
        use crate::names::{Cell, Value};
        for kind in RuntimeKind::ALL {
            let run = |v: u32| {
                let mut rt = Guarded::new(kind, Registry::all(1), Options::default());
                rt.begin(&BeginRequest::new(Agent(0), vec![Cell(0)], None));
                rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(v))]));
                rt
            };
            assert_eq!(run(1), run(1), "{kind}");
            assert_eq!(hash(&run(1)), hash(&run(1)), "{kind}");
            assert_ne!(run(1), run(2), "{kind}");
        }
    }
}
