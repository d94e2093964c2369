//! `agentsim detect --from otel` on OpenInference spans (read by the OpenInference reader,
//! said in a note), on a mixed export (exit 2, the counts), and `--mcp-log` end to end: a
//! corpus-shaped trace joined with its MCP log gives the A2 the spans alone cannot tell. The
//! same through `agentsim ingest … -o H --report R` and `detect H --ingest-report R`: the saved
//! history and report give what `detect --from` gives, and without the report a saved history
//! would claim *holds* where the spans cannot tell. `--tool-memory` on OpenInference `TOOL`
//! spans: A1 decided from the mapped calls, cannot tell when their arguments lack the cell's
//! key, combined with `--mcp-log`, and a bad mapping refused at its line; its `[[registry]]`
//! groups share the agents' `llm.tools`, so a tool one agent's later list drops is A2 in
//! another's call after it (not before it, not without the groups, not over the log's).

use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::Command;

const KIND: &str = "openinference.span.kind";
const CALL: &str = "llm.output_messages.0.message.tool_calls.0.tool_call.function.name";

fn span(id: &str, parent: &str, t: (u64, u64), attrs: &[(&str, &str)]) -> String {
    let attrs: Vec<String> = (attrs.iter())
        .map(|(k, v)| format!(r#"{{"key":"{k}","value":{{"stringValue":{v:?}}}}}"#))
        .collect();
    let parent = match parent {
        "" => String::new(),
        p => format!(r#""parentSpanId":"{p}","#),
    };
    format!(
        concat!(
            r#"{{"traceId":"t","spanId":"{}",{}"name":"{}","startTimeUnixNano":{},"#,
            r#""endTimeUnixNano":{},"attributes":[{}]}}"#
        ),
        id,
        parent,
        id,
        t.0,
        t.1,
        attrs.join(",")
    )
}

/// One agent plans `lookup` at 10..500 and calls it at 510..520.
fn trace(extra: &str) -> String {
    let spans = [
        span(
            "p",
            "",
            (1, 900),
            &[(KIND, "AGENT"), ("agent.name", "planner")],
        ),
        span("g", "p", (10, 500), &[(KIND, "LLM"), (CALL, "lookup")]),
        span(
            "c",
            "p",
            (510, 520),
            &[(KIND, "TOOL"), ("tool.name", "lookup")],
        ),
    ];
    format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}{extra}]}}]}}]}}"#,
        spans.join(",")
    )
}

