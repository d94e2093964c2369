//! Framework spans the GenAI reader must read by their shape (`tests/data/`, the exports of the
//! corpus runs in integrations/python): pydantic-ai 1.0's tool spans, which carry no
//! `gen_ai.operation.name`, and Google ADK's `(merged tools)` span, which is no call. And the
//! rule behind both: tool-call evidence the reader does not read never lets A2 or A6 read
//! *holds*.

mod support;

use agentsim_ingest::otel::parse_otel;
use agentsim_ingest::Ingested;
use agentsim_models::detect::fast;
use agentsim_models::Anomaly;
use serde_json::Value as Json;
use std::path::PathBuf;
use support::{status, why};

fn path(name: &str) -> PathBuf {
    support::path(support::DATA, name)
}

fn ingest(name: &str) -> Ingested {
    support::ingest(support::DATA, name)
}

/// pydantic-ai #2628 on the affected release (1.0.1): `commit` landed while `stage_file` still
/// ran, so the effects completed out of issue order.
const PYDANTIC: &str = "pydantic_ai_1.0.1_a6.jsonl";

/// The pydantic-ai export with every span passed through `edit` (spans of one document per line).
fn edited(edit: impl Fn(&mut serde_json::Map<String, Json>)) -> String {
    let text = std::fs::read_to_string(path(PYDANTIC)).expect("fixture");
    let mut out = String::new();
    for line in text.lines() {
        let mut doc: Json = serde_json::from_str(line).expect("a JSON line");
        for rs in doc["resourceSpans"].as_array_mut().unwrap() {
            for ss in rs["scopeSpans"].as_array_mut().unwrap() {
                for span in ss["spans"].as_array_mut().unwrap() {
                    edit(span.as_object_mut().unwrap());
                }
            }
        }
        out.push_str(&doc.to_string());
        out.push('\n');
    }
    out
}

fn is_running_tool(span: &serde_json::Map<String, Json>) -> bool {
    span["name"] == "running tool"
}

#[test]
fn pydantic_ai_running_tool_spans_are_tool_calls() {
    let i = ingest(PYDANTIC);
    // Main's reader skipped the `running tool` spans: A6 "decided" over 0 effects.
    assert_eq!(status(&i, Anomaly::A6), "decided");
    assert!(
        why(&i, Anomaly::A6).starts_with("2 effects"),
        "{}",
        why(&i, Anomaly::A6)
    );
    let witnesses = fast::detect(&i.history).a6;
    assert_eq!(witnesses.len(), 1, "{}", i.report.to_text());
    // The calls' results come from `tool_response`.
    let text = i.report.to_text();
    assert!(
        i.report
            .notes
            .iter()
            .any(|n| n.starts_with("4 spans without gen_ai.operation.name read by their attributes \
                                   (2 as execute_tool, 1 as invoke_agent, 1 as tool calls (aggregate))")),
        "{text}"
    );
    assert_eq!(
        i.report.counts.get("spans_read_by_attributes"),
        Some(&4),
        "{text}"
    );
    // The agent run is the invocation: its `agent_name` names the agent, no gap on the way.
    assert!(
        !i.report.notes.iter().any(|n| n.starts_with("gap: ")),
        "{text}"
    );
    let h = &i.history;
    let agents: Vec<String> = h
        .records
        .iter()
        .map(|r| h.names.agent_name(r.agent))
        .collect();
    assert!(
        !agents.is_empty() && agents.iter().all(|a| *a == "git"),
        "{agents:?}"
    );
}

#[test]
fn unread_tool_attributes_make_a2_and_a6_undecidable() {
    // The same run with the tool spans' name dropped: they still carry gen_ai.tool.call.id,
    // which the reader does not read as a call.
    let text = edited(|span| {
        if is_running_tool(span) {
            let attrs = span["attributes"].as_array_mut().unwrap();
            attrs.retain(|kv| kv["key"] != "gen_ai.tool.name");
        }
    });
    let i = parse_otel(&text, "unread.jsonl").expect("reads");
    for a in [Anomaly::A2, Anomaly::A6] {
        assert_eq!(status(&i, a), "undecidable", "{a:?}: {}", why(&i, a));
        assert!(
            why(&i, a).starts_with(
                "2 spans carry tool-call attributes but are not read as tool calls (e.g. span "
            ),
            "{}",
            why(&i, a)
        );
    }
}

#[test]
fn planned_calls_without_tool_spans_make_a2_and_a6_undecidable() {
    // The same run with the tool spans gone: the generation planned call_1 and call_2, and no
    // span shows them run. Main's reader says A6 holds over 0 effects here too.
    let text = edited(|span| {
        if is_running_tool(span) {
            span.insert("attributes".to_owned(), Json::Array(Vec::new()));
        }
    });
    let i = parse_otel(&text, "planned.jsonl").expect("reads");
    for a in [Anomaly::A2, Anomaly::A6] {
        assert_eq!(status(&i, a), "undecidable", "{a:?}: {}", why(&i, a));
        assert!(
            why(&i, a).starts_with(
                "2 tool calls planned in gen_ai.output.messages have no tool span read for them"
            ),
            "{}",
            why(&i, a)
        );
    }
}

#[test]
fn adk_merged_tools_span_is_no_call() {
    let i = ingest("adk_2.15.0_a6.jsonl");
    assert!(
        why(&i, Anomaly::A6).starts_with("2 effects"),
        "{}",
        why(&i, Anomaly::A6)
    );
    let witnesses = fast::detect(&i.history).a6;
    assert_eq!(witnesses.len(), 1, "{}", i.report.to_text());
    assert!(
        !i.report.notes.iter().any(|n| n.starts_with("gap: ")),
        "{}",
        i.report.to_text()
    );
}
