//! `agentsim serve`: an OTLP receiver (OTLP/HTTP and OTLP/gRPC) that checks agents' spans as
//! they arrive, writes an alert per witness, and on SIGTERM or SIGINT reports what it received
//! as `detect --from otel --json` reports a file (docs/serving.md, "Monitoring live").
//!
//! The network, the queue and the bookkeeping are the `agentsim-serve` crate's; this wires
//! the command: its flags, and the reading and detecting, which are `detect`'s own
//! ([`super::detect::ingested_json`]) so the report is the one `detect` prints.

use crate::artifacts::output::{preflight, write_atomic};
use agentsim_ingest::{Ingested, Source};
use agentsim_serve::Lost;
use anyhow::{bail, Context as _};
use clap::Args as ClapArgs;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Receive spans over OTLP and check them as they arrive.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// OTLP/HTTP address (`POST /v1/traces`, `GET /healthz`, `GET /metrics`, `GET /`). Port 0
    /// picks a free port; the bound addresses are printed on stderr at start. There is no
    /// authentication: bind beyond loopback only behind something that provides it.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4318")]
    pub listen: SocketAddr,
    /// OTLP/gRPC address (`TraceService/Export`), or `off`.
    #[arg(long, value_name = "ADDR|off", default_value = "127.0.0.1:4317", value_parser = parse_grpc)]
    pub grpc: Grpc,
    /// Where the report goes on SIGTERM or SIGINT (written atomically): `detect --json`'s
    /// report on the spans received. Default: stdout.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// One JSON line per witness as soon as it is found, flushed per line (appended).
    #[arg(long, value_name = "FILE")]
    pub alerts: Option<PathBuf>,
    /// How the spans are read: `otel` (GenAI spans, or OpenInference spans, detected),
    /// `genai` or `openinference`, as `detect --from` reads a file.
    #[arg(long, value_name = "SOURCE", default_value = "otel", value_parser = parse_from)]
    pub from: Source,
    #[command(flatten)]
    pub beside: super::input::BesideArgs,
    /// The most spans waiting for their trace to be mapped (`--seal-ms`). Past it spans are
    /// dropped and counted, and every verdict is then *cannot tell* with the count as its
    /// reason.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_pending_spans: usize,
    /// A trace whose root span has arrived and none of whose spans has arrived for this many
    /// milliseconds (ten times as many without a root) is mapped for good and its spans let
    /// go. A span of it arriving later is late: counted, and every verdict is then *cannot
    /// tell* with the count as its reason. (OpenInference spans and `--mcp-log` are read as
    /// one export: their traces are kept whole to the end, as are all traces under `--from
    /// otel` until a GenAI span has come.)
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub seal_ms: u64,
    /// The largest request body in bytes, compressed or inflated (413 past it).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub max_body: usize,
    /// Batches waiting to be kept before requests are refused (429 / UNAVAILABLE).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub queue: usize,
    /// Detect once no span has arrived for this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub quiet_ms: u64,
    /// Seconds a refused exporter is told to wait (`Retry-After`).
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub retry_after: u64,
    /// This instance receives part of a system's spans (a load-balancing exporter routes to
    /// several): an anomaly whose spans went to another instance cannot be seen here, so every
    /// verdict that would be *holds* or *violated* is *cannot tell*, with this as the reason.
    #[arg(long)]
    pub routed: bool,
    /// Take nothing off the queue while this file exists (maintenance; the tests' full queue).
    #[arg(long, value_name = "FILE", hide = true)]
    pub pause_while: Option<PathBuf>,
}

/// `--grpc`: an address, or off.
#[derive(Clone, Debug)]
pub struct Grpc(pub Option<SocketAddr>);

fn parse_grpc(s: &str) -> Result<Grpc, String> {
    match s {
        "off" => Ok(Grpc(None)),
        _ => s
            .parse()
            .map(|a| Grpc(Some(a)))
            .map_err(|e| format!("`{s}` is neither an address (HOST:PORT) nor `off`: {e}")),
    }
}

fn parse_from(s: &str) -> Result<Source, String> {
    let source = Source::parse(s)?;
    match source.takes_tool_memory() {
        true => Ok(source),
        false => Err(format!(
            "`{s}` is not read from spans: serve reads otel, genai or openinference"
        )),
    }
}

/// Detects as `detect --from SOURCE --json` does.
struct Detect {
    routed: bool,
}

impl Detect {
    /// Why the spans received may lack some the system emitted, if they may.
    fn missing(&self, lost: Lost) -> Option<String> {
        let spans = |n: u64| format!("{n} span{}", if n == 1 { "" } else { "s" });
        let dropped = (lost.dropped > 0)
            .then(|| format!("{} dropped past --max-pending-spans", spans(lost.dropped)));
        let late = (lost.late > 0).then(|| {
            format!(
                "{} arrived after their trace was mapped (--seal-ms)",
                spans(lost.late)
            )
        });
        let routed = self.routed.then(|| {
            "this instance receives part of the spans (--routed): those routed to another \
             instance are not seen here"
                .to_owned()
        });
        let all: Vec<String> = dropped.into_iter().chain(late).chain(routed).collect();
        (!all.is_empty()).then(|| all.join("; "))
    }
}

impl agentsim_serve::Detector for Detect {
    fn report(&mut self, ingested: Ingested, name: &str, lost: Lost) -> Result<String, String> {
        let Ingested { history, report } = ingested;
        let missing = self.missing(lost);
        super::detect::ingested_json(history, &report, name, missing.as_deref())
            .map_err(|e| format!("{e:#}"))
    }

    fn page(&mut self, ingested: Ingested, name: &str, lost: Lost) -> Result<String, String> {
        let Ingested { history, report } = ingested;
        let title = "spans received".to_owned();
        let mut page = super::view::page_of(history, title, name, Some(report))
            .map_err(|e| format!("{e:#}"))?;
        if let Some(missing) = self.missing(lost) {
            page.undecided = Some(format!("cannot tell: {missing}"));
        }
        Ok(crate::view::render(&page))
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = args.beside.options(Some(args.from));
    options.check()?;
    if let Some(r) = &args.report {
        preflight(r).context("--report")?;
    }
    if args.max_pending_spans == 0 {
        bail!("--max-pending-spans must be at least 1");
    }
    let config = agentsim_serve::Config {
        listen: args.listen,
        grpc: args.grpc.0,
        max_body: args.max_body,
        queue: args.queue,
        max_pending_spans: args.max_pending_spans,
        quiet: Duration::from_millis(args.quiet_ms),
        seal: Duration::from_millis(args.seal_ms),
        options,
        alerts: args.alerts.clone(),
        pause_while: args.pause_while.clone(),
        retry_after: args.retry_after,
    };
    let out = agentsim_serve::run(
        config,
        Box::new(Detect {
            routed: args.routed,
        }),
    )?;
    let shown = |p: &Option<PathBuf>| match p {
        Some(p) => crate::artifacts::paths::shown(p),
        None => "stdout".to_owned(),
    };
    let rss = crate::bench::detect::peak_rss_mib()
        .map_or(String::new(), |m| format!("; peak RSS {m:.0} MiB"));
    eprintln!(
        "agentsim serve: stopped; {} spans kept, {} dropped, {} late{rss}",
        out.kept, out.lost.dropped, out.lost.late
    );
    match out.report {
        Ok(text) => {
            let to = args.report.clone().unwrap_or_else(|| PathBuf::from("-"));
            write_atomic(&to, text.as_bytes()).context("--report")?;
            eprintln!("agentsim serve: report -> {}", shown(&args.report));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("the spans received give no report: {e}"),
    }
}
