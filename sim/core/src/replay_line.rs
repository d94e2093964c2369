//! The one line that replays a trial: scenario, runtime, seed, trial and schedule.
//!
//! `scenario=<path> runtime=<name> seed=<n> trial=<k> schedule=<S1:…> [on_missing=stub]
//! [repeat_max=<n>]`,
//! whitespace-separated `key=value` tokens. A scenario path with whitespace, a quote, a
//! backslash or a control or bidi character is written in double quotes with escapes
//! (`scenario="my runs/q.toml"`, `\"`, `\\`, `\n`, `\u{27}` for `'`), so the line stays one
//! line, replays the same file, and pastes inside `agentsim replay '…'`; a plain path is written
//! as it is. The parser accepts the line as `simulate` prints it, with or without the leading
//! `replay: agentsim replay '…'`. A line replays exactly only against the same scenario
//! file and the same build. `repeat_max` says the line came from the scenario with every
//! agent's `repeat` capped (`Scenario::with_repeat_cap`, `agentsim explore --max-repeat`):
//! a replay applies the same cap.

use crate::scenario::{OnMissing, UnknownOnMissing};
use crate::schedule::{Schedule, ScheduleError};
use agentsim_models::runtime::{Stack, StackError};
use std::fmt;
use std::path::PathBuf;

/// A parsed replay line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayLine {
    pub scenario: PathBuf,
    pub runtime: Stack,
    pub seed: u64,
    pub trial: u64,
    pub schedule: Schedule,
    pub on_missing: Option<OnMissing>,
    /// The repeat cap the scenario ran under, if any.
    pub repeat_max: Option<u32>,
}

impl fmt::Display for ReplayLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "scenario={} runtime={} seed={} trial={} schedule={}",
            quote_path(&self.scenario.display().to_string()),
            self.runtime,
            self.seed,
            self.trial,
            self.schedule
        )?;
        if self.on_missing == Some(OnMissing::Stub) {
            f.write_str(" on_missing=stub")?;
        }
        if let Some(n) = self.repeat_max {
            write!(f, " repeat_max={n}")?;
        }
        Ok(())
    }
}

impl ReplayLine {
    /// The command a user can paste.
    pub fn command(&self) -> String {
        format!("agentsim replay '{self}'")
    }

    /// Parses a replay line; the error names the missing or malformed key.
    pub fn parse(line: &str) -> Result<ReplayLine, ReplayLineError> {
        let (mut scenario, mut runtime, mut seed, mut trial, mut schedule) =
            (None, None, None, None, None);
        let mut on_missing = None;
        let mut repeat_max = None;
        let mut seen: Vec<String> = Vec::new();
        for (k, v) in tokens(line)? {
            let v = v.as_str();
            // A key given twice is a hand-edited or pasted-together line: refuse it here
            // rather than keep the last value and replay a different trial.
            if seen.contains(&k) {
                return Err(ReplayLineError::Duplicate(k.to_owned()));
            }
            seen.push(k.clone());
            let k = k.as_str();
            let num = |v: &str| {
                v.parse::<u64>().map_err(|_| ReplayLineError::NotANumber {
                    key: k.to_owned(),
                    value: v.to_owned(),
                })
            };
            match k {
                "scenario" => scenario = Some(PathBuf::from(v)),
                "runtime" => runtime = Some(Stack::parse(v)?),
                "seed" => seed = Some(num(v)?),
                "trial" => trial = Some(num(v)?),
                "schedule" => schedule = Some(Schedule::parse(v)?),
                "on_missing" => on_missing = Some(OnMissing::parse(v)?),
                "repeat_max" => match num(v)? {
                    n @ 1..=0xFFFF_FFFF => repeat_max = Some(n as u32),
                    _ => return Err(ReplayLineError::RepeatMax(v.to_owned())),
                },
                _ => return Err(ReplayLineError::UnknownKey(k.to_owned())),
            }
        }
        let need = |key: &'static str| ReplayLineError::Missing {
            key,
            line: line.to_owned(),
        };
        Ok(ReplayLine {
            scenario: scenario.ok_or_else(|| need("scenario"))?,
            runtime: runtime.ok_or_else(|| need("runtime"))?,
            seed: seed.ok_or_else(|| need("seed"))?,
            trial: trial.ok_or_else(|| need("trial"))?,
            schedule: schedule.ok_or_else(|| need("schedule"))?,
            on_missing,
            repeat_max,
        })
    }
}

/// Whether a path is written quoted in a replay line.
fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.chars().any(|c| {
            c.is_whitespace()
                || matches!(c, '"' | '\'' | '\\')
                || agentsim_models::text::is_unsafe_char(c)
        })
}

/// `s` as the value of `scenario=`: as it is when plain, else double-quoted with `\"`, `\\`,
/// `\n`, `\r`, `\t` and `\u{…}` for every other space, quote, control or bidi character.
fn quote_path(s: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    if !needs_quotes(s) {
        return s.into();
    }
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' ' => out.push(' '),
            c if c == '\'' || c.is_whitespace() || agentsim_models::text::is_unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out.into()
}

