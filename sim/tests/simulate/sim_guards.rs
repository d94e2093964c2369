//! Guarded agents in the simulator: scenario errors for the message steps
//! name file, line and key (exit 2 from the binary); a hand-timed scenario whose stale merge is
//! known in advance pins the detector; the shipped stale-evidence twin is pinned on a fixed
//! seed and is byte-identical whatever the thread count. A pass says these seeds and timings
//! behave as pinned, not that the guard prevents stale merges on every schedule.

use agentsim::experiments::cpl_guards as cpl_twin;
use agentsim_sim::Scenario;
use std::path::Path;
use std::process::Command;

use crate::util::root;

/// Author proposes c1, revises to c2 after `REVISE` ms; the Reviewer reviews every candidate
/// for 500 ms; the Merger merges once `fresh` (or, unguarded, `ok`) holds. All latencies are
/// fixed, so the outcome is known: with REVISE = 100 the c2 proposal reaches the Merger (110 ms)
/// before the c1 verdict (520 ms), and an unguarded merge at 520 ms is stale.
const HAND: &str = r#"name = "hand"
runtime = "vanilla"
trials = 7
cells = []

[cpl]
text = '''
let ok = @Reviewer(status == "good");
let fresh = ok & @Reviewer.candidate == @Author.candidate;
let never = @Reviewer(status == "bad");
'''
unguarded = "ok"
stale = "!(@Reviewer.candidate == @Author.candidate)"

[[agents]]
name = "Author"
script = [
  { do = "send", to = "Reviewer", set = { candidate = "c1" }, latency_ms = { fixed = 10 } },
  { do = "wait", latency_ms = { fixed = REVISE } },
  { do = "send", to = "Merger", set = { candidate = "c2" }, latency_ms = { fixed = 10 } },
  { do = "send", to = "Reviewer", latency_ms = { fixed = 10 } },
]

[[agents]]
name = "Reviewer"
repeat = 2
script = [
  { do = "recv", from = "Author", take = ["candidate"], set = { status = "pending" } },
  { do = "wait", latency_ms = { fixed = 500 } },
  { do = "send", to = "Merger", set = { status = "good" }, latency_ms = { fixed = 10 } },
]

[[agents]]
name = "Merger"
script = [
  { label = "next", do = "recv" },
  { do = "act", name = "merge", guard = "fresh", refused = "next" },
]
"#;

fn hand(revise_ms: u64) -> String {
    HAND.replace("REVISE", &revise_ms.to_string())
}

fn parse(text: &str) -> Scenario {
    Scenario::parse(Path::new("g.toml"), text).unwrap()
}

fn err(text: &str) -> String {
    Scenario::parse(Path::new("g.toml"), text)
        .unwrap_err()
        .to_string()
}

/// The 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect(needle) + 1
}

fn assert_at(e: &str, line: usize, key: &str, what: &str) {
    assert!(
        e.starts_with(&format!("g.toml:{line}:")),
        "line {line}: {e}"
    );
    assert!(e.contains(&format!("`{key}`")), "key {key}: {e}");
    assert!(e.contains(what), "{what}: {e}");
}

#[test]
fn message_step_errors_name_line_and_key() {
    let t = hand(100);
    let bad = t.replace("guard = \"fresh\"", "guard = \"frsh\"");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "frsh"),
        "guard",
        "unknown guard `frsh`; defined: ok, fresh",
    );
    let bad = t.replace(
        "@Reviewer(status == \"bad\")",
        "@Reviwer(status == \"bad\")",
    );
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "text = '''"),
        "guards",
        "lifeline `Reviwer` is not an agent",
    );
    let bad = t.replace("@Reviewer.candidate ==", "@Reviewer.colour ==");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "text = '''"),
        "guards",
        "variable `colour` is never set",
    );
    let bad = t.replace(
        "to = \"Merger\", set = { candidate",
        "to = \"Mergr\", set = { candidate",
    );
    let e = err(&bad);
    assert_at(&e, line_of(&bad, "Mergr"), "to", "unknown agent `Mergr`");
    let bad = t.replace(
        "to = \"Merger\", set = { candidate",
        "to = \"Author\", set = { candidate",
    );
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "to = \"Author\""),
        "to",
        "`Author` sends to itself",
    );
    let bad = t.replace("from = \"Author\"", "from = \"Merger\"");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "from = \"Merger\""),
        "recv",
        "recv with no sender",
    );
    let bad = t.replace(
        "{ label = \"next\", do = \"recv\" }",
        "{ label = \"next\", do = \"recv\", from = \"Merger\" }",
    );
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "label = \"next\""),
        "recv",
        "recv with no sender",
    );
    let bad = t.replace("refused = \"next\"", "refused = \"nxt\"");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "nxt"),
        "refused",
        "no step has label `nxt`",
    );
    let bad = t.replace("{ candidate = \"c1\" }", "{ candidate = [\"c1\"] }");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "[\"c1\"]"),
        "set",
        "`candidate` must be a string",
    );
    let bad = t.replace("stale = \"!(", "stale = \"!((");
    let e = err(&bad);
    assert_at(&e, line_of(&bad, "stale ="), "stale", "expected");
    let bad = t.replace("unguarded = \"ok\"", "unguarded = \"okay\"");
    let e = err(&bad);
    assert_at(&e, line_of(&bad, "okay"), "guard", "unknown guard `okay`");
    let bad = t.replace("let ok = @Reviewer(", "let ok = @Reviewer((");
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "text = '''"),
        "guards",
        "(inline):1:38: expected",
    );
    let bad = t.replace("name = \"Merger\"\n", "name = \"Merger\"\ncount = 2\n");
    let e = err(&bad);
    assert_at(&e, line_of(&bad, "count = 2"), "count", "drop `count`");
    let start = t.find("[cpl]").unwrap();
    let end = t.find("[[agents]]").unwrap();
    let bad = format!("{}{}", &t[..start], &t[end..]);
    let e = err(&bad);
    assert_at(
        &e,
        line_of(&bad, "do = \"send\""),
        "do",
        "needs a [cpl] section",
    );
}

