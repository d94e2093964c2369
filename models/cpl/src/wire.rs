//! Message encodings: a compact binary form for the wire and JSON for comparison and debugging.
//!
//! Binary (version 1): a version byte; LEB128 varints for the number of lifelines,
//! subformulas and selected pairs (a receiver built for another program rejects the message);
//! the clock as varints; then, only for lifelines with a non-zero clock entry, the row packed
//! eight subformulas per byte (least significant bit first) followed by that lifeline's
//! selected values. A value is a tag byte (0 undefined, 1 false, 2 true, 3 integer as a zigzag
//! varint, 4 float as 8 little-endian bytes, 5 string as a varint length and UTF-8 bytes).
//! Rows of invisible lifelines are never read by the monitor, so they are not sent and decode
//! as false. JSON keys rows by lifeline name and lists subformula values by index.
//! The round-trip tests prove decode ∘ encode = id on messages a monitor can produce; they do
//! not prove the binary form is minimal.

use super::compile::Program;
use super::monitor::Message;
use super::value::{Symbols, Value};
use serde_json::{json, Map};

const VERSION: u8 = 1;

/// Why bytes or JSON do not decode into a message for this program.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The input ended early.
    #[error("message truncated at byte {0}")]
    Truncated(usize),
    /// The message belongs to another program or version.
    #[error("message shape mismatch: {0}")]
    Shape(String),
    /// A malformed field.
    #[error("malformed message: {0}")]
    Malformed(String),
}

fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push((x as u8) | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, WireError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or(WireError::Truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            x |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(WireError::Malformed(format!(
            "varint too long at byte {}",
            self.pos
        )))
    }

    fn take(&mut self, n: usize) -> Result<&[u8], WireError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(WireError::Truncated(self.bytes.len()))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
}

fn put_value(out: &mut Vec<u8>, v: Option<Value>, syms: &Symbols) {
    match v {
        None => out.push(0),
        Some(Value::Bool(b)) => out.push(1 + u8::from(b)),
        Some(Value::Num(x)) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
            out.push(3);
            let i = x as i64;
            put_varint(out, ((i << 1) ^ (i >> 63)) as u64);
        }
        Some(Value::Num(x)) => {
            out.push(4);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Some(Value::Str(s)) => {
            out.push(5);
            let text = syms.text(s).as_bytes();
            put_varint(out, text.len() as u64);
            out.extend_from_slice(text);
        }
    }
}

