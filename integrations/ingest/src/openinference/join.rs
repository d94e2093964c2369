//! OpenInference spans joined with an MCP JSON-RPC log: each tool span matched to the
//! `tools/call` it made, so a step's registries come from the server's real timeline.
//!
//! For a step whose planned tool's span matched a logged call ([`McpLog::candidates`]: same
//! tool name, request sent within the span): `read_registry` = the calling client's latest
//! `tools/list` answer before the step's LLM span started (what the plan was offered);
//! `write_registry` = the server's list when the call was sent, from every client's answers and
//! `list_changed` notifications. A step whose planned tool matched no call (a local function
//! tool, a client the log does not hold, clocks that do not line up), matched several, or whose
//! server's registry the log cannot resolve, is left without a read registry (so it can give
//! no A2 witness) and counted; A2 is decided only when every planned step joined.
//!
//! What a pass does not prove: a server that changes its list without announcing it
//! (no `capabilities.tools.listChanged`) leaves A2 untold; a registry change made through a
//! client the log does not hold shows only once some logged client lists again.

use crate::mcp::McpLog;
use crate::report::Verdict;
use std::collections::BTreeSet;

/// The registries of one step, from the log.
pub type Entries = Vec<(String, u32)>;

/// How a tool span met the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// The call at this index.
    Call(usize),
    /// No logged call of that tool inside the span.
    None,
    /// Several, and the client names do not tell which.
    Ambiguous,
}

/// The join's state over one trace.
pub struct Join<'a> {
    log: &'a McpLog,
    claimed: BTreeSet<usize>,
    /// Planned steps whose registries came from the log.
    pub joined: u64,
    unmatched: u64,
    ambiguous: u64,
    no_view: u64,
    unresolved: u64,
    silent: BTreeSet<String>,
    /// Tool spans matched to a call, and those whose call the log says failed.
    pub matched_spans: u64,
    pub failed_calls: u64,
}

