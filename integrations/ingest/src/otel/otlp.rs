//! OTLP/JSON: the protobuf JSON mapping of `TracesData`, as the Collector's file exporter
//! writes it (one JSON document per line) or as a single document.
//!
//! We read `resourceSpans[].scopeSpans[].spans[]` and, of each span, the ids, name, times,
//! attributes and status. The mapping's rules that matter here (OTLP specification, "JSON
//! Protobuf Encoding"): field names are lowerCamelCase (the original snake_case is accepted
//! too), 64-bit integers may be strings or numbers, enums may be integers or their names,
//! trace and span ids are hex strings, unknown fields are ignored. Ids are compared as given
//! (lowercased), so a file that uses another id encoding throughout still links up.
//!
//! Own reader, not `opentelemetry-proto`'s `with-serde` types: measured on this machine,
//! those pull 52 crates (including the OpenTelemetry SDK) for ~50 s of extra build CPU, and
//! reject enum names (`"kind": "SPAN_KIND_CLIENT"`), which the JSON mapping allows, with an
//! error that names no path. Walking `serde_json::Value` lets every error name the line of the
//! document and the JSON path (`resourceSpans[0].scopeSpans[0].spans[3].endTimeUnixNano`).
//! The walk is the definition; a well-formed document takes [`super::fast`] instead, which
//! yields the same spans without a `Value` tree, and the walker runs on what it refuses.
//! Whole files go through [`super::export`], which reads them a line and a trace at a time.

use super::lean::LeanSpan;
use crate::error::IngestError;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

pub use super::span::{service_of, Attr, Span, SpanEvent};

/// One step of a JSON path: a field (by its lowerCamelCase name) or an array index.
#[derive(Clone, Copy)]
enum Step {
    Root,
    Key(&'static str),
    Index(usize),
}

/// Where we are in the input: the file, the 1-based line of the document, the JSON path.
/// The path is a chain of parents on the stack and is only spelled out for an error, so the
/// walk allocates nothing for it.
struct At<'a, 'p> {
    file: &'a str,
    line: usize,
    parent: Option<&'p At<'a, 'p>>,
    step: Step,
    v: &'a Json,
}

type R<T> = Result<T, IngestError>;

impl<'a, 'p> At<'a, 'p> {
    fn root(file: &'a str, line: usize, v: &'a Json) -> At<'a, 'a> {
        At {
            file,
            line,
            parent: None,
            step: Step::Root,
            v,
        }
    }

    fn child<'s>(&'s self, step: Step, v: &'a Json) -> At<'a, 's> {
        At {
            file: self.file,
            line: self.line,
            parent: Some(self),
            step,
            v,
        }
    }

    /// `resourceSpans[0].scopeSpans[0].spans[3].endTimeUnixNano`; empty at the root.
    fn path(&self) -> String {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(a) = at {
            steps.push(a.step);
            at = a.parent;
        }
        let mut path = String::new();
        for step in steps.iter().rev() {
            match step {
                Step::Root => {}
                Step::Key(k) if path.is_empty() => path.push_str(k),
                Step::Key(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Step::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        path
    }

    fn err(&self, message: impl Into<String>) -> IngestError {
        let path = self.path();
        IngestError::Otlp {
            file: self.file.to_owned(),
            line: self.line,
            path: if path.is_empty() {
                "(document)".to_owned()
            } else {
                path
            },
            message: message.into(),
        }
    }

    fn obj(&self) -> R<&'a Map<String, Json>> {
        self.v
            .as_object()
            .ok_or_else(|| self.err(format!("expected an object, found {}", kind(self.v))))
    }

    /// The field `camel` (or its snake_case spelling `snake`), if present and not null.
    fn field<'s>(&'s self, camel: &'static str, snake: &str) -> R<Option<At<'a, 's>>> {
        let o = self.obj()?;
        let v = o
            .get(camel)
            .or_else(|| o.get(snake))
            .filter(|v| !v.is_null());
        Ok(v.map(|v| self.child(Step::Key(camel), v)))
    }

    fn need<'s>(&'s self, camel: &'static str, snake: &str) -> R<At<'a, 's>> {
        self.field(camel, snake)?
            .ok_or_else(|| self.err(format!("missing `{camel}`")))
    }

