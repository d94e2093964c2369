//! [`Stack`]: a set of mechanisms (SPEC §5.1), the typed runtime choice, the one type from
//! `--runtime` (and a scenario's `runtime`, a replay line's, a sweep file's) to the simulator
//! and the checker. Instantiated over a registry it becomes the one runtime object,
//! `Guarded<Stack>` ([`super::any`]): a choice is a constant, that is a store. A stack is itself a
//! [`Runtime`]: it consults its members in catalogue order ([`Mechanism::ALL`]) and combines
//! their decisions — the first drop or abort reason wins, the first registry to resolve
//! against wins (only `pin` has one), effects are sequenced if any member sequences them, and
//! a retraction aborts what any member cascades to.
//!
//! Names. [`FromStr`] takes a `+`-joined list whose parts are mechanism names or named
//! runtimes ([`RuntimeKind`], with its `registry` spelling), and takes their union, so
//! `saga+pin` is `registry-pin` and `vanilla+lock` is `lock`. [`fmt::Display`] is canonical,
//! one spelling per stack: a stack equal to a named runtime prints that runtime's name (so
//! `lock` prints `pessimistic`, and every output that pinned a named runtime is unchanged);
//! any other prints its mechanisms in catalogue order, joined by `+`.
//!
//! Validity: a stack is refused ([`StackError`]) when a member excludes another or lacks one
//! it needs, as the catalogue states. A valid stack says nothing about which anomalies it
//! prevents; the checker decides that.

use super::mechanism::Mechanism;
use super::{
    AbortReason, BeginRequest, CommitRequest, DropReason, Externalization, Pending, Runtime,
    RuntimeKind, Store,
};
use crate::record::Registry;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// A set of mechanisms: bit `i` is [`Mechanism::ALL`]`[i]`.
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
pub struct Stack(u16);

/// Why a stack name or a stack is refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum StackError {
    #[error("empty runtime name")]
    Empty,
    #[error("empty mechanism name in `{0}` (mechanisms are joined by a single `+`)")]
    EmptyPart(String),
    #[error(
        "unknown mechanism or runtime `{name}`; mechanisms: {mechanisms}; runtimes: {runtimes}"
    )]
    Unknown {
        name: String,
        mechanisms: String,
        runtimes: String,
    },
    #[error("`{mechanism}` cannot be stacked with `{other}`: {why}")]
    Excludes {
        mechanism: Mechanism,
        other: Mechanism,
        why: &'static str,
    },
    #[error("`{mechanism}` needs `{needs}`: {why}")]
    Needs {
        mechanism: Mechanism,
        needs: Mechanism,
        why: &'static str,
    },
}

impl Stack {
    /// No mechanism: `vanilla`.
    pub const VANILLA: Stack = Stack(0);

    /// The stack of exactly `mechanisms` (not validated; see [`Stack::validate`]).
    pub const fn of(mechanisms: &[Mechanism]) -> Stack {
        let mut bits = 0u16;
        let mut i = 0;
        while i < mechanisms.len() {
            bits |= 1 << mechanisms[i] as u16;
            i += 1;
        }
        Stack(bits)
    }

    /// Parses a runtime name or a `+`-joined stack (as [`FromStr`]): the union, validated.
    pub fn parse(s: &str) -> Result<Stack, StackError> {
        s.parse()
    }

    /// The canonical name (as [`fmt::Display`]).
    pub fn name(self) -> String {
        self.to_string()
    }

    /// The runtime object of this choice: a fresh store over the initial `registry` under the
    /// stack; `provenance` records preds at each read (forced on by a stack with a mechanism
    /// that reads them: `causal` and above).
    pub fn build(self, registry: Registry, provenance: bool) -> super::Guarded<Stack> {
        super::Guarded::new(self, registry, super::Options { provenance })
    }

    /// Whether `m` is in the stack.
    #[inline]
    pub fn contains(self, m: Mechanism) -> bool {
        self.0 & (1 << m.index()) != 0
    }

    /// The stack with `m` added.
    pub fn with(self, m: Mechanism) -> Stack {
        Stack(self.0 | 1 << m.index())
    }

    /// The union of two stacks.
    pub fn union(self, other: Stack) -> Stack {
        Stack(self.0 | other.0)
    }

    /// Whether every member of `self` is in `other`.
    pub fn subset_of(self, other: Stack) -> bool {
        self.0 & !other.0 == 0
    }

