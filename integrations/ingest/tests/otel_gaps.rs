//! Trace gaps (`scenarios/traces/otel/gaps/`, made by `make_traces.py`): each is named in the
//! report with a count and an example span, and lowers the verdict of the anomaly it can hide.
//! Every fixture is a run whose control (`one_trace.json`, `phantom_tool.json`) exhibits the
//! anomaly; with the gap the witness is gone or rests on the reader's choice, and the report
//! no longer says "decided".

mod support;

use agentsim_ingest::otel::parse_otel;
use agentsim_ingest::Ingested;
use agentsim_models::detect::fast;
use agentsim_models::Anomaly;
use std::path::PathBuf;
use support::{status, why};

fn path(name: &str) -> PathBuf {
    support::path(support::EXAMPLES, name)
}

fn ingest(name: &str) -> Ingested {
    support::ingest(support::EXAMPLES, name)
}

fn gap_notes(i: &Ingested) -> Vec<String> {
    let notes = i.report.notes.iter().filter(|n| n.starts_with("gap: "));
    notes.cloned().collect()
}

fn a1_witnesses(i: &Ingested) -> usize {
    fast::detect(&i.history).a1.len()
}

#[test]
fn the_control_has_no_gap_and_a_decided_a1() {
    let i = ingest("gaps/one_trace.json");
    assert_eq!(a1_witnesses(&i), 1, "{}", i.report.to_text());
    assert_eq!(status(&i, Anomaly::A1), "decided");
    assert!(gap_notes(&i).is_empty(), "{:?}", i.report.notes);
}

#[test]
fn orphans_hide_a1_and_make_it_undecidable() {
    let i = ingest("gaps/orphan.json");
    assert_eq!(a1_witnesses(&i), 0, "the dropped parents merge both agents");
    assert_eq!(status(&i, Anomaly::A1), "undecidable");
    assert!(
        why(&i, Anomaly::A1).starts_with("6 orphan spans"),
        "{}",
        why(&i, Anomaly::A1)
    );
    assert_eq!(
        gap_notes(&i),
        vec![
            "gap: 6 orphan spans (their parentSpanId is not in the export, as when a sampler \
             dropped the parent; e.g. span 0000000600000003); 6 step spans reach no agent \
             through them"
        ]
    );
    // A3 stays undecidable; no tool calls, so A2 and A6 keep their verdicts.
    assert_eq!(status(&i, Anomaly::A3), "undecidable");
    assert_eq!(status(&i, Anomaly::A6), "decided");
}

#[test]
fn a_parent_of_unknown_kind_hides_a1_and_makes_it_undecidable() {
    let i = ingest("gaps/unknown_parent.json");
    assert_eq!(
        a1_witnesses(&i),
        0,
        "the editor's steps are read as the updater's"
    );
    assert_eq!(status(&i, Anomaly::A1), "undecidable");
    let notes = gap_notes(&i);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("gap: 3 step spans have a parent of a kind the reader does not know"),
        "{notes:?}"
    );
    assert!(notes[0].contains("e.g. span 0000000600000005"), "{notes:?}");
}

#[test]
fn a_mistyped_agent_name_hides_a2_and_makes_it_undecidable() {
    let control = ingest("phantom_tool.json");
    assert_eq!(fast::detect(&control.history).a2.len(), 1);
    let i = ingest("gaps/mistyped_agent.json");
    assert!(
        fast::detect(&i.history).a2.is_empty(),
        "registries split by name"
    );
    assert_eq!(status(&i, Anomaly::A2), "undecidable");
    assert!(why(&i, Anomaly::A2).contains("gen_ai.agent.name is an integer"));
    assert_eq!(
        gap_notes(&i),
        vec![
            "gap: 1 spans have gen_ai.agent.name of the wrong type (expected a string, found \
             an integer; e.g. span 0000000500000001): read as absent"
        ]
    );
    // A1 needs overlapping invocations, which are separate actors whatever their names: the
    // gap does not lower it (it cannot be told here only because no memory operation is seen).
    assert_eq!(status(&i, Anomaly::A1), "undecidable");
    assert!(why(&i, Anomaly::A1).starts_with("no memory operation seen"));
    assert!(!why(&i, Anomaly::A1).contains("gen_ai.agent.name"));
}

#[test]
fn overlapping_invocations_make_a1_an_upper_bound() {
    let i = ingest("gaps/overlap.json");
    assert_eq!(a1_witnesses(&i), 1, "{}", i.report.to_text());
    assert_eq!(status(&i, Anomaly::A1), "upper_bound");
    assert!(why(&i, Anomaly::A1).starts_with("1 invocations overlap"));
    let notes = gap_notes(&i);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("e.g. span 0000000600000002"), "{notes:?}");
    // A step belongs to the invocation its parents reach: A6 is not lowered.
    assert_eq!(status(&i, Anomaly::A6), "decided");
}