    /// The array's items, each at its own path.
    fn items(&self) -> R<impl Iterator<Item = At<'a, '_>>> {
        let a = self
            .v
            .as_array()
            .ok_or_else(|| self.err(format!("expected an array, found {}", kind(self.v))))?;
        Ok(a.iter()
            .enumerate()
            .map(move |(i, v)| self.child(Step::Index(i), v)))
    }

    /// Calls `f` on each item of an optional array field.
    fn each(
        &self,
        camel: &'static str,
        snake: &str,
        mut f: impl FnMut(&At<'a, '_>) -> R<()>,
    ) -> R<()> {
        if let Some(a) = self.field(camel, snake)? {
            for item in a.items()? {
                f(&item)?;
            }
        }
        Ok(())
    }

    fn string(&self) -> R<&'a str> {
        self.v
            .as_str()
            .ok_or_else(|| self.err(format!("expected a string, found {}", kind(self.v))))
    }

    /// A 64-bit unsigned integer: a JSON number or a decimal string.
    fn u64(&self) -> R<u64> {
        match self.v {
            Json::Number(n) => n.as_u64(),
            Json::String(s) => s.parse().ok(),
            _ => None,
        }
        .ok_or_else(|| {
            self.err(format!(
                "expected an unsigned 64-bit integer, found {}",
                self.v
            ))
        })
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// The error for a document that is not JSON.
fn bad_json(file: &str, line: usize, e: &serde_json::Error) -> IngestError {
    IngestError::Otlp {
        file: file.to_owned(),
        line,
        path: "(document)".to_owned(),
        message: format!("invalid JSON: {e}"),
    }
}

/// Every span of the input: one JSON document, or one per line (blank lines skipped).
pub fn parse(text: &str, file: &str) -> R<Vec<Span>> {
    if let Some(spans) = super::fast::document(text) {
        return Ok(spans);
    }
    let mut spans = Vec::new();
    match serde_json::from_str::<Json>(text) {
        Ok(v) => {
            let blank = &text[..text.len() - text.trim_start().len()];
            let line = 1 + blank.matches('\n').count();
            document(&v, file, line, &mut spans)?;
        }
        Err(whole) => {
            let lines: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| (i + 1, l))
                .collect();
            if lines.len() <= 1 {
                return Err(bad_json(file, whole.line(), &whole));
            }
            for (line, doc) in lines {
                line_spans(doc, file, line, &mut spans)?;
            }
        }
    }
    Ok(spans)
}

/// The spans of the document on `line` (the whole line), appended to `out`: the fast path,
/// else the walker, which names what is wrong.
pub fn line_spans(doc: &str, file: &str, line: usize, out: &mut Vec<Span>) -> R<()> {
    if let Some(spans) = super::fast::document(doc) {
        out.extend(spans);
        return Ok(());
    }
    let v: Json = serde_json::from_str(doc).map_err(|e| bad_json(file, line, &e))?;
    document(&v, file, line, out)
}

/// [`line_spans`], the spans as the mapping reads them ([`LeanSpan`]).
pub(super) fn line_lean(doc: &str, file: &str, line: usize, out: &mut Vec<LeanSpan>) -> R<()> {
    if super::fast::lean_document(doc, out) {
        return Ok(());
    }
    let v: Json = serde_json::from_str(doc).map_err(|e| bad_json(file, line, &e))?;
    let mut spans = Vec::new();
    document(&v, file, line, &mut spans)?;
    out.extend(spans.iter().map(LeanSpan::from_span));
    Ok(())
}

/// The spans of one document (`TracesData`), the one on `line` of `file`, appended to `out`.
pub fn document(v: &Json, file: &str, line: usize, out: &mut Vec<Span>) -> R<()> {
    let root = At::root(file, line, v);
    root.obj()?;
    if root.field("resourceSpans", "resource_spans")?.is_none() {
        return Err(root.err("missing `resourceSpans` (is this an OTLP/JSON trace file?)"));
    }
    root.each("resourceSpans", "resource_spans", |rs| {
        let service = service(rs)?;
        rs.each("scopeSpans", "scope_spans", |ss| {
            ss.each("spans", "spans", |s| {
                out.push(span(s, service.clone())?);
                Ok(())
            })
        })
    })
}

