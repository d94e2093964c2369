//! The reference evaluator: CPL semantics followed literally over a whole MSC (CPL.md
//! "Semantics at event e on lifeline A").
//!
//! No clocks, no recurrences: `latest` comes from the causal-order closure of [`Causal`],
//! `φ S ψ` quantifies over the lifeline's events as the definition does, and `P φ` is "φ at
//! some f ≤ e" (not its derived form), so the compiler's expansion is checked, not assumed.
//! Comparisons use [`Lit::compare`], not the monitor's. A name ([`Formula::Named`]) is its
//! guard's formula, evaluated once. Memoising per (subformula, event) changes the cost, not the
//! meaning; the recursion is as deep as the formulas, which the parser bounds
//! ([`super::ast::MAX_DEPTH`]). Being the oracle, it is only as right as its reading of
//! CPL.md; the hand-built code-review runs in `models/tests/cpl_code_review.rs` pin that.

use super::ast::{Cmp, Formula, Lit, Term};
use super::msc::{Causal, Msc};
use super::value::{Symbols, Value};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum RTerm {
    /// Variable id in the MSC, or none if the MSC never names it.
    Local(Option<usize>),
    Remote(Option<usize>, Option<usize>),
    Const(Lit),
}

#[derive(Clone, Debug)]
enum RNode {
    Bool(bool),
    Atom(RTerm, Cmp, RTerm),
    Not(usize),
    And(usize, usize),
    Or(usize, usize),
    Yesterday(usize),
    Since(usize, usize),
    At(Option<usize>, usize),
    Past(usize),
}

/// Formulas resolved against an MSC's lifeline and variable names, ready to evaluate.
#[derive(Clone, Debug)]
pub struct Reference {
    nodes: Vec<RNode>,
    roots: Vec<usize>,
    index: BTreeMap<String, usize>,
}

impl Reference {
    /// Resolves `formulas`; names absent from `lifelines`/`vars` have no events / no values.
    /// `Formula::Named(k, _)` stands for `formulas[k]`, which must come before it: pass a
    /// guard file's formulas in definition order.
    pub fn new(formulas: &[Formula], lifelines: &[String], vars: &[String]) -> Reference {
        let mut r = Reference {
            nodes: Vec::new(),
            roots: Vec::new(),
            index: BTreeMap::new(),
        };
        for f in formulas {
            let root = r.add(f, lifelines, vars);
            r.roots.push(root);
        }
        r
    }

    fn add(&mut self, f: &Formula, lifelines: &[String], vars: &[String]) -> usize {
        let find = |names: &[String], n: &str| names.iter().position(|m| m == n);
        let mut sub = |g: &Formula| self.add(g, lifelines, vars);
        let node = match f {
            Formula::Named(k, name) => {
                let root = self.roots.get(*k);
                return *root.unwrap_or_else(|| panic!("`{name}` is not an earlier formula"));
            }
            Formula::True => RNode::Bool(true),
            Formula::False => RNode::Bool(false),
            Formula::Atom(l, op, r) => {
                let term = |t: &Term| match t {
                    Term::Local(x) => RTerm::Local(find(vars, x)),
                    Term::Remote(b, x) => RTerm::Remote(find(lifelines, b), find(vars, x)),
                    Term::Const(c) => RTerm::Const(c.clone()),
                };
                RNode::Atom(term(l), *op, term(r))
            }
            Formula::Not(a) => RNode::Not(sub(a)),
            Formula::And(a, b) => RNode::And(sub(a), sub(b)),
            Formula::Or(a, b) => RNode::Or(sub(a), sub(b)),
            Formula::Yesterday(a) => RNode::Yesterday(sub(a)),
            Formula::Since(a, b) => RNode::Since(sub(a), sub(b)),
            Formula::At(b, a) => RNode::At(find(lifelines, b), sub(a)),
            Formula::Past(a) => RNode::Past(sub(a)),
        };
        // Structurally equal subtrees share a node (and so a memo row); meaning is unchanged.
        let key = format!("{node:?}");
        if let Some(&k) = self.index.get(&key) {
            return k;
        }
        self.nodes.push(node);
        self.index.insert(key, self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// `table[e][k]`: whether formula `k` holds at event `e` (at e's lifeline).
    pub fn evaluate(&self, msc: &Msc, causal: &Causal, syms: &Symbols) -> Vec<Vec<bool>> {
        let mut ev = Eval {
            r: self,
            msc,
            causal,
            syms,
            vals: msc.valuations(),
            memo: vec![0; self.nodes.len() * msc.len()],
        };
        (0..msc.len())
            .map(|e| self.roots.iter().map(|&k| ev.sat(k, e)).collect())
            .collect()
    }
}

struct Eval<'a> {
    r: &'a Reference,
    msc: &'a Msc,
    causal: &'a Causal,
    syms: &'a Symbols,
    vals: Vec<Vec<Option<Value>>>,
    /// 0 unknown, 1 false, 2 true; `node * events + event`.
    memo: Vec<u8>,
}

impl Eval<'_> {
    fn sat(&mut self, k: usize, e: usize) -> bool {
        let slot = k * self.msc.len() + e;
        if self.memo[slot] != 0 {
            return self.memo[slot] == 2;
        }
        let v = self.compute(k, e);
        self.memo[slot] = 1 + v as u8;
        v
    }

