//! The fast path of the OTLP/JSON reader: one document deserialized straight into [`Span`]s,
//! with no `serde_json::Value` tree of the document and no JSON paths.
//!
//! It accepts a strict subset of what [`super::otlp::document`] (the walker over a parsed
//! `Value`) accepts, and yields the same spans for it; anything else (a type error, a field
//! given in both spellings, an `AnyValue` with no known field, a span that ends before it
//! starts) is `None`, and the caller walks the document the slow way, which either accepts it
//! or names the line and the JSON path of what is wrong. So the fast path decides nothing and
//! reports nothing: the walker stays the definition. The unit tests below hold the two to the
//! same spans on every example trace and on variants that exercise each rule.

use super::span::{service_of, Span, SpanEvent};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::fmt;

/// The spans of one document, or `None` when the walker must decide.
pub fn document(text: &str) -> Option<Vec<Span>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let doc = Obj::<Doc>::deserialize(&mut de).ok()?;
    de.end().ok()?;
    let mut out = Vec::new();
    for rs in doc.0.resource_spans? {
        let rs = rs.0;
        let service = service_of(rs.resource.as_ref());
        for ss in rs.scope_spans.unwrap_or_default() {
            for s in ss.0.spans.unwrap_or_default() {
                out.push(span(s.0, service.clone())?);
            }
        }
    }
    Some(out)
}

fn span(s: RawSpan, service: Option<String>) -> Option<Span> {
    let id = |v: Option<String>| {
        let mut t = v?;
        t.make_ascii_lowercase();
        (!t.is_empty()).then_some(t)
    };
    let (start, end) = (s.start?.0, s.end?.0);
    if end < start {
        return None;
    }
    let status = s.status.map(|st| st.0);
    let error = status
        .as_ref()
        .and_then(|st| st.code.as_ref())
        .is_some_and(|c| {
            matches!(c, Json::Number(n) if n.as_u64() == Some(2))
                || c.as_str() == Some("STATUS_CODE_ERROR")
        });
    let status_message = status.and_then(|st| st.message).filter(|m| !m.is_empty());
    Some(Span {
        trace: id(s.trace)?,
        id: id(s.span)?,
        parent: id(s.parent),
        name: s.name.unwrap_or_default(),
        start,
        end,
        attrs: attributes(s.attributes)?,
        error,
        status_message,
        events: s
            .events
            .unwrap_or_default()
            .into_iter()
            .map(|e| {
                let e = e.0;
                Some(SpanEvent {
                    name: e.name.unwrap_or_default(),
                    time: e.time.map_or(0, |t| t.0),
                    attrs: attributes(e.attributes)?,
                })
            })
            .collect::<Option<_>>()?,
        service,
    })
}

fn attributes(kvs: Option<Vec<Obj<KeyValue>>>) -> Option<BTreeMap<String, Json>> {
    let mut attrs = BTreeMap::new();
    for kv in kvs.unwrap_or_default() {
        let kv = kv.0;
        attrs.insert(kv.key, kv.value.map_or(Some(Json::Null), |v| v.json())?);
    }
    Some(attrs)
}

/// A JSON object only: serde's derived structs also take arrays (positional fields), which the
/// walker refuses.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Doc {
    #[serde(rename = "resourceSpans", alias = "resource_spans")]
    resource_spans: Option<Vec<Obj<ResourceSpans>>>,
}

#[derive(Deserialize)]
struct ResourceSpans {
    /// Read as the walker reads it ([`service_of`]): leniently, for `service.name` only.
    resource: Option<Json>,
    #[serde(rename = "scopeSpans", alias = "scope_spans")]
    scope_spans: Option<Vec<Obj<ScopeSpans>>>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    spans: Option<Vec<Obj<RawSpan>>>,
}

#[derive(Deserialize)]
struct RawSpan {
    #[serde(rename = "traceId", alias = "trace_id")]
    trace: Option<String>,
    #[serde(rename = "spanId", alias = "span_id")]
    span: Option<String>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id")]
    parent: Option<String>,
    name: Option<String>,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano")]
    start: Option<U64>,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano")]
    end: Option<U64>,
    attributes: Option<Vec<Obj<KeyValue>>>,
    status: Option<Obj<Status>>,
    events: Option<Vec<Obj<RawEvent>>>,
}

