//! The page's data document: a [`Page`] as compact JSON, names interned into tables so that a
//! record costs tens of bytes (a 10,000-record history stays well under 2 MB).
//!
//! Layout (`view.js` reads it): `agents`, `cells`, `vals` are name tables; a record is
//! `[index, agent, read_time, write_time, reads, writes, io, co, aborted, tool, preds, ms]`,
//! each cell-value list `[[cell, value], …]` with value `-1` for NULL and `tool` `-1` for none;
//! `reg` lists registry changes `[time, text]`; an anomaly is `[list, text, records, from, to]`
//! (`-1` without an arrow); a step is `[label, agent, committed, [[name, json], …]]`.
//!
//! Every text the page shows passes through [`agentsim_models::escape_text`] here, once, as
//! the text reports do: a control or bidi character in a name is shown as its escape in the
//! lanes, the legend, the tooltips and the report alike, never raw. The escape is idempotent
//! (it adds no character it escapes), so detect's report, escaped already, is unchanged.

use super::{CellValue, Page, Rec};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// The most records one page draws. Past it a browser spends seconds laying out the lanes
/// (each record is an element with its own hover); `agentsim view` refuses such an input and
/// says how to narrow it.
pub const RECORDS_MAX: usize = 20_000;

/// Interns names in order of first use, so the tables (and the bytes) follow the input.
#[derive(Default)]
struct Table {
    ids: BTreeMap<String, usize>,
    names: Vec<String>,
}

impl Table {
    fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        self.ids.insert(name.to_owned(), self.names.len());
        self.names.push(name.to_owned());
        self.names.len() - 1
    }
}

#[derive(Default)]
struct Tables {
    agents: Table,
    cells: Table,
    vals: Table,
}

impl Tables {
    fn pairs(&mut self, list: &[CellValue]) -> Json {
        let pair = |t: &mut Tables, (c, v): &CellValue| {
            let v = v.as_deref().map_or(-1, |v| t.vals.id(v) as i64);
            json!([t.cells.id(c), v])
        };
        list.iter().map(|cv| pair(self, cv)).collect()
    }

    fn record(&mut self, r: &Rec, tools: &mut Table) -> Json {
        let tool = r.tool.as_deref().map_or(-1, |t| tools.id(t) as i64);
        let ms = r.ms.map_or(Json::Null, |(a, b)| json!([a, b]));
        json!([
            r.index,
            self.agents.id(&r.agent),
            r.read_time,
            r.write_time,
            self.pairs(&r.reads),
            self.pairs(&r.writes),
            self.pairs(&r.io),
            self.pairs(&r.co),
            u8::from(r.aborted),
            tool,
            r.preds,
            ms
        ])
    }
}

/// The registry changes between consecutive records' commits, as `[time, text]` events: a
/// tool that came, went, or changed its signature version.
fn registry_events(records: &[Rec]) -> Vec<Json> {
    let mut out = Vec::new();
    let mut before: Option<BTreeMap<&str, u32>> = None;
    for r in records {
        let now: BTreeMap<&str, u32> = r.registry.iter().map(|(t, v)| (t.as_str(), *v)).collect();
        if let Some(b) = &before {
            let mut said = Vec::new();
            for (t, v) in &now {
                match b.get(t) {
                    None => said.push(format!("+{t}")),
                    Some(old) if old != v => said.push(format!("{t} v{old}\u{2192}v{v}")),
                    Some(_) => {}
                }
            }
            said.extend(
                b.keys()
                    .filter(|t| !now.contains_key(*t))
                    .map(|t| format!("-{t}")),
            );
            if !said.is_empty() {
                let text = format!("registry at record {}: {}", r.index, said.join(", "));
                out.push(json!([r.write_time, text]));
            }
        }
        before = Some(now);
    }
    out
}

fn esc(s: &str) -> String {
    agentsim_models::escape_text(s).into_owned()
}

fn esc_all(v: &[String]) -> Vec<String> {
    v.iter().map(|s| esc(s)).collect()
}

/// The data document of `page`.
pub fn encode(page: &Page) -> Json {
    let mut t = Tables::default();
    let mut tools = Table::default();
    // Lanes in order of first appearance, whichever list names the agent first.
    for r in &page.records {
        t.agents.id(&r.agent);
    }
    let recs: Vec<Json> = page
        .records
        .iter()
        .map(|r| t.record(r, &mut tools))
        .collect();
    let anoms: Vec<Json> = page
        .anomalies
        .iter()
        .map(|a| {
            let (from, to) = a.arrow.map_or((-1, -1), |(f, t)| (f as i64, t as i64));
            json!([esc(&a.list), esc(&a.text), a.records, from, to])
        })
        .collect();
    let steps: Vec<Json> = page
        .steps
        .iter()
        .map(|s| {
            let agent = s.agent.as_deref().map_or(-1, |a| t.agents.id(a) as i64);
            let vars: Vec<Json> = s
                .vars
                .iter()
                .map(|(k, v)| json!([esc(k), esc(v)]))
                .collect();
            json!([esc(&s.label), agent, s.committed, vars])
        })
        .collect();
    json!({
        "kind": page.kind.map_or("history", super::Kind::name),
        "title": esc(&page.title),
        "total": page.total_records,
        "agents": esc_all(&t.agents.names),
        "cells": esc_all(&t.cells.names),
        "vals": esc_all(&t.vals.names),
        "tools": esc_all(&tools.names),
        "recs": recs,
        "reg": registry_events(&page.records)
            .into_iter()
            .map(|e| json!([e[0], esc(e[1].as_str().unwrap_or_default())]))
            .collect::<Vec<_>>(),
        "anoms": anoms,
        "report": esc(&page.report),
        "ingest": page.ingest.as_deref().map(esc),
        "undecided": page.undecided.as_deref().map(esc),
        "steps": steps,
        "notes": esc_all(&page.notes),
        "clock": if page.wall { "wall ms" } else { "simulated ms" },
    })
}
