//! `agentsim check` under its limits: every model spills its
//! frontier when told to and keeps its counts; the memory ceiling stops a run cleanly with the
//! partial counts and exit 2; a pre-size above the ceiling is refused before any work; SIGINT
//! stops a run with the partial counts, exit 130 and no spill file left behind.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::agentsim;

fn spill_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentsim-limits-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn files_in(dir: &PathBuf) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

const SSI: [&str; 12] = [
    "check",
    "--runtime",
    "ssi",
    "--agents",
    "2",
    "--values",
    "1",
    "--tools",
    "1",
    "--max-ops",
    "2",
    "--quiet",
];

#[test]
fn runtime_model_spills_with_the_same_counts() {
    let dir = spill_dir("spill");
    let mem = agentsim(&[&SSI[..], &["--json"]].concat());
    let d = dir.to_str().unwrap();
    let disk = agentsim(
        &[
            &SSI[..],
            &["--json", "--frontier-mem-mb", "0", "--spill-dir", d],
        ]
        .concat(),
    );
    let (mem, disk): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&mem.stdout).unwrap(),
        serde_json::from_slice(&disk.stdout).unwrap(),
    );
    for key in ["distinct_states", "generated_states", "depth", "properties"] {
        if key == "properties" {
            let strip = |v: &serde_json::Value| {
                let mut v = v[key].clone();
                for (_, p) in v.as_object_mut().unwrap() {
                    p.as_object_mut().unwrap().remove("states");
                }
                v
            };
            assert_eq!(strip(&mem), strip(&disk));
        } else {
            assert_eq!(mem[key], disk[key], "{key}");
        }
    }
    assert_eq!(mem["spilled_bytes"], 0);
    assert!(disk["spilled_bytes"].as_u64().unwrap() > 0, "{disk}");
    assert_eq!(files_in(&dir), 0, "spill files are removed");
    std::fs::remove_dir(&dir).unwrap();
}

#[test]
fn memory_ceiling_stops_with_partial_counts() {
    let out = agentsim(&[&SSI[..], &["--max-memory-mb", "1"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.starts_with("partial counts (stopped): "), "{stdout}");
    assert!(stderr.contains("stopped at the memory ceiling"), "{stderr}");
    assert!(stderr.contains("raise --max-memory-mb"), "{stderr}");
    let json = agentsim(&[&SSI[..], &["--max-memory-mb", "1", "--json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["stopped"], "memory");
    assert_eq!(v["complete"], false);
}

#[test]
fn presize_above_the_ceiling_is_refused() {
    let out = agentsim(&[&SSI[..], &["--expect-states", "18446744073709551615"]].concat());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--expect-states 18446744073709551615 needs"),
        "{stderr}"
    );
}

#[test]
fn sigint_removes_spill_files_and_exits_130() {
    let dir = spill_dir("sigint");
    let d = dir.to_str().unwrap();
    // 2 agents, 2 values, 2 tools: about 2 M states, far longer than the wait below.
    let child = Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args([
            "check",
            "--runtime",
            "ssi",
            "--agents",
            "2",
            "--max-ops",
            "2",
            "--quiet",
        ])
        .args([
            "--property",
            "A1",
            "--frontier-mem-mb",
            "0",
            "--spill-dir",
            d,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while files_in(&dir) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no spill file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}");
    assert!(stdout.starts_with("partial counts (stopped): "), "{stdout}");
    assert_eq!(files_in(&dir), 0, "spill files are removed");
    std::fs::remove_dir(&dir).unwrap();
}
