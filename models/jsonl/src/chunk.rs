//! A block of lines parsed apart from the lines before it, and merged back in line order.
//!
//! A worker parses a block (whole lines of the file) with the reader's line parser into
//! block-local name tables ([`parse_block`]); it does not know the block's first line, its
//! first record index or the previous record's write time. [`Merger::merge`], run on the
//! blocks in file order, absorbs each block's names into the global tables in local id
//! order ([`absorb`]), renames the records' ids, and makes line numbers global, so
//! every id and line is the one a sequential read gives. The checks that need what the
//! worker did not know are exact and cheap: the block's first write time against the
//! previous record's, and every pred against its record's real index (one number per block,
//! [`RecordParser::pred_slack`]). When a block failed, or one of those checks fails, the
//! merger parses that block again sequentially, from the known line, index and write time,
//! into the global tables: then the error (or, when the worker's refusal came only from the
//! missing context, the records) is exactly the sequential reader's. The first error in line
//! order wins because blocks are merged in order and merging stops at the first error.

use super::read::{RecordParser, RecordReader};
use super::tables::{absorb, literal_keys, seed_from, IdMap};
use super::JsonlError;
use agentsim_models::names::{Agent, Cell, Names, Replica, Tool, Value};
use agentsim_models::record::OpRecord;
use agentsim_models::value_key::ValueKey;

/// One block's records, with block-local ids until merged.
#[derive(Default)]
pub struct Parsed {
    /// The records and their lines (1-based in the block until merged, then in the file).
    pub records: Vec<(OpRecord, usize)>,
    /// How many of `records` are this block's (the rest are spare allocations).
    pub len: usize,
    /// Merged by a literal merger ([`Merger::literal`]): the key of each value id of the
    /// records (id − 1), which a literal merger leaves block-local.
    pub keys: Vec<ValueKey>,
    names: Names,
    /// Lines in the block, blank ones included (when it parsed).
    lines: usize,
    /// The worker stopped at an error, or it could not tell (see the module header).
    failed: bool,
    /// `names` hold a copy of the global tables ([`Parsed::seed`]) for the next block.
    seeded: bool,
    pred_slack: i64,
    parser: Option<RecordParser>,
}

impl Parsed {
    /// An empty block for a literal merger: its values are interned as keys
    /// ([`Names::with_literal_values`]).
    pub fn literal() -> Parsed {
        Parsed {
            names: Names::with_literal_values(),
            ..Parsed::default()
        }
    }

    /// This block's records, in line order.
    pub fn records(&self) -> &[(OpRecord, usize)] {
        &self.records[..self.len]
    }

    /// Starts the next block's tables from the agents, cells, tools and replicas of `global`
    /// (the merger's names, as of the blocks merged so far: a prefix of what they will be
    /// when the next block merges). Its names then keep their ids when it merges, and a block
    /// that names nothing new is merged with no renaming ([`Merger::merge`]). Changes no id:
    /// a name the copy lacks is renamed as before.
    pub fn seed(&mut self, global: &Names) {
        seed_from(&mut self.names, global);
        self.seeded = true;
    }
}

/// Parses the whole lines `bytes` into `out` (its allocations reused) with local names.
pub fn parse_block(bytes: &[u8], out: &mut Parsed) {
    let mut parser = out.parser.take().unwrap_or_default();
    parser.pred_limit = Some(1 << 32);
    parser.pred_slack = i64::MIN;
    // The parser remembers ids of the previous block's tables.
    parser.forget_names();
    if !std::mem::take(&mut out.seeded) {
        out.names.clear();
    }
    out.len = 0;
    out.failed = false;
    let mut reader = RecordReader::resume(bytes, "", (0, 0, 0), parser);
    // One UTF-8 check for the block, not one a line (a block that fails it is read line by
    // line, which finds the line at fault).
    let mut lines = std::str::from_utf8(bytes)
        .ok()
        .map(|text| Lines { text, at: 0 });
    loop {
        if out.records.len() == out.len {
            out.records.push((OpRecord::default(), 0));
        }
        let (rec, line) = &mut out.records[out.len];
        let next = match &mut lines {
            Some(lines) => next_text(&mut reader, lines, &mut out.names, rec),
            None => reader.next_into(&mut out.names, rec),
        };
        match next {
            Ok(Some(n)) => *line = n,
            Ok(None) => break,
            Err(_) => {
                out.failed = true;
                break;
            }
        }
        out.len += 1;
    }
    out.lines = reader.lines();
    let parser = reader.into_parser();
    out.pred_slack = parser.pred_slack;
    out.parser = Some(parser);
}

