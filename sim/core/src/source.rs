//! Input errors that name the file, the line, the column and the key, and the one TOML loader.
//!
//! Syntax and type errors come from `toml` with a byte span; semantic errors (unknown cell,
//! runtime, label) carry the span of the offending value. Both are turned into a line and
//! column of the source here, so every message reads `file:line:col: key: what`.
//!
//! This is the one loader of every TOML input the simulator and its experiments read (scenario
//! files, sweep files, split-view files): [`read_source`] and [`parse_toml`] give them the same
//! error type and format.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A scenario file that cannot be used, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{col}: `{key}`: {message}", file.display())]
pub struct ScenarioError {
    pub file: PathBuf,
    /// 1-based line (0 when the error has no position, e.g. an unreadable file).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The key (or the text at the error's position).
    pub key: String,
    pub message: String,
}

/// Where in a source errors are reported: the file name and its text.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    pub file: &'a Path,
    pub text: &'a str,
}

impl Source<'_> {
    /// An error at a byte span, for `key`.
    pub fn error(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        let (line, col) = line_col(self.text, span.start);
        ScenarioError {
            file: self.file.to_path_buf(),
            line,
            col,
            key: key.to_owned(),
            message: message.into(),
        }
    }

    /// Converts a `toml` parse or type error; the key is the source text at its span.
    pub fn from_toml(&self, err: &toml::de::Error) -> ScenarioError {
        let span = err.span().unwrap_or(0..0);
        let key = self.snippet(span.clone());
        let message = err.message().trim().replace('\n', " ");
        self.error(span, &key, message)
    }

    /// The source text in `span`, cut at the first line break and at 40 characters.
    fn snippet(&self, span: Range<usize>) -> String {
        let text = self.text.get(span).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        let mut s: String = first.chars().take(40).collect();
        if s.is_empty() {
            s.push_str("(document)");
        }
        s
    }
}

/// Reads a source file; an unreadable file is an error with no position (line 0).
pub fn read_source(path: &Path) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        col: 0,
        key: "(file)".into(),
        message: e.to_string(),
    })
}

/// Deserializes TOML text into `T`; syntax and type errors carry their line and column.
pub fn parse_toml<T: serde::de::DeserializeOwned>(src: Source<'_>) -> Result<T, ScenarioError> {
    toml::from_str(src.text).map_err(|e| src.from_toml(&e))
}

/// 1-based line and column (in characters) of byte offset `at`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd\n", 0), (1, 1));
        assert_eq!(line_col("ab\ncd\n", 4), (2, 2));
        let src = Source {
            file: Path::new("x.toml"),
            text: "a = 1\nbad = 2\n",
        };
        let e = src.error(6..9, "bad", "unknown");
        assert_eq!(e.to_string(), "x.toml:2:1: `bad`: unknown");
    }
}
