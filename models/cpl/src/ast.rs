//! The CPL formula tree as the user wrote it: names, not ids (CPL.md "Syntax").
//!
//! Both evaluators start here: the reference evaluator walks this tree literally, the compiler
//! flattens it into the monitor's subformula table. `P` stays a node of its own so that the
//! reference can check the derived definition `P φ = ∨_B @B(true S φ)` instead of assuming it.
//! `Display` prints a formula back in the concrete syntax of `parse.rs`, fully parenthesised.
//!
//! A name defined by an earlier `let` stays a reference ([`Formula::Named`]) instead of a copy,
//! so a guard file's formulas are linear in its text: `let a1 = a0 & a0; let a2 = a1 & a1; …`
//! would double in size per line if inlined. The walks over a formula recurse and rely on the
//! parser's bound [`MAX_DEPTH`] (which counts through names), so no file can make one overflow
//! the stack; formulas built in code are trusted to be as shallow.

use std::cmp::Ordering;
use std::fmt;

/// How deep a formula may nest: operators on one path from the root to an atom, counting the
/// operators of the guards its names stand for (parentheses do not count). The parser, which
/// keeps its own stack on the heap, refuses a deeper formula with an error at the operator that
/// goes past the limit; so compiling, both evaluators, printing, cloning and dropping recurse at
/// most this deep, measured to fit in 1 MiB of stack (`models/tests/cpl_let_and_depth.rs`).
/// Every formula in the repository nests under 40. A chain `a & b & c` is `(a & b) & c`, one
/// level per operator: group a chain of more than 1,000 terms with parentheses.
pub const MAX_DEPTH: usize = 1_000;

/// A comparison operator of an atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Cmp {
    /// All six operators.
    pub const ALL: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge];

    /// Whether an ordering of the two operands satisfies the operator.
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            Cmp::Eq => o == Ordering::Equal,
            Cmp::Ne => o != Ordering::Equal,
            Cmp::Lt => o == Ordering::Less,
            Cmp::Le => o != Ordering::Greater,
            Cmp::Gt => o == Ordering::Greater,
            Cmp::Ge => o != Ordering::Less,
        }
    }

    /// The operator's text.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

/// A constant as written in a guard.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// `true`, `false`
    Bool(bool),
    /// A number.
    Num(f64),
    /// A double-quoted string.
    Str(String),
}

impl Lit {
    /// `self op other`, the reference semantics of an atom over two defined values: numbers
    /// numerically, strings by text, booleans only by (in)equality, mixed kinds unequal.
    pub fn compare(&self, op: Cmp, other: &Lit) -> bool {
        let ord = match (self, other) {
            (Lit::Num(x), Lit::Num(y)) => x.partial_cmp(y),
            (Lit::Str(x), Lit::Str(y)) => Some(x.cmp(y)),
            (Lit::Bool(x), Lit::Bool(y)) if matches!(op, Cmp::Eq | Cmp::Ne) => Some(x.cmp(y)),
            (Lit::Bool(_), Lit::Bool(_)) => return false,
            _ => None,
        };
        match ord {
            Some(o) => op.holds(o),
            None => op == Cmp::Ne,
        }
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::Bool(b) => write!(f, "{b}"),
            Lit::Num(x) if x.fract() == 0.0 && x.abs() < 1e15 => write!(f, "{}", *x as i64),
            Lit::Num(x) => write!(f, "{x}"),
            Lit::Str(s) => write!(f, "{}", serde_json::Value::String(s.clone())),
        }
    }
}

/// A term of an atom.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// `x`: the evaluating lifeline's own field.
    Local(String),
    /// `@B.x`: field `x` at B's latest visible event.
    Remote(String, String),
    /// A constant.
    Const(Lit),
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Local(x) => write!(f, "{x}"),
            Term::Remote(b, x) => write!(f, "@{b}.{x}"),
            Term::Const(c) => write!(f, "{c}"),
        }
    }
}

/// A CPL formula.
#[derive(Clone, Debug, PartialEq)]
pub enum Formula {
    /// `true`
    True,
    /// `false`
    False,
    /// `t1 op t2`; false when either term is undefined, whatever `op` is.
    Atom(Term, Cmp, Term),
    /// `!φ`
    Not(Box<Formula>),
    /// `φ & ψ`
    And(Box<Formula>, Box<Formula>),
    /// `φ | ψ`
    Or(Box<Formula>, Box<Formula>),
    /// `Y φ`: φ at the previous local event; false at the first.
    Yesterday(Box<Formula>),
    /// `φ S ψ`: ψ at some local event so far, φ at every later one.
    Since(Box<Formula>, Box<Formula>),
    /// `@B(φ)`: φ at B's latest visible event; false if none.
    At(String, Box<Formula>),
    /// `P φ`: φ somewhere in the causal past (derived: `∨_B @B(true S φ)`).
    Past(Box<Formula>),
    /// A guard defined earlier by `let`: its index in [`Guards::defs`] and its name. It stands
    /// for that guard's formula; it is a reference, not a copy.
    Named(usize, String),
}

