//! Shared by the targets that read files: a per-process scratch directory holding the input
//! and copies of the files a scenario may name relative to itself. Each target uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository root (targets read `scenarios/` from it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `DIR/name` in this process's scratch directory, which also holds `code_review.cpl` and
/// `edit-review.jsonl`, so `[cpl] guards` and `recording` keys that name them resolve.
pub fn scratch(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("agentsim-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        for f in ["cpl/code_review.cpl", "recordings/edit-review.jsonl"] {
            let from = root().join("scenarios").join(f);
            let to = dir.join(Path::new(f).file_name().expect("a file name"));
            std::fs::copy(from, to).expect("copy a scenario file");
        }
        dir
    });
    dir.join(name)
}

/// Writes `data` to the scratch file `name` and returns its path.
pub fn write(name: &str, data: &[u8]) -> PathBuf {
    let p = scratch(name);
    std::fs::write(&p, data).expect("write the input");
    p
}
