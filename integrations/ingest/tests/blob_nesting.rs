//! A checkpoint blob nests arrays, maps and Python objects (msgpack extensions, each holding
//! a msgpack document of its own) only so deep: deeper is a clear refusal, never a stack
//! overflow, however the nesting is made. Found by reading the decoder while writing the
//! `langgraph_blob` fuzz target (its 4 KiB inputs cannot nest deep enough to overflow).

use agentsim_ingest::langgraph::decode::{decode, Decoded};

/// `levels` extensions of `code` (ext 32 framing), each holding the next, around `1`; for a
/// Python object (codes 0–5) each payload is `["m", "T", inner]`. Built outside in, in
/// linear time.
fn nested_ext(code: i8, levels: usize) -> Vec<u8> {
    let wrap: &[u8] = if code <= 5 {
        &[0x93, 0xa1, b'm', 0xa1, b'T']
    } else {
        &[]
    };
    let per_level = 6 + wrap.len();
    let mut b = Vec::with_capacity(levels * per_level + 1);
    for i in 0..levels {
        let payload = (levels - 1 - i) * per_level + wrap.len() + 1;
        b.push(0xc9);
        b.extend_from_slice(&(payload as u32).to_be_bytes());
        b.push(code as u8);
        b.extend_from_slice(wrap);
    }
    b.push(0x01);
    b
}

/// `levels` one-element arrays around `1`.
fn nested_arrays(levels: usize) -> Vec<u8> {
    let mut b = vec![0x91; levels];
    b.push(0x01);
    b
}

fn refused_as_too_deep(d: Decoded) -> bool {
    matches!(d, Decoded::Bad(m) if m.contains("nested more than"))
}

#[test]
fn nested_extensions_are_refused_not_a_stack_overflow() {
    // Numpy arrays (6) and delta snapshots (7) are their payload; Python objects (0–5) wrap it.
    for code in [6, 7, 5, 0] {
        let d = decode(Some("msgpack"), &nested_ext(code, 50_000));
        assert!(refused_as_too_deep(d), "extension type {code}");
    }
}

#[test]
fn moderate_nesting_still_decodes() {
    for code in [6, 5] {
        let d = decode(Some("msgpack"), &nested_ext(code, 200));
        assert!(
            matches!(d, Decoded::Value(_)),
            "extension type {code}: {d:?}"
        );
    }
    // rmpv's own limit for one document still decides for plain arrays.
    assert!(matches!(
        decode(Some("msgpack"), &nested_arrays(400)),
        Decoded::Value(_)
    ));
    assert!(matches!(
        decode(Some("msgpack"), &nested_arrays(100_000)),
        Decoded::Bad(_)
    ));
}
