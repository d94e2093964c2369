//! `agentsim check --replicas`: the shortest A4 witness exits 1 with its
//! steps, replay line and an ITF file carrying each read's replica and version; pinned reads
//! exit 0 with the states explored; combinations the replicated model has no meaning for
//! exit 2 with a message naming the flag.

use crate::util::agentsim;

const A4: [&str; 9] = [
    "check",
    "--replicas",
    "1",
    "--max-ops",
    "3",
    "--values",
    "1",
    "--property",
    "A4",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = A4.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn any_replica_witness_exits_one_with_itf() {
    let dir = std::env::temp_dir().join(format!("agentsim-a4-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let itf = dir.join("a4.itf.json");
    let out = agentsim(&with(&["--json", "--trace-out", itf.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"], "replicated:vanilla/any-replica/k1/lag1");
    assert_eq!(v["properties"]["A4"]["steps"], 6);
    assert_eq!(v["properties"]["A4"]["path"], "0/0/2/1/0/2/0");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&itf).unwrap()).unwrap();
    assert_eq!(doc["states"].as_array().unwrap().len(), 7);
    let replay = agentsim(&with(&["--replay", "0/0/2/1/0/2/0"]));
    assert_eq!(
        replay.status.code(),
        Some(1),
        "the path splits: A4 is violated"
    );
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(text.contains("asks s1 -> s1: c1=NULL @1"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn pinned_reads_hold_exhaustively() {
    let out = agentsim(&with(&["--read-discipline", "pinned", "--json"]));
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["properties"]["A4"]["holds"], true);
    assert_eq!(v["distinct_states"], 39_469);
}

#[test]
fn nonsense_combinations_exit_two() {
    let cases: [(&[&str], &str); 6] = [
        (&["check", "--property", "A4"], "--replicas K"),
        (&["check", "--max-lag", "2"], "need --replicas"),
        (&["check", "--replicas", "0"], "--replicas 0"),
        (&["check", "--replicas", "1", "--tools", "1"], "--tools 0"),
        (
            &["check", "--replicas", "1", "--read-discipline", "near"],
            "any-replica",
        ),
        (
            &["check", "--replicas", "1", "--max-lag", "9"],
            "--max-lag 9",
        ),
    ];
    for (args, needle) in cases {
        let out = agentsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
