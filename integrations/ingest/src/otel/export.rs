//! Reading an export trace by trace, so that memory follows the largest trace, not the file.
//!
//! The Collector's file exporter writes one `TracesData` document per line, and a trace's spans
//! may be spread over several lines (batches). Two passes over the input:
//!
//! 1. **Index**: each line is checked for UTF-8 and scanned, without parsing it, for the
//!    values of its `"traceId"` / `"trace_id"` fields; the index keeps, for each trace id, the
//!    last line that names it.
//! 2. **Map**: each line is parsed ([`super::otlp::line_spans`]) and its spans join their trace;
//!    after the last line of a trace, the whole trace goes to [`Mapper::trace`] and its spans
//!    are dropped.
//!
//! The scan over-approximates (a span link's `traceId` names a trace too, which only keeps it
//! open longer); a span whose trace the scan missed (an id written with JSON escapes) is caught
//! in pass 2, and the input is then read the simple way, whole, with the same result. So is a
//! file that is one document (pretty-printed over many lines, or a single line): it is parsed
//! whole, as before. Errors are those of the whole-file reader ([`super::otlp::parse`]): the
//! first bad line in file order, with its line and JSON path; invalid UTF-8 anywhere is a read
//! error before any JSON error.

use super::lean::LeanSpan as Span;
use super::map::{self, Mapper};
use super::mapping::Mapping;
use super::otlp;
use crate::error::IngestError;
use crate::Ingested;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

type R<T> = Result<T, IngestError>;

/// Where the export is: a file (read twice, a line at a time) or text already in memory.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    File(&'a Path),
    Text(&'a str),
}

/// Ingests an export; `file` names it in errors and in the report.
pub fn ingest(input: Input<'_>, file: &str, mapping: Option<&Mapping>) -> R<Ingested> {
    let index = Index::scan(input, file)?;
    if index.documents >= 2 && index.first_parses {
        if let Some(done) = by_trace(input, file, &index, mapping)? {
            return Ok(done);
        }
    }
    // One document, an empty file, or a trace id the scan could not read: the whole file.
    let text = match input {
        Input::Text(t) => std::borrow::Cow::Borrowed(t),
        Input::File(path) => std::borrow::Cow::Owned(read_to_string(path, file)?),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    map::ingest(file, otlp::parse(text, file)?, mapping)
}

fn read_to_string(path: &Path, file: &str) -> R<String> {
    std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: file.to_owned(),
        source,
    })
}

/// Calls `f` with each line (1-based number, text without `\n` or a final `\r`, as
/// `str::lines` splits), after a leading byte-order mark is dropped.
fn lines(input: Input<'_>, file: &str, mut f: impl FnMut(usize, &str) -> R<bool>) -> R<()> {
    let io = |source| IngestError::Io {
        file: file.to_owned(),
        source,
    };
    match input {
        Input::Text(text) => {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            for (i, line) in text.lines().enumerate() {
                if !f(i + 1, line)? {
                    break;
                }
            }
        }
        Input::File(path) => {
            let mut handle = std::fs::File::open(path).map_err(io)?;
            // Lines are handed out of a block of the file in place; a block starts with what
            // the last one left of an unfinished line.
            let mut buf: Vec<u8> = Vec::with_capacity(BLOCK);
            let mut n = 0;
            loop {
                let got = (&mut handle)
                    .take(BLOCK as u64)
                    .read_to_end(&mut buf)
                    .map_err(io)?;
                let mut at = 0;
                while let Some(i) = memchr::memchr(b'\n', &buf[at..]) {
                    n += 1;
                    let line = &buf[at..at + i];
                    at += i + 1;
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    if !f(n, utf8(n, line).map_err(io)?)? {
                        return Ok(());
                    }
                }
                if got == 0 {
                    if at < buf.len() {
                        f(n + 1, utf8(n + 1, &buf[at..]).map_err(io)?)?;
                    }
                    break;
                }
                buf.drain(..at);
            }
        }
    }
    Ok(())
}

