//! The state a trace began in. A simulated or checked history starts empty; a trace starts in
//! the middle of a system's life, in a state it does not show. A read of a value that no
//! record in the input wrote, or a read before any write to its cell that the trace shows, is
//! a read of that initial state (unknown before the trace), not a stale read: [`infer`] finds
//! these reads and the value each cell began with, and the detectors take that value as the
//! cell's state before the first record (`L1_struct` and the A3 residue are the detectors
//! that read it; SPEC §3).
//!
//! A cell has one initial value. When its reads show two or more values the initial state
//! could be, at most one is: the others are evidence of writes missing from the trace. Such a
//! cell is a *conflict*; it is given no initial value, and what its reads decide cannot be
//! told (the loader weighs the verdicts, [`crate::load`]).

use agentsim_models::{Cell, History, Value, ValueMap};
use std::collections::{BTreeMap, HashSet};

/// The initial state an ingestion found, and the reads it rests on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Initial {
    /// Each cell's value before the first record, where its reads show exactly one (NULL
    /// elsewhere, and on conflicts).
    pub values: ValueMap,
    /// Reads of a non-NULL initial value, in all.
    pub reads: u64,
    /// The cells those reads are of, in order.
    pub cells: Vec<Cell>,
    /// Cells read as two or more values the initial state could be, with those values in the
    /// order first read.
    pub conflicts: Vec<(Cell, Vec<Value>)>,
    /// The same by name, as a saved report keeps it ([`Initial::named`],
    /// [`Initial::resolve`]).
    pub names: Named,
}

/// An [`Initial`] by name: each cell's initial value (`None`: NULL), and the conflict cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Named {
    pub values: Vec<(String, Option<String>)>,
    pub conflicts: Vec<String>,
}

/// Whether record `j`'s read of `c` at `t` has no committed write by another record at or
/// before it: `first` holds the two earliest non-aborted writers of each cell.
fn before_any_write(first: &BTreeMap<Cell, [(usize, u64); 2]>, c: Cell, j: usize, t: u64) -> bool {
    match first.get(&c) {
        None => true,
        Some(&[(k, wt), second]) => match k == j {
            // A record writes a cell once: skipping itself is one step.
            true => second.1 > t,
            false => wt > t,
        },
    }
}

/// The reads of `h` that are of its initial state, and the value each cell began with.
pub fn infer(h: &History) -> Initial {
    let mut written: HashSet<(Cell, Value)> = HashSet::new();
    let mut first: BTreeMap<Cell, [(usize, u64); 2]> = BTreeMap::new();
    const NONE: (usize, u64) = (usize::MAX, u64::MAX);
    for (k, r) in h.records.iter().enumerate() {
        for &c in &r.write_set {
            // Any record's value, aborted or not: a read of an aborted write is A3's, not
            // the initial state's.
            written.insert((c, r.write_values.get(c)));
            if r.aborted {
                continue;
            }
            // Records are in write-time order, so the first two seen are the earliest.
            let slots = first.entry(c).or_insert([NONE, NONE]);
            if slots[0] == NONE {
                slots[0] = (k, r.write_time);
            } else if slots[1] == NONE {
                slots[1] = (k, r.write_time);
            }
        }
    }
    // Per cell: the candidate values in first-read order, and how many reads each has.
    let mut candidates: BTreeMap<Cell, Vec<(Value, u64)>> = BTreeMap::new();
    for (j, r) in h.records.iter().enumerate() {
        for &c in &r.read_set {
            let v = r.read_values.get(c);
            let initial = before_any_write(&first, c, j, r.read_time) || !written.contains(&(c, v));
            if !initial {
                continue;
            }
            let list = candidates.entry(c).or_default();
            match list.iter_mut().find(|(x, _)| *x == v) {
                Some((_, n)) => *n += 1,
                None => list.push((v, 1)),
            }
        }
    }
    let mut out = Initial::default();
    for (c, list) in candidates {
        match list[..] {
            [(v, _)] if v.is_null() => {}
            [(v, n)] => {
                out.values.set(c, v);
                out.reads += n;
                out.cells.push(c);
            }
            _ => out
                .conflicts
                .push((c, list.into_iter().map(|(v, _)| v).collect())),
        }
    }
    out.names = out.named(h);
    out
}

impl Initial {
    /// Whether the trace shows nothing of its initial state: no read of a non-NULL initial
    /// value and no conflict (the history may as well have started empty).
    pub fn is_empty(&self) -> bool {
        self.reads == 0 && self.conflicts.is_empty() && self.names.conflicts.is_empty()
    }

    /// The names of its cells and values in `h`.
    fn named(&self, h: &History) -> Named {
        let n = &h.names;
        let values = (self.values.entries().iter())
            .map(|&(c, v)| (n.cell_name(c), n.value_name(v)))
            .collect();
        let conflicts = self
            .conflicts
            .iter()
            .map(|&(c, _)| n.cell_name(c))
            .collect();
        Named { values, conflicts }
    }

