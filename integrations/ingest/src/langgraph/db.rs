//! Reading the two tables of `langgraph-checkpoint-sqlite` with the bundled SQLite.
//!
//! The schema (`SqliteSaver.setup`, version 3.1.2): `checkpoints(thread_id, checkpoint_ns,
//! checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)` and `writes(thread_id,
//! checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)`; databases
//! from before `task_path` existed lack that column and read as `''`. The file is opened
//! read-only (a database in WAL mode through a private copy: see [`PrivateCopy`]) and checked with `PRAGMA quick_check` first, so a truncated or damaged file is
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
    // Declared before the connection, so dropped (the copy removed) after it is closed.
    let private = if wal_mode(path) {
        Some(PrivateCopy::of(path).map_err(|source| IngestError::Io {
            file: file.clone(),
            source,
        })?)
    } else {
        None
    };
    let (open, flags) = match &private {
        Some(copy) => (copy.db.as_path(), OpenFlags::SQLITE_OPEN_READ_WRITE),
        None => (path, OpenFlags::SQLITE_OPEN_READ_ONLY),
    };
    let conn = Connection::open_with_flags(open, flags).map_err(|e| sqlite_error(&file, e))?;
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

/// Whether the file's header says WAL mode: bytes 18 and 19 (the file format's write and read
/// versions) are 2 in WAL mode, 1 in rollback-journal mode. A short or unreadable file is not.
fn wal_mode(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && (head[18] == 2 || head[19] == 2)
}

/// A copy of a WAL-mode database (and its `-wal` file, if there is one, so its last commits
/// are read too) in a folder of its own under the temporary directory, removed when dropped.
/// SQLite reads a WAL-mode database through its `-wal` and `-shm` files and creates them
/// beside it when absent, even opened read-only; reading the user's checkpoint file must not
/// leave files beside it, so SQLite opens the copy instead.
struct PrivateCopy {
    dir: std::path::PathBuf,
    db: std::path::PathBuf,
}

impl PrivateCopy {
    fn of(path: &Path) -> std::io::Result<PrivateCopy> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentsim-langgraph-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir)?;
        let me = PrivateCopy {
            db: dir.join("checkpoints.sqlite"),
            dir,
        };
        std::fs::copy(path, &me.db)?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = std::path::PathBuf::from(wal);
        if wal.is_file() {
            std::fs::copy(&wal, me.dir.join("checkpoints.sqlite-wal"))?;
        }
        Ok(me)
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("agentsim-db-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        dir
    }

    fn example() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/traces/langgraph/double_write.sqlite")
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A database switched to WAL mode reads the same rows and leaves no `-wal` or `-shm`
    /// file beside it; with a `-wal` file holding a commit not yet checkpointed, that commit is
    /// read, and the folder holds what it held before.
    #[test]
    fn a_wal_mode_database_is_read_without_leaving_files_beside_it() {
        let dir = scratch("wal");
        let db = dir.join("g.sqlite");
        std::fs::copy(example(), &db).expect("copy");
        let plain = read(&db, None).expect("the example reads");
        {
            let c = Connection::open(&db).expect("open");
            let mode: String = c
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
                .expect("WAL");
            assert_eq!(mode, "wal");
        }
        assert!(wal_mode(&db));
        assert_eq!(
            listing(&dir),
            ["g.sqlite"],
            "SQLite removed its files on close"
        );
        let wal = read(&db, None).expect("the WAL-mode copy reads");
        assert_eq!(
            (wal.checkpoints.len(), wal.writes.len()),
            (plain.checkpoints.len(), plain.writes.len())
        );
        assert_eq!(listing(&dir), ["g.sqlite"], "reading left files beside it");

        // A writer that has not checkpointed: its commit is only in g.sqlite-wal.
        let writer = Connection::open(&db).expect("open");
        writer
            .execute_batch("PRAGMA wal_autocheckpoint=0; DELETE FROM writes;")
            .expect("a commit in the WAL");
        let before = listing(&dir);
        assert!(before.contains(&"g.sqlite-wal".to_owned()), "{before:?}");
        let live = read(&db, None).expect("reads beside a live writer");
        assert_eq!(live.writes.len(), 0, "the WAL's commit is read");
        assert_eq!(listing(&dir), before);
        drop(writer);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
