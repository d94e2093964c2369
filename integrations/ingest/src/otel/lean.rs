//! The span the mapping reads ([`super::map`], [`super::gaps`]): what [`Span`] says that the
//! mapping needs, in one text buffer and one sorted attribute list.
//!
//! A [`Span`] costs a dozen allocations or more (each id, each attribute key and string value,
//! the tree of the map), made on the parse thread and freed on the mapping thread; the profile
//! of a 200 MB export put a third of the CPU there. A [`LeanSpan`] keeps its ids, keys and
//! string values as ranges of one `String` and its attributes in one `Vec`, sorted by key
//! (the order and the "a later key replaces an earlier one" rule of the `BTreeMap` it
//! replaces); values other than strings (rare) stay `serde_json::Value`s. The fast path builds
//! it straight from the borrowed text of the line ([`super::fast::lean_document`]); every
//! other span (the walker's, the whole-file reader's) is converted with
//! [`LeanSpan::from_span`], so the mapping sees the same thing either way.

use super::span::{Attr as Json, Span};

/// A range of a [`LeanSpan`]'s text.
#[derive(Clone, Copy, Debug)]
pub struct Str {
    at: usize,
    len: usize,
}

/// An attribute value: a string in the text, or any other `AnyValue` as JSON.
#[derive(Clone, Debug)]
pub enum Val {
    Str(Str),
    Json(Json),
}

/// An attribute value as the mapping reads it: a string is always `Str`.
#[derive(Clone, Copy, Debug)]
pub enum Attr<'a> {
    Str(&'a str),
    Json(&'a Json),
}

impl<'a> Attr<'a> {
    /// The value as the `Value` [`Span::attrs`] holds for it.
    pub fn to_json(self) -> Json {
        match self {
            Attr::Str(s) => Json::String(s.to_owned()),
            Attr::Json(v) => v.clone(),
        }
    }

    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Attr::Str(s) => Some(s),
            Attr::Json(v) => v.as_str(),
        }
    }
}

/// One span event: its name, time and attributes (in the span's text).
#[derive(Clone, Debug)]
pub struct LeanEvent {
    name: Str,
    pub time: u64,
    attrs: Vec<(Str, Val)>,
}

/// One span, with what the mapping needs ([`Span`] less the span's name and the service).
#[derive(Clone, Debug)]
pub struct LeanSpan {
    text: String,
    trace: Str,
    id: Str,
    parent: Option<Str>,
    pub start: u64,
    pub end: u64,
    /// `status.code` is ERROR.
    pub error: bool,
    status_message: Option<Str>,
    attrs: Vec<(Str, Val)>,
    events: Vec<LeanEvent>,
    /// `gen_ai.operation.name` when a string, looked up once: the mapping asks for it of
    /// every span, many times.
    op: Option<Str>,
}

/// The attribute the mapping reads most.
const OP: &str = "gen_ai.operation.name";

/// Builds a [`LeanSpan`]: strings are appended to its text as they come.
pub struct Builder {
    text: String,
}

impl Builder {
    pub fn with_capacity(n: usize) -> Builder {
        Builder {
            text: String::with_capacity(n),
        }
    }

    pub fn str(&mut self, s: &str) -> Str {
        let at = self.text.len();
        self.text.push_str(s);
        Str { at, len: s.len() }
    }

    /// An id as the readers compare it: ASCII-lowercased.
    pub fn id(&mut self, s: &str) -> Str {
        let r = self.str(s);
        self.text[r.at..].make_ascii_lowercase();
        r
    }

    /// The span; `attrs` sorted by key, each key once ([`settle`]).
    pub fn finish(self, head: Head, attrs: Vec<(Str, Val)>, events: Vec<LeanEvent>) -> LeanSpan {
        let mut span = LeanSpan {
            text: self.text,
            trace: head.trace,
            id: head.id,
            parent: head.parent,
            start: head.start,
            end: head.end,
            error: head.error,
            status_message: head.status_message,
            attrs,
            events,
            op: None,
        };
        let op = span
            .attrs
            .binary_search_by(|(k, _)| span.s(*k).cmp(OP))
            .ok();
        if let Some((_, Val::Str(v))) = op.map(|i| &span.attrs[i]) {
            span.op = Some(*v);
        }
        span
    }

    pub fn event(&mut self, name: &str, time: u64, attrs: Vec<(Str, Val)>) -> LeanEvent {
        LeanEvent {
            name: self.str(name),
            time,
            attrs,
        }
    }
}

/// What a span has besides its attributes and events.
pub struct Head {
    pub trace: Str,
    pub id: Str,
    pub parent: Option<Str>,
    pub start: u64,
    pub end: u64,
    pub error: bool,
    pub status_message: Option<Str>,
}

