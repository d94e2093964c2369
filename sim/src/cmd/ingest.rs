//! `agentsim ingest otel|genai|langgraph|openinference|mcp FILE`: an agentsim history from
//! what an agent system wrote.
//!
//! `otel` reads OTLP/JSON traces: GenAI spans (the OpenTelemetry GenAI semantic conventions),
//! or OpenInference spans, detected and said so, a mixed export refused (the rule and the
//! reader are `detect --from otel`'s, [`load_with`]); `genai` reads them by the GenAI
//! conventions only; `langgraph` reads a LangGraph SQLite checkpointer database (one thread);
//! `openinference` reads OTLP/JSON traces of OpenInference spans; `mcp` an MCP client's
//! JSON-RPC log. `otel` and `openinference` take `--mcp-log LOG`, joining the tool spans with
//! the log of the same run; `otel`, `genai` and `openinference` take `--tool-memory MAP.toml`,
//! the tools that are memory; on OpenInference spans the two combine ([`load_with`]). Each writes the JSON Lines history (stdout, or `-o FILE`) and says
//! on stderr what the input let it decide (`--report FILE` writes that report as JSON; `detect
//! HISTORY --ingest-report FILE` reads it back, [`saved_report`]): the mapping and its limits
//! are in `agentsim_ingest`. `agentsim detect --from SOURCE` does both steps at once, through
//! [`load_with`], so the two give the same history and report. Exit 0, or 2 when the input
//! is unreadable (the message names the file and what was wrong). A history written here is
//! only as complete as the report says; a detector's "none" on an anomaly reported undecidable
//! means nothing.

use crate::artifacts::paths::Paths;
use agentsim_ingest::langgraph::read_langgraph;
use agentsim_ingest::mcp::McpLog;
use agentsim_ingest::mcp::{parse_mcp_log, read_mcp_log};
use agentsim_ingest::openinference::{
    parse_openinference_with, read_detected, read_openinference_with, Export,
};
use agentsim_ingest::{Ingested, Report};
use agentsim_jsonl as jsonl;
use agentsim_models::History;
use anyhow::{bail, Context};
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Convert traces or checkpoints into an agentsim history.
#[derive(Debug, ClapArgs)]
pub struct Args {
    #[command(subcommand)]
    pub source: Source,
}

/// Where the history comes from.
#[derive(Debug, Subcommand)]
pub enum Source {
    /// OTLP/JSON traces (`-` reads stdin): GenAI spans, or OpenInference spans (detected, and
    /// said so); an export mixing both is refused (choose `genai` or `openinference`).
    Otel {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        mcp: McpLogArg,
        #[command(flatten)]
        map: ToolMemoryArg,
    },
    /// OTLP/JSON traces read by the OpenTelemetry GenAI conventions only (for a mixed export).
    Genai {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        map: ToolMemoryArg,
    },
    /// A LangGraph SQLite checkpointer database (langgraph-checkpoint-sqlite).
    Langgraph {
        #[command(flatten)]
        common: Common,
        /// The thread to read (needed when the database holds several).
        #[arg(long)]
        thread: Option<String>,
    },
    /// OTLP/JSON traces with OpenInference spans (`openinference.span.kind`; `-` reads stdin).
    Openinference {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        mcp: McpLogArg,
        #[command(flatten)]
        map: ToolMemoryArg,
    },
    /// An MCP JSON-RPC log: the messages each client sent and received, one a line.
    Mcp(Common),
}

/// `--mcp-log`, which the sources of OpenInference spans take.
#[derive(Debug, ClapArgs)]
pub struct McpLogArg {
    /// An MCP JSON-RPC log of the same run: each OpenInference tool span is joined with its
    /// `tools/call`, so A2 is decided from the servers' registry timelines (docs/ingest.md,
    /// "OpenInference with an MCP log").
    #[arg(long, value_name = "LOG.jsonl")]
    pub mcp_log: Option<PathBuf>,
}

/// `--tool-memory`, which the sources of GenAI and OpenInference spans take.
#[derive(Debug, ClapArgs)]
pub struct ToolMemoryArg {
    /// A mapping file (TOML) naming the tools that read or write memory (GenAI `execute_tool`
    /// or OpenInference `TOOL` spans, cells named from the call's arguments) and the agents
    /// that share a tool registry (GenAI only) (docs/ingest.md, "Memory behind tools").
    #[arg(long, value_name = "MAP.toml")]
    pub tool_memory: Option<PathBuf>,
}

