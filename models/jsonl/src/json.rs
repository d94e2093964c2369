//! A JSON parser for one line of a history: RFC 8259, into a flat tree with byte positions.
//!
//! `serde_json::Value` cost a map and a string allocation per key and kept no positions, and
//! it silently kept the last of two equal keys. This parser fills a reused [`Tree`]: one
//! [`Node`] per value, in document order, each knowing its byte range and where its subtree
//! ends; strings without escapes are slices of the line (zero copy), escaped ones are decoded
//! into one shared buffer. So an error can name the column, a duplicate key is visible to the
//! reader, and a warm parser allocates nothing per line. Nesting is limited to [`DEPTH_MAX`]
//! (a history needs 3), so no input can overflow the stack. Numbers are checked against the
//! grammar and kept as text: the reader decides what it accepts. A successful parse says the
//! line is JSON; it says nothing about the record schema.

/// How deep arrays and objects may nest.
pub const DEPTH_MAX: u32 = 64;

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool(bool),
    Number,
    String,
    Array,
    Object,
}

/// One JSON value. Children follow their parent; an object's children alternate key, value.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub kind: Kind,
    /// Byte offset of the value's first character in the line.
    pub start: u32,
    /// Byte offset just after it.
    pub end: u32,
    /// Index of the first node after this subtree.
    pub next: u32,
    /// Strings: the decoded text, in the line or (if `escaped`) in the decode buffer.
    text: (u32, u32),
    escaped: bool,
}

/// A syntax error at a byte offset of the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

/// The parsed line (reused from line to line).
#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    decoded: String,
}

impl Tree {
    /// Parses `line` (one JSON value, whitespace around it allowed), replacing the tree.
    pub fn parse(&mut self, line: &str) -> Result<(), SyntaxError> {
        self.nodes.clear();
        self.decoded.clear();
        if line.len() >= u32::MAX as usize {
            return Err(err(0, "line longer than 4 GiB"));
        }
        let mut p = Parser {
            b: line.as_bytes(),
            pos: 0,
            tree: self,
        };
        p.ws();
        p.value(0)?;
        p.ws();
        if p.pos < p.b.len() {
            return Err(err(p.pos, "trailing characters after the JSON value"));
        }
        Ok(())
    }

    /// The decoded text of string node `i`.
    pub fn str<'a>(&'a self, line: &'a str, i: usize) -> &'a str {
        let n = &self.nodes[i];
        let (a, b) = (n.text.0 as usize, n.text.1 as usize);
        if n.escaped {
            &self.decoded[a..b]
        } else {
            &line[a..b]
        }
    }

    /// The children of array or object node `i` (for objects: the keys; a key's value is the
    /// node after it).
    pub fn children(&self, i: usize) -> Children<'_> {
        Children {
            tree: self,
            at: i + 1,
            end: self.nodes[i].next as usize,
            object: self.nodes[i].kind == Kind::Object,
        }
    }
}

/// Iterator over an array's items or an object's keys.
pub struct Children<'a> {
    tree: &'a Tree,
    at: usize,
    end: usize,
    object: bool,
}

impl Iterator for Children<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.at >= self.end {
            return None;
        }
        let i = self.at;
        let after = self.tree.nodes[i].next as usize;
        self.at = match self.object {
            true => self.tree.nodes[after].next as usize,
            false => after,
        };
        Some(i)
    }
}

