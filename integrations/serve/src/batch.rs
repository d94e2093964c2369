//! One export request's spans, as the collector keeps them.
//!
//! A request is OTLP/JSON or protobuf (an `ExportTraceServiceRequest`); either way each span is
//! read at once into the typed span the ingest crate's mapping reads
//! ([`agentsim_ingest::otel::otlp::Span`], by the same walker a file's spans go through), with
//! its trace id, span id and start time beside it; no JSON text is kept. A span without a
//! valid trace id (16 bytes, not all zero) or span id (8 bytes, not all zero) is rejected: it
//! cannot be deduplicated or joined to its trace, and the OTLP specification counts it in the
//! response's `partial_success`. A span the reader refuses (an end before its start, an
//! attribute without a key) is kept with the reader's message, which the report then gives,
//! as `detect` gives it for a file holding that span.

use crate::convert;
use agentsim_ingest::otel::otlp;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use serde_json::Value as Json;

/// The name the report gives the received spans (where `detect` names its file).
pub const NAME: &str = "<otlp>";

/// A span received: its ids, start time, and the span as read (or the reader's message).
#[derive(Clone, Debug)]
pub struct Received {
    pub trace: u128,
    pub span: u64,
    pub start: u64,
    pub read: Result<otlp::Span, String>,
}

/// One span object as the mapping reads it, in a resource whose `service.name` is `service`.
fn read(span: &Json, service: Option<String>) -> Result<otlp::Span, String> {
    otlp::span_of(span, service, NAME, 1).map_err(|e| e.to_string())
}

/// The spans of one request, and those it rejected with the first reason.
#[derive(Debug, Default)]
pub struct Batch {
    pub spans: Vec<Received>,
    pub rejected: u64,
    pub reason: Option<String>,
}

impl Batch {
    fn reject(&mut self, why: String) {
        self.rejected += 1;
        self.reason.get_or_insert(why);
    }
}

fn field<'a>(v: &'a Json, camel: &str, snake: &str) -> Option<&'a Json> {
    v.get(camel).or_else(|| v.get(snake))
}

/// The array `v` is (none when absent or null), else malformed at `path`.
fn array<'a>(v: Option<&'a Json>, path: &str) -> Result<&'a [Json], Malformed> {
    match v {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) => Ok(a),
        Some(_) => Err(Malformed(format!("{path} is not an array"))),
    }
}

/// A request body that is not an OTLP/JSON export: the message says where.
#[derive(Debug)]
pub struct Malformed(pub String);

/// The spans of an OTLP/JSON request body. The body must be a JSON object whose
/// `resourceSpans` (or `resource_spans`), when present, is an array of objects, each with
/// `scopeSpans` arrays of objects whose `spans` are arrays of objects; anything else is
/// malformed (400). A span object with a bad id is rejected, not malformed.
pub fn of_json(body: &[u8]) -> Result<Batch, Malformed> {
    let doc: Json = serde_json::from_slice(body)
        .map_err(|e| Malformed(format!("the body is not JSON: {e}")))?;
    if !doc.is_object() {
        return Err(Malformed(
            "the body is not a JSON object (an ExportTraceServiceRequest)".to_owned(),
        ));
    }
    let mut batch = Batch::default();
    let resource_spans = array(
        field(&doc, "resourceSpans", "resource_spans"),
        "resourceSpans",
    )?;
    for (i, rs) in resource_spans.iter().enumerate() {
        if !rs.is_object() {
            return Err(Malformed(format!("resourceSpans[{i}] is not an object")));
        }
        let service = match field(rs, "resource", "resource") {
            Some(r) if r.is_object() => otlp::service_of(Some(r)),
            None | Some(Json::Null) => None,
            Some(_) => {
                return Err(Malformed(format!(
                    "resourceSpans[{i}].resource is not an object"
                )))
            }
        };
        let path = format!("resourceSpans[{i}].scopeSpans");
        for (j, ss) in array(field(rs, "scopeSpans", "scope_spans"), &path)?
            .iter()
            .enumerate()
        {
            let at = format!("{path}[{j}]");
            if !ss.is_object() {
                return Err(Malformed(format!("{at} is not an object")));
            }
            if let Some(s) = field(ss, "scope", "scope") {
                if !s.is_object() && !s.is_null() {
                    return Err(Malformed(format!("{at}.scope is not an object")));
                }
            }
            let spans = array(ss.get("spans"), &format!("{at}.spans"))?;
            for (k, span) in spans.iter().enumerate() {
                let at = format!("{at}.spans[{k}]");
                if !span.is_object() {
                    return Err(Malformed(format!("{at} is not an object")));
                }
                let hexid = |camel, snake| field(span, camel, snake).and_then(Json::as_str);
                let trace = hexid("traceId", "trace_id").and_then(convert::unhex::<16>);
                let id = hexid("spanId", "span_id").and_then(convert::unhex::<8>);
                let start = match field(span, "startTimeUnixNano", "start_time_unix_nano") {
                    Some(Json::String(s)) => s.parse().unwrap_or(0),
                    Some(n) => n.as_u64().unwrap_or(0),
                    None => 0,
                };
                push(
                    &mut batch,
                    || at.clone(),
                    trace,
                    id,
                    start,
                    || read(span, service.clone()),
                );
            }
        }
    }
    Ok(batch)
}