/// Flags every source takes.
#[derive(Debug, ClapArgs)]
pub struct Common {
    /// The input file.
    pub file: PathBuf,
    /// Write the history here instead of stdout.
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// Also write the report (what is decidable, counts, run errors) as JSON here.
    #[arg(long)]
    pub report: Option<PathBuf>,
}

/// The sources `agentsim detect --from` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum From {
    /// OTLP/JSON: GenAI spans, or OpenInference spans (detected, and said so).
    Otel,
    /// OTLP/JSON read by the GenAI conventions only (for an export mixing both).
    Genai,
    Langgraph,
    Openinference,
    Mcp,
}

/// What to ingest, validated once from `--from` and `--thread` ([`Ingest::of`]): the
/// LangGraph thread is a field of the one source that has threads, so no later step checks
/// it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ingest {
    /// OTLP/JSON traces, by the convention their spans follow.
    Otel,
    /// OTLP/JSON traces, GenAI spans only.
    Genai,
    /// A LangGraph checkpointer database: `thread`, or the only one it holds.
    Langgraph { thread: Option<String> },
    /// OTLP/JSON traces of OpenInference spans.
    Openinference,
    /// An MCP JSON-RPC log.
    Mcp,
}

impl Ingest {
    /// The source `agentsim detect` names with `--from` (`None`: a JSON Lines history) and
    /// `--thread`, which only `--from langgraph` takes.
    pub fn of(from: Option<From>, thread: Option<String>) -> anyhow::Result<Option<Ingest>> {
        Ok(match (from, thread) {
            (Some(From::Langgraph), thread) => Some(Ingest::Langgraph { thread }),
            (_, Some(_)) => bail!("--thread applies to --from langgraph only"),
            (Some(From::Otel), None) => Some(Ingest::Otel),
            (Some(From::Genai), None) => Some(Ingest::Genai),
            (Some(From::Openinference), None) => Some(Ingest::Openinference),
            (Some(From::Mcp), None) => Some(Ingest::Mcp),
            (None, None) => None,
        })
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let none = |common| (common, None, None);
    let (source, (common, mcp_log, tool_memory)) = match args.source {
        Source::Otel { common, mcp, map } => (Ingest::Otel, (common, mcp.mcp_log, map.tool_memory)),
        Source::Genai { common, map } => (Ingest::Genai, (common, None, map.tool_memory)),
        Source::Langgraph { common, thread } => (Ingest::Langgraph { thread }, none(common)),
        Source::Openinference { common, mcp, map } => (
            Ingest::Openinference,
            (common, mcp.mcp_log, map.tool_memory),
        ),
        Source::Mcp(common) => (Ingest::Mcp, none(common)),
    };
    let what = match source {
        Ingest::Otel | Ingest::Genai | Ingest::Openinference => "the trace",
        Ingest::Mcp => "the log",
        Ingest::Langgraph { .. } => "the database",
    };
    let beside = Beside::of(mcp_log.as_deref(), tool_memory.as_deref());
    let mut paths = Paths::new().input(what, &common.file);
    for (what, p) in [("the MCP log", &mcp_log), ("the mapping", &tool_memory)] {
        if let Some(p) = p {
            paths = paths.input(what, p);
        }
    }
    paths
        .output("-o", common.out.as_deref())
        .output("--report", common.report.as_deref())
        .check()?;
    for p in common.out.iter().chain(&common.report) {
        crate::artifacts::output::preflight(p)?;
    }
    let ingested = load_with(&source, &common.file, beside)?;
    let text = jsonl::write_history(&ingested.history);
    match &common.out {
        Some(out) => write_file(out, text.as_bytes())?,
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("writing the history to stdout")?,
    }
    if let Some(path) = &common.report {
        let json = serde_json::to_string_pretty(&ingested.report.to_json())? + "\n";
        write_file(path, json.as_bytes())?;
    }
    eprint!("{}", ingested.report.to_text());
    Ok(ExitCode::SUCCESS)
}

/// What is read beside the input: an MCP log to join with OpenInference tool spans
/// (`--mcp-log`), a mapping of the tools that are memory (`--tool-memory`; GenAI or
/// OpenInference spans), or both (OpenInference spans: a call is matched with the log by its
/// name and times and mapped by its arguments, so neither hides what the other reads).
#[derive(Clone, Copy, Debug, Default)]
pub struct Beside<'a> {
    pub mcp_log: Option<&'a Path>,
    pub tool_memory: Option<&'a Path>,
}

