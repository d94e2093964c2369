//! Each anomaly's verdict on one history: *holds*, *violated*, or *cannot tell* and why.
//!
//! The detectors answer "found" or "none"; whether that answer is the verdict depends on what
//! the history could show:
//! * no record at all: *cannot tell (empty input)* for every anomaly;
//! * A4 on a history without replica metadata: *cannot tell (undecidable)*, since only reads
//!   served by different replicas can disagree;
//! * on an ingested history, what its source's verdict table says
//!   ([`agentsim_ingest::Source::coverage`]): an anomaly the source cannot show, or one whose
//!   verdict the reader's report lacks, is *cannot tell* (the table fails closed);
//! * an anomaly the ingestion reported *undecidable* (the source lacks what the definition
//!   needs): *cannot tell (undecidable)*, found or not;
//! * an anomaly the ingestion reported an *upper bound* (the history over-approximates what
//!   was read): a witness may be a false alarm, so *found* is *cannot tell (upper bound)*; but
//!   *none* holds, because nothing real can hide below an over-approximation that is empty;
//! * an anomaly the ingestion reported a *lower bound* (the source shows some of what the
//!   definition needs and may hide the rest): a witness is real, so *found* is *violated*; but
//!   *none* is *cannot tell (undecidable)*;
//! * otherwise the detector's answer: *violated* if found, else *holds*.
//!
//! The level is then a range: the lowest if every untold anomaly were present, the highest if
//! none were.

use agentsim_ingest::{Judged, Report};
use agentsim_models::detect::Summary;
use agentsim_models::lattice::{self, Point};
use agentsim_models::{Anomaly, Reason, Verdict};

/// Whether `detect` reports `a` (and `--fail-on` accepts it): the lattice's four always, A4 on
/// histories with replica metadata; the residue form is a diagnostic (`--residue`), not a
/// verdict.
pub fn reported(a: Anomaly) -> bool {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A4 | Anomaly::A6 => true,
        Anomaly::A3Residue => false,
    }
}

/// The verdicts of the anomalies `detect` reports, in catalogue order, and why `L1_struct`
/// cannot be told, if it cannot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdicts(pub Vec<(Anomaly, Verdict)>, pub Option<String>);

impl Verdicts {
    /// The verdicts on the history of `file` that `s` summarises, with the ingestion's
    /// report when the history was ingested.
    pub fn of(s: &Summary, file: &str, ingest: Option<&Report>) -> Verdicts {
        let all = Anomaly::ALL.into_iter().filter(|&a| reported(a));
        let verdicts = all.map(|a| (a, verdict(s, file, ingest, a))).collect();
        Verdicts(verdicts, ingest.and_then(|r| l1_untold(s, r)))
    }

    /// The verdict on `a` (an anomaly outside the report cannot be told).
    pub fn get(&self, a: Anomaly) -> Verdict {
        let found = self.0.iter().find(|(x, _)| *x == a);
        found.map_or_else(
            || Verdict::CannotTell(Reason::Undecidable(format!("{a} is not reported"))),
            |(_, v)| v.clone(),
        )
    }

    /// These verdicts on an input that lacks spans the system emitted (`missing` says which
    /// and why): a told verdict becomes *cannot tell*, its reason `missing` and what the spans
    /// kept showed (a span not seen could have made or unmade any witness); one already untold
    /// keeps its reason.
    pub fn with_missing(self, missing: &str) -> Verdicts {
        let each = self.0.into_iter().map(|(a, v)| {
            let shown = match &v {
                Verdict::Holds => "no witness",
                Verdict::Violated => "a witness",
                Verdict::CannotTell(_) => return (a, v),
            };
            let why = format!(
                "{missing}; the spans kept show {shown}, and a span not seen could change that"
            );
            (a, Verdict::CannotTell(Reason::Budget(why)))
        });
        Verdicts(each.collect(), self.1)
    }

    /// The lattice anomalies that cannot be told, in lattice order.
    pub fn untold(&self) -> Vec<Anomaly> {
        let lattice = |a: &&(Anomaly, Verdict)| a.0.lattice_bit().is_some();
        let mut v: Vec<Anomaly> = (self.0.iter().filter(lattice))
            .filter(|(_, v)| !v.is_told())
            .map(|&(a, _)| a)
            .collect();
        v.sort();
        v
    }

