//! Streaming detection: the detectors of SPEC §3 over a log read once, in
//! log order, reporting each witness as soon as the record that completes it has arrived.
//!
//! [`Stream::push`] takes one record at a time; [`Stream::finish`] closes the log. The result,
//! a [`Summary`], equals the spec form's ([`super::spec::summary`]) on every valid history:
//! counts and kept prefixes (tested by the enumeration families and proptest of
//! `models/tests/`). Kept witnesses go to a [`Sink`] with what is needed to print them, when
//! they are found; the rest are only counted. This file is the common loop ([`Stream::push`]
//! checks a record, closes the write times it passes, runs each anomaly's stream form and
//! keeps the record's writes); each anomaly's stream form is a method of [`Stream`] in that
//! anomaly's file ([`super::a1`] …), beside its spec and fast forms.
//!
//! ## When a witness is complete
//! Log order is `write_time` ascending, so a record's writers strictly before its write time
//! have all arrived when it does: its A1 witnesses (writers inside its window), A2, A6 and A3
//! witnesses (preds are earlier records, and a record's `aborted` flag is on its own line)
//! are complete on arrival. `L1_struct` and the A3 residue of a read look at writes *at or
//! before* the read time; when `read_time = write_time`, records still to come with the same
//! write time count too, so such reads (and, to keep completion order, every later read of
//! the same write time) wait until a record with a later write time arrives or the log ends.
//! A4 pairs complete with the later of the two reads.
//!
//! ## What is kept, and the bound
//! * Per cell, the non-aborted writes (record, agent, value, time) whose write time is within
//!   [`Limits::window_max`] ticks of the latest write time, and the latest write that fell out
//!   of that window (`L1_struct` needs the latest write before a read, however old). A record
//!   whose `write_time − read_time` exceeds `window_max` is an error
//!   ([`StreamError::WindowExceeded`]): its window would reach writes already dropped. Writes
//!   are dropped only when no admissible future read can see them: a future record has
//!   `write_time ≥ w` (the latest so far) and `read_time ≥ w − window_max`, so it needs no
//!   write at or before `w − window_max` except the latest one per cell. They are dropped in
//!   sweeps, each time that horizon has moved a 64th of the window, so between two sweeps a
//!   cell also holds the writes that have left the window since the last one.
//! * The reads waiting for their write time to close (one write time's worth).
//! * One bit per record read (its `aborted` flag), because a pred may name any earlier record:
//!   that is what A3 needs, and all it needs. With [`Options::keep_agents`], one agent per
//!   record as well, so an A3 witness can name its pred's agent (the batch text output does).
//! * At most [`Limits::max_witnesses`] kept witnesses per anomaly.
//!
//! So memory is O(cells + live writes + waiting reads + records / 8 + max_witnesses), where
//! live writes are those of at most `window_max` ticks (`window_max` records' worth when
//! write times are record indices, as SPEC §1's model writes them), capped by
//! [`Limits::live_max`] ([`StreamError::LiveExceeded`]): ties in write time could otherwise
//! put any number of writes inside one tick. Two detectors cost more and say so: the A3
//! residue form keeps the two earliest writers of every (cell, value) ever written (a read may
//! be of any value ever written, however old), and A4 keeps every read with replica metadata
//! (a lagging replica may serve any old committed version). Names (agents, cells, tools,
//! values) are the caller's: a long stream with fresh values should compact its value table
//! with [`Stream::live_values`] and [`Stream::remap_values`], or push keys
//! ([`Stream::keyed`], [`Stream::push_keyed`]): a value of at most 15 bytes is then its own
//! key and needs no table, and only the ids of longer ones are left to compact
//! ([`crate::value_key`]). Keys compare exactly as the values' names do, so the two forms give
//! the same verdicts (`models/tests/detect_support`, run beside every stream test).
//!
//! ## Not handled
//! A retraction that arrives after the retracted record (a separate "record k is now aborted"
//! line) is not part of the format: `aborted` is final when the line is read. Were it, A3
//! witnesses would complete late (the bit per record would still suffice to check preds, but
//! finding the survivors of a retracted pred would need a reverse index of preds) and A1, A2,
//! A6 witnesses already reported could be withdrawn. A1's counting scans each window, so a
//! history whose windows are long is O(records × window); the batch fast form
//! ([`super::fast`]) stays near-linear there.

