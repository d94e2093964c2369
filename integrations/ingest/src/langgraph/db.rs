//! Reading the two tables of `langgraph-checkpoint-sqlite` with the bundled SQLite.
//!
//! The schema (`SqliteSaver.setup`, version 3.1.2): `checkpoints(thread_id, checkpoint_ns,
//! checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)` and `writes(thread_id,
//! checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)`; databases
//! from before `task_path` existed lack that column and read as `''`. The file is opened
//! read-only and checked with `PRAGMA quick_check` first, so a truncated or damaged file is
//! reported as such rather than as missing rows. We keep each `writes` row's `rowid`: SQLite
//! gives rows increasing rowids in insertion order, and LangGraph stores a task's writes when
//! the task finishes, so rowid order is the order in which tasks completed.

use crate::error::IngestError;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// One `checkpoints` row of the chosen thread.
#[derive(Clone, Debug)]
pub struct CheckpointRow {
    pub ns: String,
    pub id: String,
    pub parent: Option<String>,
    pub encoding: Option<String>,
    pub blob: Vec<u8>,
    pub metadata: Vec<u8>,
}

/// One `writes` row of the chosen thread.
#[derive(Clone, Debug)]
pub struct WriteRow {
    pub rowid: i64,
    pub ns: String,
    pub checkpoint_id: String,
    pub task_id: String,
    pub task_path: String,
    pub idx: i64,
    pub channel: String,
    pub encoding: Option<String>,
    pub value: Vec<u8>,
}

/// The rows of one thread.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    pub thread: String,
    pub checkpoints: Vec<CheckpointRow>,
    pub writes: Vec<WriteRow>,
}

/// Opens `path`, checks it is an intact checkpointer database, and reads one thread: `thread`,
/// or the only one there is.
pub fn read(path: &Path, thread: Option<&str>) -> Result<Rows, IngestError> {
    let file = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| IngestError::Io {
        file: file.clone(),
        source,
    })?;
    // SQLite opens a directory and then fails as if the file were damaged: say what it is.
    if meta.is_dir() {
        return Err(IngestError::NotCheckpointer {
            file,
            what: "it is a directory; a LangGraph SQLite checkpoint file (.sqlite/.db) is \
                   expected"
                .to_owned(),
        });
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| sqlite_error(&file, e))?;
    check(&conn, &file)?;
    let has_task_path = columns(&conn, "writes", &file)?
        .iter()
        .any(|c| c == "task_path");
    let thread = choose_thread(&conn, &file, thread)?;
    let checkpoints = checkpoints(&conn, &file, &thread)?;
    let writes = writes(&conn, &file, &thread, has_task_path)?;
    Ok(Rows {
        thread,
        checkpoints,
        writes,
    })
}

fn sqlite_error(file: &str, e: rusqlite::Error) -> IngestError {
    use rusqlite::ErrorCode;
    let code = e.sqlite_error_code();
    match code {
        Some(ErrorCode::NotADatabase) => IngestError::NotCheckpointer {
            file: file.to_owned(),
            what: "not an SQLite database".to_owned(),
        },
        Some(ErrorCode::DatabaseCorrupt) => IngestError::Corrupt {
            file: file.to_owned(),
            message: e.to_string(),
        },
        _ => IngestError::Corrupt {
            file: file.to_owned(),
            message: format!("SQLite: {e}"),
        },
    }
}

/// `PRAGMA quick_check`, then the two tables with the columns we read.
fn check(conn: &Connection, file: &str) -> Result<(), IngestError> {
    let mut stmt = conn
        .prepare("PRAGMA quick_check")
        .map_err(|e| sqlite_error(file, e))?;
    let problems: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| sqlite_error(file, e))?;
    if problems.first().map(String::as_str) != Some("ok") {
        return Err(IngestError::Corrupt {
            file: file.to_owned(),
            message: problems.join("; "),
        });
    }
    let need = [
        (
            "checkpoints",
            &[
                "thread_id",
                "checkpoint_ns",
                "checkpoint_id",
                "parent_checkpoint_id",
                "type",
                "checkpoint",
                "metadata",
            ][..],
        ),
        (
            "writes",
            &[
                "thread_id",
                "checkpoint_ns",
                "checkpoint_id",
                "task_id",
                "idx",
                "channel",
                "type",
                "value",
            ][..],
        ),
    ];
    for (table, cols) in need {
        let have = columns(conn, table, file)?;
        if have.is_empty() {
            return Err(IngestError::NotCheckpointer {
                file: file.to_owned(),
                what: format!("it has no table `{table}`"),
            });
        }
        if let Some(missing) = cols.iter().find(|c| !have.iter().any(|h| h == *c)) {
            return Err(IngestError::NotCheckpointer {
                file: file.to_owned(),
                what: format!("table `{table}` has no column `{missing}`"),
            });
        }
    }
    Ok(())
}

