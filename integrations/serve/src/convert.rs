//! OTLP protobuf messages to OTLP/JSON and back.
//!
//! The ingest readers read OTLP/JSON (the Collector's file exporter), so a span received as
//! protobuf is kept as the JSON the file exporter would have written for it: ids as lowercase
//! hex, 64-bit integers as decimal strings, enums as integers, bytes as base64, field names in
//! lowerCamelCase (the OTLP/JSON encoding of the OTLP specification). Fields at their default
//! value are left out, as the file exporter leaves them out.
//!
//! The reverse ([`request_of_json`]) is what a load generator or a test needs to send a file
//! export as an SDK would: protobuf batches.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value as Any, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span::{Event, Link},
    ResourceSpans, ScopeSpans, Span, Status,
};
use serde_json::{json, Map, Value as Json};

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The bytes of a hex string of exactly `n` bytes, either case; `None` for anything else.
pub fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = (digit(b[2 * i])? << 4) | digit(b[2 * i + 1])?;
    }
    Some(out)
}

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        let sextet = |k: u32| T[((n >> k) & 63) as usize] as char;
        s.push(sextet(18));
        s.push(sextet(12));
        s.push(if c.len() > 1 { sextet(6) } else { '=' });
        s.push(if c.len() > 2 { sextet(0) } else { '=' });
    }
    s
}

