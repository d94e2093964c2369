//! MCP JSON-RPC logs (`agentsim ingest mcp FILE`, `agentsim detect --from mcp FILE`): the
//! reader never panics, ingests alike twice, and its history reaches the detectors
//! ([`ingest_twice::check`]).
#![no_main]

mod ingest_twice;

use agentsim_ingest::mcp::parse_mcp_log;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ingest_twice::check(data, |text| parse_mcp_log(text, "fuzz.jsonl"));
});
