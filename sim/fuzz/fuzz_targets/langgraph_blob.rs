//! LangGraph checkpoint blobs (`agentsim ingest langgraph DB`): the decoder of one
//! `checkpoints.checkpoint`, `checkpoints.metadata` or `writes.value` blob never panics on
//! bytes from a system we do not control, and decodes the same bytes the same way twice.
//!
//! The first byte picks what the rest is, as the `type` column would say it: `m` msgpack,
//! `j` json, `b` bytes, `a` bytearray, `n` null, `-` no type (SQL NULL), `M` a checkpoint's
//! `metadata` (JSON, else msgpack, as the reader tries them); any other byte a type the
//! decoder does not read (`pickle`). The seeds are the example databases' blobs in this
//! framing (`make_langgraph_seeds.py`).
#![no_main]

use agentsim_ingest::langgraph::decode::{decode, msgpack, python_type, Decoded};
use agentsim_ingest::value::{canonical, value_name};
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;

/// What the reader does with a decoded value: names it, reads its Python type.
fn use_value(v: &Json) {
    let text = canonical(v);
    assert!(!text.is_empty(), "a value with no canonical text");
    assert_eq!(value_name(v).is_none(), v.is_null(), "only null is unnamed");
    let _ = python_type(v);
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    if which == b'M' {
        // `Ctx::checkpoint`'s metadata: JSON first, then msgpack.
        let meta = |b: &[u8]| {
            serde_json::from_slice::<Json>(b)
                .map_err(|e| e.to_string())
                .or_else(|_| msgpack(b))
        };
        let first = meta(bytes);
        assert_eq!(first, meta(bytes), "metadata decodes differently twice");
        if let Ok(v) = &first {
            use_value(v);
            let _ = v.get("step").and_then(Json::as_i64);
        }
        return;
    }
    let encoding = match which {
        b'm' => Some("msgpack"),
        b'j' => Some("json"),
        b'b' => Some("bytes"),
        b'a' => Some("bytearray"),
        b'n' => Some("null"),
        b'-' => None,
        _ => Some("pickle"),
    };
    let first = decode(encoding, bytes);
    assert_eq!(
        first,
        decode(encoding, bytes),
        "a blob decodes differently twice"
    );
    match &first {
        Decoded::Value(v) => {
            use_value(v);
            if let Some(Json::Object(m)) = v.get("channel_values") {
                m.values().for_each(use_value);
            }
        }
        Decoded::Unknown(e) => assert!(
            matches!(encoding, Some("pickle") | None),
            "a known type {e} refused as unknown"
        ),
        Decoded::Bad(m) => assert!(!m.is_empty(), "a refusal without a reason"),
    }
    if encoding == Some("msgpack") {
        let direct = msgpack(bytes);
        assert_eq!(
            direct.is_ok(),
            matches!(first, Decoded::Value(_)),
            "decode and msgpack disagree"
        );
    }
});
