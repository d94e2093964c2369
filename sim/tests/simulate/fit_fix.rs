//! `agentsim fit` and `agentsim fix` on every example input: the fitted scenario contains the
//! observed run (its replay line's history has the input's anomalies, and the vanilla trials
//! show each at some rate), `fix --json` names a stack, and the scenario written with that
//! stack shows none of the anomalies in 1000 trials.

use crate::util::{agentsim, root};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every example with its `--from` (`None`: a JSON Lines history). Inputs that do not ingest
/// (`malformed.json`, `gaps/`, `bad/`, the two-thread database) are the ingest tests' cases.
fn examples() -> Vec<(PathBuf, Option<&'static str>)> {
    let mut out = Vec::new();
    let list = |dir: &str, ext: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .expect("the example folder")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| Path::new(dir).join(p.file_name().expect("a name")))
            .collect();
        v.sort();
        v
    };
    out.extend(
        list("scenarios/histories", "jsonl")
            .into_iter()
            .map(|p| (p, None)),
    );
    for p in list("scenarios/traces/otel", "json") {
        if !p.ends_with("malformed.json") {
            out.push((p, Some("otel")));
        }
    }
    for p in list("scenarios/traces/langgraph", "sqlite") {
        if !p.ends_with("two_threads.sqlite") {
            out.push((p, Some("langgraph")));
        }
    }
    assert!(out.len() >= 25, "the examples are found: {out:?}");
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-fitfix-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn args<'a>(input: &'a str, from: Option<&'a str>) -> Vec<&'a str> {
    let mut a = vec![input];
    if let Some(f) = from {
        a.extend(["--from", f]);
    }
    a
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn every_fitted_scenario_contains_its_observed_run() {
    let dir = scratch("contains");
    for (i, (input, from)) in examples().into_iter().enumerate() {
        let input = input.to_str().expect("utf-8");
        let sc = dir.join(format!("s{i}.toml"));
        let hist = dir.join(format!("h{i}.jsonl"));
        let mut a = vec!["fit"];
        a.extend(args(input, from));
        a.extend([
            "-o",
            sc.to_str().expect("utf-8"),
            "--json",
            "--trials",
            "200",
        ]);
        let fit = json(&agentsim(&a));
        let exhibits = names(&fit["exhibits"]);
        let line = fit["replay"]
            .as_str()
            .unwrap_or_else(|| panic!("{input}: no replay"));
        let h = hist.to_str().expect("utf-8");
        let replay = agentsim(&["replay", line, "--history-out", h]);
        assert!(replay.status.success(), "{input}: {replay:?}");
        let det = json(&agentsim(&["detect", h, "--json"]));
        assert_eq!(
            names(&det["exhibits"]),
            exhibits,
            "{input}: the replay's anomalies"
        );
        for a in &exhibits {
            let k = fit["rates"][a]["k"].as_u64().expect("a count");
            assert!(k > 0, "{input}: vanilla never shows {a}");
        }
    }
}

#[test]
fn fix_names_a_stack_that_prevents_every_observed_anomaly() {
    let dir = scratch("fix");
    let mut anomalous = 0;
    for (i, (input, from)) in examples().into_iter().enumerate() {
        let input = input.to_str().expect("utf-8");
        let out = dir.join(format!("f{i}.toml"));
        let mut a = vec!["fix"];
        a.extend(args(input, from));
        a.extend(["--json", "-o", out.to_str().expect("utf-8")]);
        let run = agentsim(&a);
        let fix: Value = serde_json::from_slice(&run.stdout).expect("JSON on stdout");
        let beyond = names(&fix["out_of_scope"]);
        // What fix does not answer for (a split view) is named, and the exit is 2, not 0.
        let code = if beyond.is_empty() { 0 } else { 2 };
        assert_eq!(run.status.code(), Some(code), "{input}: {beyond:?}");
        let exhibits = names(&fix["exhibits"]);
        if exhibits.is_empty() {
            assert!(
                fix["stack"].is_null(),
                "{input}: nothing to fix names no stack"
            );
            continue;
        }
        anomalous += 1;
        let stack = fix["stack"]
            .as_str()
            .unwrap_or_else(|| panic!("{input}: no stack"));
        let chosen = &fix["candidates"][0];
        assert_eq!(
            chosen["stack"], stack,
            "{input}: the first candidate is chosen"
        );
        assert_eq!(chosen["verified"], true, "{input}");
        assert!(chosen["token_overhead"]["mean"].is_number(), "{input}");
        let o = out.to_str().expect("utf-8");
        let sim = json(&agentsim(&["simulate", o, "--trials", "1000", "--json"]));
        assert_eq!(
            sim["runtime"], stack,
            "{input}: -o writes the chosen runtime"
        );
        for a in &exhibits {
            let k = &sim["aggregate"]["anomalies"][a]["k"];
            assert_eq!(k, 0, "{input}: {a} under {stack}");
        }
    }
    assert!(
        anomalous >= 10,
        "the anomalous examples are covered: {anomalous}"
    );
}

/// A history that shows only a split view (A4) is not "nothing to fix": `fix` names A4 as out
/// of its scope and exits 2.
#[test]
fn a_split_view_is_named_out_of_scope_not_nothing_to_fix() {
    let out = agentsim(&["fix", "scenarios/histories/a4_split_view.jsonl"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(!stdout.contains("nothing to fix"), "{stdout}");
    assert!(stdout.contains("out of fix's scope"), "{stdout}");
    assert!(stderr.contains("shows A4"), "{stderr}");
}

/// Under a stack with the cascade, the observed run's executor is aborted by the planner's
/// retraction: `fix` says so instead of "executor: unchanged".
#[test]
fn fix_says_what_the_cascade_does_to_the_executor() {
    let out = agentsim(&["fix", "scenarios/histories/a3_causal_cascade.jsonl"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let executor = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("executor:"))
        .expect("an executor line");
    assert!(
        executor.contains("aborted by a retraction's cascade"),
        "{stdout}"
    );
}

/// A scenario without `[tokens]` has no token cost: `fix` says "not modelled" and ranks by the
/// makespan, never prints NaN.
#[test]
fn fix_without_tokens_says_not_modelled() {
    let dir = scratch("tokens");
    let text = std::fs::read_to_string(root().join("scenarios/twins/a1.toml")).expect("read");
    let start = text.find("[tokens]").expect("a [tokens] table");
    let end = start + text[start..].find("\n\n").expect("its end");
    let sc = dir.join("no_tokens.toml");
    std::fs::write(&sc, format!("{}{}", &text[..start], &text[end..])).expect("write");
    let out = agentsim(&["fix", sc.to_str().expect("utf-8"), "--trials", "200"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("NaN"), "{stdout}");
    assert!(stdout.contains("tokens: not modelled"), "{stdout}");
    let stack = stdout
        .lines()
        .find(|l| l.starts_with("stack: "))
        .expect("a stack line");
    assert!(stack.contains("least makespan overhead"), "{stack}");
}

#[test]
fn a_clean_history_has_nothing_to_fix_and_an_empty_one_no_steps() {
    let out = agentsim(&["fix", "scenarios/histories/clean.jsonl"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to fix"));
    let dir = scratch("bad");
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let trace = dir.join("no_steps.json");
    std::fs::write(&trace, r#"{"resourceSpans":[]}"#).expect("write");
    let sc = dir.join("never.toml");
    for (input, from) in [(&empty, None), (&trace, Some("otel"))] {
        let mut a = vec!["fit"];
        a.extend(args(input.to_str().expect("utf-8"), from));
        a.extend(["-o", sc.to_str().expect("utf-8")]);
        let out = agentsim(&a);
        assert_eq!(out.status.code(), Some(2), "{input:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no steps"), "{input:?}: {err}");
        assert!(!sc.exists(), "no scenario is written for bad input");
    }
}

/// Two-record histories that `detect` accepts and whose log times are not 1, 2, …: a gap in
/// the log times, and records whose read and write instants are equal (SPEC §2 allows both).
/// `fit` contains each in its scenario and `fix` answers, neither panics.
#[test]
fn fit_and_fix_take_log_time_gaps_and_reads_at_the_write_instant() {
    let dir = scratch("shapes");
    let gap = concat!(
        r#"{"agent":"editor","read_set":["doc"],"read_values":{"doc":null},"read_time":0,"#,
        r#""write_set":["doc"],"write_values":{"doc":"draft-1"},"write_time":5}"#,
        "\n",
        r#"{"agent":"reviewer","read_set":["doc"],"read_values":{"doc":"draft-1"},"read_time":7,"#,
        r#""write_set":["review"],"write_values":{"review":"ok"},"write_time":9}"#,
        "\n"
    );
    let equal = concat!(
        r#"{"agent":"editor","read_set":["doc"],"read_values":{"doc":null},"read_time":1,"#,
        r#""write_set":["doc"],"write_values":{"doc":"draft-1"},"write_time":1}"#,
        "\n",
        r#"{"agent":"reviewer","read_set":["doc"],"read_values":{"doc":"draft-1"},"read_time":2,"#,
        r#""write_set":["review"],"write_values":{"review":"ok"},"write_time":2}"#,
        "\n"
    );
    for (name, text) in [("gap", gap), ("equal", equal)] {
        let input = dir.join(format!("{name}.jsonl"));
        std::fs::write(&input, text).expect("write");
        let i = input.to_str().expect("utf-8");
        let det = agentsim(&["detect", i]);
        assert_eq!(det.status.code(), Some(0), "{name}: detect accepts it");
        let sc = dir.join(format!("{name}.toml"));
        let fit = json(&agentsim(&[
            "fit",
            i,
            "-o",
            sc.to_str().expect("utf-8"),
            "--json",
            "--trials",
            "200",
        ]));
        assert!(
            fit["replay"].is_string(),
            "{name}: the fitted scenario contains the run: {fit}"
        );
        let fix = agentsim(&["fix", i]);
        assert_eq!(
            fix.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&fix.stderr)
        );
        assert!(
            String::from_utf8_lossy(&fix.stdout).contains("nothing to fix"),
            "{name}"
        );
    }
}

/// `fit` takes the flags `detect` takes: with the `--tool-memory` mapping, the memory behind
/// the profile trace's tools is read and the fitted run has its A1; without it, it has none.
#[test]
fn fit_reads_memory_behind_tools_through_a_mapping() {
    let dir = scratch("mapping");
    let out = dir.join("s.toml");
    let trace = "scenarios/traces/otel/profile_tools.json";
    let map = "scenarios/traces/otel/profile_map.toml";
    let fit = |extra: &[&str]| -> Value {
        let mut a = vec!["fit", trace, "--from", "otel", "-o", out.to_str().unwrap()];
        a.extend(["--trials", "20", "--json"]);
        a.extend(extra);
        json(&agentsim(&a))
    };
    assert_eq!(names(&fit(&["--tool-memory", map])["exhibits"]), ["A1"]);
    assert!(names(&fit(&[])["exhibits"]).is_empty());
    // A flag its source does not take is refused in detect's words.
    let o = out.to_str().unwrap();
    let wrong = agentsim(&[
        "fit",
        "scenarios/histories/clean.jsonl",
        "-o",
        o,
        "--mcp-log",
        map,
    ]);
    assert_eq!(wrong.status.code(), Some(2));
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("--mcp-log joins an OpenInference trace"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A step that issued two tool calls in parallel called both: the fitted header does not list
/// the second as never called.
#[test]
fn a_parallel_call_is_a_call() {
    let dir = scratch("parallel");
    let out = dir.join("s.toml");
    let trace = "scenarios/traces/otel/tool_reordering.json";
    let o = out.to_str().unwrap();
    let v = json(&agentsim(&[
        "fit", trace, "--from", "otel", "-o", o, "--trials", "20", "--json",
    ]));
    let header = v["header"].to_string();
    assert!(!header.contains("never called"), "{header}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// strands-agents #3028 on the committed traces: the drafter's invocation ended in ERROR after
/// its write, and on 1.45.0 the sender read that write. The fitted scenario retracts both of
/// the drafter's steps after the sender committed, so its replay and its vanilla runs show the
/// observed A3; the 1.46.0 run (the sender never ran) fits a scenario that never shows it.
#[test]
fn an_invocation_that_ended_in_error_is_fitted_as_a_retraction_its_reader_outlives() {
    let dir = scratch("strands-graph");
    let fixtures = "integrations/python/agentsim_corpus/reported/fixtures";
    let fit = |release: &str| -> (Value, PathBuf) {
        let stem = format!("{fixtures}/strands_graph_failed_node-{release}");
        let (trace, map) = (format!("{stem}.spans.jsonl"), format!("{stem}.map.toml"));
        let sc = dir.join(format!("{release}.toml"));
        let a = [
            "fit",
            &trace,
            "--from",
            "otel",
            "--tool-memory",
            &map,
            "-o",
            sc.to_str().expect("utf-8"),
            "--trials",
            "200",
            "--json",
        ];
        (json(&agentsim(&a)), sc)
    };
    let (affected, _) = fit("1.45.0");
    assert_eq!(names(&affected["exhibits"]), ["A3"]);
    assert_eq!(
        names(&affected["replay_exhibits"]),
        ["A3"],
        "{}",
        affected["replay"]
    );
    assert_eq!(
        affected["rates"]["A3"]["k"].as_u64(),
        Some(200),
        "{}",
        affected["rates"]
    );
    let (fixed, sc) = fit("1.46.0");
    assert!(names(&fixed["exhibits"]).is_empty(), "{fixed}");
    // Nothing in it reads the retracted draft (which is why `simulate --fail-on A3` calls
    // A3 vacuous there): its vanilla runs have no A3.
    let sim = json(&agentsim(&[
        "simulate",
        sc.to_str().expect("utf-8"),
        "--trials",
        "200",
        "--json",
    ]));
    assert_eq!(
        sim["aggregate"]["anomalies"]["A3"]["k"].as_u64(),
        Some(0),
        "{}",
        sim["aggregate"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fix` ranks only live stacks: on a client retrying without bound beside a server that
/// may rewrite its document forever, `ssi` is verified by the checker and sampling and costs
/// less than `pessimistic`, but a weakly fair run starves the client under it; `fix` names
/// it refused for liveness and chooses `pessimistic`, which is
/// live. Without the liveness search `ssi` would rank first and be chosen.
#[test]
fn fix_refuses_a_cheaper_stack_that_starves() {
    let input = "scenarios/liveness/retry-fix.toml";
    let v = json(&agentsim(&[
        "fix", input, "--trials", "200", "--quiet", "--json",
    ]));
    assert_eq!(v["stack"], "pessimistic", "{v:#}");
    let candidate = |name: &str| -> Value {
        v["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .find(|c| c["stack"] == name)
            .unwrap_or_else(|| panic!("{name} is a candidate"))
            .clone()
    };
    let (ssi, chosen) = (candidate("ssi"), candidate("pessimistic"));
    // Refused for liveness, not for what the checker or the trials showed, nor for its cost.
    assert_eq!(ssi["checker"], true, "{ssi:#}");
    assert_eq!(ssi["sampled"]["A1"]["k"], 0, "{ssi:#}");
    let makespan = |c: &Value| c["makespan_overhead"]["mean"].as_f64().expect("measured");
    assert!(makespan(&ssi) < makespan(&chosen), "ssi is the cheaper one");
    assert_eq!(ssi["verified"], false, "{ssi:#}");
    assert_eq!(ssi["liveness"]["refused"], true, "{ssi:#}");
    assert_eq!(ssi["liveness"]["starvation"], "violated", "{ssi:#}");
    assert_eq!(chosen["verified"], true, "{chosen:#}");
    assert_eq!(chosen["liveness"]["refused"], false, "{chosen:#}");
    assert_eq!(chosen["liveness"]["starvation"], "holds", "{chosen:#}");
    // The report says which cheaper stacks were refused, and why.
    let out = agentsim(&["fix", input, "--trials", "200", "--quiet"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let refused = text
        .lines()
        .find(|l| l.starts_with("refused for liveness"))
        .unwrap_or_else(|| panic!("a line of refused stacks: {text}"));
    assert!(refused.contains(" ssi,"), "{refused}");
    assert!(!refused.contains("pessimistic"), "{refused}");
    assert!(
        text.contains("stack: pessimistic"),
        "the chosen stack: {text}"
    );
}
