//! Reading JSON Lines histories: one record per line, every defect reported with file, line, key.
//!
//! Each line is parsed into a `serde_json::Value` and then walked key by key, so that an error
//! can name the exact key (a path like `io[1][0]` for nested values). Adding a key (issue 10's
//! `read_replica`, `read_version`) is one entry in [`super::KEYS`] and one arm in
//! [`LineReader::field`]. Blank lines are skipped; `preds` count records, which are the lines
//! when the file has no blank lines.

use super::{JsonlError, KEYS, REQUIRED_KEYS};
use crate::history::History;
use crate::names::{Agent, Cell, Names, Tool, Value};
use crate::record::{normalize_set, OpRecord, Registry, ToolEntry, ValueMap};
use serde_json::{Map, Value as Json};
use std::path::Path;

type Result<T> = std::result::Result<T, JsonlError>;

/// Reads a history from a `.jsonl` file; errors name the path as given.
pub fn read_history(path: impl AsRef<Path>) -> Result<History> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| JsonlError::Io {
        file: file.clone(),
        source,
    })?;
    parse_history(&text, &file)
}

/// Parses a history from JSON Lines text; `source` names it in errors (a path or `<stdin>`).
pub fn parse_history(text: &str, source: &str) -> Result<History> {
    let mut h = History::new(Names::new());
    let mut previous_write_time = 0;
    for (n, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line = LineReader {
            file: source,
            line: n + 1,
            index: h.records.len(),
        };
        let record = line.record(text, &mut h.names)?;
        if record.write_time < previous_write_time {
            return Err(line.bad(
                "write_time",
                format!(
                    "{} is before the previous record's {previous_write_time} \
                     (records must appear in log order, write_time ascending)",
                    record.write_time
                ),
            ));
        }
        previous_write_time = record.write_time;
        h.records.push(record);
    }
    debug_assert_eq!(h.validate(), Ok(()));
    Ok(h)
}

/// Where we are: the file, the 1-based line, the 0-based record index.
struct LineReader<'a> {
    file: &'a str,
    line: usize,
    index: usize,
}