#[test]
fn a_mapping_that_declares_the_invocations_separate_decides_a1() {
    // The application's claim (`[invocations] separate`): the overlapping invocations are
    // separate callers of one agent, so the witness between them is not lowered.
    let dir = std::env::temp_dir().join(format!("agentsim-gaps-separate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("map.toml");
    let options = |tool_memory| agentsim_ingest::Options {
        from: Some(agentsim_ingest::Source::Otel),
        tool_memory,
        ..agentsim_ingest::Options::default()
    };
    std::fs::write(&map, "[invocations]\nseparate = [\"memory_updater\"]\n").unwrap();
    let i = agentsim_ingest::load(&path("gaps/overlap.json"), &options(Some(map.clone()))).unwrap();
    assert_eq!(a1_witnesses(&i), 1, "{}", i.report.to_text());
    assert_eq!(
        status(&i, Anomaly::A1),
        "decided",
        "{}",
        why(&i, Anomaly::A1)
    );
    // Another agent named separate leaves this one's overlap an upper bound.
    std::fs::write(&map, "[invocations]\nseparate = [\"someone_else\"]\n").unwrap();
    let i = agentsim_ingest::load(&path("gaps/overlap.json"), &options(Some(map))).unwrap();
    assert_eq!(status(&i, Anomaly::A1), "upper_bound");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `one_trace.json` with the attribute `key` of its first span that has it set to `value`.
fn retyped(key: &str, value: &str) -> Ingested {
    let text = std::fs::read_to_string(path("gaps/one_trace.json")).unwrap();
    let needle = format!("{{\"key\":\"{key}\",\"value\":");
    let at = text.find(&needle).unwrap_or_else(|| panic!("{key}")) + needle.len();
    // The value ends where its key-value pair does: the first `}}`.
    let end = at + text[at..].find("}}").unwrap() + 1;
    let text = format!("{}{value}{}", &text[..at], &text[end..]);
    parse_otel(&text, "retyped.json").unwrap()
}

#[test]
fn every_mistyped_key_is_named_with_its_types() {
    let cases = [
        (
            "gen_ai.operation.name",
            "{\"intValue\":\"3\"}",
            "an integer",
            [true, true, true],
        ),
        (
            "gen_ai.memory.store.id",
            "{\"boolValue\":true}",
            "a boolean",
            [true, false, false],
        ),
        (
            "gen_ai.memory.records",
            "{\"stringValue\":\"not json\"}",
            "a string that is not a JSON array",
            [true, false, false],
        ),
        (
            "gen_ai.memory.record.id",
            "{\"doubleValue\":1.5}",
            "a double",
            [true, false, false],
        ),
    ];
    for (key, value, found, lowered) in cases {
        let i = retyped(key, value);
        let notes = gap_notes(&i);
        assert_eq!(notes.len(), 1, "{key}: {notes:?}");
        assert!(
            notes[0].contains(&format!("have {key} of the wrong type")),
            "{notes:?}"
        );
        assert!(notes[0].contains(&format!("found {found}")), "{notes:?}");
        for (a, low) in [Anomaly::A1, Anomaly::A2, Anomaly::A6]
            .into_iter()
            .zip(lowered)
        {
            assert_eq!(
                status(&i, a) == "undecidable",
                low,
                "{key} {a}: {}",
                i.report.to_text()
            );
        }
    }
}

#[test]
fn the_examples_without_gaps_have_no_gap_notes() {
    for name in [
        "memory_lost_update.json",
        "memory_occ.json",
        "memory_versions_only.json",
        "memory_unidentified.json",
        "tool_reordering.json",
        "tool_sequenced.json",
    ] {
        let i = ingest(name);
        assert!(gap_notes(&i).is_empty(), "{name}: {:?}", i.report.notes);
    }
    // The phantom examples run two invocations of `ops` at once: named, nothing lowered
    // (they touch no memory, so A1 cannot be told from them at all; their A2 witness is real,
    // a registry observed at some instants cannot show "none").
    for name in ["phantom_tool.json", "phantom_signature.json"] {
        let i = ingest(name);
        assert_eq!(gap_notes(&i).len(), 1, "{name}");
        assert_eq!(status(&i, Anomaly::A1), "undecidable");
        assert!(why(&i, Anomaly::A1).starts_with("no memory operation seen"));
        assert_eq!(status(&i, Anomaly::A2), "lower_bound");
    }
}