/// The line's `key=value` tokens, split at whitespace outside a double-quoted value and with
/// the quotes of a pasted `'…'` or `"…"` around the line dropped.
fn tokens(line: &str) -> Result<Vec<(String, String)>, ReplayLineError> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        while chars.peek().is_some_and(|&c| c == '\'' || c == '"') {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        let mut has_eq = false;
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            if c == '=' {
                has_eq = true;
                break;
            }
            key.push(c);
        }
        if !has_eq {
            continue;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            value = unquote(&mut chars, &key)?;
            // What may follow: the closing quote of a pasted `'…'`.
            while chars.peek().is_some_and(|&c| c == '\'' || c == '"') {
                chars.next();
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
            let end = value.trim_end_matches(['\'', '"']).len();
            value.truncate(end);
        }
        out.push((key, value));
    }
}

/// A double-quoted value after its opening quote, up to and without its closing one.
fn unquote(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    key: &str,
) -> Result<String, ReplayLineError> {
    let bad = |why: &str| ReplayLineError::Quoted {
        key: key.to_owned(),
        why: why.to_owned(),
    };
    let mut out = String::new();
    loop {
        match chars.next() {
            None => return Err(bad("the quote is not closed")),
            Some('"') => return Ok(out),
            Some('\\') => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    if chars.next() != Some('{') {
                        return Err(bad("`\\u` is not followed by `{`"));
                    }
                    let mut hex = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) if c.is_ascii_hexdigit() && hex.len() < 6 => hex.push(c),
                            _ => return Err(bad("`\\u{…}` holds up to 6 hex digits")),
                        }
                    }
                    let c = u32::from_str_radix(&hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| bad("`\\u{…}` is not a character"))?;
                    out.push(c);
                }
                _ => {
                    return Err(bad(
                        "an unknown escape (known: \\\" \\\\ \\n \\r \\t \\u{…})",
                    ))
                }
            },
            Some(c) => out.push(c),
        }
    }
}

/// A replay line that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayLineError {
    #[error("`{key}={value}` is not a number")]
    NotANumber { key: String, value: String },
    #[error("`repeat_max={0}` is not a repeat cap (1 to 4294967295)")]
    RepeatMax(String),
    #[error("`{key}=\"…\"`: {why}")]
    Quoted { key: String, why: String },
    #[error("unknown key `{0}` in replay line")]
    UnknownKey(String),
    #[error("key `{0}=` appears twice in the replay line; keep one")]
    Duplicate(String),
    #[error("replay line lacks `{key}=`: {line}")]
    Missing { key: &'static str, line: String },
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(transparent)]
    OnMissing(#[from] UnknownOnMissing),
    #[error(transparent)]
    Runtime(#[from] StackError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_prefixes() {
        let l = ReplayLine {
            scenario: "scenarios/examples/edit-review.toml".into(),
            runtime: Stack::parse("vanilla").unwrap(),
            seed: 7,
            trial: 3,
            schedule: Schedule::parse("S1:20:4=1").unwrap(),
            on_missing: Some(OnMissing::Stub),
            repeat_max: None,
        };
        assert_eq!(ReplayLine::parse(&l.to_string()), Ok(l.clone()));
        let capped = ReplayLine {
            repeat_max: Some(2),
            ..l.clone()
        };
        assert!(capped.to_string().ends_with(" repeat_max=2"));
        assert_eq!(ReplayLine::parse(&capped.to_string()), Ok(capped));
        assert!(ReplayLine::parse(&format!("{l} repeat_max=0")).is_err());
        let printed = format!("replay: {}", l.command());
        assert_eq!(ReplayLine::parse(&printed), Ok(l));
        assert!(
            ReplayLine::parse("scenario=x runtime=vanilla seed=1 trial=2")
                .unwrap_err()
                .to_string()
                .contains("schedule")
        );
        assert!(ReplayLine::parse("seed=x")
            .unwrap_err()
            .to_string()
            .contains("number"));
    }

    #[test]
    fn a_duplicated_key_is_named() {
        let line = "scenario=x runtime=vanilla seed=1 trial=2 schedule=S1:3:- seed=4";
        assert_eq!(
            ReplayLine::parse(line),
            Err(ReplayLineError::Duplicate("seed".into()))
        );
        let e = ReplayLine::parse("scenario=a scenario=b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`scenario=` appears twice"), "{e}");
    }

    #[test]
    fn a_path_with_spaces_quotes_or_controls_round_trips_on_one_line() {
        for path in [
            "my runs/q.toml",
            "a\nPASS  x.toml:1  forged.toml",
            "it's \"here\"\\x.toml",
            "tab\there\u{202e}.toml",
            "",
        ] {
            let l = ReplayLine {
                scenario: path.into(),
                runtime: Stack::parse("vanilla").unwrap(),
                seed: 1,
                trial: 0,
                schedule: Schedule::parse("S1:3:-").unwrap(),
                on_missing: None,
                repeat_max: None,
            };
            let text = l.to_string();
            assert!(!text.contains('\n') && !text.contains('\''), "{text}");
            assert_eq!(ReplayLine::parse(&text), Ok(l.clone()), "{text}");
            let pasted = format!("replay: {}", l.command());
            assert_eq!(ReplayLine::parse(&pasted), Ok(l), "{pasted}");
        }
        assert_eq!(
            ReplayLine::parse("scenario=plain.toml runtime=vanilla seed=1 trial=0 schedule=S1:3:-")
                .unwrap()
                .scenario,
            PathBuf::from("plain.toml")
        );
        for bad in [
            "scenario=\"open",
            "scenario=\"\\q\"",
            "scenario=\"\\u{110000}\"",
        ] {
            assert!(
                matches!(ReplayLine::parse(bad), Err(ReplayLineError::Quoted { .. })),
                "{bad}"
            );
        }
    }
}
