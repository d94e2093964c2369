//! What is read beside a history ([`Options`]), checked once so every command refuses a flag
//! its source does not take in the same words, and the one reader every command calls
//! ([`load`]). This sits above the readers; [`crate::source`] sits below them, so a report
//! can name its source without reaching back up here.

use crate::initial::Initial;
use crate::mcp::{parse_mcp_log, read_mcp_log, McpLog};
use crate::openinference::{
    parse_openinference_with, read_detected, read_openinference_with, Beside, Export,
};
use crate::otel::{mapping::Mapping, parse_otel_with, read_otel_with};
use crate::report::Verdict;
use crate::source::Source;
use crate::{langgraph::read_langgraph, IngestError, Ingested};
use agentsim_models::{Anomaly, History};
use std::io::Read as _;
use std::path::{Path, PathBuf};

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
    if file.as_os_str() == "-" {
        if source == Source::Langgraph {
            return Err(IngestError::Options(
                "a LangGraph database is read from a file, not from stdin".to_owned(),
            ));
        }
        return load_text(&read_stdin()?, "<stdin>", options);
    }
    let (log, mapping) = beside(options)?;
    let with = Beside {
        mcp: log.as_ref(),
        mapping: mapping.as_ref(),
    };
    let name = file.display().to_string();
    let read = match source {
        Source::Otel => read_detected(Export::File(file), &name, with),
        Source::Genai => read_otel_with(file, with.mapping),
        Source::Openinference => read_openinference_with(file, with),
        Source::Mcp => read_mcp_log(file),
        Source::Langgraph => read_langgraph(file, options.thread.as_deref()),
        Source::Recorder => Err(IngestError::Options(
            "a recorder's history is JSON Lines: read it without --from".to_owned(),
        )),
    };
    read.map(with_initial_state)
}

/// `ing` with the state its trace began in ([`crate::initial`]): found, said in the notes,
/// and weighed into the verdicts it touches. Every trace starts in the middle of a system's
/// life; a history that shows nothing of that state is left as it was. [`load`] applies it;
/// a caller of a reader itself (on text already in memory) applies it likewise.
pub fn with_initial_state(mut ing: Ingested) -> Ingested {
    let initial = crate::initial::infer(&ing.history);
    if initial.is_empty() {
        return ing;
    }
    let h = &ing.history;
    let report = &mut ing.report;
    report.notes.extend(initial.notes(h));
    for (a, v) in &mut report.verdicts {
        *v = weigh(&initial, *a, v, h);
    }
    report.initial = initial;
    ing
}

/// A reader's verdict on `a`, weighed against the initial state's conflicts (cells whose reads
/// show writes missing from the trace): a missing write can be the intervening write of an A1
/// witness, so a conflict makes A1's "none" no answer: *decided* becomes a *lower bound*, an
/// *upper bound* becomes *undecidable*. The other anomalies do not read memory cells.
fn weigh(initial: &Initial, a: Anomaly, v: &Verdict, h: &History) -> Verdict {
    let Some((c, vs)) = initial.conflicts.first() else {
        return v.clone();
    };
    if a != Anomaly::A1 {
        return v.clone();
    }
    let more = match initial.conflicts.len() {
        1 => String::new(),
        n => format!(" (and {} more cells)", n - 1),
    };
    let why = format!(
        "{} was read as {} values no write in the trace explains ({}){more}: writes are \
         missing from the trace, and a missing write can be the one a stale read missed",
        h.names.cell_name(*c),
        vs.len(),
        initial.values_text(h, vs)
    );
    match v {
        Verdict::Decided { basis } | Verdict::LowerBound { basis } => Verdict::LowerBound {
            basis: format!("{basis}; {why}"),
        },
        Verdict::UpperBound { basis } => Verdict::Undecidable {
            reason: format!("{basis}, an upper bound; and {why}"),
        },
        Verdict::Undecidable { reason } => Verdict::Undecidable {
            reason: reason.clone(),
        },
    }
}

/// Reads `text` (an export, a log: not a database) as `options` say, naming it `name` in
/// errors and in the report: what [`load`] does with stdin, for input already in memory (the
/// spans `agentsim serve` received).
pub fn load_text(text: &str, name: &str, options: &Options) -> Result<Ingested, IngestError> {
    options.check()?;
    let Some(source) = options.from else {
        return Err(IngestError::Options(
            "a JSON Lines history is read by agentsim-jsonl, not by an ingestion".to_owned(),
        ));
    };
    let (log, mapping) = beside(options)?;
    let with = Beside {
        mcp: log.as_ref(),
        mapping: mapping.as_ref(),
    };
    let read = match source {
        Source::Otel => read_detected(Export::Text(text), name, with),
        Source::Genai => parse_otel_with(text, name, with.mapping),
        Source::Openinference => parse_openinference_with(text, name, with),
        Source::Mcp => parse_mcp_log(text, name),
        Source::Langgraph => Err(IngestError::Options(
            "a LangGraph database is read from a file, not from text".to_owned(),
        )),
        Source::Recorder => Err(IngestError::Options(
            "a recorder's history is JSON Lines: read it without --from".to_owned(),
        )),
    };
    read.map(with_initial_state)
}

/// What `options` name to read beside a trace: the MCP clients' log and the tool mapping.
pub fn beside(options: &Options) -> Result<(Option<McpLog>, Option<Mapping>), IngestError> {
    let log = options.mcp_log.as_deref().map(McpLog::read).transpose()?;
    let mapping = (options.tool_memory.as_deref())
        .map(Mapping::read)
        .transpose()?;
    Ok((log, mapping))
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

    /// A cell read as two values no record wrote: A1's "none" is no answer, its witnesses
    /// still are; the other anomalies are untouched.
    #[test]
    fn a_conflict_makes_a1_a_lower_bound() {
        let mut names = agentsim_models::Names::new();
        let c = names.cell("m");
        let (tea, milk) = (names.value("tea"), names.value("milk"));
        let read = |k: u64, v| agentsim_models::OpRecord {
            read_set: vec![c],
            read_values: agentsim_models::ValueMap::from_pairs([(c, v)]),
            read_time: k,
            write_time: k + 1,
            ..Default::default()
        };
        let mut h = History::from_records(vec![read(0, tea), read(1, milk)]);
        h.names = names;
        let initial = crate::initial::infer(&h);
        let decided = Verdict::Decided { basis: "b".into() };
        let w = weigh(&initial, Anomaly::A1, &decided, &h);
        assert_eq!(w.status(), "lower_bound");
        assert!(w.why().contains("m was read as 2 values"), "{}", w.why());
        let upper = Verdict::UpperBound { basis: "b".into() };
        assert_eq!(
            weigh(&initial, Anomaly::A1, &upper, &h).status(),
            "undecidable"
        );
        assert_eq!(weigh(&initial, Anomaly::A2, &decided, &h), decided);
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
