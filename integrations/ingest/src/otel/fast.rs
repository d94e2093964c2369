//! The fast path of the OTLP/JSON reader: one document deserialized straight into [`Span`]s
//! (or the mapping's [`LeanSpan`]s), with no `serde_json::Value` tree of the document and no
//! JSON paths. Strings are borrowed from the text where they have no escape, so a span costs
//! the allocations of what it is built into and no more.
//!
//! It accepts a strict subset of what [`super::otlp::document`] (the walker over a parsed
//! `Value`) accepts, and yields the same spans for it; anything else (a type error, a field
//! given in both spellings, an `AnyValue` with no known field, a span that ends before it
//! starts) is `None`, and the caller walks the document the slow way, which either accepts it
//! or names the line and the JSON path of what is wrong. So the fast path decides nothing and
//! reports nothing: the walker stays the definition. The unit tests below hold the two to the
//! same spans on every example trace and on variants that exercise each rule.

use super::lean::{self, Builder, Head, LeanSpan, Val};
use super::span::{service_of, Span, SpanEvent};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// The document's resource spans, or `None` when the walker must decide.
fn parse<'a, R: Deserialize<'a>>(text: &'a str) -> Option<Vec<Obj<ResourceSpans<'a, R>>>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let doc = Obj::<Doc<R>>::deserialize(&mut de).ok()?;
    de.end().ok()?;
    doc.0.resource_spans
}

/// The spans of one document, or `None` when the walker must decide.
pub fn document(text: &str) -> Option<Vec<Span>> {
    let mut out = Vec::new();
    for rs in parse::<Json>(text)? {
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

/// The spans of one document as the mapping reads them ([`LeanSpan`]), appended to `out`; or
/// `false` (and `out` as it was) when the walker must decide.
pub fn lean_document(text: &str, out: &mut Vec<LeanSpan>) -> bool {
    let before = out.len();
    let ok = (|| {
        // The resource is not read (the mapping does not need the service), only checked.
        for rs in parse::<Valid>(text)? {
            for ss in rs.0.scope_spans.unwrap_or_default() {
                for s in ss.0.spans.unwrap_or_default() {
                    out.push(lean_span(s.0)?);
                }
            }
        }
        Some(())
    })()
    .is_some();
    if !ok {
        out.truncate(before);
    }
    ok
}

/// A non-empty id, lowercased.
fn owned_id(v: Option<Str<'_>>) -> Option<String> {
    let mut t = v?.0.into_owned();
    t.make_ascii_lowercase();
    (!t.is_empty()).then_some(t)
}

/// Whether `status` says ERROR, and its message if not empty.
fn status<'a>(status: Option<Obj<Status<'a>>>) -> (bool, Option<Cow<'a, str>>) {
    let status = status.map(|st| st.0);
    let error = status
        .as_ref()
        .and_then(|st| st.code.as_ref())
        .is_some_and(|c| c.0);
    let message = status
        .and_then(|st| st.message)
        .map(|m| m.0)
        .filter(|m| !m.is_empty());
    (error, message)
}

fn span(s: RawSpan<'_>, service: Option<String>) -> Option<Span> {
    let (start, end) = (s.start?.0, s.end?.0);
    if end < start {
        return None;
    }
    let (error, status_message) = status(s.status);
    Some(Span {
        trace: owned_id(s.trace)?,
        id: owned_id(s.span)?,
        parent: owned_id(s.parent),
        name: s.name.map(|n| n.0.into_owned()).unwrap_or_default(),
        start,
        end,
        attrs: attributes(s.attributes)?,
        error,
        status_message: status_message.map(Cow::into_owned),
        events: s
            .events
            .unwrap_or_default()
            .into_iter()
            .map(|e| {
                let e = e.0;
                Some(SpanEvent {
                    name: e.name.map(|n| n.0.into_owned()).unwrap_or_default(),
                    time: e.time.map_or(0, |t| t.0),
                    attrs: attributes(e.attributes)?,
                })
            })
            .collect::<Option<_>>()?,
        service,
    })
}

fn attributes(kvs: Option<Vec<Obj<KeyValue<'_>>>>) -> Option<BTreeMap<String, Json>> {
    let mut attrs = BTreeMap::new();
    for kv in kvs.unwrap_or_default() {
        let kv = kv.0;
        attrs.insert(
            kv.key.0.into_owned(),
            kv.value.map_or(Some(Json::Null), |v| v.json())?,
        );
    }
    Some(attrs)
}

/// The bytes of the strings a [`LeanSpan`] keeps of these attributes (a lower bound).
fn attrs_len(kvs: &Option<Vec<Obj<KeyValue<'_>>>>) -> usize {
    kvs.iter()
        .flatten()
        .map(|kv| {
            let v = kv.0.value.as_ref().and_then(|v| v.string.as_ref());
            kv.0.key.0.len() + v.map_or(0, |v| v.0.len())
        })
        .sum()
}

fn lean_span(s: RawSpan<'_>) -> Option<LeanSpan> {
    let (start, end) = (s.start?.0, s.end?.0);
    if end < start {
        return None;
    }
    let id = |b: &mut Builder, v: &Option<Str<'_>>| {
        v.as_ref().filter(|t| !t.0.is_empty()).map(|t| b.id(&t.0))
    };
    let (error, status_message) = status(s.status);
    let len = [&s.trace, &s.span, &s.parent]
        .iter()
        .map(|v| v.as_ref().map_or(0, |t| t.0.len()))
        .sum::<usize>()
        + status_message.as_ref().map_or(0, |m| m.len())
        + attrs_len(&s.attributes);
    let mut b = Builder::with_capacity(len);
    let head = Head {
        trace: id(&mut b, &s.trace)?,
        id: id(&mut b, &s.span)?,
        parent: id(&mut b, &s.parent),
        start,
        end,
        error,
        status_message: status_message.map(|m| b.str(&m)),
    };
    let attrs = lean_attributes(&mut b, s.attributes)?;
    let events = s
        .events
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            let e = e.0;
            let attrs = lean_attributes(&mut b, e.attributes)?;
            let name = e.name.as_ref().map_or("", |n| &n.0);
            Some(b.event(name, e.time.map_or(0, |t| t.0), attrs))
        })
        .collect::<Option<_>>()?;
    Some(b.finish(head, attrs, events))
}

