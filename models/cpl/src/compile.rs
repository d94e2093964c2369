//! Compiling named guards into the monitor's program: a flat, bottom-up subformula table.
//!
//! Every distinct subformula gets one index (structurally equal subformulas share it), and
//! children always come before parents, so one forward pass evaluates a row. `P φ` expands to
//! `∨_B @B(true S φ)` over the program's lifelines (CPL.md). Remote terms `@B.x` become slots
//! of the *selected* `(B, x)` pairs, the only variables a message carries. Lifelines and
//! fields named only in the guards are appended (they never have events). A name
//! ([`Formula::Named`]) compiles to its guard's node, compiled once, so the table is linear in
//! the guard text. Compilation refuses a program whose monitors would hold more than
//! [`MAX_STATE`] truth values (every lifeline keeps a row per lifeline). It does not evaluate
//! anything; that the table means what the tree means is what the exhaustive test checks
//! against `reference.rs`.

use super::ast::{Cmp, Formula, Guards, Lit, Term};
use super::value::{Symbols, Value};
use std::collections::BTreeMap;
use std::ops::Range;

/// The most truth values the monitors of one program may hold together: lifelines² ×
/// subformulas (each lifeline's monitor keeps one row per lifeline), 2^27, i.e. 128 MiB of
/// rows. The code-review guards need 4² × 16 = 256, the largest workload of CPL.md 32² × 39.
pub const MAX_STATE: u64 = 1 << 27;

/// Why guards do not compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// The monitors would hold more than [`MAX_STATE`] truth values.
    #[error(
        "the guards need at least {subformulas} subformulas over {lifelines} lifelines, so \
         the monitors would hold {lifelines}² × {subformulas} truth values, more than the \
         limit of {MAX_STATE}; use fewer lifelines or fewer distinct subformulas"
    )]
    TooLarge {
        /// Lifelines of the program.
        lifelines: usize,
        /// Subformulas compiled when the limit was passed.
        subformulas: usize,
    },
}

/// A compiled term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CTerm {
    /// The evaluating lifeline's variable.
    Local(u32),
    /// Selected slot `slot`, i.e. variable of `selected[slot]`.
    Remote(u32),
    /// A constant.
    Const(Value),
}

/// One subformula; operands are indices of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Node {
    /// `true`
    True,
    /// `false`
    False,
    /// `l op r`
    Atom(CTerm, Cmp, CTerm),
    /// `!a`
    Not(u32),
    /// `a & b`
    And(u32, u32),
    /// `a | b`
    Or(u32, u32),
    /// `Y a`
    Yesterday(u32),
    /// `a S b`
    Since(u32, u32),
    /// `@B(a)`: lifeline, operand.
    At(u32, u32),
}

/// A compiled set of guards, shared read-only by every lifeline's monitor.
#[derive(Clone, Debug)]
pub struct Program {
    /// Lifeline names (index = lifeline id).
    pub lifelines: Vec<String>,
    /// Variable names (index = variable id).
    pub vars: Vec<String>,
    /// Subformulas, children first.
    pub nodes: Vec<Node>,
    /// Named guards and their node.
    pub guards: Vec<(String, usize)>,
    /// Selected `(lifeline, variable)` pairs, sorted by lifeline.
    pub selected: Vec<(u32, u32)>,
    /// For each lifeline, its range in `selected`.
    pub selected_of: Vec<Range<usize>>,
}

