//! Pass 1 of reading an export ([`super::export`]): for each trace id, the last line that names
//! it, found without parsing.
//!
//! A file is scanned in two halves at once, split at a line boundary: the scan runs alone
//! before parsing starts, so on two cores this halves its wall time. Each half numbers its own
//! lines; the second's are shifted by the first's count, and where both name an id, the
//! second's line is the later. The result is the one-pass index, entry for entry; an error
//! (a read error, or invalid UTF-8) is the first half's if it has one, as one pass would
//! report it first.

use super::input::{read_lines, Input};
use crate::error::IngestError;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

type R<T> = Result<T, IngestError>;

/// For each trace id, the last line that names it.
pub(super) struct Index {
    /// Keyed by [`id_hash`]: two ids that share a hash share the later last line, which only
    /// keeps the other's trace open longer (no `String` per trace is held).
    last: HashMap<u64, usize, BuildHasherDefault<Mixed>>,
    /// Non-blank lines.
    pub(super) documents: usize,
    /// The first non-blank line is a JSON value by itself (a file of one document per line).
    pub(super) first_parses: bool,
}

/// A file smaller than this is scanned in one pass: a thread would cost more than it saves.
const SPLIT_MIN: u64 = 8 << 20;

/// How far past the middle a line boundary is sought, at most, before the file is scanned in
/// one pass (a line of more than this many bytes straddles the middle).
const SEEK_MAX: u64 = 64 << 20;

impl Index {
    fn empty() -> Index {
        Index {
            last: HashMap::default(),
            documents: 0,
            first_parses: false,
        }
    }

    /// Scans `input`; a file of [`SPLIT_MIN`] bytes or more in two halves at once.
    pub(super) fn scan(input: Input<'_>, file: &str) -> R<Index> {
        let io = |source| IngestError::Io {
            file: file.to_owned(),
            source,
        };
        let path = match input {
            Input::Text(text) => {
                let text = text.strip_prefix('\u{feff}').unwrap_or(text);
                let mut ix = Index::empty();
                for (i, line) in text.lines().enumerate() {
                    ix.line(i + 1, line);
                }
                return Ok(ix);
            }
            Input::File(path) => path,
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        let split = match len >= SPLIT_MIN {
            true => line_start_after(path, len / 2).map_err(io)?,
            false => None,
        };
        let Some(split) = split else {
            // To the end, whatever the length said (a pipe's is 0).
            return Ok(Index::part(path, file, 0, None)?.0);
        };
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(|| Index::part(path, file, split, None));
            let first = Index::part(path, file, 0, Some(split));
            (first, second.join().expect("the index scan does not panic"))
        });
        let (mut ix, lines) = first?;
        let (rest, _) = second?;
        if ix.documents == 0 {
            ix.first_parses = rest.first_parses;
        }
        ix.documents += rest.documents;
        ix.last.reserve(rest.last.len());
        for (id, n) in rest.last {
            ix.last.insert(id, lines + n);
        }
        Ok(ix)
    }

    /// The index of bytes `from..to` of the file (`from` at a line start; no `to`: to the
    /// end), its lines numbered from 1, and how many lines it has.
    fn part(path: &Path, file: &str, from: u64, to: Option<u64>) -> R<(Index, usize)> {
        let io = |source| IngestError::Io {
            file: file.to_owned(),
            source,
        };
        let mut handle = std::fs::File::open(path).map_err(io)?;
        if from > 0 {
            handle.seek(SeekFrom::Start(from)).map_err(io)?;
        }
        let mut ix = Index::empty();
        // The first line of the file (and only it) may start with a byte-order mark.
        let before = usize::from(from > 0);
        let limit = to.map_or(u64::MAX, |to| to - from);
        let lines = read_lines(handle.take(limit), before, file, |n, line| {
            ix.line(n - before, line);
            Ok(true)
        })?;
        Ok((ix, lines - before))
    }

    /// Line `n` of the scan.
    fn line(&mut self, n: usize, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        self.documents += 1;
        if self.documents == 1 {
            self.first_parses = serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok();
        }
        trace_ids(line.as_bytes(), |id| {
            self.last.insert(id_hash(id), n);
        });
    }

    /// How many trace ids the scan found (spans' and links'; ids that share a hash once).
    pub(super) fn traces(&self) -> usize {
        self.last.len()
    }

    /// The last line that names trace `id` (as a span gives it: lowercased).
    pub(super) fn last(&self, id: &str) -> Option<usize> {
        self.last.get(&id_hash(id.as_bytes())).copied()
    }
}