/// One span object (`Span`, as in a document's `spans`) of a resource whose `service.name` is
/// `service`: what [`document`] reads for each span, for a reader that walks the document
/// itself (`agentsim serve`, one span as it arrives). Errors name `file` and `line`, and the
/// span's fields from the span object.
pub fn span_of(v: &Json, service: Option<String>, file: &str, line: usize) -> R<Span> {
    span(&At::root(file, line, v), service)
}

/// The resource's `service.name`, when it is a string.
fn service(rs: &At<'_, '_>) -> R<Option<String>> {
    Ok(service_of(rs.obj()?.get("resource")))
}

/// An `attributes` list (`KeyValue`s) as a map; a later key replaces an earlier one.
fn attributes(at: &At<'_, '_>) -> R<BTreeMap<String, Attr>> {
    let mut attrs = BTreeMap::new();
    at.each("attributes", "attributes", |kv| {
        let key = kv.need("key", "key")?.string()?.to_owned();
        let value = match kv.field("value", "value")? {
            Some(v) => any_value(&v)?,
            None => Json::Null,
        };
        attrs.insert(key, value);
        Ok(())
    })?;
    Ok(attrs)
}

fn span(s: &At<'_, '_>, service: Option<String>) -> R<Span> {
    let id = |camel, snake| -> R<Option<String>> {
        match s.field(camel, snake)? {
            Some(v) => {
                let t = v.string()?.to_ascii_lowercase();
                Ok((!t.is_empty()).then_some(t))
            }
            None => Ok(None),
        }
    };
    let trace = id("traceId", "trace_id")?.ok_or_else(|| s.err("missing `traceId`"))?;
    let span_id = id("spanId", "span_id")?.ok_or_else(|| s.err("missing `spanId`"))?;
    let start = s.need("startTimeUnixNano", "start_time_unix_nano")?.u64()?;
    let end_at = s.need("endTimeUnixNano", "end_time_unix_nano")?;
    let end = end_at.u64()?;
    if end < start {
        return Err(end_at.err(format!("the span ends ({end}) before it starts ({start})")));
    }
    let attrs = attributes(s)?;
    let (error, status_message) = status(s)?;
    let mut events = Vec::new();
    s.each("events", "events", |e| {
        events.push(event(e)?);
        Ok(())
    })?;
    Ok(Span {
        trace,
        id: span_id,
        parent: id("parentSpanId", "parent_span_id")?,
        name: match s.field("name", "name")? {
            Some(n) => n.string()?.to_owned(),
            None => String::new(),
        },
        start,
        end,
        attrs,
        error,
        status_message,
        events,
        service,
    })
}

/// `status`: whether its code is ERROR, and its message.
fn status(s: &At<'_, '_>) -> R<(bool, Option<String>)> {
    let Some(st) = s.field("status", "status")? else {
        return Ok((false, None));
    };
    let error = match st.field("code", "code")? {
        Some(c) => {
            matches!(c.v, Json::Number(n) if n.as_u64() == Some(2))
                || c.v.as_str() == Some("STATUS_CODE_ERROR")
        }
        None => false,
    };
    let message = match st.field("message", "message")? {
        Some(m) => Some(m.string()?.to_owned()).filter(|m| !m.is_empty()),
        None => None,
    };
    Ok((error, message))
}

fn event(e: &At<'_, '_>) -> R<SpanEvent> {
    Ok(SpanEvent {
        name: match e.field("name", "name")? {
            Some(n) => n.string()?.to_owned(),
            None => String::new(),
        },
        time: match e.field("timeUnixNano", "time_unix_nano")? {
            Some(t) => t.u64()?,
            None => 0,
        },
        attrs: attributes(e)?,
    })
}