impl Program {
    /// The node of a named guard.
    pub fn guard(&self, name: &str) -> Option<usize> {
        self.guards.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    /// Number of subformulas.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the program has no subformulas.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

struct Compiler<'a> {
    lifelines: Vec<String>,
    vars: Vec<String>,
    nodes: Vec<Node>,
    keys: BTreeMap<String, u32>,
    pairs: Vec<(u32, u32)>,
    syms: &'a mut Symbols,
}

/// Compiles `guards` for the given lifelines and variables (extended by names only the guards
/// use). Strings in constants are interned into `syms`.
pub fn compile(
    guards: &Guards,
    lifelines: &[String],
    vars: &[String],
    syms: &mut Symbols,
) -> Result<Program, CompileError> {
    let mut c = Compiler {
        lifelines: lifelines.to_vec(),
        vars: vars.to_vec(),
        nodes: Vec::new(),
        keys: BTreeMap::new(),
        pairs: Vec::new(),
        syms,
    };
    // Lifelines first, so that `P` expands over all of them wherever it occurs.
    for (_, f) in &guards.defs {
        c.collect_lifelines(f);
    }
    let mut named: Vec<(String, usize)> = Vec::with_capacity(guards.defs.len());
    for (n, f) in &guards.defs {
        let node = c.formula(f, &named)?;
        named.push((n.clone(), node as usize));
    }
    Ok(c.finish(named))
}

impl Compiler<'_> {
    fn collect_lifelines(&mut self, f: &Formula) {
        match f {
            // A name's lifelines were collected with its own guard, which comes first.
            Formula::True | Formula::False | Formula::Named(..) => {}
            Formula::Atom(l, _, r) => {
                for t in [l, r] {
                    if let Term::Remote(b, _) = t {
                        self.lifeline(b);
                    }
                }
            }
            Formula::Not(a) | Formula::Yesterday(a) | Formula::Past(a) => self.collect_lifelines(a),
            Formula::At(b, a) => {
                self.lifeline(b);
                self.collect_lifelines(a);
            }
            Formula::And(a, b) | Formula::Or(a, b) | Formula::Since(a, b) => {
                self.collect_lifelines(a);
                self.collect_lifelines(b);
            }
        }
    }

    fn lifeline(&mut self, name: &str) -> u32 {
        position_or_push(&mut self.lifelines, name)
    }

    /// The index of node `n`, added unless an equal node exists; refused once the monitors'
    /// state would pass [`MAX_STATE`].
    fn node(&mut self, n: Node) -> Result<u32, CompileError> {
        let key = format!("{n:?}");
        if let Some(&i) = self.keys.get(&key) {
            return Ok(i);
        }
        let lifelines = self.lifelines.len();
        let state = (lifelines as u64).pow(2) * (self.nodes.len() as u64 + 1);
        if state > MAX_STATE {
            let subformulas = self.nodes.len() + 1;
            return Err(CompileError::TooLarge {
                lifelines,
                subformulas,
            });
        }
        // MAX_STATE < 2^32 bounds the count of nodes.
        let i = self.nodes.len() as u32;
        self.nodes.push(n);
        self.keys.insert(key, i);
        Ok(i)
    }

    /// Compiles `f`; `named` holds the nodes of the guards before it.
    fn formula(&mut self, f: &Formula, named: &[(String, usize)]) -> Result<u32, CompileError> {
        let sub = |c: &mut Self, g: &Formula| c.formula(g, named);
        let n = match f {
            Formula::True => Node::True,
            Formula::False => Node::False,
            Formula::Atom(l, op, r) => Node::Atom(self.term(l), *op, self.term(r)),
            Formula::Not(a) => Node::Not(sub(self, a)?),
            Formula::And(a, b) => Node::And(sub(self, a)?, sub(self, b)?),
            Formula::Or(a, b) => Node::Or(sub(self, a)?, sub(self, b)?),
            Formula::Yesterday(a) => Node::Yesterday(sub(self, a)?),
            Formula::Since(a, b) => Node::Since(sub(self, a)?, sub(self, b)?),
            Formula::At(b, a) => Node::At(self.lifeline(b), sub(self, a)?),
            Formula::Past(a) => {
                let phi = sub(self, a)?;
                return self.past(phi);
            }
            Formula::Named(k, name) => {
                let (n, node) = named.get(*k).expect("a name refers to an earlier guard");
                assert_eq!(n, name, "guard {k} is `{n}`, not `{name}`");
                return Ok(*node as u32);
            }
        };
        self.node(n)
    }