/// Where the first line that starts after byte `at` starts, or `None` if none does within
/// [`SEEK_MAX`] bytes (or before the end).
fn line_start_after(path: &Path, at: u64) -> std::io::Result<Option<u64>> {
    let mut handle = std::fs::File::open(path)?;
    handle.seek(SeekFrom::Start(at))?;
    let mut handle = handle.take(SEEK_MAX);
    let mut buf = vec![0u8; 1 << 16];
    let mut pos = at;
    loop {
        let got = handle.read(&mut buf)?;
        if got == 0 {
            return Ok(None);
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..got]) {
            return Ok(Some(pos + i as u64 + 1));
        }
        pos += got as u64;
    }
}

/// The index's hasher: its keys are already hashes ([`id_hash`]), so one multiply spreads
/// them over the table (the standard hasher would hash them again).
#[derive(Default)]
struct Mixed(u64);

impl Hasher for Mixed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A trace id's hash, ASCII case ignored (FNV-1a: fixed, so runs agree; the index's order never
/// reaches the output).
fn id_hash(id: &[u8]) -> u64 {
    id.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Calls `f` with the values of the `"traceId"` and `"trace_id"` fields of a line, as the JSON
/// text spells them (a value with an escape is skipped: pass 2 notices its spans).
fn trace_ids(line: &[u8], mut f: impl FnMut(&[u8])) {
    for needle in [&b"\"traceId\""[..], &b"\"trace_id\""[..]] {
        for at in memchr::memmem::find_iter(line, needle) {
            let rest = &line[at + needle.len()..];
            let rest = skip_ws(rest);
            let Some(rest) = rest.strip_prefix(b":") else {
                continue;
            };
            let Some(rest) = skip_ws(rest).strip_prefix(b"\"") else {
                continue;
            };
            let Some(end) = memchr::memchr2(b'"', b'\\', rest) else {
                continue;
            };
            if rest[end] == b'"' {
                f(&rest[..end]);
            }
        }
    }
}

fn skip_ws(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .count();
    &b[n..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line naming trace `t` (twice, as a span and a link would) and another id.
    fn line(t: &str, other: &str) -> String {
        format!(r#"{{"traceId":"{t}","links":[{{"traceId":"{t}"}},{{"trace_id": "{other}"}}]}}"#)
    }

    #[test]
    fn the_halves_give_the_one_pass_index() {
        // Enough lines to split; ids recur across the middle, blank and CRLF lines between,
        // a byte-order mark first and no newline last.
        let mut text = String::from("\u{feff}");
        let mut k = 0;
        while text.len() < SPLIT_MIN as usize + (1 << 20) {
            text.push_str(&line(&format!("{:x}", k % 5003), &format!("{:X}", k % 97)));
            text.push_str(["\n", "\r\n", "\n\n"][k % 3]);
            k += 1;
        }
        text.push_str(&line("ab", "cd"));
        let path = std::env::temp_dir().join(format!("otlp-index-{}.jsonl", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let split = Index::scan(Input::File(&path), "t");
        std::fs::remove_file(&path).unwrap();
        let split = split.unwrap();
        let one = Index::scan(Input::Text(&text), "t").unwrap();
        assert!(one.first_parses);
        assert_eq!(split.first_parses, one.first_parses);
        assert_eq!(split.documents, one.documents);
        assert_eq!(split.documents, k + 1);
        let sorted = |ix: &Index| {
            let mut v: Vec<(u64, usize)> = ix.last.iter().map(|(&h, &n)| (h, n)).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(&split), sorted(&one));
        assert_eq!(one.last("ab"), Some(text.lines().count()));
        assert_eq!(one.last("CD"), one.last("cd"));
    }

    #[test]
    fn invalid_utf8_in_either_half_is_the_read_error() {
        let mut bytes = Vec::new();
        while bytes.len() < SPLIT_MIN as usize + (1 << 20) {
            bytes.extend_from_slice(line("aa", "bb").as_bytes());
            bytes.push(b'\n');
        }
        let n = bytes.len();
        for at in [10, n - 10] {
            let mut bad = bytes.clone();
            bad[at] = 0xff;
            let path = std::env::temp_dir().join(format!("otlp-index-{}-{at}", std::process::id()));
            std::fs::write(&path, &bad).unwrap();
            let e = Index::scan(Input::File(&path), "t").err();
            std::fs::remove_file(&path).unwrap();
            let Some(IngestError::Io { source, .. }) = e else {
                panic!("no read error with a bad byte at {at}")
            };
            assert_eq!(source.kind(), std::io::ErrorKind::InvalidData);
        }
    }
}
