//! `agentsim bench stream`: the stream detector alone, on records generated in the process.
//!
//! No JSON: the workload's records go straight from the generator into
//! [`Stream::push`](agentsim_models::detect::stream::Stream::push) with a bounded window, so
//! this times the detector and shows that its memory does not grow with the history (peak RSS
//! from `/proc/self/status`). The generator's own time is measured apart, in a run without
//! the detector, and subtracted, both in wall and in CPU seconds (on a shared machine the CPU
//! figure is the work done). `agentsim detect --stream FILE` measures the whole path.

use super::workload::{self, Workload};
use agentsim_models::detect::stream::{Limits, Options, Stream};
use clap::Args as ClapArgs;
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

/// Time the stream detector.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Records to stream.
    #[arg(long, default_value_t = 10_000_000,
          value_parser = super::history::records(super::history::RECORDS_MAX))]
    pub records: u64,
    /// The window kept, in ticks (write_time − read_time of any record must fit).
    #[arg(long, default_value_t = 1_000_000)]
    pub window_max: u64,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// CPU seconds of this process so far (0 where `/proc` is missing).
fn cpu() -> f64 {
    super::detect::cpu_seconds().unwrap_or(0.0)
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let w = Workload::standard(args.records as usize, args.seed);
    let (start, cpu_start) = (Instant::now(), cpu());
    let mut n = 0u64;
    workload::stream(w, |r| n += r.write_set.len() as u64);
    let (generate_s, generate_cpu) = (start.elapsed().as_secs_f64(), cpu() - cpu_start);
    let opts = Options {
        limits: Limits {
            max_witnesses: 1000,
            window_max: args.window_max,
            live_max: usize::MAX,
        },
        residue: false,
        keep_agents: false,
    };
    let mut stream = Stream::new(opts);
    let mut failed = None;
    let mut live_max = 0;
    let (start, cpu_start) = (Instant::now(), cpu());
    workload::stream(w, |r| {
        let line = stream.records() + 1;
        if let Err(e) = stream.push(&r, line, &mut ()) {
            failed.get_or_insert(e);
        }
        live_max = live_max.max(stream.live());
    });
    let (total_s, total_cpu) = (start.elapsed().as_secs_f64(), cpu() - cpu_start);
    if let Some(e) = failed {
        anyhow::bail!("the workload does not fit the window: {e}");
    }
    let s = stream.finish(&mut ());
    let detect_s = (total_s - generate_s).max(f64::MIN_POSITIVE);
    let detect_cpu = (total_cpu - generate_cpu).max(f64::MIN_POSITIVE);
    let v = json!({
        "records": s.records, "writes": n, "window_max": args.window_max,
        "live_writes_max": live_max,
        "witnesses": { "A1": s.a1.total, "A2": s.a2.total, "A3": s.a3.total,
                       "A6": s.a6.total, "L1_struct": s.l1_struct.total },
        "generate_seconds": generate_s, "generate_and_detect_seconds": total_s,
        "generate_cpu_seconds": generate_cpu, "generate_and_detect_cpu_seconds": total_cpu,
        "detect_records_per_second": s.records as f64 / detect_s,
        "detect_records_per_cpu_second": s.records as f64 / detect_cpu,
        "peak_rss_mib": super::detect::peak_rss_mib(),
    });
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(ExitCode::SUCCESS)
}