fn lean_attributes(
    b: &mut Builder,
    kvs: Option<Vec<Obj<KeyValue<'_>>>>,
) -> Option<Vec<(lean::Str, Val)>> {
    let kvs = kvs.unwrap_or_default();
    let mut attrs = Vec::with_capacity(kvs.len());
    for kv in kvs {
        let kv = kv.0;
        let key = b.str(&kv.key.0);
        let value = match kv.value {
            Some(v) => v.lean(b)?,
            None => Val::Json(Json::Null),
        };
        attrs.push((key, value));
    }
    lean::settle(b, &mut attrs);
    Some(attrs)
}

/// A string, borrowed from the text unless it has an escape.
struct Str<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Any JSON value, read as a `serde_json::Value` is (so refused where that is refused, a
/// number out of range for one) but not kept; `true` for an array.
struct Valid(bool);

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyVisitor(|s| matches!(s, Scalar::Array)))
    }
}

/// Whether `text` is a JSON array (`serde_json::from_str::<Value>` gives an array), without
/// building it.
pub fn is_array_text(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    matches!(Valid::deserialize(&mut de), Ok(Valid(true))) && de.end().is_ok()
}

/// `status.code`: whether it is ERROR (the number 2 or its enum name); any other JSON value
/// is not.
struct Code(bool);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fn error(s: Scalar<'_>) -> bool {
            match s {
                Scalar::U64(n) => n == 2,
                Scalar::Str(s) => s == "STATUS_CODE_ERROR",
                Scalar::Array | Scalar::Other => false,
            }
        }
        d.deserialize_any(AnyVisitor(error)).map(|v| Code(v.0))
    }
}

/// A value as [`AnyVisitor`] shows it to its test.
enum Scalar<'s> {
    U64(u64),
    Str(&'s str),
    Array,
    Other,
}

