//! `agentsim detect --stream FILE|-`: detect while the history grows, one line per witness.
//!
//! Reads the file like `tail -f`: at its end it waits for more and stops once the file has not
//! grown for `--idle-ms` (0: stop at the first end), or reads standard input (`-`) until it
//! closes. A line that is still being written (no newline yet) is read when it is complete or
//! when the input ends. Each kept witness is printed, and stdout flushed, as soon as the
//! record that completes it has been read: `A1 line 7: record 6 (…) read …` (with `--json`,
//! one object per line: `anomaly`, `line`, `record`, `witness`). After the last record comes
//! a summary: every count, what was left out, `L1_struct`, the set exhibited and the level.
//! Memory is the stream detector's live window ([`Stream`]). Values are compared by key
//! ([`agentsim_models::value_key`]): a value of at most 15 bytes is its own key and is kept in
//! no table; longer ones are interned, and those no longer live are dropped from the table as
//! the stream goes, so fresh values do not accumulate either way.

use super::render::Render;
use crate::verdicts::Verdicts;
use agentsim_jsonl as jsonl;
use agentsim_models::detect::stream::{Found, Limits, Options, Sink, Stream};
use agentsim_models::detect::Summary;
use agentsim_models::lattice::{self, Point};
use agentsim_models::{Anomaly, Names, OpRecord, ValueKey};
use serde_json::json;
use std::io::{Read, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// How the stream is read and bounded.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub limits: Limits,
    pub residue: bool,
    pub json: bool,
    /// Stop after the file has not grown for this long (files only).
    pub idle: Duration,
    /// Parse threads.
    pub threads: usize,
}

/// How often a followed file is polled at its end.
const POLL: Duration = Duration::from_millis(20);

/// A file read past its end: waits for it to grow, until it has been idle for `idle`.
struct Follow {
    file: std::fs::File,
    idle: Duration,
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut waited = Duration::ZERO;
        loop {
            let n = self.file.read(buf)?;
            if n > 0 || buf.is_empty() || waited >= self.idle {
                return Ok(n);
            }
            std::thread::sleep(POLL);
            waited += POLL;
        }
    }
}

/// Runs the stream over `path` (`-` for stdin), printing to stdout.
pub fn run(
    path: &Path,
    cfg: Config,
    fail_on: &[Anomaly],
    gate: crate::cmd::gate::GateArgs,
) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let outcome = if path.as_os_str() == "-" {
        detect(std::io::stdin(), "<stdin>", cfg, &mut out)
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| anyhow::anyhow!(e).context(format!("{}: cannot read", path.display())))?;
        let src = Follow {
            file,
            idle: cfg.idle,
        };
        detect(src, &path.display().to_string(), cfg, &mut out)
    };
    match outcome {
        Ok(summary) => {
            // The witnesses and the summary are out; a `--fail-on` the stream cannot decide
            // is then exit 2.
            drop(out);
            let verdicts = Verdicts::of(&summary, &path.display().to_string(), None);
            Ok(super::gate(&verdicts, fail_on, gate))
        }
        // A reader that went away (`| head`) is a normal end, not an error.
        Err(e) if super::is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e),
    }
}

/// Prints each kept witness as it is found.
struct Printer<'a, W: Write> {
    names: &'a Names,
    out: &'a mut W,
    json: bool,
    printed: bool,
    error: Option<std::io::Error>,
}

impl<W: Write> Sink for Printer<'_, W> {
    fn found(&mut self, line: u64, k: Found) {
        let r = Render(self.names);
        let text = match self.json {
            true => json!({ "anomaly": k.list(), "line": line, "record": k.record(),
                            "witness": r.json(&k) })
            .to_string(),
            false => format!("{} line {line}: {}", k.list(), r.text(&k)),
        };
        if self.error.is_none() {
            if let Err(e) = writeln!(self.out, "{text}") {
                self.error = Some(e);
            }
        }
        self.printed = true;
    }
}

