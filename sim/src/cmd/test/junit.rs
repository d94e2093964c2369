//! The suite as JUnit XML, the format GitHub's and GitLab's test reporters read: one
//! `testsuite` per file, one `testcase` per expectation (its `file` and `line` attributes
//! locate it), a `failure` element with the evidence and the witness's replay line, an
//! `error` element for a case that cannot be told, and a `skipped` case for a skipped file.
//!
//! No timestamps or durations: the file is the same bytes for the same suite, whatever the
//! machine, thread count or sharding.

use super::case::{CaseResult, Outcome};
use super::report::{FileReport, Report};
use std::fmt::Write as _;

/// The JUnit XML of a report.
pub fn render(r: &Report) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"agentsim test\" tests=\"{}\" failures=\"{}\" errors=\"{}\" \
         skipped=\"{}\">",
        r.cases() + r.skipped,
        r.failed,
        r.cannot_tell,
        r.skipped
    );
    for f in &r.files {
        suite(&mut s, f);
    }
    s.push_str("</testsuites>\n");
    s
}

fn suite(s: &mut String, f: &FileReport) {
    let count = |o: Outcome| f.cases.iter().filter(|c| c.outcome == o).count();
    let skipped = usize::from(f.skipped.is_some());
    let file = esc(&f.file);
    let _ = writeln!(
        s,
        "  <testsuite name=\"{file}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{skipped}\">",
        f.cases.len() + skipped,
        count(Outcome::Fail),
        count(Outcome::CannotTell)
    );
    if let Some(why) = &f.skipped {
        let _ = writeln!(
            s,
            "    <testcase classname=\"{file}\" name=\"{file}\" file=\"{file}\">\n      \
             <skipped message=\"{}\"/>\n    </testcase>",
            esc(why)
        );
    }
    for c in &f.cases {
        case(s, &file, c);
    }
    s.push_str("  </testsuite>\n");
}

fn case(s: &mut String, file: &str, c: &CaseResult) {
    let name = esc(&format!("{} (line {})", c.name, c.line));
    let _ = writeln!(
        s,
        "    <testcase classname=\"{file}\" name=\"{name}\" file=\"{file}\" line=\"{}\">",
        c.line
    );
    let mut body = format!("{file}:{}: {}", c.line, c.evidence);
    if let Some(r) = &c.replay {
        let _ = write!(body, "\nreplay: {r}");
    }
    match c.outcome {
        Outcome::Pass => {
            let _ = writeln!(s, "      <system-out>{}</system-out>", esc_text(&body));
        }
        Outcome::Fail => {
            let _ = writeln!(
                s,
                "      <failure type=\"expectation\" message=\"{}\">{}</failure>",
                esc(&c.evidence),
                esc_text(&body)
            );
        }
        Outcome::CannotTell => {
            let _ = writeln!(
                s,
                "      <error type=\"cannot tell\" message=\"{}\">{}</error>",
                esc(&c.evidence),
                esc_text(&body)
            );
        }
    }
    s.push_str("    </testcase>\n");
}

/// Escaping for element text: line breaks stay line breaks.
pub fn esc_text(t: &str) -> String {
    t.split('\n').map(esc).collect::<Vec<_>>().join("\n")
}

/// XML attribute escaping (line breaks as `&#10;`, which attribute normalisation keeps); control characters XML 1.0 cannot hold become `?`.
pub fn esc(t: &str) -> String {
    let mut o = String::with_capacity(t.len());
    for ch in t.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\n' => o.push_str("&#10;"),
            '\t' => o.push_str("&#9;"),
            c if (c as u32) < 0x20 => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_markup_out() {
        assert_eq!(
            esc("a<b>&\"c' \n\u{1}"),
            "a&lt;b&gt;&amp;&quot;c&apos; &#10;?"
        );
    }
}
