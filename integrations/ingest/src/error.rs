//! Why an input could not be ingested. Every variant names the file and what was wrong in it;
//! only [`IngestError::Options`] names a command-line flag, the one refused.

/// An ingestion failure.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("{file}: cannot read")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// Malformed OTLP/JSON: `line` is the 1-based line of the document, `path` the JSON path.
    #[error("{file}:{line}: {path}: {message}")]
    Otlp {
        file: String,
        line: usize,
        path: String,
        message: String,
    },
    /// A malformed line of a JSON Lines log (the MCP JSON-RPC log): `line` is 1-based, `path`
    /// the JSON path in that line's object.
    #[error("{file}:{line}: {path}: {message}")]
    Log {
        file: String,
        line: usize,
        path: String,
        message: String,
    },
    /// A mapping file (`--tool-memory`) that does not validate: `line` is 1-based.
    #[error("{file}:{line}: {message}")]
    Mapping {
        file: String,
        line: usize,
        message: String,
    },
    /// A saved report that does not read back (`crate::saved`): `line` is 1-based.
    #[error("{file}:{line}: {message}")]
    SavedReport {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: not a LangGraph SQLite checkpointer database: {what}")]
    NotCheckpointer { file: String, what: String },
    #[error("{file}: the database is damaged or truncated: {message}")]
    Corrupt { file: String, message: String },
    #[error(
        "{file}: {what}: unknown serialization `{encoding}` (this reader decodes msgpack, json, \
         null, bytes and bytearray; pickled or encrypted checkpoints cannot be read)"
    )]
    UnknownEncoding {
        file: String,
        what: String,
        encoding: String,
    },
    #[error("{file}: {what}: cannot decode: {message}")]
    BadBlob {
        file: String,
        what: String,
        message: String,
    },
    /// A flag the source does not take, or an input it cannot read from where it is
    /// ([`crate::load::Options::check`]).
    #[error("{0}")]
    Options(String),
    /// The input is readable but does not say what to ingest (e.g. several threads, or none).
    #[error("{file}: {message}")]
    Ambiguous { file: String, message: String },
}
