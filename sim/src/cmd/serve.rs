//! `agentsim serve`: an OTLP receiver (OTLP/HTTP and OTLP/gRPC) that checks agents' spans as
//! they arrive, writes an alert per witness, and on SIGTERM or SIGINT reports what it received
//! as `detect --from otel --json` reports a file (docs/serving.md, "Monitoring live").
//!
//! The network, the queue and the bookkeeping are the `agentsim-serve` crate's; this wires
//! the command: its flags, and the reading and detecting, which are `detect`'s own
//! ([`super::detect::ingested_json`]) so the report is the one `detect` prints.

use crate::artifacts::output::{preflight, write_atomic};
use agentsim_ingest::{Options, Source};
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
    /// The most spans kept. Past it spans are dropped and counted, and every verdict is then
    /// *cannot tell* with the count as its reason.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_pending_spans: usize,
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
    /// How an upstream router spreads spans over several receivers, this one among them:
    /// `store` (by a resource attribute naming the shared store, or by service: what an
    /// anomaly rests on arrives together, and verdicts are as one receiver's) or `trace-id`
    /// (an anomaly can rest on spans of traces sent to another receiver: every verdict that
    /// would be told is *cannot tell*). Omitted: this receiver gets every span.
    #[arg(long, value_name = "KEY", value_enum)]
    pub routed_by: Option<RoutedBy>,
    /// Take nothing off the queue while this file exists (maintenance; the tests' full queue).
    #[arg(long, value_name = "FILE", hide = true)]
    pub pause_while: Option<PathBuf>,
}

/// `--routed-by`: what a router spreading spans over receivers keys on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RoutedBy {
    /// A resource attribute naming the shared store, or the service: spans that share a store
    /// share a receiver.
    Store,
    /// The trace ID: spans of one trace share a receiver, spans that share a store may not.
    TraceId,
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

/// Reads and detects as `detect --from SOURCE --json` does.
struct Detect {
    options: Options,
    /// The spans are one receiver's share of a spread by trace ID.
    routed_by_trace: bool,
}

impl agentsim_serve::Detector for Detect {
    fn report(&mut self, text: &str, name: &str, dropped: u64) -> Result<String, String> {
        let agentsim_ingest::Ingested { history, report } =
            agentsim_ingest::load::load_text(text, name, &self.options)
                .map_err(|e| e.to_string())?;
        super::detect::ingested_json(history, &report, name, dropped, self.routed_by_trace)
            .map_err(|e| format!("{e:#}"))
    }

    fn page(&mut self, text: &str, name: &str, dropped: u64) -> Result<String, String> {
        let agentsim_ingest::Ingested { history, report } =
            agentsim_ingest::load::load_text(text, name, &self.options)
                .map_err(|e| e.to_string())?;
        let title = "spans received".to_owned();
        let mut page = super::view::page_of(history, title, name, Some(report))
            .map_err(|e| format!("{e:#}"))?;
        if dropped > 0 {
            page.undecided = Some(format!(
                "cannot tell: {dropped} spans dropped past --max-pending-spans"
            ));
        } else if self.routed_by_trace {
            page.undecided = Some(
                "cannot tell: spans reach this receiver routed by trace ID (--routed-by trace-id)"
                    .to_owned(),
            );
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
        alerts: args.alerts.clone(),
        pause_while: args.pause_while.clone(),
        retry_after: args.retry_after,
    };
    let out = agentsim_serve::run(
        config,
        Box::new(Detect {
            options,
            routed_by_trace: args.routed_by == Some(RoutedBy::TraceId),
        }),
    )?;
    let shown = |p: &Option<PathBuf>| match p {
        Some(p) => crate::artifacts::paths::shown(p),
        None => "stdout".to_owned(),
    };
    let rss = crate::bench::detect::peak_rss_mib()
        .map_or(String::new(), |m| format!("; peak RSS {m:.0} MiB"));
    eprintln!(
        "agentsim serve: stopped; {} spans kept, {} dropped{rss}",
        out.kept, out.dropped
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
