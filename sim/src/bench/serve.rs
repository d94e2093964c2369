//! `agentsim bench serve`: `agentsim serve` under a loopback load, as an SDK's batch exporter
//! sends it.
//!
//! Starts `agentsim serve` (this binary) as a child on ephemeral loopback ports, then sends
//! `--spans` spans over one keep-alive HTTP/1.1 connection as protobuf batches of `--batch`
//! spans (an OpenTelemetry SDK's `BatchSpanProcessor` exports at most 512 at a time, one export
//! at a time). The spans are copies of an example trace (default
//! `scenarios/traces/otel/memory_lost_update.json`), each copy with its own trace ids and its
//! times past the previous copy's. A batch refused with 429 is sent again after 10 ms.
//!
//! Figures: the spans per second from the first request until the receiver has detected over
//! every span (`agentsim_spans_detected` on `/metrics` reaching the count), and until the last
//! batch was accepted; for each batch, the time from its acceptance to the end of the first
//! detection covering it (read by scraping `/metrics` every 5 ms, so to within 5 ms), as p50,
//! p99 and max; and the receiver's peak resident memory (`VmHWM`, which it prints on exit).
//! The child's report is written to a scratch folder and removed.

use agentsim_serve::convert::request_of_json;
use anyhow::{bail, Context as _};
use clap::Args as ClapArgs;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;
use serde::Serialize;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `agentsim bench serve`.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The trace copied (one OTLP/JSON document per line).
    #[arg(long, default_value = "scenarios/traces/otel/memory_lost_update.json")]
    pub trace: PathBuf,
    /// Spans sent, rounded up to whole copies of the trace (1..=10000000).
    #[arg(long, default_value_t = 1_000_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub spans: u64,
    /// Spans per batch (1..=100000).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub batch: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The figures of one run.
#[derive(Debug, Serialize)]
pub struct Figures {
    pub spans: u64,
    pub batches: u64,
    pub refused: u64,
    pub accepted_s: f64,
    pub detected_s: f64,
    pub spans_per_s_accepted: f64,
    pub spans_per_s_detected: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_max: f64,
    pub detections: u64,
    pub peak_rss_mib: Option<f64>,
}

/// One copy of the trace as requests, and how far apart copies are.
struct Template {
    docs: Vec<ExportTraceServiceRequest>,
    spans: u64,
    period_ns: u64,
    t0: u64,
}

impl Template {
    fn read(path: &std::path::Path) -> anyhow::Result<Template> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let mut docs = Vec::new();
        for doc in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>() {
            let doc = doc.with_context(|| format!("{}: not OTLP/JSON", path.display()))?;
            docs.push(request_of_json(&doc));
        }
        let spans = docs.iter().flat_map(spans_of);
        let (mut lo, mut hi, mut n) = (u64::MAX, 0, 0);
        for s in spans {
            lo = lo.min(s.start_time_unix_nano);
            hi = hi.max(s.end_time_unix_nano);
            n += 1;
        }
        if n == 0 {
            bail!("{}: no spans", path.display());
        }
        Ok(Template {
            docs,
            spans: n,
            period_ns: hi - lo + 1_000_000_000,
            t0: lo,
        })
    }

    /// Copy `k`: trace ids with `k` in their first 8 bytes, times shifted by `k` periods.
    fn copy(&self, k: u64) -> Vec<ExportTraceServiceRequest> {
        let shift = k * self.period_ns;
        let mut docs = self.docs.clone();
        for d in &mut docs {
            for rs in &mut d.resource_spans {
                for ss in &mut rs.scope_spans {
                    for s in &mut ss.spans {
                        if s.trace_id.len() == 16 {
                            s.trace_id[..8].copy_from_slice(&k.to_be_bytes());
                        }
                        s.start_time_unix_nano = s.start_time_unix_nano - self.t0 + shift;
                        s.end_time_unix_nano = s.end_time_unix_nano - self.t0 + shift;
                        for e in &mut s.events {
                            e.time_unix_nano = e.time_unix_nano.saturating_sub(self.t0) + shift;
                        }
                    }
                }
            }
        }
        docs
    }
}

fn spans_of(
    d: &ExportTraceServiceRequest,
) -> impl Iterator<Item = &opentelemetry_proto::tonic::trace::v1::Span> {
    let scopes = d.resource_spans.iter().flat_map(|rs| &rs.scope_spans);
    scopes.flat_map(|ss| &ss.spans)
}

fn count(d: &ExportTraceServiceRequest) -> u64 {
    spans_of(d).count() as u64
}

/// Sends one request on `conn` and reads the response: its status.
fn post(conn: &mut BufReader<TcpStream>, host: &str, body: &[u8]) -> anyhow::Result<u16> {
    let head = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-protobuf\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let s = conn.get_mut();
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("not an HTTP response: {line:?}"))?;
    let mut len = 0usize;
    loop {
        line.clear();
        conn.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut skip = vec![0; len];
    conn.read_exact(&mut skip)?;
    Ok(status)
}

/// `agentsim_spans_detected` from a scrape of `/metrics`.
fn detected(host: &str) -> Option<(u64, u64)> {
    let mut s = TcpStream::connect(host).ok()?;
    let req = format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let value = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((
        value("agentsim_spans_detected ")?,
        value("agentsim_detections_total ")?,
    ))
}

