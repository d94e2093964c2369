//! MCP log lines → steps and the report: the mapping of [`super`].

use super::log::{Dir, Line};
use super::timeline::{Entries, Timeline};
use crate::build::{build, Step, Written};
use crate::report::{Report, Verdict};
use crate::value::value_name;
use crate::Ingested;
use agentsim_models::Anomaly;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Notes about single messages are capped; the counts say how many there were.
const NOTES_MAX: usize = 10;

/// One `tools/call` and what became of it.
pub(super) struct Call {
    pub(super) client: String,
    pub(super) server: String,
    pub(super) tool: String,
    /// `client/<JSON-RPC id>`: unique per client and call.
    pub(super) key: String,
    /// (t, line) of the request.
    pub(super) sent: (u64, usize),
    /// When the answer came, and whether the effect landed (no error).
    pub(super) answered: Option<((u64, usize), bool, Json)>,
    /// The client's view of the server's tools when it sent the call.
    view: Option<Entries>,
}

/// A client's views of a server's tools: each complete `tools/list` answer, at (t, line).
pub(super) type Views = Vec<((u64, usize), Entries)>;

/// A request waiting for its answer.
struct Pending {
    method: String,
    /// For `tools/call`: the index in `calls`.
    call: Option<usize>,
    /// For `tools/list`: whether it asked for a next page.
    cursor: bool,
}

#[derive(Default)]
pub(super) struct Cx {
    counts: BTreeMap<String, u64>,
    notes: Vec<String>,
    pub(super) servers: BTreeMap<String, Timeline>,
    /// (client, server) → every complete `tools/list` answer the client received, in order:
    /// its view over time, for a join with a trace (`super::join`).
    pub(super) view_log: BTreeMap<(String, String), Views>,
    /// (client, server) → the client's view and the line of the `list_changed` that made it
    /// stale, if any.
    views: BTreeMap<(String, String), (Entries, Option<usize>)>,
    /// (client, server) → a `tools/list` being read page by page.
    pages: BTreeMap<(String, String), Vec<Json>>,
    pending: BTreeMap<(String, String, String), Pending>,
    pub(super) calls: Vec<Call>,
}

/// The log's messages taken in (t, line) order: timelines, views and calls.
pub(super) fn replay(lines: &[Line]) -> Cx {
    let mut order: Vec<&Line> = lines.iter().collect();
    order.sort_by_key(|l| (l.t, l.line));
    let mut cx = Cx::default();
    cx.count("messages", lines.len() as u64);
    for l in order {
        match l.dir {
            Dir::Send => cx.sent(l),
            Dir::Recv => cx.received(l),
        }
    }
    cx
}

pub fn ingest(file: &str, lines: &[Line]) -> Ingested {
    let mut cx = replay(lines);
    let unanswered = cx.calls.iter().filter(|c| c.answered.is_none()).count();
    cx.count("unanswered_calls", unanswered as u64);
    let (steps, a2) = cx.steps();
    let history = build(steps, false);
    let verdicts = cx.verdicts(a2);
    let report = Report {
        source: crate::Source::Mcp,
        file: file.to_owned(),
        records: history.len(),
        verdicts,
        counts: std::mem::take(&mut cx.counts),
        errors: Vec::new(),
        notes: std::mem::take(&mut cx.notes),
        wall_ns: None,
        initial: Default::default(),
    };
    Ingested { history, report }
}

fn params(l: &Line) -> Option<&serde_json::Map<String, Json>> {
    l.message.get("params").and_then(Json::as_object)
}

impl Cx {
    fn count(&mut self, what: &str, n: u64) {
        *self.counts.entry(what.to_owned()).or_default() += n;
    }

    fn note(&mut self, kind: &str, text: String) {
        self.count(kind, 1);
        if self.notes.len() < NOTES_MAX {
            self.notes.push(text);
        }
    }

