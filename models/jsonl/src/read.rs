//! Reading JSON Lines histories: one record per line, every defect reported with file, line,
//! column and key.
//!
//! Each line is parsed by [`super::json`] into a reused flat tree, then walked key by key, so
//! that an error can name the exact key (a path like `io[1][0]` for nested values) and its
//! column. Adding a key is one entry in [`super::KEYS`], one in [`slot`] and one arm in
//! [`Line::field`]. Names are interned in a defined order, which fixes every id and so the
//! order witnesses sort in: line by line, the keys of a line in sorted order (`aborted`,
//! `agent`, `co`, `io`, …), the entries of an object sorted by name (a value before its cell),
//! array items in order. Blank lines are skipped; `preds` count records, which are the lines
//! when the file has no blank lines.
//!
//! [`RecordReader`] reads a `BufRead` one record at a time into a reused [`OpRecord`], so a
//! caller that does not keep the records (the stream detector) holds one line, not the file.

use super::fast::{Context, Scanner};
use super::fields::{is_permutation, reset, slot};
use super::json::{Kind, SyntaxError, Tree};
use super::{JsonlError, KEYS, READ_META_KEYS, REQUIRED_KEYS};
use agentsim_models::history::History;
use agentsim_models::names::{Agent, Cell, Names, Tool, Value};
use agentsim_models::record::{normalize_set, OpRecord, ReadMeta, Registry, ToolEntry};
use std::io::BufRead;
use std::path::Path;

type Result<T> = std::result::Result<T, JsonlError>;

