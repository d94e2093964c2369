//! What an ingestion could and could not decide, said next to the history it produced.
//!
//! A history read from spans or checkpoints is only as good as what they carry: spans may omit
//! memory contents (opt-in in the GenAI conventions), checkpoints do not say which keys a node
//! used. So every ingestion returns a [`Report`] with, for each lattice anomaly, a [`Verdict`]:
//! *decided* (the detector's answer on this history is the answer), *upper bound* (a witness may
//! be a false alarm, "none" is still "none"), or *undecidable* (the detector's "none" means
//! nothing here). It also counts what was read and ignored, and lists run errors the source
//! recorded (e.g. LangGraph's `InvalidUpdateError`), which are not anomalies of the catalogue.
//! `agentsim ingest` prints it to stderr; `agentsim detect --from` prints it with the detectors'
//! report; the Python recorder writes the same JSON beside its history.

use crate::source::Coverage;
use agentsim_models::escape_text as esc;
use agentsim_models::Anomaly;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How far the detector's answer for one anomaly can be trusted on an ingested history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The history carries what the definition needs; `basis` says from what.
    Decided { basis: String },
    /// Witnesses may be false alarms (the history over-approximates); "none" holds.
    UpperBound { basis: String },
    /// Witnesses are real, but "none" is not an answer: the source shows some of what the
    /// definition needs and may hide the rest (a registry observed only at some instants;
    /// retractions only where a span ended in ERROR). `basis` says what was seen and what not.
    LowerBound { basis: String },
    /// The source lacks what the definition needs; the detector's "none" is not an answer.
    Undecidable { reason: String },
}

impl Verdict {
    /// `decided`, `upper_bound` or `undecidable`.
    pub fn status(&self) -> &'static str {
        match self {
            Verdict::Decided { .. } => "decided",
            Verdict::UpperBound { .. } => "upper_bound",
            Verdict::LowerBound { .. } => "lower_bound",
            Verdict::Undecidable { .. } => "undecidable",
        }
    }

    /// The basis or the reason.
    pub fn why(&self) -> &str {
        match self {
            Verdict::Decided { basis }
            | Verdict::UpperBound { basis }
            | Verdict::LowerBound { basis } => basis,
            Verdict::Undecidable { reason } => reason,
        }
    }
}

/// What a report tells of one anomaly ([`Report::judged`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged<'a> {
    /// The reader's verdict.
    Reader(&'a Verdict),
    /// The history's own records decide it.
    History,
    /// Cannot tell, for this reason.
    Untold(String),
}

/// An error the traced run raised (not a catalogue anomaly, but what a user must hear).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError {
    /// e.g. `InvalidUpdateError`.
    pub kind: String,
    /// e.g. `INVALID_CONCURRENT_GRAPH_UPDATE`.
    pub code: Option<String>,
    pub message: String,
    /// The 0-based records it concerns (e.g. the aborted tasks of the failed superstep).
    pub records: Vec<usize>,
}

/// The report of one ingestion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The source whose reader made it (GenAI spans: `otel`, whichever reader read them).
    pub source: crate::Source,
    /// The input, as named on the command line.
    pub file: String,
    pub records: usize,
    /// What was read and what was ignored, by name (e.g. `spans`, `ignored_spans`).
    pub counts: BTreeMap<String, u64>,
    /// One verdict per lattice anomaly, in lattice order.
    pub verdicts: Vec<(Anomaly, Verdict)>,
    pub errors: Vec<RunError>,
    /// Anything else the user should know (choices made, parts skipped), in input order.
    pub notes: Vec<String>,
    /// Each record's read and commit instants in Unix nanoseconds, in log order, when the
    /// source has a wall clock (OTel spans); not part of the text or JSON report.
    pub wall_ns: Option<Vec<(u128, u128)>>,
    /// The state the trace began in, as its reads show it ([`crate::initial`]); empty for a
    /// history that starts empty. [`crate::load`] fills it in and says it in `notes`.
    pub initial: crate::initial::Initial,
}

/// A reader's verdicts, one per lattice anomaly, as [`Report::verdicts`] lists them (lattice
/// order).
pub fn lattice_verdicts(
    a1: Verdict,
    a2: Verdict,
    a3: Verdict,
    a6: Verdict,
) -> Vec<(Anomaly, Verdict)> {
    vec![
        (Anomaly::A1, a1),
        (Anomaly::A2, a2),
        (Anomaly::A3, a3),
        (Anomaly::A6, a6),
    ]
}

impl Report {
    /// The verdict for `a`.
    pub fn verdict(&self, a: Anomaly) -> Option<&Verdict> {
        self.verdicts.iter().find(|(x, _)| *x == a).map(|(_, v)| v)
    }