    fn sent(&mut self, l: &Line) {
        let (Some(method), Some(id)) = (l.method(), l.id()) else {
            return; // a notification from the client, or its answer to a server request
        };
        let mut pending = Pending {
            method: method.to_owned(),
            call: None,
            cursor: params(l).is_some_and(|p| p.contains_key("cursor")),
        };
        if method == "tools/call" {
            let tool = params(l)
                .and_then(|p| p.get("name"))
                .and_then(Json::as_str)
                .unwrap_or("?")
                .to_owned();
            let view = self
                .views
                .get(&(l.client.clone(), l.server.clone()))
                .cloned();
            let stale_since = view.as_ref().and_then(|v| v.1);
            if let Some(changed) = stale_since {
                self.note(
                    "stale_list_calls",
                    format!(
                        "line {}: {} called `{tool}` on {} from a tool list that \
                         notifications/tools/list_changed (line {changed}) had invalidated",
                        l.line, l.client, l.server
                    ),
                );
            }
            pending.call = Some(self.calls.len());
            self.calls.push(Call {
                client: l.client.clone(),
                server: l.server.clone(),
                tool,
                key: format!("{}/{id}", l.client),
                sent: (l.t, l.line),
                answered: None,
                view: view.map(|v| v.0),
            });
        }
        self.pending
            .insert((l.client.clone(), l.server.clone(), id), pending);
    }

    fn received(&mut self, l: &Line) {
        let conn = (l.client.clone(), l.server.clone());
        if l.method() == Some("notifications/tools/list_changed") {
            self.count("list_changed", 1);
            self.servers
                .entry(l.server.clone())
                .or_default()
                .changed((l.t, l.line));
            if let Some(view) = self.views.get_mut(&conn) {
                view.1.get_or_insert(l.line);
            }
            return;
        }
        if l.method().is_some() {
            self.count("server_messages_not_read", 1);
            return;
        }
        let Some(id) = l.id() else { return };
        let Some(p) = self.pending.remove(&(conn.0.clone(), conn.1.clone(), id)) else {
            self.count("answers_without_request", 1);
            return;
        };
        let result = l.message.get("result");
        match p.method.as_str() {
            "initialize" => {
                let announces = result
                    .and_then(|r| r.pointer("/capabilities/tools/listChanged"))
                    .and_then(Json::as_bool)
                    == Some(true);
                self.servers.entry(l.server.clone()).or_default().announces |= announces;
            }
            "tools/list" => self.listed(l, conn, result, p.cursor),
            "tools/call" => {
                let Some(i) = p.call else { return };
                let failed = result.is_none()
                    || result
                        .and_then(|r| r.get("isError"))
                        .and_then(Json::as_bool)
                        == Some(true);
                let value = result
                    .and_then(|r| r.get("structuredContent").or_else(|| r.get("content")))
                    .cloned()
                    .unwrap_or(Json::Null);
                self.calls[i].answered = Some(((l.t, l.line), !failed, value));
                self.count("tool_calls", 1);
                if failed {
                    self.count("failed_tool_calls", 1);
                }
            }
            _ => {}
        }
    }

    fn listed(&mut self, l: &Line, conn: (String, String), result: Option<&Json>, cursor: bool) {
        let Some(result) = result else { return };
        let tools = result
            .get("tools")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        let page = self.pages.entry(conn.clone()).or_default();
        if !cursor {
            page.clear();
        }
        page.extend(tools);
        if result.get("nextCursor").is_some_and(|c| !c.is_null()) {
            return; // more pages to come
        }
        let all = self.pages.remove(&conn).unwrap_or_default();
        let tl = self.servers.entry(l.server.clone()).or_default();
        let entries = tl.entries(&all);
        tl.list((l.t, l.line), entries.clone());
        let log = self.view_log.entry(conn.clone()).or_default();
        log.push(((l.t, l.line), entries.clone()));
        self.views.insert(conn, (entries, None));
        self.count("tool_lists", 1);
    }

