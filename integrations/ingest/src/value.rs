//! How a value an agent system stored becomes an agentsim value name.
//!
//! agentsim compares values only for equality (A1: "a different value"), so a value name must be
//! equal exactly when the stored values are. We use the value's canonical JSON text (compact,
//! object keys sorted, the form `serde_json` prints for its sorted maps): short texts are used
//! as they are, so `"v1"` stays readable in a witness; longer ones become
//! `fnv1a64:<16 hex digits>`, the FNV-1a 64 digest of the canonical text. JSON `null` is NULL.
//! The Python recorder (`integrations/python/agentsim/record/values.py`) computes the same
//! names for the same JSON, so a history recorded in-process and one read from a checkpoint
//! database name a value alike.
//!
//! What this does not promise: two different values whose digests collide (a 2^-64 chance per
//! pair) would look equal; floats print as `serde_json` prints them, which may differ from
//! Python's `json.dumps` for unusual magnitudes (e.g. `1e300`).

use serde_json::Value as Json;

/// Canonical texts up to this many bytes are used as the value name itself.
pub const INLINE_MAX: usize = 40;

/// The value name of `v`, or `None` (NULL) for JSON `null`.
pub fn value_name(v: &Json) -> Option<String> {
    if v.is_null() {
        return None;
    }
    Some(name_of_text(&canonical(v)))
}

/// The value name of a canonical JSON text: the text when short, else its digest.
pub fn name_of_text(text: &str) -> String {
    if text.len() <= INLINE_MAX {
        text.to_owned()
    } else {
        format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
    }
}

/// Compact JSON with object keys sorted (serde_json's default map is a sorted `BTreeMap`).
pub fn canonical(v: &Json) -> String {
    // A `Value` always serializes; the map type is sorted, so the text is canonical.
    serde_json::to_string(v).unwrap_or_default()
}

/// FNV-1a, 64 bits (the same digest the simulator's stub generator uses).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_values_stay_readable_long_ones_are_digested() {
        assert_eq!(value_name(&json!("v1")).as_deref(), Some("\"v1\""));
        assert_eq!(value_name(&json!(3)).as_deref(), Some("3"));
        assert_eq!(value_name(&json!(null)), None);
        let long = json!({"b": [1, 2, 3], "a": "a long enough text to be digested"});
        let name = value_name(&long).unwrap();
        assert!(name.starts_with("fnv1a64:"), "{name}");
        assert_eq!(name.len(), "fnv1a64:".len() + 16);
    }

    #[test]
    fn keys_are_sorted_so_equal_objects_have_equal_names() {
        let a: Json = serde_json::from_str(r#"{"x":1,"y":[true,null]}"#).unwrap();
        let b: Json = serde_json::from_str(r#"{"y":[true,null],"x":1}"#).unwrap();
        assert_eq!(canonical(&a), r#"{"x":1,"y":[true,null]}"#);
        assert_eq!(value_name(&a), value_name(&b));
    }

    /// The same vectors are in the Python recorder's tests
    /// (`test_value_names_are_the_rust_readers`).
    #[test]
    fn names_agree_with_the_python_recorder() {
        let long = json!("a".repeat(60));
        assert_eq!(
            value_name(&long).as_deref(),
            Some("fnv1a64:93f0ef23ba8f5b89")
        );
        let list = json!({"k": vec!["x"; 20]});
        assert_eq!(
            value_name(&list).as_deref(),
            Some("fnv1a64:76b8c19493a61744")
        );
    }

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }
}
