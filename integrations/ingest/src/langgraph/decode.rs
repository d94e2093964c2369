//! Decoding the typed blobs of a LangGraph checkpointer: `(type, bytes)` → JSON.
//!
//! `langgraph-checkpoint`'s `JsonPlusSerializer.dumps_typed` (read in `serde/jsonplus.py`,
//! version 4.3.2) writes `null` (no bytes), `bytes`, `bytearray`, `msgpack` (ormsgpack, with
//! extension types for Python objects) and, in databases from before its msgpack migration,
//! `json`; `pickle` only when a user opts in. We decode all but `pickle` (and anything else,
//! e.g. an encrypting serializer's types), which is [`Decoded::Unknown`].
//!
//! msgpack extension types 0–5 carry `[module, name, payload, (method)]`, a Python object that
//! LangGraph rebuilds by calling a constructor or method; we keep it as data,
//! `{"__type__": "module.Name", "data": payload}`, so that equal objects decode equal. Type 6
//! (a numpy array) is kept as its msgpack payload; type 7 (a delta-channel snapshot) is its
//! value. Any other extension type is an error: we would rather refuse than misread.
//! Non-string map keys (ormsgpack's `OPT_NON_STR_KEYS`) become their canonical JSON text.

use crate::value::canonical;
use serde_json::{Map, Number, Value as Json};

/// The ormsgpack extension codes of `jsonplus.py` (`EXT_CONSTRUCTOR_SINGLE_ARG` …).
const EXT_PYTHON_OBJECT_MAX: i8 = 5;
const EXT_NUMPY_ARRAY: i8 = 6;
const EXT_DELTA_SNAPSHOT: i8 = 7;
/// How deep a decoded value may nest: arrays, maps and extensions, counted together across
/// extension payloads. Each payload is a msgpack document of its own, for which rmpv's depth
/// limit starts afresh; without this count, extensions nested in one another recursed once per
/// level, and a blob of 100 000 of them (about 500 KB) overflowed the stack.
const MAX_NESTING: usize = rmpv::decode::MAX_DEPTH;
/// The longest text a non-string map key may become. A key that is itself a map has its keys
/// as escaped text inside its own, so each level of maps-as-keys doubles the escaping: without
/// a bound, a 320-byte blob of them took seconds and gigabytes to decode. Real keys (ints,
/// tuples of names) are far shorter.
pub const MAX_KEY_TEXT: usize = 4096;

/// A decoded blob, or why it could not be decoded.
#[derive(Debug, PartialEq)]
pub enum Decoded {
    Value(Json),
    /// The type column names a serialization we do not read.
    Unknown(String),
    /// The bytes are not what the type column says.
    Bad(String),
}

/// Decodes one `(type, bytes)` pair as stored in a `checkpoints` or `writes` row.
pub fn decode(encoding: Option<&str>, bytes: &[u8]) -> Decoded {
    match encoding {
        Some("null") | None if bytes.is_empty() => Decoded::Value(Json::Null),
        Some("null") => Decoded::Bad(format!("type null with {} bytes", bytes.len())),
        Some("bytes") | Some("bytearray") => Decoded::Value(Json::String(hex_bytes(bytes))),
        Some("json") => match serde_json::from_slice(bytes) {
            Ok(v) => Decoded::Value(v),
            Err(e) => Decoded::Bad(format!("invalid JSON: {e}")),
        },
        Some("msgpack") => match msgpack(bytes) {
            Ok(v) => Decoded::Value(v),
            Err(e) => Decoded::Bad(e),
        },
        Some(other) => Decoded::Unknown(other.to_owned()),
        None => Decoded::Unknown("(no type)".to_owned()),
    }
}

/// A whole msgpack document; trailing bytes are an error.
pub fn msgpack(bytes: &[u8]) -> Result<Json, String> {
    msgpack_at(bytes, 0)
}

/// [`msgpack`] of an extension's payload `level` arrays, maps and extensions deep.
fn msgpack_at(bytes: &[u8], level: usize) -> Result<Json, String> {
    let mut rest = bytes;
    let v = rmpv::decode::read_value(&mut rest).map_err(|e| format!("invalid msgpack: {e}"))?;
    if !rest.is_empty() {
        return Err(format!(
            "{} trailing bytes after the msgpack value",
            rest.len()
        ));
    }
    to_json(v, level)
}

/// The level inside one more array, map or extension, unless that passes [`MAX_NESTING`].
fn deeper(level: usize) -> Result<usize, String> {
    if level >= MAX_NESTING {
        return Err(format!(
            "arrays, maps and extensions nested more than {MAX_NESTING} deep"
        ));
    }
    Ok(level + 1)
}

fn to_json(v: rmpv::Value, level: usize) -> Result<Json, String> {
    use rmpv::Value as M;
    Ok(match v {
        M::Nil => Json::Null,
        M::Boolean(b) => Json::Bool(b),
        M::Integer(i) => match (i.as_i64(), i.as_u64()) {
            (Some(x), _) => Json::from(x),
            (None, Some(x)) => Json::from(x),
            (None, None) => return Err("an integer out of range".to_owned()),
        },
        M::F32(x) => float(f64::from(x)),
        M::F64(x) => float(x),
        M::String(s) => match s.into_str() {
            Some(s) => Json::String(s),
            None => return Err("a string that is not UTF-8".to_owned()),
        },
        M::Binary(b) => Json::String(hex_bytes(&b)),
        M::Array(items) => {
            let inner = deeper(level)?;
            Json::Array(
                items
                    .into_iter()
                    .map(|x| to_json(x, inner))
                    .collect::<Result<_, _>>()?,
            )
        }
        M::Map(pairs) => {
            let inner = deeper(level)?;
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match to_json(k, inner)? {
                    Json::String(s) => s,
                    other => {
                        let text = canonical(&other);
                        if text.len() > MAX_KEY_TEXT {
                            return Err(format!(
                                "a map key whose text passes {MAX_KEY_TEXT} bytes \
                                 (a map or array as a key, {} bytes)",
                                text.len()
                            ));
                        }
                        text
                    }
                };
                m.insert(key, to_json(v, inner)?);
            }
            Json::Object(m)
        }
        M::Ext(code, data) => ext(code, &data, deeper(level)?)?,
    })
}

