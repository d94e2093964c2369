//! `agentsim bench history`: write the benchmark workload as a JSON Lines history.
//!
//! The detector benchmarks of `docs/benchmarks.md` run `agentsim detect` on the file this
//! writes: `bench history --records 1000000 -o h.jsonl` is the 1,000,000-record history (8
//! agents, 64 cells) of the batch figures, `--records 10000000` the stream's. Records are
//! generated and written one at a time ([`workload::stream`]), so any length takes constant
//! memory; the same records and seed give the same bytes. Names are the synthetic `a0`, `c0`,
//! `t0`, `v1` … of ids that were never named.

use super::workload::{self, Workload};
use agentsim_jsonl::write_record;
use agentsim_models::Names;
use anyhow::Context;
use clap::Args as ClapArgs;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The most records one history may have (record indices are 32-bit in the generator).
pub const RECORDS_MAX: u64 = 1_000_000_000;

/// A record count in `1..=max` (clap says which limit was passed, with exit 2).
pub fn records(max: u64) -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=max)
}

/// Write the benchmark history.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Records to write.
    #[arg(long, default_value_t = 1_000_000, value_parser = records(RECORDS_MAX))]
    pub records: u64,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write (`-` or absent: stdout).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let w = Workload::standard(args.records as usize, args.seed);
    let sink: Box<dyn Write> = match &args.out {
        Some(p) if p.as_os_str() != "-" => {
            let f = std::fs::File::create(p)
                .with_context(|| format!("{}: cannot create", p.display()))?;
            Box::new(f)
        }
        _ => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, sink);
    let names = Names::new();
    let mut line = String::with_capacity(1024);
    let mut failed = None;
    workload::stream(w, |r| {
        if failed.is_some() {
            return;
        }
        line.clear();
        write_record(&names, &r, &mut line);
        line.push('\n');
        if let Err(e) = out.write_all(line.as_bytes()) {
            failed = Some(e);
        }
    });
    match failed.map_or_else(|| out.flush(), Err) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        r => {
            r.context("writing the history")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