/// Reads a history from a `.jsonl` file; errors name the path as given.
pub fn read_history(path: impl AsRef<Path>) -> Result<History> {
    let path = path.as_ref();
    let file = path.display().to_string();
    let io = |source| JsonlError::Io {
        file: file.clone(),
        source,
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let mut src = std::io::BufReader::with_capacity(1 << 20, f);
    if src.fill_buf().map_err(io)?.starts_with(BOM) {
        src.consume(BOM.len());
    }
    let mut reader = RecordReader::new(src, &file);
    let mut h = History::new(Names::new());
    let mut rec = OpRecord::default();
    while reader.next_into(&mut h.names, &mut rec)?.is_some() {
        h.records.push(rec.clone());
    }
    debug_assert_eq!(h.validate(), Ok(()));
    Ok(h)
}

/// Parses a history from JSON Lines text; `source` names it in errors (a path or `<stdin>`).
pub fn parse_history(text: &str, source: &str) -> Result<History> {
    let mut reader = RecordReader::new(skip_bom(text.as_bytes()), source);
    let mut h = History::new(Names::new());
    let mut rec = OpRecord::default();
    while reader.next_into(&mut h.names, &mut rec)?.is_some() {
        h.records.push(rec.clone());
    }
    debug_assert_eq!(h.validate(), Ok(()));
    Ok(h)
}

/// [`parse_history`] by the spec form alone ([`RecordReader::spec`]): the reference the fast
/// path is tested against.
pub fn parse_history_spec(text: &str, source: &str) -> Result<History> {
    let mut reader = RecordReader::spec(skip_bom(text.as_bytes()), source);
    let mut h = History::new(Names::new());
    let mut rec = OpRecord::default();
    while reader.next_into(&mut h.names, &mut rec)?.is_some() {
        h.records.push(rec.clone());
    }
    Ok(h)
}

/// The UTF-8 byte-order mark some editors (Windows Notepad, Excel exports) put at the start
/// of a text file. A history that starts with one is read as if it did not: the mark is not
/// part of the first record. Only the first three bytes of a source are checked, once, so the
/// per-line path is unchanged.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading [`BOM`].
pub fn skip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// Reads records one line at a time from any `BufRead`, checking log order across lines.
pub struct RecordReader<R> {
    src: R,
    file: String,
    buf: Vec<u8>,
    line: usize,
    index: usize,
    previous_write_time: u64,
    parser: RecordParser,
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `src`, called `file` in errors.
    pub fn new(src: R, file: &str) -> Self {
        Self::resume(src, file, (0, 0, 0), RecordParser::default())
    }

    /// A reader that parses every line with the spec form alone (the generic JSON tree
    /// walked key by key), never the fast scanner: the reference the fast path is tested
    /// against. Same records, same errors, slower.
    pub fn spec(src: R, file: &str) -> Self {
        let parser = RecordParser {
            spec_only: true,
            ..RecordParser::default()
        };
        Self::resume(src, file, (0, 0, 0), parser)
    }

    /// A reader that continues after `line` lines and `index` records, the last of which
    /// was written at `previous_write_time`, with `parser`'s state.
    pub(crate) fn resume(
        src: R,
        file: &str,
        (line, index, previous_write_time): (usize, usize, u64),
        parser: RecordParser,
    ) -> Self {
        RecordReader {
            src,
            file: file.to_owned(),
            buf: Vec::new(),
            line,
            index,
            previous_write_time,
            parser,
        }
    }

    /// The parser state, for reuse by another reader.
    pub(crate) fn into_parser(self) -> RecordParser {
        self.parser
    }

    /// The number of lines read so far (blank ones included).
    pub(crate) fn lines(&self) -> usize {
        self.line
    }

    /// Reads the next record into `rec`; returns its 1-based line, or `None` at the end.
    /// Every call must pass the same `names` (the reader remembers ids it interned there).
    pub fn next_into(&mut self, names: &mut Names, rec: &mut OpRecord) -> Result<Option<usize>> {
        loop {
            self.buf.clear();
            let n = self
                .src
                .read_until(b'\n', &mut self.buf)
                .map_err(|source| JsonlError::Io {
                    file: self.file.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            let buf = std::mem::take(&mut self.buf);
            let read = self.line_bytes(&buf, names, rec);
            self.buf = buf;
            if let Some(line) = read? {
                return Ok(Some(line));
            }
        }
    }

    /// Reads the next line, given as bytes with or without its newline: its record (and
    /// 1-based line), or `None` if it is blank.
    fn line_bytes(
        &mut self,
        bytes: &[u8],
        names: &mut Names,
        rec: &mut OpRecord,
    ) -> Result<Option<usize>> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                return Err(JsonlError::BadUtf8 {
                    file: self.file.clone(),
                    line: self.line + 1,
                    col: column(
                        &String::from_utf8_lossy(&bytes[..e.valid_up_to()]),
                        usize::MAX,
                    ),
                })
            }
        };
        self.line_text(text, names, rec)
    }

    /// [`RecordReader::line_bytes`] for a line known to be UTF-8.
    pub(crate) fn line_text(
        &mut self,
        text: &str,
        names: &mut Names,
        rec: &mut OpRecord,
    ) -> Result<Option<usize>> {
        self.line += 1;
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(None);
        }
        let at = At {
            file: &self.file,
            line: self.line,
            index: self.index,
            pred_limit: self.parser.pred_limit.unwrap_or(self.index as u64),
            text,
        };
        self.parser.parse_into(&at, names, rec)?;
        if rec.write_time < self.previous_write_time {
            let msg = format!(
                "{} is before the previous record's {} (records must appear in log order, \
                 write_time ascending)",
                rec.write_time, self.previous_write_time
            );
            let col = self.parser.write_time_offset;
            return Err(at.bad("write_time", col, msg));
        }
        self.previous_write_time = rec.write_time;
        if let (Some(_), Some(&p)) = (self.parser.pred_limit, rec.preds.last()) {
            let slack = i64::from(p) - self.index as i64;
            self.parser.pred_slack = self.parser.pred_slack.max(slack);
        }
        self.index += 1;
        Ok(Some(self.line))
    }

    /// The number of records read so far.
    pub fn records(&self) -> usize {
        self.index
    }
}

/// The 1-based column (in characters) of byte `offset` of `text`.
fn column(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let mut at = offset;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].chars().count() + 1
}

/// Where we are: the file, the 1-based line, the 0-based record index, the line's text.
pub(crate) struct At<'a> {
    file: &'a str,
    line: usize,
    index: usize,
    /// A pred must be below this: the index, except in a block read apart from the lines
    /// before it (see [`RecordParser::pred_limit`]).
    pred_limit: u64,
    text: &'a str,
}

