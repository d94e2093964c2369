//! The text syntax of guard files: `let name = φ;` definitions over CPL formulas.
//!
//! ```text
//! # comment (also // comment)
//! let review_ok = (status != "bad" & !(status == "pending")) S (status == "good");
//! let merge_ok  = @Reviewer(review_ok) & @Reviewer.candidate == @Author.candidate;
//! let rising    = merge_ok & !Y merge_ok;
//! ```
//! Precedence, loosest first: `S` (right-associative), `|`, `&`, then the prefix operators
//! `! Y P @B`. Atoms compare two terms (`x`, `@B.x`, numbers, strings, `true`, `false`) with
//! `== != < <= > >=`. A name defined by an earlier `let` stands for its formula (and is kept as
//! a reference to it, [`Formula::Named`]). `Y`, `S`, `P`, `let`, `true`, `false` are reserved.
//! The parser keeps its open operators on a heap stack (it does not recurse), and refuses a
//! formula deeper than [`MAX_DEPTH`], so the recursive walks downstream cannot overflow. Errors carry line, column and what was expected.
//! A successful parse says nothing about whether the lifelines and fields exist.

use super::ast::{Cmp, Formula, Guards, Lit, Term, MAX_DEPTH};
use std::collections::BTreeMap;
use std::fmt;

/// A parse error at a position of the input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: expected {expected}, found {found}")]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What the parser expected.
    pub expected: String,
    /// What it found.
    pub found: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Num(f64),
    Sym(&'static str),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "`{s}`"),
            Tok::Str(s) => write!(f, "string {}", serde_json::Value::String(s.clone())),
            Tok::Num(x) => write!(f, "number {x}"),
            Tok::Sym(s) => write!(f, "`{s}`"),
            Tok::End => write!(f, "end of input"),
        }
    }
}

const SYMBOLS: [&str; 15] = [
    "==", "!=", "<=", ">=", "<", ">", "!", "&", "|", "(", ")", "@", ".", "=", ";",
];
const RESERVED: [&str; 6] = ["let", "true", "false", "Y", "S", "P"];

struct Lexer {
    toks: Vec<(Tok, usize, usize)>,
}

fn lex(src: &str) -> Result<Lexer, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut col) = (0, 1, 1);
    let mut toks = Vec::new();
    let err = |line, column, found: String| ParseError {
        line,
        column,
        expected: "a token".into(),
        found,
    };
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let (tok, len) = if c == '\n' {
            (i, line, col) = (i + 1, line + 1, 1);
            continue;
        } else if c.is_whitespace() {
            (i, col) = (i + 1, col + 1);
            continue;
        } else if c == '#' || rest == "//" {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c.is_alphabetic() || c == '_' {
            let n = chars[i..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || **c == '_')
                .count();
            (Tok::Ident(chars[i..i + n].iter().collect()), n)
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let n = 1 + chars[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit() || **c == '.')
                .count();
            let text: String = chars[i..i + n].iter().collect();
            // A literal too large for f64 would read as infinity, which prints as `inf`, a
            // field name: refused, so that every formula prints back to itself.
            let x = text
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| err(line, col, format!("bad number `{text}`")))?;
            (Tok::Num(x), n)
        } else if c == '"' {
            lex_string(&chars[i..])
                .ok_or_else(|| err(line, col, "an unterminated string".into()))?
        } else if let Some(s) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            (Tok::Sym(s), s.len())
        } else {
            return Err(err(line, col, format!("`{c}`")));
        };
        toks.push((tok, line, col));
        (i, col) = (i + len, col + len);
    }
    toks.push((Tok::End, line, col));
    Ok(Lexer { toks })
}

/// A JSON-style string literal at the start of `chars`: the token and its length in chars.
fn lex_string(chars: &[char]) -> Option<(Tok, usize)> {
    let mut end = 1;
    while end < chars.len() && chars[end] != '"' && chars[end] != '\n' {
        end += if chars[end] == '\\' { 2 } else { 1 };
    }
    if end >= chars.len() || chars[end] != '"' {
        return None;
    }
    let text: String = chars[..=end].iter().collect();
    let s: String = serde_json::from_str(&text).ok()?;
    Some((Tok::Str(s), end + 1))
}

/// A binary operator.
#[derive(Clone, Copy)]
enum Bin {
    And,
    Or,
    Since,
}

