//! The `serve` test binary: `agentsim serve` end to end. Each test starts the binary on
//! ephemeral loopback ports (`--listen 127.0.0.1:0`, read back from its stderr), sends it
//! stored OTLP exports as exporters would (batches shuffled, repeated, as JSON, protobuf and
//! gzip, over HTTP and gRPC), stops it with SIGTERM and compares its report with `detect
//! --from otel --json` on the same file.

#[path = "../util/mod.rs"]
mod util;

mod live;
