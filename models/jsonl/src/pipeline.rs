//! Reading a history on several threads, with the result of one sequential read.
//!
//! [`for_each_block`] runs a pipeline: a reader thread reads the source in blocks of whole
//! lines (one `read` call at a time, so on a pipe or a growing file a block is what has
//! arrived, never data waited for), `threads` workers parse blocks with block-local names
//! ([`super::chunk::parse_block`]), and the calling thread merges them in file order
//! ([`Merger`]) and hands each block's records to the caller's function, in line order,
//! with the ids, lines and errors of [`super::RecordReader`] reading the same bytes: the
//! thread count and timing change nothing but speed (`models/tests/jsonl_fast.rs`).
//! [`for_each_block_apart`] merges on a thread of its own instead, so that merging the next
//! block overlaps the caller's work on this one (the caller then sees records, not names).
//! A fixed number of blocks ([`Blocks::in_flight`] per worker, plus two) circulate between the
//! threads and are reused, so memory is bounded by them, not by the source.
//!
//! An input error is the first one in line order: a block's error is reported only when
//! every block before it has merged cleanly. An I/O error is reported where it happened, after
//! the blocks read before it.

use super::chunk::{parse_block, Merger, Parsed};
use super::read::BOM;
use super::JsonlError;
use agentsim_models::names::Names;
use agentsim_models::record::OpRecord;
use agentsim_models::value_key::ValueKey;
use std::collections::BTreeMap;
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::{mpsc, Arc, Mutex};

/// Bytes asked of the source per block (a line longer than that grows its block).
pub const BLOCK: usize = 1 << 20;
/// Blocks in flight per worker.
pub const IN_FLIGHT: usize = 3;

/// How the source is cut: bytes asked per block, blocks in flight per worker. Memory held by
/// the pipeline is about `(in_flight × threads + 2) × size` and what those blocks parse to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub size: usize,
    pub in_flight: usize,
}

impl Blocks {
    /// For reading a whole file: large blocks, few hand-offs ([`BLOCK`], [`IN_FLIGHT`]).
    pub const FILE: Blocks = Blocks {
        size: BLOCK,
        in_flight: IN_FLIGHT,
    };
    /// For a long stream whose detector holds a large live window: a quarter of the block,
    /// so that the blocks of two workers hold under half of [`Blocks::FILE`]'s bytes (14 of
    /// 256 KiB against 8 of 1 MiB), and six in flight per worker, so that the workers go on
    /// parsing while the detector's thread compacts its value table (the measurements are
    /// in `docs/benchmarks.md`).
    pub const STREAM: Blocks = Blocks {
        size: BLOCK / 4,
        in_flight: 6,
    };
}
/// The most parse workers.
pub const THREADS_MAX: usize = 256;

/// A block on its way through the pipeline.
struct Job {
    seq: u64,
    /// The block is `bytes[..len]`; the rest is buffer, kept initialised between uses.
    bytes: Vec<u8>,
    len: usize,
    parsed: Parsed,
    /// The read that ended the source with an error (after `bytes`).
    error: Option<std::io::Error>,
}

/// Reads `src` (called `file` in errors) on `threads` parse workers (1..=[`THREADS_MAX`])
/// and calls `each` with every block's records and lines, in order, and the names so far
/// (which `each` may compact: later blocks are merged into the tables as `each` leaves them).
/// Stops early when `each` breaks. Returns the names of everything read. Blocks are
/// [`Blocks::FILE`]; [`for_each_block_in`] chooses.
pub fn for_each_block<R, F>(
    src: R,
    file: &str,
    threads: usize,
    each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&mut Names, &[(OpRecord, usize)]) -> ControlFlow<()>,
{
    for_each_block_in(src, file, threads, Blocks::FILE, each)
}

/// [`for_each_block`] with blocks of `cut.size` bytes, `cut.in_flight` per worker (both at
/// least 1). The cut changes memory and speed, never the records, ids, lines or errors.
pub fn for_each_block_in<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&mut Names, &[(OpRecord, usize)]) -> ControlFlow<()>,
{
    blocks_in(src, file, threads, cut, false, |names, p| {
        each(names, p.records())
    })
}

/// [`for_each_block_in`] with value ids left block-local ([`Merger::literal`]): `each` gets
/// each block's records with the key of each of their value ids (id − 1), and the names
/// (whose value table holds only the long names the keys refer to). Everything but the
/// value ids is as [`for_each_block_in`] gives it, errors included.
pub fn for_each_literal_block<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&mut Names, &[(OpRecord, usize)], &[ValueKey]) -> ControlFlow<()>,
{
    blocks_in(src, file, threads, cut, true, |names, p| {
        each(names, p.records(), &p.keys)
    })
}

