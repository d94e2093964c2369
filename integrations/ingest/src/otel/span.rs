//! The span the OTLP/JSON readers produce and the mapping consumes, below both readers: the
//! walker ([`super::otlp`]) and the fast path ([`super::fast`]) build the same [`Span`]s, and
//! the walker falls back on neither type nor helper of the fast path's.

use serde_json::Value as Json;
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

/// `service.name` of a resource, when it is a string. The resource is otherwise not read, so
/// a resource of another shape is passed over rather than refused.
pub fn service_of(resource: Option<&Json>) -> Option<String> {
    let attrs = resource
        .and_then(|r| r.get("attributes"))
        .and_then(Json::as_array);
    // The last one wins, as in [`attributes`].
    let last = attrs
        .into_iter()
        .flatten()
        .rev()
        .find(|kv| kv.get("key").and_then(Json::as_str) == Some("service.name"));
    let name = last.and_then(|kv| {
        let v = kv.get("value")?;
        v.get("stringValue")
            .or_else(|| v.get("string_value"))?
            .as_str()
    });
    name.map(str::to_owned)
}
