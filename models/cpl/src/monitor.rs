//! The knowledge-vector monitor of one lifeline (CPL.md "The online monitor", Algorithms 1–2).
//!
//! State: a vector clock, one row of subformula truth values per lifeline (keyed by subformula
//! index, never by identity), the selected remote variables, the local store, and `old` (this
//! lifeline's row at its previous event). On a receive, rows and variables of every lifeline
//! whose incoming clock is ahead are copied and clocks are maximised; then every event saves
//! `old`, increments its own clock, applies its effect and evaluates the table bottom-up. Rows
//! are flat `Vec<bool>`s and messages are caller-owned buffers: no allocation per event.
//! A pass of this file's tests does not prove agreement with the semantics; the exhaustive
//! test `models/tests/cpl_exhaustive.rs` does, at small bounds.

use super::compile::{CTerm, Node, Program};
use super::value::{compare, Symbols, Value};

/// What one message carries: the sender's clock, rows and selected variables after its send.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    /// Vector clock, one entry per lifeline.
    pub vc: Vec<u32>,
    /// Rows, `lifelines × subformulas`, row-major.
    pub rows: Vec<bool>,
    /// One value per selected pair of the program.
    pub vars: Vec<Option<Value>>,
}

impl Message {
    /// An empty message shaped for `prog`.
    pub fn new(prog: &Program) -> Message {
        Message {
            vc: vec![0; prog.lifelines.len()],
            rows: vec![false; prog.lifelines.len() * prog.len()],
            vars: vec![None; prog.selected.len()],
        }
    }
}

/// The monitor of lifeline `me`.
#[derive(Debug, PartialEq)]
pub struct Monitor {
    me: usize,
    n: usize,
    vc: Vec<u32>,
    rows: Vec<bool>,
    old: Vec<bool>,
    store: Vec<Option<Value>>,
    vars: Vec<Option<Value>>,
}

impl Clone for Monitor {
    fn clone(&self) -> Monitor {
        let mut m = Monitor {
            me: self.me,
            n: self.n,
            vc: Vec::new(),
            rows: Vec::new(),
            old: Vec::new(),
            store: Vec::new(),
            vars: Vec::new(),
        };
        m.clone_from(self);
        m
    }

    /// Reuses this monitor's buffers: searches that branch on a shared prefix clone often.
    fn clone_from(&mut self, src: &Monitor) {
        self.me = src.me;
        self.n = src.n;
        self.vc.clone_from(&src.vc);
        self.rows.clone_from(&src.rows);
        self.old.clone_from(&src.old);
        self.store.clone_from(&src.store);
        self.vars.clone_from(&src.vars);
    }
}

impl Monitor {
    /// The monitor of lifeline `me` before its first event.
    pub fn new(prog: &Program, me: usize) -> Monitor {
        assert!(me < prog.lifelines.len(), "lifeline {me} out of range");
        Monitor {
            me,
            n: prog.len(),
            vc: vec![0; prog.lifelines.len()],
            rows: vec![false; prog.lifelines.len() * prog.len()],
            old: vec![false; prog.len()],
            store: vec![None; prog.vars.len()],
            vars: vec![None; prog.selected.len()],
        }
    }

    /// The lifeline this monitor runs on.
    pub fn lifeline(&self) -> usize {
        self.me
    }

    /// A local event (`act` or `choice`) setting `set`.
    pub fn local(&mut self, prog: &Program, syms: &Symbols, set: &[(usize, Value)]) {
        self.step(prog, syms, set);
    }

    /// A send event setting `set`; `out` receives what the message carries.
    pub fn send(
        &mut self,
        prog: &Program,
        syms: &Symbols,
        set: &[(usize, Value)],
        out: &mut Message,
    ) {
        self.step(prog, syms, set);
        out.vc.clone_from(&self.vc);
        out.rows.clone_from(&self.rows);
        out.vars.clone_from(&self.vars);
    }

    /// A receive event of `msg`, setting `set`.
    pub fn recv(&mut self, prog: &Program, syms: &Symbols, msg: &Message, set: &[(usize, Value)]) {
        self.merge(prog, msg);
        self.step(prog, syms, set);
    }

