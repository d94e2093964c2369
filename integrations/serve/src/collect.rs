//! The collector: one thread that takes batches off the bounded queue, keeps each span once,
//! detects over what it keeps when the spans go quiet, and writes the alerts.
//!
//! **Kept.** A span is kept once per (trace id, span id): an exporter that retries a batch,
//! or sends batches out of order, changes nothing. At most `max_pending_spans` spans are kept;
//! a span past that is dropped and counted, and the report then says *cannot tell* for every
//! verdict, with the count as the reason (the dropped span could have changed any of them).
//!
//! **Detection.** What is kept is written as an OTLP/JSON export, one `TracesData` document
//! per trace (traces by their first start time, then id; spans by start time, then id), and
//! read and detected as `detect --from otel` reads and detects a file. It runs when spans
//! have arrived since the last run and none for `quiet` (the spans of a burst are in), or when
//! the spans since the last run are as many as it had then (so a steady stream costs at most
//! twice the final detection in all), and once more at shutdown: that last run is the report.
//!
//! **Alerts.** After each run, each listed witness not alerted before is one JSON line of the
//! alerts file, flushed at once. A witness is known by its content without record positions
//! (positions move as earlier spans arrive), counted, so a second witness with the same
//! content is alerted too.

use crate::batch::{Batch, Received};
use crate::Detector;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The name the report gives the received spans (where `detect` names its file).
pub const NAME: &str = "<otlp>";

/// What the handlers and the collector share: counters, the latest detection, the page.
#[derive(Debug, Default)]
pub struct Shared {
    pub received: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub dropped: u64,
    pub kept: u64,
    pub traces: u64,
    pub refused_batches: u64,
    pub runs: u64,
    /// The spans kept when the last completed detection started: every span kept up to then
    /// has been detected over.
    pub detected: u64,
    pub alerts: u64,
    /// From the latest detection: records, witnesses per anomaly, the verdict per anomaly.
    pub records: u64,
    pub witnesses: BTreeMap<String, u64>,
    pub verdicts: BTreeMap<String, String>,
    /// The latest detection's error (an input the reader refuses), until one succeeds.
    pub error: Option<String>,
    /// The live page, rendered on request after a run.
    pub page: Option<String>,
    pub page_wanted: bool,
    pub page_fresh: bool,
}

/// Why a batch was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue is full: retry later (429 / UNAVAILABLE).
    Full,
    /// The server is stopping (503 / UNAVAILABLE).
    Closed,
}

/// The handlers' side of the queue.
pub struct Intake {
    tx: Mutex<Option<SyncSender<Batch>>>,
    pub depth: AtomicUsize,
    pub shared: Arc<Mutex<Shared>>,
}

impl Intake {
    /// The queue depth now (for the metrics).
    pub fn depth(&self) -> usize {
        self.depth.load(Ordering::SeqCst)
    }

    /// Queues a batch: its spans are then kept (or counted as dropped) by the collector.
    pub fn offer(&self, batch: Batch) -> Result<(), Refused> {
        let n = batch.spans.len() as u64;
        let rejected = batch.rejected;
        let tx = lock(&self.tx).clone().ok_or(Refused::Closed)?;
        self.depth.fetch_add(1, Ordering::SeqCst);
        match tx.try_send(batch) {
            Ok(()) => {
                let mut s = lock(&self.shared);
                s.received += n + rejected;
                s.rejected += rejected;
                Ok(())
            }
            Err(e) => {
                self.depth.fetch_sub(1, Ordering::SeqCst);
                lock(&self.shared).refused_batches += 1;
                Err(match e {
                    TrySendError::Full(_) => Refused::Full,
                    TrySendError::Disconnected(_) => Refused::Closed,
                })
            }
        }
    }

    /// Counts a request's spans that were all rejected (nothing to queue).
    pub fn count_rejected(&self, rejected: u64) {
        let mut s = lock(&self.shared);
        s.received += rejected;
        s.rejected += rejected;
    }

    /// Stops taking batches: the collector finishes what is queued.
    pub fn close(&self) {
        lock(&self.tx).take();
    }
}

/// Locks `m`, whether or not a holder panicked (the counters stay usable).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The queue: the intake for the handlers and the receiver for the collector.
pub fn queue(batches: usize) -> (Arc<Intake>, Receiver<Batch>) {
    let (tx, rx) = std::sync::mpsc::sync_channel(batches);
    let intake = Intake {
        tx: Mutex::new(Some(tx)),
        depth: AtomicUsize::new(0),
        shared: Arc::new(Mutex::new(Shared::default())),
    };
    (Arc::new(intake), rx)
}

/// How the collector keeps and detects.
#[derive(Clone, Debug)]
pub struct Settings {
    pub max_pending_spans: usize,
    pub quiet: Duration,
    /// Intake pauses while this file exists (maintenance, and the tests' full queue).
    pub pause_while: Option<std::path::PathBuf>,
    pub alerts: Option<std::path::PathBuf>,
}