impl At<'_> {
    fn col(&self, offset: u32) -> usize {
        column(self.text, offset as usize)
    }

    fn bad(&self, key: &str, offset: u32, message: String) -> JsonlError {
        JsonlError::BadValue {
            file: self.file.to_owned(),
            line: self.line,
            col: self.col(offset),
            key: key.to_owned(),
            message,
        }
    }

    fn syntax(&self, e: SyntaxError) -> JsonlError {
        JsonlError::BadJson {
            file: self.file.to_owned(),
            line: self.line,
            col: column(self.text, e.offset),
            message: e.message,
        }
    }
}

/// The reusable state of the line parser.
#[derive(Default)]
pub(crate) struct RecordParser {
    tree: Tree,
    scratch: Vec<usize>,
    effects: Vec<(Cell, Value)>,
    /// The raw text of the last registry parsed, and what it parsed to: consecutive records
    /// mostly carry the same registry, and re-reading known tool names interns nothing, so
    /// equal text gives the equal registry without walking it.
    last_registry: (String, Registry),
    /// Byte offset of the last record's `write_time` value (for the log-order error).
    write_time_offset: u32,
    fast: Scanner,
    /// Never use the fast scanner ([`RecordReader::spec`]).
    spec_only: bool,
    /// Set for a block parsed apart from the lines before it, whose record indices are not
    /// known yet: preds are then checked against this bound only (below 2^32, so they fit
    /// a `u32`), and the caller checks the real bound with [`RecordParser::pred_slack`].
    pub(crate) pred_limit: Option<u64>,
    /// With `pred_limit`: the largest (highest pred − 0-based record index in the block) of
    /// the records read, so that every pred is earlier iff the block's first index exceeds it.
    pub(crate) pred_slack: i64,
}

/// Sentinel for "key absent".
const ABSENT: usize = usize::MAX;

/// The keys whose values set record fields, in sorted name order (the interning order);
/// `read_replica` and `read_version` are combined afterwards.
const FIELD_ORDER: [usize; 14] = [12, 0, 11, 10, 4, 13, 3, 1, 5, 2, 8, 6, 9, 7];

impl RecordParser {
    /// Parses the record on line `at` into `rec` (every field replaced), interning names:
    /// by the fast scanner when it takes the line, else by the spec form (the same result).
    fn parse_into(&mut self, at: &At<'_>, names: &mut Names, rec: &mut OpRecord) -> Result<()> {
        if !self.spec_only {
            let cx = Context {
                pred_limit: at.pred_limit,
                last_registry: &mut self.last_registry,
                effects: &mut self.effects,
            };
            if let Some(offset) = self.fast.parse(at.text, names, rec, cx) {
                self.write_time_offset = offset;
                return Ok(());
            }
        }
        self.parse_spec(at, names, rec)
    }

    /// Forgets every id remembered (the last registry, the scanner's recent names): they
    /// belong to the name tables they were interned in, and the next line uses others.
    pub(crate) fn forget_names(&mut self) {
        self.last_registry = (String::new(), Registry::default());
        self.fast.forget_names();
    }

    /// The spec form: the line parsed into a generic tree, walked key by key.
    fn parse_spec(&mut self, at: &At<'_>, names: &mut Names, rec: &mut OpRecord) -> Result<()> {
        self.tree.parse(at.text).map_err(|e| at.syntax(e))?;
        let mut line = Line {
            at,
            tree: &self.tree,
            scratch: &mut self.scratch,
            last_registry: &mut self.last_registry,
        };
        let slots = line.slots()?;
        reset(rec);
        for s in FIELD_ORDER {
            if slots[s] != ABSENT {
                line.field(s, slots[s], rec, names)?;
            }
        }
        let absent = |k: &str| slots[slot(k.as_bytes()).expect("a known key")] == ABSENT;
        if let Some(key) = REQUIRED_KEYS.into_iter().find(|&k| absent(k)) {
            return Err(JsonlError::MissingKey {
                file: at.file.to_owned(),
                line: at.line,
                col: line.col(0),
                key,
            });
        }
        line.read_meta(slots[14], slots[15], rec, names)?;
        let offset = |s: usize| self.tree.nodes[slots[s]].start;
        if rec.read_time > rec.write_time {
            let msg = format!(
                "{} is after write_time {} (an operation reads before it writes)",
                rec.read_time, rec.write_time
            );
            return Err(at.bad("read_time", offset(5), msg));
        }
        if !is_permutation(&rec.io, &rec.co, &mut self.effects) {
            let offset = if slots[11] == ABSENT {
                offset(10)
            } else {
                offset(11)
            };
            let msg = format!(
                "the completion order ({} effects) is not a permutation of `io` ({} effects): \
                 every issued effect completes exactly once (an absent `co` is empty)",
                rec.co.len(),
                rec.io.len()
            );
            return Err(at.bad("co", offset, msg));
        }
        self.write_time_offset = offset(9);
        Ok(())
    }
}

