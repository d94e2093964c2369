//! The MSC interchange format: JSON Lines, one event per line, in a valid
//! execution order.
//!
//! Keys: `lifeline` (string), `kind` (`act`, `send`, `recv`, `choice`), `msg` (message id,
//! string or non-negative integer; send and recv only), `to` (target lifeline; send only),
//! `set` (object of variables this event sets; values are JSON strings, numbers or booleans).
//! Blank lines are skipped. Lifelines and variables are numbered in order of first mention.
//! Errors name the line and the key; a receive without an earlier send is an error. Reading
//! a file says nothing about whether its guards make sense for it.

use super::msc::{Event, Kind, Msc, MscError};
use super::value::{render, Symbols, Value};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// An error at a line (1-based) of a JSON Lines file, naming the key when there is one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {message}", key.as_ref().map(|k| format!(", key `{k}`")).unwrap_or_default())]
pub struct JsonlError {
    /// 1-based line.
    pub line: usize,
    /// The offending key, if any.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

const KEYS: [&str; 5] = ["lifeline", "kind", "msg", "to", "set"];

#[derive(Default)]
struct Reader {
    lifelines: Vec<String>,
    vars: Vec<String>,
    msg_ids: BTreeMap<String, u64>,
    msg_names: Vec<String>,
    events: Vec<Event>,
    lines: Vec<usize>,
}

/// Parses a JSON Lines MSC; strings are interned into `syms`.
pub fn parse_msc(text: &str, syms: &mut Symbols) -> Result<Msc, JsonlError> {
    let mut r = Reader::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |key: Option<&str>, message: String| JsonlError {
            line: i + 1,
            key: key.map(str::to_owned),
            message,
        };
        let v: Json = serde_json::from_str(line).map_err(|e| err(None, e.to_string()))?;
        let obj = v
            .as_object()
            .ok_or_else(|| err(None, "expected a JSON object".into()))?;
        let ev = r.event(obj, syms).map_err(|(k, m)| err(Some(&k), m))?;
        r.events.push(ev);
        r.lines.push(i + 1);
    }
    let (lines, names) = (r.lines, r.msg_names);
    Msc::new(r.lifelines, r.vars, r.events).map_err(|e| msc_error(e, &lines, &names))
}

/// Restates a validation error with the file's line and the user's message id.
fn msc_error(e: MscError, lines: &[usize], names: &[String]) -> JsonlError {
    let name = |msg: u64| serde_json::Value::String(names[msg as usize].clone());
    let (event, key, message) = match e {
        MscError::OutOfRange { event, what, index } => {
            (event, "lifeline", format!("{what} {index}"))
        }
        MscError::SelfSend { event } => (event, "to", "a send to its own lifeline".into()),
        MscError::DuplicateSend { event, msg } => {
            (event, "msg", format!("message {} is sent twice", name(msg)))
        }
        MscError::BadReceive { event, msg, why } => {
            (event, "msg", format!("message {}: {why}", name(msg)))
        }
    };
    JsonlError {
        line: lines[event],
        key: Some(key.into()),
        message,
    }
}

type KeyError = (String, String);

fn key_err(key: &str, message: impl Into<String>) -> KeyError {
    (key.to_owned(), message.into())
}

impl Reader {
    fn event(&mut self, obj: &Map<String, Json>, syms: &mut Symbols) -> Result<Event, KeyError> {
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            let known = KEYS.join(", ");
            return Err(key_err(k, format!("unknown key (known: {known})")));
        }
        let lifeline = self.name(obj, "lifeline")?;
        let kind = match obj.get("kind").and_then(Json::as_str) {
            Some("act") => Kind::Act,
            Some("choice") => Kind::Choice,
            Some("send") => Kind::Send {
                msg: self.msg(obj)?,
                to: self.name(obj, "to")?,
            },
            Some("recv") => Kind::Recv {
                msg: self.msg(obj)?,
            },
            _ => {
                let want = "expected one of \"act\", \"send\", \"recv\", \"choice\"";
                return Err(key_err("kind", want));
            }
        };
        let is_send = matches!(kind, Kind::Send { .. });
        let is_msg = is_send || matches!(kind, Kind::Recv { .. });
        if !is_send && obj.contains_key("to") {
            return Err(key_err("to", "only a send has a target"));
        }
        if !is_msg && obj.contains_key("msg") {
            return Err(key_err("msg", "only a send or a receive has a message id"));
        }
        let set = self.set(obj, syms)?;
        Ok(Event {
            lifeline,
            kind,
            set,
        })
    }

    fn name(&mut self, obj: &Map<String, Json>, key: &'static str) -> Result<usize, KeyError> {
        let name = obj
            .get(key)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty());
        let name = name.ok_or_else(|| key_err(key, "expected a non-empty string"))?;
        Ok(index_of(&mut self.lifelines, name))
    }

    fn msg(&mut self, obj: &Map<String, Json>) -> Result<u64, KeyError> {
        let id = match obj.get("msg") {
            Some(Json::String(s)) => s.clone(),
            Some(Json::Number(n)) if n.as_u64().is_some() => n.to_string(),
            _ => {
                return Err(key_err(
                    "msg",
                    "expected a string or a non-negative integer",
                ))
            }
        };
        let next = self.msg_names.len() as u64;
        if !self.msg_ids.contains_key(&id) {
            self.msg_names.push(id.clone());
        }
        Ok(*self.msg_ids.entry(id).or_insert(next))
    }

    fn set(
        &mut self,
        obj: &Map<String, Json>,
        syms: &mut Symbols,
    ) -> Result<Vec<(usize, Value)>, KeyError> {
        let Some(set) = obj.get("set") else {
            return Ok(Vec::new());
        };
        let set = set
            .as_object()
            .ok_or_else(|| key_err("set", "expected an object"))?;
        let mut out = Vec::with_capacity(set.len());
        for (var, v) in set {
            let value = match v {
                Json::Bool(b) => Value::Bool(*b),
                Json::Number(n) => Value::Num(n.as_f64().ok_or_else(|| key_err("set", "number"))?),
                Json::String(s) => Value::Str(syms.intern(s)),
                _ => {
                    let want = format!("`{var}`: expected a string, number or boolean");
                    return Err(key_err("set", want));
                }
            };
            out.push((index_of(&mut self.vars, var), value));
        }
        Ok(out)
    }
}

