//! `agentsim bench ingest`: OTLP/JSON ingest speed on a generated export.
//!
//! The export is `--copies` copies of an example trace file (default
//! `scenarios/traces/otel/memory_lost_update.json`), one document per line as the Collector's
//! file exporter writes, each copy with its own trace ids (the copy number in the first 16 hex
//! digits) and its times shifted past the previous copy's (a service's export over time, not
//! thousands of overlapping invocations). It is written to `--out` (kept, for `agentsim detect
//! --from otel` under `/usr/bin/time -v`), then ingested `--repeat` times; the best run is
//! reported in MB/s (10^6 bytes) with spans and records. Times are read only here; the figures
//! say nothing about peak memory (measure the process for that, as `docs/benchmarks.md` does).

use agentsim_ingest::otel::read_otel;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `agentsim bench ingest`.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The trace file copied (one OTLP/JSON document per line; times as strings).
    #[arg(long, default_value = "scenarios/traces/otel/memory_lost_update.json")]
    pub trace: PathBuf,
    /// Copies in the export (1..=10000000).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub copies: u64,
    /// Where to write the export (it is kept).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Timed ingests; the best is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The figures of one benchmark.
#[derive(Debug, Serialize)]
pub struct Figures {
    pub copies: u64,
    pub bytes: u64,
    pub spans: u64,
    pub records: usize,
    pub best_s: f64,
    pub mb_per_s: f64,
}

/// Writes the export, ingests it and returns the figures.
pub fn run(a: &Args) -> anyhow::Result<Figures> {
    let text = std::fs::read_to_string(&a.trace)
        .with_context(|| format!("{}: cannot read", a.trace.display()))?;
    let template = Template::of(&text)?;
    let bytes = template.write(a.copies, &a.out)?;
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..a.repeat {
        let t = Instant::now();
        let ingested = read_otel(&a.out)?;
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(ingested);
    }
    let Some(ingested) = last else {
        bail!("--repeat is at least 1");
    };
    Ok(Figures {
        copies: a.copies,
        bytes,
        spans: ingested.report.counts.get("spans").copied().unwrap_or(0),
        records: ingested.history.len(),
        best_s: best,
        mb_per_s: bytes as f64 / 1e6 / best,
    })
}

/// The figures as text.
pub fn text(f: &Figures) -> String {
    format!(
        "otlp ingest: {} copies, {} bytes, {} spans -> {} records: best {:.3} s, {:.1} MB/s\n",
        f.copies, f.bytes, f.spans, f.records, f.best_s, f.mb_per_s
    )
}

/// One copy's text in pieces: literal text, then a field to fill in.
struct Template {
    pieces: Vec<(String, Hole)>,
    tail: String,
    /// How far apart copies are in time: the trace's span of time, plus a second.
    period_ns: u64,
}

enum Hole {
    /// The rest of a trace id after its first 16 hex digits.
    Trace(String),
    /// A time, as nanoseconds after the trace's first.
    Time(u64),
}

const TRACE: &str = "\"traceId\":\"";
const TIMES: [&str; 3] = [
    "\"startTimeUnixNano\":\"",
    "\"endTimeUnixNano\":\"",
    "\"timeUnixNano\":\"",
];

impl Template {
    fn of(text: &str) -> anyhow::Result<Template> {
        let mut docs = String::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line)
                .context("the trace file must hold one JSON document per line")?;
            docs.push_str(&serde_json::to_string(&v)?);
            docs.push('\n');
        }
        let mut raw: Vec<(String, Result<String, u64>)> = Vec::new();
        let mut rest = docs.as_str();
        loop {
            let next = std::iter::once(TRACE)
                .chain(TIMES)
                .filter_map(|k| rest.find(k).map(|i| (i, k)))
                .min();
            let Some((i, k)) = next else { break };
            let value_at = i + k.len();
            let Some(len) = rest[value_at..].find('"') else {
                bail!("an unterminated string after {k}");
            };
            let value = &rest[value_at..value_at + len];
            let hole = if k == TRACE {
                if value.len() != 32 {
                    bail!("trace id {value:?} is not 32 hex digits");
                }
                Ok(value[16..].to_owned())
            } else {
                Err(value.parse().with_context(|| format!("time {value:?}"))?)
            };
            raw.push((rest[..value_at].to_owned(), hole));
            rest = &rest[value_at + len..];
        }
        let times = raw.iter().filter_map(|(_, h)| h.as_ref().err().copied());
        let (lo, hi) = times.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        if lo > hi {
            bail!("the trace file has no span times");
        }
        let pieces = raw
            .into_iter()
            .map(|(lit, h)| {
                let hole = match h {
                    Ok(tail) => Hole::Trace(tail),
                    Err(t) => Hole::Time(t - lo),
                };
                (lit, hole)
            })
            .collect();
        Ok(Template {
            pieces,
            tail: rest.to_owned(),
            period_ns: hi - lo + 1_000_000_000,
        })
    }

    /// Writes `copies` copies to `out`; returns the bytes written.
    fn write(&self, copies: u64, out: &Path) -> anyhow::Result<u64> {
        let f = std::fs::File::create(out)
            .with_context(|| format!("{}: cannot create", out.display()))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let base = 1_767_225_600_000_000_000u64;
        let mut bytes = 0u64;
        let mut buf = String::new();
        for k in 0..copies {
            buf.clear();
            let t0 = base + k * self.period_ns;
            for (lit, hole) in &self.pieces {
                buf.push_str(lit);
                match hole {
                    Hole::Trace(tail) => buf.push_str(&format!("{k:016x}{tail}")),
                    Hole::Time(dt) => buf.push_str(&(t0 + dt).to_string()),
                }
            }
            buf.push_str(&self.tail);
            w.write_all(buf.as_bytes())?;
            bytes += buf.len() as u64;
        }
        w.flush()
            .with_context(|| format!("{}: cannot write", out.display()))?;
        Ok(bytes)
    }
}