fn err(offset: usize, message: &str) -> SyntaxError {
    SyntaxError {
        offset,
        message: message.to_owned(),
    }
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    tree: &'a mut Tree,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, kind: Kind, start: usize) -> usize {
        self.tree.nodes.push(Node {
            kind,
            start: start as u32,
            end: start as u32,
            next: 0,
            text: (0, 0),
            escaped: false,
        });
        self.tree.nodes.len() - 1
    }

    fn close(&mut self, i: usize) {
        let next = self.tree.nodes.len() as u32;
        let n = &mut self.tree.nodes[i];
        n.end = self.pos as u32;
        n.next = next;
    }

    fn value(&mut self, depth: u32) -> Result<(), SyntaxError> {
        let start = self.pos;
        match self.b.get(start) {
            None => Err(err(start, "expected a value, found the end of the line")),
            Some(b'{') => self.container(Kind::Object, depth),
            Some(b'[') => self.container(Kind::Array, depth),
            Some(b'"') => self.string(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Kind::Bool(true)),
            Some(b'f') => self.literal("false", Kind::Bool(false)),
            Some(b'n') => self.literal("null", Kind::Null),
            Some(_) => Err(err(start, "expected a value")),
        }
    }

    fn literal(&mut self, word: &str, kind: Kind) -> Result<(), SyntaxError> {
        let start = self.pos;
        if !self.b[start..].starts_with(word.as_bytes()) {
            return Err(err(start, "expected a value"));
        }
        let i = self.push(kind, start);
        self.pos += word.len();
        self.close(i);
        Ok(())
    }

    fn number(&mut self) -> Result<(), SyntaxError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let from = p.pos;
            while p.b.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos > from
        };
        if self.b[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => _ = digits(self),
            _ => return Err(err(self.pos, "expected a digit")),
        }
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(err(self.pos, "expected a digit after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(err(self.pos, "expected a digit in the exponent"));
            }
        }
        let i = self.push(Kind::Number, start);
        self.close(i);
        Ok(())
    }

    fn string(&mut self) -> Result<(), SyntaxError> {
        let start = self.pos;
        let i = self.push(Kind::String, start);
        self.pos += 1;
        let from = self.pos;
        loop {
            match self.b.get(self.pos) {
                None => return Err(err(start, "unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => return self.escaped_string(i, from),
                Some(&c) if c < 0x20 => {
                    return Err(err(self.pos, "control character inside a string"))
                }
                Some(_) => self.pos += 1,
            }
        }
        self.tree.nodes[i].text = (from as u32, self.pos as u32);
        self.pos += 1;
        self.close(i);
        Ok(())
    }

    /// The rest of a string that has an escape: decoded into the shared buffer.
    fn escaped_string(&mut self, i: usize, from: usize) -> Result<(), SyntaxError> {
        let out_start = self.tree.decoded.len();
        let mut seg = from;
        loop {
            match self.b.get(self.pos) {
                None => {
                    return Err(err(
                        self.tree.nodes[i].start as usize,
                        "unterminated string",
                    ))
                }
                Some(b'"') => break,
                Some(b'\\') => {
                    self.flush(seg);
                    self.escape()?;
                    seg = self.pos;
                }
                Some(&c) if c < 0x20 => {
                    return Err(err(self.pos, "control character inside a string"))
                }
                Some(_) => self.pos += 1,
            }
        }
        self.flush(seg);
        let n = &mut self.tree.nodes[i];
        n.text = (out_start as u32, self.tree.decoded.len() as u32);
        n.escaped = true;
        self.pos += 1;
        self.close(i);
        Ok(())
    }

    /// Copies the unescaped bytes `seg..pos` (whole UTF-8 characters: they end before an
    /// ASCII backslash or quote) into the buffer.
    fn flush(&mut self, seg: usize) {
        let text = std::str::from_utf8(&self.b[seg..self.pos]).expect("a line is UTF-8");
        self.tree.decoded.push_str(text);
    }

    fn escape(&mut self) -> Result<(), SyntaxError> {
        let at = self.pos;
        let c = match self.b.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(),
            _ => return Err(err(at, "invalid escape")),
        };
        self.tree.decoded.push(c);
        self.pos += 2;
        Ok(())
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.b.get(at..at + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(text, 16).ok()
    }

    /// `\uXXXX`, or a surrogate pair `\uD8XX\uDCXX`; a lone surrogate is an error.
    fn unicode_escape(&mut self) -> Result<(), SyntaxError> {
        let at = self.pos;
        let bad = |m| Err(err(at, m));
        let Some(hi) = self.hex4(at + 2) else {
            return bad("invalid \\u escape (four hex digits expected)");
        };
        let (code, len) = match hi {
            0xD800..=0xDBFF => {
                let lo = match self.b.get(at + 6..at + 8) {
                    Some(b"\\u") => self.hex4(at + 8),
                    _ => None,
                };
                match lo {
                    Some(lo @ 0xDC00..=0xDFFF) => {
                        (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 12)
                    }
                    _ => return bad("lone leading surrogate in \\u escape"),
                }
            }
            0xDC00..=0xDFFF => return bad("lone trailing surrogate in \\u escape"),
            _ => (hi, 6),
        };
        let c = char::from_u32(code).expect("surrogates excluded");
        self.tree.decoded.push(c);
        self.pos += len;
        Ok(())
    }

    fn container(&mut self, kind: Kind, depth: u32) -> Result<(), SyntaxError> {
        let start = self.pos;
        if depth >= DEPTH_MAX {
            return Err(err(start, "nested deeper than 64 levels"));
        }
        let i = self.push(kind, start);
        let (close, what) = match kind {
            Kind::Object => (b'}', "expected `,` or `}`"),
            _ => (b']', "expected `,` or `]`"),
        };
        self.pos += 1;
        self.ws();
        if self.b.get(self.pos) == Some(&close) {
            self.pos += 1;
            self.close(i);
            return Ok(());
        }
        loop {
            if kind == Kind::Object {
                self.key()?;
            }
            self.value(depth + 1)?;
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(&c) if c == close => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(err(self.pos, what)),
            }
        }
        self.close(i);
        Ok(())
    }

    fn key(&mut self) -> Result<(), SyntaxError> {
        if self.b.get(self.pos) != Some(&b'"') {
            return Err(err(self.pos, "expected a key (a string)"));
        }
        self.string()?;
        self.ws();
        if self.b.get(self.pos) != Some(&b':') {
            return Err(err(self.pos, "expected `:`"));
        }
        self.pos += 1;
        self.ws();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Tree, SyntaxError> {
        let mut t = Tree::default();
        t.parse(line).map(|()| t)
    }

    #[test]
    fn objects_arrays_strings_positions() {
        let line = r#" {"a": [1, -2.5e3, true, null], "b\u00e9\n": "x\"y", "c": {}} "#;
        let t = parse(line).unwrap();
        assert_eq!(t.nodes[0].kind, Kind::Object);
        let keys: Vec<&str> = t.children(0).map(|k| t.str(line, k)).collect();
        assert_eq!(keys, ["a", "bé\n", "c"]);
        let arr = 2;
        assert_eq!(t.nodes[arr].kind, Kind::Array);
        assert_eq!(t.children(arr).count(), 4);
        let x = t.children(0).nth(1).map(|k| k + 1).unwrap();
        assert_eq!(t.str(line, x), "x\"y");
        assert_eq!(
            &line[t.nodes[x].start as usize..t.nodes[x].end as usize],
            r#""x\"y""#
        );
        assert_eq!(t.nodes[0].next as usize, t.nodes.len());
    }

    #[test]
    fn errors_have_offsets() {
        let cases = [
            ("{\"a\":", 5),
            ("{\"a\" 1}", 5),
            ("[1,]", 3),
            ("[01]", 2),
            ("\"\\x\"", 1),
            ("\"\\ud800\"", 1),
            ("{} x", 3),
            ("\"a\tb\"", 2),
            ("", 0),
        ];
        for (line, offset) in cases {
            let e = parse(line).unwrap_err();
            assert_eq!(e.offset, offset, "{line:?}: {e:?}");
        }
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).unwrap_err().message.contains("deeper"));
        assert_eq!(
            parse("\"\\ud83d\\ude00\"").map(|t| t.str("", 0).to_owned()),
            Ok("😀".into())
        );
    }
}