use super::witnesses::Summary;
use super::{
    A1Witness, A2Witness, A3ResidueWitness, A3Witness, A4Read, A4Witness, A6Witness, Anomaly,
    L1StructViolation,
};
use crate::names::{Agent, Cell, Value};
use crate::record::OpRecord;
use crate::value_key::ValueKey;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// How much the detector keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Witnesses kept per anomaly (all are counted).
    pub max_witnesses: usize,
    /// The longest read-to-commit window (`write_time − read_time`) a record may have, in ticks.
    pub window_max: u64,
    /// The most writes and waiting reads kept at once.
    pub live_max: usize,
}

impl Limits {
    /// Keep everything the whole log needs: no window, no cap (a batch run over a file).
    pub fn unbounded(max_witnesses: usize) -> Limits {
        Limits {
            max_witnesses,
            window_max: u64::MAX,
            live_max: usize::MAX,
        }
    }
}

/// What the detector computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub limits: Limits,
    /// Compute the A3 residue form (costs memory per (cell, value) written).
    pub residue: bool,
    /// Keep each record's agent, so A3 witnesses name the pred's agent (4 bytes per record).
    pub keep_agents: bool,
}

/// Why a record cannot be taken. Records are 0-based in the order pushed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error(
        "record {record}: read_time {read_time} is {} ticks before write_time {write_time}, \
         more than the {window_max} this detector keeps",
        write_time - read_time
    )]
    WindowExceeded {
        record: u64,
        read_time: u64,
        write_time: u64,
        window_max: u64,
    },
    #[error("record {record}: more than {live_max} writes and waiting reads inside the window")]
    LiveExceeded { record: u64, live_max: usize },
    #[error("record {record}: write_time {write_time} is before the previous record's {previous}")]
    OutOfOrder {
        record: u64,
        write_time: u64,
        previous: u64,
    },
    #[error("record {record}: read_time {read_time} is after write_time {write_time}")]
    ReadAfterWrite {
        record: u64,
        read_time: u64,
        write_time: u64,
    },
    #[error("record {record}: pred {pred} is not an earlier record")]
    PredNotEarlier { record: u64, pred: u32 },
}

/// A kept write: by which record and agent, the value's key, the write time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub record: u64,
    pub time: u64,
    pub agent: Agent,
    /// [`ValueKey::id`] of the value pushed with [`Stream::push`]; the key given with
    /// [`Stream::push_keyed`].
    pub value: ValueKey,
}

/// What a record's value ids stand for: themselves, or keys of a table.
#[derive(Clone, Copy)]
pub(super) enum Keys<'a> {
    Ids,
    Table(&'a [ValueKey]),
}

impl Keys<'_> {
    #[inline]
    pub(super) fn get(self, v: Value) -> ValueKey {
        match self {
            Keys::Ids => ValueKey::id(v),
            Keys::Table(t) => ValueKey::listed(t, v.0),
        }
    }
}
/// The reads with metadata of one (cell, committed version) (each with its agent and the
/// key of its value; the read's own value is set when it is a witness), and how many read
/// each value: the stream form's state.
#[derive(Clone, Debug, Default)]
pub(super) struct A4Group {
    pub(super) reads: Vec<(A4Read, Agent, ValueKey)>,
    pub(super) per_value: BTreeMap<ValueKey, u64>,
}

/// A kept witness, with what printing it needs (agents, values, times): the one printed form
/// of every witness, whether the stream found it or a whole history gave it (`--spec`).
#[derive(Clone, Debug)]
pub enum Found {
    A1 {
        w: A1Witness,
        /// The reader's agent.
        agent: Agent,
        /// What the reader read of the cell.
        read: ValueKey,
        /// The reader's read and write times.
        read_time: u64,
        write_time: u64,
        writer: Write,
    },
    A2 {
        w: A2Witness,
        agent: Agent,
    },
    A3 {
        w: A3Witness,
        agent: Agent,
        pred_agent: Option<Agent>,
    },
    A6 {
        w: A6Witness,
        agent: Agent,
        /// The record's `io` and `co` with the values' keys.
        io: Vec<(Cell, ValueKey)>,
        co: Vec<(Cell, ValueKey)>,
    },
    Residue {
        w: A3ResidueWitness,
        agent: Agent,
        /// The value read.
        value: ValueKey,
    },
    L1 {
        w: L1StructViolation,
        agent: Agent,
        /// The value read, and the one expected.
        read: ValueKey,
        expected: ValueKey,
    },
    A4 {
        w: A4Witness,
        /// The agents of `w.first.record` and `w.second.record`.
        agents: [Agent; 2],
        /// The values they read.
        values: [ValueKey; 2],
    },
}