/// How much of a file is read at a time.
const BLOCK: usize = 1 << 20;

/// A line's text (a leading byte-order mark dropped from the first), or the error
/// `read_to_string` gives for the same file.
fn utf8(n: usize, line: &[u8]) -> std::io::Result<&str> {
    let line = match n {
        1 => line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line),
        _ => line,
    };
    std::str::from_utf8(line).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Pass 1: for each trace id, the last line that names it.
struct Index {
    /// Keyed by [`id_hash`]: two ids that share a hash share the later last line, which only
    /// keeps the other's trace open longer (no `String` per trace is held).
    last: HashMap<u64, usize>,
    /// Non-blank lines.
    documents: usize,
    /// The first non-blank line is a JSON value by itself (a file of one document per line).
    first_parses: bool,
}

impl Index {
    fn scan(input: Input<'_>, file: &str) -> R<Index> {
        let mut ix = Index {
            last: HashMap::new(),
            documents: 0,
            first_parses: false,
        };
        lines(input, file, |n, line| {
            if line.trim().is_empty() {
                return Ok(true);
            }
            ix.documents += 1;
            if ix.documents == 1 {
                ix.first_parses = serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok();
            }
            trace_ids(line.as_bytes(), |id| {
                ix.last.insert(id_hash(id), n);
            });
            Ok(true)
        })?;
        Ok(ix)
    }

    /// The last line that names trace `id` (as a span gives it: lowercased).
    fn last(&self, id: &str) -> Option<usize> {
        self.last.get(&id_hash(id.as_bytes())).copied()
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

/// Pass 2: parses line by line and maps each trace after its last line. `None`: a span's
/// trace was not where the index said (the caller reads the file whole instead).
///
/// A second thread reads and parses the lines ([`otlp::line_spans`]) while this one maps, a
/// bounded queue apart; the lines arrive in file order, so the result (and the first error)
/// is the one-thread result.
fn by_trace(
    input: Input<'_>,
    file: &str,
    index: &Index,
    mapping: Option<&Mapping>,
) -> R<Option<Ingested>> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<R<Batch>>(QUEUE_MAX);
        scope.spawn(move || {
            let mut batch: Batch = Vec::with_capacity(BATCH_MAX);
            let read = lines(input, file, |n, line| {
                if line.trim().is_empty() {
                    return Ok(true);
                }
                let mut spans = Vec::new();
                otlp::line_lean(line, file, n, &mut spans)?;
                batch.push((n, spans));
                if batch.len() < BATCH_MAX {
                    return Ok(true);
                }
                // A closed queue: the mapper stopped (an error, or a missed trace).
                Ok(tx.send(Ok(std::mem::take(&mut batch))).is_ok())
            });
            // The lines parsed before the end (or before a bad line) go first, so the first
            // error in file order is the one reported.
            if !batch.is_empty() && tx.send(Ok(batch)).is_err() {
                return;
            }
            if let Err(e) = read {
                let _ = tx.send(Err(e));
            }
        });
        map_lines(rx, file, index, mapping)
    })
}

/// Parsed lines (number, spans), in file order.
type Batch = Vec<(usize, Vec<Span>)>;

/// Lines a batch holds, at most: a message per line would cost as much as a short line's
/// mapping.
const BATCH_MAX: usize = 64;

/// Batches waiting for the mapper, at most.
const QUEUE_MAX: usize = 4;

