//! Variable values of CPL executions and the comparison of two values.
//!
//! Values are small and `Copy` so the monitor's hot path never allocates: strings are interned
//! in a [`Symbols`] table and carried as [`Sym`] ids. Comparisons follow CPL.md: both operands
//! must be defined (the caller maps undefined to false); numbers compare numerically, strings
//! by their text, booleans by equality only; values of different kinds are unequal and
//! unordered. A pass of the tests here does not prove the reference evaluator's own comparison
//! (`ast::Lit::compare`) agrees; the exhaustive test checks that end to end.

use super::ast::Cmp;
use std::collections::BTreeMap;

/// An interned string: an index into [`Symbols`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sym(pub u32);

/// The value of a variable after an event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A JSON boolean.
    Bool(bool),
    /// A JSON number.
    Num(f64),
    /// A JSON string, interned.
    Str(Sym),
}

/// The string interner shared by a program and the executions it runs on.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    texts: Vec<String>,
    ids: BTreeMap<String, u32>,
}

impl Symbols {
    /// An empty table.
    pub fn new() -> Symbols {
        Symbols::default()
    }

    /// The id of `text`, adding it if new.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&id) = self.ids.get(text) {
            return Sym(id);
        }
        let id = u32::try_from(self.texts.len()).expect("fewer than 2^32 symbols");
        self.texts.push(text.to_owned());
        self.ids.insert(text.to_owned(), id);
        Sym(id)
    }

    /// The id of `text` if it is interned.
    pub fn get(&self, text: &str) -> Option<Sym> {
        self.ids.get(text).map(|&id| Sym(id))
    }

    /// The text of an interned id.
    pub fn text(&self, sym: Sym) -> &str {
        &self.texts[sym.0 as usize]
    }
}

/// `a op b` for two defined values.
#[inline]
pub fn compare(op: Cmp, a: Value, b: Value, syms: &Symbols) -> bool {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (a, b) {
        (Value::Num(x), Value::Num(y)) => x.partial_cmp(&y),
        (Value::Str(x), Value::Str(y)) if x == y => Some(Ordering::Equal),
        (Value::Str(x), Value::Str(y)) => Some(syms.text(x).cmp(syms.text(y))),
        (Value::Bool(x), Value::Bool(y)) => {
            // Booleans are equal or unequal, never ordered.
            return match op {
                Cmp::Eq => x == y,
                Cmp::Ne => x != y,
                _ => false,
            };
        }
        _ => None,
    };
    match (op, ord) {
        (Cmp::Ne, None) => true,
        (_, None) => false,
        (op, Some(o)) => op.holds(o),
    }
}

/// Renders a value as the text a user would write in a guard or a JSON file.
pub fn render(v: Value, syms: &Symbols) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Num(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Value::Num(x) => x.to_string(),
        Value::Str(s) => serde_json::Value::String(syms.text(s).to_owned()).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_follow_the_kinds() {
        let mut syms = Symbols::new();
        let a = Value::Str(syms.intern("apple"));
        let b = Value::Str(syms.intern("banana"));
        assert!(compare(Cmp::Lt, a, b, &syms));
        assert!(compare(Cmp::Ne, a, b, &syms));
        assert!(!compare(Cmp::Ge, a, b, &syms));
        assert!(compare(Cmp::Le, Value::Num(1.0), Value::Num(1.0), &syms));
        assert!(!compare(
            Cmp::Lt,
            Value::Bool(false),
            Value::Bool(true),
            &syms
        ));
        assert!(compare(
            Cmp::Ne,
            Value::Bool(false),
            Value::Bool(true),
            &syms
        ));
        assert!(compare(Cmp::Ne, Value::Num(1.0), a, &syms));
        assert!(!compare(Cmp::Eq, Value::Num(1.0), a, &syms));
        assert!(!compare(Cmp::Lt, Value::Num(1.0), a, &syms));
    }

    #[test]
    fn interning_is_stable() {
        let mut syms = Symbols::new();
        let a = syms.intern("x");
        assert_eq!(syms.intern("x"), a);
        assert_eq!(syms.get("x"), Some(a));
        assert_eq!(syms.get("y"), None);
        assert_eq!(render(Value::Str(a), &syms), "\"x\"");
        assert_eq!(render(Value::Num(2.0), &syms), "2");
        assert_eq!(render(Value::Num(0.5), &syms), "0.5");
    }
}