impl Found {
    /// The anomaly the witness is of; `None` for an `L1_struct` violation.
    pub fn anomaly(&self) -> Option<Anomaly> {
        match self {
            Found::A1 { .. } => Some(Anomaly::A1),
            Found::A2 { .. } => Some(Anomaly::A2),
            Found::A3 { .. } => Some(Anomaly::A3),
            Found::A6 { .. } => Some(Anomaly::A6),
            Found::Residue { .. } => Some(Anomaly::A3Residue),
            Found::A4 { .. } => Some(Anomaly::A4),
            Found::L1 { .. } => None,
        }
    }

    /// The short name of the witness's list (`A1`, …, `A3_residue`, `L1_struct`).
    pub fn list(&self) -> &'static str {
        self.anomaly().map_or("L1_struct", Anomaly::name)
    }

    /// The record the witness is about (the reader; for A4 the later read).
    pub fn record(&self) -> usize {
        match self {
            Found::A1 { w, .. } => w.reader,
            Found::A2 { w, .. } => w.record,
            Found::A3 { w, .. } => w.record,
            Found::A6 { w, .. } => w.record,
            Found::Residue { w, .. } => w.record,
            Found::L1 { w, .. } => w.record,
            Found::A4 { w, .. } => w.second.record,
        }
    }
}

/// Receives each kept witness when it is found, with the line of the record it is about (the
/// reader, or for A4 the later record).
pub trait Sink {
    fn found(&mut self, line: u64, found: Found);
}

/// A sink that drops everything (the [`Summary`] still has the kept witnesses).
impl Sink for () {
    fn found(&mut self, _: u64, _: Found) {}
}

#[derive(Clone, Debug, Default)]
pub(super) struct CellWrites {
    pub(super) writes: VecDeque<Write>,
    /// The latest write dropped from `writes` (windowed runs only).
    pub(super) dropped_last: Option<Write>,
}

/// A read whose `L1_struct` and residue verdicts wait for its write time to close.
#[derive(Clone, Copy, Debug)]
pub(super) struct Waiting {
    pub(super) record: u64,
    pub(super) line: u64,
    pub(super) agent: Agent,
    pub(super) cell: Cell,
    pub(super) value: ValueKey,
    pub(super) read_time: u64,
}

/// The two earliest non-aborted writers (record, write time) of one (cell, value).
pub(super) type FirstTwo = [Option<(u64, u64)>; 2];

/// The streaming detector. See the module docs for what it keeps.
#[derive(Clone, Debug)]
pub struct Stream {
    pub(super) opts: Options,
    pub(super) out: Summary,
    pub(super) records: u64,
    pub(super) last_write_time: u64,
    pub(super) aborted: Vec<u64>,
    pub(super) agents: Vec<Agent>,
    pub(super) cells: Vec<CellWrites>,
    /// Each cell's value before the first record, by cell index (NULL past the end: a log
    /// that starts empty); see [`Stream::start_in`].
    pub(super) initial: Vec<ValueKey>,
    /// The horizon: writes at or before it no admissible future read needs (module docs,
    /// "the bound"); `None` until the window has slid.
    pub(super) horizon: Option<u64>,
    /// The horizon at the last sweep, which dropped every write at or before it.
    pub(super) swept: Option<u64>,
    /// How far the horizon moves between sweeps, in ticks (1: at every advance).
    pub(super) sweep_every: u64,
    pub(super) live: usize,
    pub(super) waiting: Vec<Waiting>,
    /// (cell, value) → its two earliest non-aborted writers (record, time); residue only.
    pub(super) first_two: HashMap<(Cell, ValueKey), FirstTwo>,
    pub(super) a4: BTreeMap<(Cell, u64), A4Group>,
    pub(super) scratch: Vec<(u64, Cell, Write)>,
    pub(super) a4_scratch: Vec<(A4Witness, Agent, [ValueKey; 2])>,
    /// A keyed detector ([`Stream::keyed`]): the keys its kept witnesses' values stand for
    /// (value id − 1).
    pub(super) witness_keys: Option<Vec<ValueKey>>,
}