fn detect(
    src: impl Read + Send,
    file: &str,
    cfg: Config,
    out: &mut impl Write,
) -> anyhow::Result<Summary> {
    let opts = Options {
        limits: cfg.limits,
        residue: cfg.residue,
        keep_agents: false,
    };
    // Values are compared by key, so no table of every value read is kept: a short value is
    // its own key, and only long ones are interned (and compacted as they die).
    let mut stream = Stream::keyed(opts);
    let mut compactor = Compactor::default();
    let mut failed = None;
    // Each block is what the source had when it was read: a record is detected, and its
    // witnesses printed, as soon as the read that brought it.
    let cut = jsonl::Blocks::STREAM;
    let each = |names: &mut Names, records: &[(OpRecord, usize)], keys: &[ValueKey]| {
        for (rec, line) in records {
            let mut p = printer(names, out, cfg.json);
            let pushed = stream.push_keyed(rec, keys, *line as u64, &mut p);
            let settled = settle(p);
            let pushed = pushed.map_err(|e| {
                anyhow::anyhow!(e).context(format!(
                    "{file}:{line}: the stream detector cannot take this record (raise \
                     --window-max or --live-max, or run `agentsim detect` without --stream)"
                ))
            });
            if let Err(e) = settled.and(pushed) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        }
        if compactor.due(names, &stream) {
            compactor.compact(names, &mut stream);
        }
        ControlFlow::Continue(())
    };
    let names = jsonl::for_each_literal_block(src, file, cfg.threads, cut, each)?;
    if let Some(e) = failed {
        return Err(e);
    }
    let mut p = printer(&names, out, cfg.json);
    let summary = stream.finish(&mut p);
    settle(p)?;
    let end = end(&summary, file, cfg.json, cfg.residue);
    writeln!(out, "{end}")?;
    out.flush()?;
    Ok(summary)
}

fn printer<'a, W: Write>(names: &'a Names, out: &'a mut W, json: bool) -> Printer<'a, W> {
    Printer {
        names,
        out,
        json,
        printed: false,
        error: None,
    }
}

/// Flushes what a record printed, so a reader sees it now.
fn settle<W: Write>(p: Printer<'_, W>) -> anyhow::Result<()> {
    if let Some(e) = p.error {
        return Err(e.into());
    }
    if p.printed {
        p.out.flush()?;
    }
    Ok(())
}

/// Value tables smaller than this are compacted only to avoid growing (see [`Compactor`]).
const COMPACT_MIN: usize = 1 << 20;
/// Value tables smaller than this grow rather than compact.
const GROW_MIN: usize = 1 << 16;

/// When to drop the value names the detector no longer holds. A compaction costs a pass over
/// the table, so it waits until the table holds half as many again as were live at the last
/// one (at least [`COMPACT_MIN`]): the table stays within 1.5 times the live window and the
/// work is amortised over the values read since. And it comes early rather than let the
/// table double its slots, when the block after this one might not fit and a quarter or more
/// of the table is dead: that doubling (and the old slots beside the new while it happens)
/// was the stream's peak memory. But it does not come while the detector holds three quarters
/// of the table or more ([`Stream::held_values`], an upper bound known without a pass): while
/// the live window is still filling, a compaction would free little and the table must grow
/// anyway. After a compaction the table has room for every value until the next one, so it is
/// not rebuilt at each doubling on its way back up.
#[derive(Default)]
struct Compactor {
    /// Values live at the last compaction.
    live: usize,
    /// The table size at the last check, and the most values one block added.
    last: usize,
    step: usize,
}

impl Compactor {
    fn due(&mut self, names: &Names, stream: &Stream) -> bool {
        let n = names.value_count();
        self.step = self.step.max(n.saturating_sub(self.last));
        self.last = n;
        let later = (self.live + self.live / 2).max(COMPACT_MIN);
        let before_growth = names.value_room() < 2 * self.step && 4 * n >= 5 * self.live;
        let due = n >= later || (before_growth && n >= GROW_MIN);
        // Not while the detector holds three quarters of the table or more: the pass would
        // free little (the window is still filling), and the table must grow anyway.
        due && 4 * stream.held_values() < 3 * n
    }

