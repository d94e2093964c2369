//! Which runtime a trial runs under: the name a scenario or `--runtime` gives
//! ([`RuntimeKind`], SPEC §5), resolved to the one runtime type the engine drives
//! ([`AnyRuntime`], the store under a stack of mechanisms).
//!
//! The engine is generic over `agentsim_models::runtime::Runtime`; this file is the single
//! place that fixes the concrete type ([`SimRuntime`]) and how it is built, so adding a
//! runtime to the models changes nothing else in the simulator.

use agentsim_models::record::Registry;
use agentsim_models::runtime::{AnyRuntime, Options, RuntimeKind};

/// The runtime type the engine is instantiated with.
pub type SimRuntime = AnyRuntime;

/// A validated runtime name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuntimeChoice {
    kind: RuntimeKind,
}

impl RuntimeChoice {
    /// Parses a runtime name (`vanilla`, `pessimistic`, `si`, `ssi`, `causal`,
    /// `causal-no-cascade`, `saga`, `registry-validate` (or `registry`), `registry-pin`);
    /// the error lists the valid names.
    pub fn parse(s: &str) -> Result<RuntimeChoice, UnknownRuntime> {
        RuntimeKind::parse(s)
            .map(|kind| RuntimeChoice { kind })
            .map_err(UnknownRuntime)
    }

    /// The runtime kind.
    pub fn kind(&self) -> RuntimeKind {
        self.kind
    }

    /// The CLI name.
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// A fresh runtime over the initial registry; `provenance` records preds at each read
    /// (forced on by `causal` and above).
    pub fn build(&self, registry: Registry, provenance: bool) -> SimRuntime {
        AnyRuntime::new(self.kind, registry, Options { provenance })
    }
}

impl std::str::FromStr for RuntimeChoice {
    type Err = UnknownRuntime;

    fn from_str(s: &str) -> Result<RuntimeChoice, UnknownRuntime> {
        RuntimeChoice::parse(s)
    }
}

impl std::fmt::Display for RuntimeChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A runtime name that is not one; the message lists the valid names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnknownRuntime(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_the_valid_ones() {
        for kind in RuntimeKind::ALL {
            let c = RuntimeChoice::parse(kind.name()).unwrap();
            assert_eq!(c.kind(), kind);
        }
        let err = RuntimeChoice::parse("nope").unwrap_err().to_string();
        assert!(
            err.contains("vanilla") && err.contains("registry-pin"),
            "{err}"
        );
    }
}
