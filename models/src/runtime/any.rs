//! [`AnyRuntime`]: every runtime behind one type, chosen by [`RuntimeKind`] at run time, so
//! the checker and the simulator can take a runtime name from the command line. Plain enum
//! dispatch: each method forwards to the variant, nothing is added or changed on the way.

use super::{
    BeginRequest, Causal, CommitOutcome, CommitRequest, Externalization, Options, Pessimistic,
    RegistryChange, RegistryIsolation, Runtime, RuntimeKind, Saga, Si, Ssi, Store, Vanilla,
};
use crate::names::Agent;
use crate::record::Registry;

/// One of the nine runtimes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AnyRuntime {
    Vanilla(Vanilla),
    Pessimistic(Pessimistic),
    Si(Si),
    Ssi(Ssi),
    Causal(Causal),
    Saga(Saga),
    Registry(RegistryIsolation),
}

impl AnyRuntime {
    /// A fresh runtime of `kind` over the initial `registry`.
    pub fn new(kind: RuntimeKind, registry: Registry, opts: Options) -> AnyRuntime {
        match kind {
            RuntimeKind::Vanilla => AnyRuntime::Vanilla(Vanilla::with_options(registry, opts)),
            RuntimeKind::Pessimistic => AnyRuntime::Pessimistic(Pessimistic::new(registry, opts)),
            RuntimeKind::Si => AnyRuntime::Si(Si::new(registry, opts)),
            RuntimeKind::Ssi => AnyRuntime::Ssi(Ssi::new(registry, opts)),
            RuntimeKind::Causal { cascade } => {
                AnyRuntime::Causal(Causal::new(registry, opts, cascade))
            }
            RuntimeKind::Saga => AnyRuntime::Saga(Saga::new(registry, opts)),
            RuntimeKind::Registry(d) => {
                AnyRuntime::Registry(RegistryIsolation::new(registry, opts, d))
            }
        }
    }

    /// Which runtime this is.
    pub fn kind(&self) -> RuntimeKind {
        match self {
            AnyRuntime::Vanilla(_) => RuntimeKind::Vanilla,
            AnyRuntime::Pessimistic(_) => RuntimeKind::Pessimistic,
            AnyRuntime::Si(_) => RuntimeKind::Si,
            AnyRuntime::Ssi(_) => RuntimeKind::Ssi,
            AnyRuntime::Causal(c) => RuntimeKind::Causal {
                cascade: c.cascade(),
            },
            AnyRuntime::Saga(_) => RuntimeKind::Saga,
            AnyRuntime::Registry(r) => RuntimeKind::Registry(r.discipline()),
        }
    }
}

/// Forwards a method call to whichever runtime the enum holds.
macro_rules! dispatch {
    ($self:expr, $rt:ident => $call:expr) => {
        match $self {
            AnyRuntime::Vanilla($rt) => $call,
            AnyRuntime::Pessimistic($rt) => $call,
            AnyRuntime::Si($rt) => $call,
            AnyRuntime::Ssi($rt) => $call,
            AnyRuntime::Causal($rt) => $call,
            AnyRuntime::Saga($rt) => $call,
            AnyRuntime::Registry($rt) => $call,
        }
    };
}

impl Runtime for AnyRuntime {
    fn name(&self) -> &'static str {
        dispatch!(self, rt => rt.name())
    }

    #[inline]
    fn start(&mut self, req: &BeginRequest) -> Result<(), super::DropReason> {
        dispatch!(self, rt => rt.start(req))
    }

    #[inline]
    fn commit(&mut self, req: &CommitRequest) -> CommitOutcome {
        dispatch!(self, rt => rt.commit(req))
    }

    fn abandon(&mut self, agent: Agent) {
        dispatch!(self, rt => rt.abandon(agent))
    }

    fn retract(&mut self, index: usize) -> Vec<usize> {
        dispatch!(self, rt => rt.retract(index))
    }

    fn change_registry(&mut self, change: RegistryChange) {
        dispatch!(self, rt => rt.change_registry(change))
    }

    fn externalization(&self) -> Externalization {
        dispatch!(self, rt => rt.externalization())
    }

    #[inline]
    fn store(&self) -> &Store {
        dispatch!(self, rt => rt.store())
    }

    fn reserve(&mut self, records: usize) {
        dispatch!(self, rt => rt.reserve(records))
    }

    fn into_store(self) -> Store {
        dispatch!(self, rt => rt.into_store())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_builds_and_names_itself() {
        for kind in RuntimeKind::ALL {
            let rt = AnyRuntime::new(kind, Registry::all(2), Options::default());
            assert_eq!(rt.kind(), kind);
            assert_eq!(rt.name(), kind.name());
            let sequenced = kind.level() >= 3;
            let want = if sequenced {
                Externalization::Sequenced
            } else {
                Externalization::Immediate
            };
            assert_eq!(rt.externalization(), want, "{kind}");
            assert_eq!(rt.store().provenance, kind.forces_provenance(), "{kind}");
        }
    }

    fn hash(rt: &AnyRuntime) -> u64 {
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
                let mut rt = AnyRuntime::new(kind, Registry::all(1), Options::default());
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