    /// How many mechanisms.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether it has no mechanism (`vanilla`).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in catalogue order.
    #[inline]
    pub fn mechanisms(self) -> impl Iterator<Item = Mechanism> + Clone {
        Mechanism::ALL
            .into_iter()
            .filter(move |&m| self.contains(m))
    }

    /// Every subset of `within` (the valid and the invalid), by size, then in bit order.
    pub fn subsets(within: Stack) -> Vec<Stack> {
        let mut out: Vec<Stack> = (0..=within.0)
            .filter(|b| b & !within.0 == 0)
            .map(Stack)
            .collect();
        out.sort_by_key(|s| (s.len(), s.0));
        out
    }

    /// Every mechanism in the catalogue.
    pub fn all() -> Stack {
        Stack::of(&Mechanism::ALL)
    }

    /// Whether the store must record provenance: some member reads `preds`.
    pub fn provenance(self) -> bool {
        self.mechanisms().any(|m| m.spec().provenance)
    }

    /// The named runtime this stack is, if it is one.
    pub fn kind(self) -> Option<RuntimeKind> {
        RuntimeKind::ALL.into_iter().find(|k| k.stack() == self)
    }

    /// Checks every member's needs and exclusions (catalogue order, needs first).
    pub fn validate(self) -> Result<Stack, StackError> {
        for m in self.mechanisms() {
            if let Some(&(needs, why)) = m.spec().needs.iter().find(|(n, _)| !self.contains(*n)) {
                return Err(StackError::Needs {
                    mechanism: m,
                    needs,
                    why,
                });
            }
            if let Some(&(other, why)) = m.spec().excludes.iter().find(|(o, _)| self.contains(*o)) {
                return Err(StackError::Excludes {
                    mechanism: m,
                    other,
                    why,
                });
            }
        }
        Ok(self)
    }

    /// Parses one part of a `+`-joined name: a mechanism or a named runtime.
    fn part(name: &str) -> Result<Stack, StackError> {
        if let Some(m) = Mechanism::parse(name) {
            return Ok(Stack::of(&[m]));
        }
        RuntimeKind::parse(name)
            .map(RuntimeKind::stack)
            .map_err(|_| StackError::Unknown {
                name: name.to_owned(),
                mechanisms: Mechanism::ALL.map(Mechanism::name).join(", "),
                runtimes: RuntimeKind::ALL.map(|k| k.name()).join(", ")
                    + " (and `registry` = registry-validate)",
            })
    }
}

impl FromStr for Stack {
    type Err = StackError;

    /// A `+`-joined list of mechanisms and named runtimes; the union, validated.
    fn from_str(s: &str) -> Result<Stack, StackError> {
        if s.is_empty() {
            return Err(StackError::Empty);
        }
        let mut stack = Stack::VANILLA;
        for part in s.split('+') {
            if part.is_empty() {
                return Err(StackError::EmptyPart(s.to_owned()));
            }
            stack = stack.union(Stack::part(part)?);
        }
        stack.validate()
    }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(kind) = self.kind() {
            return f.write_str(kind.name());
        }
        for (i, m) in self.mechanisms().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(m.name())?;
        }
        Ok(())
    }
}

impl From<RuntimeKind> for Stack {
    fn from(kind: RuntimeKind) -> Stack {
        kind.stack()
    }
}

impl From<Mechanism> for Stack {
    fn from(m: Mechanism) -> Stack {
        Stack::of(&[m])
    }
}