/// The mapping side of [`by_trace`]: each trace goes to the mapper after the last line the
/// index names for it; traces whose last naming line held none of their spans (a span link's
/// `traceId`) wait for the end of the file.
fn map_lines(
    rx: std::sync::mpsc::Receiver<R<Batch>>,
    file: &str,
    index: &Index,
    mapping: Option<&Mapping>,
) -> R<Option<Ingested>> {
    let mut open: HashMap<String, Vec<Span>> = HashMap::new();
    let mut mapper = Mapper::new(file, mapping);
    // The traces whose last line this is.
    let mut ending: Vec<String> = Vec::new();
    for batch in rx {
        for (n, spans) in batch? {
            for s in spans {
                match index.last(s.trace()) {
                    Some(last) if last >= n => {
                        // A trace's spans mostly come together: its id once for them.
                        if last == n && ending.last().map(String::as_str) != Some(s.trace()) {
                            ending.push(s.trace().to_owned());
                        }
                    }
                    _ => return Ok(None),
                }
                match open.get_mut(s.trace()) {
                    Some(t) => t.push(s),
                    None => {
                        open.insert(s.trace().to_owned(), vec![s]);
                    }
                }
            }
            ending.sort_unstable();
            ending.dedup();
            for id in ending.drain(..) {
                if let Some(trace) = open.remove(&id) {
                    mapper.trace(trace);
                }
            }
        }
    }
    let mut rest: Vec<(String, Vec<Span>)> = open.into_iter().collect();
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, trace) in rest {
        mapper.trace(trace);
    }
    mapper.finish().map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One document holding one span of trace `t`.
    fn doc(t: &str, id: &str, op: &str, start: u64) -> String {
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"{t}","spanId":"{id}",
            "startTimeUnixNano":"{start}","endTimeUnixNano":"{}","attributes":[{{"key":
            "gen_ai.operation.name","value":{{"stringValue":"{op}"}}}}]}}]}}]}}]}}"#,
            start + 5
        )
        .replace('\n', "")
    }

    fn whole(text: &str) -> Ingested {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        map::ingest("t", otlp::parse(text, "t").unwrap(), None).unwrap()
    }

    fn same(a: &Ingested, b: &Ingested) {
        assert_eq!(a.history, b.history);
        assert_eq!(a.report, b.report);
    }

    #[test]
    fn a_trace_spread_over_lines_is_mapped_whole_and_as_the_whole_file_reader_maps_it() {
        // Trace A's spans on lines 1 and 4 (a CRLF line and a blank one between), B on 2.
        let text = format!(
            "\u{feff}{}\r\n{}\n\n{}\n",
            doc("AA", "1", "invoke_agent", 1),
            doc("bb", "2", "chat", 2),
            doc("aa", "3", "chat", 3)
        );
        let index = Index::scan(Input::Text(&text), "t").unwrap();
        assert_eq!((index.last("aa"), index.last("bb")), (Some(4), Some(2)));
        let streamed = by_trace(Input::Text(&text), "t", &index, None)
            .unwrap()
            .unwrap();
        same(&streamed, &whole(&text));
        assert_eq!(streamed.report.counts["traces"], 2);
        let path = std::env::temp_dir().join(format!("otlp-export-{}.json", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let from_file = ingest(Input::File(&path), "t", None);
        std::fs::remove_file(&path).unwrap();
        same(&from_file.unwrap(), &streamed);
    }

    #[test]
    fn a_trace_id_the_scan_cannot_read_sends_the_file_to_the_whole_reader() {
        let text = format!(
            "{}\n{}\n",
            doc("d\\u0064", "1", "chat", 1),
            doc("cc", "2", "chat", 2)
        );
        let index = Index::scan(Input::Text(&text), "t").unwrap();
        assert!(by_trace(Input::Text(&text), "t", &index, None)
            .unwrap()
            .is_none());
        same(
            &ingest(Input::Text(&text), "t", None).unwrap(),
            &whole(&text),
        );
    }

    #[test]
    fn errors_are_the_whole_file_readers() {
        let text = format!("{}\n{{\"resourceSpans\": [\n", doc("aa", "1", "chat", 1));
        let e = ingest(Input::Text(&text), "t", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t:2: (document): invalid JSON"), "{e}");
        let dup = format!(
            "{}\n{}\n",
            doc("aa", "1", "chat", 1),
            doc("aa", "1", "chat", 7)
        );
        let e = ingest(Input::Text(&dup), "t", None)
            .unwrap_err()
            .to_string();
        assert_eq!(e, "t: span 1 of trace aa appears twice");
        let path = std::env::temp_dir().join(format!("otlp-utf8-{}.json", std::process::id()));
        std::fs::write(&path, b"{\"x\":\n\xff\n").unwrap();
        let e = ingest(Input::File(&path), "t", None).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        let IngestError::Io { source, .. } = e else {
            panic!("{e}")
        };
        assert_eq!(source.kind(), std::io::ErrorKind::InvalidData);
    }

    /// A span for [`spans_doc`]: id, parent, start, end, attributes.
    type TestSpan<'a> = (&'a str, &'a str, u64, u64, &'a [(&'a str, &'a str)]);

    /// One document of trace `t`, its attributes string-valued.
    fn spans_doc(t: &str, spans: &[TestSpan<'_>]) -> String {
        let spans: Vec<String> = spans
            .iter()
            .map(|(id, parent, start, end, attrs)| {
                let attrs: Vec<String> = attrs
                    .iter()
                    .map(|(k, v)| {
                        let v = serde_json::to_string(v).unwrap();
                        format!(r#"{{"key":"{k}","value":{{"stringValue":{v}}}}}"#)
                    })
                    .collect();
                format!(
                    r#"{{"traceId":"{t}","spanId":"{id}","parentSpanId":"{parent}",
                    "startTimeUnixNano":"{start}","endTimeUnixNano":"{end}",
                    "attributes":[{}]}}"#,
                    attrs.join(",")
                )
            })
            .collect();
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        )
        .replace('\n', "")
    }

    #[test]
    fn a_registry_group_spans_traces_and_is_settled_after_the_last() {
        // The planner (trace aa, line 1) calls t at 50; the admin, which shares its registry,
        // shows t retired at 20 in a trace read later (cc, line 3).
        let agent =
            |name: &'static str, tools: &'static str| -> [(&'static str, &'static str); 3] {
                [
                    ("gen_ai.operation.name", "invoke_agent"),
                    ("gen_ai.agent.name", name),
                    ("gen_ai.agent.tools", tools),
                ]
            };
        let call = [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", "t"),
        ];
        let chat = [("gen_ai.operation.name", "chat")];
        let planner = agent("planner", r#"["t","u"]"#);
        let admin = agent("admin", r#"["t","u"]"#);
        let retired = agent("admin", r#"["u"]"#);
        let text = [
            spans_doc(
                "aa",
                &[("1", "", 10, 100, &planner), ("2", "1", 50, 60, &call)],
            ),
            spans_doc("bb", &[("3", "", 0, 5, &admin), ("4", "3", 1, 2, &call)]),
            spans_doc(
                "cc",
                &[("5", "", 20, 25, &retired), ("6", "5", 21, 22, &chat)],
            ),
        ]
        .join("\n");
        let map = Mapping::parse(
            "[[registry]]\nagents = [\"planner\", \"admin\"]\n",
            "m.toml",
        )
        .unwrap();
        let streamed = ingest(Input::Text(&text), "t", Some(&map)).unwrap();
        let whole = map::ingest("t", otlp::parse(&text, "t").unwrap(), Some(&map)).unwrap();
        same(&streamed, &whole);
        let planned = |i: &Ingested| {
            let h = &i.history;
            let r = h
                .records
                .iter()
                .find(|r| h.names.agents.name(r.agent.0) == Some("planner"))
                .unwrap();
            (
                r.read_registry.entries().len(),
                r.write_registry.entries().len(),
            )
        };
        // The plan saw t and u; at dispatch the group had retired t.
        assert_eq!(planned(&streamed), (2, 1));
        let alone = ingest(Input::Text(&text), "t", None).unwrap();
        assert_eq!(planned(&alone), (2, 2));
    }
}
