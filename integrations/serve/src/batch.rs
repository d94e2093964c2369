//! One export request's spans, as the collector keeps them.
//!
//! A request is OTLP/JSON or protobuf (an `ExportTraceServiceRequest`); either way each span is
//! kept as its OTLP/JSON text with its trace id, span id and start time beside it, and its
//! resource and scope as JSON text (shared by the spans of one request). A span without a
//! valid trace id (16 bytes, not all zero) or span id (8 bytes, not all zero) is rejected: it
//! cannot be deduplicated or joined to its trace, and the OTLP specification counts it in the
//! response's `partial_success`.

use crate::convert;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use serde_json::Value as Json;
use std::sync::Arc;

/// A span received: its ids, start time, and OTLP/JSON text, with its resource and scope.
#[derive(Clone, Debug)]
pub struct Received {
    pub trace: u128,
    pub span: u64,
    pub start: u64,
    pub resource: Arc<str>,
    pub scope: Arc<str>,
    pub json: Box<str>,
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
    let array = |v: Option<&Json>, path: &str| -> Result<Vec<Json>, Malformed> {
        match v {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Array(a)) => Ok(a.clone()),
            Some(_) => Err(Malformed(format!("{path} is not an array"))),
        }
    };
    let mut batch = Batch::default();
    let resource_spans = array(
        field(&doc, "resourceSpans", "resource_spans"),
        "resourceSpans",
    )?;
    for (i, rs) in resource_spans.iter().enumerate() {
        if !rs.is_object() {
            return Err(Malformed(format!("resourceSpans[{i}] is not an object")));
        }
        let resource: Arc<str> = match field(rs, "resource", "resource") {
            Some(r) if r.is_object() => r.to_string().into(),
            None | Some(Json::Null) => "{}".into(),
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
            let scope: Arc<str> = match field(ss, "scope", "scope") {
                Some(s) if s.is_object() => s.to_string().into(),
                None | Some(Json::Null) => "{}".into(),
                Some(_) => return Err(Malformed(format!("{at}.scope is not an object"))),
            };
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
                push(&mut batch, &at, trace, id, start, &resource, &scope, || {
                    span.to_string()
                });
            }
        }
    }
    Ok(batch)
}

#[allow(clippy::too_many_arguments)]
fn push(
    batch: &mut Batch,
    at: &str,
    trace: Option<[u8; 16]>,
    span: Option<[u8; 8]>,
    start: u64,
    resource: &Arc<str>,
    scope: &Arc<str>,
    json: impl FnOnce() -> String,
) {
    let trace = trace.map(u128::from_be_bytes).filter(|&t| t != 0);
    let span = span.map(u64::from_be_bytes).filter(|&s| s != 0);
    match (trace, span) {
        (None, _) => batch.reject(format!(
            "{at}: traceId is not 16 bytes of hex, not all zero"
        )),
        (_, None) => batch.reject(format!("{at}: spanId is not 8 bytes of hex, not all zero")),
        (Some(trace), Some(span)) => batch.spans.push(Received {
            trace,
            span,
            start,
            resource: resource.clone(),
            scope: scope.clone(),
            json: json().into_boxed_str(),
        }),
    }
}

/// The spans of a protobuf request (already decoded).
pub fn of_request(req: &ExportTraceServiceRequest) -> Batch {
    let mut batch = Batch::default();
    for (i, rs) in req.resource_spans.iter().enumerate() {
        let resource: Arc<str> = convert::resource_json(rs.resource.as_ref())
            .to_string()
            .into();
        for (j, ss) in rs.scope_spans.iter().enumerate() {
            let scope: Arc<str> = convert::scope_json(ss.scope.as_ref()).to_string().into();
            for (k, s) in ss.spans.iter().enumerate() {
                let at = format!("resourceSpans[{i}].scopeSpans[{j}].spans[{k}]");
                let trace = <[u8; 16]>::try_from(s.trace_id.as_slice()).ok();
                let id = <[u8; 8]>::try_from(s.span_id.as_slice()).ok();
                let start = s.start_time_unix_nano;
                push(&mut batch, &at, trace, id, start, &resource, &scope, || {
                    convert::span_json(s).to_string()
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
        assert_eq!(&*b.spans[0].resource, "{}");
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