/// One line being walked.
struct Line<'a, 'b> {
    at: &'a At<'b>,
    tree: &'a Tree,
    scratch: &'a mut Vec<usize>,
    last_registry: &'a mut (String, Registry),
}

impl Line<'_, '_> {
    fn kind(&self, i: usize) -> Kind {
        self.tree.nodes[i].kind
    }

    fn text(&self, i: usize) -> &str {
        self.tree.str(self.at.text, i)
    }

    fn col(&self, i: usize) -> usize {
        self.at.col(self.tree.nodes[i].start)
    }

    /// The value node of each known key, checking for unknown and duplicate keys.
    fn slots(&self) -> Result<[usize; 16]> {
        if self.kind(0) != Kind::Object {
            return Err(JsonlError::NotAnObject {
                file: self.at.file.to_owned(),
                line: self.at.line,
                col: self.col(0),
                found: self.describe(0),
            });
        }
        let mut slots = [ABSENT; 16];
        for k in self.tree.children(0) {
            let key = self.text(k);
            let Some(s) = slot(key.as_bytes()) else {
                return Err(JsonlError::UnknownKey {
                    file: self.at.file.to_owned(),
                    line: self.at.line,
                    col: self.col(k),
                    key: key.to_owned(),
                });
            };
            if slots[s] != ABSENT {
                return Err(self.duplicate(key.to_owned(), k));
            }
            slots[s] = k + 1;
        }
        Ok(slots)
    }

    fn duplicate(&self, key: String, at: usize) -> JsonlError {
        JsonlError::DuplicateKey {
            file: self.at.file.to_owned(),
            line: self.at.line,
            col: self.col(at),
            key,
        }
    }

    /// Parses one key's value into `rec`. The one place that knows every field.
    fn field(&mut self, s: usize, v: usize, rec: &mut OpRecord, names: &mut Names) -> Result<()> {
        let key = KEYS[s];
        match s {
            0 => rec.agent = Agent(names.agents.intern(self.string(key, v)?)),
            1 => self.cells(key, v, names, &mut rec.read_set)?,
            2 => self.value_map(key, v, names, &mut rec.read_values)?,
            3 => self.registry_memo(key, v, names, &mut rec.read_registry)?,
            4 => {
                rec.planned_tool = match self.kind(v) {
                    Kind::Null => None,
                    _ => Some(Tool(names.tools.intern(self.string(key, v)?))),
                }
            }
            5 => rec.read_time = self.integer(key, v)?,
            6 => self.cells(key, v, names, &mut rec.write_set)?,
            7 => self.value_map(key, v, names, &mut rec.write_values)?,
            8 => self.registry_memo(key, v, names, &mut rec.write_registry)?,
            9 => rec.write_time = self.integer(key, v)?,
            10 => self.effects(key, v, names, &mut rec.io)?,
            11 => self.effects(key, v, names, &mut rec.co)?,
            12 => {
                rec.aborted = match self.kind(v) {
                    Kind::Bool(b) => b,
                    _ => return Err(self.wrong(key, "a boolean", v)),
                }
            }
            13 => self.preds(key, v, &mut rec.preds)?,
            _ => unreachable!("read_replica and read_version are combined in read_meta"),
        }
        Ok(())
    }