impl Bin {
    /// Binding strength: `&` tightest, `S` loosest (CPL's precedence).
    fn level(self) -> u8 {
        match self {
            Bin::Since => 1,
            Bin::Or => 2,
            Bin::And => 3,
        }
    }
}

/// An operator the parser has read and whose (right) operand it is still reading.
enum Op {
    /// `(`: a barrier no operator reduces across; transparent once closed.
    Paren,
    Not,
    Yesterday,
    Past,
    At(String),
    /// With its left operand.
    Binary(Bin, Parsed),
}

impl Op {
    /// Prefix operators bind tighter than any binary one.
    fn level(&self) -> u8 {
        match self {
            Op::Paren => 0,
            Op::Binary(b, _) => b.level(),
            Op::Not | Op::Yesterday | Op::Past | Op::At(_) => 4,
        }
    }
}

/// An open operator and the token it is at.
struct Open {
    op: Op,
    at: usize,
}

/// What each sub-parser returns: the formula and its depth with names expanded.
type Parsed = (Formula, usize);

struct Parser<'a> {
    toks: &'a [(Tok, usize, usize)],
    pos: usize,
    /// Guards defined so far: name → index in the definitions.
    names: &'a BTreeMap<String, usize>,
    /// Their depths with names expanded ([`Guards::depths`]).
    depths: &'a [usize],
}

/// Parses a guard file.
pub fn parse_guards(src: &str) -> Result<Guards, ParseError> {
    let lexer = lex(src)?;
    let mut guards = Guards::default();
    let mut names = BTreeMap::new();
    let mut depths = Vec::new();
    let mut pos = 0;
    loop {
        let mut p = Parser {
            toks: &lexer.toks,
            pos,
            names: &names,
            depths: &depths,
        };
        if p.peek() == &Tok::End {
            return Ok(guards);
        }
        p.expect_ident_eq("let", "`let`")?;
        let at = p.pos;
        let name = p.ident("a guard name")?;
        if names.contains_key(&name) {
            return Err(p.error_at(at, "a name not defined before".into()));
        }
        p.expect(Tok::Sym("="), "`=`")?;
        let (f, depth) = p.formula()?;
        p.expect(Tok::Sym(";"), "`;` or an operator")?;
        pos = p.pos;
        names.insert(name.clone(), guards.defs.len());
        depths.push(depth);
        guards.defs.push((name, f));
    }
}