impl Stream {
    /// A detector over an empty log.
    pub fn new(opts: Options) -> Stream {
        Stream {
            opts,
            out: Summary::new(opts.limits.max_witnesses),
            records: 0,
            last_write_time: 0,
            aborted: Vec::new(),
            agents: Vec::new(),
            cells: Vec::new(),
            initial: Vec::new(),
            horizon: None,
            swept: None,
            sweep_every: (opts.limits.window_max / SWEEP_PARTS).max(1),
            live: 0,
            waiting: Vec::new(),
            first_two: HashMap::new(),
            a4: BTreeMap::new(),
            scratch: Vec::new(),
            a4_scratch: Vec::new(),
            witness_keys: None,
        }
    }

    /// A detector whose records come with the keys of their values ([`Stream::push_keyed`]):
    /// records of different name tables (blocks read apart, [`crate::value_key`]) compare by
    /// key. The values in the [`Summary`]'s kept witnesses are then ids of
    /// [`Stream::witness_key`]; the [`Found`]s carry the keys themselves.
    pub fn keyed(opts: Options) -> Stream {
        Stream {
            witness_keys: Some(Vec::new()),
            ..Stream::new(opts)
        }
    }

    /// Sets cell `c`'s value before the first record (NULL unless set: a log that starts
    /// empty, as the simulator's and the checker's do). A trace that starts in the middle of
    /// a system's life starts in a state its reader supplies ([`super::l1_struct`]). `value`
    /// is a [`ValueKey::id`] for [`Stream::push`], a key of the records' tables for
    /// [`Stream::push_keyed`]. Call it before the first record.
    pub fn start_in(&mut self, c: Cell, value: ValueKey) {
        assert_eq!(self.records, 0, "the initial state precedes every record");
        if self.initial.len() <= c.index() {
            self.initial.resize(c.index() + 1, ValueKey::NULL);
        }
        self.initial[c.index()] = value;
    }

    /// Cell `c`'s value before the first record.
    pub(super) fn initial(&self, c: Cell) -> ValueKey {
        self.initial
            .get(c.index())
            .copied()
            .unwrap_or(ValueKey::NULL)
    }

    /// The key of a value of a kept witness: itself, or in a keyed detector the key the
    /// value id stands for.
    pub fn witness_key(&self, v: Value) -> ValueKey {
        match &self.witness_keys {
            None => ValueKey::id(v),
            Some(t) => ValueKey::listed(t, v.0),
        }
    }

    /// The value a kept witness holds for `k` (see [`Stream::witness_key`]).
    pub(super) fn witness_value(&mut self, k: ValueKey) -> Value {
        match &mut self.witness_keys {
            None => k
                .as_id()
                .expect("a detector that is not keyed holds value ids"),
            Some(_) if k.is_null() => Value::NULL,
            Some(t) => {
                t.push(k);
                Value(u32::try_from(t.len()).expect("fewer than u32::MAX kept witnesses"))
            }
        }
    }

    /// Records taken so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The counts and kept witnesses so far (reads still waiting are not in it yet).
    pub fn summary(&self) -> &Summary {
        &self.out
    }

    /// Writes and waiting reads kept now (with the writes that have left the window since the
    /// last sweep; [`StreamError::LiveExceeded`] counts only those inside it).
    pub fn live(&self) -> usize {
        self.live
    }

    /// Takes the next record of the log, found on line `line` of its source.
    pub fn push(
        &mut self,
        r: &OpRecord,
        line: u64,
        sink: &mut impl Sink,
    ) -> Result<(), StreamError> {
        assert!(self.witness_keys.is_none(), "a keyed detector takes keys");
        self.push_with(r, Keys::Ids, line, sink)
    }

    /// [`Stream::push`] for a keyed detector: value id `v` of `r` stands for `keys[v − 1]`.
    pub fn push_keyed(
        &mut self,
        r: &OpRecord,
        keys: &[ValueKey],
        line: u64,
        sink: &mut impl Sink,
    ) -> Result<(), StreamError> {
        assert!(self.witness_keys.is_some(), "Stream::keyed takes keys");
        self.push_with(r, Keys::Table(keys), line, sink)
    }