fn blocks_in<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    literal: bool,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&mut Names, &Parsed) -> ControlFlow<()>,
{
    let (free, job_rx, done_tx, done_rx, free_rx) = start(threads, cut, literal);
    std::thread::scope(|s| {
        spawn_readers(s, src, cut, threads, free_rx, job_rx, done_tx);
        // Owned here, so that leaving stops the reader (its free blocks run out).
        let free = free;
        let mut merger = merger(file, literal);
        merge(&mut merger, done_rx, |names, mut job| {
            if each(names, &job.parsed).is_break() {
                return Ok(ControlFlow::Break(()));
            }
            if let Some(source) = job.error.take() {
                return Err(JsonlError::Io {
                    file: file.to_owned(),
                    source,
                });
            }
            job.parsed.seed(names);
            // The reader may have stopped (the source ended); then the block is dropped.
            let _ = free.send(job);
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(merger.names)
    })
}

/// [`for_each_block_in`] with `each` on the calling thread and the merge on a thread of its
/// own, so the two overlap: while `each` takes one block, the next is merged. `each` sees
/// the records alone (ids already global), not the name tables, which the merge thread owns
/// until the end; the ids, lines and errors are those of [`for_each_block_in`], and so is the
/// order in which `each` sees the records. Returns the names of at least every block `each`
/// was given (all of them when it never breaks). `expect`, the source's length when known,
/// sizes the value table once ([`Merger::expect_bytes`]).
pub fn for_each_block_apart<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    expect: Option<u64>,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&[(OpRecord, usize)]) -> ControlFlow<()>,
{
    blocks_apart(src, file, threads, cut, expect, false, |p| {
        each(p.records())
    })
}

/// [`for_each_block_apart`] with value ids left block-local, as [`for_each_literal_block`]
/// leaves them: `each` gets each block's records and the keys of their value ids.
pub fn for_each_literal_block_apart<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    expect: Option<u64>,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&[(OpRecord, usize)], &[ValueKey]) -> ControlFlow<()>,
{
    blocks_apart(src, file, threads, cut, expect, true, |p| {
        each(p.records(), &p.keys)
    })
}

fn blocks_apart<R, F>(
    src: R,
    file: &str,
    threads: usize,
    cut: Blocks,
    expect: Option<u64>,
    literal: bool,
    mut each: F,
) -> Result<Names, JsonlError>
where
    R: Read + Send,
    F: FnMut(&Parsed) -> ControlFlow<()>,
{
    let (pool, job_rx, done_tx, done_rx, free_rx) = start(threads, cut, literal);
    // Merged blocks, in order; an error ends the channel.
    let (merged_tx, merged_rx) =
        mpsc::sync_channel::<Result<Job, JsonlError>>(pool_size(threads, cut));
    std::thread::scope(|s| {
        spawn_readers(s, src, cut, threads, free_rx, job_rx, done_tx);
        let merging = s.spawn(move || {
            let mut merger = merger(file, literal);
            if let Some(total) = expect {
                merger.expect_bytes(total);
            }
            let sent = merge(&mut merger, done_rx, |names, mut job| {
                // The consumer needs the records and keys, not the block's tables.
                job.parsed.seed(names);
                Ok(match merged_tx.send(Ok(job)) {
                    Ok(()) => ControlFlow::Continue(()),
                    // `each` broke: nothing more is wanted.
                    Err(_) => ControlFlow::Break(()),
                })
            });
            if let Err(e) = sent {
                let _ = merged_tx.send(Err(e));
            }
            merger.names
        });
        let consumed = (|| {
            for job in merged_rx.iter() {
                let mut job = job?;
                if each(&job.parsed).is_break() {
                    return Ok(());
                }
                if let Some(source) = job.error.take() {
                    return Err(JsonlError::Io {
                        file: file.to_owned(),
                        source,
                    });
                }
                let _ = pool.send(job);
            }
            Ok(())
        })();
        // Stops the merge thread (its sends fail) and so the workers and the reader.
        drop(merged_rx);
        drop(pool);
        let names = merging.join().expect("the merge thread does not panic");
        consumed.map(|()| names)
    })
}

/// A merger for `file`, literal ([`Merger::literal`]) or not.
fn merger(file: &str, literal: bool) -> Merger {
    match literal {
        true => Merger::literal(file),
        false => Merger::new(file),
    }
}

/// How many blocks circulate: [`Blocks::in_flight`] per worker, and two.
fn pool_size(threads: usize, cut: Blocks) -> usize {
    cut.in_flight * threads + 2
}

/// The end of a pipeline a source's blocks go through (channels for `threads` workers).
type Ends = (
    mpsc::SyncSender<Job>,
    Arc<Mutex<mpsc::Receiver<Job>>>,
    mpsc::SyncSender<Job>,
    mpsc::Receiver<Job>,
    (mpsc::Receiver<Job>, mpsc::SyncSender<Job>),
);

