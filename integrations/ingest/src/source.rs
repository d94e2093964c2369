//! Where a history came from ([`Source`]), what is read beside it ([`Options`]), the one
//! reader every command calls ([`load`]), and what each source can decide of each anomaly
//! ([`Source::coverage`]).
//!
//! The command line names a source with `--from` ([`Source::parse`], whose help is
//! [`FROM_HELP`]); a [`Report`](crate::Report) names the source whose reader made it. The flags
//! that only some sources take (`--thread`, `--tool-memory`, `--mcp-log`) are checked here, once
//! ([`Options::check`]), so every command refuses them in the same words.
//!
//! The verdict table is complete by construction: [`Source::coverage`] matches every source
//! against every anomaly of [`Anomaly::ALL`] without a wildcard, so a new anomaly or a new
//! source does not compile until it says what the source shows of it. A verdict the table
//! expects from the reader and the report lacks is *cannot tell*, never *decided*.

use crate::mcp::{parse_mcp_log, read_mcp_log, McpLog};
use crate::openinference::{
    parse_openinference_with, read_detected, read_openinference_with, Beside, Export,
};
use crate::otel::{mapping::Mapping, parse_otel_with, read_otel_with};
use crate::{langgraph::read_langgraph, IngestError, Ingested};
use agentsim_models::Anomaly;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Where a history came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// OTLP/JSON traces: GenAI spans, or OpenInference spans (detected, and said so). A report
    /// of GenAI spans names this source (`otel`), whichever of `otel` and `genai` read them.
    Otel,
    /// OTLP/JSON traces read by the OpenTelemetry GenAI conventions only (for an export mixing
    /// both conventions).
    Genai,
    /// OTLP/JSON traces of OpenInference spans (`openinference.span.kind`).
    Openinference,
    /// An MCP client's JSON-RPC log.
    Mcp,
    /// A LangGraph SQLite checkpointer database (one thread).
    Langgraph,
    /// A history the Python recorder wrote, with its report beside it: JSON Lines, read
    /// without `--from` (the report with `detect --ingest-report`).
    Recorder,
}

/// The help of `--from`: every source a command reads, one line each.
pub const FROM_HELP: &str = "Read FILE as a trace, a log or a checkpointer database instead of a \
     JSON Lines history: `otel` (OTLP/JSON: GenAI spans, or OpenInference spans, detected and \
     said so), `genai` (OTLP/JSON by the GenAI conventions only, for an export mixing both), \
     `openinference` (OTLP/JSON OpenInference spans), `mcp` (an MCP client's JSON-RPC log), \
     `langgraph` (a LangGraph SQLite checkpointer database; `--thread` picks the thread)";

impl Source {
    /// The sources `--from` takes, in the order the help lists them.
    pub const FROM: [Source; 5] = [
        Source::Otel,
        Source::Genai,
        Source::Openinference,
        Source::Mcp,
        Source::Langgraph,
    ];

