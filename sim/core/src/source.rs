//! Input errors that name the file, the line, the column and the key, and the one TOML loader.
//!
//! Syntax and type errors come from `toml` with a byte span; semantic errors (unknown cell,
//! runtime, label) carry the span of the offending value. Both are turned into a line and
//! column of the source here, so every message reads `file:line:col: key `k`: what` (the
//! format of every reader: history JSON Lines, recordings, guard files and MSCs too), or
//! `file: what` for a file that cannot be read at all.
//!
//! This is the one loader of every TOML input the simulator and its experiments read (scenario
//! files, sweep files, split-view files): [`read_source`] and [`parse_toml`] give them the same
//! error type and format.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A scenario file that cannot be used, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.located())]
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

impl ScenarioError {
    /// `file:line:col: key `k`: message`, or `file: message` with no position (line 0).
    fn located(&self) -> String {
        let file = self.file.display();
        match self.line {
            0 => format!("{file}: {}", self.message),
            _ => format!(
                "{file}:{}:{}: key `{}`: {}",
                self.line, self.col, self.key, self.message
            ),
        }
    }
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

    /// An error about `key` (`table.key` for a key inside `[table]`) of a file that parsed:
    /// located at the line where the key is written, or at the table's header when the key
    /// is not written out (or at the top when neither is).
    pub fn key_error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let (table, name) = key.rsplit_once('.').unwrap_or(("", key));
        let mut current = "";
        let (mut at, mut header) = (None, None);
        let mut offset = 0;
        for line in self.text.split_inclusive('\n') {
            let t = line.trim_start();
            let lead = line.len() - t.len();
            if let Some(h) = t.strip_prefix('[') {
                current = h.split(']').next().unwrap_or("").trim();
                if current == table && header.is_none() {
                    header = Some(offset + lead);
                }
            } else if current == table {
                let written = t.strip_prefix(name).map(str::trim_start);
                if written.is_some_and(|r| r.starts_with('=')) {
                    at = Some(offset + lead);
                    break;
                }
            }
            offset += line.len();
        }
        let start = at.or(header).unwrap_or(0);
        self.error(start..start, key, message)
    }

    /// Converts a `toml` parse or type error. A type error's span is the value, so the key is
    /// the one written before it (`trials = "ten"` names `trials`, not `"ten"`), and the
    /// message says the expected type, then the found one; otherwise the key is the source
    /// text at the span.
    pub fn from_toml(&self, err: &toml::de::Error) -> ScenarioError {
        let span = err.span().unwrap_or(0..0);
        let message = err.message().trim().replace('\n', " ");
        let typed = ["invalid type: ", "invalid value: "]
            .iter()
            .find_map(|p| message.strip_prefix(p))
            .and_then(|rest| rest.rsplit_once(", expected "));
        match (typed, key_before(self.text, span.start)) {
            (Some((found, expected)), Some(key)) => {
                let message = format!("expected {expected}, found {found}");
                self.error(span, &key, message)
            }
            _ => self.error(span.clone(), &self.snippet(span), message),
        }
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

/// Reads a source file; an unreadable file is an error with no position (line 0), and text
/// that is not UTF-8 an error at the line and column of the first invalid byte.
pub fn read_source(path: &Path) -> Result<String, ScenarioError> {
    let bytes = std::fs::read(path).map_err(|e| ScenarioError {
        file: path.to_path_buf(),
        line: 0,
        col: 0,
        key: "(file)".into(),
        message: format!("cannot read: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let text = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or("");
        let (line, col) = line_col(text, good);
        ScenarioError {
            file: path.to_path_buf(),
            line,
            col,
            key: "(text)".into(),
            message: format!("invalid UTF-8 at byte {good} (the file must be UTF-8 text)"),
        }
    })
}

/// Deserializes TOML text into `T`; syntax and type errors carry their line and column.
pub fn parse_toml<T: serde::de::DeserializeOwned>(src: Source<'_>) -> Result<T, ScenarioError> {
    toml::from_str(src.text).map_err(|e| src.from_toml(&e))
}

/// The key a value at byte `at` is written under: the nearest `key =` before it outside any
/// closed array or inline table (`cells = [2, "x"]` gives `cells` for `"x"`), prefixed with
/// the current `[table]` when the key starts its line. `None` when no key precedes the value
/// (the error is about a whole table, or the text is not `key = value`).
fn key_before(text: &str, at: usize) -> Option<String> {
    let before = text.get(..at)?;
    let (mut depth, mut quoted) = (0usize, false);
    let mut eq = None;
    for (i, c) in before.char_indices().rev() {
        match c {
            '"' | '\'' => quoted = !quoted,
            _ if quoted => {}
            ']' | '}' => depth += 1,
            '[' | '{' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => {
                eq = Some(i);
                break;
            }
            _ => {}
        }
    }
    let head = before.get(..eq?)?;
    let name = head.trim_end();
    let start = name
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map_or(0, |i| i + 1);
    let key = name.get(start..)?;
    if key.is_empty() {
        return None;
    }
    let line_start = head.rfind('\n').map_or(0, |i| i + 1);
    let starts_line = head.get(line_start..start)?.trim().is_empty();
    let table = before
        .get(..line_start)?
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|h| h.trim_matches(|c| c == '[' || c == ']').trim());
    Some(match table {
        Some(t) if starts_line && !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_owned(),
    })
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
    fn invalid_utf8_gets_a_line_and_an_unreadable_file_none() {
        let dir = std::env::temp_dir().join(format!("agentsim-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.toml");
        std::fs::write(&f, b"name = \"x\"\nseed = 1 # \xff\n").unwrap();
        let e = read_source(&f).unwrap_err();
        assert_eq!((e.line, e.col), (2, 12));
        assert!(
            e.to_string().ends_with(
                "bad.toml:2:12: key `(text)`: invalid UTF-8 at byte 22 \
             (the file must be UTF-8 text)"
            ),
            "{e}"
        );
        let e = read_source(&dir.join("missing.toml")).unwrap_err();
        assert!(e.to_string().contains("missing.toml: cannot read: "), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn key_errors_point_at_the_key() {
        let src = Source {
            file: Path::new("s.toml"),
            text: "trials = 0\n[grid]\n  overlap = [2.0]\n[profile]\nops = 1\n",
        };
        let at = |k: &str| {
            let e = src.key_error(k, "bad");
            (e.line, e.col)
        };
        assert_eq!(at("trials"), (1, 1));
        assert_eq!(at("grid.overlap"), (3, 3));
        assert_eq!(at("grid.cells"), (2, 1), "unwritten: the table's header");
        assert_eq!(at("profile.ops"), (5, 1));
        assert_eq!(
            src.key_error("grid.overlap", "bad").to_string(),
            "s.toml:3:3: key `grid.overlap`: bad"
        );
    }

    /// A wrongly typed value names its key (with its table), the expected type and the
    /// found one, at the value's line and column: scalar, array element, inline-table field.
    #[test]
    fn type_errors_name_the_key_and_both_types() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Grid {
            cells: Vec<u64>,
            inner: Option<Inner>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            fixed: u64,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Doc {
            trials: Option<u64>,
            grid: Option<Grid>,
        }
        let cases = [
            (
                "trials = \"ten\"\n",
                "s.toml:1:10: key `trials`: expected u64, found string \"ten\"",
            ),
            (
                "[grid]\ncells = [2, \"x\"]\n",
                "s.toml:2:13: key `grid.cells`: expected u64, found string \"x\"",
            ),
            (
                "[grid]\ncells = []\ninner = { fixed = true }\n",
                "s.toml:3:19: key `fixed`: expected u64, found boolean `true`",
            ),
            (
                "trials = -1\n",
                "s.toml:1:10: key `trials`: expected u64, found integer `-1`",
            ),
        ];
        for (text, want) in cases {
            let src = Source {
                file: Path::new("s.toml"),
                text,
            };
            let e = parse_toml::<Doc>(src).unwrap_err();
            assert_eq!(e.to_string(), want, "{text}");
        }
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd\n", 0), (1, 1));
        assert_eq!(line_col("ab\ncd\n", 4), (2, 2));
        let src = Source {
            file: Path::new("x.toml"),
            text: "a = 1\nbad = 2\n",
        };
        let e = src.error(6..9, "bad", "unknown");
        assert_eq!(e.to_string(), "x.toml:2:1: key `bad`: unknown");
    }
}