/// Parses one formula (no `let`s) over the guards `defs`; their names stay references, so a
/// formula that uses one belongs after them (as the last guard, or evaluated beside them).
pub fn parse_formula(src: &str, defs: &Guards) -> Result<Formula, ParseError> {
    let lexer = lex(src)?;
    let mut names = BTreeMap::new();
    for (i, (n, _)) in defs.defs.iter().enumerate() {
        names.entry(n.clone()).or_insert(i);
    }
    let depths = defs.depths();
    let mut p = Parser {
        toks: &lexer.toks,
        pos: 0,
        names: &names,
        depths: &depths,
    };
    let (f, _) = p.formula()?;
    p.expect(Tok::End, "end of input or an operator")?;
    Ok(f)
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].0.clone();
        self.pos = (self.pos + 1).min(self.toks.len() - 1);
        t
    }

    fn error_at(&self, pos: usize, expected: String) -> ParseError {
        let (tok, line, column) = &self.toks[pos];
        ParseError {
            line: *line,
            column: *column,
            expected,
            found: tok.to_string(),
        }
    }

    fn error(&self, expected: &str) -> ParseError {
        self.error_at(self.pos, expected.to_owned())
    }

    fn too_deep(&self, pos: usize) -> ParseError {
        let what = format!(
            "a formula at most {MAX_DEPTH} operators deep (counting the operators of the guards \
             that names stand for)"
        );
        self.error_at(pos, what)
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<(), ParseError> {
        match *self.peek() == tok {
            true => {
                self.bump();
                Ok(())
            }
            false => Err(self.error(expected)),
        }
    }

    fn expect_ident_eq(&mut self, word: &str, expected: &str) -> Result<(), ParseError> {
        match matches!(self.peek(), Tok::Ident(s) if s == word) {
            true => {
                self.bump();
                Ok(())
            }
            false => Err(self.error(expected)),
        }
    }

    /// A non-reserved identifier.
    fn ident(&mut self, expected: &str) -> Result<String, ParseError> {
        match self.peek() {
            Tok::Ident(s) if !RESERVED.contains(&s.as_str()) => {
                let s = s.clone();
                self.bump();
                Ok(s)
            }
            _ => Err(self.error(expected)),
        }
    }

    /// A formula, by operator precedence over a heap stack of open operators (no recursion,
    /// so no input can overflow the call stack). Opening more than [`MAX_DEPTH`] operators at
    /// once, or building a node deeper than that, is an error at the operator's token.
    fn formula(&mut self) -> Result<Parsed, ParseError> {
        let mut stack: Vec<Open> = Vec::new();
        let mut operators = 0;
        loop {
            let mut v = loop {
                let at = self.pos;
                let Some(op) = self.prefix()? else {
                    break self.primary()?;
                };
                operators += usize::from(!matches!(op, Op::Paren));
                if operators > MAX_DEPTH {
                    return Err(self.too_deep(at));
                }
                stack.push(Open { op, at });
            };
            loop {
                let at = self.pos;
                let bin = match self.peek() {
                    Tok::Sym("&") => Some(Bin::And),
                    Tok::Sym("|") => Some(Bin::Or),
                    Tok::Ident(s) if s == "S" => Some(Bin::Since),
                    _ => None,
                };
                let level = bin.map_or(0, Bin::level);
                // Reduce what binds tighter; `&` and `|` associate left, `S` right.
                while let Some(top) = stack.last() {
                    let left = top.op.level() == level && !matches!(bin, Some(Bin::Since));
                    if matches!(top.op, Op::Paren) || !(top.op.level() > level || left) {
                        break;
                    }
                    let open = stack.pop().expect("a top");
                    operators -= 1;
                    v = self.reduce(open, v)?;
                }
                if let Some(bin) = bin {
                    self.bump();
                    operators += 1;
                    if operators > MAX_DEPTH {
                        return Err(self.too_deep(at));
                    }
                    let op = Op::Binary(bin, v);
                    stack.push(Open { op, at });
                    break;
                }
                // The end of a parenthesised formula, or of the whole one.
                match stack.pop() {
                    None => return Ok(v),
                    Some(_) => self.expect(Tok::Sym(")"), "`)` or an operator")?,
                }
            }
        }
    }

    /// The node of the open operator over its (right) operand `v`, if it is shallow enough.
    fn reduce(&self, open: Open, v: Parsed) -> Result<Parsed, ParseError> {
        let (rhs, dr) = v;
        let rhs = Box::new(rhs);
        let (f, depth) = match open.op {
            Op::Paren => return Ok((*rhs, dr)),
            Op::Not => (Formula::Not(rhs), dr),
            Op::Yesterday => (Formula::Yesterday(rhs), dr),
            Op::Past => (Formula::Past(rhs), dr),
            Op::At(b) => (Formula::At(b, rhs), dr),
            Op::Binary(bin, (l, dl)) => {
                let l = Box::new(l);
                let f = match bin {
                    Bin::And => Formula::And(l, rhs),
                    Bin::Or => Formula::Or(l, rhs),
                    Bin::Since => Formula::Since(l, rhs),
                };
                (f, dl.max(dr))
            }
        };
        match depth + 1 > MAX_DEPTH {
            true => Err(self.too_deep(open.at)),
            false => Ok((f, depth + 1)),
        }
    }

    /// A prefix operator or `(` at the current token, consumed; `None` before an operand.
    fn prefix(&mut self) -> Result<Option<Op>, ParseError> {
        let remote_term = self.toks.get(self.pos + 2).map(|t| &t.0) == Some(&Tok::Sym("."));
        let op = match self.peek() {
            Tok::Sym("(") => Op::Paren,
            Tok::Sym("!") => Op::Not,
            Tok::Ident(s) if s == "Y" => Op::Yesterday,
            Tok::Ident(s) if s == "P" => Op::Past,
            Tok::Sym("@") if !remote_term => {
                self.bump();
                return Ok(Some(Op::At(self.ident("a lifeline name after `@`")?)));
            }
            _ => return Ok(None),
        };
        self.bump();
        Ok(Some(op))
    }

    /// An atom, `true`, `false` or a name.
    fn primary(&mut self) -> Result<Parsed, ParseError> {
        let start = self.pos;
        if let Tok::Ident(name) = self.peek().clone() {
            if self.cmp_op_at(self.pos + 1).is_none() {
                return self.named(&name, start);
            }
        }
        let lhs = self.term()?;
        let Some(op) = self.cmp_op_at(self.pos) else {
            return Err(self.error("a comparison (== != < <= > >=)"));
        };
        self.bump();
        let rhs = self.term()?;
        Ok((Formula::Atom(lhs, op, rhs), 0))
    }

    /// `true`, `false` or a name defined by an earlier `let` (a reference to it, as deep as
    /// its guard).
    fn named(&mut self, name: &str, start: usize) -> Result<Parsed, ParseError> {
        self.bump();
        match name {
            "true" => Ok((Formula::True, 0)),
            "false" => Ok((Formula::False, 0)),
            _ => match self.names.get(name) {
                Some(&k) => Ok((Formula::Named(k, name.to_owned()), self.depths[k])),
                None => Err(self.error_at(
                    start,
                    format!("a guard defined earlier, or a comparison after field `{name}`"),
                )),
            },
        }
    }

    fn cmp_op_at(&self, pos: usize) -> Option<Cmp> {
        let Tok::Sym(s) = &self.toks.get(pos)?.0 else {
            return None;
        };
        Cmp::ALL.into_iter().find(|c| c.symbol() == *s)
    }

    fn term(&mut self) -> Result<Term, ParseError> {
        let expected = "a term (field, @Lifeline.field, number, string, true, false)";
        let t = match self.peek().clone() {
            Tok::Num(x) => Term::Const(Lit::Num(x)),
            Tok::Str(s) => Term::Const(Lit::Str(s)),
            Tok::Ident(s) if s == "true" || s == "false" => Term::Const(Lit::Bool(s == "true")),
            Tok::Sym("@") => {
                self.bump();
                let b = self.ident("a lifeline name after `@`")?;
                self.expect(Tok::Sym("."), "`.` and a field name")?;
                return Ok(Term::Remote(b, self.ident("a field name after `.`")?));
            }
            Tok::Ident(_) => Term::Local(self.ident(expected)?),
            _ => return Err(self.error(expected)),
        };
        if !matches!(t, Term::Local(_)) {
            self.bump();
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_review_guards_parse() {
        let src = r#"
            # the code-review guards of CPL.md
            let review_ok = (status != "bad" & !(status == "pending")) S (status == "good");
            let merge_ok = @Reviewer(review_ok) & @Tester(review_ok)
                & @Reviewer.candidate == @Author.candidate; // identity
            let rising = merge_ok & !Y merge_ok;
        "#;
        let g = parse_guards(src).unwrap();
        assert_eq!(g.defs.len(), 3);
        let review = g.get("review_ok").unwrap();
        assert_eq!(
            review.to_string(),
            r#"((status != "bad") & (!(status == "pending"))) S (status == "good")"#
        );
        assert_eq!(
            g.get("rising").unwrap().to_string(),
            "(merge_ok) & (!(Y (merge_ok)))"
        );
        assert_eq!(g.depths(), vec![3, 6, 9]);
    }

    #[test]
    fn precedence_puts_since_loosest() {
        let g = Guards::default();
        let f = parse_formula("a == 1 & Y b < 2 S P @B.c >= -1 | @B(true)", &g).unwrap();
        assert_eq!(
            f.to_string(),
            "((a == 1) & (Y (b < 2))) S ((P (@B.c >= -1)) | (@B(true)))"
        );
    }

    #[test]
    fn errors_name_line_column_and_expectation() {
        let err = parse_guards("let a = x == 1;\nlet b = a &;\n").unwrap_err();
        assert_eq!((err.line, err.column), (2, 12));
        assert_eq!(
            err.to_string(),
            "line 2, column 12: expected a term (field, @Lifeline.field, number, string, true, \
             false), found `;`"
        );
        let err = parse_guards("let a = zz;").unwrap_err();
        assert_eq!((err.line, err.column), (1, 9));
        assert!(err.expected.contains("field `zz`"), "{err}");
        let err = parse_guards("let a = x == 1").unwrap_err();
        assert_eq!(err.found, "end of input");
        let err = parse_guards("let a = x == 1; let a = true;").unwrap_err();
        assert_eq!(err.column, 21);
        let err = parse_guards("let Y = true;").unwrap_err();
        assert_eq!(err.expected, "a guard name");
        let err = parse_guards("let a = x == \"open;").unwrap_err();
        assert_eq!(err.found, "an unterminated string");
    }

    fn deep_error(src: &str) -> ParseError {
        let err = parse_guards(src).unwrap_err();
        assert!(
            err.expected
                .starts_with("a formula at most 1000 operators deep"),
            "{err}"
        );
        err
    }

    #[test]
    fn guards_past_the_depth_limit_are_errors_not_stack_overflows() {
        // Three hostile guard files that once overflowed the stack. Parentheses alone add
        // no depth (the parser keeps them on the heap), so the first one parses.
        let parens = format!(
            "let a = {}x == 1{};",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert_eq!(
            parse_guards(&parens).unwrap().get("a").unwrap().to_string(),
            "x == 1"
        );
        let parens = format!(
            "let a = {}!x == 1{};",
            "(!".repeat(10_000),
            ")".repeat(10_000)
        );
        let err = deep_error(&parens);
        assert_eq!(
            (err.line, err.column, err.found.as_str()),
            (1, 10 + 2 * 1000, "`!`")
        );
        let ys = format!("let a = {}x == 1;", "Y ".repeat(30_000));
        let err = deep_error(&ys);
        assert_eq!((err.column, err.found.as_str()), (9 + 2 * 1000, "`Y`"));
        let chain = format!("let a = x == 1{};", " & x == 1".repeat(29_999));
        let err = deep_error(&chain);
        assert_eq!((err.column, err.found.as_str()), (16 + 9 * 1000, "`&`"));
        // Every other way to nest, one level past the limit.
        let n = MAX_DEPTH + 1;
        let wrap =
            |pre: &str, post: &str| format!("let a = {}true{};", pre.repeat(n), post.repeat(n));
        for src in [
            wrap("!", ""),
            wrap("P ", ""),
            wrap("@B(", ")"),
            wrap("", " S true"),
            wrap("Y (", ")"),
            format!("let a = true{};", " | true".repeat(n)),
        ] {
            deep_error(&src);
        }
    }

    #[test]
    fn the_depth_limit_counts_through_names_and_admits_exactly_max_depth() {
        let at_limit = format!("let a = {}x == 1;", "Y ".repeat(MAX_DEPTH));
        assert_eq!(parse_guards(&at_limit).unwrap().depths(), vec![MAX_DEPTH]);
        let mut src = "let a0 = x == 1;\n".to_owned();
        for i in 1..=MAX_DEPTH + 1 {
            src.push_str(&format!("let a{i} = Y a{};\n", i - 1));
        }
        let err = deep_error(&src);
        assert_eq!(
            (err.line, err.column, err.found.as_str()),
            (1002, 13, "`Y`")
        );
        let g = parse_guards(&src[..src.rfind("let").unwrap()]).unwrap();
        assert_eq!(g.depths().last(), Some(&MAX_DEPTH));
        assert_eq!(g.defs.len(), MAX_DEPTH + 1);
        let err = parse_formula("!a1000", &g).unwrap_err();
        assert!(
            err.expected
                .starts_with("a formula at most 1000 operators deep"),
            "{err}"
        );
        assert_eq!(parse_formula("a1000", &g).unwrap().depth(), 0);
    }

    #[test]
    fn let_names_stay_references_so_doubling_definitions_stay_linear() {
        // Inlined, this 30-line file meant a formula of 2^30 atoms (3.9 GB).
        let mut src = "let a0 = x == 1;\n".to_owned();
        for i in 1..=30 {
            src.push_str(&format!("let a{i} = a{} & a{};\n", i - 1, i - 1));
        }
        let g = parse_guards(&src).unwrap();
        assert_eq!(g.get("a30").unwrap().to_string(), "(a29) & (a29)");
        assert_eq!(g.defs[30].1, {
            let a29 = || Box::new(Formula::Named(29, "a29".into()));
            Formula::And(a29(), a29())
        });
        assert_eq!(g.depths()[30], 30);
        let f = parse_formula("a30 | a0", &g).unwrap();
        assert_eq!(f.to_string(), "(a30) | (a0)");
    }

    #[test]
    fn number_literals_past_f64_are_errors_so_formulas_print_back() {
        let huge = format!("let a = x == {};", "9".repeat(400));
        let err = parse_guards(&huge).unwrap_err();
        assert_eq!((err.line, err.column), (1, 14));
        assert!(err.found.starts_with("bad number `999"), "{err}");
        let g = parse_guards(&format!("let a = x == {};", "9".repeat(300))).unwrap();
        let printed = format!("let a = {};", g.get("a").unwrap());
        assert_eq!(parse_guards(&printed).unwrap(), g);
    }
}