/// The spans kept, once each.
#[derive(Default)]
struct Kept {
    seen: HashSet<(u128, u64)>,
    traces: HashMap<u128, Vec<Received>>,
    strings: HashSet<Arc<str>>,
    count: usize,
}

impl Kept {
    fn intern(&mut self, s: &Arc<str>) -> Arc<str> {
        if let Some(found) = self.strings.get(s) {
            return found.clone();
        }
        self.strings.insert(s.clone());
        s.clone()
    }

    /// The kept spans as an OTLP/JSON export, one document per trace.
    fn text(&self) -> String {
        if self.traces.is_empty() {
            // An export of no span, which the reader reports as empty input (cannot tell).
            return "{\"resourceSpans\":[]}\n".to_owned();
        }
        let mut order: Vec<(u64, u128)> = (self.traces.iter())
            .map(|(&t, spans)| (spans.iter().map(|s| s.start).min().unwrap_or(0), t))
            .collect();
        order.sort_unstable();
        let mut out = String::new();
        for (_, t) in order {
            let mut spans: Vec<&Received> = self.traces[&t].iter().collect();
            spans.sort_unstable_by_key(|s| (s.start, s.span));
            out.push_str("{\"resourceSpans\":[");
            let mut open: Option<(&Arc<str>, &Arc<str>)> = None;
            for s in spans {
                match open {
                    Some((r, sc)) if Arc::ptr_eq(r, &s.resource) && Arc::ptr_eq(sc, &s.scope) => {
                        out.push(',');
                    }
                    _ => {
                        if open.is_some() {
                            out.push_str("]}]},");
                        }
                        out.push_str("{\"resource\":");
                        out.push_str(&s.resource);
                        out.push_str(",\"scopeSpans\":[{\"scope\":");
                        out.push_str(&s.scope);
                        out.push_str(",\"spans\":[");
                        open = Some((&s.resource, &s.scope));
                    }
                }
                out.push_str(&s.json);
            }
            if open.is_some() {
                out.push_str("]}]}");
            }
            out.push_str("]}\n");
        }
        out
    }
}

/// What the collector ends with: the last detection's report (or why there is none).
pub struct Finished {
    pub report: Result<String, String>,
    pub dropped: u64,
    pub kept: u64,
}

