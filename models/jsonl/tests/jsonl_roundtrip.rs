//! The JSON Lines format: round trips, the schema in step with the reader, and error reports.
//!
//! Round trip: writing a history and reading it back gives the same records over the same
//! names (ids are re-interned in order of appearance, so we compare after renaming), and
//! writing again gives the same bytes. Errors: every kind of bad input is rejected with the
//! file, the 1-based line and the key. A pass does not validate the schema file as JSON Schema
//! (no validator is vendored); it checks that its keys match the reader's.

#[path = "../../tests/detect_support/mod.rs"]
mod detect_support;

use agentsim_jsonl::{self as jsonl, JsonlError};
use agentsim_models::{Agent, Cell, History, Names, Registry, Tool, ToolEntry, Value, ValueMap};
use detect_support::{arb_raw, assemble};
use proptest::prelude::*;

/// `h` with every id replaced by the id of the same name in `names`.
fn rename(h: &History, names: &Names) -> History {
    let cell = |c: Cell| Cell(names.cells.get(&h.names.cell_name(c)).expect("cell"));
    let tool = |t: Tool| Tool(names.tools.get(&h.names.tool_name(t)).expect("tool"));
    let value = |v: Value| match h.names.value_name(v) {
        None => Value::NULL,
        Some(n) => names.find_value(&n).expect("value"),
    };
    let map =
        |m: &ValueMap| ValueMap::from_pairs(m.entries().iter().map(|&(c, v)| (cell(c), value(v))));
    let reg = |r: &Registry| {
        Registry::from_entries(r.entries().iter().map(|e| ToolEntry {
            tool: tool(e.tool),
            version: e.version,
        }))
    };
    let set = |s: &[Cell]| {
        let mut s: Vec<_> = s.iter().map(|&c| cell(c)).collect();
        s.sort_unstable();
        s
    };
    let mut out = h.clone();
    for r in &mut out.records {
        r.agent = Agent(
            names
                .agents
                .get(&h.names.agent_name(r.agent))
                .expect("agent"),
        );
        (r.read_set, r.write_set) = (set(&r.read_set), set(&r.write_set));
        (r.read_values, r.write_values) = (map(&r.read_values), map(&r.write_values));
        (r.read_registry, r.write_registry) = (reg(&r.read_registry), reg(&r.write_registry));
        r.planned_tool = r.planned_tool.map(tool);
        r.io = r.io.iter().map(|&(c, v)| (cell(c), value(v))).collect();
        r.co = r.co.iter().map(|&(c, v)| (cell(c), value(v))).collect();
    }
    out.names = names.clone();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn write_then_read_is_identity(raw in prop::collection::vec(arb_raw(), 0..=200)) {
        let h = permuted_co(assemble(&raw));
        let text = jsonl::write_history(&h);
        let back = jsonl::parse_history(&text, "mem").expect("own output reads back");
        prop_assert_eq!(&rename(&h, &back.names).records, &back.records);
        prop_assert_eq!(jsonl::write_history(&back), text);
    }
}

/// `h` with every completion order that is not a permutation of its issue order replaced by
/// the issue order: the reader refuses those, the detectors' generator makes them.
fn permuted_co(mut h: History) -> History {
    for r in &mut h.records {
        let (mut io, mut co) = (r.io.clone(), r.co.clone());
        io.sort_unstable();
        co.sort_unstable();
        if io != co {
            r.co = r.io.clone();
        }
    }
    h
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Hostile bytes: any mutation of a valid history reads back or is an error naming a line
    /// and a column on it; the reader never panics.
    #[test]
    fn mutated_input_is_read_or_refused_never_a_panic(
        raw in prop::collection::vec(arb_raw(), 1..=8),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let mut bytes = jsonl::write_history(&permuted_co(assemble(&raw))).into_bytes();
        for (at, byte, how) in edits {
            let i = at.index(bytes.len());
            match how {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
            if bytes.is_empty() { break; }
        }
        let lines = bytes.split(|&b| b == b'\n').count();
        let mut reader = jsonl::RecordReader::new(bytes.as_slice(), "fuzz");
        let mut names = Names::new();
        let mut rec = agentsim_models::OpRecord::default();
        loop {
            match reader.next_into(&mut names, &mut rec) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    let (line, col) = e.position().expect("a line error");
                    prop_assert!(line >= 1 && line <= lines && col >= 1, "{}", e);
                    let at = format!("fuzz:{line}:{col}: ");
                    prop_assert!(e.to_string().starts_with(&at), "{}", e);
                    break;
                }
            }
        }
    }
}