    /// Drops the value names the detector no longer holds.
    fn compact(&mut self, names: &mut Names, stream: &mut Stream) {
        let mut live = vec![false; names.value_count() + 1];
        stream.live_values(&mut |v| live[v.0 as usize] = true);
        let map = names.retain_values(|v| live[v.0 as usize]);
        drop(live);
        stream.remap_values(&|v| map.get(v).expect("a live value is kept"));
        self.live = names.value_count();
        self.last = self.live;
        // Room, now, for the values until the next compaction, so that the table does not
        // double its way back up (a rehash at each doubling, and fresh pages each time).
        let next = (self.live + self.live / 2).max(COMPACT_MIN);
        let bytes = names.value_bytes() / self.live.max(1) + 1;
        names.reserve_values(next - self.live, (next - self.live) * bytes);
    }
}

/// The closing summary: counts, left out and verdicts, `L1_struct`, the set exhibited, the
/// level (a range when some anomaly cannot be told).
fn end(s: &Summary, file: &str, json: bool, residue: bool) -> String {
    let point = Point::of(&s.anomalies());
    let level = lattice::level(point);
    let verdicts = Verdicts::of(s, file, None);
    let (lo, hi) = verdicts.level_range();
    let mut lists: Vec<(&str, u64, u64)> = Anomaly::ALL
        .into_iter()
        .filter(|&a| super::shown(a, residue, s))
        .map(|a| (a.name(), s.count(a), s.left_out(a)))
        .collect();
    lists.push(("L1_struct", s.l1_struct.total, s.l1_struct.left_out()));
    if json {
        let counts: serde_json::Map<_, _> = lists
            .iter()
            .map(|&(k, n, _)| (k.to_owned(), json!(n)))
            .collect();
        let left: serde_json::Map<_, _> = lists
            .iter()
            .map(|&(k, _, n)| (k.to_owned(), json!(n)))
            .collect();
        let names: Vec<&str> = point.members().iter().map(|a| a.name()).collect();
        return json!({ "end": { "records": s.records, "witnesses": counts, "left_out": left,
                                "L1_struct_holds": s.l1_struct_holds(),
                                "exhibits": names, "level": level,
                                "verdicts": super::verdicts_json(&verdicts),
                                "level_range": { "low": lo, "high": hi } } })
        .to_string();
    }
    let mut text = format!("end of stream: {} records", s.records);
    for (k, n, left) in lists {
        text.push_str(&format!("\n{k}: {n} witnesses ({left} not listed)"));
        if let Some((_, v)) = verdicts.0.iter().find(|(a, _)| a.name() == k) {
            text.push_str(&format!(", {v}"));
        }
    }
    let level = match (lo, hi) {
        (lo, hi) if lo == hi => format!("L{level}"),
        (lo, hi) => format!("L{lo}..L{hi}"),
    };
    text.push_str(&format!("\nexhibits: {}\nlevel: {level}", point.label()));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With nothing live, the table is compacted at the block before it would double (once
    /// past [`GROW_MIN`]), not at [`COMPACT_MIN`]; with everything live, only when it has
    /// grown by a quarter since.
    #[test]
    fn the_value_table_is_compacted_before_it_doubles() {
        let opts = Options {
            limits: Limits::unbounded(10),
            residue: false,
            keep_agents: false,
        };
        let (mut names, mut stream) = (Names::new(), Stream::new(opts));
        let mut c = Compactor::default();
        let mut compactions = vec![];
        for block in 0..200u32 {
            for k in 0..1_000u32 {
                names.value(&format!("v{block}-{k}"));
            }
            if c.due(&names, &stream) {
                compactions.push((block, names.value_count() + names.value_room()));
                c.compact(&mut names, &mut stream);
                assert_eq!(names.value_count(), 0);
                // Room for the whole next cycle: no doubling before the next compaction.
                assert!(names.value_room() >= COMPACT_MIN, "{}", names.value_room());
            }
        }
        // The table doubles past 2^17 names: the compaction comes while two more blocks of
        // the largest size seen might not fit (at 130,000 names; not at 65,000, below GROW_MIN).
        assert_eq!(compactions, vec![(129, 1 << 17)]);
        assert!(names.value_room() > 60_000);
    }
}
