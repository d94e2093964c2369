//! `agentsim cpl eval` on hostile guard files: each used to overflow the stack,
//! double in size per line, or panic in the formatter; now each is an error naming file, line
//! and column (exit 2) or runs in bounded time and memory (exit 0).
//! These pin the command on these inputs; the limits themselves are tested in
//! `models/tests/cpl_let_and_depth.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("agentsim-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn eval(guards: &Path, msc: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentsim"))
        .args(["cpl", "eval"])
        .args([guards, msc])
        .output()
        .expect("run agentsim")
}

const MSC: &str = "{\"lifeline\":\"A\",\"kind\":\"act\",\"set\":{\"x\":1}}\n\
                   {\"lifeline\":\"A\",\"kind\":\"act\"}\n";

#[test]
fn deep_guards_are_errors_at_their_line_and_column() {
    let dir = Dir::new("cpl-deep");
    let msc = dir.file("m.jsonl", MSC);
    let ys = dir.file(
        "y.cpl",
        &format!("let a = {}x == 1;\n", "Y ".repeat(30_000)),
    );
    let and = format!("let a = x == 1{};\n", " & x == 1".repeat(29_999));
    let and = dir.file("and.cpl", &and);
    for (path, at, token) in [(&ys, "1:2009", "`Y`"), (&and, "1:9016", "`&`")] {
        let out = eval(path, &msc);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let want = format!("{name}:{at}: expected a formula at most 1000 operators deep");
        assert!(err.contains(&want), "{err}");
        assert!(err.trim_end().ends_with(&format!("found {token}")), "{err}");
    }
    // Parentheses add no depth: ten thousand of them are read on the heap.
    let parens = format!(
        "let a = {}x == 1{};\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let out = eval(&dir.file("p.cpl", &parens), &msc);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("agree on 2 values"));
}

#[test]
fn doubling_lets_stay_linear() {
    let dir = Dir::new("cpl-let");
    let mut src = "let a0 = x == 1;\n".to_owned();
    for i in 1..=30 {
        src.push_str(&format!("let a{i} = a{} & a{};\n", i - 1, i - 1));
    }
    let out = eval(&dir.file("d.cpl", &src), &dir.file("m.jsonl", MSC));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("monitor and reference agree on 62 values"),
        "{text}"
    );
}

#[test]
fn names_longer_than_the_formatters_width_limit_print() {
    let dir = Dir::new("cpl-long");
    let (line, guard) = ("L".repeat(70_000), "g".repeat(70_000));
    let msc = format!(
        "{{\"lifeline\":\"{line}\",\"kind\":\"act\",\"set\":{{\"x\":1}}}}\n\
         {{\"lifeline\":\"B\",\"kind\":\"act\"}}\n"
    );
    let guards = format!("let {guard} = x == 1;\nlet b = @{line}.x == 1;\n");
    let out = eval(&dir.file("g.cpl", &guards), &dir.file("m.jsonl", &msc));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[1],
        format!("    0  {line}  act     true{}  true", " ".repeat(69_996))
    );
    let pad = |n| " ".repeat(n);
    assert_eq!(
        lines[2],
        format!(
            "    1  B{}  act     false{}  false",
            pad(69_999),
            pad(69_995)
        )
    );
}
