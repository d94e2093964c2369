//! `GET /metrics`: the Prometheus text exposition format (version 0.0.4).

use crate::collect::{lock, Intake};
use std::fmt::Write as _;

/// The anomalies and verdicts every scrape lists, so a series exists before its first change.
const ANOMALIES: [&str; 5] = ["A1", "A2", "A3", "A4", "A6"];
const VERDICTS: [&str; 3] = ["holds", "violated", "cannot_tell"];

/// The metrics now.
pub fn text(intake: &Intake) -> String {
    let depth = intake.depth();
    let s = lock(&intake.shared);
    let mut o = String::new();
    let mut one = |name: &str, kind: &str, help: &str, v: u64| {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
    };
    one(
        "agentsim_spans_received_total",
        "counter",
        "Spans received (accepted or rejected).",
        s.received,
    );
    one(
        "agentsim_spans_rejected_total",
        "counter",
        "Spans rejected for a bad trace or span id (partial_success).",
        s.rejected,
    );
    one(
        "agentsim_spans_duplicate_total",
        "counter",
        "Spans received again (same trace and span id) and kept once.",
        s.duplicates,
    );
    one(
        "agentsim_spans_dropped_total",
        "counter",
        "Spans dropped past --max-pending-spans: every verdict is then cannot tell.",
        s.dropped,
    );
    one(
        "agentsim_spans_late_total",
        "counter",
        "Spans of a trace already mapped for good (--seal-ms): every verdict is then cannot tell.",
        s.late,
    );
    one(
        "agentsim_spans_kept",
        "gauge",
        "Spans kept for detection.",
        s.kept,
    );
    one(
        "agentsim_spans_pending",
        "gauge",
        "Spans kept whose trace is not yet mapped for good (bounded by --max-pending-spans).",
        s.pending,
    );
    one("agentsim_traces", "gauge", "Traces kept.", s.traces);
    one(
        "agentsim_records",
        "gauge",
        "Operation records built from the kept spans at the last detection.",
        s.records,
    );
    one("agentsim_batches_refused_total", "counter", "Batches refused because the queue was full or the receiver stopping (429/503, UNAVAILABLE).", s.refused_batches);
    one(
        "agentsim_queue_depth",
        "gauge",
        "Batches waiting in the queue.",
        depth as u64,
    );
    one(
        "agentsim_spans_detected",
        "gauge",
        "Spans kept when the last completed detection started (all detected over).",
        s.detected,
    );
    one(
        "agentsim_detections_total",
        "counter",
        "Detections run over the kept spans.",
        s.runs,
    );
    one(
        "agentsim_alerts_total",
        "counter",
        "Witnesses alerted.",
        s.alerts,
    );
    one(
        "agentsim_detection_failed",
        "gauge",
        "1 when the last detection refused the spans (see GET /).",
        u64::from(s.error.is_some()),
    );
    let _ = writeln!(o, "# HELP agentsim_witnesses Witnesses per anomaly at the last detection.\n# TYPE agentsim_witnesses gauge");
    for a in ANOMALIES {
        let n = s.witnesses.get(a).copied().unwrap_or(0);
        let _ = writeln!(o, "agentsim_witnesses{{anomaly=\"{a}\"}} {n}");
    }
    let _ = writeln!(o, "# HELP agentsim_verdict The verdict per anomaly at the last detection (1 for the current one; none before the first).\n# TYPE agentsim_verdict gauge");
    for a in ANOMALIES {
        let now = s.verdicts.get(a);
        for v in VERDICTS {
            let on = u64::from(now.is_some_and(|n| n == v));
            let _ = writeln!(
                o,
                "agentsim_verdict{{anomaly=\"{a}\",verdict=\"{v}\"}} {on}"
            );
        }
    }
    o
}
