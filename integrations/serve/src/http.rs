//! OTLP/HTTP: `POST /v1/traces`, and `GET /healthz`, `GET /metrics`, `GET /`.
//!
//! Responses as the OTLP specification's "OTLP/HTTP" section gives them:
//! * 200 with an `ExportTraceServiceResponse` in the request's encoding; spans rejected (a
//!   bad trace or span id) are counted in its `partial_success` with the first reason;
//! * 400 with a `google.rpc.Status` for a body that does not decode (its message says where);
//! * 413 for a body, or a gzip body once inflated, past `--max-body`;
//! * 415 for a content type other than `application/json` and `application/x-protobuf`, or
//!   a content encoding other than `gzip`;
//! * 429 with `Retry-After` while the queue is full, 503 with `Retry-After` while stopping:
//!   both retryable, so an exporter backs off instead of losing the batch.

use crate::batch::{self, Batch};
use crate::collect::{lock, Intake, Refused};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message as _;
use std::io::Read as _;
use std::sync::Arc;

/// What a handler needs.
pub struct Ctx {
    pub intake: Arc<Intake>,
    pub max_body: usize,
    /// Seconds a refused exporter is told to wait.
    pub retry_after: u64,
}

type Resp = Response<Full<Bytes>>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Json,
    Protobuf,
}

impl Encoding {
    fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => "application/json",
            Encoding::Protobuf => "application/x-protobuf",
        }
    }
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Resp {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(CONTENT_TYPE, v);
    }
    r
}

/// A `google.rpc.Status` (code, message) in `enc`: the body of a failed export.
fn status(code: StatusCode, grpc_code: i32, message: &str, enc: Encoding) -> Resp {
    let body = match enc {
        Encoding::Json => serde_json::json!({ "code": grpc_code, "message": message })
            .to_string()
            .into_bytes(),
        Encoding::Protobuf => {
            // Field 1 `code` (varint), field 2 `message` (length-delimited).
            let mut b = vec![0x08];
            prost::encoding::encode_varint(grpc_code as u64, &mut b);
            b.push(0x12);
            prost::encoding::encode_varint(message.len() as u64, &mut b);
            b.extend_from_slice(message.as_bytes());
            b
        }
    };
    respond(code, enc.content_type(), body)
}

fn retry(code: StatusCode, message: &str, enc: Encoding, after: u64) -> Resp {
    let mut r = status(code, 14, message, enc);
    r.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(after));
    r
}

/// Routes one request.
pub async fn handle(
    req: Request<Incoming>,
    ctx: Arc<Ctx>,
) -> Result<Resp, std::convert::Infallible> {
    let path = req.uri().path().to_owned();
    let text = "text/plain; charset=utf-8";
    let r = match (req.method(), path.as_str()) {
        (&Method::POST, "/v1/traces") => export(req, &ctx).await,
        (&Method::GET, "/healthz") => respond(StatusCode::OK, text, "ok\n"),
        (&Method::GET, "/metrics") => respond(
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            crate::metrics::text(&ctx.intake),
        ),
        (&Method::GET, "/") => page(&ctx),
        (_, "/v1/traces" | "/healthz" | "/metrics" | "/") => {
            respond(StatusCode::METHOD_NOT_ALLOWED, text, "method not allowed\n")
        }
        _ => respond(
            StatusCode::NOT_FOUND,
            text,
            "not found: this is an OTLP trace receiver (POST /v1/traces)\n",
        ),
    };
    Ok(r)
}

fn page(ctx: &Ctx) -> Resp {
    let mut s = lock(&ctx.intake.shared);
    s.page_wanted = true;
    let body = match &s.page {
        Some(p) => p.clone(),
        None => format!(
            "<!doctype html><meta charset=utf-8><title>agentsim serve</title>\
             <p>{} spans received; the page is being built.",
            s.received
        ),
    };
    drop(s);
    // Reload every 2 s: the page shows what had been received at its last detection.
    let refresh = "<meta http-equiv=\"refresh\" content=\"2\">";
    let body = match body.find("<head>") {
        Some(i) => format!("{}{refresh}{}", &body[..i + 6], &body[i + 6..]),
        None => format!("{refresh}{body}"),
    };
    respond(StatusCode::OK, "text/html; charset=utf-8", body)
}

