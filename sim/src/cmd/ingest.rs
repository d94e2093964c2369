//! `agentsim ingest SOURCE FILE`: an agentsim history from what an agent system wrote.
//!
//! SOURCE is one of [`agentsim_ingest::Source::FROM`] (`otel`, `genai`, `openinference`,
//! `mcp`, `langgraph`), read by [`agentsim_ingest::load`] with the flags `detect --from`
//! takes (`--thread`, `--tool-memory`, `--mcp-log`: [`super::input`]), so the two give the
//! same history and report. Writes the JSON Lines history (stdout, or `-o FILE`) and says on
//! stderr what the input let it decide (`--report FILE` writes that report as JSON; `detect
//! HISTORY --ingest-report FILE` reads it back). Exit 0, or 2 when the input is unreadable
//! (the message names the file and what was wrong). A history written here is only as
//! complete as the report says; a detector's "none" on an anomaly reported undecidable means
//! nothing.

use super::input::{beside_paths, BesideArgs};
use crate::artifacts::paths::Paths;
use agentsim_ingest::source::FROM_HELP;
use agentsim_ingest::Source;
use agentsim_jsonl as jsonl;
use anyhow::Context;
use clap::Args as ClapArgs;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Convert traces, logs or checkpoints into an agentsim history.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[arg(value_name = "SOURCE", value_parser = Source::parse, help = FROM_HELP)]
    pub source: Source,
    /// The input file (`-` reads stdin, except for a database).
    pub file: PathBuf,
    /// Write the history here instead of stdout.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Also write the report (what is decidable, counts, run errors) as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub beside: BesideArgs,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = args.beside.options(Some(args.source));
    options.check()?;
    let paths = Paths::new().input(args.source.what(), &args.file);
    beside_paths(paths, &options)
        .output("-o", args.out.as_deref())
        .output("--report", args.report.as_deref())
        .check()?;
    for p in args.out.iter().chain(&args.report) {
        crate::artifacts::output::preflight(p)?;
    }
    let ingested = agentsim_ingest::load(&args.file, &options)?;
    let text = jsonl::write_history(&ingested.history);
    match &args.out {
        Some(out) => crate::artifacts::output::write_atomic(out, text.as_bytes())?,
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("writing the history to stdout")?,
    }
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&ingested.report.to_json())? + "\n";
        crate::artifacts::output::write_atomic(path, json.as_bytes())?;
    }
    eprint!("{}", ingested.report.to_text());
    Ok(ExitCode::SUCCESS)
}
