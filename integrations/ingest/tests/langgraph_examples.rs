//! The example checkpoint databases (`scenarios/traces/langgraph/`, made with the real
//! `langgraph` by `make_checkpoints.py`) ingest to the anomaly sets that
//! `agentsim_ingest::langgraph::model` and `agentsim deployed` predict, and the inputs the
//! reader must refuse are refused with the file and the reason.

use agentsim_ingest::langgraph::read_langgraph;
use agentsim_ingest::{IngestError, Ingested};
use agentsim_jsonl as jsonl;
use agentsim_models::detect::{fast, spec};
use agentsim_models::lattice::Point;
use agentsim_models::Anomaly;
use std::path::PathBuf;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/traces/langgraph")
        .join(name)
}

fn ingest(name: &str) -> Ingested {
    read_langgraph(path(name), None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The anomaly set an ingested history exhibits (fast and spec detectors agree).
fn point(i: &Ingested) -> Vec<&'static str> {
    let report = fast::detect(&i.history);
    assert_eq!(report, spec::detect(&i.history), "fast and spec disagree");
    Point::of(&report.anomalies())
        .members()
        .iter()
        .map(|a| a.name())
        .collect()
}

fn show(i: &Ingested) -> String {
    format!("{}{}", i.report.to_text(), jsonl::write_history(&i.history))
}

#[test]
fn superstep_stale_read_is_a1_and_the_edge_fixes_it() {
    let before = ingest("stale_read.sqlite");
    assert_eq!(point(&before), vec!["A1"], "{}", show(&before));
    let a1 = fast::detect(&before.history).a1;
    let n = &before.history.names;
    // Both reviewers read draft-1 while the editor committed draft-2 (and nothing else).
    let readers: Vec<String> = a1
        .iter()
        .map(|w| n.agent_name(before.history.records[w.reader].agent))
        .collect();
    assert_eq!(
        readers,
        vec!["reviewer_1", "reviewer_2"],
        "{}",
        show(&before)
    );
    assert!(a1.iter().all(|w| n.cell_name(w.cell) == "draft"));
    let after = ingest("stale_read_fixed.sqlite");
    assert!(point(&after).is_empty(), "{}", show(&after));
}

#[test]
fn lastvalue_conflict_is_an_invalid_update_and_the_reducer_fixes_it() {
    let before = ingest("double_write.sqlite");
    assert!(point(&before).is_empty(), "{}", show(&before));
    let [err] = before.report.errors.as_slice() else {
        panic!("expected one run error: {}", show(&before));
    };
    assert_eq!(err.kind, "InvalidUpdateError");
    assert_eq!(err.code.as_deref(), Some("INVALID_CONCURRENT_GRAPH_UPDATE"));
    assert!(err
        .message
        .starts_with("At key 'todos': Can receive only one value per step."));
    // The failed superstep's two tasks are in the history, aborted.
    assert_eq!(err.records.len(), 2);
    assert!(err
        .records
        .iter()
        .all(|&r| before.history.records[r].aborted));
    let after = ingest("double_write_fixed.sqlite");
    assert!(point(&after).is_empty(), "{}", show(&after));
    assert!(after.report.errors.is_empty());
    assert!(after.history.records.iter().all(|r| !r.aborted));
}

#[test]
fn deerflow_3123_is_a_sequential_clobber_not_an_anomaly() {
    for name in ["deerflow_3123.sqlite", "deerflow_3123_fixed.sqlite"] {
        let i = ingest(name);
        assert!(point(&i).is_empty(), "{}", show(&i));
        assert!(i.report.errors.is_empty());
    }
    // Before the fix the reporter's None write erased the list: its record writes NULL.
    let before = ingest("deerflow_3123.sqlite");
    let h = &before.history;
    let todos = agentsim_models::Cell(h.names.cells.get("todos").unwrap());
    let last = h.records.iter().rev().find(|r| r.writes(todos)).unwrap();
    assert_eq!(h.names.agent_name(last.agent), "reporter");
    assert!(last.write_values.get(todos).is_null());
    let after = ingest("deerflow_3123_fixed.sqlite");
    let h = &after.history;
    let last = h.records.iter().rev().find(|r| r.writes(todos)).unwrap();
    assert!(
        !last.write_values.get(todos).is_null(),
        "the reducer kept the list"
    );
}

#[test]
fn toolnode_fanout_is_a6_and_one_call_per_step_fixes_it() {
    let before = ingest("toolnode_fanout.sqlite");
    assert_eq!(point(&before), vec!["A6"], "{}", show(&before));
    let h = &before.history;
    let w = fast::detect(h).a6[0];
    let r = &h.records[w.record];
    let cells = |e: &[(agentsim_models::Cell, agentsim_models::Value)]| -> Vec<String> {
        e.iter().map(|&(c, _)| h.names.cell_name(c)).collect()
    };
    assert_eq!(
        cells(&r.io),
        vec![
            "tool:refund:call_1",
            "tool:email:call_2",
            "tool:ticket:call_3"
        ]
    );
    assert_eq!(
        cells(&r.co),
        vec![
            "tool:email:call_2",
            "tool:ticket:call_3",
            "tool:refund:call_1"
        ]
    );
    assert_eq!(
        before.report.verdict(Anomaly::A6).map(|v| v.status()),
        Some("decided")
    );
    let after = ingest("toolnode_fanout_fixed.sqlite");
    assert!(point(&after).is_empty(), "{}", show(&after));
}

/// The effect cells of a record's `io` or `co`.
fn effect_cells(
    i: &Ingested,
    e: &[(agentsim_models::Cell, agentsim_models::Value)],
) -> Vec<String> {
    e.iter()
        .map(|&(c, _)| i.history.names.cell_name(c))
        .collect()
}

#[test]
fn a_send_fanout_to_a_plain_node_is_a6_and_the_ordered_handoff_fixes_it() {
    let before = ingest("send_fanout.sqlite");
    assert_eq!(point(&before), vec!["A6"], "{}", show(&before));
    let w = fast::detect(&before.history).a6[0];
    let r = &before.history.records[w.record];
    assert_eq!(before.history.names.agent_name(r.agent), "worker");
    // Sent refund, email, ticket; stored email (20 ms), ticket (120 ms), refund (300 ms).
    let sent = ["send:worker:0", "send:worker:1", "send:worker:2"];
    assert_eq!(effect_cells(&before, &r.io), sent);
    assert_eq!(
        effect_cells(&before, &r.co),
        ["send:worker:1", "send:worker:2", "send:worker:0"]
    );
    let a6 = before.report.verdict(Anomaly::A6).expect("an A6 verdict");
    assert_eq!(a6.status(), "decided");
    assert!(
        a6.why().contains("planner → worker, 3 tasks"),
        "{}",
        a6.why()
    );
    assert!(a6.why().contains("`task_path`") && a6.why().contains("`rowid`"));
    let after = ingest("send_fanout_fixed.sqlite");
    assert!(point(&after).is_empty(), "{}", show(&after));
    let r = after
        .history
        .records
        .iter()
        .find(|r| r.io.len() == 3)
        .unwrap();
    assert_eq!(effect_cells(&after, &r.io), sent);
    assert_eq!(effect_cells(&after, &r.co), sent);
    assert_eq!(
        after.report.verdict(Anomaly::A6).map(|v| v.status()),
        Some("decided")
    );
}

/// A copy of `name` in a scratch folder with the `writes` rows `sql_where` selects deleted.
fn without_writes(name: &str, sql_where: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-lg-send-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join(format!("{}-{}", sql_where.len(), name));
    std::fs::copy(path(name), &copy).unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let n = conn
        .execute(&format!("DELETE FROM writes WHERE {sql_where}"), [])
        .unwrap();
    assert!(n > 0, "{sql_where} deletes rows of {name}");
    copy
}

#[test]
fn a_send_task_without_stored_writes_cannot_be_ordered() {
    // One of three tasks stored nothing: the other two still order (a witness would be
    // real), but "none" is no answer.
    let one = without_writes(
        "send_fanout_fixed.sqlite",
        "task_path LIKE '~__pregel_push, 0000000001,%'",
    );
    let i = read_langgraph(&one, None).unwrap();
    assert!(point(&i).is_empty(), "{}", show(&i));
    let a6 = i.report.verdict(Anomaly::A6).unwrap();
    assert_eq!(a6.status(), "lower_bound", "{}", a6.why());
    assert!(
        a6.why().contains("1 Send packets have no task"),
        "{}",
        a6.why()
    );
    assert!(i
        .report
        .notes
        .iter()
        .any(|n| n.contains("1 of 3 Send packets to `worker`")));
    // No task stored anything: nothing orders, A6 cannot be told.
    let all = without_writes("send_fanout.sqlite", "task_path LIKE '~__pregel_push,%'");
    let i = read_langgraph(&all, None).unwrap();
    let a6 = i.report.verdict(Anomaly::A6).unwrap();
    assert_eq!(a6.status(), "undecidable", "{}", a6.why());
    assert!(a6.why().contains("3 Send packets"), "{}", a6.why());
}

#[test]
fn a_toolnode_inside_one_task_leaves_a6_undecidable() {
    let i = ingest("toolnode_inline.sqlite");
    assert!(point(&i).is_empty(), "{}", show(&i));
    assert_eq!(
        i.report.verdict(Anomaly::A6).map(|v| v.status()),
        Some("undecidable")
    );
}

#[test]
fn the_fold_is_in_task_order() {
    let i = ingest("fold_order.sqlite");
    assert!(point(&i).is_empty(), "{}", show(&i));
    let h = &i.history;
    let log = agentsim_models::Cell(h.names.cells.get("log").unwrap());
    let last = h.records.iter().rev().find(|r| r.writes(log)).unwrap();
    assert_eq!(
        h.names.value_display(last.write_values.get(log)),
        "[0,1,2,3]"
    );
}

#[test]
fn every_branch_of_a_forked_thread_is_history_and_the_lost_update_is_a1() {
    let forked = ingest("forked_thread.sqlite");
    let text = show(&forked);
    // Both workers' runs are records: branch 1's nodes by name, branch 2's as `node#2`.
    let n = &forked.history.names;
    let agents: Vec<String> = (forked.history.records.iter())
        .map(|r| n.agent_name(r.agent))
        .collect();
    assert!(agents.contains(&"update".to_owned()), "{text}");
    assert!(agents.contains(&"update#2".to_owned()), "{text}");
    assert_eq!(point(&forked), vec!["A1"], "{text}");
    // The lost write is a witness: the two `update`s both wrote `notes` from the fork point.
    let lost = fast::detect(&forked.history).a1.into_iter().any(|w| {
        let (r, wr) = (
            &forked.history.records[w.reader],
            &forked.history.records[w.writer],
        );
        let pair = [n.agent_name(r.agent), n.agent_name(wr.agent)];
        n.cell_name(w.cell) == "notes"
            && pair.contains(&"update#2".to_owned())
            && pair.contains(&"update".to_owned())
    });
    assert!(lost, "{text}");
    let a1 = forked.report.verdict(Anomaly::A1).unwrap();
    assert_eq!(a1.status(), "lower_bound", "{text}");
    assert!(a1.why().contains("lost updates: record"), "{}", a1.why());
    assert_eq!(forked.report.counts["forked_checkpoints"], 3, "{text}");
    // Taking turns keeps one chain: no fork, no A1.
    let fixed = ingest("forked_thread_fixed.sqlite");
    assert!(point(&fixed).is_empty(), "{}", show(&fixed));
    assert!(!fixed.report.counts.contains_key("forked_checkpoints"));
    assert_eq!(
        fixed.report.verdict(Anomaly::A1).unwrap().status(),
        "upper_bound"
    );
}

#[test]
fn threads_are_chosen_by_name() {
    let err = read_langgraph(path("two_threads.sqlite"), None).unwrap_err();
    assert!(matches!(err, IngestError::Ambiguous { .. }));
    assert!(err.to_string().contains("2 threads (a, b)"), "{err}");
    let a = read_langgraph(path("two_threads.sqlite"), Some("b")).unwrap();
    assert_eq!(point(&a), vec!["A1"]);
    let err = read_langgraph(path("two_threads.sqlite"), Some("c")).unwrap_err();
    assert!(err.to_string().contains("no thread `c`"), "{err}");
}

#[test]
fn bad_inputs_are_refused_naming_file_and_reason() {
    let cases = [
        (
            "bad/not_a_checkpointer.sqlite",
            "not a LangGraph SQLite checkpointer database: it has no table `checkpoints`",
        ),
        (
            "bad/not_sqlite.sqlite",
            "not a LangGraph SQLite checkpointer database: not an SQLite database",
        ),
        (
            "bad/truncated.sqlite",
            "the database is damaged or truncated",
        ),
        ("bad/pickled.sqlite", "unknown serialization `pickle`"),
        ("bad/missing.sqlite", "cannot read"),
    ];
    for (name, want) in cases {
        let err = read_langgraph(path(name), None).unwrap_err().to_string();
        assert!(
            err.contains(name.trim_start_matches("bad/")),
            "{name}: {err}"
        );
        assert!(err.contains(want), "{name}: {err}");
    }
}
