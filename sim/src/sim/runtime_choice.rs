//! Which runtime a trial runs under: the name a scenario or `--runtime` gives, resolved to a
//! constructor of the one runtime type the engine drives.
//!
//! The engine is generic over `agentsim_models::runtime::Runtime`; this file is the single
//! place that fixes the concrete type ([`SimRuntime`]) and the accepted names, so that adding
//! runtimes changes nothing else in the simulator.

use agentsim_models::record::Registry;
use agentsim_models::runtime::Vanilla;

/// The runtime type the engine is instantiated with.
pub type SimRuntime = Vanilla;

/// A validated runtime name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuntimeChoice {
    name: &'static str,
}

/// The names this build can construct.
pub const AVAILABLE: [&str; 1] = ["vanilla"];

impl RuntimeChoice {
    /// Parses a runtime name; the error lists the valid names.
    pub fn parse(s: &str) -> Result<RuntimeChoice, String> {
        AVAILABLE
            .iter()
            .find(|&&n| n == s)
            .map(|&name| RuntimeChoice { name })
            .ok_or_else(|| {
                format!(
                    "unknown runtime `{s}`; valid runtimes: {}",
                    AVAILABLE.join(", ")
                )
            })
    }

    /// The CLI name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A fresh runtime over the initial registry.
    pub fn build(&self, registry: Registry) -> SimRuntime {
        Vanilla::new(registry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_the_valid_ones() {
        assert_eq!(
            RuntimeChoice::parse("vanilla").map(|r| r.name()),
            Ok("vanilla")
        );
        let err = RuntimeChoice::parse("nope").unwrap_err();
        assert!(err.contains("vanilla"), "{err}");
    }
}