fn index_of(names: &mut Vec<String>, name: &str) -> usize {
    names.iter().position(|n| n == name).unwrap_or_else(|| {
        names.push(name.to_owned());
        names.len() - 1
    })
}

/// Writes an MSC back as JSON Lines (message ids as integers).
pub fn write_msc(msc: &Msc, syms: &Symbols) -> String {
    let mut out = String::new();
    for ev in &msc.events {
        let mut obj = Map::new();
        obj.insert(
            "lifeline".into(),
            Json::from(msc.lifelines[ev.lifeline].clone()),
        );
        let kind = match ev.kind {
            Kind::Act => "act",
            Kind::Choice => "choice",
            Kind::Send { msg, to } => {
                obj.insert("msg".into(), Json::from(msg));
                obj.insert("to".into(), Json::from(msc.lifelines[to].clone()));
                "send"
            }
            Kind::Recv { msg } => {
                obj.insert("msg".into(), Json::from(msg));
                "recv"
            }
        };
        obj.insert("kind".into(), Json::from(kind));
        if !ev.set.is_empty() {
            let set: Map<String, Json> = ev
                .set
                .iter()
                .map(|&(v, x)| {
                    let text = render(x, syms);
                    (
                        msc.vars[v].clone(),
                        serde_json::from_str(&text).expect("rendered value"),
                    )
                })
                .collect();
            obj.insert("set".into(), Json::Object(set));
        }
        out.push_str(&Json::Object(obj).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_file_parses_and_round_trips() {
        let text = r#"{"lifeline":"Author","kind":"send","msg":"m1","to":"Reviewer","set":{"candidate":"c1"}}
{"lifeline":"Reviewer","kind":"recv","msg":"m1","set":{"status":"pending","n":2,"ok":true}}

{"lifeline":"Reviewer","kind":"choice"}"#;
        let mut syms = Symbols::new();
        let msc = parse_msc(text, &mut syms).unwrap();
        assert_eq!(msc.lifelines, vec!["Author", "Reviewer"]);
        assert_eq!(msc.vars, vec!["candidate", "n", "ok", "status"]);
        assert_eq!(msc.send_of, vec![None, Some(0), None]);
        let again = parse_msc(&write_msc(&msc, &syms), &mut syms).unwrap();
        assert_eq!(again, msc);
    }

    proptest::proptest! {
        /// Any finite number a file sets reads back as the same `f64` after writing: the
        /// writer prints the shortest decimal that names it, which only an exact parser
        /// (serde_json's `float_roundtrip`) is sure to read back to the same bits.
        #[test]
        fn numbers_round_trip_exactly(bits in proptest::num::u64::ANY) {
            let x = f64::from_bits(bits);
            proptest::prop_assume!(x.is_finite());
            let text = format!(
                "{{\"lifeline\":\"A\",\"kind\":\"act\",\"set\":{{\"x\":{}}}}}",
                serde_json::Value::from(x)
            );
            let mut syms = Symbols::new();
            let msc = parse_msc(&text, &mut syms).unwrap();
            proptest::prop_assert_eq!(&msc.events[0].set, &vec![(0, Value::Num(x))]);
            let again = parse_msc(&write_msc(&msc, &syms), &mut syms).unwrap();
            proptest::prop_assert_eq!(again, msc);
        }
    }

    #[test]
    fn errors_name_line_and_key() {
        let mut syms = Symbols::new();
        let cases = [
            (r#"{"lifeline":"A","kind":"recv","msg":1}"#, 1, "msg"),
            (
                "{\"lifeline\":\"A\",\"kind\":\"act\"}\n{\"lifeline\":\"A\",\"kind\":\"jump\"}",
                2,
                "kind",
            ),
            (r#"{"lifeline":"A","kind":"send","msg":1}"#, 1, "to"),
            (r#"{"lifeline":"A","kind":"act","set":{"x":[1]}}"#, 1, "set"),
            (
                r#"{"lifeline":"A","kind":"send","msg":1,"to":"A"}"#,
                1,
                "to",
            ),
            (r#"{"lifeline":3,"kind":"act"}"#, 1, "lifeline"),
        ];
        for (text, line, key) in cases {
            let err = parse_msc(text, &mut syms).unwrap_err();
            assert_eq!((err.line, err.key.as_deref()), (line, Some(key)), "{err}");
        }
        let err = parse_msc(r#"{"lifeline":"A","kind":"recv","msg":1}"#, &mut syms).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1, key `msg`: message \"1\": received before (or without) its send"
        );
    }
}
