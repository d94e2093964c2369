//! The named runtimes by CLI name, the stacks they are (SPEC §5.1), their levels on the named
//! chain (SPEC §4), and the options every runtime takes. [`RuntimeKind`] is the alias table of
//! [`Stack`]: the typed choice is a stack, and these are the names it keeps printing.
//!
//! A level here is the *claim* of SPEC §5 and the paper's Table 2; the property tests and the
//! exhaustive checker are what back it. One caveat is built in: `si` is placed at L1 although
//! it admits A1 through read-only commits; its ¬A1 holds only when every op writes what it
//! reads (the paper's all-writers hypothesis). `causal-no-cascade` admits A3, so it sits at L1.

use super::{Mechanism, Stack};
use std::fmt;

/// How the `registry` runtime isolates the planned tool (SPEC §5).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Discipline {
    /// Abort at commit if the planned tool left the registry or changed its signature.
    Validate,
    /// Resolve the call against the read-time snapshot, which stays callable.
    Pin,
}

/// One of the nine runtimes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuntimeKind {
    Vanilla,
    Pessimistic,
    Si,
    Ssi,
    Causal { cascade: bool },
    Saga,
    Registry(Discipline),
}

impl RuntimeKind {
    /// Every runtime, weakest first.
    pub const ALL: [RuntimeKind; 9] = [
        RuntimeKind::Vanilla,
        RuntimeKind::Pessimistic,
        RuntimeKind::Si,
        RuntimeKind::Ssi,
        RuntimeKind::Causal { cascade: true },
        RuntimeKind::Causal { cascade: false },
        RuntimeKind::Saga,
        RuntimeKind::Registry(Discipline::Validate),
        RuntimeKind::Registry(Discipline::Pin),
    ];

    /// Parses a CLI name; `registry` means `registry-validate`.
    pub fn parse(s: &str) -> Result<RuntimeKind, String> {
        if s == "registry" {
            return Ok(RuntimeKind::Registry(Discipline::Validate));
        }
        RuntimeKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = RuntimeKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown runtime `{s}`; valid runtimes: {} \
                     (and `registry` = registry-validate)",
                    names.join(", ")
                )
            })
    }

    /// The CLI name.
    pub fn name(&self) -> &'static str {
        match self {
            RuntimeKind::Vanilla => "vanilla",
            RuntimeKind::Pessimistic => "pessimistic",
            RuntimeKind::Si => "si",
            RuntimeKind::Ssi => "ssi",
            RuntimeKind::Causal { cascade: true } => "causal",
            RuntimeKind::Causal { cascade: false } => "causal-no-cascade",
            RuntimeKind::Saga => "saga",
            RuntimeKind::Registry(Discipline::Validate) => "registry-validate",
            RuntimeKind::Registry(Discipline::Pin) => "registry-pin",
        }
    }

    /// The level Lk on the named chain that the runtime is claimed to reach (SPEC §4–5).
    pub fn level(&self) -> u8 {
        match self {
            RuntimeKind::Vanilla => 0,
            RuntimeKind::Pessimistic | RuntimeKind::Si | RuntimeKind::Ssi => 1,
            RuntimeKind::Causal { cascade: true } => 2,
            RuntimeKind::Causal { cascade: false } => 1,
            RuntimeKind::Saga => 3,
            RuntimeKind::Registry(_) => 4,
        }
    }

    /// The stack of mechanisms this runtime is (SPEC §5.1).
    pub const fn stack(self) -> Stack {
        use Mechanism::*;
        match self {
            RuntimeKind::Vanilla => Stack::VANILLA,
            RuntimeKind::Pessimistic => Stack::of(&[Lock]),
            RuntimeKind::Si => Stack::of(&[ValidateWriters]),
            RuntimeKind::Ssi => Stack::of(&[Validate]),
            RuntimeKind::Causal { cascade: true } => Stack::of(&[Validate, ValidatePreds, Cascade]),
            RuntimeKind::Causal { cascade: false } => Stack::of(&[Validate, ValidatePreds]),
            RuntimeKind::Saga => Stack::of(&[Validate, ValidatePreds, Cascade, Sequencer]),
            RuntimeKind::Registry(Discipline::Validate) => {
                Stack::of(&[Validate, ValidatePreds, Cascade, Sequencer, ValidateTool])
            }
            RuntimeKind::Registry(Discipline::Pin) => {
                Stack::of(&[Validate, ValidatePreds, Cascade, Sequencer, Pin])
            }
        }
    }

    /// Whether the runtime records provenance regardless of [`Options::provenance`]: some
    /// mechanism of its stack reads `preds`.
    pub fn forces_provenance(&self) -> bool {
        self.stack().provenance()
    }
}

impl std::str::FromStr for RuntimeKind {
    type Err = String;

    /// As [`RuntimeKind::parse`] (so clap can take a `RuntimeKind` directly).
    fn from_str(s: &str) -> Result<Self, String> {
        RuntimeKind::parse(s)
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Options shared by every runtime.
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
pub struct Options {
    /// Record provenance `preds` at each read (extension 2). Forced on by a stack with a
    /// mechanism that reads `preds` (`validate-preds`, `cascade`: `causal` and above).
    pub provenance: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels() {
        for k in RuntimeKind::ALL {
            assert_eq!(RuntimeKind::parse(k.name()), Ok(k));
            assert_eq!(k.to_string().parse::<RuntimeKind>(), Ok(k));
        }
        let levels: Vec<u8> = RuntimeKind::ALL.iter().map(|k| k.level()).collect();
        assert_eq!(levels, [0, 1, 1, 1, 2, 1, 3, 4, 4]);
        assert_eq!(
            RuntimeKind::parse("registry"),
            Ok(RuntimeKind::Registry(Discipline::Validate))
        );
    }

    #[test]
    fn unknown_name_lists_the_valid_ones() {
        let e = RuntimeKind::parse("serializable").unwrap_err();
        assert!(e.contains("serializable"), "{e}");
        assert!(e.contains("causal-no-cascade"), "{e}");
        assert!(e.contains("registry-pin"), "{e}");
    }
}
