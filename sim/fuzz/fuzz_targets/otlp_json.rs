//! OTLP/JSON traces (`agentsim ingest otel FILE`, `agentsim detect --from otel FILE`): the
//! reader never panics, ingests alike twice, and its history reaches the detectors
//! ([`ingest_twice::check`]).
#![no_main]

mod ingest_twice;

use agentsim_ingest::otel::parse_otel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ingest_twice::check(data, |text| parse_otel(text, "fuzz.json"));
});