#[derive(Deserialize)]
struct Status {
    code: Option<Json>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct RawEvent {
    name: Option<String>,
    #[serde(rename = "timeUnixNano", alias = "time_unix_nano")]
    time: Option<U64>,
    attributes: Option<Vec<Obj<KeyValue>>>,
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    value: Option<AnyValue>,
}

/// An unsigned 64-bit integer: a JSON number or a decimal string.
struct U64(u64);

impl<'de> Deserialize<'de> for U64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = U64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an unsigned 64-bit integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<U64, E> {
                Ok(U64(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<U64, E> {
                u64::try_from(v).map(U64).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<U64, E> {
                v.parse().map(U64).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A signed 64-bit integer: a JSON number or a decimal string.
struct I64(i64);

impl<'de> Deserialize<'de> for I64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = I64;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a 64-bit integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<I64, E> {
                i64::try_from(v).map(I64).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<I64, E> {
                Ok(I64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<I64, E> {
                v.parse().map(I64).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `AnyValue`: its known fields as given (each at most once, in either spelling).
#[derive(Default)]
struct AnyValue {
    keys: usize,
    string: Option<String>,
    boolean: Option<bool>,
    int: Option<i64>,
    double: Option<Json>,
    array: Option<Vec<AnyValue>>,
    kvlist: Option<Vec<Obj<KeyValue>>>,
    bytes: Option<String>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(field_identifier)]
enum AnyKey {
    #[serde(rename = "stringValue", alias = "string_value")]
    String,
    #[serde(rename = "boolValue", alias = "bool_value")]
    Bool,
    #[serde(rename = "intValue", alias = "int_value")]
    Int,
    #[serde(rename = "doubleValue", alias = "double_value")]
    Double,
    #[serde(rename = "arrayValue", alias = "array_value")]
    Array,
    #[serde(rename = "kvlistValue", alias = "kvlist_value")]
    Kvlist,
    #[serde(rename = "bytesValue", alias = "bytes_value")]
    Bytes,
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Values<T> {
    values: Option<Vec<T>>,
}

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an AnyValue object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyValue, A::Error> {
                let mut v = AnyValue::default();
                let mut seen = [false; 7];
                while let Some(k) = map.next_key::<AnyKey>()? {
                    v.keys += 1;
                    let slot = match k {
                        AnyKey::Other => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                        k => k as usize,
                    };
                    if std::mem::replace(&mut seen[slot], true) {
                        return Err(de::Error::custom("a field given twice"));
                    }
                    match k {
                        AnyKey::String => v.string = map.next_value()?,
                        AnyKey::Bool => v.boolean = map.next_value()?,
                        AnyKey::Int => v.int = map.next_value::<Option<I64>>()?.map(|i| i.0),
                        AnyKey::Double => v.double = map.next_value()?,
                        AnyKey::Array => {
                            let a: Option<Obj<Values<AnyValue>>> = map.next_value()?;
                            v.array = a.map(|a| a.0.values.unwrap_or_default());
                        }
                        AnyKey::Kvlist => {
                            let a: Option<Obj<Values<Obj<KeyValue>>>> = map.next_value()?;
                            v.kvlist = a.map(|a| a.0.values.unwrap_or_default());
                        }
                        AnyKey::Bytes => v.bytes = map.next_value()?,
                        AnyKey::Other => unreachable!("handled above"),
                    }
                }
                Ok(v)
            }
        }
        d.deserialize_map(V)
    }
}

impl AnyValue {
    /// The value as the walker gives it: the first known field in its order of precedence.
    fn json(self) -> Option<Json> {
        if self.keys == 0 {
            return Some(Json::Null);
        }
        if let Some(s) = self.string {
            return Some(Json::String(s));
        }
        if let Some(b) = self.boolean {
            return Some(Json::Bool(b));
        }
        if let Some(i) = self.int {
            return Some(Json::from(i));
        }
        if let Some(d) = self.double {
            return matches!(d, Json::Number(_) | Json::String(_)).then_some(d);
        }
        if let Some(items) = self.array {
            return items
                .into_iter()
                .map(AnyValue::json)
                .collect::<Option<_>>()
                .map(Json::Array);
        }
        if let Some(pairs) = self.kvlist {
            let mut m = Map::new();
            for kv in pairs {
                let kv = kv.0;
                m.insert(kv.key, kv.value.map_or(Some(Json::Null), |v| v.json())?);
            }
            return Some(Json::Object(m));
        }
        self.bytes.map(Json::String)
    }
}

#[cfg(test)]
mod tests {
    use super::super::otlp;
    use super::*;

    /// The walker's spans for a one-line document.
    fn walked(text: &str) -> Result<Vec<Span>, String> {
        let v: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        otlp::document(&v, "t.json", 1, &mut out).map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The fast path yields the walker's spans, or leaves the document to it.
    fn agree(text: &str) -> bool {
        let fast = document(text);
        if let Some(f) = &fast {
            assert_eq!(Ok(f), walked(text).as_ref(), "{text}");
        }
        fast.is_some()
    }

    #[test]
    fn the_example_traces_take_the_fast_path_with_the_walkers_spans() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/traces/otel");
        let mut n = 0;
        for sub in ["", "/gaps"] {
            for e in std::fs::read_dir(format!("{dir}{sub}")).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "json") {
                    for line in std::fs::read_to_string(&p).unwrap().lines() {
                        if !line.trim().is_empty() && walked(line).is_ok() {
                            assert!(agree(line), "{}: {line}", p.display());
                            n += 1;
                        }
                    }
                }
            }
        }
        assert!(n >= 12, "{n} documents");
    }

    #[test]
    fn what_the_walker_decides_is_left_to_it() {
        let span = |body: &str| {
            format!(
                r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name",
                "value":{{"stringValue":"svc"}}}}]}},"scopeSpans":[{{"spans":[{{"traceId":"AB",
                "spanId":"01","startTimeUnixNano":"10","endTimeUnixNano":20{body}}}]}}]}}]}}"#
            )
            .replace('\n', "")
        };
        let fast = [
            "",
            r#","status":{"code":2,"message":"boom"}"#,
            r#","status":{"code":[1],"message":""}"#,
            r#","attributes":[{"key":"a","value":{}},{"key":"b"},{"key":"a","value":{"intValue":-3}}]"#,
            r#","attributes":[{"key":"d","value":{"doubleValue":3}},{"key":"e","value":{"doubleValue":"NaN"}}]"#,
            r#","attributes":[{"key":"k","value":{"kvlistValue":{"values":[{"key":"i","value":{"arrayValue":{}}}]}}}]"#,
            r#","events":[{"name":"e","timeUnixNano":"5","attributes":[{"key":"x","value":{"boolValue":true}}]},{}]"#,
            r#","parentSpanId":"","name":"n","kind":"SPAN_KIND_CLIENT","links":[{"traceId":"cd"}]"#,
        ];
        for body in fast {
            assert!(agree(&span(body)), "{body}");
        }
        let slow = [
            r#","attributes":[{"key":"a","value":{"x":1}}]"#,
            r#","attributes":[{"key":"s","value":{"stringValue":"x","intValue":"oops"}}]"#,
            r#","attributes":[{"key":"a","value":{"stringValue":null}}]"#,
            r#","attributes":[{"key":"a","value":{"intValue":1.5}}]"#,
            r#","attributes":[{"key":"a","value":{"intValue":"9223372036854775808"}}]"#,
            r#","attributes":[{"key":"a","value":{"doubleValue":true}}]"#,
            r#","attributes":[{"key":"a","value":{"stringValue":"x","string_value":"y"}}]"#,
            r#","attributes":[{"value":{"stringValue":"x"}}]"#,
            r#","attributes":[["a"]]"#,
            r#","status":"ok""#,
            r#","status":{"message":3}"#,
            r#","events":[{"timeUnixNano":-1}]"#,
            r#","trace_id":"cd""#,
            r#","endTimeUnixNano":5"#,
        ];
        for body in slow {
            assert!(!agree(&span(body)), "{body}");
        }
        assert!(!agree(&span("").replace("\"traceId\":\"AB\",", "")));
        assert!(!agree(&span("").replace("\"10\"", "\"+1x\"")));
        assert!(!agree(r#"{"resourceSpans":null}"#));
        assert!(!agree(r#"["resourceSpans"]"#));
        assert!(agree(
            r#"{"resource_spans":[{"scope_spans":[{"spans":[]}]}],"x":1}"#
        ));
    }
}