impl LineReader<'_> {
    fn record(&self, text: &str, names: &mut Names) -> Result<OpRecord> {
        let json: Json = serde_json::from_str(text).map_err(|e| JsonlError::BadJson {
            file: self.file.to_owned(),
            line: self.line,
            message: e.to_string(),
        })?;
        let Json::Object(obj) = json else {
            return Err(JsonlError::NotAnObject {
                file: self.file.to_owned(),
                line: self.line,
                found: describe(&json),
            });
        };
        let mut rec = OpRecord::default();
        for (key, value) in &obj {
            self.field(&mut rec, key, value, names)?;
        }
        if let Some(key) = REQUIRED_KEYS.into_iter().find(|k| !obj.contains_key(*k)) {
            return Err(JsonlError::MissingKey {
                file: self.file.to_owned(),
                line: self.line,
                key,
            });
        }
        if rec.read_time > rec.write_time {
            let msg = format!(
                "{} is after write_time {} (an operation reads before it writes)",
                rec.read_time, rec.write_time
            );
            return Err(self.bad("read_time", msg));
        }
        Ok(rec)
    }

    /// Parses one key into `rec`. The one place that knows every key.
    fn field(&self, rec: &mut OpRecord, key: &str, v: &Json, names: &mut Names) -> Result<()> {
        match key {
            "agent" => rec.agent = Agent(names.agents.intern(self.string(key, v)?)),
            "read_set" => rec.read_set = self.cells(key, v, names)?,
            "read_values" => rec.read_values = self.value_map(key, v, names)?,
            "read_registry" => rec.read_registry = self.registry(key, v, names)?,
            "planned_tool" => {
                rec.planned_tool = match v {
                    Json::Null => None,
                    _ => Some(Tool(names.tools.intern(self.string(key, v)?))),
                }
            }
            "read_time" => rec.read_time = self.integer(key, v)?,
            "write_set" => rec.write_set = self.cells(key, v, names)?,
            "write_values" => rec.write_values = self.value_map(key, v, names)?,
            "write_registry" => rec.write_registry = self.registry(key, v, names)?,
            "write_time" => rec.write_time = self.integer(key, v)?,
            "io" => rec.io = self.effects(key, v, names)?,
            "co" => rec.co = self.effects(key, v, names)?,
            "aborted" => {
                rec.aborted = v.as_bool().ok_or_else(|| self.wrong(key, "a boolean", v))?
            }
            "preds" => rec.preds = self.preds(key, v)?,
            _ => {
                debug_assert!(!KEYS.contains(&key));
                return Err(JsonlError::UnknownKey {
                    file: self.file.to_owned(),
                    line: self.line,
                    key: key.to_owned(),
                });
            }
        }
        Ok(())
    }

    fn wrong(&self, key: &str, expected: &'static str, found: &Json) -> JsonlError {
        JsonlError::WrongType {
            file: self.file.to_owned(),
            line: self.line,
            key: key.to_owned(),
            expected,
            found: describe(found),
        }
    }

    fn bad(&self, key: &str, message: String) -> JsonlError {
        JsonlError::BadValue {
            file: self.file.to_owned(),
            line: self.line,
            key: key.to_owned(),
            message,
        }
    }

    fn string<'v>(&self, key: &str, v: &'v Json) -> Result<&'v str> {
        v.as_str().ok_or_else(|| self.wrong(key, "a string", v))
    }

    fn integer(&self, key: &str, v: &Json) -> Result<u64> {
        v.as_u64()
            .ok_or_else(|| self.wrong(key, "a non-negative integer", v))
    }

    fn array<'v>(&self, key: &str, v: &'v Json, expected: &'static str) -> Result<&'v [Json]> {
        v.as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| self.wrong(key, expected, v))
    }

    fn object<'v>(
        &self,
        key: &str,
        v: &'v Json,
        expected: &'static str,
    ) -> Result<&'v Map<String, Json>> {
        v.as_object().ok_or_else(|| self.wrong(key, expected, v))
    }

    /// A string names a value; `null` is NULL.
    fn value(&self, key: &str, v: &Json, names: &mut Names) -> Result<Value> {
        match v {
            Json::Null => Ok(Value::NULL),
            Json::String(s) => Ok(names.value(s)),
            _ => Err(self.wrong(key, "a value name (string) or null", v)),
        }
    }

    /// An array of cell names, read as a set (sorted, duplicates merged).
    fn cells(&self, key: &str, v: &Json, names: &mut Names) -> Result<Vec<Cell>> {
        let items = self.array(key, v, "an array of cell names")?;
        let mut cells = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let name = self.string(&format!("{key}[{i}]"), item)?;
            cells.push(names.cell(name));
        }
        normalize_set(&mut cells);
        Ok(cells)
    }

    /// An object cell → value or null; a missing cell reads as NULL.
    fn value_map(&self, key: &str, v: &Json, names: &mut Names) -> Result<ValueMap> {
        let obj = self.object(key, v, "an object mapping cell names to values")?;
        let mut map = ValueMap::new();
        for (cell, value) in obj {
            let value = self.value(&format!("{key}.{cell}"), value, names)?;
            map.set(names.cell(cell), value);
        }
        Ok(map)
    }

    /// An array of tool names (version 0) or `{"tool": name, "version": n}` objects.
    fn registry(&self, key: &str, v: &Json, names: &mut Names) -> Result<Registry> {
        let items = self.array(key, v, "an array of tool names or {tool, version} objects")?;
        let mut reg = Registry::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("{key}[{i}]");
            let entry = self.tool_entry(&at, item, names)?;
            if reg.contains(entry.tool) {
                let msg = format!("tool `{}` appears twice", names.tool_name(entry.tool));
                return Err(self.bad(&at, msg));
            }
            reg.insert(entry);
        }
        Ok(reg)
    }

    fn tool_entry(&self, key: &str, v: &Json, names: &mut Names) -> Result<ToolEntry> {
        let expected = "a tool name or an object {\"tool\": name, \"version\": n}";
        if let Json::String(s) = v {
            let tool = names.tool(s);
            return Ok(ToolEntry { tool, version: 0 });
        }
        let obj = self.object(key, v, expected)?;
        if let Some(k) = obj.keys().find(|k| *k != "tool" && *k != "version") {
            return Err(JsonlError::UnknownKey {
                file: self.file.to_owned(),
                line: self.line,
                key: format!("{key}.{k}"),
            });
        }
        let Some(name) = obj.get("tool") else {
            return Err(self.bad(key, "a registry entry object needs a `tool`".to_owned()));
        };
        let tool = names.tool(self.string(&format!("{key}.tool"), name)?);
        let version = match obj.get("version") {
            None => 0,
            Some(n) => {
                let at = format!("{key}.version");
                let n = self.integer(&at, n)?;
                u32::try_from(n).map_err(|_| self.bad(&at, format!("{n} exceeds u32")))?
            }
        };
        Ok(ToolEntry { tool, version })
    }

    /// An array of `[cell, value-or-null]` pairs, in order.
    fn effects(&self, key: &str, v: &Json, names: &mut Names) -> Result<Vec<(Cell, Value)>> {
        let items = self.array(key, v, "an array of [cell, value] pairs")?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{key}[{i}]");
            let pair = self.array(&at, item, "a [cell, value] pair")?;
            let [cell, value] = pair else {
                let msg = format!("expected a [cell, value] pair, found {} items", pair.len());
                return Err(self.bad(&at, msg));
            };
            let cell = names.cell(self.string(&format!("{at}[0]"), cell)?);
            let value = self.value(&format!("{at}[1]"), value, names)?;
            out.push((cell, value));
        }
        Ok(out)
    }

    /// 0-based indices of earlier records, read as a set.
    fn preds(&self, key: &str, v: &Json) -> Result<Vec<u32>> {
        let items = self.array(key, v, "an array of record indices")?;
        let mut preds = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{key}[{i}]");
            let p = self.integer(&at, item)?;
            if p >= self.index as u64 {
                let msg = format!(
                    "{p} does not point to an earlier record (this is record {}, 0-based)",
                    self.index
                );
                return Err(self.bad(&at, msg));
            }
            preds.push(p as u32);
        }
        normalize_set(&mut preds);
        Ok(preds)
    }
}