/// Runs the benchmark.
pub fn run(a: &Args) -> anyhow::Result<Figures> {
    let template = Template::read(&a.trace)?;
    let copies = a.spans.div_ceil(template.spans);
    let total = copies * template.spans;
    let dir = std::env::temp_dir().join(format!("agentsim-bench-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let exe = std::env::current_exe().context("this binary")?;
    let mut child = Command::new(exe)
        .args(["serve", "--listen", "127.0.0.1:0", "--grpc", "off"])
        .arg("--report")
        .arg(dir.join("report.json"))
        .args(["--max-pending-spans", &total.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting agentsim serve")?;
    let mut err = BufReader::new(child.stderr.take().context("stderr")?);
    let mut first = String::new();
    err.read_line(&mut first)?;
    let host = first
        .strip_prefix("agentsim serve: listening on http://")
        .and_then(|r| r.split(' ').next())
        .with_context(|| format!("agentsim serve said: {first}"))?
        .to_owned();
    // The scraper: (time, spans detected) every 5 ms until told to stop.
    let polls: Arc<Mutex<Vec<(Instant, u64, u64)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = {
        let (polls, stop, host) = (polls.clone(), stop.clone(), host.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some((d, runs)) = detected(&host) {
                    polls
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((Instant::now(), d, runs));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let pid = child.id().to_string();
    let measured = load(a, &template, copies, &host, &polls);
    stop.store(true, Ordering::Relaxed);
    let _ = scraper.join();
    Command::new("kill").args(["-TERM", &pid]).status()?;
    let mut rest = String::new();
    err.read_to_string(&mut rest)?;
    child.wait()?;
    let _ = std::fs::remove_dir_all(&dir);
    let peak = rest
        .split("peak RSS ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok());
    let mut f = measured?;
    f.peak_rss_mib = peak;
    Ok(f)
}

type Polls = Arc<Mutex<Vec<(Instant, u64, u64)>>>;

/// Sends the load and waits for the detection over all of it; the figures but the memory.
fn load(
    a: &Args,
    template: &Template,
    copies: u64,
    host: &str,
    polls: &Polls,
) -> anyhow::Result<Figures> {
    let mut conn = BufReader::new(TcpStream::connect(host)?);
    conn.get_ref().set_nodelay(true)?;
    let start = Instant::now();
    let (mut sent, mut refused, mut batches) = (0u64, 0u64, 0u64);
    let mut accepted: Vec<(Instant, u64)> = Vec::new();
    let mut pending = ExportTraceServiceRequest::default();
    let mut flush = |req: &mut ExportTraceServiceRequest, sent: &mut u64| -> anyhow::Result<()> {
        let n = count(req);
        if n == 0 {
            return Ok(());
        }
        let body = std::mem::take(req).encode_to_vec();
        loop {
            match post(&mut conn, host, &body)? {
                200 => break,
                429 | 503 => {
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => bail!("agentsim serve answered {other}"),
            }
        }
        *sent += n;
        batches += 1;
        accepted.push((Instant::now(), *sent));
        Ok(())
    };
    for k in 0..copies {
        for doc in template.copy(k) {
            pending.resource_spans.extend(doc.resource_spans);
            if count(&pending) >= a.batch {
                flush(&mut pending, &mut sent)?;
            }
        }
    }
    flush(&mut pending, &mut sent)?;
    let accepted_s = start.elapsed().as_secs_f64();
    let deadline = Instant::now() + Duration::from_secs(600);
    let done = loop {
        let last = polls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .copied();
        if let Some((t, d, _)) = last.filter(|&(_, d, _)| d >= sent) {
            break (t, d);
        }
        if Instant::now() > deadline {
            bail!("agentsim serve did not detect over every span in 600 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let detected_s = done.0.duration_since(start).as_secs_f64();
    let polls = polls.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut lat: Vec<f64> = accepted
        .iter()
        .map(|&(at, upto)| {
            let first = polls.iter().find(|&&(t, d, _)| t >= at && d >= upto);
            first.map_or(f64::INFINITY, |&(t, _, _)| {
                t.duration_since(at).as_secs_f64() * 1e3
            })
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| lat[((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1];
    let detections = polls.last().map_or(0, |&(_, _, r)| r);
    Ok(Figures {
        spans: sent,
        batches,
        refused,
        accepted_s,
        detected_s,
        spans_per_s_accepted: sent as f64 / accepted_s,
        spans_per_s_detected: sent as f64 / detected_s,
        latency_ms_p50: pct(0.50),
        latency_ms_p99: pct(0.99),
        latency_ms_max: pct(1.0),
        detections,
        peak_rss_mib: None,
    })
}

/// The figures as text.
pub fn text(f: &Figures) -> String {
    let rss = f
        .peak_rss_mib
        .map_or("unknown".to_owned(), |m| format!("{m:.0} MiB"));
    format!(
        "{} spans in {} protobuf batches ({} refused and resent)\n\
         accepted: {:.2} s, {:.0} spans/s\n\
         detected over every span: {:.2} s, {:.0} spans/s ({} detections)\n\
         batch accepted -> detected: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms\n\
         receiver peak RSS: {rss}\n",
        f.spans,
        f.batches,
        f.refused,
        f.accepted_s,
        f.spans_per_s_accepted,
        f.detected_s,
        f.spans_per_s_detected,
        f.detections,
        f.latency_ms_p50,
        f.latency_ms_p99,
        f.latency_ms_max,
    )
}
