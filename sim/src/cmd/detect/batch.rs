//! The batch path of `agentsim detect FILE`: read, parse and detect in one pass, on several
//! threads.
//!
//! The reader's pipeline ([`jsonl::for_each_block_apart`]) reads the file in blocks and
//! parses them on `--threads` workers; a thread of its own merges them in line order, and
//! this thread runs the stream detector ([`Stream`]) on each merged block while the next is
//! merged, with nothing dropped (no window: the file is finite), keeping the witnesses it
//! will print. The file's length sizes the value table once. Memory is the detector's state
//! (24 bytes a live write, a bit a record), the name tables and the blocks in flight: not the
//! file, not the history. The result is the
//! same whatever the thread count and timing: ids, lines and the first error are those of
//! one sequential read, and the detector sees records in line order. Witnesses are printed
//! after the last line, so an input error prints nothing but the error. Progress lines go to
//! stderr between blocks ([`Ticker`]): the bytes the reader has taken of the file's length,
//! and the records detected.

use crate::cmd::progress::{ProgressArgs, Ticker};
use agentsim_jsonl as jsonl;
use agentsim_models::detect::stream::{Found, Limits, Options, Sink, Stream};
use agentsim_models::detect::Summary;
use agentsim_models::{Names, ValueKey};
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How a batch run reads and what it keeps.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Parse threads.
    pub threads: usize,
    pub max_witnesses: usize,
    pub residue: bool,
    /// Progress lines on stderr (`--progress`, `--quiet`).
    pub progress: ProgressArgs,
}

/// A source that counts the bytes read from it (for progress: the reader thread is at most
/// the blocks in flight ahead of the detector).
struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// One progress line of `detect` on `file`: what has been read of `total` bytes (when known),
/// the records detected, their rate and the time left.
pub fn progress_line(file: &str, records: u64, bytes: u64, total: Option<u64>, s: f64) -> String {
    let rate = records as f64 / s.max(1e-9);
    let mb = |b: u64| b as f64 / 1e6;
    match total {
        Some(total) if total > 0 => {
            let left = total.saturating_sub(bytes) as f64 * s / (bytes.max(1) as f64);
            format!(
                "detect {file}: {:.0}/{:.0} MB ({:.0}%), {records} records, {rate:.0} records/s, \
                 about {left:.0} s left; {s:.1} s",
                mb(bytes),
                mb(total),
                100.0 * bytes.min(total) as f64 / total as f64
            )
        }
        _ => format!("detect {file}: {records} records, {rate:.0} records/s; {s:.1} s"),
    }
}

/// What a batch run found.
pub struct Outcome {
    pub summary: Summary,
    pub kept: Vec<Found>,
    pub names: Names,
}

/// Keeps what printing needs of every kept witness.
#[derive(Default)]
pub struct KeepAll(pub Vec<Found>);

impl Sink for KeepAll {
    fn found(&mut self, _line: u64, f: Found) {
        self.0.push(f);
    }
}

/// Reads and detects `src` (called `file` in errors), parsing on `cfg.threads` workers;
/// `expect` is its length when known (it sizes the value table once, and gives progress
/// lines their share done and time left).
pub fn run(
    src: impl Read + Send,
    file: &str,
    expect: Option<u64>,
    cfg: Config,
) -> anyhow::Result<Outcome> {
    let opts = Options {
        limits: Limits::unbounded(cfg.max_witnesses),
        residue: cfg.residue,
        keep_agents: true,
    };
    // Values compared by key: no table of every value read (`detect --stream` does the same).
    let mut stream = Stream::keyed(opts);
    let mut sink = KeepAll::default();
    let mut failed = None;
    let cut = jsonl::Blocks::FILE;
    let read = Arc::new(AtomicU64::new(0));
    let src = Counted {
        inner: src,
        read: Arc::clone(&read),
    };
    let mut ticker = Ticker::new(cfg.progress);
    let each = |records: &[(agentsim_models::OpRecord, usize)], keys: &[ValueKey]| {
        for (rec, line) in records {
            if let Err(e) = stream.push_keyed(rec, keys, *line as u64, &mut sink) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        }
        if let Some(s) = ticker.due() {
            let bytes = read.load(Ordering::Relaxed);
            eprintln!(
                "{}",
                progress_line(file, stream.records(), bytes, expect, s)
            );
        }
        ControlFlow::Continue(())
    };
    let names = jsonl::for_each_literal_block_apart(src, file, cfg.threads, cut, expect, each)?;
    if let Some(e) = failed {
        // The reader checks everything the detector checks, so this is a bug, not input.
        return Err(anyhow::anyhow!(e).context(format!("{file}: the detector refused a record")));
    }
    if let Some(s) = ticker.closing() {
        eprintln!(
            "detect {file}: done, {} records in {s:.1} s",
            stream.records()
        );
    }
    let summary = stream.finish(&mut sink);
    Ok(Outcome {
        summary,
        kept: sink.0,
        names,
    })
}

/// Detects a history already in memory (stdin, `--from`): the stream detector over its records
/// in log order, record `i` on line `i + 1`, with nothing dropped, as [`run`] over its text,
/// from the state `initial` (all-NULL for a history that starts empty; a trace's reader
/// supplies the state it began in, `agentsim_ingest::initial`). `h` must be valid
/// ([`agentsim_models::History::validate`]).
pub fn in_memory(
    h: agentsim_models::History,
    initial: &agentsim_models::ValueMap,
    file: &str,
    cfg: Config,
) -> anyhow::Result<Outcome> {
    let opts = Options {
        limits: Limits::unbounded(cfg.max_witnesses),
        residue: cfg.residue,
        keep_agents: true,
    };
    let mut stream = Stream::new(opts);
    for &(c, v) in initial.entries() {
        stream.start_in(c, agentsim_models::ValueKey::id(v));
    }
    let mut sink = KeepAll::default();
    for (i, rec) in h.records.iter().enumerate() {
        // Validation checks everything the detector checks, so this is a bug, not input.
        stream.push(rec, i as u64 + 1, &mut sink).map_err(|e| {
            anyhow::anyhow!(e).context(format!("{file}: the detector refused a record"))
        })?;
    }
    let summary = stream.finish(&mut sink);
    Ok(Outcome {
        summary,
        kept: sink.0,
        names: h.names,
    })
}

#[cfg(test)]
mod tests {
    use super::progress_line;

    #[test]
    fn progress_lines_say_bytes_records_rate_and_time_left() {
        assert_eq!(
            progress_line("h.jsonl", 250_000, 100_000_000, Some(400_000_000), 2.0),
            "detect h.jsonl: 100/400 MB (25%), 250000 records, 125000 records/s, about 6 s \
             left; 2.0 s"
        );
        // Nothing read yet, or read past a length that changed: no division by zero, and
        // never more than all of it.
        assert_eq!(
            progress_line("h.jsonl", 0, 0, Some(1_000_000), 0.0),
            "detect h.jsonl: 0/1 MB (0%), 0 records, 0 records/s, about 0 s left; 0.0 s"
        );
        assert_eq!(
            progress_line("h.jsonl", 10, 3_000_000, Some(1_000_000), 1.0),
            "detect h.jsonl: 3/1 MB (100%), 10 records, 10 records/s, about 0 s left; 1.0 s"
        );
        assert_eq!(
            progress_line("-", 10, 99, None, 4.0),
            "detect -: 10 records, 2 records/s; 4.0 s"
        );
    }
}
