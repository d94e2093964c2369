//! Recorded generations: the shipped example recording replays without a
//! missing key, its tokens come from the recording, a missing key is an error that names the
//! key unless `on_missing = stub`, and the digest that keys a recording is pinned so that a
//! change to its encoding cannot silently orphan every recording.

use agentsim_models::Anomaly;
use agentsim_sim::runner::{run, RunConfig};
use agentsim_sim::scenario::OnMissing;
use agentsim_sim::Scenario;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/recordings/edit-review-recorded.toml")
}

#[test]
fn the_example_recording_replays_with_its_tokens() {
    let sc = Scenario::load(&example()).unwrap();
    let res = run(&RunConfig::new(&sc)).unwrap();
    let t = &res.trials[0].metrics;
    assert_eq!(t.anomalies, vec![Anomaly::A1]);
    // 3 generations of 1100 prompt tokens plus 364, 427 and 455 completion tokens.
    assert_eq!(t.tokens_total, 4546);
    assert_eq!(t.makespan_ms, 7000);
}

fn with_recording(lines: &str) -> (PathBuf, Result<Scenario, String>) {
    let dir = std::env::temp_dir().join(format!(
        "agentsim-rec-{}-{}",
        std::process::id(),
        lines.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(example(), dir.join("s.toml")).unwrap();
    std::fs::write(dir.join("edit-review.jsonl"), lines).unwrap();
    let sc = Scenario::load(&dir.join("s.toml")).map_err(|e| e.to_string());
    (dir, sc)
}

#[test]
fn a_missing_key_names_the_key_unless_the_stub_stands_in() {
    let (dir, sc) = with_recording("{\"format\":\"agentsim-recording\",\"version\":1}\n");
    let sc = sc.unwrap();
    let err = run(&RunConfig::new(&sc)).unwrap_err().to_string();
    assert!(
        err.contains("agent=editor step=1 digest=a67b613072ba1bdc"),
        "{err}"
    );
    let mut cfg = RunConfig::new(&sc);
    cfg.on_missing = Some(OnMissing::Stub);
    assert_eq!(
        run(&cfg).unwrap().trials[0].metrics.anomalies,
        vec![Anomaly::A1]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_recordings_name_file_line_and_key() {
    let header = "{\"format\":\"agentsim-recording\",\"version\":1}\n";
    let line = "{\"agent\":\"editor\",\"step\":1,\"digest\":\"xyz\",\"latency_ms\":1,\
                \"prompt_tokens\":1,\"completion_tokens\":1,\"values\":{}}\n";
    let (dir, sc) = with_recording(&format!("{header}{line}"));
    let err = sc.unwrap_err();
    assert!(err.contains("edit-review.jsonl:2:1: key `digest`"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
    let (dir, sc) = with_recording(&format!(
        "{header}{}",
        line.replace("\"values\":{}", "\"values\":{},\"temp\":1")
    ));
    let err = sc.unwrap_err();
    assert!(err.contains(":2:1: key `temp`"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
    let (dir, sc) = with_recording("{\"format\":\"other\",\"version\":1}\n");
    assert!(sc.unwrap_err().contains(":1:1: key `format`"));
    std::fs::remove_dir_all(dir).unwrap();
}
