//! A [`Report`] read back from the JSON that `agentsim ingest --report` (and the Python
//! recorder, beside its history) writes, so that a history saved by `ingest` is judged with
//! what its input could decide: `agentsim detect HISTORY --ingest-report REPORT` gives the
//! verdicts that `detect --from` gives on the input itself.
//!
//! Reading checks the report's shape (every key, its type, the anomaly names, the statuses),
//! with serde's line and column. It does not prove the report belongs to the history beside
//! it (the caller compares the record counts), nor that its verdicts are right.

use crate::report::{Report, RunError, Verdict};
use crate::IngestError;
use agentsim_models::Anomaly;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Reads a report file.
pub fn read_report(path: impl AsRef<Path>) -> Result<Report, IngestError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| IngestError::Io {
        file: file.clone(),
        source,
    })?;
    parse_report(&text, &file)
}

/// Parses a report's JSON text; `file` names it in errors.
pub fn parse_report(text: &str, file: &str) -> Result<Report, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let raw: Raw = serde_json::from_str(text).map_err(|e| IngestError::SavedReport {
        file: file.to_owned(),
        line: e.line(),
        // serde_json ends its message with the position, which the line already says.
        message: strip_position(&e.to_string()),
    })?;
    Ok(raw.into_report())
}

/// The JSON form of [`Report::to_json`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    source: Source,
    file: String,
    records: usize,
    counts: BTreeMap<String, u64>,
    decidable: BTreeMap<Name, Entry>,
    errors: Vec<RawError>,
    notes: Vec<String>,
    /// Only when the trace showed the state it began in ([`crate::initial`]).
    #[serde(default)]
    initial_state: Option<RawInitial>,
}

/// The JSON form of a report's initial state, by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInitial {
    reads: u64,
    values: BTreeMap<String, Option<String>>,
    conflicts: Vec<String>,
}

impl Raw {
    fn into_report(self) -> Report {
        let Raw {
            source,
            file,
            records,
            counts,
            decidable,
            errors,
            notes,
            initial_state,
        } = self;
        // By name: the caller resolves it against the history's names.
        let initial = initial_state.map_or_else(Default::default, |i| crate::initial::Initial {
            reads: i.reads,
            names: crate::initial::Named {
                values: i.values.into_iter().collect(),
                conflicts: i.conflicts,
            },
            ..Default::default()
        });
        // Catalogue order, the order every ingestion lists its verdicts in.
        let verdicts = (decidable.into_iter())
            .map(|(Name(a), e)| (a, e.verdict()))
            .collect();
        let errors = (errors.into_iter())
            .map(|e| RunError {
                kind: e.error,
                code: e.code,
                message: e.message,
                records: e.records,
            })
            .collect();
        Report {
            source: source.0,
            file,
            records,
            counts,
            verdicts,
            errors,
            notes,
            wall_ns: None,
            initial,
        }
    }
}

/// A report's source, by the name the report gives it ([`crate::Source::of_report`]).
struct Source(crate::Source);

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
        d.deserialize_str(Named(|s: &str| match crate::Source::of_report(s) {
            Some(source) => Ok(Source(source)),
            None => Err(format!(
                "source: unknown `{s}` (expected otel, openinference, mcp, langgraph, recorder)"
            )),
        }))
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Name(Anomaly);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        d.deserialize_str(Named(|s: &str| {
            Anomaly::parse(s)
                .map(Name)
                .ok_or_else(|| format!("decidable: unknown anomaly `{s}`"))
        }))
    }
}

/// A string read by a name check, failing inside the string's own visit so that serde_json
/// puts the error at the string's line (a conversion after the fact would be placed at the
/// end of the enclosing object).
struct Named<F>(F);