    /// Its name on the command line and in a report.
    pub fn name(self) -> &'static str {
        match self {
            Source::Otel => "otel",
            Source::Genai => "genai",
            Source::Openinference => "openinference",
            Source::Mcp => "mcp",
            Source::Langgraph => "langgraph",
            Source::Recorder => "recorder",
        }
    }

    /// The source a report names (`otel`, `openinference`, `mcp`, `langgraph`, `recorder`).
    pub fn of_report(name: &str) -> Option<Source> {
        let all = Source::FROM.into_iter().chain([Source::Recorder]);
        all.filter(|&s| s != Source::Genai)
            .find(|s| s.name() == name)
    }

    /// A `--from` value: one of [`Source::FROM`], by name.
    pub fn parse(s: &str) -> Result<Source, String> {
        if let Some(found) = Source::FROM.into_iter().find(|x| x.name() == s) {
            return Ok(found);
        }
        if s == Source::Recorder.name() {
            return Err(
                "a recorder's history is JSON Lines: read it without --from, and \
                        its report with --ingest-report"
                    .to_owned(),
            );
        }
        let names: Vec<&str> = Source::FROM.into_iter().map(Source::name).collect();
        Err(format!(
            "unknown source `{s}` (expected {})",
            names.join(", ")
        ))
    }

    /// What the input is called in messages.
    pub fn what(self) -> &'static str {
        match self {
            Source::Otel | Source::Genai | Source::Openinference => "the trace",
            Source::Mcp => "the log",
            Source::Langgraph => "the database",
            Source::Recorder => "the history",
        }
    }

    /// Whether its input is tool spans a `--tool-memory` mapping can map.
    pub fn takes_tool_memory(self) -> bool {
        match self {
            Source::Otel | Source::Genai | Source::Openinference => true,
            Source::Mcp | Source::Langgraph | Source::Recorder => false,
        }
    }

    /// Whether its input can be OpenInference spans, which `--mcp-log` joins.
    pub fn takes_mcp_log(self) -> bool {
        match self {
            Source::Otel | Source::Openinference => true,
            Source::Genai | Source::Mcp | Source::Langgraph | Source::Recorder => false,
        }
    }

    /// What this source's input can show of `a`: the verdict table. Exhaustive over both
    /// enums, with no wildcard.
    pub fn coverage(self, a: Anomaly) -> Coverage {
        use Source::*;
        match a {
            // Every reader judges the lattice's four from its input and says so per anomaly.
            Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A6 => match self {
                Otel | Genai | Openinference | Mcp | Langgraph | Recorder => Coverage::Report,
            },
            // Split view compares reads served by different replicas: only the records' own
            // replica metadata can show it.
            Anomaly::A4 => match self {
                Otel | Genai | Openinference | Mcp => Coverage::Unobservable(
                    "spans and JSON-RPC messages do not say which replica served a read",
                ),
                Langgraph => Coverage::Unobservable(
                    "a checkpointer database is one store: no read is served by a replica",
                ),
                Recorder => Coverage::History,
            },
            Anomaly::A3Residue => match self {
                Otel | Genai | Openinference | Mcp | Langgraph | Recorder => {
                    Coverage::Unobservable("the A3 residue form is a diagnostic, not a verdict")
                }
            },
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a source's input can show of one anomaly ([`Source::coverage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// The reader judges it and its report says how far (decided, a bound, undecidable); a
    /// report without it cannot tell.
    Report,
    /// The history's own records decide it (A4 on a recorded history: its replica metadata).
    History,
    /// The input cannot show it: *cannot tell*, for the reason given.
    Unobservable(&'static str),
}

/// What is read, and beside it: the source and the flags only some sources take.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--from`: `None` is a JSON Lines history, which this crate does not read.
    pub from: Option<Source>,
    /// `--thread`: the LangGraph thread (the only one, when `None`).
    pub thread: Option<String>,
    /// `--tool-memory`: a mapping of the tools that are memory (tool spans).
    pub tool_memory: Option<PathBuf>,
    /// `--mcp-log`: an MCP JSON-RPC log of the same run (OpenInference tool spans).
    pub mcp_log: Option<PathBuf>,
}

impl Options {
    /// Refuses a flag its source does not take, in the same words whichever command has it.
    pub fn check(&self) -> Result<(), IngestError> {
        let from = self.from;
        let refuse = |message: &str| Err(IngestError::Options(message.to_owned()));
        if self.thread.is_some() && from != Some(Source::Langgraph) {
            return refuse("--thread applies to --from langgraph only");
        }
        if self.tool_memory.is_some() && !from.is_some_and(Source::takes_tool_memory) {
            return refuse(
                "--tool-memory maps tool spans: it applies to --from otel, genai or \
                 openinference",
            );
        }
        if self.mcp_log.is_some() && !from.is_some_and(Source::takes_mcp_log) {
            return refuse(
                "--mcp-log joins an OpenInference trace: it applies to --from otel or \
                 openinference",
            );
        }
        Ok(())
    }
}

/// Reads `file` (`-` is stdin, except for a database) as `options` say, with what is read
/// beside it: the one reader of every command, so the history saved by `ingest` is the one
/// `detect`, `fit`, `fix` and `view` read. `options.from` must name a source.
pub fn load(file: &Path, options: &Options) -> Result<Ingested, IngestError> {
    options.check()?;
    let Some(source) = options.from else {
        return Err(IngestError::Options(
            "a JSON Lines history is read by agentsim-jsonl, not by an ingestion".to_owned(),
        ));
    };
    let log = options.mcp_log.as_deref().map(McpLog::read).transpose()?;
    let mapping = options
        .tool_memory
        .as_deref()
        .map(Mapping::read)
        .transpose()?;
    let with = Beside {
        mcp: log.as_ref(),
        mapping: mapping.as_ref(),
    };
    let stdin = file.as_os_str() == "-";
    let name = match stdin {
        true => "<stdin>".to_owned(),
        false => file.display().to_string(),
    };
    let text = || read_stdin();
    match source {
        Source::Otel if stdin => read_detected(Export::Text(&text()?), &name, with),
        Source::Otel => read_detected(Export::File(file), &name, with),
        Source::Genai if stdin => parse_otel_with(&text()?, &name, with.mapping),
        Source::Genai => read_otel_with(file, with.mapping),
        Source::Openinference if stdin => parse_openinference_with(&text()?, &name, with),
        Source::Openinference => read_openinference_with(file, with),
        Source::Mcp if stdin => parse_mcp_log(&text()?, &name),
        Source::Mcp => read_mcp_log(file),
        Source::Langgraph if stdin => Err(IngestError::Options(
            "a LangGraph database is read from a file, not from stdin".to_owned(),
        )),
        Source::Langgraph => read_langgraph(file, options.thread.as_deref()),
        Source::Recorder => Err(IngestError::Options(
            "a recorder's history is JSON Lines: read it without --from".to_owned(),
        )),
    }
}

/// The names an OTLP/JSON export gives the code that made its spans: each instrumentation
/// scope's `name` and the resource attributes `service.name`, `telemetry.sdk.name` and
/// `telemetry.distro.name`, each once, sorted. `file` is read whole (one document, or one a
/// line); a document that does not parse is left out, since the reader has already judged the
/// file, and this only names its framework.
pub fn instrumentation(file: &Path) -> Result<std::collections::BTreeSet<String>, IngestError> {
    use serde_json::Value;
    let text = std::fs::read_to_string(file).map_err(|source| IngestError::Io {
        file: file.display().to_string(),
        source,
    })?;
    let mut names = std::collections::BTreeSet::new();
    let docs = serde_json::Deserializer::from_str(&text).into_iter::<Value>();
    let list = |v: &Value, camel: &str, snake: &str| -> Vec<Value> {
        let found = v.get(camel).or_else(|| v.get(snake));
        found.and_then(Value::as_array).cloned().unwrap_or_default()
    };
    for doc in docs.map_while(Result::ok) {
        for rs in list(&doc, "resourceSpans", "resource_spans") {
            let attributes = rs
                .get("resource")
                .map(|r| list(r, "attributes", "attributes"));
            for kv in attributes.unwrap_or_default() {
                let key = kv.get("key").and_then(Value::as_str);
                let keys = [
                    "service.name",
                    "telemetry.sdk.name",
                    "telemetry.distro.name",
                ];
                let value = kv.pointer("/value/stringValue").and_then(Value::as_str);
                if let (Some(k), Some(v)) = (key, value) {
                    if keys.contains(&k) {
                        names.insert(v.to_owned());
                    }
                }
            }
            for ss in list(&rs, "scopeSpans", "scope_spans") {
                let name = ss.pointer("/scope/name").and_then(Value::as_str);
                names.extend(name.filter(|n| !n.is_empty()).map(str::to_owned));
            }
        }
    }
    Ok(names)
}

fn read_stdin() -> Result<String, IngestError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|source| IngestError::Io {
            file: "<stdin>".to_owned(),
            source,
        })?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_parses_by_its_name_and_the_help_lists_it() {
        for s in Source::FROM {
            assert_eq!(Source::parse(s.name()), Ok(s));
            assert!(FROM_HELP.contains(&format!("`{}`", s.name())), "{s}");
        }
        let err = Source::parse("otlp").unwrap_err();
        assert_eq!(
            err,
            "unknown source `otlp` (expected otel, genai, openinference, mcp, langgraph)"
        );
        assert!(Source::parse("recorder")
            .unwrap_err()
            .contains("--ingest-report"));
    }

    #[test]
    fn a_report_names_the_readers_of_its_convention() {
        for name in ["otel", "openinference", "mcp", "langgraph", "recorder"] {
            assert_eq!(Source::of_report(name).map(Source::name), Some(name));
        }
        // `genai` reads GenAI spans, whose report says `otel`.
        assert_eq!(Source::of_report("genai"), None);
    }

    #[test]
    fn the_lattice_anomalies_are_the_readers_to_judge() {
        let all = Source::FROM.into_iter().chain([Source::Recorder]);
        for s in all {
            for a in Anomaly::LATTICE {
                assert_eq!(s.coverage(a), Coverage::Report, "{s} {a}");
            }
            assert_ne!(s.coverage(Anomaly::A3Residue), Coverage::Report, "{s}");
        }
        assert_eq!(Source::Recorder.coverage(Anomaly::A4), Coverage::History);
        assert!(matches!(
            Source::Otel.coverage(Anomaly::A4),
            Coverage::Unobservable(_)
        ));
    }

    #[test]
    fn an_export_names_its_scopes_and_service() {
        let dir = std::env::temp_dir().join(format!("agentsim-instr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.json");
        let doc = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name",
            "value":{"stringValue":"shop"}},{"key":"host","value":{"stringValue":"h"}}]},
            "scopeSpans":[{"scope":{"name":"gcp.vertex.agent"},"spans":[]}]}]}"#;
        let line = doc.replace('\n', "");
        std::fs::write(&f, format!("{line}\n{line}\n")).unwrap();
        let names: Vec<String> = instrumentation(&f).unwrap().into_iter().collect();
        assert_eq!(names, ["gcp.vertex.agent", "shop"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flags_a_source_does_not_take_are_refused_once() {
        let with = |from, thread: Option<&str>, map: bool, log: bool| Options {
            from,
            thread: thread.map(str::to_owned),
            tool_memory: map.then(|| PathBuf::from("m.toml")),
            mcp_log: log.then(|| PathBuf::from("l.jsonl")),
        };
        let err = |o: Options| o.check().unwrap_err().to_string();
        assert!(err(with(Some(Source::Otel), Some("t"), false, false)).contains("--thread"));
        assert!(err(with(None, None, true, false)).contains("--tool-memory maps tool spans"));
        assert!(err(with(Some(Source::Mcp), None, true, false)).contains("--tool-memory"));
        assert!(err(with(Some(Source::Genai), None, false, true)).contains("--mcp-log joins"));
        assert!(err(with(None, None, false, true)).contains("--mcp-log joins"));
        assert!(with(Some(Source::Otel), None, true, true).check().is_ok());
        assert!(with(Some(Source::Langgraph), Some("t"), false, false)
            .check()
            .is_ok());
    }
}
