//! The mechanisms of SPEC §5.1 over the history-free summary: each decides at its points
//! (begin, commit, retraction, externalization) from relative facts only, and a [`Stack`] of
//! them is a runtime. The named runtimes are stacks ([`Stack::of_kind`]); any other stack
//! composes the same way, because the decisions combine by a fixed rule: a begin happens if
//! no mechanism drops it, a commit is aborted if any mechanism aborts it, the sequencer
//! forces `co = io`, `pin` resolves the planned tool against the read-time registry, and a
//! retraction aborts the root and, with `cascade`, every later live dependant.
//!
//! What each reads, in place of the concrete runtime's absolute state:
//! * `lock`: the read sets of the ops in flight (they are exactly the lock table);
//! * `validate` / `validate-writers`: "a live commit wrote a cell I read since my read";
//! * `cascade` / `pred-check`: "one of my preds is aborted", and the live dependants;
//! * `registry-validate`: "my planned tool left the registry or changed since my read";
//! * `sequencer`, `pin`: nothing (they rewrite what is recorded).
//!
//! A stack's verdicts here equal the concrete runtime's only where the equivalence tests
//! show it (every named runtime, at the bounds they run).

use crate::action::Seq;
use agentsim_models::monitor::{Need, Summary};
use agentsim_models::runtime::{Discipline, RuntimeKind};

/// One mechanism (SPEC §5.1). `pred-check` is `cascade`'s commit rule without its
/// retraction half: what `causal-no-cascade` adds to `validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mechanism {
    Lock,
    ValidateWriters,
    Validate,
    Cascade,
    PredCheck,
    Sequencer,
    Pin,
    RegistryValidate,
}

impl Mechanism {
    /// Every mechanism.
    pub const ALL: [Mechanism; 8] = [
        Mechanism::Lock,
        Mechanism::ValidateWriters,
        Mechanism::Validate,
        Mechanism::Cascade,
        Mechanism::PredCheck,
        Mechanism::Sequencer,
        Mechanism::Pin,
        Mechanism::RegistryValidate,
    ];

