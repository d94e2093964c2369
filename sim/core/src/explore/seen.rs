//! The states a stateful search has met, one set for all its threads: a state is expanded
//! once whatever the thread count, not once per task that meets it.
//!
//! Each state is *open* while a walker expands it (it is on that walker's path) and *done*
//! once the walker has run every path below it. A path ends at a done state (everything
//! reachable from it was met, and every loop through it closed), and at a state on its own
//! path (a loop closes: a lasso). A state open on another thread's path is expanded again:
//! ending there could lose a loop, since the other walker, meeting the state this path came
//! from, would end there too, and neither would close the loop between them. With that rule
//! every loop closes on some path: the first state of a loop to be done had every successor
//! on the loop met by its own walker, which either ran it to done before (not first, a
//! contradiction) or found it on its own path (a lasso). This is the sequential argument for
//! depth-first search with a seen set (every cycle holds a back edge); a walker that met only
//! done states and its own is that search.
//!
//! What the thread count does not change: every reachable state is met, whoever meets it
//! first, so the anomaly sets (each is the set of a path end or of a loop, and every loop
//! closes) and the verdicts are the same. What it changes: which path reached a state first,
//! hence the witnesses found (real paths, not always the same ones), the paths run and
//! merged, and the count of states by a few where two states with one key differ in what
//! the key leaves out (the one expanded decides its successors' keys).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Locks the set is cut into (by the key's low bits), so that threads rarely wait.
const PARTS: usize = 64;

/// Bytes one state costs in the set (key, flag, hash-table slot and slack), for the memory
/// ceiling.
pub(super) const STATE_BYTES: u64 = 48;

/// What a walker learns on meeting a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Met {
    /// Not met before: it is now open.
    New,
    /// Open on a walker's path (expanded again by this one).
    Open,
    /// Done: every path below it was run.
    Done,
}

/// The shared set of states met: key to done.
pub(super) struct Seen {
    parts: Vec<Mutex<HashMap<u128, bool>>>,
    len: AtomicU64,
}

impl Default for Seen {
    fn default() -> Self {
        Seen {
            parts: (0..PARTS).map(|_| Mutex::new(HashMap::new())).collect(),
            len: AtomicU64::new(0),
        }
    }
}

impl Seen {
    fn part(&self, key: u128) -> std::sync::MutexGuard<'_, HashMap<u128, bool>> {
        self.parts[(key as usize) % PARTS]
            .lock()
            .expect("no thread panics holding a part of the seen set")
    }

    /// Meets `key`: opens it when it is new.
    pub(super) fn meet(&self, key: u128) -> Met {
        let mut p = self.part(key);
        match p.get(&key) {
            Some(true) => Met::Done,
            Some(false) => Met::Open,
            None => {
                p.insert(key, false);
                self.len.fetch_add(1, Ordering::SeqCst);
                Met::New
            }
        }
    }

    /// Marks `key` done: every path below it was run.
    pub(super) fn close(&self, key: u128) {
        self.part(key).insert(key, true);
    }

    /// States met.
    pub(super) fn len(&self) -> u64 {
        self.len.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_new_then_open_then_done() {
        let s = Seen::default();
        assert_eq!(s.meet(7), Met::New);
        assert_eq!(s.meet(7), Met::Open);
        assert_eq!(s.meet(7 + PARTS as u128), Met::New);
        s.close(7);
        assert_eq!(s.meet(7), Met::Done);
        assert_eq!(s.len(), 2);
    }
}