    /// The steps (one per batch of overlapping calls of a client) and the A2 gaps.
    fn steps(&mut self) -> (Vec<Step>, A2Gaps) {
        let mut by_client: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, c) in self.calls.iter().enumerate() {
            by_client.entry(&c.client).or_default().push(i);
        }
        let mut batches: Vec<Vec<usize>> = Vec::new();
        for calls in by_client.values() {
            let mut open_until: Option<(u64, usize)> = None;
            for &i in calls {
                let c = &self.calls[i];
                let ends = c.answered.as_ref().map_or((u64::MAX, 0), |a| a.0);
                match (open_until, batches.last_mut()) {
                    (Some(until), Some(batch)) if c.sent < until => {
                        batch.push(i);
                        open_until = Some(until.max(ends));
                    }
                    _ => {
                        batches.push(vec![i]);
                        open_until = Some(ends);
                    }
                }
            }
        }
        let mut gaps = A2Gaps::default();
        let steps = batches.iter().map(|b| self.step(b, &mut gaps)).collect();
        self.count("batches", batches.len() as u64);
        (steps, gaps)
    }

    fn step(&self, batch: &[usize], gaps: &mut A2Gaps) -> Step {
        let first = &self.calls[batch[0]];
        let commit = batch
            .iter()
            .filter_map(|&i| self.calls[i].answered.as_ref().map(|a| a.0 .0))
            .max()
            .unwrap_or(first.sent.0);
        let mut step = Step {
            agent: first.client.clone(),
            read_at: u128::from(first.sent.0),
            commit_at: u128::from(commit),
            planned_tool: Some(first.tool.clone()),
            ..Step::default()
        };
        let mut landed: Vec<(&Call, (u64, usize))> = Vec::new();
        for &i in batch {
            let c = &self.calls[i];
            if let Some((at, true, value)) = &c.answered {
                let cell = format!("tool:{}:{}", c.tool, c.key);
                step.writes.push((cell, Written::Value(value_name(value))));
                landed.push((c, *at));
            }
        }
        let cell = |c: &Call| format!("tool:{}:{}", c.tool, c.key);
        step.io = landed.iter().map(|(c, _)| cell(c)).collect();
        let mut co = landed.clone();
        co.sort_by_key(|(_, at)| *at);
        step.co = co.iter().map(|(c, _)| cell(c)).collect();
        let tl = self.servers.get(&first.server);
        match &first.view {
            Some(v) => step.read_registry = v.clone(),
            None => gaps.no_view += 1,
        }
        match tl.and_then(|tl| tl.at(first.sent)) {
            Some(r) => step.write_registry = r.clone(),
            None => gaps.unknown_at_dispatch += 1,
        }
        if !tl.is_some_and(|tl| tl.announces) {
            gaps.silent_servers.push(first.server.clone());
        }
        step
    }

    fn verdicts(&self, mut gaps: A2Gaps) -> Vec<(Anomaly, Verdict)> {
        gaps.silent_servers.sort();
        gaps.silent_servers.dedup();
        let calls = self.calls.len();
        let changes: usize = self.servers.values().map(Timeline::changes).sum();
        let a1 = Verdict::Undecidable {
            reason: "an MCP JSON-RPC log has no memory reads or writes (memory behind a tool \
                     is a tools/call like any other)"
                .to_owned(),
        };
        let a2 = if calls == 0 {
            Verdict::Decided {
                basis: "no tools/call in the log: nothing was planned and dispatched".to_owned(),
            }
        } else if gaps.no_view > 0 {
            Verdict::Undecidable {
                reason: format!(
                    "{} tool-call batches came from clients with no tools/list answer in the \
                     log: what they planned from is unknown",
                    gaps.no_view
                ),
            }
        } else if !gaps.silent_servers.is_empty() {
            Verdict::Undecidable {
                reason: format!(
                    "{} did not declare capabilities.tools.listChanged in initialize: its tool \
                     list may change between tools/list answers unannounced",
                    gaps.silent_servers.join(", ")
                ),
            }
        } else if gaps.unknown_at_dispatch > 0 {
            Verdict::Undecidable {
                reason: format!(
                    "{} tool-call batches were sent after notifications/tools/list_changed that \
                     no later tools/list answer resolves: the registry at dispatch is unknown",
                    gaps.unknown_at_dispatch
                ),
            }
        } else {
            Verdict::Decided {
                basis: format!(
                    "registry per server from tools/list answers and {changes} \
                     notifications/tools/list_changed received by any of its clients (the \
                     server declares tools.listChanged); read registry = the calling client's \
                     latest tools/list; planned tool = the first tools/call of each batch"
                ),
            }
        };
        let a3 = Verdict::Undecidable {
            reason: "a JSON-RPC log carries no provenance and no retraction".to_owned(),
        };
        let a6 = Verdict::Decided {
            basis: format!(
                "{calls} tools/call: the calls a client sent while another was unanswered are \
                 one batch; issue order = request order, completion order = answer order (an \
                 answer is taken as when the effect landed; an error answer did not land)"
            ),
        };
        crate::report::lattice_verdicts(a1, a2, a3, a6)
    }
}

