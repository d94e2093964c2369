//! An MCP JSON-RPC log as the registry timeline of a trace's tool calls: what
//! `agentsim detect --from openinference TRACE --mcp-log LOG` joins the spans with.
//!
//! The log is replayed as [`super`] reads it (a timeline per server from every client's
//! `tools/list` answers and `notifications/tools/list_changed`, each client's view over time,
//! the `tools/call` requests and their answers). A trace's tool span is matched to a logged
//! call by the **tool name** and **time**: the request was sent within the span (start ≤ sent ≤
//! end), and, when answered, answered by its end. The log's `t` and the spans' times must
//! share a clock (one host, or clocks kept in step); the trace carries no JSON-RPC id on an
//! OpenInference TOOL span, so time is the only link. Two calls of one tool inside one span
//! (two clients at once) are told apart by the client name when it is the agent's name, else
//! the span is ambiguous and its step is left untold.
//!
//! What a join does not prove: a call the log does not hold (another client, not logged) is
//! invisible; a span matched to the wrong one of two same-named calls that the clocks cannot
//! separate would take that call's registry (the ambiguity rule above keeps that to spans
//! whose window holds one call only).

use super::log::parse_log;
use super::map::{replay, Cx};
use super::timeline::Entries;
use crate::error::IngestError;
use std::path::Path;

/// A replayed MCP log, for joining with a trace.
pub struct McpLog {
    /// The log's name in messages.
    pub file: String,
    cx: Cx,
}

/// What the join needs of one logged call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedCall<'a> {
    pub client: &'a str,
    pub server: &'a str,
    /// The request's line in the log.
    pub line: usize,
    /// When the request was sent (the log's `t`).
    pub sent: u64,
    /// `None`: unanswered; `Some(false)`: answered with an error (the effect did not land).
    pub landed: Option<bool>,
}

impl McpLog {
    /// Reads and replays an MCP JSON-RPC log file.
    pub fn read(path: impl AsRef<Path>) -> Result<McpLog, IngestError> {
        let (text, file) = super::read_text(path.as_ref())?;
        McpLog::parse(&text, &file)
    }

    /// Replays MCP JSON-RPC log text; `file` names it.
    pub fn parse(text: &str, file: &str) -> Result<McpLog, IngestError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines = parse_log(text, file)?;
        Ok(McpLog {
            file: file.to_owned(),
            cx: replay(&lines),
        })
    }

    /// How many `tools/call` requests the log holds.
    pub fn calls(&self) -> usize {
        self.cx.calls.len()
    }

    /// The call at `i` (an index from [`McpLog::candidates`]).
    pub fn call(&self, i: usize) -> LoggedCall<'_> {
        let c = &self.cx.calls[i];
        LoggedCall {
            client: &c.client,
            server: &c.server,
            line: c.sent.1,
            sent: c.sent.0,
            landed: c.answered.as_ref().map(|a| a.1),
        }
    }

    /// The calls of `tool` sent within `[start, end]` and, when answered, answered by `end`,
    /// in log order.
    pub fn candidates(&self, tool: &str, start: u64, end: u64) -> Vec<usize> {
        let within = |t: u64| start <= t && t <= end;
        (self.cx.calls.iter().enumerate())
            .filter(|(_, c)| c.tool == tool && within(c.sent.0))
            .filter(|(_, c)| c.answered.as_ref().is_none_or(|a| a.0 .0 <= end))
            .map(|(i, _)| i)
            .collect()
    }

    /// The client's view of the server's tools at `t`: the latest complete `tools/list`
    /// answer it received at or before `t`.
    pub fn view_at(&self, client: &str, server: &str, t: u64) -> Option<&Entries> {
        let log = self
            .cx
            .view_log
            .get(&(client.to_owned(), server.to_owned()))?;
        let i = log.partition_point(|((at, _), _)| *at <= t);
        i.checked_sub(1).map(|i| &log[i].1)
    }

    /// The server's list when call `i` was sent, from every client's messages (see
    /// [`super::timeline::Timeline::at`]); `None` when no `tools/list` answer resolves it.
    pub fn registry_at_call(&self, i: usize) -> Option<&Entries> {
        let c = &self.cx.calls[i];
        self.cx.servers.get(&c.server)?.at(c.sent)
    }

    /// Whether the server declared `capabilities.tools.listChanged` (so its timeline holds
    /// every change).
    pub fn announces(&self, server: &str) -> bool {
        self.cx.servers.get(server).is_some_and(|tl| tl.announces)
    }

    /// `notifications/tools/list_changed` receptions over all servers.
    pub fn changes(&self) -> usize {
        self.cx.servers.values().map(|tl| tl.changes()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: u64, client: &str, dir: &str, message: &str) -> String {
        format!(r#"{{"t":{t},"client":"{client}","server":"s","dir":"{dir}","message":{message}}}"#)
    }

    #[test]
    fn calls_views_and_the_registry_at_dispatch() {
        let init =
            r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{"listChanged":true}}}}"#;
        let two = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b"}]}}"#;
        let one = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}"#;
        let text = [
            line(
                1,
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#,
            ),
            line(2, "p", "recv", init),
            line(
                3,
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            ),
            line(4, "p", "recv", two),
            line(
                5,
                "q",
                "recv",
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
            ),
            line(
                6,
                "q",
                "send",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            ),
            line(7, "q", "recv", one),
            line(
                8,
                "p",
                "send",
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"}}"#,
            ),
            line(
                9,
                "p",
                "recv",
                r#"{"jsonrpc":"2.0","id":3,"result":{"isError":true}}"#,
            ),
        ]
        .join("\n");
        let log = McpLog::parse(&text, "m.jsonl").unwrap();
        assert_eq!(log.calls(), 1);
        assert_eq!(log.candidates("a", 8, 9), vec![0]);
        assert!(
            log.candidates("a", 8, 8).is_empty(),
            "answered after the span ended"
        );
        assert!(log.candidates("b", 0, 99).is_empty());
        let c = log.call(0);
        assert_eq!((c.client, c.line, c.landed), ("p", 8, Some(false)));
        let a = |v: &[&str]| -> Entries { v.iter().map(|t| (t.to_string(), 0)).collect() };
        assert_eq!(log.view_at("p", "s", 7), Some(&a(&["a", "b"])));
        assert_eq!(log.view_at("p", "s", 3), None);
        assert_eq!(log.registry_at_call(0), Some(&a(&["b"])));
        assert!(log.announces("s"));
        assert_eq!(log.changes(), 1);
    }
}
