//! What the explorer needs from a model beyond stateright's `Model`: a fingerprint (canonical
//! under symmetry), property evaluation, and a readable view of a state for traces.
//!
//! Fingerprints are 64-bit, as TLC's are: two distinct states collide with probability about
//! n²/2⁶⁵ (≈ 3·10⁻⁴ at 10⁸ states, ≈ 10⁻¹¹ at the pinned 31,942). A collision can only hide
//! states, never invent one, so a reported violation is always real.

use crate::config::Bounds;
use crate::engine::codec;
use crate::property::PropSet;
use agentsim_models::record::{OpRecord, Registry, ValueMap};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::hash::{Hash, Hasher};

/// An agent's pending op, as traces show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingView {
    pub read_set: Vec<u32>,
    pub read_values: ValueMap,
    pub read_registry: Registry,
    pub planned_tool: Option<u32>,
    pub read_time: u64,
    pub preds: Vec<u32>,
}

/// A model state in the vocabulary of SPEC §1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateView {
    pub log: Vec<OpRecord>,
    /// `inflight[a]`; `None` is the empty record.
    pub inflight: Vec<Option<PendingView>>,
    pub registry: Registry,
    pub memory: ValueMap,
}

/// How an action reads in a step list (SPEC vocabulary), so traces of every model render alike.
pub trait StepText {
    /// The action in words, e.g. `StartRead(a1) rs={c1} ...`.
    fn describe(&self, b: &Bounds) -> String;
    /// Whether taking it appends a record to the log (the step list then names the record).
    fn appends_record(&self) -> bool;
}

/// A stateright model the parallel explorer and the trace search can run. Its actions are
/// small `Copy` values (the paper model's `Action` for SPEC §1, others for the replicated
/// model). Its states derive serde's traits, which gives every model a packed encoding for frontiers
/// ([`crate::engine::codec`]) unless it brings a tighter one.
pub trait Space:
    stateright::Model<
        Action: Copy + std::fmt::Debug + PartialEq + Send + Sync + StepText,
        State: Clone + Send + Sync + Serialize + DeserializeOwned,
    > + Sync
{
    /// The constants this model was built with.
    fn bounds(&self) -> Bounds;

    /// A 64-bit fingerprint; equal for states in one symmetry class when symmetry is on.
    fn fingerprint(&self, state: &Self::State) -> u64;

    /// The actions the parallel explorer expands from `state`: by default all of them. A
    /// model with symmetry may leave out an action whose successor is in the same symmetry
    /// class as an earlier action's from the same state. That successor would be a duplicate
    /// when generated, so the distinct states, the depth and the verdicts do not change; the
    /// generated count does (it counts the successors computed). Trace searches replay action
    /// indices and keep using [`stateright::Model::actions`].
    fn explore_actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        self.actions(state, actions);
    }

    /// The subset of `check` that `state` violates.
    fn violations(&self, state: &Self::State, check: PropSet) -> PropSet;

    /// The state in SPEC §1 terms.
    fn view(&self, state: &Self::State) -> StateView;

    /// Appends a compact byte encoding of `state` (frontiers are kept packed and spilled to
    /// disk in it); the default is the generic [`crate::engine::codec`].
    fn encode(&self, state: &Self::State, out: &mut Vec<u8>) {
        codec::encode(state, out);
    }

    /// Decodes one state that [`Space::encode`] wrote at the front of `bytes`: the state and
    /// the bytes it took.
    fn decode(&self, bytes: &[u8]) -> (Self::State, usize) {
        codec::decode(bytes)
    }
}

/// A fast, deterministic 64-bit hasher (splitmix64 rounds); no per-process random keys,
/// so fingerprints and therefore every reported figure are reproducible.
#[derive(Clone, Copy, Debug)]
pub struct FpHasher(u64);

impl Default for FpHasher {
    fn default() -> Self {
        FpHasher(0x243F_6A88_85A3_08D3)
    }
}

pub use agentsim_models::mix::mix;
use agentsim_models::mix::GOLDEN;

impl Hasher for FpHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(buf));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = mix(self.0.wrapping_add(GOLDEN) ^ x);
    }
    fn write_u128(&mut self, x: u128) {
        self.write_u64(x as u64);
        self.write_u64((x >> 64) as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        mix(self.0)
    }
}

/// The fingerprint of any hashable value.
pub fn fingerprint_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = FpHasher::default();
    value.hash(&mut h);
    h.finish()
}

/// A hasher for sets keyed by fingerprints: they are already mixed, so pass them through.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_deterministic_and_discriminate() {
        assert_eq!(fingerprint_of(&[1u128, 2]), fingerprint_of(&[1u128, 2]));
        assert_ne!(fingerprint_of(&[1u128, 2]), fingerprint_of(&[2u128, 1]));
        assert_ne!(fingerprint_of(&[0u128]), fingerprint_of(&[0u128, 0]));
    }
}
