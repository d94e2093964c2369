//! The generic compact state codec: any model state that derives serde's `Serialize` and
//! `Deserialize` is written as postcard bytes (integers as LEB128 varints, lengths as varint
//! prefixes, no field names, no padding), so every model's frontier can be kept packed and
//! spilled to disk (see [`crate::engine::frontier`]) without a codec of its own.
//!
//! A runtime-model state at 2 agents, 1 cell, MaxOps 2 is a tree of a dozen small vectors in
//! memory (each a 24-byte header plus a heap block and the allocator's rounding); encoded it
//! is a few dozen bytes. A model with a tighter bit-level encoding overrides
//! [`Space::encode`](crate::engine::space::Space::encode) (the paper model does, `statecodec.rs`).
//!
//! The codec is the identity on states: decoding what it wrote gives an equal state (tests
//! round-trip every reachable state of several models), so it changes no count. It is a
//! format for this process's own spill files only: nothing here is stable across builds.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Appends the postcard encoding of `state` to `out`.
pub fn encode<T: Serialize>(state: &T, out: &mut Vec<u8>) {
    let buf = std::mem::take(out);
    *out = postcard::to_extend(state, buf).expect("a model state serializes to bytes");
}

/// Decodes one state written by [`encode`] at the front of `bytes`: the state and the bytes
/// it took.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> (T, usize) {
    let (state, rest) = postcard::take_from_bytes::<T>(bytes)
        .expect("a packed state decodes with the codec that wrote it");
    (state, bytes.len() - rest.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::names::{Agent, Cell, Value};
    use agentsim_models::record::Registry;
    use agentsim_models::runtime::{
        BeginRequest, CommitRequest, Guarded, Options, RuntimeKind, Stack,
    };

    #[test]
    fn runtimes_round_trip_back_to_back() {
        let mut bytes = Vec::new();
        let mut all = Vec::new();
        for kind in RuntimeKind::ALL {
            let opts = Options { provenance: true };
            let mut rt = Guarded::new(kind, Registry::all(2), opts);
            rt.begin(&BeginRequest::new(Agent(0), vec![Cell(0)], None));
            rt.begin(&BeginRequest::new(Agent(1), vec![Cell(0)], None));
            rt.commit(&CommitRequest::new(Agent(0), &[(Cell(0), Value(2))]));
            encode(&rt, &mut bytes);
            all.push(rt);
        }
        let mut at = 0;
        for rt in &all {
            let (back, used): (Guarded<Stack>, usize) = decode(&bytes[at..]);
            assert_eq!(&back, rt);
            at += used;
        }
        assert_eq!(at, bytes.len());
        assert!(
            bytes.len() < 120 * all.len(),
            "compact: {} bytes",
            bytes.len()
        );
    }
}