    fn push_with(
        &mut self,
        r: &OpRecord,
        keys: Keys<'_>,
        line: u64,
        sink: &mut impl Sink,
    ) -> Result<(), StreamError> {
        self.check(r)?;
        if r.write_time > self.last_write_time {
            self.settle_waiting(sink);
            self.drop_old(r.write_time);
        }
        self.last_write_time = r.write_time;
        let j = self.records;
        if !r.aborted {
            self.a2(j, r, line, sink);
            self.a6(j, r, keys, line, sink);
            self.a3(j, r, line, sink);
            self.a1(j, r, keys, line, sink);
            if !r.read_meta.is_empty() {
                self.a4(j, r, keys, line, sink);
            }
        }
        self.reads(j, r, keys, line, sink)?;
        if !r.aborted {
            self.add_writes(j, r, keys)?;
        }
        if j.is_multiple_of(64) {
            self.aborted.push(0);
        }
        self.aborted[(j / 64) as usize] |= u64::from(r.aborted) << (j % 64);
        if self.opts.keep_agents {
            self.agents.push(r.agent);
        }
        self.out.replica_meta |= !r.read_meta.is_empty();
        self.records += 1;
        Ok(())
    }

    /// Closes the log: settles the waiting reads and returns the summary.
    pub fn finish(mut self, sink: &mut impl Sink) -> Summary {
        self.close(sink);
        self.out
    }

    /// Closes the log in place: settles the waiting reads, so that [`Stream::summary`] is
    /// the final one (and a keyed detector can still say what its witnesses' values stand
    /// for, [`Stream::witness_key`]). Records pushed after this are a new log's tail.
    pub fn close(&mut self, sink: &mut impl Sink) {
        self.settle_waiting(sink);
        self.out.records = self.records;
    }

    fn check(&self, r: &OpRecord) -> Result<(), StreamError> {
        let record = self.records;
        if record > 0 && r.write_time < self.last_write_time {
            let previous = self.last_write_time;
            let write_time = r.write_time;
            return Err(StreamError::OutOfOrder {
                record,
                write_time,
                previous,
            });
        }
        let (read_time, write_time) = (r.read_time, r.write_time);
        if read_time > write_time {
            return Err(StreamError::ReadAfterWrite {
                record,
                read_time,
                write_time,
            });
        }
        let window_max = self.opts.limits.window_max;
        if !r.read_set.is_empty() && write_time - read_time > window_max {
            return Err(StreamError::WindowExceeded {
                record,
                read_time,
                write_time,
                window_max,
            });
        }
        if let Some(&pred) = r.preds.iter().find(|&&p| u64::from(p) >= record) {
            return Err(StreamError::PredNotEarlier { record, pred });
        }
        Ok(())
    }

    pub(super) fn is_aborted(&self, k: u64) -> bool {
        self.aborted[(k / 64) as usize] & (1 << (k % 64)) != 0
    }

    /// The `L1_struct` and residue verdicts of every read: now, or when the write time closes.
    fn reads(
        &mut self,
        j: u64,
        r: &OpRecord,
        keys: Keys<'_>,
        line: u64,
        sink: &mut impl Sink,
    ) -> Result<(), StreamError> {
        let wait = !self.waiting.is_empty() || r.read_time == r.write_time;
        for &c in &r.read_set {
            let read = Waiting {
                record: j,
                line,
                agent: r.agent,
                cell: c,
                value: keys.get(r.read_values.get(c)),
                read_time: r.read_time,
            };
            if wait {
                self.waiting.push(read);
                self.grow_live(j)?;
            } else {
                self.settle(read, sink);
            }
        }
        Ok(())
    }

    fn settle_waiting(&mut self, sink: &mut impl Sink) {
        let waiting = std::mem::take(&mut self.waiting);
        self.live -= waiting.len();
        for &read in &waiting {
            self.settle(read, sink);
        }
        self.waiting = waiting;
        self.waiting.clear();
    }

    /// `L1_struct` and the residue of one read, all writes at or before its read time known.
    fn settle(&mut self, read: Waiting, sink: &mut impl Sink) {
        let latest = self.latest_other_writer(read.cell, read.read_time, read.record);
        self.settle_l1(read, latest, sink);
        self.settle_residue(read, latest, sink);
    }

    /// The latest kept write to `c` at or before `t` by a record other than `me` (later
    /// records win ties), else the latest dropped one.
    fn latest_other_writer(&self, c: Cell, t: u64, me: u64) -> Option<Write> {
        let cw = self.cells.get(c.index())?;
        let ws = &cw.writes;
        let end = partition_from_end(ws.len(), |k| ws[k].time, |x| x <= t);
        // A record writes a cell at most once, so skipping `me` is at most one step back.
        match end {
            0 => cw.dropped_last,
            _ if ws[end - 1].record != me => Some(ws[end - 1]),
            1 => cw.dropped_last,
            _ => Some(ws[end - 2]),
        }
    }

