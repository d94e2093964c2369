//! `agentsim ingest` + `agentsim detect`, and `agentsim detect --from`, on the example traces,
//! checkpoint databases and recorder runs of `scenarios/traces/`: each gives the anomaly set
//! SPEC §7's deployed reproductions and `agentsim_ingest::langgraph::model` predict, both ways;
//! bad inputs exit 2 naming the file and what was wrong; `detect -` reads stdin.

use serde_json::Value as Json;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::util::{agentsim as run, root};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentsim"));
    c.current_dir(root());
    c
}

fn json(out: &Output) -> Json {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn point(v: &Json) -> Vec<String> {
    v["exhibits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

/// `v` with every mention of the file `from` said as `to`.
pub fn renamed(v: &Json, from: &str, to: &str) -> Json {
    serde_json::from_str(&v.to_string().replace(from, to)).unwrap()
}

/// (source, file, the anomaly set it must exhibit).
const CASES: &[(&str, &str, &[&str])] = &[
    ("langgraph", "langgraph/stale_read.sqlite", &["A1"]),
    ("langgraph", "langgraph/stale_read_fixed.sqlite", &[]),
    ("langgraph", "langgraph/double_write.sqlite", &[]),
    ("langgraph", "langgraph/double_write_fixed.sqlite", &[]),
    ("langgraph", "langgraph/deerflow_3123.sqlite", &[]),
    ("langgraph", "langgraph/deerflow_3123_fixed.sqlite", &[]),
    ("langgraph", "langgraph/fold_order.sqlite", &[]),
    ("langgraph", "langgraph/toolnode_fanout.sqlite", &["A6"]),
    ("langgraph", "langgraph/toolnode_fanout_fixed.sqlite", &[]),
    // Calls inside one task: their completion order is not kept, so A6 is undecidable and
    // the history (issue order standing in) shows none.
    ("langgraph", "langgraph/toolnode_inline.sqlite", &[]),
    ("otel", "otel/memory_lost_update.json", &["A1"]),
    ("otel", "otel/memory_occ.json", &[]),
    ("otel", "otel/memory_versions_only.json", &["A1"]),
    ("otel", "otel/tool_reordering.json", &["A6"]),
    ("otel", "otel/tool_sequenced.json", &[]),
    ("otel", "otel/phantom_tool.json", &["A2"]),
    ("otel", "otel/phantom_signature.json", &["A2"]),
];

#[test]
fn ingest_then_detect_and_detect_from_agree_with_the_predictions() {
    let dir = std::env::temp_dir().join(format!("agentsim-ingest-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for &(source, file, want) in CASES {
        let input = format!("scenarios/traces/{file}");
        let out = dir.join("h.jsonl");
        let report = dir.join("r.json");
        let o = run(&[
            "ingest",
            source,
            &input,
            "-o",
            out.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let two_steps = json(&run(&["detect", out.to_str().unwrap(), "--json"]));
        let one_step = json(&run(&["detect", &input, "--from", source, "--json"]));
        assert_eq!(point(&two_steps), want, "{file}: ingest + detect");
        assert_eq!(point(&one_step), want, "{file}: detect --from");
        // The report written by ingest is the one detect --from shows.
        let written: Json =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(written, one_step["ingest"], "{file}");
        // The saved history with its saved report gives the verdicts detect --from gives.
        let saved = json(&run(&[
            "detect",
            out.to_str().unwrap(),
            "--ingest-report",
            report.to_str().unwrap(),
            "--json",
        ]));
        // (A4's reason names the file read: the history here, the input there.)
        let saved = renamed(&saved, out.to_str().unwrap(), &input);
        assert_eq!(saved["verdicts"], one_step["verdicts"], "{file}");
        assert_eq!(saved["ingest"], one_step["ingest"], "{file}");
        // And the same L1_struct: the saved report's initial state is read back by name.
        assert_eq!(saved["L1_struct"], one_step["L1_struct"], "{file}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn recorder_runs_give_the_predicted_sets() {
    let cases: &[(&str, &[&str])] = &[
        ("stale_read", &["A1"]),
        ("stale_read_fixed", &[]),
        ("double_write", &[]),
        ("double_write_fixed", &[]),
        ("deerflow_3123", &[]),
        ("deerflow_3123_fixed", &[]),
        ("fold_order", &[]),
        ("toolnode_fanout", &["A6"]),
        ("toolnode_fanout_fixed", &[]),
        ("toolnode_inline", &["A6"]),
        ("send_fanout", &["A6"]),
        ("send_fanout_fixed", &[]),
    ];
    for &(name, want) in cases {
        let file = format!("scenarios/traces/recorder/{name}.jsonl");
        assert_eq!(
            point(&json(&run(&["detect", &file, "--json"]))),
            want,
            "{name}"
        );
    }
    // The recorder's report read back: a ToolNode's tools are fixed, so A2 is not "holds".
    let file = "scenarios/traces/recorder/toolnode_fanout.jsonl";
    let report = "scenarios/traces/recorder/toolnode_fanout.report.json";
    let bare = json(&run(&["detect", file, "--json"]));
    let saved = json(&run(&["detect", file, "--ingest-report", report, "--json"]));
    assert_eq!(bare["verdicts"]["A2"]["verdict"], "holds");
    assert_eq!(saved["verdicts"]["A2"]["verdict"], "cannot_tell");
    assert_eq!(saved["verdicts"]["A6"]["verdict"], "violated");
    assert_eq!(saved["ingest"]["source"], "recorder");
    let report: Json = serde_json::from_str(
        &std::fs::read_to_string(root().join("scenarios/traces/recorder/double_write.report.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        report["errors"][0]["code"],
        "INVALID_CONCURRENT_GRAPH_UPDATE"
    );
}

/// `detect --from` takes the ingested history as it is, held to the structure the file reader
/// holds a file to; the ToolNode that runs its calls in one task gives a well-formed history
/// (no completion order is invented as an error) and says A6 cannot be decided from it.
#[test]
fn an_unknown_completion_order_is_undecidable_not_malformed() {
    let o = run(&[
        "detect",
        "scenarios/traces/langgraph/toolnode_inline.sqlite",
        "--from",
        "langgraph",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(
        v["ingest"]["decidable"]["A6"]["status"], "undecidable",
        "{v}"
    );
}

/// (gap fixture, its anomaly, the verdict status it lowers that anomaly to, the note's start).
const GAPS: &[(&str, &str, &str, &str)] = &[
    ("orphan", "A1", "undecidable", "gap: 6 orphan spans"),
    (
        "unknown_parent",
        "A1",
        "undecidable",
        "gap: 3 step spans have a parent of a kind",
    ),
    (
        "mistyped_agent",
        "A2",
        "undecidable",
        "gap: 1 spans have gen_ai.agent.name of the wrong",
    ),
    (
        "overlap",
        "A1",
        "upper_bound",
        "gap: 1 invocations overlap an earlier invocation",
    ),
];

#[test]
fn detect_from_otel_names_each_trace_gap_and_lowers_its_verdict() {
    let control = json(&run(&[
        "detect",
        "scenarios/traces/otel/gaps/one_trace.json",
        "--from",
        "otel",
        "--json",
    ]));
    assert_eq!(point(&control), vec!["A1"]);
    assert_eq!(control["ingest"]["decidable"]["A1"]["status"], "decided");
    // No gap: its only note is the state the trace began in (the profile read as "likes
    // tea", which no span wrote), and that is no violation.
    let notes = control["ingest"]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = notes[0].as_str().unwrap();
    assert!(note.starts_with("2 reads of the initial state (cells user-memory/profile)"));
    assert_eq!(control["ingest"]["initial_state"]["reads"], 2);
    assert_eq!(control["L1_struct"]["holds"], true);
    for &(gap, anomaly, status, note) in GAPS {
        let file = format!("scenarios/traces/otel/gaps/{gap}.json");
        let v = json(&run(&["detect", &file, "--from", "otel", "--json"]));
        let verdict = &v["ingest"]["decidable"][anomaly];
        assert_eq!(verdict["status"], status, "{gap}: {verdict}");
        let notes = v["ingest"]["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n.as_str().unwrap().starts_with(note)),
            "{gap}: {notes:?}"
        );
        let o = run(&["detect", &file, "--from", "otel"]);
        let text = String::from_utf8_lossy(&o.stdout);
        let line = format!("  {anomaly}: {}: ", status.replace('_', " "));
        assert!(text.contains(&line), "{gap}: {text}");
        assert!(text.contains(&format!("  note: {note}")), "{gap}: {text}");
    }
}

#[test]
fn the_text_report_says_what_is_undecidable() {
    let o = run(&[
        "detect",
        "scenarios/traces/otel/memory_unidentified.json",
        "--from",
        "otel",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(
        text.contains("  A1: undecidable: memory operations on user-memory"),
        "{text}"
    );
    let o = run(&[
        "detect",
        "scenarios/traces/langgraph/double_write.sqlite",
        "--from",
        "langgraph",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("run error InvalidUpdateError [INVALID_CONCURRENT_GRAPH_UPDATE]"),
        "{text}"
    );
}

#[test]
fn bad_inputs_exit_2_naming_file_and_reason() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["ingest", "otel", "scenarios/traces/otel/malformed.json"],
            "malformed.json:1: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano",
        ),
        (
            &[
                "ingest",
                "langgraph",
                "scenarios/traces/langgraph/bad/not_a_checkpointer.sqlite",
            ],
            "not a LangGraph SQLite checkpointer database: it has no table `checkpoints`",
        ),
        (
            &[
                "ingest",
                "langgraph",
                "scenarios/traces/langgraph/bad/truncated.sqlite",
            ],
            "truncated.sqlite: the database is damaged or truncated",
        ),
        (
            &[
                "ingest",
                "langgraph",
                "scenarios/traces/langgraph/bad/pickled.sqlite",
            ],
            "unknown serialization `pickle`",
        ),
        (
            &[
                "detect",
                "scenarios/traces/langgraph/bad/not_sqlite.sqlite",
                "--from",
                "langgraph",
            ],
            "not an SQLite database",
        ),
        (
            &[
                "detect",
                "scenarios/traces/langgraph/two_threads.sqlite",
                "--from",
                "langgraph",
            ],
            "2 threads (a, b); choose one with --thread",
        ),
        (
            &["ingest", "langgraph", "scenarios/traces/langgraph"],
            "it is a directory; a LangGraph SQLite checkpoint file",
        ),
        (
            &[
                "detect",
                "scenarios/traces/langgraph",
                "--from",
                "langgraph",
            ],
            "it is a directory; a LangGraph SQLite checkpoint file",
        ),
        (
            &[
                "detect",
                "scenarios/traces/otel/tool_reordering.json",
                "--thread",
                "a",
            ],
            "--thread applies to --from langgraph only",
        ),
    ];
    for &(args, want) in cases {
        let o = run(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let o = run(&[
        "detect",
        "scenarios/traces/langgraph/two_threads.sqlite",
        "--from",
        "langgraph",
        "--thread",
        "a",
        "--json",
    ]);
    assert_eq!(point(&json(&o)), vec!["A1"]);
}

#[test]
fn detect_reads_stdin() {
    let text = std::fs::read(root().join("scenarios/traces/recorder/stale_read.jsonl")).unwrap();
    let mut child = bin()
        .args(["detect", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(point(&json(&out)), vec!["A1"]);
    let mut child = bin()
        .args(["detect", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{not json\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // FILE:LINE:COL, as every reader error (models/jsonl/tests/jsonl_roundtrip.rs pins the format).
    assert!(String::from_utf8_lossy(&out.stderr).contains("<stdin>:1:2: invalid JSON"));
}

/// A UTF-8 byte-order mark at the start of a history or an OTLP file (Windows editors and
/// some exporters write one) is skipped: every reader gives the same verdict as without it
/// (the batch pipeline, `--stream`, stdin, `--from otel`), instead of "invalid JSON".
#[test]
fn a_leading_byte_order_mark_is_skipped_by_every_reader() {
    let dir = std::env::temp_dir().join(format!("agentsim-bom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with_bom = |rel: &str| {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(std::fs::read(root().join(rel)).unwrap());
        let p = dir.join(rel.rsplit('/').next().unwrap());
        std::fs::write(&p, &bytes).unwrap();
        (p, bytes)
    };
    let (hist, bytes) = with_bom("scenarios/traces/recorder/stale_read.jsonl");
    let h = hist.to_str().unwrap();
    for extra in [&[][..], &["--threads", "2"][..]] {
        let mut args = vec!["detect", h, "--json"];
        args.extend_from_slice(extra);
        assert_eq!(point(&json(&run(&args))), vec!["A1"], "{extra:?}");
    }
    // `--stream --json` prints one line per witness as it is found.
    let o = run(&["detect", h, "--stream", "--json"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains(r#"{"anomaly":"A1","line":3,"#), "{text}");
    let mut child = bin()
        .args(["detect", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    assert_eq!(point(&json(&child.wait_with_output().unwrap())), vec!["A1"]);
    let (otel, _) = with_bom("scenarios/traces/otel/tool_reordering.json");
    let o = run(&["detect", otel.to_str().unwrap(), "--from", "otel", "--json"]);
    assert_eq!(point(&json(&o)), vec!["A6"]);
    // A mark anywhere but the start is still an error, at its line.
    let mut late =
        std::fs::read(root().join("scenarios/traces/recorder/stale_read.jsonl")).unwrap();
    late.extend(b"\xEF\xBB\xBF{}\n");
    let p = dir.join("late.jsonl");
    std::fs::write(&p, late).unwrap();
    let o = run(&["detect", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

/// `ingest otel|genai --tool-memory` saves the history `detect --from otel --tool-memory`
/// reads (memory behind tools: the A1 of `profile_tools.json`), from a file or from stdin;
/// an OpenInference export takes the mapping from stdin as from a file.
#[test]
fn ingest_with_a_tool_memory_mapping_saves_what_detect_from_decides() {
    let dir = std::env::temp_dir().join(format!("agentsim-ingest-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = "scenarios/traces/otel/profile_tools.json";
    let map = "scenarios/traces/otel/profile_map.toml";
    let (h, r) = (dir.join("h.jsonl"), dir.join("r.json"));
    let (h, r) = (h.to_str().unwrap(), r.to_str().unwrap());
    let direct = json(&run(&[
        "detect",
        trace,
        "--from",
        "otel",
        "--tool-memory",
        map,
        "--json",
    ]));
    assert_eq!(point(&direct), vec!["A1"]);
    assert_eq!(direct["verdicts"]["A1"]["verdict"], "violated");
    for source in ["otel", "genai"] {
        let o = run(&[
            "ingest",
            source,
            trace,
            "--tool-memory",
            map,
            "-o",
            h,
            "--report",
            r,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let saved = json(&run(&["detect", h, "--ingest-report", r, "--json"]));
        let saved = renamed(&saved, h, trace);
        assert_eq!(point(&saved), vec!["A1"], "{source}");
        assert_eq!(saved["verdicts"], direct["verdicts"], "{source}");
        assert_eq!(saved["ingest"], direct["ingest"], "{source}");
    }
    let stdin = |args: &[&str], input: &[u8]| {
        let mut child = bin()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let text = std::fs::read(root().join(trace)).unwrap();
    let piped = json(&stdin(
        &[
            "detect",
            "-",
            "--from",
            "otel",
            "--tool-memory",
            map,
            "--json",
        ],
        &text,
    ));
    // (A4's reason names the input: `-` here.)
    let piped = renamed(&piped, "and - has", &format!("and {trace} has"));
    assert_eq!(piped["verdicts"], direct["verdicts"]);
    let oi = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"a","name":"a","startTimeUnixNano":1,"endTimeUnixNano":2,"attributes":[{"key":"openinference.span.kind","value":{"stringValue":"AGENT"}}]}]}]}]}"#;
    // OpenInference spans take the mapping too, from stdin as from a file.
    let o = stdin(&["ingest", "otel", "-", "--tool-memory", map, "-o", h], oi);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("<stdin>: 0 records from openinference"),
        "{err}"
    );
    // GenAI spans and an MCP log: the log joins OpenInference tool spans only.
    let log = dir.join("mcp.jsonl");
    std::fs::write(&log, "").unwrap();
    let o = run(&[
        "ingest",
        "otel",
        trace,
        "--tool-memory",
        map,
        "--mcp-log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("joins OpenInference tool spans, and this export has no OpenInference"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