    /// The optional `read_replica` (cell → replica name) and `read_version` (cell → committed
    /// version) objects: both or neither, the same cells, each in `read_set`.
    fn read_meta(&self, r: usize, v: usize, rec: &mut OpRecord, names: &mut Names) -> Result<()> {
        let [rk, vk] = READ_META_KEYS;
        match (r, v) {
            (ABSENT, ABSENT) => return Ok(()),
            (_, ABSENT) => return Err(self.bad(rk, r, format!("needs `{vk}` beside it"))),
            (ABSENT, _) => return Err(self.bad(vk, v, format!("needs `{rk}` beside it"))),
            _ => {}
        }
        self.object(rk, r, "an object mapping cell names to replicas")?;
        self.object(vk, v, "an object mapping cell names to versions")?;
        let (mut replicas, mut versions) = (Vec::new(), Vec::new());
        self.sorted_keys(rk, r, &mut replicas)?;
        self.sorted_keys(vk, v, &mut versions)?;
        let find =
            |keys: &[usize], name: &str| keys.binary_search_by(|&x| self.text(x).cmp(name)).ok();
        if let Some(&k) = versions
            .iter()
            .find(|&&k| find(&replicas, self.text(k)).is_none())
        {
            let name = self.text(k);
            let msg = format!("cell `{name}` has a version but no `{rk}` entry");
            return Err(self.bad(&format!("{vk}.{name}"), k, msg));
        }
        for &k in &replicas {
            let name = self.text(k);
            let key = format!("{rk}.{name}");
            let replica = names.replica(self.string(&key, k + 1)?);
            let Some(at) = find(&versions, name) else {
                let msg = format!("cell `{name}` has a replica but no `{vk}` entry");
                return Err(self.bad(&key, k, msg));
            };
            let version = self.integer(&format!("{vk}.{name}"), versions[at] + 1)?;
            let cell = names.cell(name);
            if rec.read_set.binary_search(&cell).is_err() {
                return Err(self.bad(&key, k, format!("cell `{name}` is not in read_set")));
            }
            rec.read_meta.push(ReadMeta {
                cell,
                replica,
                version,
            });
        }
        rec.read_meta.sort_unstable();
        Ok(())
    }

    /// The keys of object `v` into `keys`, sorted by name, checked for duplicates.
    fn sorted_keys(&self, key: &str, v: usize, keys: &mut Vec<usize>) -> Result<()> {
        keys.clear();
        keys.extend(self.tree.children(v));
        let (tree, text) = (self.tree, self.at.text);
        // Stable: of two equal names, the later one (the duplicate) comes second.
        keys.sort_by(|&a, &b| tree.str(text, a).cmp(tree.str(text, b)));
        if let Some(w) = keys.windows(2).find(|w| self.text(w[0]) == self.text(w[1])) {
            return Err(self.duplicate(format!("{key}.{}", self.text(w[1])), w[1]));
        }
        Ok(())
    }

    fn wrong(&self, key: &str, expected: &'static str, v: usize) -> JsonlError {
        JsonlError::WrongType {
            file: self.at.file.to_owned(),
            line: self.at.line,
            col: self.col(v),
            key: key.to_owned(),
            expected,
            found: self.describe(v),
        }
    }

    fn bad(&self, key: &str, v: usize, message: String) -> JsonlError {
        self.at.bad(key, self.tree.nodes[v].start, message)
    }

    fn string(&self, key: &str, v: usize) -> Result<&str> {
        match self.kind(v) {
            Kind::String => Ok(self.text(v)),
            _ => Err(self.wrong(key, "a string", v)),
        }
    }

    /// A JSON number written as a plain non-negative integer that fits in u64.
    fn integer(&self, key: &str, v: usize) -> Result<u64> {
        self.uint(v)
            .ok_or_else(|| self.wrong(key, "a non-negative integer", v))
    }

    fn uint(&self, v: usize) -> Option<u64> {
        let n = &self.tree.nodes[v];
        let raw = &self.at.text[n.start as usize..n.end as usize];
        let plain = n.kind == Kind::Number && raw.bytes().all(|b| b.is_ascii_digit());
        plain.then(|| raw.parse::<u64>().ok()).flatten()
    }

    fn array(&self, key: &str, v: usize, expected: &'static str) -> Result<()> {
        match self.kind(v) {
            Kind::Array => Ok(()),
            _ => Err(self.wrong(key, expected, v)),
        }
    }

    fn object(&self, key: &str, v: usize, expected: &'static str) -> Result<()> {
        match self.kind(v) {
            Kind::Object => Ok(()),
            _ => Err(self.wrong(key, expected, v)),
        }
    }

    /// A string names a value; `null` is NULL.
    fn value(&self, key: &dyn Fn() -> String, v: usize, names: &mut Names) -> Result<Value> {
        match self.kind(v) {
            Kind::Null => Ok(Value::NULL),
            Kind::String => Ok(names.value(self.text(v))),
            _ => Err(self.wrong(&key(), "a value name (string) or null", v)),
        }
    }