impl<'a> Join<'a> {
    pub fn new(log: &'a McpLog) -> Join<'a> {
        Join {
            log,
            claimed: BTreeSet::new(),
            joined: 0,
            unmatched: 0,
            ambiguous: 0,
            no_view: 0,
            unresolved: 0,
            silent: BTreeSet::new(),
            matched_spans: 0,
            failed_calls: 0,
        }
    }

    /// Matches a tool span (`tool`, `[start, end]`, of `agent`) to a logged call not matched
    /// before; several candidates are narrowed to the client named `agent`.
    pub fn match_span(&mut self, tool: &str, start: u64, end: u64, agent: &str) -> Match {
        let free: Vec<usize> = (self.log.candidates(tool, start, end).into_iter())
            .filter(|i| !self.claimed.contains(i))
            .collect();
        let pick = match free.as_slice() {
            [] => return Match::None,
            [one] => *one,
            many => {
                let named: Vec<usize> = (many.iter().copied())
                    .filter(|&i| self.log.call(i).client == agent)
                    .collect();
                match named.as_slice() {
                    [one] => *one,
                    _ => return Match::Ambiguous,
                }
            }
        };
        self.claimed.insert(pick);
        self.matched_spans += 1;
        if self.log.call(pick).landed == Some(false) {
            self.failed_calls += 1;
        }
        Match::Call(pick)
    }

    /// Whether the logged call's effect did not land (an error answer).
    pub fn failed(&self, m: Match) -> bool {
        matches!(m, Match::Call(i) if self.log.call(i).landed == Some(false))
    }

    /// The (read, write) registries of a planned step whose planned tool's span met the log
    /// as `m`, planned at `plan_at`; `None` (counted) when the log cannot give them.
    pub fn registries(&mut self, m: Match, plan_at: u64) -> Option<(Entries, Entries)> {
        let i = match m {
            Match::Call(i) => i,
            Match::None => {
                self.unmatched += 1;
                return None;
            }
            Match::Ambiguous => {
                self.ambiguous += 1;
                return None;
            }
        };
        let c = self.log.call(i);
        if !self.log.announces(c.server) {
            self.silent.insert(c.server.to_owned());
            return None;
        }
        let Some(read) = self.log.view_at(c.client, c.server, plan_at) else {
            self.no_view += 1;
            return None;
        };
        let Some(write) = self.log.registry_at_call(i) else {
            self.unresolved += 1;
            return None;
        };
        self.joined += 1;
        Some((read.clone(), write.clone()))
    }

    /// A2 over `planned` planned steps, of which [`Join::joined`] got their registries.
    pub fn a2(&self, planned: u64) -> Verdict {
        let how = format!(
            "joined with {}: a TOOL span is the tools/call of its tool.name whose request was \
             sent within the span; read registry = the calling client's latest tools/list \
             answer before the step's LLM span; write registry = the server's list when the \
             call was sent, from every client's tools/list answers and {} \
             notifications/tools/list_changed",
            self.log.file,
            self.log.changes()
        );
        if self.joined == planned {
            return Verdict::Decided {
                basis: format!("{how}; all {planned} planned steps joined"),
            };
        }
        let left = self.gaps();
        if self.joined == 0 {
            return Verdict::Undecidable {
                reason: format!("{how}; none of the {planned} planned steps joined ({left})"),
            };
        }
        Verdict::LowerBound {
            basis: format!(
                "{how}; {} of {planned} planned steps joined, the others are left without a \
                 registry ({left}): a witness is real, none cannot be told",
                self.joined
            ),
        }
    }

    /// Why planned steps did not join, for the verdict's text.
    fn gaps(&self) -> String {
        let mut out = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                out.push(format!("{n} {what}"));
            }
        };
        say(
            self.unmatched,
            "planned tools matched no tools/call in the log (a local tool, an unlogged client, \
             or clocks apart)",
        );
        say(
            self.ambiguous,
            "planned tools matched several calls the client names do not tell apart",
        );
        say(
            self.no_view,
            "came from a client with no tools/list answer before the plan",
        );
        say(
            self.unresolved,
            "were sent after a list_changed that no later tools/list resolves",
        );
        if !self.silent.is_empty() {
            let s: Vec<&str> = self.silent.iter().map(String::as_str).collect();
            out.push(format!(
                "{} did not declare capabilities.tools.listChanged",
                s.join(", ")
            ));
        }
        out.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_openinference_with, read_detected, Beside, Export};
    use crate::mcp::McpLog;
    use agentsim_models::detect::fast;
    use agentsim_models::Anomaly;

    fn span(id: &str, parent: &str, t: (u64, u64), attrs: &[(&str, &str)]) -> String {
        let attrs: Vec<String> = (attrs.iter())
            .map(|(k, v)| format!(r#"{{"key":"{k}","value":{{"stringValue":{v:?}}}}}"#))
            .collect();
        let parent = match parent {
            "" => String::new(),
            p => format!(r#""parentSpanId":"{p}","#),
        };
        format!(
            r#"{{"traceId":"t","spanId":"{id}",{parent}"name":"{id}","startTimeUnixNano":{},"endTimeUnixNano":{},"attributes":[{}]}}"#,
            t.0,
            t.1,
            attrs.join(",")
        )
    }

    /// The corpus's `a2_mcp` in small: the planner plans `lookup`; while its generation is in
    /// flight the admin's `retire_tool` withdraws `retired`, and the planner calls `lookup`.
    fn trace() -> String {
        let k = "openinference.span.kind";
        let call = "llm.output_messages.0.message.tool_calls.0.tool_call.function.name";
        let spans = [
            span("wf", "", (0, 1000), &[(k, "AGENT")]),
            span(
                "p",
                "wf",
                (1, 900),
                &[(k, "AGENT"), ("agent.name", "planner")],
            ),
            span("g1", "p", (10, 500), &[(k, "LLM"), (call, "lookup")]),
            span(
                "t1",
                "p",
                (510, 520),
                &[(k, "TOOL"), ("tool.name", "lookup")],
            ),
            span(
                "a",
                "wf",
                (100, 400),
                &[(k, "AGENT"), ("agent.name", "admin")],
            ),
            span("g2", "a", (110, 150), &[(k, "LLM"), (call, "retire_tool")]),
            span(
                "t2",
                "a",
                (160, 200),
                &[(k, "TOOL"), ("tool.name", "retire_tool")],
            ),
        ];
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
            spans.join(",")
        )
    }

    fn log(retired: &str, shift: u64) -> String {
        let tools = |names: &[&str]| -> String {
            let v: Vec<String> = names
                .iter()
                .map(|n| format!(r#"{{"name":"{n}"}}"#))
                .collect();
            v.join(",")
        };
        let all = tools(&["lookup", "retire_tool", "search"]);
        let left: Vec<&str> = ["lookup", "retire_tool", "search"]
            .into_iter()
            .filter(|t| *t != retired)
            .collect();
        let left = tools(&left);
        let init = r#"{"capabilities":{"tools":{"listChanged":true}}}"#;
        let lost = if retired == "lookup" { "true" } else { "false" };
        let lines: Vec<(u64, &str, &str, String)> = vec![
            (
                2,
                "planner",
                "send",
                r#""id":0,"method":"initialize""#.into(),
            ),
            (3, "planner", "recv", format!(r#""id":0,"result":{init}"#)),
            (
                5,
                "planner",
                "send",
                r#""id":1,"method":"tools/list""#.into(),
            ),
            (
                6,
                "planner",
                "recv",
                format!(r#""id":1,"result":{{"tools":[{all}]}}"#),
            ),
            (
                101,
                "admin",
                "send",
                r#""id":0,"method":"initialize""#.into(),
            ),
            (102, "admin", "recv", format!(r#""id":0,"result":{init}"#)),
            (
                105,
                "admin",
                "send",
                r#""id":1,"method":"tools/list""#.into(),
            ),
            (
                106,
                "admin",
                "recv",
                format!(r#""id":1,"result":{{"tools":[{all}]}}"#),
            ),
            (
                165,
                "admin",
                "send",
                r#""id":2,"method":"tools/call","params":{"name":"retire_tool"}"#.into(),
            ),
            (
                170,
                "planner",
                "recv",
                r#""method":"notifications/tools/list_changed""#.into(),
            ),
            (
                171,
                "admin",
                "recv",
                r#""method":"notifications/tools/list_changed""#.into(),
            ),
            (
                190,
                "admin",
                "recv",
                r#""id":2,"result":{"content":[]}"#.into(),
            ),
            (
                210,
                "admin",
                "send",
                r#""id":3,"method":"tools/list""#.into(),
            ),
            (
                211,
                "admin",
                "recv",
                format!(r#""id":3,"result":{{"tools":[{left}]}}"#),
            ),
            (
                512,
                "planner",
                "send",
                r#""id":2,"method":"tools/call","params":{"name":"lookup"}"#.into(),
            ),
            (
                515,
                "planner",
                "recv",
                format!(r#""id":2,"result":{{"content":[],"isError":{lost}}}"#),
            ),
        ];
        (lines.into_iter())
            .map(|(t, c, d, m)| {
                let t = t + shift;
                format!(
                    r#"{{"t":{t},"client":"{c}","server":"s","dir":"{d}","message":{{"jsonrpc":"2.0",{m}}}}}"#
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_tool_withdrawn_during_the_plan_is_a2_from_spans_and_log() {
        let mcp = McpLog::parse(&log("lookup", 0), "m.jsonl").unwrap();
        let ing = parse_openinference_with(&trace(), "t.json", Beside::mcp(&mcp)).unwrap();
        assert_eq!(fast::detect(&ing.history).a2.len(), 1);
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "decided", "{a2:?}");
        assert!(a2.why().contains("all 2 planned steps joined"), "{a2:?}");
        assert_eq!(ing.report.counts["mcp_log_matched_tool_spans"], 2);
        assert_eq!(ing.report.counts["mcp_log_failed_calls"], 1);
        // The failed call did not land: the planner's step has no effect.
        assert_eq!(
            ing.history
                .records
                .iter()
                .map(|r| r.io.len())
                .sum::<usize>(),
            1
        );

        let fixed = McpLog::parse(&log("search", 0), "m.jsonl").unwrap();
        let ing = parse_openinference_with(&trace(), "t.json", Beside::mcp(&fixed)).unwrap();
        assert!(fast::detect(&ing.history).a2.is_empty());
        assert_eq!(ing.report.verdict(Anomaly::A2).unwrap().status(), "decided");

        // Without the log, the spans alone cannot tell.
        let alone = parse_openinference_with(&trace(), "t.json", Beside::default()).unwrap();
        assert_eq!(
            alone.report.verdict(Anomaly::A2).unwrap().status(),
            "undecidable"
        );
    }

    #[test]
    fn calls_the_clocks_do_not_place_in_a_span_leave_a2_untold() {
        let mcp = McpLog::parse(&log("lookup", 1_000_000), "m.jsonl").unwrap();
        let ing = parse_openinference_with(&trace(), "t.json", Beside::mcp(&mcp)).unwrap();
        let a2 = ing.report.verdict(Anomaly::A2).unwrap();
        assert_eq!(a2.status(), "undecidable", "{a2:?}");
        assert!(
            a2.why().contains("none of the 2 planned steps joined"),
            "{a2:?}"
        );
        assert!(
            a2.why().contains("2 planned tools matched no tools/call"),
            "{a2:?}"
        );
        assert!(fast::detect(&ing.history).a2.is_empty());
    }

    #[test]
    fn otel_reads_openinference_spans_and_refuses_a_mixed_export() {
        let ing = read_detected(Export::Text(&trace()), "t.json", Beside::default()).unwrap();
        assert_eq!(ing.report.source, crate::Source::Openinference);
        assert_eq!(
            ing.report.notes[0],
            "spans are OpenInference (openinference.span.kind); read as --from openinference"
        );
        assert_eq!(ing.history.len(), 2);
        let genai = r#"{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}"#;
        let chat = format!(
            r#"{{"traceId":"u","spanId":"c","name":"chat","startTimeUnixNano":1,"endTimeUnixNano":2,"attributes":[{genai}]}}"#
        );
        let mixed = trace().replacen("\"spans\":[", &format!("\"spans\":[{chat},"), 1);
        let err = read_detected(Export::Text(&mixed), "x.json", Beside::default()).unwrap_err();
        let err = err.to_string();
        assert!(
            err.starts_with(
                "x.json: the export mixes span conventions: 7 OpenInference step spans"
            ),
            "{err}"
        );
        assert!(err.contains("1 GenAI spans"), "{err}");
        // Read as OpenInference on request, the GenAI span is counted and said.
        let ing = parse_openinference_with(&mixed, "x.json", Beside::default()).unwrap();
        assert_eq!(ing.report.counts["genai_spans_not_read"], 1);
        assert!(
            ing.report.notes.iter().any(|n| n.contains("1 GenAI spans")),
            "{:?}",
            ing.report.notes
        );
        // A GenAI export with a stray OpenInference CHAIN span stays with the GenAI reader.
        let chain = r#"{"key":"openinference.span.kind","value":{"stringValue":"CHAIN"}}"#;
        let genai_only = format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{},{}]}}]}}]}}"#,
            chat,
            chat.replace("\"c\"", "\"d\"").replace(genai, chain)
        );
        let ing = read_detected(Export::Text(&genai_only), "g.json", Beside::default()).unwrap();
        assert_eq!(ing.report.source, crate::Source::Otel);
        let err = read_detected(
            Export::Text(&genai_only),
            "g.json",
            Beside::mcp(&McpLog::parse(&log("x", 0), "m.jsonl").unwrap()),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("--mcp-log m.jsonl joins OpenInference tool spans"),
            "{err}"
        );
    }
}
