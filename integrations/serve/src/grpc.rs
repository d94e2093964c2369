//! OTLP/gRPC: `opentelemetry.proto.collector.trace.v1.TraceService/Export`, on tonic.
//!
//! The same intake as OTLP/HTTP: rejected spans in `partial_success`, and a full queue or a
//! stopping receiver answered `UNAVAILABLE` (retryable, as the OTLP specification lists it),
//! so an exporter retries with backoff instead of dropping the batch.

use crate::batch;
use crate::collect::{Intake, Refused};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::TraceService;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The gRPC service over the intake.
pub struct Service {
    pub intake: Arc<Intake>,
}

#[tonic::codegen::async_trait]
impl TraceService for Service {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let batch = batch::of_request(request.get_ref());
        let (rejected, reason) = (batch.rejected, batch.reason.clone());
        match crate::http::offer(&self.intake, batch) {
            Ok(()) => {}
            Err(Refused::Full) => return Err(Status::unavailable("the queue is full: retry")),
            Err(Refused::Closed) => return Err(Status::unavailable("the receiver is stopping")),
        }
        let partial_success = (rejected > 0).then(|| ExportTracePartialSuccess {
            rejected_spans: rejected as i64,
            error_message: reason.unwrap_or_default(),
        });
        Ok(Response::new(ExportTraceServiceResponse {
            partial_success,
        }))
    }
}