    /// The level range (low, high): the level if every untold lattice anomaly were present,
    /// and if none were. Equal when every lattice anomaly is told.
    pub fn level_range(&self) -> (u8, u8) {
        let violated: Vec<Anomaly> = (self.0.iter())
            .filter(|(_, v)| *v == Verdict::Violated)
            .map(|&(a, _)| a)
            .collect();
        let mut worst = violated.clone();
        worst.extend(self.untold());
        let lo = lattice::level(Point::of(&worst));
        let hi = lattice::level(Point::of(&violated));
        assert!(lo <= hi, "more anomalies never raise the level");
        (lo, hi)
    }

    /// The `--fail-on` gate's named verdicts.
    pub fn gated(&self, fail_on: &[Anomaly]) -> Vec<(String, Verdict)> {
        fail_on
            .iter()
            .map(|&a| (a.name().to_owned(), self.get(a)))
            .collect()
    }
}

/// Why `L1_struct` cannot be told on an ingested history whose reads show writes missing from
/// the trace (a cell read as two values it could have begun with, `agentsim_ingest::initial`):
/// every violation listed is on such a cell, where the latest committed write, or the state
/// the trace began in, is not known. A violation on another cell is a violation.
fn l1_untold(s: &Summary, r: &Report) -> Option<String> {
    let initial = &r.initial;
    let conflicts = &initial.conflicts;
    if conflicts.is_empty() || !s.l1_struct.kept.iter().all(|w| initial.conflicted(w.cell)) {
        return None;
    }
    let what = match conflicts.len() {
        1 => {
            "a cell was read as values no write in the trace explains: writes to it are".to_owned()
        }
        n => format!(
            "{n} cells were read as values no write in the trace explains: writes to them are"
        ),
    };
    Some(format!("{what} missing from the trace (see the notes)"))
}

/// The verdict on `a` alone (see the module's list).
fn verdict(s: &Summary, file: &str, ingest: Option<&Report>, a: Anomaly) -> Verdict {
    use agentsim_ingest::Verdict as Ingested;
    if s.records == 0 {
        return Verdict::CannotTell(Reason::EmptyInput);
    }
    if a.scope() == agentsim_models::anomaly::Scope::Replicated && !s.replica_meta {
        return Verdict::CannotTell(Reason::Undecidable(format!(
            "{a} needs a replicated-store history, and {file} has no replica metadata \
             (`read_replica`, `read_version`) on any record, so {a} cannot be decided on it: \
             record which replica served each read"
        )));
    }
    let Some(report) = ingest else {
        return Verdict::of_found(s.has(a));
    };
    match report.judged(a) {
        Judged::Untold(reason) => Verdict::CannotTell(Reason::Undecidable(reason)),
        Judged::History => Verdict::of_found(s.has(a)),
        Judged::Reader(Ingested::Undecidable { reason }) => {
            Verdict::CannotTell(Reason::Undecidable(reason.clone()))
        }
        Judged::Reader(Ingested::UpperBound { basis }) => Verdict::upper_bound(s.has(a), basis),
        Judged::Reader(Ingested::LowerBound { basis }) => match s.has(a) {
            true => Verdict::Violated,
            false => Verdict::CannotTell(Reason::Undecidable(basis.clone())),
        },
        Judged::Reader(Ingested::Decided { .. }) => Verdict::of_found(s.has(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_ingest::initial::Initial;
    use agentsim_models::detect::L1StructViolation;
    use agentsim_models::{Cell, Value};

    fn violation(cell: u32) -> L1StructViolation {
        L1StructViolation {
            record: 0,
            cell: Cell(cell),
            read: Value(1),
            expected: Value::NULL,
            writer: None,
        }
    }

    /// `L1_struct` cannot be told when every violation is on a cell whose reads show writes
    /// missing from the trace; one elsewhere is a violation.
    #[test]
    fn l1_struct_on_a_conflict_cell_cannot_be_told() {
        let mut report = Report {
            source: agentsim_ingest::Source::Otel,
            file: "t.json".into(),
            records: 2,
            counts: Default::default(),
            verdicts: vec![],
            errors: vec![],
            notes: vec![],
            wall_ns: None,
            initial: Initial::default(),
        };
        let mut s = Summary::new(10);
        s.l1_struct.push(violation(0));
        assert_eq!(l1_untold(&s, &report), None, "no conflict: violated");
        report.initial.conflicts = vec![(Cell(0), vec![Value(1), Value(2)])];
        let why = l1_untold(&s, &report).expect("cannot tell");
        assert!(
            why.starts_with("a cell was read as values no write"),
            "{why}"
        );
        s.l1_struct.push(violation(1));
        assert_eq!(l1_untold(&s, &report), None, "a violation on another cell");
    }
}
