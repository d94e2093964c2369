//! The readers on the shapes real frameworks' own instrumentation writes (`tests/fixtures/`,
//! made by `make_fixtures.py`): a planned call refused at call time is not an A2 witness,
//! whether its span ended in ERROR or it has no span and its step failed; a plan the trace
//! cannot show ran leaves A2 untold; a witness's note names the span that shows its call ran;
//! a mapping sees arguments through an instrumentor's `args`/`kwargs` wrapping; an AGENT span
//! without `agent.name` is named by its span name without the method suffix.

use agentsim_ingest::openinference::{parse_openinference_with, Beside};
use agentsim_ingest::otel::mapping::Mapping;
use agentsim_ingest::otel::parse_otel;
use agentsim_ingest::Ingested;
use agentsim_models::detect::fast;
use agentsim_models::Anomaly;
use std::path::PathBuf;

fn fixture(name: &str) -> (String, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
    (text, p.display().to_string())
}

fn mapping(name: &str) -> Mapping {
    let (text, file) = fixture(name);
    Mapping::parse(&text, &file).unwrap()
}

fn openinference(name: &str, m: &Mapping) -> Ingested {
    let (text, file) = fixture(name);
    let beside = Beside {
        mcp: None,
        mapping: Some(m),
    };
    parse_openinference_with(&text, &file, beside).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn a2(i: &Ingested) -> (usize, &'static str, String) {
    let v = i.report.verdict(Anomaly::A2).unwrap();
    (
        fast::detect(&i.history).a2.len(),
        v.status(),
        v.why().to_owned(),
    )
}

fn notes(i: &Ingested) -> String {
    i.report.notes.join("\n")
}

#[test]
fn a_genai_call_refused_at_call_time_is_not_a_phantom() {
    let (text, file) = fixture("genai_ran.json");
    let ran = parse_otel(&text, &file).unwrap();
    let (found, status, _) = a2(&ran);
    assert_eq!(
        (found, status),
        (1, "lower_bound"),
        "{}",
        ran.report.to_text()
    );
    assert!(
        notes(&ran).contains("its planned call of rollback ran (execute_tool span a3)"),
        "{}",
        notes(&ran)
    );
    let (text, file) = fixture("genai_refused.json");
    let refused = parse_otel(&text, &file).unwrap();
    let (found, status, why) = a2(&refused);
    assert_eq!((found, status), (0, "decided"), "{why}");
    assert!(
        why.contains(
            "1 planned calls did not run and wrote nothing, so none is a witness \
             (execute_tool spans with status ERROR ×1)"
        ),
        "{why}"
    );
    assert!(!notes(&refused).contains("its planned call of"));
}

#[test]
fn an_openinference_call_that_did_not_run_is_not_a_phantom() {
    let group = mapping("group.toml");
    let ran = openinference("oi_ran.json", &group);
    assert_eq!(a2(&ran).0, 1, "{}", ran.report.to_text());
    assert_eq!(a2(&ran).1, "lower_bound");
    assert!(notes(&ran).contains("its planned call of t ran (TOOL span ta)"));
    for (name, evidence) in [
        ("oi_refused_span.json", "TOOL spans with status ERROR ×1"),
        (
            "oi_refused_no_span.json",
            "no tool span, and its CHAIN span ended in ERROR ×1",
        ),
    ] {
        let i = openinference(name, &group);
        let (found, status, why) = a2(&i);
        // No call ran, so none is a plan: A2 holds, as on the fixed system it is.
        assert_eq!(found, 0, "{name}");
        assert_eq!(status, "decided", "{name}: {why}");
        assert!(why.contains(evidence), "{name}: {why}");
        assert!(!notes(&i).contains("its planned call of"), "{name}");
    }
    // No span of the call and no error: whether it ran is not in the trace.
    let unknown = openinference("oi_unknown.json", &group);
    let (found, status, why) = a2(&unknown);
    assert_eq!((found, status), (0, "lower_bound"), "{why}");
    assert!(
        why.contains("1 planned calls have no span that shows whether they ran"),
        "{why}"
    );
}

#[test]
fn mappings_see_arguments_through_the_instrumentors_wrapping() {
    let i = openinference("oi_nested_args.json", &mapping("notes.toml"));
    let h = &i.history;
    let text = i.report.to_text();
    assert_eq!(h.len(), 2, "{text}");
    let a1 = i.report.verdict(Anomaly::A1).unwrap();
    assert_eq!(a1.status(), "decided", "{text}");
    let cells: Vec<String> = (0..h.names.cells.len())
        .map(|c| h.names.cell_name(agentsim_models::Cell(c as u32)))
        .collect();
    assert!(cells.contains(&"notes/u1".to_owned()), "{cells:?}");
    let r = &h.records[1];
    let c = h.names.cells.get("notes/u1").unwrap();
    let wrote = h
        .names
        .value_name(r.write_values.get(agentsim_models::Cell(c)));
    assert_eq!(wrote.as_deref(), Some("\"likes coffee\""));
}

#[test]
fn an_agent_span_without_agent_name_is_named_by_its_span_name() {
    let i = openinference("oi_nested_args.json", &mapping("notes.toml"));
    let agents: Vec<String> = (0..i.history.names.agents.len())
        .map(|a| i.history.names.agent_name(agentsim_models::Agent(a as u32)))
        .collect();
    assert_eq!(agents, vec!["ops"]);
}

#[test]
fn a_mapping_names_the_attributes_a_framework_records_calls_in() {
    let (text, file) = fixture("genai_own_attributes.json");
    let m = mapping("own_attributes.toml");
    let i = agentsim_ingest::otel::parse_otel_with(&text, &file, Some(&m)).unwrap();
    let a1 = i.report.verdict(Anomaly::A1).unwrap();
    assert_eq!(a1.status(), "decided", "{}", i.report.to_text());
    let h = &i.history;
    let c = agentsim_models::Cell(h.names.cells.get("notes/u1").unwrap());
    let r = &h.records[0];
    let value = |v| h.names.value_name(v);
    assert_eq!(
        value(r.read_values.get(c)).as_deref(),
        Some("\"likes tea\"")
    );
    assert_eq!(
        value(r.write_values.get(c)).as_deref(),
        Some("\"likes coffee\"")
    );
    // Without `[attributes]` the same spans carry no arguments a mapping can see.
    let (own, _) = fixture("own_attributes.toml");
    let tools = own.split("[attributes]").next().unwrap();
    let plain = Mapping::parse(tools, "plain.toml").unwrap();
    let i = agentsim_ingest::otel::parse_otel_with(&text, &file, Some(&plain)).unwrap();
    assert_eq!(
        i.report.verdict(Anomaly::A1).unwrap().status(),
        "undecidable"
    );
}