fn unbase64(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s.as_bytes().iter().filter(|&&c| c != b'=') {
        acc = (acc << 6) | u32::from(val(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// An attribute value as OTLP/JSON writes it.
pub fn any_json(v: &AnyValue) -> Json {
    match &v.value {
        None => json!({}),
        Some(Any::StringValue(s)) => json!({ "stringValue": s }),
        Some(Any::BoolValue(b)) => json!({ "boolValue": b }),
        Some(Any::IntValue(i)) => json!({ "intValue": i.to_string() }),
        Some(Any::DoubleValue(d)) => match serde_json::Number::from_f64(*d) {
            Some(n) => json!({ "doubleValue": n }),
            // JSON has no NaN or infinity; proto3's JSON mapping spells them as strings.
            None if d.is_nan() => json!({ "doubleValue": "NaN" }),
            None if *d > 0.0 => json!({ "doubleValue": "Infinity" }),
            None => json!({ "doubleValue": "-Infinity" }),
        },
        Some(Any::ArrayValue(a)) => {
            let values: Vec<Json> = a.values.iter().map(any_json).collect();
            json!({ "arrayValue": { "values": values } })
        }
        Some(Any::KvlistValue(l)) => json!({ "kvlistValue": { "values": attributes(&l.values) } }),
        Some(Any::BytesValue(b)) => json!({ "bytesValue": base64(b) }),
        // A dictionary index of the profiles signal: meaningless on a span, kept as given.
        Some(Any::StringValueStrindex(i)) => json!({ "stringValueStrindex": i }),
    }
}

/// Key-value attributes as OTLP/JSON writes them.
pub fn attributes(kvs: &[KeyValue]) -> Vec<Json> {
    kvs.iter()
        .map(|kv| match &kv.value {
            Some(v) => json!({ "key": kv.key, "value": any_json(v) }),
            None => json!({ "key": kv.key }),
        })
        .collect()
}

fn put(m: &mut Map<String, Json>, key: &str, v: Json) {
    m.insert(key.to_owned(), v);
}

fn put_nonzero(m: &mut Map<String, Json>, key: &str, n: u32) {
    if n != 0 {
        put(m, key, json!(n));
    }
}

fn put_attributes(m: &mut Map<String, Json>, kvs: &[KeyValue]) {
    if !kvs.is_empty() {
        put(m, "attributes", Json::Array(attributes(kvs)));
    }
}

/// A resource as OTLP/JSON writes it.
pub fn resource_json(r: Option<&Resource>) -> Json {
    let mut m = Map::new();
    if let Some(r) = r {
        put_attributes(&mut m, &r.attributes);
        put_nonzero(&mut m, "droppedAttributesCount", r.dropped_attributes_count);
    }
    Json::Object(m)
}

/// An instrumentation scope as OTLP/JSON writes it.
pub fn scope_json(s: Option<&InstrumentationScope>) -> Json {
    let mut m = Map::new();
    if let Some(s) = s {
        if !s.name.is_empty() {
            put(&mut m, "name", json!(s.name));
        }
        if !s.version.is_empty() {
            put(&mut m, "version", json!(s.version));
        }
        put_attributes(&mut m, &s.attributes);
        put_nonzero(&mut m, "droppedAttributesCount", s.dropped_attributes_count);
    }
    Json::Object(m)
}

/// A span as OTLP/JSON writes it.
pub fn span_json(s: &Span) -> Json {
    let mut m = Map::new();
    put(&mut m, "traceId", json!(hex(&s.trace_id)));
    put(&mut m, "spanId", json!(hex(&s.span_id)));
    if !s.trace_state.is_empty() {
        put(&mut m, "traceState", json!(s.trace_state));
    }
    if !s.parent_span_id.is_empty() {
        put(&mut m, "parentSpanId", json!(hex(&s.parent_span_id)));
    }
    put_nonzero(&mut m, "flags", s.flags);
    put(&mut m, "name", json!(s.name));
    if s.kind != 0 {
        put(&mut m, "kind", json!(s.kind));
    }
    put(
        &mut m,
        "startTimeUnixNano",
        json!(s.start_time_unix_nano.to_string()),
    );
    put(
        &mut m,
        "endTimeUnixNano",
        json!(s.end_time_unix_nano.to_string()),
    );
    put_attributes(&mut m, &s.attributes);
    put_nonzero(&mut m, "droppedAttributesCount", s.dropped_attributes_count);
    if !s.events.is_empty() {
        let events: Vec<Json> = s.events.iter().map(event_json).collect();
        put(&mut m, "events", Json::Array(events));
    }
    put_nonzero(&mut m, "droppedEventsCount", s.dropped_events_count);
    if !s.links.is_empty() {
        let links: Vec<Json> = s.links.iter().map(link_json).collect();
        put(&mut m, "links", Json::Array(links));
    }
    put_nonzero(&mut m, "droppedLinksCount", s.dropped_links_count);
    if let Some(st) = &s.status {
        let mut o = Map::new();
        if !st.message.is_empty() {
            put(&mut o, "message", json!(st.message));
        }
        if st.code != 0 {
            put(&mut o, "code", json!(st.code));
        }
        put(&mut m, "status", Json::Object(o));
    }
    Json::Object(m)
}

fn event_json(e: &Event) -> Json {
    let mut m = Map::new();
    put(&mut m, "timeUnixNano", json!(e.time_unix_nano.to_string()));
    put(&mut m, "name", json!(e.name));
    put_attributes(&mut m, &e.attributes);
    put_nonzero(&mut m, "droppedAttributesCount", e.dropped_attributes_count);
    Json::Object(m)
}

fn link_json(l: &Link) -> Json {
    let mut m = Map::new();
    put(&mut m, "traceId", json!(hex(&l.trace_id)));
    put(&mut m, "spanId", json!(hex(&l.span_id)));
    if !l.trace_state.is_empty() {
        put(&mut m, "traceState", json!(l.trace_state));
    }
    put_attributes(&mut m, &l.attributes);
    put_nonzero(&mut m, "droppedAttributesCount", l.dropped_attributes_count);
    put_nonzero(&mut m, "flags", l.flags);
    Json::Object(m)
}

// ---- OTLP/JSON to protobuf: what an SDK would have sent for a file export's spans. ----

fn field<'a>(v: &'a Json, camel: &str, snake: &str) -> Option<&'a Json> {
    v.get(camel).or_else(|| v.get(snake))
}

fn list<'a>(v: &'a Json, camel: &str, snake: &str) -> &'a [Json] {
    field(v, camel, snake)
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

fn string(v: &Json, camel: &str, snake: &str) -> String {
    field(v, camel, snake)
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn uint(v: &Json, camel: &str, snake: &str) -> u64 {
    match field(v, camel, snake) {
        Some(Json::String(s)) => s.parse().unwrap_or(0),
        Some(n) => n.as_u64().unwrap_or(0),
        None => 0,
    }
}

fn id(v: &Json, camel: &str, snake: &str) -> Vec<u8> {
    let s = string(v, camel, snake);
    let bytes = s.as_bytes();
    let digit = |c: u8| (c as char).to_digit(16);
    let pairs = bytes.chunks(2).map(|p| match p {
        [a, b] => Some((digit(*a)? << 4 | digit(*b)?) as u8),
        _ => None,
    });
    pairs.collect::<Option<Vec<u8>>>().unwrap_or_default()
}

fn any_of_json(v: &Json) -> AnyValue {
    let get = |camel, snake| field(v, camel, snake);
    let value = if let Some(s) = get("stringValue", "string_value") {
        Some(Any::StringValue(s.as_str().unwrap_or_default().to_owned()))
    } else if let Some(b) = get("boolValue", "bool_value") {
        Some(Any::BoolValue(b.as_bool().unwrap_or(false)))
    } else if let Some(i) = get("intValue", "int_value") {
        let n = match i {
            Json::String(s) => s.parse().unwrap_or(0),
            n => n.as_i64().unwrap_or(0),
        };
        Some(Any::IntValue(n))
    } else if let Some(d) = get("doubleValue", "double_value") {
        let n = match d {
            Json::String(s) => match s.as_str() {
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                "NaN" => f64::NAN,
                s => s.parse().unwrap_or(0.0),
            },
            n => n.as_f64().unwrap_or(0.0),
        };
        Some(Any::DoubleValue(n))
    } else if let Some(a) = get("arrayValue", "array_value") {
        let values = list(a, "values", "values")
            .iter()
            .map(any_of_json)
            .collect();
        Some(Any::ArrayValue(ArrayValue { values }))
    } else if let Some(l) = get("kvlistValue", "kvlist_value") {
        let values = key_values(list(l, "values", "values"));
        Some(Any::KvlistValue(KeyValueList { values }))
    } else {
        get("bytesValue", "bytes_value")
            .map(|b| Any::BytesValue(unbase64(b.as_str().unwrap_or_default()).unwrap_or_default()))
    };
    AnyValue { value }
}

fn key_values(kvs: &[Json]) -> Vec<KeyValue> {
    kvs.iter()
        .map(|kv| KeyValue {
            key: string(kv, "key", "key"),
            value: kv.get("value").map(any_of_json),
            key_strindex: 0,
        })
        .collect()
}

fn span_of_json(s: &Json) -> Span {
    let status = field(s, "status", "status").map(|st| Status {
        message: string(st, "message", "message"),
        code: field(st, "code", "code")
            .and_then(Json::as_i64)
            .unwrap_or(0) as i32,
    });
    Span {
        trace_id: id(s, "traceId", "trace_id"),
        span_id: id(s, "spanId", "span_id"),
        trace_state: string(s, "traceState", "trace_state"),
        parent_span_id: id(s, "parentSpanId", "parent_span_id"),
        flags: uint(s, "flags", "flags") as u32,
        name: string(s, "name", "name"),
        kind: field(s, "kind", "kind").and_then(Json::as_i64).unwrap_or(0) as i32,
        start_time_unix_nano: uint(s, "startTimeUnixNano", "start_time_unix_nano"),
        end_time_unix_nano: uint(s, "endTimeUnixNano", "end_time_unix_nano"),
        attributes: key_values(list(s, "attributes", "attributes")),
        dropped_attributes_count: uint(s, "droppedAttributesCount", "dropped_attributes_count")
            as u32,
        events: list(s, "events", "events")
            .iter()
            .map(|e| Event {
                time_unix_nano: uint(e, "timeUnixNano", "time_unix_nano"),
                name: string(e, "name", "name"),
                attributes: key_values(list(e, "attributes", "attributes")),
                dropped_attributes_count: 0,
            })
            .collect(),
        dropped_events_count: uint(s, "droppedEventsCount", "dropped_events_count") as u32,
        links: list(s, "links", "links")
            .iter()
            .map(|l| Link {
                trace_id: id(l, "traceId", "trace_id"),
                span_id: id(l, "spanId", "span_id"),
                trace_state: string(l, "traceState", "trace_state"),
                attributes: key_values(list(l, "attributes", "attributes")),
                dropped_attributes_count: 0,
                flags: uint(l, "flags", "flags") as u32,
            })
            .collect(),
        dropped_links_count: uint(s, "droppedLinksCount", "dropped_links_count") as u32,
        status,
    }
}

/// The request an SDK would send for one OTLP/JSON `TracesData` document (values the
/// protobuf cannot carry, such as a malformed id, become defaults).
pub fn request_of_json(doc: &Json) -> ExportTraceServiceRequest {
    let resource_spans = list(doc, "resourceSpans", "resource_spans")
        .iter()
        .map(|rs| ResourceSpans {
            resource: field(rs, "resource", "resource").map(|r| Resource {
                attributes: key_values(list(r, "attributes", "attributes")),
                dropped_attributes_count: uint(
                    r,
                    "droppedAttributesCount",
                    "dropped_attributes_count",
                ) as u32,
                entity_refs: Vec::new(),
            }),
            scope_spans: list(rs, "scopeSpans", "scope_spans")
                .iter()
                .map(|ss| ScopeSpans {
                    scope: field(ss, "scope", "scope").map(|s| InstrumentationScope {
                        name: string(s, "name", "name"),
                        version: string(s, "version", "version"),
                        attributes: key_values(list(s, "attributes", "attributes")),
                        dropped_attributes_count: 0,
                    }),
                    spans: list(ss, "spans", "spans")
                        .iter()
                        .map(span_of_json)
                        .collect(),
                    schema_url: string(ss, "schemaUrl", "schema_url"),
                })
                .collect(),
            schema_url: string(rs, "schemaUrl", "schema_url"),
        })
        .collect();
    ExportTraceServiceRequest { resource_spans }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_and_base64_round_trip() {
        assert_eq!(hex(&[0, 0xab, 0x1f]), "00ab1f");
        assert_eq!(unhex::<3>("00AB1f"), Some([0, 0xab, 0x1f]));
        assert_eq!(unhex::<3>("00ab1"), None);
        assert_eq!(unhex::<1>("zz"), None);
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd", &[0xff, 0, 0x80]] {
            assert_eq!(unbase64(&base64(bytes)).as_deref(), Some(bytes));
        }
        assert_eq!(base64(b"ab"), "YWI=");
    }

    #[test]
    fn a_json_span_survives_protobuf_and_back() {
        let doc: Json = serde_json::from_str(
            r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"s"}}]},
            "scopeSpans":[{"scope":{"name":"x"},"spans":[{"traceId":"000000000000000000000000000000aa",
            "spanId":"00000000000000bb","parentSpanId":"00000000000000cc","name":"chat","kind":3,
            "startTimeUnixNano":"5","endTimeUnixNano":"7","attributes":[{"key":"n","value":{"intValue":"-3"}},
            {"key":"l","value":{"arrayValue":{"values":[{"boolValue":true},{"doubleValue":1.5}]}}}],
            "events":[{"timeUnixNano":"6","name":"e"}],"status":{"code":2,"message":"bad"}}]}]}]}"#,
        )
        .unwrap();
        let req = request_of_json(&doc);
        let rs = &req.resource_spans[0];
        let back = span_json(&rs.scope_spans[0].spans[0]);
        let original = &doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(&back, original);
        assert_eq!(
            resource_json(rs.resource.as_ref()),
            doc["resourceSpans"][0]["resource"]
        );
        assert_eq!(
            scope_json(rs.scope_spans[0].scope.as_ref()),
            doc["resourceSpans"][0]["scopeSpans"][0]["scope"]
        );
    }
}
