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
//! after the last line, so an input error prints nothing but the error.

use super::render::Kept;
use agentsim_models::detect::stream::{Found, Limits, Options, Sink, Stream};
use agentsim_models::detect::Summary;
use agentsim_models::jsonl;
use agentsim_models::Names;
use std::io::Read;
use std::ops::ControlFlow;

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

/// Reads and detects `src` (called `file` in errors), parsing on `threads` workers;
/// `expect` is its length when known (it sizes the value table once).
pub fn run(
    src: impl Read + Send,
    file: &str,
    expect: Option<u64>,
    threads: usize,
    max_witnesses: usize,
    residue: bool,
) -> anyhow::Result<Outcome> {
    let opts = Options {
        limits: Limits::unbounded(max_witnesses),
        residue,
        keep_agents: true,
    };
    let mut stream = Stream::new(opts);
    let mut sink = KeepAll::default();
    let mut failed = None;
    let cut = jsonl::Blocks::FILE;
    let names = jsonl::for_each_block_apart(src, file, threads, cut, expect, |records| {
        for (rec, line) in records {
            if let Err(e) = stream.push(rec, *line as u64, &mut sink) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = failed {
        // The reader checks everything the detector checks, so this is a bug, not input.
        return Err(anyhow::anyhow!(e).context(format!("{file}: the detector refused a record")));
    }
    let summary = stream.finish(&mut sink);
    Ok(Outcome {
        summary,
        kept: sink.0,
        names,
    })
}