/// The lines of a text, each with its `\n` (the last may lack one): `str::split_inclusive`
/// with the newline found by `memchr`, many bytes at a time (the word-at-a-time search of
/// the standard library was 4 % of a batch read).
struct Lines<'a> {
    text: &'a str,
    /// Where the next line starts: 0 or just after a `\n`, so always a character boundary.
    at: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.at..];
        if rest.is_empty() {
            return None;
        }
        let len = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest.len(), |i| i + 1);
        self.at += len;
        Some(&rest[..len])
    }
}

/// The next record of a block known to be UTF-8 (blank lines skipped).
fn next_text(
    reader: &mut RecordReader<&[u8]>,
    lines: &mut Lines<'_>,
    names: &mut Names,
    rec: &mut OpRecord,
) -> Result<Option<usize>, JsonlError> {
    for text in lines {
        if let Some(n) = reader.line_text(text, names, rec)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// The global state blocks are merged into, in file order.
pub struct Merger {
    file: String,
    /// The names of everything merged so far.
    pub names: Names,
    line: usize,
    index: usize,
    previous_write_time: u64,
    map: IdMap,
    /// The source's length in bytes, until the first block has sized the value table by it.
    expect: Option<u64>,
    /// Bytes merged so far.
    seen: u64,
}

/// The most values [`Merger::expect_bytes`] makes room for (about 64 MiB of table).
pub const RESERVE_MAX: u64 = 1 << 22;

impl Merger {
    /// A merger for the blocks of `file` (its name in errors).
    pub fn new(file: &str) -> Self {
        Merger {
            file: file.to_owned(),
            names: Names::new(),
            line: 0,
            index: 0,
            previous_write_time: 0,
            map: IdMap::default(),
            expect: None,
            seen: 0,
        }
    }

    /// A merger that leaves value ids block-local: each merged block's [`Parsed::keys`] say
    /// what they stand for, and only names too long to be their own key are interned here
    /// (for a stream detector, which compares keys: [`agentsim_models::value_key`]). Blocks must be
    /// [`Parsed::literal`].
    pub fn literal(file: &str) -> Self {
        Merger {
            names: Names::with_literal_values(),
            ..Merger::new(file)
        }
    }

    /// Says the source is `total` bytes long (a file), so that the value table is sized once,
    /// after the first block, for as many values as the whole source has at that block's
    /// rate (at most [`RESERVE_MAX`]), instead of doubling its way there. Changes no id.
    pub fn expect_bytes(&mut self, total: u64) {
        self.expect = Some(total);
    }

    /// Sizes the value table for the rest of the source at the rate of the bytes merged so
    /// far, once some value has been seen.
    fn reserve(&mut self) {
        let (values, bytes) = (
            self.names.value_count() as u64,
            self.names.value_bytes() as u64,
        );
        let (Some(total), seen) = (self.expect, self.seen) else {
            return;
        };
        if values == 0 && seen < total {
            return;
        }
        self.expect = None;
        if total <= seen {
            return;
        }
        let scale = |n: u64| u128::from(n) * u128::from(total - seen) / u128::from(seen);
        let more = scale(values).min(u128::from(RESERVE_MAX)) as u64;
        let more = more + more / 8;
        let more_bytes = u128::from(bytes) * u128::from(more) / u128::from(values);
        self.names
            .reserve_values(more as usize, more_bytes.min(1 << 30) as usize);
    }

    /// Merges the next block (`bytes`, parsed into `p`): its records get global ids and lines,
    /// or the first error in it, exactly as a sequential read of the file reports it.
    pub fn merge(&mut self, bytes: &[u8], p: &mut Parsed) -> Result<(), JsonlError> {
        self.seen += bytes.len() as u64;
        let records = &p.records[..p.len];
        let in_order = records
            .first()
            .is_none_or(|(r, _)| r.write_time >= self.previous_write_time);
        let preds_earlier = p.pred_slack < self.index as i64;
        if p.failed || !in_order || !preds_earlier {
            return self.reparse(bytes, p);
        }
        absorb(&mut self.names, &p.names, &mut self.map);
        let literal = self.names.has_literal_values();
        assert_eq!(
            literal,
            p.names.has_literal_values(),
            "a literal merger takes literal blocks"
        );
        if literal {
            literal_keys(&p.names, Some(&self.map), &mut p.keys);
        }
        // A seeded block that named nothing new has the global ids already (and a literal
        // block's value ids stay its own).
        let rename_ids = !(literal && self.map.is_identity());
        for (rec, line) in &mut p.records[..p.len] {
            if rename_ids {
                rename(rec, &self.map, literal);
            }
            *line += self.line;
        }
        if self.expect.is_some() {
            self.reserve();
        }
        self.line += p.lines;
        self.index += p.len;
        if let Some((r, _)) = p.records[..p.len].last() {
            self.previous_write_time = r.write_time;
        }
        Ok(())
    }

    /// The block read again as the sequential reader reads it, from where the last block left.
    fn reparse(&mut self, bytes: &[u8], p: &mut Parsed) -> Result<(), JsonlError> {
        let at = (self.line, self.index, self.previous_write_time);
        let mut reader = RecordReader::resume(bytes, &self.file, at, RecordParser::default());
        p.len = 0;
        // A literal merger's own literals are this block's, and go with it.
        self.names.clear_literals();
        loop {
            if p.records.len() == p.len {
                p.records.push((OpRecord::default(), 0));
            }
            let (rec, line) = &mut p.records[p.len];
            match reader.next_into(&mut self.names, rec)? {
                Some(n) => *line = n,
                None => break,
            }
            p.len += 1;
            self.previous_write_time = rec.write_time;
        }
        self.line = reader.lines();
        self.index += p.len;
        literal_keys(&self.names, None, &mut p.keys);
        self.names.clear_literals();
        Ok(())
    }
}

/// `r` with every id renamed by `m` (sets and maps re-sorted: the order of ids changed);
/// value ids too, unless they are `literal` (block-local, [`Merger::literal`]).
fn rename(r: &mut OpRecord, m: &IdMap, literal: bool) {
    let cell = |c: Cell| Cell(m.cells[c.index()]);
    let value = |v: Value| match literal {
        true => v,
        false => Value(m.values[v.0 as usize]),
    };
    let tool = |t: Tool| Tool(m.tools[t.index()]);
    r.agent = Agent(m.agents[r.agent.index()]);
    for set in [&mut r.read_set, &mut r.write_set] {
        for c in set.iter_mut() {
            *c = cell(*c);
        }
        set.sort_unstable();
    }
    r.read_values.rename(cell, value);
    r.write_values.rename(cell, value);
    r.read_registry.rename(tool);
    r.write_registry.rename(tool);
    r.planned_tool = r.planned_tool.map(tool);
    for (c, v) in r.io.iter_mut().chain(r.co.iter_mut()) {
        (*c, *v) = (cell(*c), value(*v));
    }
    for m_ in &mut r.read_meta {
        m_.cell = cell(m_.cell);
        m_.replica = Replica(m.replicas[m_.replica.index()]);
    }
    r.read_meta.sort_unstable();
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn lines_are_split_inclusive() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "\n\nab\r\n\n",
            "é\nü\n€",
            "x\n\n",
        ] {
            let got: Vec<&str> = Lines { text, at: 0 }.collect();
            let want: Vec<&str> = text.split_inclusive('\n').collect();
            assert_eq!(got, want, "{text:?}");
        }
    }
}