impl<'de, T, F: FnOnce(&str) -> Result<T, String>> serde::de::Visitor<'de> for Named<F> {
    type Value = T;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<T, E> {
        (self.0)(s).map_err(E::custom)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    status: Status,
    why: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Decided,
    UpperBound,
    LowerBound,
    Undecidable,
}

impl Entry {
    fn verdict(self) -> Verdict {
        let Entry { status, why } = self;
        match status {
            Status::Decided => Verdict::Decided { basis: why },
            Status::UpperBound => Verdict::UpperBound { basis: why },
            Status::LowerBound => Verdict::LowerBound { basis: why },
            Status::Undecidable => Verdict::Undecidable { reason: why },
        }
    }
}

/// A run error. The recorder adds keys of its own (`superstep`), which a [`RunError`] does
/// not keep, so other keys are let through here only.
#[derive(Deserialize)]
struct RawError {
    error: String,
    code: Option<String>,
    message: String,
    records: Vec<usize>,
}

/// `msg at line 3 column 5` → `msg (column 5)`.
fn strip_position(msg: &str) -> String {
    match msg.rsplit_once(" at line ") {
        Some((head, pos)) => match pos.split_once(" column ") {
            Some((_, col)) => format!("{head} (column {col})"),
            None => head.to_owned(),
        },
        None => msg.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn report() -> Report {
        Report {
            source: crate::Source::Openinference,
            file: "spans.json".into(),
            records: 3,
            counts: BTreeMap::from([("spans".into(), 9)]),
            verdicts: vec![
                (
                    Anomaly::A1,
                    Verdict::Undecidable {
                        reason: "no memory".into(),
                    },
                ),
                (
                    Anomaly::A2,
                    Verdict::LowerBound {
                        basis: "log".into(),
                    },
                ),
                (
                    Anomaly::A3,
                    Verdict::UpperBound {
                        basis: "all".into(),
                    },
                ),
                (
                    Anomaly::A6,
                    Verdict::Decided {
                        basis: "ends".into(),
                    },
                ),
            ],
            errors: vec![RunError {
                kind: "InvalidUpdateError".into(),
                code: None,
                message: "two writes".into(),
                records: vec![1, 2],
            }],
            notes: vec!["a \"note\"\n".into()],
            wall_ns: None,
            initial: Default::default(),
        }
    }

    #[test]
    fn a_written_report_reads_back_the_same() {
        let r = report();
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        assert_eq!(parse_report(&text, "r.json").unwrap(), r);
    }

    #[test]
    fn an_initial_state_reads_back_by_name() {
        let mut r = report();
        r.initial.reads = 2;
        r.initial.names = crate::initial::Named {
            values: vec![("m".into(), Some("likes tea".into()))],
            conflicts: vec!["n".into()],
        };
        let text = serde_json::to_string_pretty(&r.to_json()).unwrap();
        let back = parse_report(&text, "r.json").unwrap();
        assert_eq!(back, r);
        let mut names = agentsim_models::Names::new();
        let (m, n) = (names.cell("m"), names.cell("n"));
        let tea = names.value("likes tea");
        let mut initial = back.initial;
        initial.resolve(&mut names).unwrap();
        assert_eq!(
            (initial.values.get(m), initial.cells.clone()),
            (tea, vec![m])
        );
        assert!(initial.conflicted(n) && !initial.conflicted(m));
        let err = initial
            .resolve(&mut agentsim_models::Names::new())
            .unwrap_err();
        assert!(err.contains("names cell `m`"), "{err}");
    }

    #[test]
    fn a_bad_report_names_file_line_and_what() {
        let text = serde_json::to_string_pretty(&report().to_json()).unwrap();
        let cases = [
            ("\"lower_bound\"", "\"lowish\"", "unknown variant `lowish`"),
            ("\"A6\"", "\"A9\"", "decidable: unknown anomaly `A9`"),
            (
                "\"openinference\"",
                "\"jaeger\"",
                "source: unknown `jaeger`",
            ),
            (
                "\"records\": 3",
                "\"records\": -3",
                "invalid value: integer `-3`",
            ),
            ("\"notes\"", "\"note\"", "unknown field `note`"),
        ];
        for (from, to, want) in cases {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            let err = parse_report(&bad, "r.json").unwrap_err().to_string();
            let line = 1 + bad[..bad.find(to).unwrap()].matches('\n').count();
            assert!(err.starts_with(&format!("r.json:{line}: ")), "{err}");
            assert!(err.contains(want), "{err}");
        }
    }
}