    fn add_writes(&mut self, j: u64, r: &OpRecord, keys: Keys<'_>) -> Result<(), StreamError> {
        for &c in &r.write_set {
            if self.cells.len() <= c.index() {
                self.cells.resize_with(c.index() + 1, CellWrites::default);
            }
            let value = keys.get(r.write_values.get(c));
            let w = Write {
                record: j,
                time: r.write_time,
                agent: r.agent,
                value,
            };
            self.cells[c.index()].writes.push_back(w);
            self.grow_live(j)?;
            if self.opts.residue {
                let slots = self.first_two.entry((c, value)).or_default();
                if let Some(slot) = slots.iter_mut().find(|s| s.is_none()) {
                    *slot = Some((j, r.write_time));
                }
            }
        }
        Ok(())
    }

    fn grow_live(&mut self, record: u64) -> Result<(), StreamError> {
        self.live += 1;
        let live_max = self.opts.limits.live_max;
        if self.live > live_max {
            // Only what the window holds counts: the writes past it go first.
            self.sweep();
            if self.live > live_max {
                return Err(StreamError::LiveExceeded { record, live_max });
            }
        }
        Ok(())
    }

    /// Moves the horizon to `write_time − window_max`: the writes at or before it are those
    /// no admissible future read can need (module docs, "the bound"). They are dropped in
    /// sweeps, once the horizon has moved a [`SWEEP_PARTS`]th of the window since the last
    /// one, so that each cell's old writes go in one run of its queue, not one at a time in
    /// log order across the 64 queues (a cache miss each: 9 % of the 10 M-record stream).
    /// Until then they stay, and change no verdict: every read still to be decided has
    /// `read_time` at or after the horizon, so such a write is before its A1 window and
    /// before any later write as the latest write at or before it, where it stands for
    /// `dropped_last` (which it would have become).
    fn drop_old(&mut self, write_time: u64) {
        let window_max = self.opts.limits.window_max;
        let Some(horizon) = write_time.checked_sub(window_max) else {
            return;
        };
        self.horizon = Some(horizon);
        if self.swept.is_none_or(|s| horizon - s >= self.sweep_every) {
            self.sweep();
        }
    }

    /// Drops every kept write at or before the horizon, keeping each cell's latest as
    /// `dropped_last`: the detector is then what dropping them at each advance would have
    /// left.
    fn sweep(&mut self) {
        let Some(horizon) = self.horizon else {
            return;
        };
        if self.swept == Some(horizon) {
            return;
        }
        for cw in &mut self.cells {
            let n = cw.writes.partition_point(|w| w.time <= horizon);
            if n > 0 {
                cw.dropped_last = Some(cw.writes[n - 1]);
                cw.writes.drain(..n);
                self.live -= n;
            }
        }
        self.swept = Some(horizon);
    }

    /// At least as many as the value ids [`Stream::live_values`] reports (it counts each
    /// place a value is held, not distinct values), in time independent of the live window
    /// (but linear in the A4 groups, which only replica metadata makes): whether compacting
    /// a value table can free much is known without the pass that finds what is live.
    pub fn held_values(&self) -> usize {
        let o = &self.out;
        let a4: usize = self.a4.values().map(|g| g.reads.len()).sum();
        self.live
            + self.cells.len()
            + self.waiting.len()
            + self.first_two.len()
            + self.initial.len()
            + a4
            + 2 * o.l1_struct.kept.len()
            + o.a3_residue.kept.len()
            + 2 * o.a4.kept.len()
            + self.witness_keys.as_ref().map_or(0, Vec::len)
    }

    /// Every value id the detector still holds (kept writes, waiting reads, residue and A4
    /// state, kept witnesses): a caller compacting its value table must keep these. In a
    /// keyed detector, the ids among the keys (long names), kept witnesses' included.
    pub fn live_values(&self, f: &mut dyn FnMut(Value)) {
        let mut key = |k: ValueKey| {
            if let Some(v) = k.as_id() {
                f(v)
            }
        };
        for cw in &self.cells {
            cw.writes.iter().for_each(|w| key(w.value));
            cw.dropped_last.iter().for_each(|w| key(w.value));
        }
        self.waiting.iter().for_each(|w| key(w.value));
        self.initial.iter().for_each(|&v| key(v));
        self.first_two.keys().for_each(|&(_, v)| key(v));
        for g in self.a4.values() {
            g.reads.iter().for_each(|&(_, _, k)| key(k));
        }
        if let Some(t) = &self.witness_keys {
            t.iter().for_each(|&k| key(k));
            return;
        }
        let o = &self.out;
        o.l1_struct.kept.iter().for_each(|w| {
            f(w.read);
            f(w.expected)
        });
        o.a3_residue.kept.iter().for_each(|w| f(w.value));
        o.a4.kept.iter().for_each(|w| {
            f(w.first.value);
            f(w.second.value)
        });
    }