/// Walks any JSON value as `serde_json::Value` would read it; the value is what its function
/// says of it (the items of an array and the entries of an object are walked as [`Valid`]).
struct AnyVisitor(fn(Scalar<'_>) -> bool);

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Valid;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Other)))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Other)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::U64(v))))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Other)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Str(v))))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Other)))
    }
    fn visit_none<E: de::Error>(self) -> Result<Valid, E> {
        Ok(Valid(self.0(Scalar::Other)))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Valid, D::Error> {
        Valid::deserialize(d)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid(self.0(Scalar::Array)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_key::<Valid>()?.is_some() {
            map.next_value::<Valid>()?;
        }
        Ok(Valid(self.0(Scalar::Other)))
    }
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
struct Doc<'a, R> {
    #[serde(rename = "resourceSpans", alias = "resource_spans", borrow)]
    resource_spans: Option<Vec<Obj<ResourceSpans<'a, R>>>>,
}

/// `R`: how the resource is read: as JSON for [`service_of`] (as the walker reads it:
/// leniently, for `service.name` only), or [`Valid`] when the service is not wanted.
#[derive(Deserialize)]
struct ResourceSpans<'a, R> {
    resource: Option<R>,
    #[serde(rename = "scopeSpans", alias = "scope_spans", borrow)]
    scope_spans: Option<Vec<Obj<ScopeSpans<'a>>>>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(borrow)]
    spans: Option<Vec<Obj<RawSpan<'a>>>>,
}

#[derive(Deserialize)]
struct RawSpan<'a> {
    #[serde(rename = "traceId", alias = "trace_id", borrow)]
    trace: Option<Str<'a>>,
    #[serde(rename = "spanId", alias = "span_id", borrow)]
    span: Option<Str<'a>>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", borrow)]
    parent: Option<Str<'a>>,
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano")]
    start: Option<U64>,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano")]
    end: Option<U64>,
    #[serde(borrow)]
    attributes: Option<Vec<Obj<KeyValue<'a>>>>,
    #[serde(borrow)]
    status: Option<Obj<Status<'a>>>,
    #[serde(borrow)]
    events: Option<Vec<Obj<RawEvent<'a>>>>,
}

#[derive(Deserialize)]
struct Status<'a> {
    code: Option<Code>,
    #[serde(borrow)]
    message: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow)]
    name: Option<Str<'a>>,
    #[serde(rename = "timeUnixNano", alias = "time_unix_nano")]
    time: Option<U64>,
    #[serde(borrow)]
    attributes: Option<Vec<Obj<KeyValue<'a>>>>,
}

#[derive(Deserialize)]
struct KeyValue<'a> {
    #[serde(borrow)]
    key: Str<'a>,
    #[serde(borrow)]
    value: Option<AnyValue<'a>>,
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
struct AnyValue<'a> {
    keys: usize,
    string: Option<Str<'a>>,
    boolean: Option<bool>,
    int: Option<i64>,
    /// The other fields, boxed: the profile found the copies of a large `AnyValue` (one per
    /// attribute, moved as serde builds the lists) to be a sixth of the parse thread's time.
    rare: Option<Box<Rare<'a>>>,
}

#[derive(Default)]
struct Rare<'a> {
    double: Option<Json>,
    array: Option<Vec<AnyValue<'a>>>,
    kvlist: Option<Vec<Obj<KeyValue<'a>>>>,
    bytes: Option<Str<'a>>,
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