fn ext(code: i8, data: &[u8], level: usize) -> Result<Json, String> {
    match code {
        0..=EXT_PYTHON_OBJECT_MAX => {
            let payload = msgpack_at(data, level)?;
            let Json::Array(parts) = payload else {
                return Err(format!("extension type {code}: expected an array"));
            };
            let (Some(Json::String(module)), Some(Json::String(name))) =
                (parts.first(), parts.get(1))
            else {
                return Err(format!(
                    "extension type {code}: expected [module, name, ...]"
                ));
            };
            let mut m = Map::new();
            m.insert("__type__".into(), Json::String(format!("{module}.{name}")));
            m.insert("data".into(), parts.get(2).cloned().unwrap_or(Json::Null));
            Ok(Json::Object(m))
        }
        EXT_NUMPY_ARRAY => msgpack_at(data, level),
        EXT_DELTA_SNAPSHOT => msgpack_at(data, level),
        other => Err(format!("unknown msgpack extension type {other}")),
    }
}

fn float(x: f64) -> Json {
    Number::from_f64(x).map_or_else(|| Json::String(format!("{x}")), Json::Number)
}

fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(6 + 2 * b.len());
    s.push_str("bytes:");
    for byte in b {
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// The Python type of a decoded object (`module.Name`), if it is one.
pub fn python_type(v: &Json) -> Option<&str> {
    v.get("__type__").and_then(Json::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_and_containers() {
        // {"a": [1, "x"]} in msgpack.
        let bytes = [0x81, 0xa1, b'a', 0x92, 0x01, 0xa1, b'x'];
        assert_eq!(msgpack(&bytes), Ok(json!({"a": [1, "x"]})));
        assert_eq!(decode(Some("null"), &[]), Decoded::Value(Json::Null));
        assert_eq!(decode(Some("json"), b"[1]"), Decoded::Value(json!([1])));
        assert_eq!(
            decode(Some("bytes"), &[1, 255]),
            Decoded::Value(json!("bytes:01ff"))
        );
    }

    #[test]
    fn python_objects_are_kept_as_data() {
        // ext 5, payload ["m", "T", {"k": 1}, "model_validate_json"].
        let payload = [
            0x94, 0xa1, b'm', 0xa1, b'T', 0x81, 0xa1, b'k', 0x01, 0xb3, b'm', b'o', b'd', b'e',
            b'l', b'_', b'v', b'a', b'l', b'i', b'd', b'a', b't', b'e', b'_', b'j', b's', b'o',
            b'n',
        ];
        let mut bytes = vec![0xc7, payload.len() as u8, 5];
        bytes.extend_from_slice(&payload);
        let v = msgpack(&bytes).unwrap();
        assert_eq!(v, json!({"__type__": "m.T", "data": {"k": 1}}));
        assert_eq!(python_type(&v), Some("m.T"));
    }

    #[test]
    fn refusals_are_clear() {
        assert_eq!(
            decode(Some("pickle"), b"x"),
            Decoded::Unknown("pickle".into())
        );
        assert!(matches!(
            decode(Some("msgpack"), &[0x92, 0x01]),
            Decoded::Bad(_)
        ));
        assert!(
            matches!(decode(Some("msgpack"), &[1, 2]), Decoded::Bad(m) if m.contains("trailing"))
        );
        // ext type 42 with one byte of data.
        assert_eq!(
            msgpack(&[0xd4, 42, 0]),
            Err("unknown msgpack extension type 42".to_owned())
        );
        assert!(matches!(decode(Some("null"), b"x"), Decoded::Bad(_)));
    }

    #[test]
    fn keys_that_are_maps_are_bounded() {
        // A non-string key is its canonical text: {1: "x"} and {[1, 2]: "y"} decode.
        assert_eq!(msgpack(&[0x81, 0x01, 0xa1, b'x']), Ok(json!({"1": "x"})));
        assert_eq!(
            msgpack(&[0x81, 0x92, 0x01, 0x02, 0xa1, b'y']),
            Ok(json!({"[1,2]": "y"}))
        );
        // {{{… {"k": 0}: 0 …}: 0}: 0}, maps as keys 40 deep in 82 bytes: every level doubles
        // the escaping of the text inside it, so unbounded this is 2^40 bytes of key.
        let mut bytes = vec![0x81; 40];
        bytes.extend_from_slice(&[0xa1, b'k', 0x00]);
        bytes.extend(std::iter::repeat_n(0x00, 39));
        let err = msgpack(&bytes).unwrap_err();
        assert!(
            err.contains("a map key whose text passes 4096 bytes"),
            "{err}"
        );
        // Nested 8 deep the key is still short, and decodes.
        let mut bytes = vec![0x81; 8];
        bytes.extend_from_slice(&[0xa1, b'k', 0x00]);
        bytes.extend(std::iter::repeat_n(0x00, 7));
        let v = msgpack(&bytes).unwrap();
        assert!(canonical(&v).len() < MAX_KEY_TEXT, "{v}");
    }
}
