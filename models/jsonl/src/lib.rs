//! `agentsim-jsonl`: the JSON Lines history interchange format (SPEC §2), read and written.
//!
//! Schema: `models/schema/history-v1.schema.json` (format version 1).
//!
//! One [`OpRecord`](agentsim_models::OpRecord) per line, in log order, with exactly the keys of
//! [`KEYS`]; cells, tools and values are strings, `null` is NULL. The reader ([`parse_history`],
//! [`read_history`]) rejects anything else with a typed [`JsonlError`] that names the file, the
//! 1-based line, the column and the key, and never panics on input: invalid UTF-8, invalid
//! JSON, a key given twice, a `co` that is not a permutation of `io` are all errors. The writer
//! ([`write_history`]) is byte-deterministic: every key, in the order of [`KEYS`], one record
//! per line (the optional [`READ_META_KEYS`] only when a record has replica metadata).
//!
//! Lines are read by a fast scanner (`fast.rs`) that declines anything unusual to the spec form
//! (`json.rs` + `read.rs`), the only place errors are made; [`for_each_block`] parses blocks of
//! lines on several threads and merges them in line order (`chunk.rs`, `pipeline.rs`), with the
//! ids, lines and first error of one sequential read ([`RecordReader::spec`] is the reference).
//!
//! A successful read says the file is a well-formed history (sets, times and preds consistent);
//! it does not say the history is one the model of SPEC §1 could produce (read values may
//! deviate from memory, as with skew or an instrumentation shim around a real framework).

mod chunk;
mod fast;
mod fields;
mod json;
mod pipeline;
mod read;
mod tables;
mod write;

pub use chunk::{parse_block, Merger, Parsed};
pub use pipeline::{
    for_each_block, for_each_block_apart, for_each_block_in, for_each_literal_block,
    for_each_literal_block_apart, Blocks, BLOCK, IN_FLIGHT, THREADS_MAX,
};
pub use read::{parse_history, parse_history_spec, read_history, skip_bom, RecordReader, BOM};
pub use write::{write_history, write_record};

/// Every key of a record line, in the writer's order.
pub const KEYS: [&str; 16] = [
    "agent",
    "read_set",
    "read_values",
    "read_registry",
    "planned_tool",
    "read_time",
    "write_set",
    "write_values",
    "write_registry",
    "write_time",
    "io",
    "co",
    "aborted",
    "preds",
    "read_replica",
    "read_version",
];

/// The optional per-read keys of the replicated store (SPEC §6): objects mapping a
/// read cell to the replica that served it (a name) and to the cell's committed version at
/// the read (an integer). They come together, name the same cells, and only cells of
/// `read_set`. Histories without them load as single-store histories; the writer emits them
/// only for records that carry replica metadata, so single-store bytes are unchanged.
pub const READ_META_KEYS: [&str; 2] = ["read_replica", "read_version"];

/// The keys a line must have; the others default (`planned_tool` null, registries, `io`,
/// `co` and `preds` empty, `aborted` false).
pub const REQUIRED_KEYS: [&str; 7] = [
    "agent",
    "read_set",
    "read_values",
    "read_time",
    "write_set",
    "write_values",
    "write_time",
];

/// Why a history file could not be read. Every variant but `Io` names file, line and column
/// (1-based, in characters), in the one format `FILE:LINE:COL: key `K`: message`.
#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    #[error("{file}: cannot read")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}:{col}: invalid UTF-8 (the line must be UTF-8 text)")]
    BadUtf8 {
        file: String,
        line: usize,
        col: usize,
    },
    #[error("{file}:{line}:{col}: invalid JSON: {message}")]
    BadJson {
        file: String,
        line: usize,
        col: usize,
        message: String,
    },
    #[error("{file}:{line}:{col}: expected a JSON object (one record per line), found {found}")]
    NotAnObject {
        file: String,
        line: usize,
        col: usize,
        found: String,
    },
    #[error("{file}:{line}:{col}: key `{key}`: unknown key (known keys: {})", KEYS.join(", "))]
    UnknownKey {
        file: String,
        line: usize,
        col: usize,
        key: String,
    },
    #[error("{file}:{line}:{col}: key `{key}`: duplicate key (it appears earlier in the object)")]
    DuplicateKey {
        file: String,
        line: usize,
        col: usize,
        key: String,
    },
    #[error("{file}:{line}:{col}: key `{key}`: missing required key")]
    MissingKey {
        file: String,
        line: usize,
        col: usize,
        key: &'static str,
    },
    #[error("{file}:{line}:{col}: key `{key}`: expected {expected}, found {found}")]
    WrongType {
        file: String,
        line: usize,
        col: usize,
        key: String,
        expected: &'static str,
        found: String,
    },
    #[error("{file}:{line}:{col}: key `{key}`: {message}")]
    BadValue {
        file: String,
        line: usize,
        col: usize,
        key: String,
        message: String,
    },
}

impl JsonlError {
    /// The 1-based line and column, if the error is about one line.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self {
            JsonlError::Io { .. } => None,
            JsonlError::BadUtf8 { line, col, .. }
            | JsonlError::BadJson { line, col, .. }
            | JsonlError::NotAnObject { line, col, .. }
            | JsonlError::UnknownKey { line, col, .. }
            | JsonlError::DuplicateKey { line, col, .. }
            | JsonlError::MissingKey { line, col, .. }
            | JsonlError::WrongType { line, col, .. }
            | JsonlError::BadValue { line, col, .. } => Some((*line, *col)),
        }
    }

    /// The 1-based line, if the error is about one line.
    pub fn line(&self) -> Option<usize> {
        self.position().map(|(line, _)| line)
    }

    /// The offending key (a path such as `io[1][0]` for nested values), if there is one.
    pub fn key(&self) -> Option<&str> {
        match self {
            JsonlError::UnknownKey { key, .. }
            | JsonlError::DuplicateKey { key, .. }
            | JsonlError::WrongType { key, .. }
            | JsonlError::BadValue { key, .. } => Some(key),
            JsonlError::MissingKey { key, .. } => Some(key),
            _ => None,
        }
    }
}