    /// An array of cell names, read as a set (sorted, duplicates merged).
    fn cells(&self, key: &str, v: usize, names: &mut Names, out: &mut Vec<Cell>) -> Result<()> {
        self.array(key, v, "an array of cell names")?;
        for (i, item) in self.tree.children(v).enumerate() {
            match self.kind(item) {
                Kind::String => out.push(names.cell(self.text(item))),
                _ => return Err(self.wrong(&format!("{key}[{i}]"), "a string", item)),
            }
        }
        normalize_set(out);
        Ok(())
    }

    /// An object cell → value or null; a missing cell reads as NULL.
    fn value_map(
        &mut self,
        key: &str,
        v: usize,
        names: &mut Names,
        out: &mut agentsim_models::record::ValueMap,
    ) -> Result<()> {
        self.object(key, v, "an object mapping cell names to values")?;
        let mut keys = std::mem::take(self.scratch);
        self.sorted_keys(key, v, &mut keys)?;
        for &k in &keys {
            let cell = self.text(k);
            let value = self.value(&|| format!("{key}.{cell}"), k + 1, names)?;
            out.set(names.cell(cell), value);
        }
        *self.scratch = keys;
        Ok(())
    }

    /// [`Line::registry`], or the last registry again when its text is the same.
    fn registry_memo(
        &mut self,
        key: &str,
        v: usize,
        names: &mut Names,
        out: &mut Registry,
    ) -> Result<()> {
        let n = &self.tree.nodes[v];
        let raw = &self.at.text[n.start as usize..n.end as usize];
        if self.last_registry.0 == raw {
            out.clone_from(&self.last_registry.1);
            return Ok(());
        }
        self.registry(key, v, names, out)?;
        self.last_registry.0.clear();
        self.last_registry.0.push_str(raw);
        self.last_registry.1.clone_from(out);
        Ok(())
    }

    /// An array of tool names (version 0) or `{"tool": name, "version": n}` objects.
    fn registry(
        &self,
        key: &str,
        v: usize,
        names: &mut Names,
        out: &mut agentsim_models::record::Registry,
    ) -> Result<()> {
        self.array(key, v, "an array of tool names or {tool, version} objects")?;
        for (i, item) in self.tree.children(v).enumerate() {
            let at = || format!("{key}[{i}]");
            let entry = self.tool_entry(&at, item, names)?;
            if out.contains(entry.tool) {
                let msg = format!("tool `{}` appears twice", names.tool_name(entry.tool));
                return Err(self.bad(&at(), item, msg));
            }
            out.insert(entry);
        }
        Ok(())
    }

    fn tool_entry(
        &self,
        key: &dyn Fn() -> String,
        v: usize,
        names: &mut Names,
    ) -> Result<ToolEntry> {
        let expected = "a tool name or an object {\"tool\": name, \"version\": n}";
        match self.kind(v) {
            Kind::String => {
                let tool = names.tool(self.text(v));
                return Ok(ToolEntry { tool, version: 0 });
            }
            Kind::Object => {}
            _ => return Err(self.wrong(&key(), expected, v)),
        }
        let (mut tool_at, mut version_at) = (ABSENT, ABSENT);
        for k in self.tree.children(v) {
            let slot = match self.text(k) {
                "tool" => &mut tool_at,
                "version" => &mut version_at,
                other => {
                    return Err(JsonlError::UnknownKey {
                        file: self.at.file.to_owned(),
                        line: self.at.line,
                        col: self.col(k),
                        key: format!("{}.{other}", key()),
                    })
                }
            };
            if *slot != ABSENT {
                return Err(self.duplicate(format!("{}.{}", key(), self.text(k)), k));
            }
            *slot = k + 1;
        }
        if tool_at == ABSENT {
            return Err(self.bad(
                &key(),
                v,
                "a registry entry object needs a `tool`".to_owned(),
            ));
        }
        let version = match version_at {
            ABSENT => 0,
            n => {
                let at = format!("{}.version", key());
                let x = self.integer(&at, n)?;
                u32::try_from(x).map_err(|_| self.bad(&at, n, format!("{x} exceeds u32")))?
            }
        };
        let tool = match self.kind(tool_at) {
            Kind::String => names.tool(self.text(tool_at)),
            _ => return Err(self.wrong(&format!("{}.tool", key()), "a string", tool_at)),
        };
        Ok(ToolEntry { tool, version })
    }