/// A stack that travels as its canonical name, for serde's `with` (sweep files, partial
/// results): the derived serde of [`Stack`] is its bits, part of the checker's packed states.
pub mod by_name {
    use super::Stack;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(stack: &Stack, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(stack)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Stack, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A list of stacks by their canonical names (see [`by_name`]).
pub mod by_names {
    use super::Stack;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(stacks: &[Stack], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(stacks.iter().map(|stack| stack.to_string()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Stack>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        names
            .iter()
            .map(|n| n.parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// A stack is a runtime: its members' decisions, combined (see the module docs).
impl Runtime for Stack {
    fn stack(&self) -> Stack {
        *self
    }

    #[inline]
    fn admit(&self, store: &Store, req: &BeginRequest) -> Result<(), DropReason> {
        self.mechanisms().try_for_each(|m| m.admit(store, req))
    }

    #[inline]
    fn verdict(&self, store: &Store, op: &Pending, req: &CommitRequest) -> Option<AbortReason> {
        self.mechanisms().find_map(|m| m.verdict(store, op, req))
    }

    #[inline]
    fn resolve<'a>(&self, op: &'a Pending) -> Option<&'a Registry> {
        self.mechanisms().find_map(|m| m.resolve(op))
    }

    #[inline]
    fn externalization(&self) -> Externalization {
        let sequenced = self
            .mechanisms()
            .any(|m| m.externalization() == Externalization::Sequenced);
        if sequenced {
            Externalization::Sequenced
        } else {
            Externalization::Immediate
        }
    }

    fn cascade(&self, store: &Store, root: usize) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .mechanisms()
            .flat_map(|m| m.cascade(store, root))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    #[inline]
    fn check(&self, store: &Store, from: usize) {
        for m in self.mechanisms() {
            m.check(store, from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Stack, StackError> {
        s.parse()
    }

    #[test]
    fn named_runtimes_are_stacks_and_print_their_names() {
        for k in RuntimeKind::ALL {
            let s = k.stack();
            assert_eq!(s.kind(), Some(k));
            assert_eq!(s.to_string(), k.name());
            assert_eq!(parse(k.name()), Ok(s));
            assert_eq!(s.validate(), Ok(s));
            assert_eq!(s.provenance(), k.forces_provenance(), "{k}");
        }
        assert_eq!(parse("registry"), parse("registry-validate"));
    }

    #[test]
    fn display_is_canonical_and_parses_back() {
        for s in Stack::subsets(Stack::all()) {
            if s.validate().is_err() {
                continue;
            }
            let name = s.to_string();
            assert_eq!(parse(&name), Ok(s), "{name}");
        }
        assert_eq!(
            parse("sequencer+lock").unwrap().to_string(),
            "lock+sequencer"
        );
        assert_eq!(parse("lock").unwrap().to_string(), "pessimistic");
        assert_eq!(parse("vanilla+lock"), parse("pessimistic"));
        assert_eq!(parse("saga+pin"), parse("registry-pin"));
        assert_eq!(parse("causal-no-cascade+cascade"), parse("causal"));
        assert_eq!(parse("vanilla").unwrap(), Stack::VANILLA);
    }

    #[test]
    fn invalid_stacks_name_the_mechanism_and_why() {
        let e = parse("pin+validate-tool").unwrap_err();
        assert!(matches!(
            e,
            StackError::Excludes {
                mechanism: Mechanism::Pin,
                other: Mechanism::ValidateTool,
                ..
            }
        ));
        assert!(e
            .to_string()
            .starts_with("`pin` cannot be stacked with `validate-tool`"));
        let e = parse("registry-validate+pin").unwrap_err();
        assert!(e.to_string().contains("`pin`"), "{e}");
        let e = parse("si+ssi").unwrap_err();
        assert!(e.to_string().contains("validate-writers"), "{e}");
        let e = parse("cascade").unwrap_err();
        assert!(matches!(
            e,
            StackError::Needs {
                mechanism: Mechanism::Cascade,
                needs: Mechanism::ValidatePreds,
                ..
            }
        ));
    }

    #[test]
    fn bad_names_are_errors_not_panics() {
        assert_eq!(parse(""), Err(StackError::Empty));
        assert!(matches!(parse("lock++pin"), Err(StackError::EmptyPart(_))));
        assert!(matches!(parse("lock+"), Err(StackError::EmptyPart(_))));
        let e = parse("lock+serializable").unwrap_err().to_string();
        assert!(e.contains("`serializable`"), "{e}");
        assert!(e.contains("validate-tool"), "{e}");
        assert!(e.contains("registry-pin"), "{e}");
    }

    #[test]
    fn subsets_come_by_size() {
        let all = Stack::subsets(Stack::all());
        assert_eq!(all.len(), 256);
        assert_eq!(all[0], Stack::VANILLA);
        assert!(all.windows(2).all(|w| w[0].len() <= w[1].len()));
        let two = Stack::of(&[Mechanism::Lock, Mechanism::Pin]);
        assert_eq!(Stack::subsets(two).len(), 4);
        assert!(Stack::of(&[Mechanism::Pin]).subset_of(two));
    }
}