    /// `P φ = ∨_B @B(true S φ)`, given φ's node.
    fn past(&mut self, phi: u32) -> Result<u32, CompileError> {
        let t = self.node(Node::True)?;
        let since = self.node(Node::Since(t, phi))?;
        let mut acc = None;
        for b in 0..self.lifelines.len() as u32 {
            let at = self.node(Node::At(b, since))?;
            acc = Some(match acc {
                None => at,
                Some(prev) => self.node(Node::Or(prev, at))?,
            });
        }
        match acc {
            Some(a) => Ok(a),
            None => self.node(Node::False),
        }
    }

    fn term(&mut self, t: &Term) -> CTerm {
        match t {
            Term::Local(x) => CTerm::Local(position_or_push(&mut self.vars, x)),
            Term::Remote(b, x) => {
                let pair = (self.lifeline(b), position_or_push(&mut self.vars, x));
                CTerm::Remote(position_or_push_pair(&mut self.pairs, pair))
            }
            Term::Const(Lit::Bool(b)) => CTerm::Const(Value::Bool(*b)),
            Term::Const(Lit::Num(x)) => CTerm::Const(Value::Num(*x)),
            Term::Const(Lit::Str(s)) => CTerm::Const(Value::Str(self.syms.intern(s))),
        }
    }

    /// Sorts the selected pairs by lifeline and renumbers the slots.
    fn finish(mut self, guards: Vec<(String, usize)>) -> Program {
        let mut order: Vec<usize> = (0..self.pairs.len()).collect();
        order.sort_by_key(|&i| self.pairs[i]);
        let mut slot_of = vec![0u32; self.pairs.len()];
        for (new, &old) in order.iter().enumerate() {
            slot_of[old] = new as u32;
        }
        let selected: Vec<(u32, u32)> = order.iter().map(|&i| self.pairs[i]).collect();
        let renumber = |t: CTerm| match t {
            CTerm::Remote(s) => CTerm::Remote(slot_of[s as usize]),
            t => t,
        };
        for n in &mut self.nodes {
            if let Node::Atom(l, op, r) = *n {
                *n = Node::Atom(renumber(l), op, renumber(r));
            }
        }
        let selected_of = (0..self.lifelines.len() as u32)
            .map(|b| {
                let start = selected.partition_point(|&(l, _)| l < b);
                start..selected.partition_point(|&(l, _)| l <= b)
            })
            .collect();
        Program {
            lifelines: self.lifelines,
            vars: self.vars,
            nodes: self.nodes,
            guards,
            selected,
            selected_of,
        }
    }
}

fn position_or_push(names: &mut Vec<String>, name: &str) -> u32 {
    let i = names.iter().position(|n| n == name).unwrap_or_else(|| {
        names.push(name.to_owned());
        names.len() - 1
    });
    u32::try_from(i).expect("fewer than 2^32 names")
}

fn position_or_push_pair(pairs: &mut Vec<(u32, u32)>, pair: (u32, u32)) -> u32 {
    let i = pairs.iter().position(|p| *p == pair).unwrap_or_else(|| {
        pairs.push(pair);
        pairs.len() - 1
    });
    i as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_guards;

    #[test]
    fn shared_subformulas_get_one_index() {
        let g = parse_guards("let a = x == 1 & x == 1; let b = Y (x == 1);").unwrap();
        let p = compile(&g, &["A".into()], &[], &mut Symbols::new()).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.nodes[1], Node::And(0, 0));
        assert_eq!(p.guard("b"), Some(2));
    }

    #[test]
    fn past_expands_over_every_lifeline_and_remote_terms_select_pairs() {
        let g = parse_guards("let p = P (@C.y == @A.x);").unwrap();
        let p = compile(
            &g,
            &["A".into(), "B".into()],
            &["x".into()],
            &mut Symbols::new(),
        )
        .unwrap();
        assert_eq!(p.lifelines, vec!["A", "B", "C"]);
        assert_eq!(p.vars, vec!["x", "y"]);
        assert_eq!(p.selected, vec![(0, 0), (2, 1)]);
        assert_eq!(p.selected_of, vec![0..1, 1..1, 1..2]);
        assert_eq!(
            p.nodes[0],
            Node::Atom(CTerm::Remote(1), Cmp::Eq, CTerm::Remote(0))
        );
        // atom, true, since, 3 × @, 2 × |
        assert_eq!(p.len(), 8);
    }
}
