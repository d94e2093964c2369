//! `agentsim bench view`: how long a page takes to build from a history file, and how big it
//! is — the benchmark history of `bench history` (8 agents, 64 cells) at `--records`, read,
//! detected, named and rendered as `agentsim view` does, best of `--repeat` runs. It asserts
//! nothing about speed; `docs/benchmarks.md` keeps the figure. What the browser then spends
//! laying the page out is not measured here.

use crate::bench::workload::{self, Workload};
use agentsim_jsonl::write_record;
use agentsim_models::Names;
use clap::Args as ClapArgs;
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

/// `agentsim bench view`.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Records in the generated history (at most the page's limit).
    #[arg(long, default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=crate::view::RECORDS_MAX as u64))]
    pub records: u64,
    /// Timed builds; the best is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs the benchmark.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let names = Names::new();
    let mut text = String::new();
    workload::stream(Workload::standard(a.records as usize, a.seed), |r| {
        write_record(&names, &r, &mut text);
        text.push('\n');
    });
    let (mut best, mut bytes, mut anomalies) = (f64::INFINITY, 0, 0);
    for _ in 0..a.repeat {
        let t = Instant::now();
        let h = agentsim_jsonl::parse_history(&text, "bench.jsonl")?;
        let page = super::page_of(h, "bench.jsonl".into(), "bench.jsonl", None)?;
        let html = crate::view::render(&page);
        best = best.min(t.elapsed().as_secs_f64());
        (bytes, anomalies) = (html.len(), page.anomalies.len());
    }
    if a.json {
        let v = json!({ "records": a.records, "history_bytes": text.len(), "page_bytes": bytes,
                        "anomalies_listed": anomalies, "best_seconds": best, "repeat": a.repeat });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "view: {} records ({} bytes of JSON Lines) -> page of {bytes} bytes ({:.2} MB), \
             {anomalies} anomalies listed; built in {:.3} s (best of {})",
            a.records,
            text.len(),
            bytes as f64 / 1e6,
            best,
            a.repeat
        );
    }
    Ok(ExitCode::SUCCESS)
}