/// Checks the arguments, makes the channels and fills the pool of free blocks (for a literal
/// merger when `literal`). Returns the pool's sender, the workers' queue, their output
/// (sender and receiver), and the reader's ends (free blocks in, filled blocks out).
fn start(threads: usize, cut: Blocks, literal: bool) -> Ends {
    assert!(
        (1..=THREADS_MAX).contains(&threads),
        "threads {threads} outside 1..={THREADS_MAX}"
    );
    assert!(
        cut.size >= 1 && cut.in_flight >= 1,
        "blocks of {} bytes, {} in flight",
        cut.size,
        cut.in_flight
    );
    let blocks = pool_size(threads, cut);
    let (free_tx, free_rx) = mpsc::sync_channel::<Job>(blocks);
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(blocks);
    let (done_tx, done_rx) = mpsc::sync_channel::<Job>(blocks);
    for _ in 0..blocks {
        let job = Job {
            seq: 0,
            bytes: Vec::new(),
            len: 0,
            parsed: match literal {
                true => Parsed::literal(),
                false => Parsed::default(),
            },
            error: None,
        };
        free_tx.send(job).expect("the receiver is here");
    }
    // Shared by the workers alone: when they have all stopped, the reader's sends fail.
    let job_rx = Arc::new(Mutex::new(job_rx));
    (free_tx, job_rx, done_tx, done_rx, (free_rx, job_tx))
}

/// Starts the reader thread and `threads` parse workers in `s`.
fn spawn_readers<'scope, R: Read + Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    src: R,
    cut: Blocks,
    threads: usize,
    (free_rx, job_tx): (mpsc::Receiver<Job>, mpsc::SyncSender<Job>),
    job_rx: Arc<Mutex<mpsc::Receiver<Job>>>,
    done_tx: mpsc::SyncSender<Job>,
) {
    s.spawn(move || read_blocks(src, cut.size, &free_rx, &job_tx));
    for _ in 0..threads {
        let (rx, tx) = (Arc::clone(&job_rx), done_tx.clone());
        s.spawn(move || work(&rx, &tx));
    }
}

/// The reader thread: fills free blocks with whole lines until the source ends.
fn read_blocks(
    mut src: impl Read,
    size: usize,
    free: &mpsc::Receiver<Job>,
    jobs: &mpsc::SyncSender<Job>,
) {
    let mut carry: Vec<u8> = Vec::new();
    for seq in 0.. {
        let Ok(mut job) = free.recv() else { return };
        job.seq = seq;
        if job.bytes.len() < carry.len() + size {
            job.bytes.resize(carry.len() + size, 0);
        }
        job.bytes[..carry.len()].copy_from_slice(&carry);
        job.len = carry.len();
        carry.clear();
        let (end, error) = fill(&mut src, size, &mut job.bytes, &mut job.len);
        // The first block holds the whole first line (or the whole source): a leading
        // byte-order mark is dropped here, as the sequential readers drop it.
        if seq == 0 && job.bytes[..job.len].starts_with(BOM) {
            job.bytes.copy_within(BOM.len()..job.len, 0);
            job.len -= BOM.len();
        }
        let block = &job.bytes[..job.len];
        if error.is_some() {
            // The line the failed read cut short is not a line.
            job.len = block.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        } else if !end {
            let last = block
                .iter()
                .rposition(|&b| b == b'\n')
                .expect("fill stops at a line");
            carry.extend_from_slice(&block[last + 1..]);
            job.len = last + 1;
        }
        job.error = error;
        let stop = end || job.error.is_some();
        if jobs.send(job).is_err() || stop {
            return;
        }
    }
}

/// Reads into `buf[*len..]` (growing `buf` when it is full) until a newline arrives after
/// `*len`, or the source ends (`true`), or a read fails. One `read` call when data is
/// there: nothing is waited for.
fn fill(
    src: &mut impl Read,
    size: usize,
    buf: &mut Vec<u8>,
    len: &mut usize,
) -> (bool, Option<std::io::Error>) {
    let mut from = *len;
    loop {
        if buf.len() - *len < size.div_ceil(4) {
            let grown = (2 * buf.len()).max(*len + size);
            buf.resize(grown, 0);
        }
        match src.read(&mut buf[*len..]) {
            Ok(0) => return (true, None),
            Ok(n) => {
                *len += n;
                if buf[from..*len].contains(&b'\n') {
                    return (false, None);
                }
                from = *len;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (true, Some(e)),
        }
    }
}

/// A parse worker.
fn work(jobs: &Mutex<mpsc::Receiver<Job>>, done: &mpsc::SyncSender<Job>) {
    loop {
        let next = jobs.lock().map(|rx| rx.recv());
        let Ok(Ok(mut job)) = next else { return };
        parse_block(&job.bytes[..job.len], &mut job.parsed);
        if done.send(job).is_err() {
            return;
        }
    }
}

/// Merges blocks in order and hands each, merged, to `next` (which recycles it), until
/// `next` breaks or the workers stop. Returns the first error in line order.
fn merge<F>(merger: &mut Merger, done: mpsc::Receiver<Job>, mut next: F) -> Result<(), JsonlError>
where
    F: FnMut(&mut Names, Job) -> Result<ControlFlow<()>, JsonlError>,
{
    let mut waiting: BTreeMap<u64, Job> = BTreeMap::new();
    let mut seq = 0u64;
    for job in done.iter() {
        waiting.insert(job.seq, job);
        while let Some(mut job) = waiting.remove(&seq) {
            seq += 1;
            merger.merge(&job.bytes[..job.len], &mut job.parsed)?;
            if next(&mut merger.names, job)?.is_break() {
                return Ok(());
            }
        }
    }
    assert!(waiting.is_empty(), "every block read was merged");
    Ok(())
}