#[test]
fn schema_lists_exactly_the_readers_keys() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schema/history-v1.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema file")).expect("json");
    let mut props: Vec<&str> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    let mut keys = jsonl::KEYS.to_vec();
    props.sort_unstable();
    keys.sort_unstable();
    assert_eq!(props, keys);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .map(|v| v.as_str().expect("str"))
        .collect();
    assert_eq!(required, jsonl::REQUIRED_KEYS);
    assert_eq!(
        schema["additionalProperties"],
        serde_json::Value::Bool(false)
    );
}

const OK: &str = concat!(
    r#"{"agent":"a","read_set":["c"],"read_values":{"c":null},"read_time":0,"#,
    r#""write_set":["c"],"write_values":{"c":"v1"},"write_time":1}"#
);

/// Parses `OK` followed by `line` and returns the error (line 2).
fn error_on_line_two(line: &str) -> JsonlError {
    let text = format!("{OK}\n{line}\n");
    jsonl::parse_history(&text, "bad.jsonl").expect_err("must be rejected")
}

fn second(edit: &str) -> String {
    OK.replacen("\"write_time\":1", edit, 1)
}

#[test]
fn every_defect_names_file_line_and_key() {
    let cases: &[(String, &str, &str)] = &[
        (
            second(r#""write_time":2,"colour":"red""#),
            "colour",
            "unknown key",
        ),
        (
            OK.replace(r#""read_time":0,"#, ""),
            "read_time",
            "missing required key",
        ),
        (
            second(r#""write_time":"2""#),
            "write_time",
            "expected a non-negative integer",
        ),
        (
            second(r#""write_time":2,"aborted":"no""#),
            "aborted",
            "expected a boolean",
        ),
        (
            second(r#""write_time":2,"preds":[1]"#),
            "preds[0]",
            "does not point to an earlier",
        ),
        (
            second(r#""write_time":2,"preds":[-1]"#),
            "preds[0]",
            "non-negative integer",
        ),
        (
            second(r#""write_time":0"#),
            "write_time",
            "before the previous record",
        ),
        (
            OK.replace(r#""read_time":0"#, r#""read_time":3"#),
            "read_time",
            "after write_time",
        ),
        (second(r#""write_time":2,"io":[["c"]]"#), "io[0]", "pair"),
        (
            second(r#""write_time":2,"read_registry":[{"tool":"t","v":1}]"#),
            "read_registry[0].v",
            "unknown key",
        ),
        (
            OK.replace(r#"["c"],"read_values""#, r#"["c",7],"read_values""#),
            "read_set[1]",
            "a string",
        ),
        (
            OK.replace(r#"{"c":null}"#, r#"{"c":1}"#),
            "read_values.c",
            "a value name",
        ),
        (
            second(r#""write_time":2,"planned_tool":3"#),
            "planned_tool",
            "a string",
        ),
    ];
    for (line, key, what) in cases {
        let e = error_on_line_two(line);
        let msg = e.to_string();
        assert_eq!((e.line(), e.key()), (Some(2), Some(*key)), "{msg}");
        // FILE:LINE:COL: key `K`: message.
        let col = e.position().expect("a position").1;
        let at = format!("bad.jsonl:2:{col}: key `{key}`: ");
        assert!(col >= 1 && msg.starts_with(&at), "{msg}");
        assert!(msg.contains(what), "{msg} should say {what}");
    }
    let e = error_on_line_two("{\"agent\": ");
    assert!(matches!(e, JsonlError::BadJson { line: 2, .. }), "{e}");
    let e = error_on_line_two("[]");
    assert!(matches!(e, JsonlError::NotAnObject { line: 2, .. }), "{e}");
    let e = jsonl::read_history("/nonexistent/h.jsonl").expect_err("missing file");
    assert!(
        e.to_string()
            .starts_with("/nonexistent/h.jsonl: cannot read"),
        "{e}"
    );
}

#[test]
fn blank_lines_are_skipped_and_preds_count_records() {
    let text = format!("{OK}\n\n   \n{}\n", second(r#""write_time":2,"preds":[0]"#));
    let h = jsonl::parse_history(&text, "t").expect("valid");
    assert_eq!(h.records.len(), 2);
    assert_eq!(h.records[1].preds, vec![0]);
}
