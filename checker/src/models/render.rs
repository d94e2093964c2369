//! Renderings of a trace: a readable step list and ITF JSON (Apalache's Informal Trace
//! Format, ADR-015: `#meta`, `vars`, `states`; sets as `{"#set": [..]}`, functions as
//! `{"#map": [[k, v], ..]}`, tuples as `{"#tup": [..]}`). Names follow the TLA+ twin and
//! `Names::synthetic`: agents `a1..`, cells `c1..`, tools `t1..`, values `v1..`, and the
//! string `"NULL"`. The ITF file is a faithful picture of the checker's states; whether it
//! type-checks against a particular TLA+ module is not tested here.

use crate::config::Bounds;
use crate::engine::space::{PendingView, Space, StateView, StepText};
use crate::engine::trace::Trace;
use crate::models::action::{cell_value, Action, Seq};
use agentsim_models::names::{Cell, Value};
use agentsim_models::record::{OpRecord, Registry, ValueMap};
use serde_json::{json, Value as Json};

fn agent(a: u32) -> String {
    format!("a{}", a + 1)
}
fn cell(c: u32) -> String {
    format!("c{}", c + 1)
}
fn tool(t: u32) -> String {
    format!("t{}", t + 1)
}
fn value(v: u32) -> String {
    if v == 0 {
        "NULL".to_owned()
    } else {
        format!("v{v}")
    }
}

fn cells_text(mask: u32, cells: u32) -> String {
    let names: Vec<_> = (0..cells)
        .filter(|c| mask & (1 << c) != 0)
        .map(cell)
        .collect();
    format!("{{{}}}", names.join(", "))
}