    /// A saved report's initial state ([`Initial::names`] and [`Initial::reads`] only) in the
    /// ids of the history it was saved with, whose names are `names`; a name the history does
    /// not hold is refused (the report is not of this history).
    pub fn resolve(&mut self, names: &mut agentsim_models::Names) -> Result<(), String> {
        let cell = |names: &agentsim_models::Names, c: &str| {
            (names.cells.get(c).map(Cell)).ok_or_else(|| {
                format!(
                    "the report's initial state names cell `{c}`, which the history does not hold"
                )
            })
        };
        self.values = ValueMap::new();
        self.cells.clear();
        for (c, v) in &self.names.values {
            let c = cell(names, c)?;
            self.values
                .set(c, v.as_deref().map_or(Value::NULL, |v| names.value(v)));
            self.cells.push(c);
        }
        self.conflicts = (self.names.conflicts.iter())
            .map(|c| cell(names, c).map(|c| (c, Vec::new())))
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// Whether `c` is a conflict cell.
    pub fn conflicted(&self, c: Cell) -> bool {
        self.conflicts.iter().any(|(x, _)| *x == c)
    }

    /// What the report says of it: "3 reads of the initial state (cells a, b)", and a line
    /// per conflict; none when [`Initial::is_empty`].
    pub fn notes(&self, h: &History) -> Vec<String> {
        let names = &h.names;
        let mut notes = Vec::new();
        if self.reads > 0 {
            let cells: Vec<String> = self.cells.iter().map(|&c| names.cell_name(c)).collect();
            let (n, s) = (self.reads, if self.reads == 1 { "" } else { "s" });
            notes.push(format!(
                "{n} read{s} of the initial state (cells {}): a value no record wrote, or one \
                 read before its cell's first write, is the state the trace began in (unknown \
                 before it), not a stale read",
                cells.join(", ")
            ));
        }
        for (c, vs) in &self.conflicts {
            notes.push(format!(
                "{} was read as {} values the trace could have begun with ({}): at most one \
                 is its initial state, so writes to it are missing from the trace, and A1 \
                 and L1_struct cannot be told on it",
                names.cell_name(*c),
                vs.len(),
                self.values_text(h, vs)
            ));
        }
        notes
    }

    /// `"a", NULL`: values by name, quoted.
    pub fn values_text(&self, h: &History, vs: &[Value]) -> String {
        let each = vs.iter().map(|&v| match h.names.value_name(v) {
            Some(name) => format!("{name:?}"),
            None => "NULL".to_owned(),
        });
        each.collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::{Names, OpRecord};

    /// A history over one cell `m`: each step reads (`Some(value)`) and/or writes.
    fn history(steps: &[(Option<&str>, Option<&str>)]) -> History {
        let mut names = Names::new();
        let c = names.cell("m");
        let mut records = Vec::new();
        for (k, (read, write)) in steps.iter().enumerate() {
            let mut r = OpRecord {
                agent: names.agent("a"),
                read_time: k as u64,
                write_time: k as u64 + 1,
                ..OpRecord::default()
            };
            if let Some(v) = read {
                r.read_set = vec![c];
                let v = if v.is_empty() {
                    Value::NULL
                } else {
                    names.value(v)
                };
                r.read_values.set(c, v);
            }
            if let Some(v) = write {
                r.write_set = vec![c];
                r.write_values.set(c, names.value(v));
            }
            records.push(r);
        }
        let mut h = History::from_records(records);
        h.names = names;
        h
    }

    #[test]
    fn a_value_no_record_wrote_is_the_initial_state() {
        // Read "tea" twice before any write, then "coffee" is written and read.
        let h = history(&[
            (Some("tea"), None),
            (Some("tea"), Some("coffee")),
            (Some("coffee"), None),
        ]);
        let i = infer(&h);
        assert_eq!((i.reads, i.cells.len(), i.conflicts.len()), (2, 1, 0));
        assert_eq!(
            h.names.value_name(i.values.get(Cell(0))).as_deref(),
            Some("tea")
        );
        assert!(i.notes(&h)[0].starts_with("2 reads of the initial state (cells m)"));
    }

    #[test]
    fn a_cell_read_as_x_before_the_first_write_and_again_later_began_as_x() {
        // "tea", then "coffee" is written, then "tea" again: one initial value, read twice;
        // the second read is stale (L1_struct's), not a second initial state.
        let h = history(&[(Some("tea"), Some("coffee")), (Some("tea"), None)]);
        let i = infer(&h);
        assert_eq!((i.reads, i.conflicts.len()), (2, 0));
        let d = agentsim_models::detect::spec::detect_from(&h, &i.values);
        assert_eq!(d.l1_struct.len(), 1);
        assert_eq!(d.l1_struct[0].record, 1);
        assert!(d.a3_residue.is_empty());
    }

    #[test]
    fn two_unwritten_values_are_a_conflict_and_no_initial_value() {
        let h = history(&[(Some("tea"), None), (Some("milk"), None)]);
        let i = infer(&h);
        assert_eq!(i.reads, 0);
        assert_eq!(i.conflicts.len(), 1);
        assert!(i.values.get(Cell(0)).is_null());
        assert!(i.notes(&h)[0].contains("m was read as 2 values"));
    }

    #[test]
    fn a_trace_that_explains_every_read_has_an_empty_initial_state() {
        let h = history(&[(Some(""), Some("tea")), (Some("tea"), None)]);
        assert!(infer(&h).is_empty());
    }
}
