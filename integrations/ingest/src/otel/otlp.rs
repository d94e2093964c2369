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

use crate::error::IngestError;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// An attribute value (`AnyValue`), as JSON: strings, numbers, booleans, arrays, objects
/// (`kvlistValue`), bytes as their base64 text.
pub type Attr = Json;

/// One span event (`events[]`): Strands, for one, puts tool results and messages there.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanEvent {
    pub name: String,
    /// `timeUnixNano`.
    pub time: u64,
    pub attrs: BTreeMap<String, Attr>,
}

/// One span, with what the mapping needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub attrs: BTreeMap<String, Attr>,
    /// `status.code` is ERROR.
    pub error: bool,
    /// `status.message`, when the span gives one.
    pub status_message: Option<String>,
    /// The span's events, in the order given.
    pub events: Vec<SpanEvent>,
    /// The resource's `service.name`, when given.
    pub service: Option<String>,
}

impl Span {
    /// A string attribute.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Json::as_str)
    }
}

/// Where we are in the input: the file, the 1-based line of the document, the JSON path.
struct At<'a> {
    file: &'a str,
    line: usize,
    path: String,
    v: &'a Json,
}

type R<T> = Result<T, IngestError>;

impl<'a> At<'a> {
    fn err(&self, message: impl Into<String>) -> IngestError {
        IngestError::Otlp {
            file: self.file.to_owned(),
            line: self.line,
            path: if self.path.is_empty() {
                "(document)".to_owned()
            } else {
                self.path.clone()
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
    fn field(&self, camel: &str, snake: &str) -> R<Option<At<'a>>> {
        let o = self.obj()?;
        let v = o
            .get(camel)
            .or_else(|| o.get(snake))
            .filter(|v| !v.is_null());
        Ok(v.map(|v| At {
            file: self.file,
            line: self.line,
            path: join(&self.path, camel),
            v,
        }))
    }

    fn need(&self, camel: &str, snake: &str) -> R<At<'a>> {
        self.field(camel, snake)?
            .ok_or_else(|| self.err(format!("missing `{camel}`")))
    }

    fn items(&self) -> R<Vec<At<'a>>> {
        let a = self
            .v
            .as_array()
            .ok_or_else(|| self.err(format!("expected an array, found {}", kind(self.v))))?;
        Ok(a.iter()
            .enumerate()
            .map(|(i, v)| At {
                file: self.file,
                line: self.line,
                path: format!("{}[{i}]", self.path),
                v,
            })
            .collect())
    }

    /// The items of an optional array field.
    fn list(&self, camel: &str, snake: &str) -> R<Vec<At<'a>>> {
        match self.field(camel, snake)? {
            Some(a) => a.items(),
            None => Ok(Vec::new()),
        }
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

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
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

/// Every span of the input: one JSON document, or one per line (blank lines skipped).
pub fn parse(text: &str, file: &str) -> R<Vec<Span>> {
    let mut spans = Vec::new();
    let bad_json = |line: usize, e: serde_json::Error| IngestError::Otlp {
        file: file.to_owned(),
        line,
        path: "(document)".to_owned(),
        message: format!("invalid JSON: {e}"),
    };
    match serde_json::from_str::<Json>(text) {
        Ok(v) => {
            let blank = &text[..text.len() - text.trim_start().len()];
            let line = 1 + blank.matches('\n').count();
            document(
                &At {
                    file,
                    line,
                    path: String::new(),
                    v: &v,
                },
                &mut spans,
            )?;
        }
        Err(whole) => {
            let lines: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| (i + 1, l))
                .collect();
            if lines.len() <= 1 {
                return Err(bad_json(whole.line(), whole));
            }
            for (line, doc) in lines {
                let v: Json = serde_json::from_str(doc).map_err(|e| bad_json(line, e))?;
                document(
                    &At {
                        file,
                        line,
                        path: String::new(),
                        v: &v,
                    },
                    &mut spans,
                )?;
            }
        }
    }
    Ok(spans)
}

fn document(root: &At<'_>, out: &mut Vec<Span>) -> R<()> {
    root.obj()?;
    let resources = root.list("resourceSpans", "resource_spans")?;
    if resources.is_empty() && root.field("resourceSpans", "resource_spans")?.is_none() {
        return Err(root.err("missing `resourceSpans` (is this an OTLP/JSON trace file?)"));
    }
    for rs in resources {
        let service = match rs.field("resource", "resource")? {
            Some(r) => attributes(&r)?
                .remove("service.name")
                .and_then(|v| v.as_str().map(str::to_owned)),
            None => None,
        };
        for ss in rs.list("scopeSpans", "scope_spans")? {
            for s in ss.list("spans", "spans")? {
                let mut span = span(&s)?;
                span.service.clone_from(&service);
                out.push(span);
            }
        }
    }
    Ok(())
}

fn span(s: &At<'_>) -> R<Span> {
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
    let (mut error, mut status_message) = (false, None);
    if let Some(st) = s.field("status", "status")? {
        if let Some(c) = st.field("code", "code")? {
            error = matches!(c.v, Json::Number(n) if n.as_u64() == Some(2))
                || c.v.as_str() == Some("STATUS_CODE_ERROR");
        }
        if let Some(m) = st.field("message", "message")? {
            status_message = Some(m.string()?.to_owned()).filter(|m| !m.is_empty());
        }
    }
    let mut events = Vec::new();
    for e in s.list("events", "events")? {
        events.push(SpanEvent {
            name: match e.field("name", "name")? {
                Some(n) => n.string()?.to_owned(),
                None => String::new(),
            },
            time: match e.field("timeUnixNano", "time_unix_nano")? {
                Some(t) => t.u64()?,
                None => 0,
            },
            attrs: attributes(&e)?,
        });
    }
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
        service: None,
    })
}

/// The `attributes` of a span, an event or a resource.
fn attributes(s: &At<'_>) -> R<BTreeMap<String, Attr>> {
    let mut attrs = BTreeMap::new();
    for kv in s.list("attributes", "attributes")? {
        let key = kv.need("key", "key")?.string()?.to_owned();
        let value = match kv.field("value", "value")? {
            Some(v) => any_value(&v)?,
            None => Json::Null,
        };
        attrs.insert(key, value);
    }
    Ok(attrs)
}

/// `AnyValue` → JSON.
fn any_value(v: &At<'_>) -> R<Json> {
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
        let items = a.list("values", "values")?;
        return items
            .iter()
            .map(any_value)
            .collect::<R<Vec<_>>>()
            .map(Json::Array);
    }
    if let Some(kv) = v.field("kvlistValue", "kvlist_value")? {
        let mut m = Map::new();
        for pair in kv.list("values", "values")? {
            let key = pair.need("key", "key")?.string()?.to_owned();
            let value = match pair.field("value", "value")? {
                Some(x) => any_value(&x)?,
                None => Json::Null,
            };
            m.insert(key, value);
        }
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