fn get_value(r: &mut Reader<'_>, syms: &mut Symbols) -> Result<Option<Value>, WireError> {
    Ok(Some(match r.byte()? {
        0 => return Ok(None),
        1 => Value::Bool(false),
        2 => Value::Bool(true),
        3 => {
            let z = r.varint()?;
            Value::Num(((z >> 1) as i64 ^ -((z & 1) as i64)) as f64)
        }
        4 => Value::Num(f64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"))),
        5 => {
            let n = usize::try_from(r.varint()?).map_err(|_| WireError::Truncated(r.pos))?;
            let text = std::str::from_utf8(r.take(n)?)
                .map_err(|_| WireError::Malformed("string is not UTF-8".into()))?;
            // The common case (a known string) does not allocate.
            Value::Str(syms.get(text).unwrap_or_else(|| syms.intern(text)))
        }
        t => return Err(WireError::Malformed(format!("value tag {t}"))),
    }))
}

/// Appends the binary encoding of `msg` to `out` (cleared first; its capacity is reused).
pub fn encode(msg: &Message, prog: &Program, syms: &Symbols, out: &mut Vec<u8>) {
    let n = prog.len();
    out.clear();
    out.push(VERSION);
    for x in [msg.vc.len(), n, msg.vars.len()] {
        put_varint(out, x as u64);
    }
    for &c in &msg.vc {
        put_varint(out, u64::from(c));
    }
    for (b, &c) in msg.vc.iter().enumerate() {
        if c == 0 {
            continue;
        }
        for chunk in msg.rows[b * n..(b + 1) * n].chunks(8) {
            let byte = chunk
                .iter()
                .enumerate()
                .fold(0u8, |acc, (i, &v)| acc | (u8::from(v) << i));
            out.push(byte);
        }
        for slot in prog.selected_of[b].clone() {
            put_value(out, msg.vars[slot], syms);
        }
    }
}

/// Decodes a binary message for `prog` into `out` (reusing its buffers).
pub fn decode(
    bytes: &[u8],
    prog: &Program,
    syms: &mut Symbols,
    out: &mut Message,
) -> Result<(), WireError> {
    let mut r = Reader { bytes, pos: 0 };
    let (l, n, s) = (prog.lifelines.len(), prog.len(), prog.selected.len());
    let version = r.byte()?;
    let shape = [r.varint()?, r.varint()?, r.varint()?];
    if version != VERSION || shape != [l as u64, n as u64, s as u64] {
        let want = format!("version {VERSION}, shape {l}/{n}/{s}");
        return Err(WireError::Shape(format!(
            "got version {version}, shape {shape:?}; {want}"
        )));
    }
    out.vc.resize(l, 0);
    out.rows.clear();
    out.rows.resize(l * n, false);
    out.vars.clear();
    out.vars.resize(s, None);
    for c in out.vc.iter_mut() {
        *c = u32::try_from(r.varint()?).map_err(|_| WireError::Malformed("clock".into()))?;
    }
    for b in 0..l {
        if out.vc[b] == 0 {
            continue;
        }
        let row = r.take(n.div_ceil(8))?;
        for (i, v) in out.rows[b * n..(b + 1) * n].iter_mut().enumerate() {
            *v = row[i / 8] >> (i % 8) & 1 == 1;
        }
        for slot in prog.selected_of[b].clone() {
            out.vars[slot] = get_value(&mut r, syms)?;
        }
    }
    if r.pos != bytes.len() {
        return Err(WireError::Malformed(format!(
            "{} trailing bytes",
            bytes.len() - r.pos
        )));
    }
    Ok(())
}

fn value_json(v: Value, syms: &Symbols) -> serde_json::Value {
    match v {
        Value::Bool(b) => json!(b),
        Value::Num(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => json!(x as i64),
        Value::Num(x) => json!(x),
        Value::Str(s) => json!(syms.text(s)),
    }
}

/// The JSON form: `{"vc": {L: n}, "rows": {L: [bool]}, "vars": {L: {x: v}}}`, omitting
/// invisible lifelines' rows and undefined values.
pub fn to_json(msg: &Message, prog: &Program, syms: &Symbols) -> String {
    let n = prog.len();
    let (mut vc, mut rows, mut vars) = (Map::new(), Map::new(), Map::new());
    for (b, name) in prog.lifelines.iter().enumerate() {
        vc.insert(name.clone(), json!(msg.vc[b]));
        if msg.vc[b] == 0 {
            continue;
        }
        rows.insert(name.clone(), json!(msg.rows[b * n..(b + 1) * n]));
        let mut mine = Map::new();
        for slot in prog.selected_of[b].clone() {
            if let Some(v) = msg.vars[slot] {
                let var = &prog.vars[prog.selected[slot].1 as usize];
                mine.insert(var.clone(), value_json(v, syms));
            }
        }
        if !mine.is_empty() {
            vars.insert(name.clone(), mine.into());
        }
    }
    json!({"vc": vc, "rows": rows, "vars": vars}).to_string()
}

/// Parses the JSON form back.
pub fn from_json(text: &str, prog: &Program, syms: &mut Symbols) -> Result<Message, WireError> {
    let bad = |what: &str| WireError::Malformed(what.to_owned());
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let mut msg = Message::new(prog);
    let n = prog.len();
    for (b, name) in prog.lifelines.iter().enumerate() {
        let c = v["vc"][name]
            .as_u64()
            .ok_or_else(|| bad(&format!("vc.{name}")))?;
        msg.vc[b] = u32::try_from(c).map_err(|_| bad(&format!("vc.{name}")))?;
        if c == 0 {
            continue;
        }
        let row = v["rows"][name].as_array().filter(|r| r.len() == n);
        let row = row.ok_or_else(|| bad(&format!("rows.{name}")))?;
        for (i, x) in row.iter().enumerate() {
            msg.rows[b * n + i] = x
                .as_bool()
                .ok_or_else(|| bad(&format!("rows.{name}[{i}]")))?;
        }
        for slot in prog.selected_of[b].clone() {
            let var = &prog.vars[prog.selected[slot].1 as usize];
            msg.vars[slot] = match &v["vars"][name][var] {
                serde_json::Value::Null => None,
                serde_json::Value::Bool(x) => Some(Value::Bool(*x)),
                serde_json::Value::Number(x) => x.as_f64().map(Value::Num),
                serde_json::Value::String(s) => Some(Value::Str(syms.intern(s))),
                _ => return Err(bad(&format!("vars.{name}.{var}"))),
            };
        }
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for x in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, x);
            assert_eq!(
                Reader {
                    bytes: &out,
                    pos: 0
                }
                .varint(),
                Ok(x)
            );
        }
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, vec![0xac, 0x02]);
    }

    #[test]
    fn values_round_trip() {
        let mut syms = Symbols::new();
        let s = Value::Str(syms.intern("c2"));
        let vals = [
            None,
            Some(Value::Bool(true)),
            Some(Value::Num(-3.0)),
            Some(Value::Num(0.25)),
        ];
        for v in vals.into_iter().chain([Some(s)]) {
            let mut out = Vec::new();
            put_value(&mut out, v, &syms);
            let got = get_value(
                &mut Reader {
                    bytes: &out,
                    pos: 0,
                },
                &mut syms,
            )
            .unwrap();
            assert_eq!(got, v);
        }
    }
}
