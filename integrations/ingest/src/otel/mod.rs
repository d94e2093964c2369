//! OpenTelemetry GenAI traces (OTLP/JSON) → agentsim history.