    /// The SPEC §5.1 name.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Lock => "lock",
            Mechanism::ValidateWriters => "validate-writers",
            Mechanism::Validate => "validate",
            Mechanism::Cascade => "cascade",
            Mechanism::PredCheck => "pred-check",
            Mechanism::Sequencer => "sequencer",
            Mechanism::Pin => "pin",
            Mechanism::RegistryValidate => "registry-validate",
        }
    }

    /// Parses a SPEC §5.1 name.
    pub fn parse(s: &str) -> Result<Mechanism, String> {
        Mechanism::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Mechanism::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown mechanism `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// A set of mechanisms acting together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stack(Vec<Mechanism>);

impl Stack {
    /// The stack of `mechanisms` (order does not matter; duplicates collapse).
    pub fn new(mechanisms: &[Mechanism]) -> Stack {
        let mut v = mechanisms.to_vec();
        v.sort_unstable();
        v.dedup();
        Stack(v)
    }

    /// The named runtime as a stack (SPEC §5.1).
    pub fn of_kind(kind: RuntimeKind) -> Stack {
        use Mechanism::*;
        let causal = [Validate, Cascade];
        let saga = [Validate, Cascade, Sequencer];
        Stack::new(match kind {
            RuntimeKind::Vanilla => &[],
            RuntimeKind::Pessimistic => &[Lock],
            RuntimeKind::Si => &[ValidateWriters],
            RuntimeKind::Ssi => &[Validate],
            RuntimeKind::Causal { cascade: true } => &causal,
            RuntimeKind::Causal { cascade: false } => &[Validate, PredCheck],
            RuntimeKind::Saga => &saga,
            RuntimeKind::Registry(Discipline::Validate) => {
                &[Validate, Cascade, Sequencer, RegistryValidate]
            }
            RuntimeKind::Registry(Discipline::Pin) => &[Validate, Cascade, Sequencer, Pin],
        })
    }

    pub fn has(&self, m: Mechanism) -> bool {
        self.0.contains(&m)
    }

    pub fn mechanisms(&self) -> &[Mechanism] {
        &self.0
    }

    /// Whether some mechanism reads provenance (so it is recorded whatever the extension says).
    pub fn forces_provenance(&self) -> bool {
        self.has(Mechanism::Cascade) || self.has(Mechanism::PredCheck)
    }

    /// `name+name+…`, or `vanilla` for the empty stack.
    pub fn label(&self) -> String {
        if self.0.is_empty() {
            return "vanilla".into();
        }
        let names: Vec<_> = self.0.iter().map(|m| m.name()).collect();
        names.join("+")
    }

    /// What the summary must track for this stack's decisions (on top of the watched
    /// properties, which the caller sets).
    pub fn add_needs(&self, need: &mut Need) {
        need.newer |= self.has(Mechanism::Validate) || self.has(Mechanism::ValidateWriters);
        need.tools |= self.has(Mechanism::RegistryValidate);
        need.reads |= self.has(Mechanism::Lock);
    }

    /// `lock` at begin: the read set must be free of other agents' locks (read sets).
    pub fn begins(&self, s: &Summary<()>, slot: usize, rs: u8) -> bool {
        !self.has(Mechanism::Lock) || locked_by_others(s, slot) & rs == 0
    }

    /// Whether some mechanism aborts `slot`'s commit of write set `ws`.
    pub fn aborts(&self, need: &Need, s: &Summary<()>, slot: usize, ws: u8) -> bool {
        let p = s.pending[slot]
            .as_ref()
            .expect("a commit has an op in flight");
        self.0.iter().any(|&m| match m {
            Mechanism::Lock => locked_by_others(s, slot) & ws & !p.rs != 0,
            Mechanism::ValidateWriters => ws != 0 && s.newer(need, slot),
            Mechanism::Validate => s.newer(need, slot),
            Mechanism::Cascade | Mechanism::PredCheck => s.dead_pred(slot),
            Mechanism::RegistryValidate => s.changed(slot),
            Mechanism::Sequencer | Mechanism::Pin => false,
        })
    }

    /// The externalization order that gets recorded as `co`.
    pub fn externalized(&self, io: Seq, co: Seq) -> Seq {
        if self.has(Mechanism::Sequencer) {
            io
        } else {
            co
        }
    }

    /// Whether the write registry is the read-time snapshot.
    pub fn pinned(&self) -> bool {
        self.has(Mechanism::Pin)
    }

    /// The nodes a retraction of node `root` aborts.
    pub fn retracted(&self, s: &Summary<()>, root: usize) -> u16 {
        if self.has(Mechanism::Cascade) {
            s.doomed(root)
        } else {
            1 << root
        }
    }
}

/// The cells locked by agents other than `slot` (their ops' read sets).
fn locked_by_others(s: &Summary<()>, slot: usize) -> u8 {
    s.pending
        .iter()
        .enumerate()
        .filter(|&(a, _)| a != slot)
        .filter_map(|(_, p)| p.as_ref())
        .fold(0, |m, p| m | p.rs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_runtimes_are_stacks() {
        let labels: Vec<String> = RuntimeKind::ALL
            .iter()
            .map(|&k| Stack::of_kind(k).label())
            .collect();
        assert_eq!(labels[0], "vanilla");
        assert_eq!(labels[1], "lock");
        assert_eq!(labels[5], "validate+pred-check");
        assert_eq!(labels[8], "validate+cascade+sequencer+pin");
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.name()), Ok(m));
        }
        assert!(Mechanism::parse("mutex")
            .unwrap_err()
            .contains("registry-validate"));
        let forced: Vec<bool> = RuntimeKind::ALL
            .iter()
            .map(|&k| Stack::of_kind(k).forces_provenance())
            .collect();
        let want: Vec<bool> = RuntimeKind::ALL
            .iter()
            .map(|k| k.forces_provenance())
            .collect();
        assert_eq!(forced, want);
    }
}
