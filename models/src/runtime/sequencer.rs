//! The commit-order sequencer of `saga` (SPEC §5): an op's effects complete in the outside
//! world in any order, but effect k is externalized (made visible) only once effects 0..k−1
//! have been, so the externalization order `co` equals the issue order `io` (¬A6).
//!
//! It is a state machine fed one completion at a time; each completion releases the longest
//! completed prefix not yet released. Invariant asserted on every release: the effect released
//! is exactly the next in issue order and every earlier one was released before it. Cost: a
//! delay (an effect that completes early waits for its predecessors), never an abort.

/// Releases completed effects in issue order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Sequencer {
    completed: Vec<bool>,
    released: Vec<usize>,
}

impl Sequencer {
    /// A sequencer for `n` issued effects, none completed.
    pub fn new(n: usize) -> Self {
        Self {
            completed: vec![false; n],
            released: Vec::with_capacity(n),
        }
    }

    /// Effect `k` (an index into issue order) completed; returns the effects this makes
    /// visible, in the order they become visible (possibly none).
    pub fn complete(&mut self, k: usize) -> Vec<usize> {
        assert!(k < self.completed.len(), "effect index out of range");
        assert!(!self.completed[k], "an effect completes at most once");
        self.completed[k] = true;
        let mut out = Vec::new();
        while let Some(&true) = self.completed.get(self.released.len()) {
            let next = self.released.len();
            assert!(
                self.released.iter().enumerate().all(|(i, &e)| i == e),
                "effect released before its predecessors"
            );
            assert!(
                self.completed[..=next].iter().all(|&c| c),
                "releasing an effect whose predecessors have not completed"
            );
            self.released.push(next);
            out.push(next);
        }
        out
    }

    /// The effects externalized so far, in externalization order.
    pub fn released(&self) -> &[usize] {
        &self.released
    }

    /// Whether every effect has been externalized.
    pub fn is_done(&self) -> bool {
        self.released.len() == self.completed.len()
    }

    /// The externalization order for a whole completion order (a permutation of issue
    /// indices): always `0..n`, which the asserts inside [`Sequencer::complete`] guarantee.
    pub fn run(completion: &[usize]) -> Vec<usize> {
        let mut s = Sequencer::new(completion.len());
        for &k in completion {
            s.complete(k);
        }
        assert!(
            s.is_done(),
            "completion must be a permutation of the issued effects"
        );
        s.released
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_the_completed_prefix() {
        let mut s = Sequencer::new(3);
        assert_eq!(s.complete(2), Vec::<usize>::new());
        assert_eq!(s.complete(0), [0]);
        assert_eq!(s.complete(1), [1, 2]);
        assert!(s.is_done());
    }

    #[test]
    #[should_panic(expected = "at most once")]
    fn double_completion_is_caught() {
        let mut s = Sequencer::new(2);
        s.complete(1);
        s.complete(1);
    }
}