async fn export(req: Request<Incoming>, ctx: &Ctx) -> Resp {
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    let media = header(CONTENT_TYPE).unwrap_or_default();
    let media = media
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_owned();
    let enc = match media.as_str() {
        "application/json" => Encoding::Json,
        "application/x-protobuf" | "application/protobuf" => Encoding::Protobuf,
        other => {
            let msg = format!(
                "unsupported content type `{other}`: send application/json or application/x-protobuf"
            );
            return status(StatusCode::UNSUPPORTED_MEDIA_TYPE, 3, &msg, Encoding::Json);
        }
    };
    let gzip = match header(CONTENT_ENCODING).as_deref() {
        None | Some("" | "identity") => false,
        Some("gzip") => true,
        Some(other) => {
            let msg = format!("unsupported content encoding `{other}`: send gzip or none");
            return status(StatusCode::UNSUPPORTED_MEDIA_TYPE, 3, &msg, enc);
        }
    };
    let too_large = || {
        let msg = format!(
            "the body is larger than --max-body ({} bytes)",
            ctx.max_body
        );
        status(StatusCode::PAYLOAD_TOO_LARGE, 8, &msg, enc)
    };
    let declared = header(CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > ctx.max_body as u64) {
        return too_large();
    }
    let body = match Limited::new(req.into_body(), ctx.max_body).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e)
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return too_large()
        }
        Err(e) => {
            let msg = format!("the body could not be read: {e}");
            return status(StatusCode::BAD_REQUEST, 3, &msg, enc);
        }
    };
    let body = match gzip {
        false => body,
        true => {
            let mut out = Vec::new();
            let limit = ctx.max_body as u64 + 1;
            let r = flate2::read::MultiGzDecoder::new(&body[..])
                .take(limit)
                .read_to_end(&mut out);
            match r {
                Err(e) => {
                    let msg = format!("the body is not gzip: {e}");
                    return status(StatusCode::BAD_REQUEST, 3, &msg, enc);
                }
                Ok(_) if out.len() > ctx.max_body => return too_large(),
                Ok(_) => Bytes::from(out),
            }
        }
    };
    let parsed = match enc {
        Encoding::Json => batch::of_json(&body).map_err(|e| e.0),
        Encoding::Protobuf => ExportTraceServiceRequest::decode(&body[..])
            .map(|r| batch::of_request(&r))
            .map_err(|e| format!("the body is not an ExportTraceServiceRequest: {e}")),
    };
    let batch = match parsed {
        Ok(b) => b,
        Err(msg) => return status(StatusCode::BAD_REQUEST, 3, &msg, enc),
    };
    let (rejected, reason) = (batch.rejected, batch.reason.clone());
    match offer(&ctx.intake, batch) {
        Ok(()) => {}
        Err(Refused::Full) => {
            let msg = "the queue is full: retry after the time Retry-After gives";
            return retry(StatusCode::TOO_MANY_REQUESTS, msg, enc, ctx.retry_after);
        }
        Err(Refused::Closed) => {
            let msg = "the receiver is stopping";
            return retry(StatusCode::SERVICE_UNAVAILABLE, msg, enc, ctx.retry_after);
        }
    }
    let partial = (rejected > 0).then(|| ExportTracePartialSuccess {
        rejected_spans: rejected as i64,
        error_message: reason.unwrap_or_default(),
    });
    let body = match enc {
        Encoding::Protobuf => ExportTraceServiceResponse {
            partial_success: partial,
        }
        .encode_to_vec(),
        Encoding::Json => match partial {
            // int64 is a decimal string in proto3's JSON mapping.
            Some(p) => serde_json::json!({ "partialSuccess": {
                "rejectedSpans": p.rejected_spans.to_string(),
                "errorMessage": p.error_message } })
            .to_string()
            .into_bytes(),
            None => b"{}".to_vec(),
        },
    };
    respond(StatusCode::OK, enc.content_type(), body)
}

/// Queues a batch with spans; one whose every span was rejected is only counted.
pub fn offer(intake: &Intake, batch: Batch) -> Result<(), Refused> {
    if batch.spans.is_empty() {
        intake.count_rejected(batch.rejected);
        return Ok(());
    }
    intake.offer(batch)
}
