//! Text reports cannot be forged by a name: a newline or a bidi control in an agent name or a
//! value prints escaped (`\n`, `\u{202e}`), so a history cannot plant a line of its own (an
//! `exhibits: {}` above the real one). JSON keeps the names as they are (its encoder escapes).

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::util::agentsim;

/// The A1 sample history with `reviewer` renamed to `agent` and `draft-1` to `value`.
fn history(name: &str, agent: &str, value: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-escape-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let (agent, value) = (
        serde_json::to_string(agent).unwrap(),
        serde_json::to_string(value).unwrap(),
    );
    let text = format!(
        r#"{{"agent":"editor","read_set":["doc"],"read_values":{{"doc":null}},"read_time":0,"write_set":["doc"],"write_values":{{"doc":{value}}},"write_time":1}}
{{"agent":"editor","read_set":["doc"],"read_values":{{"doc":{value}}},"read_time":1,"write_set":["doc"],"write_values":{{"doc":"draft-2"}},"write_time":2,"preds":[0]}}
{{"agent":{agent},"read_set":["doc"],"read_values":{{"doc":{value}}},"read_time":1,"write_set":["review"],"write_values":{{"review":"ok"}},"write_time":3,"preds":[0]}}
"#
    );
    let file = d.join("h.jsonl");
    std::fs::write(&file, text).unwrap();
    file
}

fn detect(file: &Path, extra: &[&str]) -> String {
    let mut args = vec!["detect", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = agentsim(&args);
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_newline_in_an_agent_name_cannot_plant_a_verdict_line() {
    let file = history("newline", "x\nexhibits: {}", "draft-1");
    for extra in [
        &[][..],
        &["--spec"][..],
        &["--stream", "--idle-ms", "50"][..],
    ] {
        let text = detect(&file, extra);
        if extra.first() != Some(&"--stream") {
            let verdicts: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("exhibits:"))
                .collect();
            assert_eq!(verdicts, ["exhibits: {A1}"], "{extra:?}:\n{text}");
        }
        assert!(
            !text.lines().any(|l| l.starts_with("exhibits: {}")),
            "{extra:?}:\n{text}"
        );
        assert!(text.contains("(x\\nexhibits: {})"), "{extra:?}:\n{text}");
    }
    // JSON carries the name as it is.
    let json: Value = serde_json::from_str(&detect(&file, &["--json"])).unwrap();
    let w = &json["anomalies"]["A1"][0];
    assert_eq!(w["reader_agent"], "x\nexhibits: {}", "{json}");
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

#[test]
fn bidi_and_control_characters_print_escaped() {
    let file = history(
        "bidi",
        "rev\u{202e}iewer\u{1b}[2J",
        "draft\u{2066}-1\u{200f}",
    );
    let text = detect(&file, &[]);
    assert!(
        !text
            .chars()
            .any(|c| matches!(c, '\u{202e}' | '\u{2066}' | '\u{200f}' | '\u{1b}')),
        "{text:?}"
    );
    assert!(text.contains("rev\\u{202e}iewer\\u{1b}[2J"), "{text}");
    assert!(text.contains("draft\\u{2066}-1\\u{200f}"), "{text}");
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

#[test]
fn plain_names_print_as_before() {
    let file = history("plain", "reviewer", "draft-1");
    let mine = detect(&file, &[]);
    let sample = crate::util::root().join("scenarios/histories/a1_stale_generation.jsonl");
    let theirs = detect(&sample, &[]);
    // Only the file name on the first line differs.
    let body = |s: &str| s.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(body(&mine), body(&theirs));
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}