/// `AnyValue` → JSON.
fn any_value(v: &At<'_, '_>) -> R<Json> {
    let o = v.obj()?;
    if o.is_empty() {
        return Ok(Json::Null);
    }
    if let Some(s) = v.field("stringValue", "string_value")? {
        return Ok(Json::String(s.string()?.to_owned()));
    }
    if let Some(b) = v.field("boolValue", "bool_value")? {
        return b
            .v
            .as_bool()
            .map(Json::Bool)
            .ok_or_else(|| b.err("expected a boolean"));
    }
    if let Some(i) = v.field("intValue", "int_value")? {
        let n: Option<i64> = match i.v {
            Json::Number(n) => n.as_i64(),
            Json::String(s) => s.parse().ok(),
            _ => None,
        };
        return n
            .map(Json::from)
            .ok_or_else(|| i.err("expected a 64-bit integer"));
    }
    if let Some(d) = v.field("doubleValue", "double_value")? {
        return match d.v {
            Json::Number(_) => Ok(d.v.clone()),
            Json::String(s) => Ok(Json::String(s.clone())), // "NaN", "Infinity"
            _ => Err(d.err("expected a number")),
        };
    }
    if let Some(a) = v.field("arrayValue", "array_value")? {
        let mut items = Vec::new();
        a.each("values", "values", |x| {
            items.push(any_value(x)?);
            Ok(())
        })?;
        return Ok(Json::Array(items));
    }
    if let Some(kv) = v.field("kvlistValue", "kvlist_value")? {
        let mut m = Map::new();
        kv.each("values", "values", |pair| {
            let key = pair.need("key", "key")?.string()?.to_owned();
            let value = match pair.field("value", "value")? {
                Some(x) => any_value(&x)?,
                None => Json::Null,
            };
            m.insert(key, value);
            Ok(())
        })?;
        return Ok(Json::Object(m));
    }
    if let Some(b) = v.field("bytesValue", "bytes_value")? {
        return Ok(Json::String(b.string()?.to_owned()));
    }
    Err(v.err(
        "an AnyValue with none of stringValue, boolValue, intValue, doubleValue, \
               arrayValue, kvlistValue, bytesValue",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AB","spanId":"01",
        "name":"chat m","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"10","endTimeUnixNano":20,
        "attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},
        {"key":"n","value":{"intValue":"7"}},
        {"key":"l","value":{"arrayValue":{"values":[{"kvlistValue":{"values":[
        {"key":"id","value":{"stringValue":"x"}}]}}]}}}],
        "status":{"code":"STATUS_CODE_ERROR"}}]}]}]}"#;

    #[test]
    fn reads_the_json_mapping_in_either_spelling() {
        let spans = parse(ONE, "t.json").unwrap();
        let s = &spans[0];
        assert_eq!(
            (s.trace.as_str(), s.id.as_str(), s.parent.as_deref()),
            ("ab", "01", None)
        );
        assert_eq!((s.start, s.end, s.error), (10, 20, true));
        assert_eq!(s.str("gen_ai.operation.name"), Some("chat"));
        assert_eq!(s.attrs["n"], serde_json::json!(7));
        assert_eq!(s.attrs["l"], serde_json::json!([{"id": "x"}]));
        let snake = r#"{"resource_spans":[{"scope_spans":[{"spans":[{"trace_id":"ab","span_id":"02",
            "start_time_unix_nano":1,"end_time_unix_nano":2}]}]}]}"#;
        assert_eq!(parse(snake, "t.json").unwrap()[0].id, "02");
    }

    #[test]
    fn json_lines_of_documents_as_the_file_exporter_writes() {
        let two = format!(
            "{}\n\n{}\n",
            ONE.replace('\n', " "),
            ONE.replace('\n', " ").replace("\"01\"", "\"02\"")
        );
        assert_eq!(parse(&two, "t.jsonl").unwrap().len(), 2);
    }

    #[test]
    fn errors_name_line_and_path() {
        let bad = ONE
            .replace('\n', " ")
            .replace("\"endTimeUnixNano\":20", "\"endTimeUnixNano\":5");
        let text = format!("{}\n{bad}\n", ONE.replace('\n', " "));
        let e = parse(&text, "t.json").unwrap_err().to_string();
        assert_eq!(
            e,
            "t.json:2: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: the span ends (5) \
             before it starts (10)"
        );
        let e = parse(
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"1"}]}]}]}"#,
            "t.json",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "t.json:1: resourceSpans[0].scopeSpans[0].spans[0]: missing `traceId`"
        );
        let e = parse("{\"x\":1}", "t.json").unwrap_err().to_string();
        assert!(e.contains("missing `resourceSpans`"), "{e}");
        let e = parse("{\"resourceSpans\": [", "t.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.json:1: (document): invalid JSON"), "{e}");
    }
}