impl Formula {
    /// Operator nesting depth: atoms, constants and names are 0 (a name's own depth is
    /// [`Guards::depths`]).
    pub fn depth(&self) -> usize {
        match self {
            Formula::True | Formula::False | Formula::Atom(..) | Formula::Named(..) => 0,
            Formula::Not(a) | Formula::Yesterday(a) | Formula::At(_, a) | Formula::Past(a) => {
                1 + a.depth()
            }
            Formula::And(a, b) | Formula::Or(a, b) | Formula::Since(a, b) => {
                1 + a.depth().max(b.depth())
            }
        }
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Formula::True => write!(f, "true"),
            Formula::False => write!(f, "false"),
            Formula::Atom(l, op, r) => write!(f, "{l} {} {r}", op.symbol()),
            Formula::Not(a) => write!(f, "!({a})"),
            Formula::And(a, b) => write!(f, "({a}) & ({b})"),
            Formula::Or(a, b) => write!(f, "({a}) | ({b})"),
            Formula::Yesterday(a) => write!(f, "Y ({a})"),
            Formula::Since(a, b) => write!(f, "({a}) S ({b})"),
            Formula::At(b, a) => write!(f, "@{b}({a})"),
            Formula::Past(a) => write!(f, "P ({a})"),
            Formula::Named(_, name) => write!(f, "{name}"),
        }
    }
}

/// The named guards of a guard file, in definition order. A guard refers to an earlier one by
/// [`Formula::Named`] with that guard's index, never to itself or a later one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Guards {
    /// `(name, formula)` pairs.
    pub defs: Vec<(String, Formula)>,
}

impl Guards {
    /// The formula of a named guard (names of earlier guards in it stay references).
    pub fn get(&self, name: &str) -> Option<&Formula> {
        self.defs.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The nesting depth of every guard with its names expanded, in one pass over the
    /// definitions (each name adds its guard's depth, computed before it).
    pub fn depths(&self) -> Vec<usize> {
        let mut depths = Vec::with_capacity(self.defs.len());
        for (i, (_, f)) in self.defs.iter().enumerate() {
            let d = expanded_depth(f, &depths);
            assert!(depths.len() == i, "one depth per guard");
            depths.push(d);
        }
        depths
    }
}

/// [`Formula::depth`] with each name counted as deep as `depths[k]`, its guard's.
fn expanded_depth(f: &Formula, depths: &[usize]) -> usize {
    match f {
        Formula::True | Formula::False | Formula::Atom(..) => 0,
        Formula::Named(k, name) => {
            assert!(
                *k < depths.len(),
                "`{name}` names guard {k}, not an earlier one"
            );
            depths[*k]
        }
        Formula::Not(a) | Formula::Yesterday(a) | Formula::At(_, a) | Formula::Past(a) => {
            1 + expanded_depth(a, depths)
        }
        Formula::And(a, b) | Formula::Or(a, b) | Formula::Since(a, b) => {
            1 + expanded_depth(a, depths).max(expanded_depth(b, depths))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_kinds_are_unequal_and_unordered() {
        let one = Lit::Num(1.0);
        let s = Lit::Str("1".into());
        assert!(one.compare(Cmp::Ne, &s));
        assert!(!one.compare(Cmp::Eq, &s));
        assert!(!one.compare(Cmp::Le, &s));
        assert!(!Lit::Bool(false).compare(Cmp::Lt, &Lit::Bool(true)));
        assert!(Lit::Bool(false).compare(Cmp::Ne, &Lit::Bool(true)));
        assert!(Lit::Str("a".into()).compare(Cmp::Lt, &Lit::Str("b".into())));
    }

    #[test]
    fn depth_and_display() {
        let atom = Formula::Atom(Term::Local("x".into()), Cmp::Eq, Term::Const(Lit::Num(1.0)));
        let f = Formula::Since(
            Box::new(Formula::True),
            Box::new(Formula::Yesterday(Box::new(atom))),
        );
        assert_eq!(f.depth(), 2);
        assert_eq!(f.to_string(), "(true) S (Y (x == 1))");
    }
}