#[test]
fn the_binary_exits_2_naming_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("agentsim-guards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    let text = hand(100).replace("guard = \"fresh\"", "guard = \"frsh\"");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args(["cpl", "twin"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let at = format!("{}:{}:", file.display(), line_of(&text, "frsh"));
    assert!(
        stderr.contains(&at) && stderr.contains("`guard`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_merge_on_a_c1_verdict_after_c2_was_proposed_is_stale_unless_guarded() {
    let sc = parse(&hand(100));
    let twin = cpl_twin::run(&sc, 7, 1, 2).unwrap();
    let (w, g) = (&twin.without, &twin.with);
    assert_eq!((w.guard.as_str(), g.guard.as_str()), ("ok", "fresh"));
    assert_eq!((w.stale.k, w.stale.n, w.stale_actions), (7, 7, 7));
    assert_eq!((g.stale.k, g.stale.n, g.stale_actions), (0, 7, 0));
    // Unguarded: refused at the c2 proposal (no verdict yet), merged on the c1 verdict.
    assert_eq!((w.done, w.refusals), (7, 7));
    // Guarded: refused at the proposal and at the c1 verdict, merged on the c2 verdict.
    assert_eq!((g.done, g.refusals), (7, 14));
    assert_eq!((w.blocked.k, g.blocked.k), (0, 0));
}

#[test]
fn a_merge_before_the_revision_is_fresh_in_both_arms() {
    let sc = parse(&hand(2000));
    let twin = cpl_twin::run(&sc, 7, 1, 1).unwrap();
    for arm in [&twin.without, &twin.with] {
        assert_eq!((arm.stale.k, arm.done, arm.refusals), (0, 7, 0), "{arm:?}");
    }
}

#[test]
fn a_guard_that_never_holds_blocks_the_merger_and_the_trial_ends() {
    let sc = parse(&hand(100).replace("guard = \"fresh\"", "guard = \"never\""));
    let runs = cpl_twin::run_trials(&sc, 3, 1, 1).unwrap();
    for r in &runs {
        assert_eq!((r.done, r.refusals, r.blocked), (0, 3, 1), "{r:?}");
        // 2 + 2 + 0 sends; the Merger received all three messages sent to it.
        assert_eq!((r.messages, r.received), (5, 5), "{r:?}");
    }
}

fn stale_evidence() -> Scenario {
    Scenario::load(&root().join("scenarios/cpl/stale-evidence.toml")).unwrap()
}

#[test]
fn the_stale_evidence_twin_is_pinned_on_seed_1() {
    let twin = cpl_twin::run(&stale_evidence(), 200, 1, 2).unwrap();
    let (w, g) = (&twin.without, &twin.with);
    assert_eq!(
        (w.guard.as_str(), g.guard.as_str()),
        ("merge_naive", "merge_ok")
    );
    assert_eq!((w.stale.k, w.stale.n), (101, 200));
    assert_eq!((g.stale.k, g.stale.n), (0, 200));
    assert_eq!((w.done, w.refusals, w.blocked.k), (200, 311, 0));
    assert_eq!((g.done, g.refusals, g.blocked.k), (200, 503, 0));
    assert_eq!((w.messages, g.messages), (1800, 1800));
}

#[test]
fn the_twin_is_byte_identical_whatever_the_thread_count() {
    let file = root().join("scenarios/cpl/stale-evidence.toml");
    let json = |threads: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_agentsim"))
            .args([
                "cpl",
                "twin",
                "--trials",
                "60",
                "--json",
                "--threads",
                threads,
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let one = json("1");
    assert_eq!(one, json("3"));
    assert_eq!(one, json("1"));
    let v: serde_json::Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(v["with"]["stale"]["k"], 0);
    assert_eq!(v["without"]["guard"], "merge_naive");
}