    /// Step 1: for every lifeline whose incoming clock is ahead, take its row and variables.
    fn merge(&mut self, prog: &Program, msg: &Message) {
        assert_eq!(msg.vc.len(), self.vc.len(), "message clock shape");
        assert_eq!(msg.rows.len(), self.rows.len(), "message row shape");
        assert_eq!(msg.vars.len(), self.vars.len(), "message variable shape");
        // Nobody can have seen more of my events than I have.
        assert!(
            msg.vc[self.me] <= self.vc[self.me],
            "message knows my future"
        );
        for b in 0..self.vc.len() {
            if msg.vc[b] <= self.vc[b] {
                continue;
            }
            self.vc[b] = msg.vc[b];
            let row = b * self.n..(b + 1) * self.n;
            self.rows[row.clone()].copy_from_slice(&msg.rows[row]);
            let sel = prog.selected_of[b].clone();
            self.vars[sel.clone()].copy_from_slice(&msg.vars[sel]);
        }
    }

    /// Steps 2–4: save `old`, tick, apply the effect, evaluate bottom-up into my row.
    fn step(&mut self, prog: &Program, syms: &Symbols, set: &[(usize, Value)]) {
        assert_eq!(prog.len(), self.n, "program shape");
        let base = self.me * self.n;
        self.old.copy_from_slice(&self.rows[base..base + self.n]);
        self.vc[self.me] += 1;
        for &(v, x) in set {
            if let Some(slot) = self.store.get_mut(v) {
                *slot = Some(x);
            }
        }
        for slot in prog.selected_of[self.me].clone() {
            self.vars[slot] = self.store[prog.selected[slot].1 as usize];
        }
        let first = self.vc[self.me] == 1;
        for (i, node) in prog.nodes.iter().enumerate() {
            let cur = |k: u32| self.rows[base + k as usize];
            let v = match *node {
                Node::True => true,
                Node::False => false,
                Node::Atom(l, op, r) => match (self.term(l), self.term(r)) {
                    (Some(a), Some(b)) => compare(op, a, b, syms),
                    _ => false,
                },
                Node::Not(a) => !cur(a),
                Node::And(a, b) => cur(a) && cur(b),
                Node::Or(a, b) => cur(a) || cur(b),
                Node::Yesterday(a) => !first && self.old[a as usize],
                Node::Since(a, b) => cur(b) || (cur(a) && !first && self.old[i]),
                Node::At(b, a) => self.at(b as usize, a as usize),
            };
            self.rows[base + i] = v;
        }
    }

    fn term(&self, t: CTerm) -> Option<Value> {
        match t {
            CTerm::Local(v) => self.store[v as usize],
            CTerm::Remote(slot) => self.vars[slot as usize],
            CTerm::Const(c) => Some(c),
        }
    }

    /// `@B(a)`: my current value for B = me, else B's row, false if B is invisible.
    fn at(&self, b: usize, a: usize) -> bool {
        if b == self.me {
            return self.rows[self.me * self.n + a];
        }
        self.vc[b] > 0 && self.rows[b * self.n + a]
    }

    /// The value of subformula `node` at my latest event.
    pub fn value(&self, node: usize) -> bool {
        self.rows[self.me * self.n + node]
    }

    /// My current row (one value per subformula).
    pub fn row(&self) -> &[bool] {
        &self.rows[self.me * self.n..(self.me + 1) * self.n]
    }

    /// The value of a named guard at my latest event.
    pub fn guard_value(&self, prog: &Program, name: &str) -> Option<bool> {
        prog.guard(name).map(|i| self.value(i))
    }

    /// My vector clock.
    pub fn clock(&self) -> &[u32] {
        &self.vc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::parse::parse_guards;

    #[test]
    fn receive_copies_only_rows_that_are_ahead() {
        let mut syms = Symbols::new();
        let g = parse_guards("let seen = @A(x == 1); let mine = Y (x == 1);").unwrap();
        let p = compile(&g, &["A".into(), "B".into()], &["x".into()], &mut syms).unwrap();
        let (mut a, mut b) = (Monitor::new(&p, 0), Monitor::new(&p, 1));
        let mut msg = Message::new(&p);
        a.send(&p, &syms, &[(0, Value::Num(1.0))], &mut msg);
        assert_eq!(b.guard_value(&p, "seen"), Some(false));
        b.local(&p, &syms, &[(0, Value::Num(1.0))]);
        assert_eq!(
            b.guard_value(&p, "mine"),
            Some(false),
            "Y is false at the first event"
        );
        b.recv(&p, &syms, &msg, &[]);
        assert_eq!(b.guard_value(&p, "seen"), Some(true));
        assert_eq!(b.guard_value(&p, "mine"), Some(true));
        assert_eq!(b.clock(), &[1, 2]);
        // An older message changes nothing.
        let before = b.clone();
        let stale = Message::new(&p);
        b.merge(&p, &stale);
        assert_eq!(b, before);
    }
}