/// A short description of a JSON value for error messages: its type and (truncated) text.
fn describe(v: &Json) -> String {
    let kind = match v {
        Json::Null => return "null".to_owned(),
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    };
    let mut text = v.to_string();
    if text.chars().count() > 40 {
        text = text.chars().take(40).collect::<String>() + "…";
    }
    format!("{kind} {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = concat!(
        r#""agent":"a","read_set":[],"read_values":{},"read_time":0,"#,
        r#""write_set":[],"write_values":{},"write_time":1"#
    );

    fn line(extra: &str) -> String {
        format!("{{{MIN}{extra}}}")
    }

    #[test]
    fn defaults_apply() {
        let h = parse_history(&line(""), "t").unwrap();
        let r = &h.records[0];
        assert_eq!(r.planned_tool, None);
        assert!(r.io.is_empty() && r.co.is_empty() && r.preds.is_empty());
        assert!(!r.aborted);
        assert!(r.read_registry.entries().is_empty());
    }

    #[test]
    fn registry_entries_and_versions() {
        let h = parse_history(
            &line(r#","read_registry":["t1",{"tool":"t2","version":3}]"#),
            "t",
        )
        .unwrap();
        let t2 = Tool(h.names.tools.get("t2").unwrap());
        assert_eq!(h.records[0].read_registry.get(t2).unwrap().version, 3);
        let e = parse_history(&line(r#","read_registry":["t1","t1"]"#), "t").unwrap_err();
        assert_eq!(e.key(), Some("read_registry[1]"));
    }

    #[test]
    fn errors_name_line_and_key() {
        let two = format!("{}\n{}", line(""), line(r#","io":[["c",1]]"#));
        let e = parse_history(&two, "h.jsonl").unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(2), Some("io[0][1]")));
        assert!(
            e.to_string().starts_with("h.jsonl:2: key `io[0][1]`"),
            "{e}"
        );
        let e = parse_history(&line(r#","colour":1"#), "h").unwrap_err();
        assert_eq!(e.key(), Some("colour"));
        let e = parse_history(r#"{"agent":"a"}"#, "h").unwrap_err();
        assert_eq!(e.key(), Some("read_set"));
        let e = parse_history(&line(r#","preds":[0]"#), "h").unwrap_err();
        assert_eq!(e.key(), Some("preds[0]"));
        let e = parse_history("{\"agent\":", "h").unwrap_err();
        assert!(matches!(e, JsonlError::BadJson { line: 1, .. }));
        let e = parse_history("[1]", "h").unwrap_err();
        assert!(matches!(e, JsonlError::NotAnObject { .. }));
    }
}
