//! The collector: one thread that takes batches off the bounded queue, keeps each span once,
//! maps each trace once it is complete, detects over the records, and writes the alerts.
//!
//! **Kept.** A span is kept once per (trace id, span id): an exporter that retries a batch,
//! or sends batches out of order, changes nothing. Spans are kept read (the typed spans of
//! the ingest crate's reader), grouped by trace, not as JSON text.
//!
//! **Mapped once.** A trace whose root span (no parent) has arrived and none of whose spans
//! has arrived for `seal` (ten times that, when no root has come) is complete: it is
//! mapped to its steps by the ingest crate's [`Mapper`] (the one `detect`'s file reader feeds
//! a trace at a time) and its spans are let go; only its steps stay, packed, in that mapper.
//! Until then a span of the trace joins it, and the trace is mapped with it: a late span
//! costs its own trace, nothing else. A span of a trace already mapped is *late*: it is
//! counted, and the report then says *cannot tell* for every verdict, with the count as the
//! reason (it could have changed any of them). At most `max_pending_spans` spans wait for
//! their trace to be mapped; a span past that is dropped and counted likewise. OpenInference
//! spans (`--from openinference`) and `--mcp-log` are read as a whole export, so their traces
//! are kept as spans to the end; so are all traces under `--from otel` until a GenAI span
//! (`gen_ai.operation.name`) has come, since until then the export may turn out to be
//! OpenInference's.
//!
//! **Detection.** What crosses traces (cross-trace order by time, actors of overlapping
//! invocations, shared registry timelines, record numbering, the initial state) is settled
//! at each detection, over a copy of the mapper's steps with the traces still open mapped in:
//! over records, not spans. The history and report are then detected as `detect --from otel`
//! detects a file's, so the last detection, at shutdown, is `detect`'s report byte for byte.
//! A detection runs when spans have arrived since the last run and none for `quiet` (the
//! spans of a burst are in) and the collector has been idle since the last run for as long as
//! that run took, or when the spans since the last run are as many as it had then (a steady
//! stream costs at most twice the final detection in all), and once more at shutdown.
//!
//! **Alerts.** After each run, each listed witness not alerted before is one JSON line of the
//! alerts file, flushed at once, naming the records it rests on with each record's trace id
//! and span ids. A witness is known by its content without record positions (positions move
//! as earlier spans arrive), counted, so a second witness with the same content is alerted too.

use crate::batch::Batch;
pub use crate::batch::NAME;
use crate::{Detector, Lost};
use agentsim_ingest::mcp::McpLog;
use agentsim_ingest::openinference::{choose, classify, Conventions, Reader};
use agentsim_ingest::otel::mapping::Mapping;
use agentsim_ingest::otel::{otlp, LeanSpan, Mapper, Origin};
use agentsim_ingest::{Ingested, Options, Source};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// What the handlers and the collector share: counters, the latest detection, the page.
#[derive(Debug, Default)]
pub struct Shared {
    pub received: u64,
    pub rejected: u64,
    pub duplicates: u64,
    pub dropped: u64,
    /// Spans of traces already mapped for good.
    pub late: u64,
    /// Spans waiting for their trace to be mapped.
    pub pending: u64,
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
    /// How long a trace waits for more spans before it is mapped for good.
    pub seal: Duration,
    /// How the spans are read (`--from`, `--tool-memory`, `--mcp-log`).
    pub options: Options,
    /// Intake pauses while this file exists (maintenance, and the tests' full queue).
    pub pause_while: Option<std::path::PathBuf>,
    pub alerts: Option<std::path::PathBuf>,
}

/// A trace whose spans are still coming.
struct Open {
    spans: Vec<otlp::Span>,
    last: Instant,
    /// Its root span (no parent) has arrived: an exporter sends a span when it ends, and the
    /// root ends last.
    root: bool,
}

/// What is read beside the spans.
struct Beside {
    mapping: Option<Mapping>,
    mcp: Option<McpLog>,
}

