//! The walker: one path through the tree of choice points, and the backtracking that moves it
//! to the next path (stateless depth-first search by re-execution from the start, as shuttle
//! and CHESS do: the engine is run again over a prefix of choices, so no engine state is
//! copied or hashed).
//!
//! At a choice point met for the first time the walker fixes the alternatives to explore
//! there: every alternative, or, with reduction, at an agent choice where some enabled agent's
//! next step is local, that agent alone (a persistent set of size one, see
//! [`super::reduction`]). It also keys the path's equivalence class (the order of the shared
//! steps and each agent's own data choices), so that the number of classes can be counted
//! with and without reduction.

use super::reduction;
use crate::digest::Fnv1a;
use crate::scheduler::{ChoiceKind, ChoicePoint, Chooser, Footprint, Scheduler};

/// The alternatives explored at one choice point and the one the current path takes.
#[derive(Clone, Debug)]
struct Frame {
    alts: Vec<u32>,
    next: usize,
    /// The number of alternatives the engine offered (0: a fixed prefix frame, unchecked).
    n: usize,
}

/// Two independent FNV-1a streams: a 128-bit key, so that distinct classes collide with
/// probability about 2^-128 per pair (the count of classes is a count of keys).
#[derive(Clone, Copy, Debug)]
struct Key2(Fnv1a, Fnv1a);

impl Key2 {
    fn new() -> Self {
        let mut b = Fnv1a::new();
        b.word(0x9e37_79b9_7f4a_7c15);
        Key2(Fnv1a::new(), b)
    }

    fn word(&mut self, x: u64) {
        self.0.word(x);
        self.1.word(x);
    }

    fn finish(&self) -> u128 {
        (u128::from(self.0.finish()) << 64) | u128::from(self.1.finish())
    }
}

/// A path through the choice tree, driving the engine as its [`Chooser`].
pub(super) struct Walker {
    frames: Vec<Frame>,
    /// The next frame the running trial reaches.
    cursor: usize,
    /// Frames below this index are the task's fixed prefix: never backtracked.
    fixed: usize,
    reduction: bool,
    steps_per_agent: u64,
    /// The order of shared steps, by agent.
    shared: Key2,
    /// Each agent's data choices (prob, pick, order), in its own order.
    own: Vec<Key2>,
}

impl Walker {
    /// A walker over the subtree below `prefix` (choices at the first choice points).
    pub(super) fn new(prefix: &[u32], reduction: bool, steps_per_agent: u64) -> Self {
        Walker {
            frames: prefix
                .iter()
                .map(|&c| Frame {
                    alts: vec![c],
                    next: 0,
                    n: 0,
                })
                .collect(),
            cursor: 0,
            fixed: prefix.len(),
            reduction,
            steps_per_agent,
            shared: Key2::new(),
            own: Vec::new(),
        }
    }

    /// The class key of the path just run.
    pub(super) fn class_key(&self) -> u128 {
        let mut k = Key2::new();
        k.word(self.shared.finish() as u64);
        k.word((self.shared.finish() >> 64) as u64);
        for o in &self.own {
            let f = o.finish();
            k.word(f as u64);
            k.word((f >> 64) as u64);
        }
        k.finish()
    }

    /// Choice points on the path just run.
    pub(super) fn depth(&self) -> usize {
        self.cursor
    }

    /// The alternatives at frame `i` of the path just run, if it reached one.
    pub(super) fn alternatives_at(&self, i: usize) -> Option<&[u32]> {
        self.frames.get(i).map(|f| &f.alts[..])
    }

    /// Moves to the next path; `false` when the subtree is exhausted.
    pub(super) fn backtrack(&mut self) -> bool {
        assert!(
            self.cursor == self.frames.len(),
            "a path reaches every frame it fixed (the engine is deterministic)"
        );
        while self.frames.len() > self.fixed {
            let f = self.frames.last_mut().expect("frames past the prefix");
            if f.next + 1 < f.alts.len() {
                f.next += 1;
                return true;
            }
            self.frames.pop();
        }
        false
    }
}

impl Chooser for Walker {
    fn start(&mut self) {
        self.cursor = 0;
        self.shared = Key2::new();
        self.own.clear();
    }

    fn pick(&mut self, p: &ChoicePoint<'_>) -> usize {
        assert!(p.n >= 2, "a choice point has two alternatives or more");
        let k = match self.frames.get(self.cursor) {
            Some(f) => {
                assert!(
                    f.n == 0 || f.n == p.n,
                    "a replayed prefix meets the same choice points (determinism)"
                );
                f.alts[f.next] as usize
            }
            None => {
                let alts = if self.reduction && p.kind == ChoiceKind::Agent {
                    reduction::persistent(p)
                } else {
                    (0..p.n as u32).collect()
                };
                let first = alts[0] as usize;
                self.frames.push(Frame {
                    alts,
                    next: 0,
                    n: p.n,
                });
                first
            }
        };
        assert!(k < p.n, "the alternative is offered");
        self.cursor += 1;
        if p.kind != ChoiceKind::Agent {
            if self.own.len() <= p.agent {
                self.own.resize(p.agent + 1, Key2::new());
            }
            self.own[p.agent].word(k as u64);
        }
        k
    }

    fn stepped(&mut self, agent: usize, footprint: Footprint) {
        if footprint == Footprint::Shared {
            self.shared.word(agent as u64);
        }
    }

    fn steps_per_agent(&self) -> Option<u64> {
        Some(self.steps_per_agent)
    }
}

impl Scheduler for Walker {
    fn start_trial(&mut self, _trial_seed: u64, _agents: usize, _steps_hint: usize) {}

    fn choose(&mut self, _event: u64, _enabled: &[usize]) -> usize {
        unreachable!("a walker drives abstract-time trials only, through its chooser")
    }

    fn chooser(&mut self) -> Option<&mut dyn Chooser> {
        Some(self)
    }
}
