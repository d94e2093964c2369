//! The detector benchmark (`agentsim bench detect`): time the fast detectors on a 1,000,000-record history.
//!
//! Generates the history first ([`workload`]), then times the fast detectors on it with no
//! other load in the process: all of them together (best of `--repeat` runs) and each one
//! alone, then the spec form on a `--spec-records` history for contrast (checking that both
//! forms agree there). Peak resident memory is read from `/proc/self/status` (`VmHWM`) where
//! available. Wall-clock timing is the point here; nothing in the models reads a clock.

use super::workload::{self, Workload};
use agentsim_models::detect::{fast, spec, write_index::WriteIndex};
use agentsim_models::History;
use serde_json::json;
use std::fmt::Write as _;
use std::time::Instant;

/// What to time.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Records in the generated history for the fast detectors.
    pub records: usize,
    /// Records in the history for the spec form (quadratic: keep it small).
    pub spec_records: usize,
    /// Timed runs of all fast detectors together; the best is reported.
    pub repeat: u32,
    /// Seed of the generator.
    pub seed: u64,
}

/// Runs `f`, returning its result and the wall-clock seconds it took.
fn seconds<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// CPU seconds (user + system) this process has used, from Linux's `/proc/self/stat`, in
/// clock ticks of 1/100 s (USER_HZ). On a shared machine this, not wall time, is the work done.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs the benchmark; the figures as one JSON object (progress goes to stderr).
pub fn run(args: &Config) -> anyhow::Result<serde_json::Value> {
    let w = Workload::standard(args.records, args.seed);
    eprintln!("generating {} records (seed {})", args.records, args.seed);
    let (h, gen_s) = seconds(|| workload::generate(w));
    eprintln!("generated in {gen_s:.2} s; timing fast detectors");
    let mut best = f64::INFINITY;
    let mut report = None;
    let cpu_start = cpu_seconds();
    for _ in 0..args.repeat {
        let (r, s) = seconds(|| fast::detect(&h));
        best = best.min(s);
        report = Some(r);
    }
    let cpu = cpu_seconds()
        .zip(cpu_start)
        .map(|(end, start)| (end - start) / f64::from(args.repeat));
    let report = report.expect("repeat ≥ 1");
    let parts = breakdown(&h);
    eprintln!("spec form on {} records", args.spec_records);
    let small = workload::generate(Workload::standard(args.spec_records, args.seed));
    let (spec_report, spec_s) = seconds(|| spec::detect(&small));
    let (fast_small, fast_small_s) = seconds(|| fast::detect(&small));
    anyhow::ensure!(
        spec_report == fast_small,
        "spec and fast disagree on the spec-size history"
    );
    let writes: usize = h
        .records
        .iter()
        .filter(|r| !r.aborted)
        .map(|r| r.write_set.len())
        .sum();
    Ok(json!({
        "records": h.len(),
        "agents": w.agents, "cells": w.cells, "hot_cells": w.hot_cells, "tools": w.tools,
        "seed": w.seed,
        "live_writes": writes,
        "witnesses": {
            "A1": report.a1.len(), "A2": report.a2.len(), "A3": report.a3.len(),
            "A3_residue": report.a3_residue.len(), "A6": report.a6.len(),
            "L1_struct_violations": report.l1_struct.len(),
        },
        "generate_seconds": gen_s,
        "fast_seconds": best,
        "fast_cpu_seconds_mean": cpu,
        "fast_breakdown_seconds": parts,
        "spec_records": small.len(),
        "spec_seconds": spec_s,
        "fast_seconds_at_spec_records": fast_small_s,
        "peak_rss_mib": peak_rss_mib(),
    }))
}

/// Each fast detector alone, on a fresh index (the index build is timed on its own).
fn breakdown(h: &History) -> serde_json::Value {
    let r = &h.records;
    let (index, index_s) = seconds(|| WriteIndex::build(r));
    let (_, a1) = seconds(|| fast::a1(r, &index, fast::Tuning::default()));
    let (_, a2) = seconds(|| fast::a2(r));
    let (_, a3) = seconds(|| fast::a3(r));
    let (_, residue) = seconds(|| fast::a3_residue(r, &index));
    let (_, a6) = seconds(|| fast::a6(r));
    let (_, l1) = seconds(|| fast::l1_struct(r, &index));
    json!({ "index": index_s, "A1": a1, "A2": a2, "A3": a3, "A3_residue": residue, "A6": a6,
            "L1_struct": l1 })
}

/// Peak resident set size of this process, from Linux's `/proc/self/status`.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The figures as text.
pub fn text(v: &serde_json::Value) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "history: {} records, {} agents, {} cells ({} hot), {} live writes, seed {}",
        v["records"], v["agents"], v["cells"], v["hot_cells"], v["live_writes"], v["seed"]
    );
    let _ = writeln!(s, "witnesses: {}", v["witnesses"]);
    let _ = writeln!(
        s,
        "generate: {:.3} s",
        v["generate_seconds"].as_f64().unwrap_or(0.0)
    );
    let _ = writeln!(
        s,
        "fast detectors, all together: {:.3} s wall (best run), {:.3} s CPU (mean)",
        v["fast_seconds"].as_f64().unwrap_or(0.0),
        v["fast_cpu_seconds_mean"].as_f64().unwrap_or(f64::NAN)
    );
    if let Some(parts) = v["fast_breakdown_seconds"].as_object() {
        for (k, secs) in parts {
            let _ = writeln!(s, "  {k:<11} {:.3} s", secs.as_f64().unwrap_or(0.0));
        }
    }
    let _ = writeln!(
        s,
        "spec form at {} records: {:.3} s (fast: {:.4} s)",
        v["spec_records"],
        v["spec_seconds"].as_f64().unwrap_or(0.0),
        v["fast_seconds_at_spec_records"].as_f64().unwrap_or(0.0)
    );
    if let Some(mib) = v["peak_rss_mib"].as_f64() {
        let _ = writeln!(s, "peak RSS: {mib:.0} MiB");
    }
    s
}
