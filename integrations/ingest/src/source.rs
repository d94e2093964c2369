//! Where a history came from ([`Source`]) and what each source can decide of each anomaly
//! ([`Source::coverage`]). What is read beside it and the one reader every command calls are
//! [`crate::load`]'s.
//!
//! The command line names a source with `--from` ([`Source::parse`], whose help is
//! [`FROM_HELP`]); a [`Report`](crate::Report) names the source whose reader made it. The flags
//! that only some sources take (`--thread`, `--tool-memory`, `--mcp-log`) are checked here, once
//! ([`crate::Options::check`]), so every command refuses them in the same words.
//!
//! The verdict table is complete by construction: [`Source::coverage`] matches every source
//! against every anomaly of [`Anomaly::ALL`] without a wildcard, so a new anomaly or a new
//! source does not compile until it says what the source shows of it. A verdict the table
//! expects from the reader and the report lacks is *cannot tell*, never *decided*.

use agentsim_models::Anomaly;

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
}
