//! Reading an export trace by trace, so that memory follows the largest trace, not the file.
//!
//! The Collector's file exporter writes one `TracesData` document per line, and a trace's spans
//! may be spread over several lines (batches). Two passes over the input:
//!
//! 1. **Index** ([`super::index`]): each line is checked for UTF-8 and scanned, without
//!    parsing it, for the values of its `"traceId"` / `"trace_id"` fields; the index keeps,
//!    for each trace id, the last line that names it.
//! 2. **Map**: each line is parsed ([`super::otlp::line_lean`]) and its spans join their trace;
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

use super::index::Index;
use super::input::{lines, read_to_string, Input};
use super::lean::LeanSpan as Span;
use super::map::{self, Mapper};
use super::mapping::Mapping;
use super::otlp;
use crate::error::IngestError;
use crate::Ingested;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

type R<T> = Result<T, IngestError>;

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

/// Pass 2: parses line by line and maps each trace after its last line. `None`: a span's
/// trace was not where the index said (the caller reads the file whole instead).
///
/// A second thread reads the lines and parses most of them ([`otlp::line_lean`]) while this
/// one maps, a bounded queue apart. Parsing costs about twice what mapping does, so whenever
/// the queue is empty (this thread is waiting) the next batch is sent unparsed and parsed
/// here: both cores stay busy. The batches arrive in file order and each line is parsed the
/// same way on either thread, so the result (and the first error) is the one-thread result,
/// whichever thread parsed what.
fn by_trace(
    input: Input<'_>,
    file: &str,
    index: &Index,
    mapping: Option<&Mapping>,
) -> R<Option<Ingested>> {
    let queued = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<R<Batch>>(QUEUE_MAX);
        let queued = &queued;
        scope.spawn(move || {
            // The mapper starts out waiting: the first batch is its to parse.
            let mut batch = Batch::new(true);
            let send = |batch: Batch| {
                queued.fetch_add(1, Ordering::Relaxed);
                tx.send(Ok(batch)).is_ok()
            };
            let read = lines(input, file, |n, line| {
                if line.trim().is_empty() {
                    return Ok(true);
                }
                batch.push(n, line, file)?;
                if batch.len() < BATCH_MAX {
                    return Ok(true);
                }
                let next = Batch::new(queued.load(Ordering::Relaxed) == 0);
                // A closed queue: the mapper stopped (an error, or a missed trace).
                Ok(send(std::mem::replace(&mut batch, next)))
            });
            // The lines read before the end (or before a bad line) go first, so the first
            // error in file order is the one reported.
            if batch.len() > 0 && !send(batch) {
                return;
            }
            if let Err(e) = read {
                let _ = tx.send(Err(e));
            }
        });
        map_lines(rx, queued, file, index, mapping)
    })
}

/// Lines in file order, parsed by the reading thread or left for the mapping thread.
enum Batch {
    /// (number, spans).
    Parsed(Vec<(usize, Vec<Span>)>),
    /// (number, where it ends in the text), and the lines' text one after another.
    Raw(Vec<(usize, usize)>, String),
}

impl Batch {
    fn new(raw: bool) -> Batch {
        match raw {
            true => Batch::Raw(Vec::with_capacity(BATCH_MAX), String::new()),
            false => Batch::Parsed(Vec::with_capacity(BATCH_MAX)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Batch::Parsed(lines) => lines.len(),
            Batch::Raw(lines, _) => lines.len(),
        }
    }

    /// Adds line `n`: parsed, or its text.
    fn push(&mut self, n: usize, line: &str, file: &str) -> R<()> {
        match self {
            Batch::Parsed(lines) => {
                let mut spans = Vec::new();
                otlp::line_lean(line, file, n, &mut spans)?;
                lines.push((n, spans));
            }
            Batch::Raw(lines, text) => {
                text.push_str(line);
                lines.push((n, text.len()));
            }
        }
        Ok(())
    }
}

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
    queued: &AtomicUsize,
    file: &str,
    index: &Index,
    mapping: Option<&Mapping>,
) -> R<Option<Ingested>> {
    let mut traces = Traces {
        open: HashMap::new(),
        mapper: Mapper::new(file, mapping),
        ending: Vec::new(),
    };
    traces.mapper.reserve(index.traces());
    let mut spans = Vec::new();
    for batch in rx {
        queued.fetch_sub(1, Ordering::Relaxed);
        match batch? {
            Batch::Parsed(lines) => {
                for (n, spans) in lines {
                    if traces.line(n, spans, index).is_none() {
                        return Ok(None);
                    }
                }
            }
            Batch::Raw(lines, text) => {
                let mut start = 0;
                for (n, end) in lines {
                    otlp::line_lean(&text[start..end], file, n, &mut spans)?;
                    start = end;
                    if traces.line(n, std::mem::take(&mut spans), index).is_none() {
                        return Ok(None);
                    }
                }
            }
        }
    }
    let mut rest: Vec<(String, Vec<Span>)> = traces.open.into_iter().collect();
    rest.sort_by(|a, b| a.0.cmp(&b.0));
    let mut mapper = traces.mapper;
    for (_, trace) in rest {
        mapper.trace(trace);
    }
    mapper.finish().map(Some)
}

