//! Text output that a name cannot forge.
//!
//! Names and values come from the history, the trace or the scenario, and a text report prints
//! them inside its own lines. A name holding a newline could plant a line of its own (an
//! `exhibits: {}` above the real one), and a bidi control could make a line read differently
//! from its bytes. [`escape_text`] is the one function every text report passes a name or a
//! value through; JSON output needs none (its strings are escaped by the encoder).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is escaped: a control character (Unicode category Cc: U+0000–U+001F,
/// U+007F–U+009F) or a bidirectional formatting character (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069), the ones that move or hide text on a terminal.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every [`is_unsafe_char`] written as Rust writes it in a literal: `\n`, `\r`,
/// `\t`, `\0`, else `\u{…}` in lowercase hex (`\u{202e}`). Every other character, a
/// backslash included, is kept, so a name without such characters prints byte for byte as
/// it is, and borrowed (no copy).
pub fn escape_text(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if is_unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_borrowed_unchanged() {
        for s in ["", "agent-1", "v\\n", "ünïcødé ✓", "a b\u{a0}c"] {
            assert!(
                matches!(escape_text(s), Cow::Borrowed(x) if x == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn controls_and_bidi_are_escaped() {
        assert_eq!(escape_text("x\nexhibits: {}"), "x\\nexhibits: {}");
        assert_eq!(escape_text("a\r\tb\0"), "a\\r\\tb\\0");
        assert_eq!(
            escape_text("\u{1b}[2J\u{7f}\u{85}"),
            "\\u{1b}[2J\\u{7f}\\u{85}"
        );
        assert_eq!(
            escape_text("ab\u{202e}dc\u{2066}\u{2069}\u{200e}\u{200f}\u{061c}"),
            "ab\\u{202e}dc\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}"
        );
        for c in ('\u{0}'..='\u{10ffff}').filter(|&c| is_unsafe_char(c)) {
            let e = escape_text(&c.to_string()).into_owned();
            assert!(!e.chars().any(is_unsafe_char), "{c:?} -> {e:?}");
        }
    }
}