impl<'de: 'a, 'a> Deserialize<'de> for AnyValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an AnyValue object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyValue<'de>, A::Error> {
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
                        AnyKey::Double => v.rare().double = map.next_value()?,
                        AnyKey::Array => {
                            let a: Option<Obj<Values<AnyValue<'de>>>> = map.next_value()?;
                            v.rare().array = a.map(|a| a.0.values.unwrap_or_default());
                        }
                        AnyKey::Kvlist => {
                            let a: Option<Obj<Values<Obj<KeyValue<'de>>>>> = map.next_value()?;
                            v.rare().kvlist = a.map(|a| a.0.values.unwrap_or_default());
                        }
                        AnyKey::Bytes => v.rare().bytes = map.next_value()?,
                        AnyKey::Other => unreachable!("handled above"),
                    }
                }
                Ok(v)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> AnyValue<'a> {
    fn rare(&mut self) -> &mut Rare<'a> {
        self.rare.get_or_insert_with(Box::default)
    }

    /// The value as a [`LeanSpan`] keeps it: a string in its text, else as [`AnyValue::json`].
    fn lean(self, b: &mut Builder) -> Option<Val> {
        if self.keys > 0 {
            if let Some(s) = &self.string {
                return Some(Val::Str(b.str(&s.0)));
            }
        }
        Some(match self.json()? {
            Json::String(t) => Val::Str(b.str(&t)),
            v => Val::Json(v),
        })
    }

    /// The value as the walker gives it: the first known field in its order of precedence.
    fn json(self) -> Option<Json> {
        if self.keys == 0 {
            return Some(Json::Null);
        }
        if let Some(s) = self.string {
            return Some(Json::String(s.0.into_owned()));
        }
        if let Some(b) = self.boolean {
            return Some(Json::Bool(b));
        }
        if let Some(i) = self.int {
            return Some(Json::from(i));
        }
        let rare = *self.rare?;
        if let Some(d) = rare.double {
            return matches!(d, Json::Number(_) | Json::String(_)).then_some(d);
        }
        if let Some(items) = rare.array {
            return items
                .into_iter()
                .map(AnyValue::json)
                .collect::<Option<_>>()
                .map(Json::Array);
        }
        if let Some(pairs) = rare.kvlist {
            let mut m = Map::new();
            for kv in pairs {
                let kv = kv.0;
                m.insert(
                    kv.key.0.into_owned(),
                    kv.value.map_or(Some(Json::Null), |v| v.json())?,
                );
            }
            return Some(Json::Object(m));
        }
        rare.bytes.map(|b| Json::String(b.0.into_owned()))
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

    /// The fast path yields the walker's spans, or leaves the document to it; so does its
    /// lean form, which reads as the walker's spans converted.
    fn agree(text: &str) -> bool {
        let fast = document(text);
        let mut lean = vec![LeanSpan::from_span(&walked(ONE).unwrap()[0])];
        let lean_ok = lean_document(text, &mut lean);
        assert_eq!(fast.is_some(), lean_ok, "{text}");
        if let Some(f) = &fast {
            assert_eq!(Ok(f), walked(text).as_ref(), "{text}");
            let converted: Vec<LeanSpan> = walked(ONE)
                .unwrap()
                .iter()
                .chain(f)
                .map(LeanSpan::from_span)
                .collect();
            assert_eq!(lean, converted, "{text}");
        } else {
            assert_eq!(lean.len(), 1, "{text}");
        }
        fast.is_some()
    }

    /// A span already in the output, which the lean path appends after (or leaves alone).
    const ONE: &str = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"EE","spanId":"1",
        "startTimeUnixNano":1,"endTimeUnixNano":2}]}]}]}"#;

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
    fn an_array_text_is_what_serde_json_reads_as_an_array() {
        for text in [
            " [ ] ",
            "[1,{\"a\":[2,null]},\"x\\u0041\"]",
            "[1] x",
            "[1e400]",
            "[1,]",
            "{\"a\":[1]}",
            "\"[1]\"",
            "",
            "[\"\\ud800\"]",
        ] {
            let value = matches!(serde_json::from_str::<Json>(text), Ok(Json::Array(_)));
            assert_eq!(is_array_text(text), value, "{text}");
        }
        assert!(is_array_text("[[1]]") && !is_array_text("[1e400]"));
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
            r#","parentSpanId":"F\u0046","attributes":[{"key":"z","value":{"stringValue":"q\"1"}},{"key":"b\u0061","value":{"bytesValue":"AA=="}},{"key":"z","value":{"stringValue":"2"}},{"key":"ba","value":{"boolValue":false}}]"#,
            r#","status":{"code":2.0,"message":null}"#,
            r#","status":{"code":{"a":[2]}}"#,
            r#","status":{"code":"STATUS_CODE_ERROR","message":"m\n"},"events":[{"name":"e\t","attributes":[{"key":"y","value":{"stringValue":"1"}},{"key":"x","value":{"doubleValue":1.5}}]}]"#,
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
        assert!(!agree(r#"{"resourceSpans":[{"resource":{"x":[1e400]}}]}"#));
        assert!(!agree(&span(r#","status":{"code":[1e400]}"#)));
        assert!(!agree(r#"["resourceSpans"]"#));
        assert!(agree(
            r#"{"resource_spans":[{"scope_spans":[{"spans":[]}]}],"x":1}"#
        ));
    }
}