/// Runs the collector until the intake closes and the queue is empty; then detects once
/// more and returns that report.
pub fn run(
    rx: Receiver<Batch>,
    intake: Arc<Intake>,
    settings: Settings,
    mut detector: Box<dyn Detector>,
) -> Finished {
    let mut kept = Kept::default();
    let mut dropped = 0u64;
    let mut fresh = 0usize;
    let mut at_last_run = 0usize;
    let mut last_arrival = Instant::now();
    let mut alerts = Alerts::open(settings.alerts.as_deref());
    let tick = Duration::from_millis(100);
    loop {
        if let Some(p) = &settings.pause_while {
            while p.exists() {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let wait = match fresh {
            0 => tick,
            _ => settings
                .quiet
                .saturating_sub(last_arrival.elapsed())
                .min(tick),
        };
        match rx.recv_timeout(wait) {
            Ok(batch) => {
                intake.depth.fetch_sub(1, Ordering::SeqCst);
                let (mut dup, mut drop) = (0u64, 0u64);
                for mut s in batch.spans {
                    if kept.seen.contains(&(s.trace, s.span)) {
                        dup += 1;
                        continue;
                    }
                    if kept.count >= settings.max_pending_spans {
                        drop += 1;
                        continue;
                    }
                    kept.seen.insert((s.trace, s.span));
                    s.resource = kept.intern(&s.resource);
                    s.scope = kept.intern(&s.scope);
                    kept.traces.entry(s.trace).or_default().push(s);
                    kept.count += 1;
                    fresh += 1;
                }
                dropped += drop;
                let mut sh = lock(&intake.shared);
                sh.duplicates += dup;
                sh.dropped = dropped;
                sh.kept = kept.count as u64;
                sh.traces = kept.traces.len() as u64;
                last_arrival = Instant::now();
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let quiet = last_arrival.elapsed() >= settings.quiet;
        if fresh > 0 && (quiet || fresh >= at_last_run.max(1024)) {
            let _ = detect(&kept, dropped, &intake, &mut *detector, &mut alerts);
            at_last_run = kept.count;
            fresh = 0;
        }
        let wanted = {
            let s = lock(&intake.shared);
            s.page_wanted && !s.page_fresh
        };
        if wanted {
            let page = detector.page(&kept.text(), NAME, dropped);
            let mut s = lock(&intake.shared);
            s.page = Some(page.unwrap_or_else(|e| error_page(&e)));
            s.page_fresh = true;
            s.page_wanted = false;
        }
    }
    let report = detect(&kept, dropped, &intake, &mut *detector, &mut alerts);
    Finished {
        report,
        dropped,
        kept: kept.count as u64,
    }
}

fn error_page(e: &str) -> String {
    let esc = e
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<!doctype html><meta charset=utf-8><title>agentsim serve</title>\
         <p>The spans received so far do not give a history: {esc}"
    )
}

/// One detection over everything kept; updates the shared state and writes new alerts.
fn detect(
    kept: &Kept,
    dropped: u64,
    intake: &Intake,
    detector: &mut dyn Detector,
    alerts: &mut Alerts,
) -> Result<String, String> {
    let report = detector.report(&kept.text(), NAME, dropped);
    let mut s = lock(&intake.shared);
    s.runs += 1;
    s.detected = kept.count as u64;
    s.page_fresh = false;
    match &report {
        Err(e) => s.error = Some(e.clone()),
        Ok(text) => {
            s.error = None;
            let v: Json = serde_json::from_str(text).unwrap_or(Json::Null);
            s.records = v
                .pointer("/ingest/records")
                .and_then(Json::as_u64)
                .unwrap_or(0);
            s.witnesses.clear();
            s.verdicts.clear();
            if let Some(lists) = v.get("anomalies").and_then(Json::as_object) {
                for (a, list) in lists {
                    let listed = list.as_array().map_or(0, Vec::len) as u64;
                    let left = v.pointer(&format!("/left_out/{a}")).and_then(Json::as_u64);
                    s.witnesses.insert(a.clone(), listed + left.unwrap_or(0));
                }
            }
            if let Some(vs) = v.get("verdicts").and_then(Json::as_object) {
                for (a, verdict) in vs {
                    let name = verdict.get("verdict").and_then(Json::as_str);
                    s.verdicts
                        .insert(a.clone(), name.unwrap_or("cannot_tell").to_owned());
                }
            }
            drop(s);
            let n = alerts.witnesses(&v);
            lock(&intake.shared).alerts += n;
        }
    }
    report
}

/// The alerts file and the witnesses already alerted.
struct Alerts {
    out: Option<std::fs::File>,
    seen: HashMap<String, u64>,
}

impl Alerts {
    fn open(path: Option<&std::path::Path>) -> Alerts {
        let out = path.and_then(|p| {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p);
            match f {
                Ok(f) => Some(f),
                Err(e) => {
                    eprintln!("agentsim serve: --alerts {}: {e}", p.display());
                    None
                }
            }
        });
        Alerts {
            out,
            seen: HashMap::new(),
        }
    }

    /// Alerts the listed witnesses of `report` not alerted before; how many.
    fn witnesses(&mut self, report: &Json) -> u64 {
        let Some(lists) = report.get("anomalies").and_then(Json::as_object) else {
            return 0;
        };
        // An alert says when it was raised: wall time, outside any simulated run.
        #[allow(clippy::disallowed_methods)]
        let at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut counts: HashMap<String, u64> = HashMap::new();
        let mut new = 0;
        for (anomaly, list) in lists {
            for w in list.as_array().into_iter().flatten() {
                let key = format!("{anomaly} {}", without_positions(w));
                let n = counts.entry(key.clone()).or_default();
                *n += 1;
                let before = self.seen.entry(key).or_default();
                if *n <= *before {
                    continue;
                }
                *before = *n;
                new += 1;
                let line = json!({
                    "anomaly": anomaly,
                    "at_unix_ms": at,
                    "agents": strings_named(w, "agent"),
                    "records": positions(w),
                    "witness": w,
                });
                if let Some(f) = &mut self.out {
                    let r = writeln!(f, "{line}").and_then(|()| f.flush());
                    if let Err(e) = r {
                        eprintln!("agentsim serve: --alerts: {e}");
                        self.out = None;
                    }
                }
            }
        }
        new
    }
}

/// A witness without its record positions (integer fields), as text.
fn without_positions(w: &Json) -> String {
    match w.as_object() {
        Some(m) => {
            let rest: serde_json::Map<String, Json> = (m.iter())
                .filter(|(_, v)| !v.is_u64())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Json::Object(rest).to_string()
        }
        None => w.to_string(),
    }
}

/// The record positions a witness names (its integer fields), in key order.
fn positions(w: &Json) -> Vec<u64> {
    let m = w.as_object().into_iter().flatten();
    m.filter_map(|(_, v)| v.as_u64()).collect()
}

/// The distinct string values of fields whose name contains `part` (`agent`, `reader_agent` …).
fn strings_named(w: &Json, part: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, v) in w.as_object().into_iter().flatten() {
        if let (true, Some(s)) = (k.contains(part), v.as_str()) {
            if !out.iter().any(|o| o == s) {
                out.push(s.to_owned());
            }
        }
    }
    out
}
