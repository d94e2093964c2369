//! Steps held packed between their trace and the end of the export.
//!
//! A step mapped within its trace waits for what only the whole export knows (its actor's name,
//! its registries). Held as a [`Step`] it costs about a kilobyte: a dozen small `String`s and
//! `Vec`s, and the same cell names three times (writes, `io`, `co`). Packed, its cell, value and
//! tool names are ids into one table of distinct strings and its lists are runs of `u32` words
//! in one arena shared by all steps, so a step costs its words and no allocation of its own.
//! [`Packer::unpack`] gives back the very `Step` that was packed (a unit test holds the two
//! to it), so the packing changes no output byte; it proves nothing about the steps themselves.

use crate::build::{Seen, Step, Written};
use std::collections::HashMap;

/// A value word: an id, or one of these two.
const NULL: u32 = u32::MAX - 1;
/// `Seen::Derive` / `Written::NewVersion`; also "no planned tool".
const UNKNOWN: u32 = u32::MAX;

/// Distinct strings by id, and the arena of packed steps.
#[derive(Clone, Default)]
pub struct Packer {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    words: Vec<u32>,
}

/// A packed step: its times and where its words start.
#[derive(Clone, Copy, Debug)]
pub struct Packed {
    pub read_at: u128,
    pub commit_at: u128,
    at: usize,
}

impl Packer {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 - 2 distinct names");
        assert!(id < NULL, "fewer than 2^32 - 2 distinct names");
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    fn value(&mut self, v: &Option<String>) -> u32 {
        match v {
            Some(s) => self.id(s),
            None => NULL,
        }
    }

    fn list(&mut self, cells: &[String]) {
        self.words.push(cells.len() as u32);
        for c in cells {
            let id = self.id(c);
            self.words.push(id);
        }
    }

    /// Packs a step that has no agent and no registries yet (they are settled later).
    pub fn pack(&mut self, step: Step) -> Packed {
        assert!(step.agent.is_empty());
        assert!(step.read_registry.is_empty() && step.write_registry.is_empty());
        let at = self.words.len();
        self.words.push(step.reads.len() as u32);
        for (cell, seen) in &step.reads {
            let c = self.id(cell);
            let v = match seen {
                Seen::Value(v) => self.value(v),
                Seen::Derive => UNKNOWN,
            };
            self.words.extend([c, v]);
        }
        self.words.push(step.writes.len() as u32);
        for (cell, written) in &step.writes {
            let c = self.id(cell);
            let v = match written {
                Written::Value(v) => self.value(v),
                Written::NewVersion => UNKNOWN,
            };
            self.words.extend([c, v]);
        }
        self.list(&step.io);
        self.list(&step.co);
        let tool = match &step.planned_tool {
            Some(t) => self.id(t),
            None => UNKNOWN,
        };
        let flags = u32::from(step.aborted) | (u32::from(step.retracted) << 1);
        self.words.extend([tool, flags]);
        Packed {
            read_at: step.read_at,
            commit_at: step.commit_at,
            at,
        }
    }

    fn name(&self, id: u32) -> String {
        self.names[id as usize].to_string()
    }

    fn value_of(&self, w: u32) -> Option<String> {
        (w != NULL).then(|| self.name(w))
    }

    /// The step `p` was packed from.
    pub fn unpack(&self, p: &Packed) -> Step {
        let mut w = self.words[p.at..].iter().copied();
        let mut next = || w.next().expect("a packed step's words are all there");
        let mut step = Step {
            read_at: p.read_at,
            commit_at: p.commit_at,
            ..Step::default()
        };
        for _ in 0..next() {
            let (c, v) = (next(), next());
            let seen = match v {
                UNKNOWN => Seen::Derive,
                v => Seen::Value(self.value_of(v)),
            };
            step.reads.push((self.name(c), seen));
        }
        for _ in 0..next() {
            let (c, v) = (next(), next());
            let written = match v {
                UNKNOWN => Written::NewVersion,
                v => Written::Value(self.value_of(v)),
            };
            step.writes.push((self.name(c), written));
        }
        step.io = (0..next()).map(|_| self.name(next())).collect();
        step.co = (0..next()).map(|_| self.name(next())).collect();
        let tool = next();
        step.planned_tool = (tool != UNKNOWN).then(|| self.name(tool));
        let flags = next();
        step.aborted = flags & 1 != 0;
        step.retracted = flags & 2 != 0;
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_unpacks_to_itself() {
        let s = |x: &str| x.to_owned();
        let full = Step {
            read_at: 5,
            commit_at: u128::from(u64::MAX) + 1,
            reads: vec![
                (s("m/a"), Seen::Value(Some(s("x")))),
                (s("m/b"), Seen::Value(None)),
                (s("m/a"), Seen::Derive),
            ],
            writes: vec![
                (s("m/a"), Written::Value(Some(s("m/b")))),
                (s("tool:t:1"), Written::NewVersion),
                (s("m/c"), Written::Value(None)),
            ],
            io: vec![s("tool:t:1"), s("m/a")],
            co: vec![s("m/a"), s("tool:t:1")],
            planned_tool: Some(s("t")),
            aborted: true,
            retracted: false,
            ..Step::default()
        };
        let empty = Step {
            retracted: true,
            ..Step::default()
        };
        let mut p = Packer::default();
        let packed: Vec<Packed> = [&full, &empty, &full]
            .into_iter()
            .map(|st| p.pack(st.clone()))
            .collect();
        assert_eq!(p.unpack(&packed[0]), full);
        assert_eq!(p.unpack(&packed[1]), empty);
        assert_eq!(p.unpack(&packed[2]), full);
        // Each distinct name once: m/a, x, m/b, tool:t:1, m/c, t.
        assert_eq!(p.names.len(), 6);
    }
}