    /// Renames every value id held (after the caller compacted its value table); `map` must
    /// be injective on [`Stream::live_values`] and keep NULL.
    pub fn remap_values(&mut self, map: &dyn Fn(Value) -> Value) {
        let key = |k: ValueKey| k.as_id().map_or(k, |v| ValueKey::id(map(v)));
        for cw in &mut self.cells {
            cw.writes.iter_mut().for_each(|w| w.value = key(w.value));
            cw.dropped_last
                .iter_mut()
                .for_each(|w| w.value = key(w.value));
        }
        self.waiting.iter_mut().for_each(|w| w.value = key(w.value));
        self.initial.iter_mut().for_each(|v| *v = key(*v));
        self.first_two = std::mem::take(&mut self.first_two)
            .into_iter()
            .map(|((c, v), s)| ((c, key(v)), s))
            .collect();
        for g in self.a4.values_mut() {
            g.reads.iter_mut().for_each(|(_, _, k)| *k = key(*k));
            g.per_value = std::mem::take(&mut g.per_value)
                .into_iter()
                .map(|(v, n)| (key(v), n))
                .collect();
        }
        if let Some(t) = &mut self.witness_keys {
            t.iter_mut().for_each(|k| *k = key(*k));
            return;
        }
        let o = &mut self.out;
        o.l1_struct.kept.iter_mut().for_each(|w| {
            (w.read, w.expected) = (map(w.read), map(w.expected));
        });
        o.a3_residue
            .kept
            .iter_mut()
            .for_each(|w| w.value = map(w.value));
        o.a4.kept.iter_mut().for_each(|w| {
            (w.first.value, w.second.value) = (map(w.first.value), map(w.second.value));
        });
    }
}

/// Writes past the window are dropped once the horizon has moved this fraction of the window
/// ([`Stream::drop_old`]): they are then at most about this fraction of the live writes.
const SWEEP_PARTS: u64 = 64;