    /// An array of `[cell, value-or-null]` pairs, in order.
    fn effects(
        &self,
        key: &str,
        v: usize,
        names: &mut Names,
        out: &mut Vec<(Cell, Value)>,
    ) -> Result<()> {
        self.array(key, v, "an array of [cell, value] pairs")?;
        for (i, item) in self.tree.children(v).enumerate() {
            let at = || format!("{key}[{i}]");
            if self.kind(item) != Kind::Array {
                return Err(self.wrong(&at(), "a [cell, value] pair", item));
            }
            let mut parts = self.tree.children(item);
            let (Some(cell), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
                let n = self.tree.children(item).count();
                let msg = format!("expected a [cell, value] pair, found {n} items");
                return Err(self.bad(&at(), item, msg));
            };
            let cell = match self.kind(cell) {
                Kind::String => names.cell(self.text(cell)),
                _ => return Err(self.wrong(&format!("{}[0]", at()), "a string", cell)),
            };
            let value = self.value(&|| format!("{}[1]", at()), value, names)?;
            out.push((cell, value));
        }
        Ok(())
    }

    /// 0-based indices of earlier records, read as a set.
    fn preds(&self, key: &str, v: usize, out: &mut Vec<u32>) -> Result<()> {
        self.array(key, v, "an array of record indices")?;
        for (i, item) in self.tree.children(v).enumerate() {
            let at = || format!("{key}[{i}]");
            let Some(p) = self.uint(item) else {
                return Err(self.wrong(&at(), "a non-negative integer", item));
            };
            if p >= self.at.pred_limit {
                let msg = format!(
                    "{p} does not point to an earlier record (this is record {}, 0-based)",
                    self.at.index
                );
                return Err(self.bad(&at(), item, msg));
            }
            out.push(p as u32);
        }
        normalize_set(out);
        Ok(())
    }

