//! Which runtime a trial runs under: the name a scenario or `--runtime` gives — a named
//! runtime ([`RuntimeKind`], SPEC §5) or a `+`-joined stack of mechanisms ([`Stack`],
//! SPEC §5.1) — resolved to the one runtime type the engine drives ([`AnyRuntime`], the
//! store under a stack of mechanisms).
//!
//! The engine is generic over `agentsim_models::runtime::Runtime`; this file is the single
//! place that fixes the concrete type ([`SimRuntime`]) and how it is built, so adding a
//! runtime or a mechanism to the models changes nothing else in the simulator. A choice
//! prints canonically ([`Stack`]'s `Display`: a named runtime's name, else its mechanisms in
//! catalogue order), so `sequencer+lock` and `lock+sequencer` are one choice with one name.

use agentsim_models::record::Registry;
use agentsim_models::runtime::{AnyRuntime, Options, RuntimeKind, Stack, StackError};

/// The runtime type the engine is instantiated with.
pub type SimRuntime = AnyRuntime;

/// A validated runtime: a valid stack of mechanisms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuntimeChoice {
    stack: Stack,
}

impl RuntimeChoice {
    /// Parses a runtime name (`vanilla`, `pessimistic`, `si`, `ssi`, `causal`,
    /// `causal-no-cascade`, `saga`, `registry-validate` (or `registry`), `registry-pin`) or a
    /// `+`-joined stack of those and mechanisms (`lock+sequencer`); the error names the
    /// unknown part and lists the valid names, or names the mechanism that cannot be in the
    /// stack and why.
    pub fn parse(s: &str) -> Result<RuntimeChoice, UnknownRuntime> {
        Ok(RuntimeChoice { stack: s.parse()? })
    }

    /// The choice of a stack, which must be valid.
    pub fn of(stack: Stack) -> Result<RuntimeChoice, UnknownRuntime> {
        Ok(RuntimeChoice {
            stack: stack.validate()?,
        })
    }

    /// The stack of mechanisms.
    pub fn stack(&self) -> Stack {
        self.stack
    }

    /// The named runtime this is, if it is one.
    pub fn kind(&self) -> Option<RuntimeKind> {
        self.stack.kind()
    }

    /// The canonical name (a named runtime's, else the mechanisms in catalogue order).
    pub fn name(&self) -> String {
        self.stack.to_string()
    }

    /// A fresh runtime over the initial registry; `provenance` records preds at each read
    /// (forced on by a stack with a mechanism that reads them: `causal` and above).
    pub fn build(&self, registry: Registry, provenance: bool) -> SimRuntime {
        AnyRuntime::new(self.stack, registry, Options { provenance })
    }
}

impl RuntimeChoice {
    /// No mechanism: the baseline every experiment pairs against.
    pub const VANILLA: RuntimeChoice = RuntimeChoice {
        stack: Stack::VANILLA,
    };
}

impl From<RuntimeKind> for RuntimeChoice {
    fn from(kind: RuntimeKind) -> RuntimeChoice {
        RuntimeChoice {
            stack: kind.stack(),
        }
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
        self.stack.fmt(f)
    }
}

/// A choice travels as its canonical name (in sweep files, replay lines and partials).
impl serde::Serialize for RuntimeChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RuntimeChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RuntimeChoice, D::Error> {
        let name = String::deserialize(d)?;
        RuntimeChoice::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// A runtime name that is not one, or a stack the catalogue refuses; the message lists the
/// valid names or names the mechanism and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(transparent)]
pub struct UnknownRuntime(#[from] StackError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_the_valid_ones() {
        for kind in RuntimeKind::ALL {
            let c = RuntimeChoice::parse(kind.name()).unwrap();
            assert_eq!(c.kind(), Some(kind));
            assert_eq!(c.name(), kind.name());
        }
        let err = RuntimeChoice::parse("nope").unwrap_err().to_string();
        assert!(
            err.contains("vanilla") && err.contains("registry-pin") && err.contains("lock"),
            "{err}"
        );
    }

    #[test]
    fn stacks_are_choices_with_canonical_names() {
        let c = RuntimeChoice::parse("sequencer+lock").unwrap();
        assert_eq!(c.name(), "lock+sequencer");
        assert_eq!(c.kind(), None);
        assert_eq!(RuntimeChoice::parse(&c.name()), Ok(c));
        assert_eq!(RuntimeChoice::parse("lock").unwrap().name(), "pessimistic");
        let err = RuntimeChoice::parse("cascade").unwrap_err().to_string();
        assert!(err.starts_with("`cascade` needs `validate-preds`"), "{err}");
    }
}
