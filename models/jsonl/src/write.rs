//! Writing JSON Lines histories, byte-deterministically.
//!
//! Every key is written, in the order of [`super::KEYS`] (the optional `read_replica` and
//! `read_version` only for records with replica metadata), so the output is self-describing and
//! two equal histories give equal bytes. Value maps are written sparsely (NULL entries are
//! omitted: a missing cell reads as NULL); sets, maps and registries are sorted by *name*, so
//! the bytes do not depend on how ids were assigned; registry entries at version 0 are bare
//! tool names. Reading the output back gives the same records over the same names (ids are
//! re-interned in order of first appearance) and writing that gives the same bytes.

use agentsim_models::history::History;
use agentsim_models::names::{Cell, Names, Value};
use agentsim_models::record::{OpRecord, ReadMeta, Registry, ValueMap};
use std::fmt::Write as _;

/// The whole history, one line per record, each ending in `\n`.
pub fn write_history(h: &History) -> String {
    let mut out = String::with_capacity(h.records.len() * 256);
    for r in &h.records {
        write_record(&h.names, r, &mut out);
        out.push('\n');
    }
    out
}

/// Appends one record as a JSON object (no newline).
pub fn write_record(names: &Names, r: &OpRecord, out: &mut String) {
    out.push_str("{\"agent\":");
    string(out, &names.agent_name(r.agent));
    out.push_str(",\"read_set\":");
    cells(out, names, &r.read_set);
    out.push_str(",\"read_values\":");
    value_map(out, names, &r.read_values);
    out.push_str(",\"read_registry\":");
    registry(out, names, &r.read_registry);
    out.push_str(",\"planned_tool\":");
    match r.planned_tool {
        Some(t) => string(out, &names.tool_name(t)),
        None => out.push_str("null"),
    }
    write!(out, ",\"read_time\":{}", r.read_time).expect("write to String");
    out.push_str(",\"write_set\":");
    cells(out, names, &r.write_set);
    out.push_str(",\"write_values\":");
    value_map(out, names, &r.write_values);
    out.push_str(",\"write_registry\":");
    registry(out, names, &r.write_registry);
    write!(out, ",\"write_time\":{}", r.write_time).expect("write to String");
    out.push_str(",\"io\":");
    effects(out, names, &r.io);
    out.push_str(",\"co\":");
    effects(out, names, &r.co);
    write!(out, ",\"aborted\":{}", r.aborted).expect("write to String");
    out.push_str(",\"preds\":[");
    for (i, p) in r.preds.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "{p}").expect("write to String");
    }
    out.push(']');
    if !r.read_meta.is_empty() {
        read_meta(out, names, &r.read_meta);
    }
    out.push('}');
}

/// The optional `read_replica` and `read_version` objects, cells sorted by name.
fn read_meta(out: &mut String, names: &Names, meta: &[ReadMeta]) {
    let sorted = by_name(meta.iter().copied(), |m| names.cell_name(m.cell));
    out.push_str(",\"read_replica\":{");
    for (i, (name, m)) in sorted.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, name);
        out.push(':');
        string(out, &names.replica_name(m.replica));
    }
    out.push_str("},\"read_version\":{");
    for (i, (name, m)) in sorted.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, name);
        write!(out, ":{}", m.version).expect("write to String");
    }
    out.push('}');
}

fn string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string serializes"));
}

fn value(out: &mut String, names: &Names, v: Value) {
    match names.value_name(v) {
        Some(name) => string(out, &name),
        None => out.push_str("null"),
    }
}

/// Items sorted by name, so the bytes do not depend on the order ids were interned in.
fn by_name<T: Copy>(
    items: impl Iterator<Item = T>,
    name: impl Fn(T) -> String,
) -> Vec<(String, T)> {
    let mut named: Vec<_> = items.map(|x| (name(x), x)).collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    named
}

fn cells(out: &mut String, names: &Names, cells: &[Cell]) {
    out.push('[');
    for (i, (name, _)) in by_name(cells.iter().copied(), |c| names.cell_name(c))
        .iter()
        .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        string(out, name);
    }
    out.push(']');
}

fn value_map(out: &mut String, names: &Names, map: &ValueMap) {
    out.push('{');
    let entries = by_name(map.entries().iter().copied(), |(c, _)| names.cell_name(c));
    for (i, (name, (_, v))) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(out, name);
        out.push(':');
        value(out, names, *v);
    }
    out.push('}');
}

fn registry(out: &mut String, names: &Names, reg: &Registry) {
    out.push('[');
    let entries = by_name(reg.entries().iter().copied(), |e| names.tool_name(e.tool));
    for (i, (name, e)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if e.version == 0 {
            string(out, name);
        } else {
            out.push_str("{\"tool\":");
            string(out, name);
            write!(out, ",\"version\":{}}}", e.version).expect("write to String");
        }
    }
    out.push(']');
}

fn effects(out: &mut String, names: &Names, effects: &[(Cell, Value)]) {
    out.push('[');
    for (i, &(c, v)) in effects.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        string(out, &names.cell_name(c));
        out.push(',');
        value(out, names, v);
        out.push(']');
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_history;
    use agentsim_models::names::{Agent, Tool};
    use agentsim_models::record::ToolEntry;

    #[test]
    fn writes_every_key_in_order() {
        let mut names = Names::synthetic(1, 2, 1, 1);
        let r = OpRecord {
            agent: Agent(0),
            read_set: vec![Cell(0)],
            read_values: ValueMap::from_pairs([(Cell(0), Value(1))]),
            read_registry: Registry::from_entries([ToolEntry {
                tool: Tool(0),
                version: 2,
            }]),
            planned_tool: Some(Tool(0)),
            write_time: 1,
            io: vec![(Cell(1), Value::NULL)],
            co: vec![(Cell(1), Value::NULL)],
            ..OpRecord::default()
        };
        names.value("unused");
        let h = History {
            records: vec![r],
            names,
        };
        let text = write_history(&h);
        assert_eq!(
            text,
            "{\"agent\":\"a1\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"v1\"},\
             \"read_registry\":[{\"tool\":\"t1\",\"version\":2}],\"planned_tool\":\"t1\",\
             \"read_time\":0,\"write_set\":[],\"write_values\":{},\"write_registry\":[],\
             \"write_time\":1,\"io\":[[\"c2\",null]],\"co\":[[\"c2\",null]],\
             \"aborted\":false,\"preds\":[]}\n"
        );
        let back = parse_history(&text, "t").unwrap();
        assert_eq!(write_history(&back), text);
    }

    #[test]
    fn replica_metadata_round_trips() {
        let mut names = Names::synthetic(1, 2, 0, 1);
        let (primary, s1) = (names.replica("primary"), names.replica("s1"));
        let meta = |cell, replica, version| ReadMeta {
            cell: Cell(cell),
            replica,
            version,
        };
        let r = OpRecord {
            read_set: vec![Cell(0), Cell(1)],
            read_values: ValueMap::from_pairs([(Cell(1), Value(1))]),
            read_meta: vec![meta(0, s1, 1), meta(1, primary, 1)],
            write_time: 1,
            ..OpRecord::default()
        };
        let h = History {
            records: vec![r],
            names,
        };
        let text = write_history(&h);
        assert!(
            text.ends_with(
                "\"preds\":[],\"read_replica\":{\"c1\":\"s1\",\"c2\":\"primary\"},\
                 \"read_version\":{\"c1\":1,\"c2\":1}}\n"
            ),
            "{text}"
        );
        let back = parse_history(&text, "t").unwrap();
        assert_eq!(back.records[0].read_meta.len(), 2);
        assert_eq!(write_history(&back), text);
    }
}