    fn compute(&mut self, k: usize, e: usize) -> bool {
        let r = self.r;
        match r.nodes[k] {
            RNode::Bool(b) => b,
            RNode::Atom(ref l, op, ref r) => match (self.term(l, e), self.term(r, e)) {
                (Some(a), Some(b)) => a.compare(op, &b),
                _ => false,
            },
            RNode::Not(a) => !self.sat(a, e),
            RNode::And(a, b) => self.sat(a, e) && self.sat(b, e),
            RNode::Or(a, b) => self.sat(a, e) || self.sat(b, e),
            RNode::Yesterday(a) => self.causal.prev(e).is_some_and(|p| self.sat(a, p)),
            RNode::Since(a, b) => self.since(a, b, e),
            RNode::At(b, a) => {
                let f = b.and_then(|b| self.causal.latest(e, b));
                f.is_some_and(|f| self.sat(a, f))
            }
            RNode::Past(a) => (0..self.msc.len()).any(|f| self.causal.leq(f, e) && self.sat(a, f)),
        }
    }

    /// Some f on e's lifeline with index(f) ≤ index(e) satisfies ψ and every later g up to e
    /// satisfies φ.
    fn since(&mut self, phi: usize, psi: usize, e: usize) -> bool {
        let causal = self.causal;
        let line = causal.events_of(self.msc.events[e].lifeline);
        let upto = &line[..=line
            .iter()
            .position(|&g| g == e)
            .expect("e on its lifeline")];
        (0..upto.len())
            .any(|i| self.sat(psi, upto[i]) && upto[i + 1..].iter().all(|&g| self.sat(phi, g)))
    }

    fn term(&self, t: &RTerm, e: usize) -> Option<Lit> {
        let value = match t {
            RTerm::Const(c) => return Some(c.clone()),
            RTerm::Local(x) => self.vals[e][(*x)?],
            RTerm::Remote(b, x) => self.vals[self.causal.latest(e, (*b)?)?][(*x)?],
        };
        Some(match value? {
            Value::Bool(b) => Lit::Bool(b),
            Value::Num(x) => Lit::Num(x),
            Value::Str(s) => Lit::Str(self.syms.text(s).to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msc::{Event, Kind};
    use crate::parse::{parse_formula, parse_guards};

    #[test]
    fn undefined_remote_atoms_are_false_even_for_ne() {
        let names = vec!["A".to_owned(), "B".to_owned()];
        let set = vec![(0, Value::Num(1.0))];
        let events = vec![Event {
            lifeline: 0,
            kind: Kind::Act,
            set,
        }];
        let msc = Msc::new(names.clone(), vec!["x".into()], events).unwrap();
        let g = parse_guards("").unwrap();
        let fs: Vec<Formula> = [
            "@B.x != 1",
            "!(@B.x == 1)",
            "@A.x == x",
            "P (x == 1)",
            "@C(true)",
        ]
        .iter()
        .map(|s| parse_formula(s, &g).unwrap())
        .collect();
        let r = Reference::new(&fs, &names, &msc.vars);
        let table = r.evaluate(&msc, &Causal::new(&msc), &Symbols::new());
        assert_eq!(table, vec![vec![false, true, true, true, false]]);
    }
}