    /// A short description of a JSON value for error messages: its type and (truncated) text.
    fn describe(&self, v: usize) -> String {
        let n = &self.tree.nodes[v];
        let kind = match n.kind {
            Kind::Null => return "null".to_owned(),
            Kind::Bool(_) => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        };
        let mut text = self.at.text[n.start as usize..n.end as usize].to_owned();
        if text.chars().count() > 40 {
            text = text.chars().take(40).collect::<String>() + "…";
        }
        format!("{kind} {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = concat!(
        r#""agent":"a","read_set":[],"read_values":{},"read_time":0,"#,
        r#""write_set":[],"write_values":{},"write_time":1"#
    );

    fn line(extra: &str) -> String {
        format!("{{{MIN}{extra}}}")
    }

    #[test]
    fn defaults_apply() {
        let h = parse_history(&line(""), "t").unwrap();
        let r = &h.records[0];
        assert_eq!(r.planned_tool, None);
        assert!(r.io.is_empty() && r.co.is_empty() && r.preds.is_empty());
        assert!(!r.aborted);
        assert!(r.read_registry.entries().is_empty());
    }

    #[test]
    fn registry_entries_and_versions() {
        let h = parse_history(
            &line(r#","read_registry":["t1",{"tool":"t2","version":3}]"#),
            "t",
        )
        .unwrap();
        let t2 = Tool(h.names.tools.get("t2").unwrap());
        assert_eq!(h.records[0].read_registry.get(t2).unwrap().version, 3);
        let e = parse_history(&line(r#","read_registry":["t1","t1"]"#), "t").unwrap_err();
        assert_eq!(e.key(), Some("read_registry[1]"));
    }

    #[test]
    fn errors_name_line_column_and_key() {
        let two = format!("{}\n{}", line(""), line(r#","io":[["c",1]]"#));
        let e = parse_history(&two, "h.jsonl").unwrap_err();
        assert_eq!((e.line(), e.key()), (Some(2), Some("io[0][1]")));
        let col = line(r#","io":[["c",1]]"#).find("1]]").unwrap() + 1;
        let want = format!("h.jsonl:2:{col}: key `io[0][1]`: expected a value name");
        assert!(e.to_string().starts_with(&want), "{e}");
        let e = parse_history(&line(r#","colour":1"#), "h").unwrap_err();
        assert_eq!(e.key(), Some("colour"));
        let e = parse_history(r#"{"agent":"a"}"#, "h").unwrap_err();
        assert_eq!(e.key(), Some("read_set"));
        let e = parse_history(&line(r#","preds":[0]"#), "h").unwrap_err();
        assert_eq!(e.key(), Some("preds[0]"));
        let e = parse_history("{\"agent\":", "h").unwrap_err();
        assert!(
            matches!(
                e,
                JsonlError::BadJson {
                    line: 1,
                    col: 10,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse_history("[1]", "h").unwrap_err();
        assert!(matches!(e, JsonlError::NotAnObject { .. }));
    }

    #[test]
    fn duplicates_permutations_and_utf8_are_errors() {
        let e = parse_history(&line(r#","agent":"b""#), "h").unwrap_err();
        assert!(matches!(e, JsonlError::DuplicateKey { .. }), "{e}");
        let col = line(r#","agent":"b""#).rfind("\"agent\"").unwrap() + 1;
        assert_eq!(
            e.to_string(),
            format!("h:1:{col}: key `agent`: duplicate key (it appears earlier in the object)")
        );
        let dup = line("").replace(r#""read_values":{}"#, r#""read_values":{"c":"x","c":null}"#);
        let e = parse_history(&dup, "h").unwrap_err();
        assert_eq!(e.key(), Some("read_values.c"));
        let io = r#","io":[["c","x"],["d","y"]],"co":[["d","y"]]"#;
        let e = parse_history(&line(io), "h").unwrap_err();
        assert_eq!(e.key(), Some("co"), "{e}");
        let ok = r#","io":[["c","x"],["d","y"]],"co":[["d","y"],["c","x"]]"#;
        assert!(parse_history(&line(ok), "h").is_ok());
        let e = parse_history(&line(r#","io":[["c","x"]]"#), "h").unwrap_err();
        assert_eq!(e.key(), Some("co"), "an absent co is empty: {e}");
        let mut bytes = format!("{}\n", line("")).into_bytes();
        bytes.extend_from_slice(b"{\"agent\":\"\xc3\xa9\xff\"}\n");
        let mut names = Names::new();
        let mut reader = RecordReader::new(bytes.as_slice(), "u");
        let mut rec = OpRecord::default();
        assert_eq!(reader.next_into(&mut names, &mut rec).unwrap(), Some(1));
        let e = reader.next_into(&mut names, &mut rec).unwrap_err();
        assert_eq!(
            e.to_string(),
            "u:2:12: invalid UTF-8 (the line must be UTF-8 text)"
        );
    }

    const META: &str = concat!(
        r#","read_set":["c","d"],"read_replica":{"c":"s1","d":"primary"},"#,
        r#""read_version":{"c":1,"d":0}"#
    );

    #[test]
    fn replica_metadata_reads_and_checks() {
        let text = line(META).replacen(r#""read_set":[],"#, "", 1);
        let h = parse_history(&text, "t").unwrap();
        let s1 = h.names.replicas.get("s1").unwrap();
        let c = Cell(h.names.cells.get("c").unwrap());
        assert_eq!(
            h.records[0].meta(c).map(|m| (m.replica.0, m.version)),
            Some((s1, 1))
        );
        assert_eq!(h.records[0].read_meta.len(), 2);
        let without = |k: &str, v: &str| text.replacen(k, v, 1);
        let cases = [
            (
                without(r#","read_version":{"c":1,"d":0}"#, ""),
                "read_replica",
            ),
            (without(r#","d":0"#, ""), "read_replica.d"),
            (without(r#""c":1"#, r#""c":-1"#), "read_version.c"),
            (without(r#""c":"s1""#, r#""c":2"#), "read_replica.c"),
            (
                without(r#""d":"primary""#, r#""e":"primary""#),
                "read_version.d",
            ),
            (
                without(r#""read_set":["c","d"]"#, r#""read_set":["c"]"#),
                "read_replica.d",
            ),
        ];
        for (bad, key) in cases {
            let e = parse_history(&format!("{}\n{bad}", line("")), "h").unwrap_err();
            assert_eq!((e.line(), e.key()), (Some(2), Some(key)), "{e}");
        }
    }
}
