//! What every test binary under `sim/tests/` shares: where the repository is, and running the
//! `agentsim` binary cargo built for the tests. Each binary's `main.rs` includes this file with
//! `#[path = "../util/mod.rs"] mod util;`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root: `scenarios/`, `results/` and `tla/` are under it.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `agentsim ARGS` in the repository root (so the paths in ARGS may be relative to it)
/// and returns what it did.
pub fn agentsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run agentsim")
}