fn map_text(map: u32, cells: u32) -> String {
    let parts: Vec<_> = (0..cells)
        .map(|c| format!("{}: {}", cell(c), value(cell_value(map, c))))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

fn seq_text(s: Seq) -> String {
    let parts: Vec<_> = s.iter().map(cell).collect();
    format!("<{}>", parts.join(", "))
}

/// One action in SPEC §1 vocabulary.
pub fn describe(a: &Action, b: &Bounds) -> String {
    match *a {
        Action::StartRead {
            agent: ag,
            read_set,
            tool: t,
            read_values,
        } => format!(
            "StartRead({}) rs={} pt={} rv={}",
            agent(u32::from(ag)),
            cells_text(u32::from(read_set), b.cells),
            t.checked_sub(1)
                .map_or("NULL".to_owned(), |t| tool(u32::from(t))),
            map_text(read_values, b.cells)
        ),
        Action::CompleteWrite {
            agent: ag,
            io,
            co,
            values,
        } => format!(
            "CompleteWrite({}) ws={} wv={} io={} co={}",
            agent(u32::from(ag)),
            cells_text(crate::models::action::seq_mask(io), b.cells),
            map_text(values, b.cells),
            seq_text(io),
            seq_text(co)
        ),
        Action::RemoveTool(t) => format!("RemoveTool({})", tool(u32::from(t))),
        Action::ChangeSignature(t) => format!("ChangeSignature({})", tool(u32::from(t))),
        Action::Retract(i) => format!("Retract({i})"),
    }
}

impl StepText for Action {
    fn describe(&self, b: &Bounds) -> String {
        describe(self, b)
    }
    fn appends_record(&self) -> bool {
        matches!(self, Action::CompleteWrite { .. })
    }
}

/// The readable step list: one line per action, with the log length after it.
pub fn steps<S: Space>(space: &S, trace: &Trace<S::State, S::Action>) -> Vec<String>
where
    S::State: Clone + Send + Sync,
{
    let b = space.bounds();
    let mut out = Vec::new();
    for (k, a) in trace.actions.iter().enumerate() {
        let after = space.view(&trace.states[k + 1]);
        let mut line = format!("{:>2}. {}", k + 1, a.describe(&b));
        if a.appends_record() {
            let r = after.log.last().expect("the action appends a record");
            let status = if r.aborted { "aborted" } else { "committed" };
            line.push_str(&format!(" -> record {} {status}", after.log.len() - 1));
        }
        out.push(line);
    }
    out
}

fn set_of(items: impl IntoIterator<Item = String>) -> Json {
    json!({ "#set": items.into_iter().collect::<Vec<_>>() })
}

fn map_json(m: &ValueMap, cells: u32) -> Json {
    let pairs: Vec<Json> = (0..cells)
        .map(|c| json!([cell(c), value(m.get(Cell(c)).0)]))
        .collect();
    json!({ "#map": pairs })
}

fn registry_json(r: &Registry) -> Json {
    set_of(r.entries().iter().map(|e| tool(e.tool.0)))
}

fn effects_json(es: &[(Cell, Value)]) -> Json {
    Json::Array(
        es.iter()
            .map(|(c, v)| json!({ "#tup": [cell(c.0), value(v.0)] }))
            .collect(),
    )
}

fn int(x: u64) -> Json {
    json!({ "#bigint": x.to_string() })
}

fn record_json(r: &OpRecord, cells: u32) -> Json {
    json!({
        "agent": agent(r.agent.0),
        "read_set": set_of(r.read_set.iter().map(|c| cell(c.0))),
        "read_values": map_json(&r.read_values, cells),
        "read_registry": registry_json(&r.read_registry),
        "planned_tool": r.planned_tool.map_or("NULL".to_owned(), |t| tool(t.0)),
        "read_time": int(r.read_time),
        "write_set": set_of(r.write_set.iter().map(|c| cell(c.0))),
        "write_values": map_json(&r.write_values, cells),
        "write_registry": registry_json(&r.write_registry),
        "write_time": int(r.write_time),
        "io": effects_json(&r.io),
        "co": effects_json(&r.co),
        "aborted": r.aborted,
        "preds": { "#set": r.preds.iter().map(|&p| int(u64::from(p))).collect::<Vec<_>>() },
    })
}

fn pending_json(p: Option<&PendingView>, cells: u32) -> Json {
    let empty = PendingView {
        read_set: Vec::new(),
        read_values: ValueMap::new(),
        read_registry: Registry::new(),
        planned_tool: None,
        read_time: 0,
        preds: Vec::new(),
    };
    let q = p.unwrap_or(&empty);
    json!({
        "pending": p.is_some(),
        "read_set": set_of(q.read_set.iter().map(|&c| cell(c))),
        "read_values": map_json(&q.read_values, cells),
        "read_registry": registry_json(&q.read_registry),
        "planned_tool": q.planned_tool.map_or("NULL".to_owned(), tool),
        "read_time": int(q.read_time),
        "preds": { "#set": q.preds.iter().map(|&p| int(u64::from(p))).collect::<Vec<_>>() },
    })
}

/// One state as an ITF state object.
pub fn state_json(v: &StateView, index: usize, b: &Bounds) -> Json {
    let inflight: Vec<Json> = v
        .inflight
        .iter()
        .enumerate()
        .map(|(a, p)| json!([agent(a as u32), pending_json(p.as_ref(), b.cells)]))
        .collect();
    json!({
        "#meta": { "index": index },
        "log": v.log.iter().map(|r| record_json(r, b.cells)).collect::<Vec<_>>(),
        "inflight": { "#map": inflight },
        "registry": registry_json(&v.registry),
        "memory": map_json(&v.memory, b.cells),
    })
}

/// The whole trace as an ITF document.
pub fn itf<S: Space>(space: &S, trace: &Trace<S::State, S::Action>, description: &str) -> Json
where
    S::State: Clone + Send + Sync,
{
    let b = space.bounds();
    let states: Vec<Json> = trace
        .states
        .iter()
        .enumerate()
        .map(|(k, s)| state_json(&space.view(s), k, &b))
        .collect();
    json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": "agentsim check",
            "description": description,
            "path": trace.path_string(),
        },
        "vars": ["log", "inflight", "registry", "memory"],
        "states": states,
    })
}