    /// What the report tells of `a`, by its source's verdict table ([`crate::Source::coverage`]):
    /// the reader's verdict, the history's own records, or *cannot tell* and why. A verdict
    /// the table expects and the report lacks cannot be told: the table fails closed.
    pub fn judged(&self, a: Anomaly) -> Judged<'_> {
        match self.source.coverage(a) {
            Coverage::Report => match self.verdict(a) {
                Some(v) => Judged::Reader(v),
                None => Judged::Untold(format!(
                    "the {} reader gave no verdict on {a} for {}",
                    self.source,
                    esc(&self.file)
                )),
            },
            Coverage::History => Judged::History,
            Coverage::Unobservable(why) => Judged::Untold(format!("{a}: {why}")),
        }
    }

    /// The report as one JSON object (keys sorted).
    pub fn to_json(&self) -> Json {
        let decidable: serde_json::Map<String, Json> = self
            .verdicts
            .iter()
            .map(|(a, v)| {
                let entry = json!({ "status": v.status(), "why": v.why() });
                (a.name().to_owned(), entry)
            })
            .collect();
        let errors: Vec<Json> = self
            .errors
            .iter()
            .map(|e| {
                json!({ "error": e.kind, "code": e.code, "message": e.message,
                        "records": e.records })
            })
            .collect();
        let mut j = json!({
            "source": self.source.name(), "file": self.file, "records": self.records,
            "counts": self.counts, "decidable": decidable, "errors": errors,
            "notes": self.notes,
        });
        if !self.initial.is_empty() {
            let named = &self.initial.names;
            let values: serde_json::Map<String, Json> = (named.values.iter())
                .map(|(c, v)| (c.clone(), json!(v)))
                .collect();
            j["initial_state"] = json!({
                "reads": self.initial.reads, "values": values, "conflicts": named.conflicts,
            });
        }
        j
    }

    /// The report for people: one line per count, verdict, error and note. What came from
    /// the input (the file name, run errors, notes) is escaped ([`esc`]), so a newline or a
    /// bidi control in a trace stays on its line instead of planting one.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "{}: {} records from {} ({})",
            esc(&self.file),
            self.records,
            self.source,
            counts.join(", ")
        );
        for (a, v) in &self.verdicts {
            let status = v.status().replace('_', " ");
            let _ = writeln!(s, "  {a}: {status}: {}", esc(v.why()));
        }
        for e in &self.errors {
            let code = e
                .code
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            let (kind, message) = (esc(&e.kind), esc(&e.message));
            let _ = writeln!(s, "  run error {kind}{}: {message}", esc(&code));
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {}", esc(n));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text_say_the_same() {
        let r = Report {
            source: crate::Source::Otel,
            file: "t.json".into(),
            records: 2,
            counts: BTreeMap::from([("spans".into(), 5), ("ignored_spans".into(), 1)]),
            verdicts: vec![
                (
                    Anomaly::A1,
                    Verdict::Decided {
                        basis: "values".into(),
                    },
                ),
                (
                    Anomaly::A3,
                    Verdict::Undecidable {
                        reason: "no aborts".into(),
                    },
                ),
            ],
            errors: vec![],
            notes: vec!["n".into()],
            wall_ns: None,
            initial: Default::default(),
        };
        let j = r.to_json();
        assert_eq!(j["decidable"]["A1"]["status"], "decided");
        assert_eq!(j["decidable"]["A3"]["why"], "no aborts");
        let t = r.to_text();
        assert!(
            t.starts_with("t.json: 2 records from otel (ignored_spans 1, spans 5)"),
            "{t}"
        );
        assert!(t.contains("  A3: undecidable: no aborts"), "{t}");
        assert_eq!(r.verdict(Anomaly::A1).map(Verdict::status), Some("decided"));
    }

    #[test]
    fn a_verdict_the_table_expects_and_the_report_lacks_cannot_be_told() {
        let r = Report {
            source: crate::Source::Mcp,
            file: "log.jsonl".into(),
            records: 1,
            counts: BTreeMap::new(),
            verdicts: vec![(Anomaly::A1, Verdict::Decided { basis: "b".into() })],
            errors: vec![],
            notes: vec![],
            wall_ns: None,
            initial: Default::default(),
        };
        assert!(matches!(r.judged(Anomaly::A1), Judged::Reader(_)));
        for a in [Anomaly::A2, Anomaly::A3, Anomaly::A6] {
            assert_eq!(
                r.judged(a),
                Judged::Untold(format!(
                    "the mcp reader gave no verdict on {a} for log.jsonl"
                ))
            );
        }
        assert!(matches!(r.judged(Anomaly::A4), Judged::Untold(_)));
    }
}
