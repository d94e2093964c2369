//! What `detect`, `ingest`, `fit`, `fix` and `view` read, with the same flags: a JSON Lines
//! history, or with `--from SOURCE` a trace, a log or a checkpointer database read by
//! [`agentsim_ingest::load`], with what is read beside it (`--thread`, `--tool-memory`,
//! `--mcp-log`). The flags are checked by the ingest crate ([`Options::check`]), so every
//! command refuses a misplaced one in the same words.

use crate::artifacts::paths::Paths;
use crate::experiments::fit_fix::observe::{self, Observation};
use agentsim_ingest::source::FROM_HELP;
use agentsim_ingest::{Ingested, Options, Report, Source};
use agentsim_jsonl as jsonl;
use agentsim_models::History;
use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// `--from` and the flags read beside the input.
#[derive(Clone, Debug, Default, ClapArgs)]
pub struct FromArgs {
    #[arg(long, value_name = "SOURCE", value_parser = Source::parse, help = FROM_HELP)]
    pub from: Option<Source>,
    #[command(flatten)]
    pub beside: BesideArgs,
}

/// The flags only some sources take.
#[derive(Clone, Debug, Default, ClapArgs)]
pub struct BesideArgs {
    /// With `--from langgraph`: the thread to read (needed when the database holds several).
    #[arg(long)]
    pub thread: Option<String>,
    /// With `--from otel`, `genai` or `openinference`: a mapping file (TOML) naming the tools
    /// that read or write memory (GenAI `execute_tool` or OpenInference `TOOL` spans, cells
    /// named from the call's arguments) and the agents that share a tool registry
    /// (docs/ingest.md, "Memory behind tools"); on OpenInference spans it combines with
    /// `--mcp-log`.
    #[arg(long, value_name = "MAP.toml")]
    pub tool_memory: Option<PathBuf>,
    /// With `--from openinference` (or `otel` on OpenInference spans): an MCP JSON-RPC log of
    /// the same run; each tool span is joined with its `tools/call`, so A2 is decided from the
    /// servers' registry timelines (docs/ingest.md, "OpenInference with an MCP log").
    #[arg(long, value_name = "LOG.jsonl")]
    pub mcp_log: Option<PathBuf>,
}

impl BesideArgs {
    /// The options of reading `from` with these flags.
    pub fn options(&self, from: Option<Source>) -> Options {
        Options {
            from,
            thread: self.thread.clone(),
            tool_memory: self.tool_memory.clone(),
            mcp_log: self.mcp_log.clone(),
        }
    }
}

impl FromArgs {
    /// The options these flags give, checked.
    pub fn options(&self) -> anyhow::Result<Options> {
        let o = self.beside.options(self.from);
        o.check()?;
        Ok(o)
    }
}

/// `paths` with the files read beside the input.
pub fn beside_paths(paths: Paths, o: &Options) -> Paths {
    let mut paths = paths;
    let beside = [("the MCP log", &o.mcp_log), ("the mapping", &o.tool_memory)];
    for (what, p) in beside {
        if let Some(p) = p {
            paths = paths.input(what, p);
        }
    }
    paths
}

/// Reads `file` (`-` is stdin) as `o` says: a JSON Lines history without `--from`, else the
/// ingested history and its report.
pub fn read(file: &Path, o: &Options) -> anyhow::Result<(History, Option<Report>)> {
    o.check()?;
    if o.from.is_some() {
        let Ingested { history, report } = agentsim_ingest::load(file, o)?;
        return Ok((history, Some(report)));
    }
    // The reader's errors already name the source, the line and the key.
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("<stdin>: cannot read")?;
        return Ok((jsonl::parse_history(&text, "<stdin>")?, None));
    }
    Ok((jsonl::read_history(file)?, None))
}

/// `report` (read from `path`: the report `ingest --report` wrote, for `detect
/// --ingest-report`) if it is of a history of `records` records; one of another history (its
/// record count differs) is refused.
pub fn count_checked(report: Report, path: &Path, records: u64) -> anyhow::Result<Report> {
    if report.records as u64 != records {
        bail!(
            "{}: the report is of {} ({} records), and this history has {records} records",
            path.display(),
            agentsim_models::escape_text(&report.file),
            report.records
        );
    }
    Ok(report)
}

/// Reads `file` as `options` say into what `fit` and `fix` fit a scenario to.
pub fn observation(file: &Path, options: &Options) -> anyhow::Result<Observation> {
    let (history, report) = read(file, options)?;
    let shown = file.display().to_string();
    observe::observe(history, report, options.from, file, &shown)
}
