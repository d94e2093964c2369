//! `agentsim-serve`: an OTLP receiver that checks agents' spans as they arrive.
//!
//! Spans come in over OTLP/HTTP (`POST /v1/traces`, JSON or protobuf, gzip or not:
//! [`http`]) and OTLP/gRPC (`TraceService/Export`: [`grpc`]), are checked and queued on a
//! bounded queue (a full queue is answered 429 / `UNAVAILABLE`, never buffered without
//! bound), and kept once per trace and span id by the collector ([`collect`]), which maps each
//! trace once it is complete, detects over the records as `detect --from otel` detects a file,
//! and writes an alert per new witness. On
//! SIGTERM or SIGINT the listeners stop, what was received is finished, and [`run`] returns the
//! last detection: `detect --json`'s report on the same spans.
//!
//! The reading is the ingest crate's (its trace-at-a-time mapper, the one `detect`'s file
//! reader uses) and the detecting the caller's ([`Detector`]): this crate is the network, the
//! queue and the bookkeeping, so the report is the one `detect` prints, from the same code.

pub mod batch;
pub mod collect;
pub mod convert;
pub mod grpc;
pub mod http;
pub mod metrics;

use agentsim_ingest::{Ingested, Options};
use collect::Settings;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Detects over the received spans' history, as `detect` does a file's.
pub trait Detector: Send {
    /// `detect --json`'s output on `ingested` (the received spans read as `detect` reads an
    /// export of them) named `name`, when `lost` spans are missing from it (each verdict they
    /// could change is then *cannot tell*); `Err` with the message when there is none.
    fn report(&mut self, ingested: Ingested, name: &str, lost: Lost) -> Result<String, String>;
    /// The `view` page of the same.
    fn page(&mut self, ingested: Ingested, name: &str, lost: Lost) -> Result<String, String>;
}

/// Spans received and not in the history: dropped past `--max-pending-spans`, or late (their
/// trace was already mapped for good).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    pub dropped: u64,
    pub late: u64,
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct Config {
    /// OTLP/HTTP.
    pub listen: SocketAddr,
    /// OTLP/gRPC, if at all.
    pub grpc: Option<SocketAddr>,
    /// The largest request body, compressed or inflated.
    pub max_body: usize,
    /// Batches the queue holds before it refuses.
    pub queue: usize,
    pub max_pending_spans: usize,
    pub quiet: Duration,
    /// How long a trace waits for more spans before it is mapped for good.
    pub seal: Duration,
    /// How the spans are read (`--from` and what is read beside them).
    pub options: Options,
    pub alerts: Option<PathBuf>,
    pub pause_while: Option<PathBuf>,
    /// Seconds a refused exporter is told to wait (`Retry-After`).
    pub retry_after: u64,
}

/// How a run ended.
pub struct Outcome {
    /// The last detection's report, or why the spans give none.
    pub report: Result<String, String>,
    pub kept: u64,
    pub lost: Lost,
}

/// A failure to serve at all (an address that cannot be bound).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{what} {addr}: {source}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}

/// Serves until SIGTERM or SIGINT, then returns the final detection.
pub fn run(config: Config, detector: Box<dyn Detector>) -> Result<Outcome, ServeError> {
    run_until(config, detector, shutdown_signal())
}

/// [`run`], stopping when `stop` completes instead of on a signal.
pub fn run_until(
    config: Config,
    detector: Box<dyn Detector>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<Outcome, ServeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let (intake, rx) = collect::queue(config.queue.max(1));
    let settings = Settings {
        max_pending_spans: config.max_pending_spans,
        quiet: config.quiet,
        seal: config.seal,
        options: config.options.clone(),
        pause_while: config.pause_while.clone(),
        alerts: config.alerts.clone(),
    };
    let collector = {
        let intake = intake.clone();
        std::thread::Builder::new()
            .name("agentsim-serve-collector".into())
            .spawn(move || collect::run(rx, intake, settings, detector))
            .map_err(ServeError::Runtime)?
    };
    let served = rt.block_on(serve(config, intake.clone(), stop));
    // Whatever happened to the listeners, the collector finishes what was queued.
    intake.close();
    let finished = collector.join();
    served?;
    let finished = finished.unwrap_or_else(|_| collect::Finished {
        report: Err("the collector failed".to_owned()),
        lost: Lost::default(),
        kept: 0,
    });
    Ok(Outcome {
        report: finished.report,
        kept: finished.kept,
        lost: finished.lost,
    })
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

async fn serve(
    config: Config,
    intake: Arc<collect::Intake>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let bind = |what, addr| async move {
        tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { what, addr, source })
    };
    let http = bind("--listen", config.listen).await?;
    let http_addr = http.local_addr().unwrap_or(config.listen);
    let grpc = match config.grpc {
        Some(addr) => Some(bind("--grpc", addr).await?),
        None => None,
    };
    let grpc_addr = grpc
        .as_ref()
        .map(|l| l.local_addr().unwrap_or(config.listen));
    match grpc_addr {
        Some(g) => eprintln!(
            "agentsim serve: listening on http://{http_addr} (OTLP/HTTP), {g} (OTLP/gRPC)"
        ),
        None => eprintln!("agentsim serve: listening on http://{http_addr} (OTLP/HTTP)"),
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        stop.await;
        let _ = stop_tx.send(true);
    });
    let grpc_task = grpc.map(|listener| {
        let svc = opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceServiceServer::new(
            grpc::Service { intake: intake.clone() },
        )
        .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
        .max_decoding_message_size(config.max_body);
        let mut rx = stop_rx.clone();
        tokio::spawn(async move {
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let done = async move {
                let _ = rx.wait_for(|s| *s).await;
            };
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming_shutdown(incoming, done)
                .await
        })
    });
    let ctx = Arc::new(http::Ctx {
        intake: intake.clone(),
        max_body: config.max_body,
        retry_after: config.retry_after,
    });
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut rx = stop_rx.clone();
    loop {
        tokio::select! {
            _ = rx.wait_for(|s| *s) => break,
            accepted = http.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let ctx = ctx.clone();
                let svc = hyper::service::service_fn(move |req| http::handle(req, ctx.clone()));
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc);
                let watched = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = watched.await;
                });
            }
        }
    }
    drop(http);
    // Requests in flight finish (their batches are queued before the collector drains).
    let _ = tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
    if let Some(task) = grpc_task {
        let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
    }
    Ok(())
}