/// Why A2 may not be decidable.
#[derive(Default)]
struct A2Gaps {
    no_view: usize,
    unknown_at_dispatch: usize,
    silent_servers: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::super::parse_mcp_log;
    use crate::report::Verdict;
    use agentsim_models::detect::fast;
    use agentsim_models::Anomaly;

    /// A planner lists, another client withdraws `lookup`, the planner gets `list_changed`
    /// and then (`refresh`) lists again or (not) calls `lookup` from its old list.
    fn log(refresh: bool, announce: bool) -> String {
        let init = format!(
            concat!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{{"capabilities":{{"tools":"#,
                r#"{{"listChanged":{announce}}}}}}}}}"#
            ),
            announce = announce
        );
        let both =
            r#"{"jsonrpc":"2.0","id":ID,"result":{"tools":[{"name":"lookup"},{"name":"search"}]}}"#;
        let one = r#"{"jsonrpc":"2.0","id":ID,"result":{"tools":[{"name":"search"}]}}"#;
        let mut lines = vec![
            (
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#.to_owned(),
            ),
            ("p", "recv", init),
            (
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            ),
            ("p", "recv", both.replace("ID", "1")),
            (
                "a",
                "send",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
            ),
            ("a", "recv", both.replace("ID", "1")),
            (
                "p",
                "recv",
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
            ),
        ];
        if refresh {
            lines.push((
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
            ));
            lines.push(("p", "recv", one.replace("ID", "2")));
        } else {
            let call =
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup"}}"#;
            lines.push(("p", "send", call.to_owned()));
            let err = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#;
            lines.push(("p", "recv", err.to_owned()));
            lines.push((
                "a",
                "send",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned(),
            ));
            lines.push(("a", "recv", one.replace("ID", "2")));
        }
        lines
            .iter()
            .enumerate()
            .map(|(t, (c, d, m))| {
                format!(r#"{{"t":{t},"client":"{c}","server":"s","dir":"{d}","message":{m}}}"#)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_withdrawn_tool_called_from_a_stale_list_is_a2() {
        let ing = parse_mcp_log(&log(false, true), "m.jsonl").unwrap();
        assert_eq!(fast::detect(&ing.history).a2.len(), 1);
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "decided", "{a2:?}");
        assert_eq!(ing.report.counts["stale_list_calls"], 1);
        assert_eq!(ing.report.counts["failed_tool_calls"], 1);
        assert!(
            ing.report.notes[0].contains("line 8: p called `lookup`"),
            "{:?}",
            ing.report.notes
        );
    }

    #[test]
    fn a_refreshing_client_is_clean_and_a_silent_server_is_untold() {
        let ing = parse_mcp_log(&log(true, true), "m.jsonl").unwrap();
        assert_eq!(ing.history.len(), 0);
        assert!(matches!(
            ing.report.verdict(Anomaly::A2),
            Some(Verdict::Decided { .. })
        ));
        let ing = parse_mcp_log(&log(false, false), "m.jsonl").unwrap();
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "undecidable");
        assert!(
            a2.why().contains("capabilities.tools.listChanged"),
            "{a2:?}"
        );
        let a1 = ing.report.verdict(Anomaly::A1).unwrap();
        assert_eq!(a1.status(), "undecidable");
    }
}