/// The spans kept, once each: the traces still open as spans, the others as their steps.
struct Kept<'m> {
    seen: HashSet<(u128, u64)>,
    open: HashMap<u128, Open>,
    /// Traces in the order of their spans' arrivals (a trace once per batch), to find the
    /// quiet ones without scanning them all; those found quiet without their root wait in
    /// `rootless` for ten times as long.
    arrivals: VecDeque<(Instant, u128)>,
    rootless: VecDeque<(Instant, u128)>,
    /// Spans in open traces.
    pending: usize,
    /// The traces mapped for good, and their steps.
    sealed: HashSet<u128>,
    mapper: Mapper<'m>,
    /// Whether traces are mapped as they complete (else kept as spans to the end).
    sealing: bool,
    /// `--from otel`: the reader is chosen by the spans' convention, counted here over every
    /// span kept. Traces are mapped as they complete only once a GenAI span has come: the
    /// export can then no longer be read as OpenInference.
    by_convention: bool,
    conventions: Conventions,
    /// The reader's message on a span it refused, the first one.
    refused: Option<String>,
    count: usize,
}

impl<'m> Kept<'m> {
    fn new(options: &Options, beside: &'m Result<Beside, String>) -> Kept<'m> {
        let (mapping, mcp) = match beside {
            Ok(b) => (b.mapping.as_ref(), b.mcp.is_some()),
            Err(_) => (None, false),
        };
        let genai = matches!(options.from, Some(Source::Otel | Source::Genai));
        Kept {
            seen: HashSet::new(),
            open: HashMap::new(),
            arrivals: VecDeque::new(),
            rootless: VecDeque::new(),
            pending: 0,
            sealed: HashSet::new(),
            mapper: Mapper::new(NAME, mapping).keep_origins(),
            sealing: genai && !mcp && beside.is_ok(),
            by_convention: options.from == Some(Source::Otel),
            conventions: Conventions::default(),
            refused: None,
            count: 0,
        }
    }

    fn traces(&self) -> usize {
        self.open.len() + self.sealed.len()
    }

    /// Maps for good the traces none of whose spans arrived in the last `seal` and whose root
    /// span has arrived, and those without a root none of whose spans arrived in ten times that.
    fn seal(&mut self, seal: Duration) {
        if !self.mapping_traces() {
            return;
        }
        while let Some(&(at, t)) = self.arrivals.front() {
            if at.elapsed() < seal {
                break;
            }
            self.arrivals.pop_front();
            match self.open.get(&t) {
                Some(o) if o.last == at && o.root => self.seal_trace(t),
                Some(o) if o.last == at => self.rootless.push_back((at, t)),
                _ => {}
            }
        }
        while let Some(&(at, t)) = self.rootless.front() {
            if at.elapsed() < seal * 10 {
                break;
            }
            self.rootless.pop_front();
            if self.open.get(&t).is_some_and(|o| o.last == at) {
                self.seal_trace(t);
            }
        }
    }

    /// Whether completed traces are mapped (else kept as spans, to be read as one export).
    fn mapping_traces(&self) -> bool {
        let c = &self.conventions;
        self.sealing && (!self.by_convention || (c.genai > 0 && choose(c) == Reader::GenAi))
    }

    /// Counts `span`'s convention.
    fn count(&mut self, span: &otlp::Span) {
        if !self.by_convention {
            return;
        }
        let one = classify(std::slice::from_ref(span));
        let c = &mut self.conventions;
        c.openinference_steps += one.openinference_steps;
        c.openinference_links += one.openinference_links;
        c.genai += one.genai;
        c.both += one.both;
    }

    fn seal_trace(&mut self, t: u128) {
        let trace = self.open.remove(&t).map(|o| o.spans).unwrap_or_default();
        self.pending -= trace.len();
        self.mapper
            .trace(trace.iter().map(LeanSpan::from_span).collect());
        self.sealed.insert(t);
    }

    /// A span of open trace `t` arrived `now` (kept or not): the trace is not quiet.
    fn arrived(&mut self, t: u128, now: Instant) {
        if let Some(open) = self.open.get_mut(&t) {
            if self.sealing && open.last != now {
                self.arrivals.push_back((now, t));
            }
            open.last = now;
        }
    }

    /// The history and report of everything kept, as `detect` reads an export of it, and
    /// each record's spans (when the mapper knows them).
    fn ingest(
        &self,
        options: &Options,
        beside: &Result<Beside, String>,
    ) -> Result<(Ingested, Vec<Origin>), String> {
        let beside = beside.as_ref().map_err(Clone::clone)?;
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        if self.count == 0 {
            // No span: what the reader says of an export of none (cannot tell).
            let ing = agentsim_ingest::load::load_text(EMPTY, NAME, options);
            return ing.map(|i| (i, Vec::new())).map_err(|e| e.to_string());
        }
        let genai = !self.by_convention || choose(&self.conventions) == Reader::GenAi;
        if self.sealing && genai {
            let mut m = self.mapper.clone();
            for o in self.open.values() {
                m.trace(o.spans.iter().map(LeanSpan::from_span).collect());
            }
            let (ing, origins) = m.finish_with_origins().map_err(|e| e.to_string())?;
            return Ok((agentsim_ingest::with_initial_state(ing), origins));
        }
        if !self.sealed.is_empty() {
            // Traces are mapped only after a GenAI span came: the export is of both
            // conventions, which `detect` refuses too.
            let c = &self.conventions;
            return Err(format!(
                "{NAME}: {} GenAI spans and {} OpenInference step spans: an export of both \
                 conventions is refused, since either reader alone would leave the other's \
                 spans unread; serve with --from genai or --from openinference",
                c.genai, c.openinference_steps
            ));
        }
        // As an export of them would list them: traces by their first start, then id;
        // spans by start, then id.
        let mut order: Vec<(u64, u128)> = (self.open.iter())
            .map(|(&t, o)| (o.spans.iter().map(|s| s.start).min().unwrap_or(0), t))
            .collect();
        order.sort_unstable();
        let mut spans: Vec<otlp::Span> = Vec::with_capacity(self.pending);
        for (_, t) in order {
            let mut trace = self.open[&t].spans.clone();
            trace.sort_by(|a, b| (a.start, &a.id).cmp(&(b.start, &b.id)));
            spans.extend(trace);
        }
        let with = agentsim_ingest::openinference::Beside {
            mcp: beside.mcp.as_ref(),
            mapping: beside.mapping.as_ref(),
        };
        use agentsim_ingest::openinference::{map_openinference, read_detected_spans};
        let read = match options.from {
            Some(Source::Openinference) => map_openinference(spans, NAME, with),
            Some(Source::Genai) => agentsim_ingest::otel::map_spans(spans, NAME, with.mapping),
            _ => read_detected_spans(spans, NAME, with),
        };
        read.map(|i| (agentsim_ingest::with_initial_state(i), Vec::new()))
            .map_err(|e| e.to_string())
    }
}

/// An export of no span.
const EMPTY: &str = "{\"resourceSpans\":[]}\n";

/// What the collector ends with: the last detection's report (or why there is none).
pub struct Finished {
    pub report: Result<String, String>,
    pub lost: Lost,
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
    let beside = agentsim_ingest::load::beside(&settings.options)
        .map(|(mcp, mapping)| Beside { mapping, mcp })
        .map_err(|e| e.to_string());
    let mut kept = Kept::new(&settings.options, &beside);
    let mut lost = Lost::default();
    let mut fresh = 0usize;
    let mut at_last_run = 0usize;
    let mut last_arrival = Instant::now();
    let (mut last_end, mut last_took) = (Instant::now(), Duration::ZERO);
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
            _ => (settings.quiet.saturating_sub(last_arrival.elapsed()))
                .max(last_took.saturating_sub(last_end.elapsed()))
                .min(tick),
        };
        match rx.recv_timeout(wait) {
            Ok(batch) => {
                intake.depth.fetch_sub(1, Ordering::SeqCst);
                let now = Instant::now();
                let (mut dup, mut drop, mut late) = (0u64, 0u64, 0u64);
                for s in batch.spans {
                    if kept.seen.contains(&(s.trace, s.span)) {
                        dup += 1;
                        continue;
                    }
                    if kept.sealed.contains(&s.trace) {
                        kept.seen.insert((s.trace, s.span));
                        late += 1;
                        continue;
                    }
                    if kept.pending >= settings.max_pending_spans {
                        kept.arrived(s.trace, now);
                        drop += 1;
                        continue;
                    }
                    kept.seen.insert((s.trace, s.span));
                    let span = match s.read {
                        Ok(span) => span,
                        Err(e) => {
                            kept.refused.get_or_insert(e);
                            continue;
                        }
                    };
                    kept.count(&span);
                    let open = kept.open.entry(s.trace).or_insert_with(|| Open {
                        spans: Vec::new(),
                        last: now,
                        root: false,
                    });
                    if kept.sealing && (open.spans.is_empty() || open.last != now) {
                        kept.arrivals.push_back((now, s.trace));
                    }
                    open.last = now;
                    open.root |= span.parent.is_none();
                    open.spans.push(span);
                    kept.pending += 1;
                    kept.count += 1;
                    fresh += 1;
                }
                lost.dropped += drop;
                lost.late += late;
                let mut sh = lock(&intake.shared);
                sh.duplicates += dup;
                sh.dropped = lost.dropped;
                sh.late = lost.late;
                sh.kept = kept.count as u64;
                sh.traces = kept.traces() as u64;
                last_arrival = now;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        kept.seal(settings.seal);
        lock(&intake.shared).pending = kept.pending as u64;
        // Quiet, and idle since the last detection for at least as long as it took (a pause
        // in a busy stream does not make the collector detect more than half the time).
        let quiet = last_arrival.elapsed() >= settings.quiet && last_end.elapsed() >= last_took;
        if fresh > 0 && (quiet || fresh >= at_last_run.max(1024)) {
            let started = Instant::now();
            let read = kept.ingest(&settings.options, &beside);
            let _ = detect(read, kept.count, lost, &intake, &mut *detector, &mut alerts);
            at_last_run = kept.count;
            fresh = 0;
            last_end = Instant::now();
            last_took = started.elapsed();
        }
        let wanted = {
            let s = lock(&intake.shared);
            s.page_wanted && !s.page_fresh
        };
        if wanted {
            let read = kept.ingest(&settings.options, &beside);
            let page = read.and_then(|(ing, _)| detector.page(ing, NAME, lost));
            let mut s = lock(&intake.shared);
            s.page = Some(page.unwrap_or_else(|e| error_page(&e)));
            s.page_fresh = true;
            s.page_wanted = false;
        }
    }
    let read = kept.ingest(&settings.options, &beside);
    let report = detect(read, kept.count, lost, &intake, &mut *detector, &mut alerts);
    Finished {
        report,
        lost,
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

/// One detection over everything kept (`count` spans, read as `read`); updates the shared
/// state and writes new alerts.
fn detect(
    read: Result<(Ingested, Vec<Origin>), String>,
    count: usize,
    lost: Lost,
    intake: &Intake,
    detector: &mut dyn Detector,
    alerts: &mut Alerts,
) -> Result<String, String> {
    let (report, origins) = match read {
        Ok((ing, origins)) => (detector.report(ing, NAME, lost), origins),
        Err(e) => (Err(e), Vec::new()),
    };
    let mut s = lock(&intake.shared);
    s.runs += 1;
    s.detected = count as u64;
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
            let n = alerts.witnesses(&v, &origins);
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

    /// Alerts the listed witnesses of `report` not alerted before, each with the spans of
    /// the records it names (`origins`, by record); how many.
    fn witnesses(&mut self, report: &Json, origins: &[Origin]) -> u64 {
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
                let records = positions(w);
                let mut traces: Vec<&str> = Vec::new();
                let rests_on: Vec<Json> = (records.iter())
                    .filter_map(|&r| {
                        let o = origins.get(usize::try_from(r).ok()?)?;
                        if !traces.contains(&o.trace()) {
                            traces.push(o.trace());
                        }
                        let spans: Vec<&str> = o.spans().collect();
                        Some(json!({"record": r, "trace": o.trace(), "spans": spans}))
                    })
                    .collect();
                let line = json!({
                    "anomaly": anomaly,
                    "at_unix_ms": at,
                    "agents": strings_named(w, "agent"),
                    "records": records,
                    "traces": traces,
                    "rests_on": rests_on,
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
