//! The example OTLP/JSON traces (`scenarios/traces/otel/`, made by `make_traces.py`) ingest to
//! the anomaly sets their scenarios have, with the verdicts their attributes allow; malformed
//! input is refused with file, line and path.

mod support;

use agentsim_ingest::otel::{parse_otel, read_otel};
use agentsim_ingest::Ingested;
use agentsim_jsonl as jsonl;
use agentsim_models::detect::{fast, spec, A2Reason};
use agentsim_models::lattice::Point;
use agentsim_models::Anomaly;
use std::path::PathBuf;

fn path(name: &str) -> PathBuf {
    support::path(support::EXAMPLES, name)
}

fn ingest(name: &str) -> Ingested {
    support::ingest(support::EXAMPLES, name)
}

fn point(i: &Ingested) -> Vec<&'static str> {
    let report = fast::detect(&i.history);
    assert_eq!(report, spec::detect(&i.history), "fast and spec disagree");
    Point::of(&report.anomalies())
        .members()
        .iter()
        .map(|a| a.name())
        .collect()
}

fn status(i: &Ingested, a: Anomaly) -> &'static str {
    i.report.verdict(a).map(|v| v.status()).unwrap_or("missing")
}

fn show(i: &Ingested) -> String {
    format!("{}{}", i.report.to_text(), jsonl::write_history(&i.history))
}

#[test]
fn a_lost_memory_update_is_a1_and_occ_fixes_it() {
    let before = ingest("memory_lost_update.json");
    assert_eq!(point(&before), vec!["A1"], "{}", show(&before));
    assert_eq!(status(&before, Anomaly::A1), "decided");
    let h = &before.history;
    let w = fast::detect(h).a1[0];
    assert_eq!(
        h.names.agent_name(h.records[w.reader].agent),
        "memory_updater"
    );
    assert_eq!(
        h.names.agent_name(h.records[w.writer].agent),
        "memory_editor"
    );
    assert_eq!(h.names.cell_name(w.cell), "user-memory/profile");
    // HTTP spans are ignored and counted.
    assert_eq!(before.report.counts["ignored_spans"], 1);
    let after = ingest("memory_occ.json");
    assert!(point(&after).is_empty(), "{}", show(&after));
    assert_eq!(
        after.history.records.iter().filter(|r| r.aborted).count(),
        1
    );
}

#[test]
fn without_contents_versions_are_derived_and_a1_is_an_upper_bound() {
    let i = ingest("memory_versions_only.json");
    assert_eq!(point(&i), vec!["A1"], "{}", show(&i));
    assert_eq!(status(&i, Anomaly::A1), "upper_bound");
    let j = ingest("memory_unidentified.json");
    assert_eq!(status(&j, Anomaly::A1), "undecidable", "{}", show(&j));
    assert!(j
        .report
        .verdict(Anomaly::A1)
        .unwrap()
        .why()
        .contains("user-memory"));
}

#[test]
fn tool_calls_completing_out_of_issue_order_are_a6() {
    let before = ingest("tool_reordering.json");
    assert_eq!(point(&before), vec!["A6"], "{}", show(&before));
    let h = &before.history;
    let r = &h.records[fast::detect(h).a6[0].record];
    let cells: Vec<String> = r.co.iter().map(|&(c, _)| h.names.cell_name(c)).collect();
    assert_eq!(cells, vec!["tool:email:call_2", "tool:refund:call_1"]);
    let after = ingest("tool_sequenced.json");
    assert!(point(&after).is_empty(), "{}", show(&after));
    // The registry is observed at the generations only: a change between an observation and
    // the dispatch would not show, so "none" is not an answer (a witness would be real).
    assert_eq!(status(&after, Anomaly::A2), "lower_bound");
    assert!(after
        .report
        .verdict(Anomaly::A2)
        .unwrap()
        .why()
        .contains("gen_ai.tool.definitions on chat"));
}

#[test]
fn a_tool_removed_or_changed_before_the_call_is_a2() {
    let removed = ingest("phantom_tool.json");
    assert_eq!(point(&removed), vec!["A2"], "{}", show(&removed));
    assert_eq!(
        fast::detect(&removed.history).a2[0].reason,
        A2Reason::Removed
    );
    // The overlapping second invocation of `ops` is its own agent.
    let agents: Vec<String> = (0..removed.history.names.agents.len())
        .map(|a| {
            removed
                .history
                .names
                .agent_name(agentsim_models::Agent(a as u32))
        })
        .collect();
    assert_eq!(agents, vec!["ops#2", "ops"]);
    let changed = ingest("phantom_signature.json");
    assert_eq!(point(&changed), vec!["A2"], "{}", show(&changed));
    assert_eq!(
        fast::detect(&changed.history).a2[0].reason,
        A2Reason::VersionChanged { read: 0, write: 1 }
    );
}

#[test]
fn span_order_in_the_file_does_not_matter() {
    let text = std::fs::read_to_string(path("memory_lost_update.json")).unwrap();
    let reversed: Vec<&str> = text.lines().rev().collect();
    let a = ingest("memory_lost_update.json");
    let b = parse_otel(&reversed.join("\n"), "reversed").unwrap();
    assert_eq!(
        jsonl::write_history(&a.history),
        jsonl::write_history(&b.history)
    );
}

#[test]
fn malformed_otlp_is_refused_with_line_and_path() {
    let e = read_otel(path("malformed.json")).unwrap_err().to_string();
    assert!(
        e.contains("malformed.json:1: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano"),
        "{e}"
    );
    let e = read_otel(path("missing.json")).unwrap_err().to_string();
    assert!(e.contains("missing.json: cannot read"), "{e}");
    let e = parse_otel(
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"1\",\
        \"spanId\":\"2\",\"startTimeUnixNano\":\"x\",\"endTimeUnixNano\":\"1\"}]}]}]}",
        "t.json",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("startTimeUnixNano: expected an unsigned 64-bit integer"),
        "{e}"
    );
}

/// Agent Framework's shape: memory behind tools. Without the mapping file no memory operation
/// is seen, and A1 is not "none" but cannot be told; with it, the lost update is found by
/// content.
#[test]
fn memory_behind_tools_needs_the_mapping_and_then_is_decided() {
    use agentsim_ingest::otel::{mapping::Mapping, read_otel_with};
    let plain = ingest("profile_tools.json");
    assert!(point(&plain).is_empty(), "{}", show(&plain));
    assert_eq!(status(&plain, Anomaly::A1), "undecidable");
    let why = plain.report.verdict(Anomaly::A1).unwrap().why().to_owned();
    assert!(why.starts_with("no memory operation seen"), "{why}");
    let map = Mapping::read(&path("profile_map.toml")).unwrap();
    let mapped = read_otel_with(path("profile_tools.json"), Some(&map)).unwrap();
    assert_eq!(point(&mapped), vec!["A1"], "{}", show(&mapped));
    assert_eq!(status(&mapped, Anomaly::A1), "decided");
    let basis = mapped.report.verdict(Anomaly::A1).unwrap().why().to_owned();
    assert!(basis.contains("execute_tool write_profile ("), "{basis}");
    let h = &mapped.history;
    let w = fast::detect(h).a1[0];
    assert_eq!(h.names.cell_name(w.cell), "profile/tone");
    assert_eq!(h.names.agent_name(h.records[w.reader].agent), "alice");
    // Definitions on invoke_agent only are still the plan's registry.
    assert_eq!(status(&mapped, Anomaly::A2), "lower_bound");
    assert!(mapped
        .report
        .verdict(Anomaly::A2)
        .unwrap()
        .why()
        .contains("on invoke_agent"));
}