fn columns(conn: &Connection, table: &str, file: &str) -> Result<Vec<String>, IngestError> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA table_info({table})"))
        .map_err(|e| sqlite_error(file, e))?;
    stmt.query_map([], |r| r.get::<_, String>(1))
        .and_then(|rows| rows.collect())
        .map_err(|e| sqlite_error(file, e))
}

fn choose_thread(
    conn: &Connection,
    file: &str,
    wanted: Option<&str>,
) -> Result<String, IngestError> {
    let mut stmt = conn
        .prepare("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")
        .map_err(|e| sqlite_error(file, e))?;
    let threads: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| sqlite_error(file, e))?;
    let ambiguous = |message: String| IngestError::Ambiguous {
        file: file.to_owned(),
        message,
    };
    match (wanted, threads.as_slice()) {
        (Some(t), _) if threads.iter().any(|x| x == t) => Ok(t.to_owned()),
        (Some(t), _) => Err(ambiguous(format!(
            "no thread `{t}` (threads: {})",
            list(&threads)
        ))),
        (None, []) => Err(ambiguous("the database holds no checkpoints".to_owned())),
        (None, [one]) => Ok(one.clone()),
        (None, many) => Err(ambiguous(format!(
            "the database holds {} threads ({}); choose one with --thread",
            many.len(),
            list(many)
        ))),
    }
}

fn list(threads: &[String]) -> String {
    let shown: Vec<&str> = threads.iter().take(10).map(String::as_str).collect();
    let more = threads.len().saturating_sub(10);
    if more > 0 {
        format!("{}, and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn checkpoints(
    conn: &Connection,
    file: &str,
    thread: &str,
) -> Result<Vec<CheckpointRow>, IngestError> {
    let sql = "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
               metadata FROM checkpoints WHERE thread_id = ?1 \
               ORDER BY checkpoint_ns, checkpoint_id";
    let mut stmt = conn.prepare(sql).map_err(|e| sqlite_error(file, e))?;
    stmt.query_map([thread], |r| {
        Ok(CheckpointRow {
            ns: r.get(0)?,
            id: r.get(1)?,
            parent: r.get(2)?,
            encoding: r.get(3)?,
            blob: blob(r, 4)?,
            metadata: blob(r, 5)?,
        })
    })
    .and_then(|rows| rows.collect())
    .map_err(|e| sqlite_error(file, e))
}

fn writes(
    conn: &Connection,
    file: &str,
    thread: &str,
    has_task_path: bool,
) -> Result<Vec<WriteRow>, IngestError> {
    let task_path = if has_task_path { "task_path" } else { "''" };
    let sql = format!(
        "SELECT rowid, checkpoint_ns, checkpoint_id, task_id, {task_path}, idx, channel, type, \
         value FROM writes WHERE thread_id = ?1 ORDER BY rowid"
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| sqlite_error(file, e))?;
    stmt.query_map([thread], |r| {
        Ok(WriteRow {
            rowid: r.get(0)?,
            ns: r.get(1)?,
            checkpoint_id: r.get(2)?,
            task_id: r.get(3)?,
            task_path: r.get(4)?,
            idx: r.get(5)?,
            channel: r.get(6)?,
            encoding: r.get(7)?,
            value: blob(r, 8)?,
        })
    })
    .and_then(|rows| rows.collect())
    .map_err(|e| sqlite_error(file, e))
}

/// A BLOB column (TEXT is accepted as its bytes; NULL as empty).
fn blob(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Vec<u8>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Blob(b) => b.to_vec(),
        ValueRef::Text(t) => t.to_vec(),
        ValueRef::Null => Vec::new(),
        other => {
            return Err(rusqlite::Error::InvalidColumnType(
                i,
                format!("{:?}", other.data_type()),
                other.data_type(),
            ))
        }
    })
}