/// The first index of `0..len` whose time fails `before` (true on a prefix), galloping back
/// from the end: O(log distance from the end), where stream queries land.
pub(super) fn partition_from_end(
    len: usize,
    time: impl Fn(usize) -> u64,
    before: impl Fn(u64) -> bool,
) -> usize {
    let (mut lo, mut hi, mut step) = (0, len, 1);
    while hi > 0 {
        let probe = hi.saturating_sub(step);
        if before(time(probe)) {
            lo = probe + 1;
            break;
        }
        hi = probe;
        step *= 2;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(time(mid)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::spec;
    use crate::history::History;
    use crate::record::ValueMap;

    /// The window's memory is mostly kept writes: a key must not widen one past 40 bytes.
    #[test]
    fn a_kept_write_is_five_words() {
        assert_eq!(std::mem::size_of::<Write>(), 40);
    }

    /// Dropping old writes in sweeps gives what dropping them at every advance of the
    /// horizon gives (the old writes' literal rule): the same summary, which is the spec's,
    /// and the same `LiveExceeded` at the same record for every cap, on random histories
    /// whose windows are wide enough that sweeps lag (8 ticks of 640) and whose reads reach
    /// anywhere inside them.
    #[test]
    fn sweeps_drop_what_each_advance_would() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        let window_max = 640;
        let (mut fits, mut late_errors) = (0, 0);
        for round in 0..40 {
            let mut time = 0u64;
            let records: Vec<OpRecord> = (0..1500)
                .map(|k| {
                    time += rng.random_range(0..3u64);
                    let lag = match rng.random_range(0..4) {
                        0 => rng.random_range(0..=window_max.min(time)),
                        _ => rng.random_range(0..=4.min(time)),
                    };
                    let cell = Cell(rng.random_range(0..3u32));
                    let mut r = write(k % 4, rng.random_range(1..40), time - lag, time);
                    r.read_set = vec![cell];
                    r.read_values = ValueMap::from_pairs([(cell, Value(rng.random_range(0..40)))]);
                    r.aborted = rng.random_ratio(1, 20);
                    r
                })
                .collect();
            let run_with = |live_max: usize, sweep_every: Option<u64>, peak: &mut usize| {
                let limits = Limits {
                    max_witnesses: 7,
                    window_max,
                    live_max,
                };
                let opts = Options {
                    limits,
                    residue: true,
                    keep_agents: false,
                };
                let mut s = Stream::new(opts);
                assert_eq!(s.sweep_every, 10, "a wide window sweeps now and then");
                s.sweep_every = sweep_every.unwrap_or(s.sweep_every);
                for (j, r) in records.iter().enumerate() {
                    s.push(r, j as u64 + 1, &mut ())?;
                    *peak = (*peak).max(s.live());
                }
                Ok::<_, StreamError>(s.finish(&mut ()))
            };
            let spec = spec::summary(&History::from_records(records.clone()), 7, true);
            let (mut peak, mut lazy_peak, mut ignored) = (0, 0, 0);
            assert_eq!(run_with(usize::MAX, None, &mut lazy_peak), Ok(spec.clone()));
            // The most an eager detector holds: caps just below it are met late in the log.
            assert_eq!(
                run_with(usize::MAX, Some(1), &mut peak),
                Ok(spec),
                "round {round}"
            );
            // Sweeps hold more, but only the writes of the ticks since the last one.
            assert!(
                peak < lazy_peak && lazy_peak <= peak + 40,
                "{peak} {lazy_peak}"
            );
            for live_max in [60, 400].into_iter().chain(peak - 6..=peak) {
                let lazy = run_with(live_max, None, &mut ignored);
                let eager = run_with(live_max, Some(1), &mut ignored);
                assert_eq!(lazy, eager, "round {round} cap {live_max}");
                match lazy {
                    Ok(_) => fits += 1,
                    Err(StreamError::LiveExceeded { record, .. })
                        if records[record as usize].write_time > window_max + 40 =>
                    {
                        late_errors += 1
                    }
                    Err(_) => {}
                }
            }
        }
        // Both outcomes happen, and caps are met after the window has slid, where sweeps lag.
        assert!(fits > 0 && late_errors > 0, "{fits} {late_errors}");
    }

    #[test]
    fn gallop_from_end_is_a_partition_point() {
        let xs = [1u64, 1, 2, 3, 3, 3, 5, 8, 8, 9];
        for t in 0..11 {
            for len in 0..=xs.len() {
                let got = partition_from_end(len, |k| xs[k], |x| x <= t);
                assert_eq!(got, xs[..len].partition_point(|&x| x <= t), "{t} {len}");
            }
        }
    }

    fn write(agent: u32, value: u32, read_time: u64, write_time: u64) -> OpRecord {
        OpRecord {
            agent: Agent(agent),
            read_set: vec![Cell(0)],
            write_set: vec![Cell(0)],
            write_values: ValueMap::from_pairs([(Cell(0), Value(value))]),
            read_time,
            write_time,
            ..OpRecord::default()
        }
    }

    fn run(records: &[OpRecord], limits: Limits) -> Result<Summary, StreamError> {
        let opts = Options {
            limits,
            residue: true,
            keep_agents: true,
        };
        let mut s = Stream::new(opts);
        for (k, r) in records.iter().enumerate() {
            s.push(r, k as u64 + 1, &mut ())?;
        }
        Ok(s.finish(&mut ()))
    }

    /// A window of 2 ticks gives the spec's answer while every read stays inside it, keeps
    /// O(window) writes, and refuses a read that reaches further back.
    #[test]
    fn window_bounds_what_is_kept() {
        let records: Vec<_> = (0..50u32)
            .map(|k| write(k % 3, k, u64::from(k).saturating_sub(1), u64::from(k) + 1))
            .collect();
        let limits = Limits {
            max_witnesses: 5,
            window_max: 2,
            live_max: 4,
        };
        let got = run(&records, limits).expect("inside the window");
        let expected = spec::summary(&History::from_records(records.clone()), 5, true);
        assert_eq!(got, expected);
        assert!(got.a1.total > 5 && got.l1_struct.total > 5);
        let mut far = records;
        far[40].read_time = 30;
        let e = run(&far, limits).unwrap_err();
        assert!(
            matches!(e, StreamError::WindowExceeded { record: 40, .. }),
            "{e}"
        );
    }
}