impl<'a> Beside<'a> {
    /// From the two flags.
    pub fn of(mcp_log: Option<&'a Path>, tool_memory: Option<&'a Path>) -> Self {
        Beside {
            mcp_log,
            tool_memory,
        }
    }
}

/// Ingests `file` from `source` with what is read beside it: the one reader `ingest` and
/// `detect --from` share, so the history saved is the history detected.
pub fn load_with(source: &Ingest, file: &Path, beside: Beside<'_>) -> anyhow::Result<Ingested> {
    use agentsim_ingest::openinference::Beside as With;
    use agentsim_ingest::otel::{mapping::Mapping, parse_otel_with, read_otel_with};
    let spans = matches!(source, Ingest::Otel | Ingest::Genai | Ingest::Openinference);
    if beside.tool_memory.is_some() && !spans {
        bail!("--tool-memory maps tool spans: it applies to --from otel, genai or openinference");
    }
    if beside.mcp_log.is_some() && !matches!(source, Ingest::Otel | Ingest::Openinference) {
        bail!("--mcp-log joins an OpenInference trace: it applies to --from openinference or otel");
    }
    let log = beside.mcp_log.map(McpLog::read).transpose()?;
    let mapping = beside.tool_memory.map(Mapping::read).transpose()?;
    let with = With {
        mcp: log.as_ref(),
        mapping: mapping.as_ref(),
    };
    let name = match is_stdin(file) {
        true => "<stdin>".to_owned(),
        false => file.display().to_string(),
    };
    Ok(match source {
        Ingest::Otel if is_stdin(file) => read_detected(Export::Text(&stdin()?), &name, with)?,
        Ingest::Otel => read_detected(Export::File(file), &name, with)?,
        Ingest::Genai if is_stdin(file) => parse_otel_with(&stdin()?, &name, with.mapping)?,
        Ingest::Genai => read_otel_with(file, with.mapping)?,
        Ingest::Openinference if is_stdin(file) => {
            parse_openinference_with(&stdin()?, &name, with)?
        }
        Ingest::Openinference => read_openinference_with(file, with)?,
        Ingest::Mcp if is_stdin(file) => parse_mcp_log(&stdin()?, &name)?,
        Ingest::Mcp => read_mcp_log(file)?,
        Ingest::Langgraph { .. } if is_stdin(file) => {
            bail!("a LangGraph database is read from a file, not from stdin")
        }
        Ingest::Langgraph { thread } => read_langgraph(file, thread.as_deref())?,
    })
}

/// Ingests `file` from `source` (`-` is stdin, except for a database).
pub fn load(source: &Ingest, file: &Path) -> anyhow::Result<Ingested> {
    load_with(source, file, Beside::default())
}

/// The report `ingest --report` wrote beside a history of `records` records, read back for
/// `detect --ingest-report`; one of another history (its record count differs) is refused.
pub fn saved_report(path: &Path, records: u64) -> anyhow::Result<Report> {
    let report = agentsim_ingest::saved::read_report(path)?;
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

/// What `agentsim detect` reads whole: a JSON Lines history (`-` is stdin), or, with
/// `source`, an ingested one with its report.
pub fn history_for_detect(
    file: &Path,
    source: Option<&Ingest>,
) -> anyhow::Result<(History, Option<Report>)> {
    match source {
        Some(source) => {
            let Ingested { history, report } = load(source, file)?;
            Ok((history, Some(report)))
        }
        // The reader's errors already name the source, the line and the key.
        None if is_stdin(file) => Ok((jsonl::parse_history(&stdin()?, "<stdin>")?, None)),
        None => Ok((jsonl::read_history(file)?, None)),
    }
}

fn is_stdin(file: &Path) -> bool {
    file.as_os_str() == "-"
}

fn stdin() -> anyhow::Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("<stdin>: cannot read")?;
    Ok(text)
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    crate::artifacts::output::write_atomic(path, bytes)
}