fn push(
    batch: &mut Batch,
    at: impl Fn() -> String,
    trace: Option<[u8; 16]>,
    span: Option<[u8; 8]>,
    start: u64,
    read: impl FnOnce() -> Result<otlp::Span, String>,
) {
    let trace = trace.map(u128::from_be_bytes).filter(|&t| t != 0);
    let span = span.map(u64::from_be_bytes).filter(|&s| s != 0);
    match (trace, span) {
        (None, _) => batch.reject(format!(
            "{}: traceId is not 16 bytes of hex, not all zero",
            at()
        )),
        (_, None) => batch.reject(format!(
            "{}: spanId is not 8 bytes of hex, not all zero",
            at()
        )),
        (Some(trace), Some(span)) => batch.spans.push(Received {
            trace,
            span,
            start,
            read: read(),
        }),
    }
}

/// The spans of a protobuf request (already decoded).
pub fn of_request(req: &ExportTraceServiceRequest) -> Batch {
    let mut batch = Batch::default();
    for (i, rs) in req.resource_spans.iter().enumerate() {
        let resource = convert::resource_json(rs.resource.as_ref());
        let service = otlp::service_of(Some(&resource));
        for (j, ss) in rs.scope_spans.iter().enumerate() {
            for (k, s) in ss.spans.iter().enumerate() {
                let at = || format!("resourceSpans[{i}].scopeSpans[{j}].spans[{k}]");
                let trace = <[u8; 16]>::try_from(s.trace_id.as_slice()).ok();
                let id = <[u8; 8]>::try_from(s.span_id.as_slice()).ok();
                let start = s.start_time_unix_nano;
                push(&mut batch, at, trace, id, start, || {
                    read(&convert::span_json(s), service.clone())
                });
            }
        }
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_ids_are_rejected_and_bad_shapes_are_malformed() {
        let body = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[
            {"traceId":"0000000000000000000000000000000a","spanId":"000000000000000b","name":"x"},
            {"traceId":"00000000000000000000000000000000","spanId":"000000000000000b"},
            {"traceId":"0000000000000000000000000000000a","spanId":"zz"}]}]}]}"#;
        let b = of_json(body).unwrap();
        assert_eq!(b.spans.len(), 1);
        assert_eq!(b.rejected, 2);
        assert!(b.reason.unwrap().contains("spans[1]: traceId"));
        assert_eq!(b.spans[0].trace, 10);
        // No times: kept, with the reader's message for the report.
        let why = b.spans[0].read.as_ref().unwrap_err();
        assert!(why.contains("startTimeUnixNano"), "{why}");
        for bad in [
            &b"[1]"[..],
            b"{",
            br#"{"resourceSpans":3}"#,
            br#"{"resourceSpans":[{"scopeSpans":[{"spans":[1]}]}]}"#,
        ] {
            assert!(of_json(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(of_json(b"{}").unwrap().spans.len(), 0);
    }
}
