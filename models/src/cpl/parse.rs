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
//! `== != < <= > >=`. A name defined by an earlier `let` stands for its formula. `Y`, `S`,
//! `P`, `let`, `true`, `false` are reserved. Errors carry line, column and what was expected.
//! A successful parse says nothing about whether the lifelines and fields exist.

use super::ast::{Cmp, Formula, Guards, Lit, Term};
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
            let x = text
                .parse()
                .map_err(|_| err(line, col, format!("bad number `{text}`")))?;
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

struct Parser<'a> {
    toks: &'a [(Tok, usize, usize)],
    pos: usize,
    defs: &'a [(String, Formula)],
}

/// Parses a guard file.
pub fn parse_guards(src: &str) -> Result<Guards, ParseError> {
    let lexer = lex(src)?;
    let mut guards = Guards::default();
    let mut pos = 0;
    loop {
        let mut p = Parser {
            toks: &lexer.toks,
            pos,
            defs: &guards.defs,
        };
        if p.peek() == &Tok::End {
            return Ok(guards);
        }
        p.expect_ident_eq("let", "`let`")?;
        let at = p.pos;
        let name = p.ident("a guard name")?;
        if guards.get(&name).is_some() {
            return Err(p.error_at(at, "a name not defined before".into()));
        }
        p.expect(Tok::Sym("="), "`=`")?;
        let f = p.formula()?;
        p.expect(Tok::Sym(";"), "`;` or an operator")?;
        pos = p.pos;
        guards.defs.push((name, f));
    }
}

/// Parses one formula (no `let`s); a whole-input convenience for tests and tools.
pub fn parse_formula(src: &str, defs: &Guards) -> Result<Formula, ParseError> {
    let lexer = lex(src)?;
    let mut p = Parser {
        toks: &lexer.toks,
        pos: 0,
        defs: &defs.defs,
    };
    let f = p.formula()?;
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

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }

    fn formula(&mut self) -> Result<Formula, ParseError> {
        let lhs = self.or()?;
        if self.is_word("S") {
            self.bump();
            let rhs = self.formula()?;
            return Ok(Formula::Since(Box::new(lhs), Box::new(rhs)));
        }
        Ok(lhs)
    }

    fn or(&mut self) -> Result<Formula, ParseError> {
        let mut lhs = self.and()?;
        while *self.peek() == Tok::Sym("|") {
            self.bump();
            lhs = Formula::Or(Box::new(lhs), Box::new(self.and()?));
        }
        Ok(lhs)
    }

    fn and(&mut self) -> Result<Formula, ParseError> {
        let mut lhs = self.unary()?;
        while *self.peek() == Tok::Sym("&") {
            self.bump();
            lhs = Formula::And(Box::new(lhs), Box::new(self.unary()?));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Formula, ParseError> {
        if *self.peek() == Tok::Sym("!") {
            self.bump();
            return Ok(Formula::Not(Box::new(self.unary()?)));
        }
        if self.is_word("Y") || self.is_word("P") {
            let past = self.is_word("P");
            self.bump();
            let f = Box::new(self.unary()?);
            return Ok(if past {
                Formula::Past(f)
            } else {
                Formula::Yesterday(f)
            });
        }
        let remote_term = self.toks.get(self.pos + 2).map(|t| &t.0) == Some(&Tok::Sym("."));
        if *self.peek() == Tok::Sym("@") && !remote_term {
            self.bump();
            let b = self.ident("a lifeline name after `@`")?;
            return Ok(Formula::At(b, Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Formula, ParseError> {
        if *self.peek() == Tok::Sym("(") {
            self.bump();
            let f = self.formula()?;
            self.expect(Tok::Sym(")"), "`)` or an operator")?;
            return Ok(f);
        }
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
        Ok(Formula::Atom(lhs, op, rhs))
    }

    /// `true`, `false` or a name defined by an earlier `let`.
    fn named(&mut self, name: &str, start: usize) -> Result<Formula, ParseError> {
        self.bump();
        match name {
            "true" => Ok(Formula::True),
            "false" => Ok(Formula::False),
            _ => match self.defs.iter().find(|(n, _)| n == name) {
                Some((_, f)) => Ok(f.clone()),
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
        assert_eq!(g.get("rising").unwrap().depth(), 9);
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
}
