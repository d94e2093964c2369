//! The batch path of `agentsim detect FILE`: read, parse and detect in one pass, on two threads.
//!
//! One thread reads the file and parses its lines into records (interning names); the other
//! runs the stream detector ([`Stream`]) with nothing dropped (no window: the file is finite)
//! and keeps the witnesses it will print. Records travel in batches over a bounded channel
//! and come back empty to be refilled, so memory is the detector's state (24 bytes a live
//! write, a bit a record), the name tables and a few batches: not the file, not the history.
//! The result is the same whatever the thread timing: the parser assigns ids in line order
//! and the detector sees records in line order. Witnesses are printed after the last line, so
//! an input error prints nothing but the error.

use super::render::Kept;
use agentsim_models::detect::stream::{Found, Limits, Options, Sink, Stream};
use agentsim_models::detect::Summary;
use agentsim_models::jsonl::{JsonlError, RecordReader};
use agentsim_models::{Names, OpRecord};
use std::io::BufRead;
use std::sync::mpsc;

/// Records per batch handed from the parser to the detector.
const BATCH: usize = 4096;
/// Batches in flight (parsed and not yet detected, or detected and not yet refilled).
const IN_FLIGHT: usize = 4;

/// What a batch run found.
pub struct Outcome {
    pub summary: Summary,
    pub kept: Vec<Kept>,
    pub names: Names,
}

/// Keeps what printing needs of every kept witness.
#[derive(Default)]
pub struct KeepAll(pub Vec<Kept>);

impl Sink for KeepAll {
    fn found(&mut self, _line: u64, f: Found<'_>) {
        self.0.push(Kept::of(&f));
    }
}

type Batch = Vec<(OpRecord, usize)>;

/// Reads and detects `src` (called `file` in errors).
pub fn run(
    src: impl BufRead + Send,
    file: &str,
    max_witnesses: usize,
    residue: bool,
) -> anyhow::Result<Outcome> {
    let opts = Options {
        limits: Limits::unbounded(max_witnesses),
        residue,
        keep_agents: true,
    };
    let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Batch>(IN_FLIGHT + 1);
    for _ in 0..IN_FLIGHT {
        empty_tx.send(Vec::new()).expect("the receiver is here");
    }
    std::thread::scope(|s| {
        let parser = s.spawn(move || parse(src, file, &full_tx, &empty_rx));
        let mut stream = Stream::new(opts);
        let mut sink = KeepAll::default();
        let mut failed = None;
        for batch in full_rx.iter() {
            for (rec, line) in &batch {
                if let Err(e) = stream.push(rec, *line as u64, &mut sink) {
                    failed.get_or_insert(e);
                }
            }
            // The parser may be gone (it failed); then the batch is simply dropped.
            let _ = empty_tx.send(batch);
        }
        let names = parser.join().expect("the parser thread does not panic")?;
        if let Some(e) = failed {
            // The reader checks everything the detector checks, so this is a bug, not input.
            return Err(
                anyhow::anyhow!(e).context(format!("{file}: the detector refused a record"))
            );
        }
        let summary = stream.finish(&mut sink);
        Ok(Outcome {
            summary,
            kept: sink.0,
            names,
        })
    })
}

/// The parser thread: fills empty batches from `src` until the end or an error.
fn parse(
    src: impl BufRead,
    file: &str,
    full: &mpsc::SyncSender<Batch>,
    empty: &mpsc::Receiver<Batch>,
) -> anyhow::Result<Names> {
    let mut reader = RecordReader::new(src, file);
    let mut names = Names::new();
    loop {
        let Ok(mut batch) = empty.recv() else {
            return Ok(names);
        };
        let mut len = 0;
        while len < BATCH {
            if batch.len() == len {
                batch.push((OpRecord::default(), 0));
            }
            let (rec, line) = &mut batch[len];
            match reader.next_into(&mut names, rec) {
                Ok(Some(n)) => *line = n,
                Ok(None) => break,
                Err(e) => return Err(error(e)),
            }
            len += 1;
        }
        batch.truncate(len);
        let last = len < BATCH;
        if len > 0 && full.send(batch).is_err() {
            return Ok(names);
        }
        if last {
            return Ok(names);
        }
    }
}

/// A reader error, as the user should see it (it names the file, line, column and key; an
/// I/O error names the file and carries its cause).
fn error(e: JsonlError) -> anyhow::Error {
    anyhow::Error::new(e)
}
