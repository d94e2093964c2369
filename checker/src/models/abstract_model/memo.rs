//! Per-thread memo tables for the abstract explorer's two hot pure functions: the canonical
//! fingerprint of a state, and the abstract action list of a state's enumeration inputs.
//!
//! Why they pay: most successors a breadth-first search generates are byte-equal to one it
//! generated shortly before (two commuting steps from one state lead to the same state, and
//! the two intermediate states are siblings, expanded close together), while the canonical
//! encoding of a state is the explorer's most expensive step; and the abstract actions depend
//! on a few bits of the state only (which agents are in flight and their read sets, memory,
//! registry, op count, number of kept records) while enumerating them goes through every
//! concrete choice and β. A table is direct-mapped (a slot per hash, a new key evicts the
//! old), its key is the whole input, compared in full on every hit, and it belongs to one
//! model at a time (a table meeting another model's id forgets everything). So a hit returns
//! exactly what the call would: no count, verdict or byte of output can depend on a table, on
//! its size or on the thread count. What a pass does not prove: nothing about the functions
//! memoized; their own tests do that.

use super::state::AbsState;
use crate::models::action::Action;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Fingerprint slots per thread (a power of two).
const FP_SLOTS: usize = 1 << 15;
/// Action-list slots per thread (a power of two).
const ACTION_SLOTS: usize = 1 << 12;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh model identity for the tables (clones of a model share it, and compute the same).
pub fn model_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

struct Tables {
    model: u64,
    fps: Vec<Option<(AbsState, u64)>>,
    actions: Vec<Option<(u128, Vec<Action>)>>,
}

impl Tables {
    fn for_model(&mut self, model: u64) -> &mut Self {
        if self.model != model {
            self.model = model;
            self.fps.iter_mut().for_each(|s| *s = None);
            self.actions.iter_mut().for_each(|s| *s = None);
        }
        self
    }
}

thread_local! {
    static TABLES: RefCell<Tables> = RefCell::new(Tables {
        model: 0,
        fps: vec![None; FP_SLOTS],
        actions: vec![None; ACTION_SLOTS],
    });
}

/// A cheap hash of the whole state (its field values, in order); only picks a slot.
fn raw_hash(s: &AbsState) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = 0u64;
    let mut put = |x: u64| h = (h ^ x).wrapping_mul(K).rotate_left(29);
    let sm = &s.summary;
    put(u64::from(s.memory) | u64::from(s.tools) << 32 | u64::from(s.ops) << 40);
    put(u64::from(s.versions) | u64::from(sm.sticky.bits()) << 16 | u64::from(sm.latest) << 24);
    put(sm.produced);
    for p in &sm.pending {
        put(match p {
            None => 0,
            Some(p) => {
                let flags = u64::from(p.changed)
                    | u64::from(p.newer) << 1
                    | u64::from(p.stale) << 2
                    | u64::from(p.l1_bad) << 3
                    | u64::from(p.residue_bad) << 4
                    | u64::from(p.dead_pred) << 5;
                1 | u64::from(p.rs) << 1
                    | u64::from(p.tool) << 9
                    | flags << 17
                    | u64::from(p.preds) << 24
                    | u64::from(p.rv ^ p.depth.rotate_left(16)) << 40
            }
        });
    }
    for n in &sm.nodes {
        let flags = u64::from(n.dead_pred) | u64::from(n.a2) << 1 | u64::from(n.a6) << 2;
        put(u64::from(n.ws)
            | u64::from(n.preds) << 8
            | u64::from(n.a1) << 24
            | flags << 40
            | u64::from(n.wv) << 43);
    }
    for e in &sm.entries {
        put(u64::from(e.cell) | u64::from(e.value) << 8 | u64::from(e.depth) << 16);
    }
    put(sm.nodes.len() as u64 | (sm.entries.len() as u64) << 8);
    h ^ h >> 31
}

/// `compute(s)`, remembered per thread for model `model` by the whole of `s`.
pub fn fingerprint(model: u64, s: &AbsState, compute: impl FnOnce(&AbsState) -> u64) -> u64 {
    let slot = raw_hash(s) as usize & (FP_SLOTS - 1);
    TABLES.with(|t| {
        let mut t = t.borrow_mut();
        let t = t.for_model(model);
        if let Some((key, fp)) = &t.fps[slot] {
            if key == s {
                return *fp;
            }
        }
        let fp = compute(s);
        match &mut t.fps[slot] {
            Some((key, old)) => {
                key.clone_from(s);
                *old = fp;
            }
            empty => *empty = Some((s.clone(), fp)),
        }
        fp
    })
}

/// Appends `compute`'s actions for the enumeration inputs `key` (which must determine them),
/// remembered per thread for model `model`.
pub fn actions(
    model: u64,
    key: u128,
    out: &mut Vec<Action>,
    compute: impl FnOnce(&mut Vec<Action>),
) {
    let h = (key as u64 ^ (key >> 64) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let slot = (h >> 40) as usize & (ACTION_SLOTS - 1);
    TABLES.with(|t| {
        let mut t = t.borrow_mut();
        let t = t.for_model(model);
        if let Some((k, list)) = &t.actions[slot] {
            if *k == key {
                out.extend_from_slice(list);
                return;
            }
        }
        let start = out.len();
        compute(out);
        match &mut t.actions[slot] {
            Some((k, list)) => {
                *k = key;
                list.clear();
                list.extend_from_slice(&out[start..]);
            }
            empty => *empty = Some((key, out[start..].to_vec())),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::monitor::Summary;

    fn state(memory: u32) -> AbsState {
        AbsState {
            summary: Summary::new(2),
            memory,
            tools: 0,
            versions: 0,
            ops: 0,
        }
    }

    /// A hit needs the whole key: states that share a slot, or another model's table, are
    /// computed afresh.
    #[test]
    fn hits_only_on_the_same_key_and_model() {
        let (m, other) = (model_id(), model_id());
        let mut calls = 0;
        let mut fp = |model, s: &AbsState| {
            fingerprint(model, s, |s| {
                calls += 1;
                u64::from(s.memory) + 100
            })
        };
        assert_eq!(fp(m, &state(1)), 101);
        assert_eq!(fp(m, &state(1)), 101);
        assert_eq!(fp(m, &state(2)), 102);
        assert_eq!(fp(other, &state(2)), 102);
        assert_eq!(fp(m, &state(2)), 102);
        assert_eq!(calls, 4, "one hit, four computations");
        let mut lists = 0;
        let mut get = |key| {
            let mut out = vec![Action::Retract(9)];
            actions(m, key, &mut out, |o| {
                lists += 1;
                o.push(Action::Retract(key as u8));
            });
            out
        };
        assert_eq!(get(3), [Action::Retract(9), Action::Retract(3)]);
        assert_eq!(get(3), [Action::Retract(9), Action::Retract(3)]);
        assert_eq!(
            get(3 + (1 << 100)),
            [Action::Retract(9), Action::Retract(3)]
        );
        assert_eq!(lists, 2);
    }
}
