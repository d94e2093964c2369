//! Regression cases for the history reader: a key given twice at any depth, and a
//! `co` that is not a permutation of `io` (as multisets), are errors that name the file, the
//! line, the column of the offending token and the key path. These are the shapes a fuzzer
//! or a hand-edited file produces; the reader's own unit tests cover the top-level cases. A
//! pass says these inputs are refused where they go wrong, not that every bad input is.

use agentsim_jsonl::{parse_history, JsonlError};

/// A valid first line, so every error below is on line 2.
const FIRST: &str = r#"{"agent":"a","read_set":[],"read_values":{},"read_time":0,"write_set":["c"],"write_values":{"c":"v"},"write_time":1}"#;

/// A valid record with `extra` spliced in before the closing brace.
fn second(extra: &str) -> String {
    format!(
        r#"{{"agent":"b","read_set":["c"],"read_values":{{"c":"v"}},"read_time":1,"write_set":["c"],"write_values":{{"c":"w"}},"write_time":2{extra}}}"#
    )
}

/// Parses FIRST and `line`; the error must be at line 2, column `col`, key `key`.
fn refused(line: &str, col: usize, key: &str) -> JsonlError {
    let text = format!("{FIRST}\n{line}\n");
    let e = parse_history(&text, "h.jsonl").expect_err(line);
    assert_eq!(e.position(), Some((2, col)), "{e}");
    assert_eq!(e.key(), Some(key), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("h.jsonl:2:{col}: key `{key}`: ")),
        "{e}"
    );
    e
}

/// The 1-based column of the `n`-th (0-based) occurrence of `needle` in `line`.
fn col_of(line: &str, needle: &str, n: usize) -> usize {
    line.match_indices(needle).nth(n).expect(needle).0 + 1
}

#[test]
fn a_key_given_twice_is_refused_at_every_depth() {
    let cases = [
        (second(r#","agent":"c""#), r#""agent""#, 1, "agent"),
        (
            second(r#","read_registry":[{"tool":"pay","tool":"x"}]"#),
            r#""tool""#,
            1,
            "read_registry[0].tool",
        ),
        (
            second(r#","write_registry":["a",{"tool":"pay","version":1,"version":2}]"#),
            r#""version""#,
            1,
            "write_registry[1].version",
        ),
        (
            second(r#","read_replica":{"c":"s1","c":"s2"},"read_version":{"c":1}"#),
            r#""c":"s2""#,
            0,
            "read_replica.c",
        ),
        (
            second("").replace(r#"{"c":"w"}"#, r#"{"c":"w","c":"x"}"#),
            r#""c":"x""#,
            0,
            "write_values.c",
        ),
    ];
    for (line, needle, n, key) in cases {
        let e = refused(&line, col_of(&line, needle, n), key);
        assert!(matches!(e, JsonlError::DuplicateKey { .. }), "{e}");
    }
}

#[test]
fn a_completion_order_that_is_not_a_permutation_of_io_is_refused() {
    let cases = [
        // The same length, another multiset: an effect twice, one never.
        r#","io":[["c","w"],["d","x"]],"co":[["c","w"],["c","w"]]"#,
        // The same cell, another value.
        r#","io":[["c","w"]],"co":[["c","x"]]"#,
        // Completions with nothing issued (an absent `io` is empty).
        r#","co":[["c","w"]]"#,
        // Fewer completions than issues.
        r#","io":[["c","w"],["d","x"]],"co":[["d","x"]]"#,
    ];
    for extra in cases {
        let line = second(extra);
        let e = refused(&line, col_of(&line, r#""co""#, 0) + 5, "co");
        assert!(matches!(e, JsonlError::BadValue { .. }), "{e}");
        assert!(e.to_string().contains("not a permutation of `io`"), "{e}");
    }
    // An absent `co` with effects issued: the error points at `io`.
    let line = second(r#","io":[["c","w"]]"#);
    refused(&line, col_of(&line, r#""io""#, 0) + 5, "co");
    // A true permutation, repeated effects included, is a history.
    for ok in [
        r#","io":[["c","w"],["d","x"]],"co":[["d","x"],["c","w"]]"#,
        r#","io":[["c","w"],["c","w"]],"co":[["c","w"],["c","w"]]"#,
    ] {
        let text = format!("{FIRST}\n{}\n", second(ok));
        assert!(parse_history(&text, "h.jsonl").is_ok(), "{ok}");
    }
}
