//! Programs some tests need that the Rust toolchain does not bring (Chromium, librsvg's
//! `rsvg-convert`). Such a test asks [`require`] for its program: present, the test runs;
//! absent, the test prints once, on the terminal past cargo's output capture, that it did not
//! run and the command that installs what it needs, and returns. With `AGENTSIM_REQUIRE_TOOLS=1`
//! (CI sets it) an absent program fails the test instead, so nothing is skipped where it counts.
//! A test binary includes this file with `#[path = "../util/tools.rs"] mod tools;`.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

/// Set to `1` to make a missing program a failure rather than a skip.
pub const REQUIRE: &str = "AGENTSIM_REQUIRE_TOOLS";

/// A program a test needs, where it may be, and how to install it.
pub struct Tool {
    /// What it is called in messages.
    pub name: &'static str,
    /// Where it may be installed, tried in order.
    pub candidates: &'static [&'static str],
    /// A variable naming another path, tried first when set.
    pub env: Option<&'static str>,
    /// The command that installs it on Debian.
    pub install: &'static str,
}

/// The programs already reported missing, so each is reported once per test binary.
static REPORTED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// The program's path, or `None` after saying (once) that `test` did not run; under
/// `AGENTSIM_REQUIRE_TOOLS=1` a missing program panics with the same message.
pub fn require(tool: &Tool, test: &str) -> Option<PathBuf> {
    if let Some(p) = tool.env.and_then(std::env::var_os) {
        return Some(PathBuf::from(p));
    }
    if let Some(p) = tool
        .candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    {
        return Some(p);
    }
    let other = tool
        .env
        .map(|v| format!(", or name one with {v}"))
        .unwrap_or_default();
    let why = format!(
        "{} is not installed (looked for {}): install it with `{}`{other}",
        tool.name,
        tool.candidates.join(", "),
        tool.install
    );
    if std::env::var(REQUIRE).is_ok_and(|v| v == "1") {
        panic!("{test}: {why} ({REQUIRE}=1 makes a missing program a failure)");
    }
    let mut reported = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    if !reported.contains(&tool.name) {
        reported.push(tool.name);
        // Straight to the process's stderr: libtest captures `eprintln!` of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "\n*** NOT RUN: {test}: {why}. cargo counts it as passed; \
             {REQUIRE}=1 makes this a failure. ***\n"
        );
    }
    None
}