/// The planner lists [lookup] at 6; another client's change withdraws it (list_changed at
/// 100, the other client's list at 200 without it, or with it when `kept`); the call at 512.
fn log(kept: bool) -> String {
    let init = r#""id":0,"result":{"capabilities":{"tools":{"listChanged":true}}}"#;
    let after = if kept { r#"{"name":"lookup"}"# } else { "" };
    let lines = [
        (
            2,
            "planner",
            "send",
            r#""id":0,"method":"initialize""#.to_owned(),
        ),
        (3, "planner", "recv", init.to_owned()),
        (
            5,
            "planner",
            "send",
            r#""id":1,"method":"tools/list""#.to_owned(),
        ),
        (
            6,
            "planner",
            "recv",
            r#""id":1,"result":{"tools":[{"name":"lookup"}]}"#.to_owned(),
        ),
        (
            100,
            "planner",
            "recv",
            r#""method":"notifications/tools/list_changed""#.to_owned(),
        ),
        (
            190,
            "admin",
            "send",
            r#""id":1,"method":"tools/list""#.to_owned(),
        ),
        (
            200,
            "admin",
            "recv",
            format!(r#""id":1,"result":{{"tools":[{after}]}}"#),
        ),
        (
            512,
            "planner",
            "send",
            r#""id":2,"method":"tools/call","params":{"name":"lookup"}"#.to_owned(),
        ),
        (
            515,
            "planner",
            "recv",
            r#""id":2,"result":{"content":[]}"#.to_owned(),
        ),
    ];
    let each = lines.iter().map(|(t, c, d, m)| {
        format!(r#"{{"t":{t},"client":"{c}","server":"s","dir":"{d}","message":{{"jsonrpc":"2.0",{m}}}}}"#)
    });
    each.collect::<Vec<_>>().join("\n")
}

/// A folder of one test's own (tests run in parallel).
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentsim-oi-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn detect(args: &[&str]) -> (Option<i32>, Json, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .arg("detect")
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Json::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), json, err)
}

fn a2(v: &Json) -> &str {
    v["verdicts"]["A2"]["verdict"].as_str().unwrap()
}

#[test]
fn otel_reads_openinference_spans_and_joins_them_with_an_mcp_log() {
    let d = dir("join");
    let t = d.join("spans.json");
    std::fs::write(&t, trace("")).unwrap();
    let t = t.to_str().unwrap();
    let (code, v, err) = detect(&[t, "--from", "otel", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["ingest"]["source"], "openinference");
    assert_eq!(
        v["ingest"]["notes"][0],
        "spans are OpenInference (openinference.span.kind); read as --from openinference"
    );
    assert_eq!(a2(&v), "cannot_tell", "no llm.tools, no log");
    for (kept, want) in [(false, "violated"), (true, "holds")] {
        let l = d.join(format!("mcp-{kept}.jsonl"));
        std::fs::write(&l, log(kept)).unwrap();
        let l = l.to_str().unwrap();
        for from in ["otel", "openinference"] {
            let (code, v, err) = detect(&[t, "--from", from, "--mcp-log", l, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            assert_eq!(a2(&v), want, "{from} {}", v["ingest"]);
            assert_eq!(v["ingest"]["counts"]["mcp_log_matched_tool_spans"], 1);
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_mixed_export_and_misplaced_logs_exit_2() {
    let d = dir("mixed");
    let genai = r#"{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}"#;
    let chat = format!(
        r#",{{"traceId":"u","spanId":"x","name":"chat","startTimeUnixNano":1,"endTimeUnixNano":2,"attributes":[{genai}]}}"#
    );
    let mixed = d.join("mixed.json");
    std::fs::write(&mixed, trace(&chat)).unwrap();
    let mixed = mixed.to_str().unwrap();
    let (code, _, err) = detect(&[mixed, "--from", "otel"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("the export mixes span conventions: 3 OpenInference step spans"),
        "{err}"
    );
    let (code, v, err) = detect(&[mixed, "--from", "openinference", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["ingest"]["counts"]["genai_spans_not_read"], 1);
    let (code, v, err) = detect(&[mixed, "--from", "genai", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["ingest"]["source"], "otel");
    let path = d.join("mcp.jsonl");
    std::fs::write(&path, log(true)).unwrap();
    let path = path.to_str().unwrap();
    let (code, _, err) = detect(&[path, "--from", "mcp", "--mcp-log", path]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--mcp-log joins an OpenInference trace"),
        "{err}"
    );
    // A history file with a log or a mapping but no --from: refused, not read without them,
    // in the words every command uses for the flag.
    let h = d.join("h.jsonl");
    std::fs::write(&h, "").unwrap();
    let h = h.to_str().unwrap();
    let (code, _, err) = detect(&[h, "--mcp-log", path]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--mcp-log joins an OpenInference trace: it applies to --from otel or"),
        "{err}"
    );
    let (code, _, err) = detect(&[h, "--tool-memory", path]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--tool-memory maps tool spans: it applies to --from otel, genai or"),
        "{err}"
    );
    let gone = d.join("gone.jsonl");
    let (code, _, err) = detect(&[
        mixed,
        "--from",
        "openinference",
        "--mcp-log",
        gone.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("gone.jsonl"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

fn agentsim(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What `detect --json` says that a saved history must say again.
fn answer(v: &Json) -> (Json, Json, Json) {
    (
        v["exhibits"].clone(),
        v["verdicts"].clone(),
        v["ingest"].clone(),
    )
}

/// `ingest FROM T --tool-memory M` saves a history and report (`saved`) that `detect` reads
/// back to the answer `detect --from FROM` gave (`direct`).
fn saves_what_detect_said(from: &str, t: &str, m: &str, saved: (&str, &str), direct: &Json) {
    let (h, r) = saved;
    let args = [
        "ingest",
        from,
        t,
        "--tool-memory",
        m,
        "-o",
        h,
        "--report",
        r,
    ];
    let (code, err) = agentsim(&args);
    assert_eq!(code, Some(0), "{err}");
    let (code, saved, err) = detect(&[h, "--ingest-report", r, "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let saved = crate::ingest_cli::renamed(&saved, h, t);
    assert_eq!(answer(&saved), answer(direct), "{from}");
}

#[test]
fn ingest_with_an_mcp_log_saves_what_detect_from_decides() {
    let d = dir("ingest");
    let t = d.join("spans.json");
    std::fs::write(&t, trace("")).unwrap();
    let (h, r) = (d.join("h.jsonl"), d.join("r.json"));
    let (t, h, r) = (
        t.to_str().unwrap(),
        h.to_str().unwrap(),
        r.to_str().unwrap(),
    );
    for (kept, a2_want) in [(false, "violated"), (true, "holds")] {
        let l = d.join(format!("mcp-{kept}.jsonl"));
        std::fs::write(&l, log(kept)).unwrap();
        let l = l.to_str().unwrap();
        for from in ["otel", "openinference"] {
            let (code, err) =
                agentsim(&["ingest", from, t, "--mcp-log", l, "-o", h, "--report", r]);
            assert_eq!(code, Some(0), "{err}");
            assert!(err.contains("mcp_log_matched_tool_spans 1"), "{err}");
            let (code, direct, err) = detect(&[t, "--from", from, "--mcp-log", l, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            let (code, saved, err) = detect(&[h, "--ingest-report", r, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            let saved = crate::ingest_cli::renamed(&saved, h, t);
            assert_eq!(answer(&saved), answer(&direct), "{from} kept={kept}");
            assert_eq!(a2(&saved), a2_want);
            let written: Json = serde_json::from_str(&std::fs::read_to_string(r).unwrap()).unwrap();
            assert_eq!(written, direct["ingest"]);
            // Without its report the history cannot know that no span shows memory.
            let (code, bare, err) = detect(&[h, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            assert_eq!(bare["verdicts"]["A1"]["verdict"], "holds");
            assert_eq!(saved["verdicts"]["A1"]["verdict"], "cannot_tell");
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn ingest_refuses_what_detect_refuses_and_leaves_its_output_alone() {
    let d = dir("ingest-refuse");
    let genai = r#"{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}"#;
    let chat = format!(
        r#",{{"traceId":"u","spanId":"x","name":"chat","startTimeUnixNano":1,"endTimeUnixNano":2,"attributes":[{genai}]}}"#
    );
    let mixed = d.join("mixed.json");
    std::fs::write(&mixed, trace(&chat)).unwrap();
    let l = d.join("mcp.jsonl");
    std::fs::write(&l, log(true)).unwrap();
    let h = d.join("h.jsonl");
    std::fs::write(&h, "kept\n").unwrap();
    let (mixed, l, h) = (
        mixed.to_str().unwrap(),
        l.to_str().unwrap(),
        h.to_str().unwrap(),
    );
    let (code, err) = agentsim(&["ingest", "otel", mixed, "-o", h]);
    assert_eq!(code, Some(2));
    assert!(err.contains("the export mixes span conventions"), "{err}");
    let (code, err) = agentsim(&["ingest", "genai", mixed, "-o", h]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 records from otel"), "{err}");
    std::fs::write(h, "kept\n").unwrap();
    let (code, err) = agentsim(&["ingest", "openinference", mixed, "-o", h]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("genai_spans_not_read 1"), "{err}");
    std::fs::write(h, "kept\n").unwrap();
    let genai_only = d.join("genai.json");
    std::fs::write(
        &genai_only,
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            &chat[1..]
        ),
    )
    .unwrap();
    let genai_only = genai_only.to_str().unwrap();
    let bad = d.join("bad.jsonl");
    std::fs::write(
        &bad,
        log(true).replacen("\"dir\":\"send\"", "\"dir\":\"sent\"", 1),
    )
    .unwrap();
    let bad = bad.to_str().unwrap();
    let refused: [(&[&str], &str); 4] = [
        (
            &["ingest", "otel", genai_only, "--mcp-log", l, "-o", h],
            "joins OpenInference tool spans",
        ),
        (
            &["ingest", "openinference", mixed, "--mcp-log", bad, "-o", h],
            "bad.jsonl:1: dir: expected \"send\" or \"recv\", found \"sent\"",
        ),
        (
            &["ingest", "openinference", mixed, "--mcp-log", l, "-o", l],
            "mcp.jsonl",
        ),
        (&["ingest", "mcp", l, "--mcp-log", l], "--mcp-log"),
    ];
    for (args, want) in refused {
        let (code, err) = agentsim(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(h).unwrap(), "kept\n", "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(l).unwrap(), log(true));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_report_of_another_history_or_a_bad_one_exits_2() {
    let d = dir("saved-report");
    let t = d.join("spans.json");
    std::fs::write(&t, trace("")).unwrap();
    let (h, r) = (d.join("h.jsonl"), d.join("r.json"));
    let (t, h, r) = (
        t.to_str().unwrap(),
        h.to_str().unwrap(),
        r.to_str().unwrap(),
    );
    let (code, err) = agentsim(&["ingest", "openinference", t, "-o", h, "--report", r]);
    assert_eq!(code, Some(0), "{err}");
    let other = d.join("other.jsonl");
    std::fs::write(&other, "").unwrap();
    let (code, _, err) = detect(&[other.to_str().unwrap(), "--ingest-report", r]);
    assert_eq!(code, Some(2));
    assert!(err.contains("r.json: the report is of"), "{err}");
    assert!(err.contains("and this history has 0 records"), "{err}");
    let text = std::fs::read_to_string(r).unwrap();
    std::fs::write(r, text.replacen("\"undecidable\"", "\"unknowable\"", 1)).unwrap();
    let (code, _, err) = detect(&[h, "--ingest-report", r]);
    assert_eq!(code, Some(2));
    assert!(err.contains("r.json:"), "{err}");
    assert!(err.contains("unknown variant `unknowable`"), "{err}");
    let (code, _, err) = detect(&[t, "--from", "openinference", "--ingest-report", r]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

const MAP: &str = "[[tool]]\nname = \"read_profile\"\nreads = \"profile/{key}\"\n\n\
                   [[tool]]\nname = \"write_profile\"\nwrites = \"profile/{key}\"\n\
                   value = \"{value}\"\n";

/// The OpenAI Agents SDK's shape of a lost update through tools: the editor reads `p` (seeing
/// `seen`), plans from it while the writer writes `p` at `writer` (start, end), then writes.
fn profile_trace(writer: (u64, u64), seen: &str) -> String {
    let (ws, we) = writer;
    let read = r#"{"key": "p"}"#;
    let spans = [
        span(
            "e",
            "",
            (1, 900),
            &[(KIND, "AGENT"), ("agent.name", "editor")],
        ),
        span(
            "g1",
            "e",
            (10, 20),
            &[(KIND, "LLM"), (CALL, "read_profile")],
        ),
        span(
            "r",
            "e",
            (30, 40),
            &[
                (KIND, "TOOL"),
                ("tool.name", "read_profile"),
                ("input.value", read),
                ("output.value", seen),
            ],
        ),
        span(
            "g2",
            "e",
            (50, 500),
            &[(KIND, "LLM"), (CALL, "write_profile")],
        ),
        span(
            "w",
            "e",
            (510, 520),
            &[
                (KIND, "TOOL"),
                ("tool.name", "write_profile"),
                ("input.value", r#"{"key": "p", "value": "e1"}"#),
            ],
        ),
        span(
            "x",
            "",
            (ws, we),
            &[(KIND, "AGENT"), ("agent.name", "writer")],
        ),
        span(
            "g3",
            "x",
            (ws + 1, ws + 2),
            &[(KIND, "LLM"), (CALL, "write_profile")],
        ),
        span(
            "w2",
            "x",
            (ws + 3, ws + 4),
            &[
                (KIND, "TOOL"),
                ("tool.name", "write_profile"),
                ("input.value", r#"{"key": "p", "value": "w1"}"#),
            ],
        ),
    ];
    let spans = spans.join(",");
    format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{spans}]}}]}}]}}"#)
}

fn a1(v: &Json) -> (&str, &str) {
    (
        v["verdicts"]["A1"]["verdict"].as_str().unwrap(),
        v["ingest"]["decidable"]["A1"]["why"].as_str().unwrap(),
    )
}

#[test]
fn tool_memory_decides_a1_from_openinference_tool_spans() {
    let d = dir("toolmem");
    let m = d.join("map.toml");
    std::fs::write(&m, MAP).unwrap();
    let m = m.to_str().unwrap();
    let (h, r) = (d.join("h.jsonl"), d.join("r.json"));
    let (h, r) = (h.to_str().unwrap(), r.to_str().unwrap());
    // The writer writes while the editor plans (lost update), or before the editor reads.
    for (writer, seen, want) in [((100, 300), "v0", "violated"), ((2, 8), "w1", "holds")] {
        let t = d.join(format!("spans-{want}.json"));
        std::fs::write(&t, profile_trace(writer, seen)).unwrap();
        let t = t.to_str().unwrap();
        for from in ["otel", "openinference"] {
            let (code, v, err) = detect(&[t, "--from", from, "--tool-memory", m, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            let (verdict, why) = a1(&v);
            assert_eq!(verdict, want, "{from}: {why}");
            assert!(why.contains("TOOL read_profile ("), "{why}");
            assert!(
                why.contains("; tool.name, input.value, output.value) ×1"),
                "{why}"
            );
            assert!(why.contains("; tool.name, input.value) ×2"), "{why}");
            assert!(why.ends_with("compared by content"), "{why}");
            assert_eq!(v["ingest"]["counts"]["memory_cells"], 1);
            // `ingest` saves what `detect --from` decides.
            saves_what_detect_said(from, t, m, (h, r), &v);
        }
        // Without the mapping the same spans are tool calls: A1 cannot be told.
        let (code, v, err) = detect(&[t, "--from", "openinference", "--json"]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(a1(&v).0, "cannot_tell");
        assert!(a1(&v).1.contains("--tool-memory"), "{}", a1(&v).1);
    }
    // A mapping whose cell needs an argument the calls do not pass.
    let t = d.join("spans-violated.json");
    let t = t.to_str().unwrap();
    let wrong = d.join("wrong.toml");
    std::fs::write(&wrong, MAP.replace("profile/{key}", "profile/{user}")).unwrap();
    let wrong = wrong.to_str().unwrap();
    let (code, v, err) = detect(&[
        t,
        "--from",
        "openinference",
        "--tool-memory",
        wrong,
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (verdict, why) = a1(&v);
    assert_eq!(verdict, "cannot_tell");
    assert!(
        why.contains("TOOL read_profile: argument `user` missing ×1"),
        "{why}"
    );
    assert!(
        why.contains("TOOL write_profile: argument `user` missing ×2"),
        "{why}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn tool_memory_errors_exit_2_at_the_line_and_combine_with_an_mcp_log() {
    let d = dir("toolmem-err");
    let t = d.join("spans.json");
    std::fs::write(&t, trace("")).unwrap();
    let t = t.to_str().unwrap();
    let bad = d.join("bad.toml");
    std::fs::write(&bad, "[[tool]]\nname = \"lookup\"\nread = \"kv/{key}\"\n").unwrap();
    let bad = bad.to_str().unwrap();
    for from in ["openinference", "otel"] {
        let (code, _, err) = detect(&[t, "--from", from, "--tool-memory", bad]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&format!("{bad}:3: unknown field `read`")),
            "{err}"
        );
        let (code, err) = agentsim(&["ingest", from, t, "--tool-memory", bad]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(&format!("{bad}:3:")), "{err}");
    }
    let l = d.join("mcp.jsonl");
    std::fs::write(&l, log(false)).unwrap();
    let l = l.to_str().unwrap();
    let (code, _, err) = detect(&[l, "--from", "mcp", "--tool-memory", bad]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--tool-memory maps tool spans: it applies to --from otel, genai or"),
        "{err}"
    );
    // The planner's `lookup` mapped as a read, joined with the log: the join still gives A2
    // (the plan ran as the next step's read), and the mapping reads the call's arguments,
    // which this span did not capture.
    let m = d.join("kv.toml");
    std::fs::write(&m, "[[tool]]\nname = \"lookup\"\nreads = \"kv/{key}\"\n").unwrap();
    let m = m.to_str().unwrap();
    for from in ["openinference", "otel"] {
        let args = [
            t,
            "--from",
            from,
            "--mcp-log",
            l,
            "--tool-memory",
            m,
            "--json",
        ];
        let (code, v, err) = detect(&args);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(a2(&v), "violated", "{}", v["ingest"]);
        assert_eq!(v["ingest"]["counts"]["mcp_log_matched_tool_spans"], 1);
        let (verdict, why) = a1(&v);
        assert_eq!(verdict, "cannot_tell");
        assert!(
            why.contains(
                "TOOL lookup: no arguments captured (input.value, tool_call.function.arguments) ×1"
            ),
            "{why}"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// Alice's generation (10..20) offers `t` and `u` and plans `t`; her call of `t` starts at
/// `call`. Bob's generations offer `t` and `u` at 5, then `u` alone at `retired`.
fn two_agents(retired: u64, call: u64) -> String {
    let t = r#"{"type":"function","function":{"name":"t"}}"#;
    let u = r#"{"type":"function","function":{"name":"u"}}"#;
    let (t0, t1) = (
        "llm.tools.0.tool.json_schema",
        "llm.tools.1.tool.json_schema",
    );
    let spans = [
        span(
            "a",
            "",
            (1, 500),
            &[(KIND, "AGENT"), ("agent.name", "alice")],
        ),
        span(
            "ga",
            "a",
            (10, 20),
            &[(KIND, "LLM"), (t0, t), (t1, u), (CALL, "t")],
        ),
        span(
            "ta",
            "a",
            (call, call + 5),
            &[(KIND, "TOOL"), ("tool.name", "t")],
        ),
        span("b", "", (2, 500), &[(KIND, "AGENT"), ("agent.name", "bob")]),
        span("gb1", "b", (5, 8), &[(KIND, "LLM"), (t0, t), (t1, u)]),
        span(
            "gb2",
            "b",
            (retired, retired + 2),
            &[(KIND, "LLM"), (t0, u)],
        ),
    ];
    let spans = spans.join(",");
    format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{spans}]}}]}}]}}"#)
}

fn a2_witnesses(v: &Json) -> usize {
    v["anomalies"]["A2"].as_array().unwrap().len()
}

#[test]
fn tool_memory_registry_groups_share_llm_tools_across_openinference_agents() {
    let d = dir("groups");
    let m = d.join("groups.toml");
    std::fs::write(&m, "[[registry]]\nagents = [\"alice\", \"bob\"]\n").unwrap();
    let m = m.to_str().unwrap();
    let (h, r) = (d.join("h.jsonl"), d.join("r.json"));
    let (h, r) = (h.to_str().unwrap(), r.to_str().unwrap());
    // Bob's list drops `t` before alice's call of it (A2 through the group), or after.
    for (retired, want, found) in [(30, "violated", 1), (60, "cannot_tell", 0)] {
        let t = d.join(format!("spans-{retired}.json"));
        std::fs::write(&t, two_agents(retired, 40)).unwrap();
        let t = t.to_str().unwrap();
        for from in ["otel", "openinference"] {
            let (code, v, err) = detect(&[t, "--from", from, "--tool-memory", m, "--json"]);
            assert_eq!(code, Some(0), "{err}");
            assert_eq!(a2(&v), want, "{from} {}", v["ingest"]);
            assert_eq!(a2_witnesses(&v), found, "{from}");
            let why = v["ingest"]["decidable"]["A2"]["why"].as_str().unwrap();
            assert!(
                why.contains(&format!("shared by the groups {m} declares")),
                "{why}"
            );
            let notes = v["ingest"]["notes"].to_string();
            assert!(notes.contains(&format!("registries are shared by the groups {m}")));
            saves_what_detect_said(from, t, m, (h, r), &v);
        }
        // Without the groups each agent has its own registry: bob's list is not alice's.
        let (code, v, err) = detect(&[t, "--from", "openinference", "--json"]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!((a2(&v), a2_witnesses(&v)), ("cannot_tell", 0));
    }
    // With an MCP log the log's registries still decide A2, and the note says so.
    let t = d.join("spans.json");
    std::fs::write(&t, trace("")).unwrap();
    let t = t.to_str().unwrap();
    for (kept, want) in [(false, "violated"), (true, "holds")] {
        let l = d.join(format!("mcp-{kept}.jsonl"));
        std::fs::write(&l, log(kept)).unwrap();
        let l = l.to_str().unwrap();
        let args = [t, "--from", "openinference", "--mcp-log", l, "--json"];
        let (code, plain, err) = detect(&args);
        assert_eq!(code, Some(0), "{err}");
        let (code, v, err) = detect(&[&args[..], &["--tool-memory", m]].concat());
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(a2(&v), want, "{}", v["ingest"]);
        assert_eq!(
            v["ingest"]["decidable"]["A2"],
            plain["ingest"]["decidable"]["A2"]
        );
        let notes = v["ingest"]["notes"].to_string();
        assert!(notes.contains("the MCP log's registries (--mcp-log) take precedence"));
    }
    std::fs::remove_dir_all(&d).unwrap();
}