/// Sorts attributes by key; of a key given more than once, the last stays (as a map's insert).
pub fn settle(text: &Builder, attrs: &mut Vec<(Str, Val)>) {
    let key = |s: &Str| &text.text[s.at..s.at + s.len];
    if attrs.windows(2).all(|w| key(&w[0].0) < key(&w[1].0)) {
        return;
    }
    // Stable: equal keys keep their order, the last given last.
    attrs.sort_by(|a, b| key(&a.0).cmp(key(&b.0)));
    let mut out: Vec<(Str, Val)> = Vec::with_capacity(attrs.len());
    for kv in attrs.drain(..) {
        match out.last_mut() {
            Some(last) if key(&last.0) == key(&kv.0) => *last = kv,
            _ => out.push(kv),
        }
    }
    *attrs = out;
}

impl LeanSpan {
    fn s(&self, r: Str) -> &str {
        &self.text[r.at..r.at + r.len]
    }

    pub fn trace(&self) -> &str {
        self.s(self.trace)
    }

    pub fn id(&self) -> &str {
        self.s(self.id)
    }

    pub fn parent(&self) -> Option<&str> {
        self.parent.map(|p| self.s(p))
    }

    pub fn status_message(&self) -> Option<&str> {
        self.status_message.map(|m| self.s(m))
    }

    /// A value as read: a string is always [`Attr::Str`].
    fn attr<'a>(&'a self, v: &'a Val) -> Attr<'a> {
        match v {
            Val::Str(s) => Attr::Str(self.s(*s)),
            Val::Json(Json::String(t)) => Attr::Str(t),
            Val::Json(v) => Attr::Json(v),
        }
    }

    fn lookup<'a>(&'a self, attrs: &'a [(Str, Val)], key: &str) -> Option<Attr<'a>> {
        let i = attrs.binary_search_by(|(k, _)| self.s(*k).cmp(key)).ok()?;
        Some(self.attr(&attrs[i].1))
    }

    /// Attribute `key`.
    pub fn get(&self, key: &str) -> Option<Attr<'_>> {
        self.lookup(&self.attrs, key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// A string attribute.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// `gen_ai.operation.name`, when a string.
    pub fn op(&self) -> Option<&str> {
        match self.op {
            Some(op) => Some(self.s(op)),
            None => self.str(OP),
        }
    }

    /// The keys and values of the attributes, in key order.
    pub fn attrs(&self) -> impl Iterator<Item = (&str, Attr<'_>)> {
        self.attrs.iter().map(|(k, v)| (self.s(*k), self.attr(v)))
    }

    /// The attribute `key` of the first event named `event`.
    pub fn event_attr(&self, event: &str, key: &str) -> Option<Attr<'_>> {
        let e = self.events.iter().find(|e| self.s(e.name) == event)?;
        self.lookup(&e.attrs, key)
    }

    /// The span the mapping reads of a reader's [`Span`].
    pub fn from_span(s: &Span) -> LeanSpan {
        let mut b = Builder::with_capacity(256);
        let attrs = |b: &mut Builder, m: &std::collections::BTreeMap<String, Json>| {
            m.iter()
                .map(|(k, v)| {
                    let k = b.str(k);
                    let v = match v {
                        Json::String(t) => Val::Str(b.str(t)),
                        v => Val::Json(v.clone()),
                    };
                    (k, v)
                })
                .collect::<Vec<_>>()
        };
        // Ids were lowercased by the reader; they are copied as they are.
        let head = Head {
            trace: b.str(&s.trace),
            id: b.str(&s.id),
            parent: s.parent.as_deref().map(|p| b.str(p)),
            start: s.start,
            end: s.end,
            error: s.error,
            status_message: s.status_message.as_deref().map(|m| b.str(m)),
        };
        let a = attrs(&mut b, &s.attrs);
        let events = s
            .events
            .iter()
            .map(|e| {
                let a = attrs(&mut b, &e.attrs);
                b.event(&e.name, e.time, a)
            })
            .collect();
        b.finish(head, a, events)
    }
}

/// Two spans are equal when the mapping reads the same of them, whatever their texts' layout.
impl PartialEq for LeanSpan {
    fn eq(&self, o: &LeanSpan) -> bool {
        type Attrs = Vec<(String, Json)>;
        let attrs = |s: &LeanSpan, a: &[(Str, Val)]| -> Attrs {
            a.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Val::Str(t) => Json::String(s.s(*t).to_owned()),
                        Val::Json(v) => v.clone(),
                    };
                    (s.s(*k).to_owned(), v)
                })
                .collect()
        };
        let events = |s: &LeanSpan| -> Vec<(String, u64, Attrs)> {
            s.events
                .iter()
                .map(|e| (s.s(e.name).to_owned(), e.time, attrs(s, &e.attrs)))
                .collect()
        };
        (
            self.trace(),
            self.id(),
            self.parent(),
            self.status_message(),
        ) == (o.trace(), o.id(), o.parent(), o.status_message())
            && (self.start, self.end, self.error) == (o.start, o.end, o.error)
            && attrs(self, &self.attrs) == attrs(o, &o.attrs)
            && events(self) == events(o)
    }
}