/// The traces still open, and the mapper that takes each one whole.
struct Traces<'m> {
    open: HashMap<String, Vec<Span>>,
    mapper: Mapper<'m>,
    /// The traces whose last line this is.
    ending: Vec<String>,
}

impl Traces<'_> {
    /// Line `n`'s spans join their traces; the traces it ends are mapped. `None`: a span's
    /// trace was not where the index said.
    fn line(&mut self, n: usize, spans: Vec<Span>, index: &Index) -> Option<()> {
        for s in spans {
            match index.last(s.trace()) {
                Some(last) if last >= n => {
                    // A trace's spans mostly come together: its id once for them.
                    let ending = &mut self.ending;
                    if last == n && ending.last().map(String::as_str) != Some(s.trace()) {
                        ending.push(s.trace().to_owned());
                    }
                }
                _ => return None,
            }
            match self.open.get_mut(s.trace()) {
                Some(t) => t.push(s),
                None => {
                    self.open.insert(s.trace().to_owned(), vec![s]);
                }
            }
        }
        self.ending.sort_unstable();
        self.ending.dedup();
        for id in self.ending.drain(..) {
            if let Some(trace) = self.open.remove(&id) {
                self.mapper.trace(trace);
            }
        }
        Some(())
    }
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
    fn batches_parsed_on_either_thread_give_the_whole_file_readers_result_and_error() {
        // Enough lines for batches of both kinds; trace i % 7 on line i, so traces stay open
        // across batches.
        let docs: Vec<String> = (0..5 * BATCH_MAX)
            .map(|i| {
                doc(
                    &format!("{:x}", 0xa0 + i % 7),
                    &i.to_string(),
                    "chat",
                    i as u64,
                )
            })
            .collect();
        let text = docs.join("\n");
        same(
            &ingest(Input::Text(&text), "t", None).unwrap(),
            &whole(&text),
        );
        let mut bad = docs.clone();
        bad[3 * BATCH_MAX + 5] = "{\"resourceSpans\": 7}".to_owned();
        let bad = bad.join("\n");
        let e = ingest(Input::Text(&bad), "t", None).unwrap_err();
        let w = otlp::parse(&bad, "t").unwrap_err();
        assert_eq!(e.to_string(), w.to_string());
        assert!(
            e.to_string()
                .starts_with(&format!("t:{}:", 3 * BATCH_MAX + 6)),
            "{e}"
        );
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

    /// A mapper's clone finishes the traces mapped so far while the mapper takes more (what
    /// `agentsim serve` does at each detection), and each record names the spans it was
    /// mapped from.
    #[test]
    fn a_clone_finishes_the_traces_so_far_and_records_name_their_spans() {
        let chat = [("gen_ai.operation.name", "chat")];
        let agent = [
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.agent.name", "a"),
        ];
        let one = spans_doc(
            "aa",
            &[("1", "", 10, 100, &agent), ("2", "1", 20, 30, &chat)],
        );
        let two = spans_doc("bb", &[("3", "", 5, 50, &agent), ("4", "3", 6, 7, &chat)]);
        let lean = |line: &str| {
            let mut out = Vec::new();
            otlp::line_lean(line, "t", 1, &mut out).unwrap();
            out
        };
        let mut m = Mapper::new("t", None).keep_origins();
        m.trace(lean(&one));
        let so_far = m.clone();
        m.trace(lean(&two));
        let both = format!("{one}\n{two}\n");
        same(&m.clone().finish().unwrap(), &whole(&both));
        let (first, origins) = so_far.finish_with_origins().unwrap();
        same(&first, &whole(&one));
        assert_eq!(origins.len(), 1);
        let (ing, origins) = m.finish_with_origins().unwrap();
        assert_eq!(origins.len(), ing.history.len());
        // Records in log order: bb's step commits first (at 7), then aa's (at 30).
        let named: Vec<(&str, Vec<&str>)> = (origins.iter())
            .map(|o| (o.trace(), o.spans().collect()))
            .collect();
        assert_eq!(named, [("bb", vec!["4"]), ("aa", vec!["2"])]);
        // A file's reader keeps none.
        let (_, none) = Mapper::new("t", None).finish_with_origins().unwrap();
        assert!(none.is_empty());
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
