//! `agentsim view INPUT -o FILE.html`: one self-contained HTML page to look at one run with —
//! a history, an ingested trace, a checker counterexample or a simulated schedule.
//!
//! The input is read by the readers the other commands use and explained by them: a history
//! or trace by `detect` ([`super::detect::explain`], its text report and witness lines), a
//! counterexample (ITF, from `check --trace-out`) by replaying its path under the `check` flags
//! given after `--`, a replay line by re-running the trial as `replay` does. The page
//! ([`crate::view`]) draws what they found; it finds nothing itself.
//!
//! `--agents`, `--cells` and `--window FROM..TO` narrow what is drawn (detection always runs on
//! the whole input). An input with more than [`crate::view::RECORDS_MAX`] records to draw is
//! refused, exit 2, with a message naming those flags: a page that big would hang a browser.
//! Exit 0 when the page is written (whatever it shows), 2 on bad input; the file is written
//! atomically, so a failed run leaves no partial page.

pub mod bench;
pub mod gallery;
mod inputs;

use crate::artifacts::output::{preflight, write_atomic};
use crate::artifacts::paths::Paths;
use crate::view::{self, Page, RECORDS_MAX};
use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use inputs::{page_of, page_of_history, page_of_trace};

/// Write one HTML page showing a history, trace, counterexample or schedule.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// A JSON Lines history; with `--from`, a trace; an ITF counterexample (`check
    /// --trace-out`); or a replay line (as `simulate` and `shrink` print it) or a file whose
    /// first line is one.
    pub input: String,
    /// The page to write.
    #[arg(short = 'o', long = "out", value_name = "FILE.html")]
    pub out: PathBuf,
    /// `--from` and what is read beside INPUT, as `detect` takes them.
    #[command(flatten)]
    pub input_from: super::input::FromArgs,
    /// Draw only these agents' operations (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub agents: Vec<String>,
    /// Draw only operations that read or write one of these cells (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub cells: Vec<String>,
    /// Draw only operations whose read-to-commit span meets FROM..TO (log time, inclusive).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_window)]
    pub window: Option<(u64, u64)>,
    /// For an ITF counterexample: the `agentsim check` flags that wrote it (after `--`), so
    /// its path replays with the checker's step names and verdicts.
    #[arg(last = true, value_name = "CHECK FLAGS")]
    pub check_flags: Vec<String>,
}

/// What is drawn of the records: the narrowing flags, validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Narrow {
    pub agents: Vec<String>,
    pub cells: Vec<String>,
    pub window: Option<(u64, u64)>,
}

impl Narrow {
    fn is_all(&self) -> bool {
        self.agents.is_empty() && self.cells.is_empty() && self.window.is_none()
    }

    /// Keeps the records it selects, saying so in the page's notes; refuses a name no record
    /// has, and a page with more than [`RECORDS_MAX`] records.
    pub fn apply(&self, page: &mut Page, file: &str) -> Result<()> {
        known(
            file,
            "--agents",
            &self.agents,
            page.records.iter().map(|r| &r.agent),
        )?;
        let cells = page
            .records
            .iter()
            .flat_map(|r| r.reads.iter().chain(&r.writes));
        known(file, "--cells", &self.cells, cells.map(|(c, _)| c))?;
        let keep = |r: &view::Rec| {
            let agent = self.agents.is_empty() || self.agents.contains(&r.agent);
            let mut touched = r.reads.iter().chain(&r.writes).map(|(c, _)| c);
            let cell = self.cells.is_empty() || touched.any(|c| self.cells.contains(c));
            let time = self
                .window
                .is_none_or(|(from, to)| r.write_time >= from && r.read_time <= to);
            agent && cell && time
        };
        page.records.retain(keep);
        if !self.is_all() {
            page.notes.push(format!(
                "Narrowed to {} of {} records ({}); anomalies are detected on the whole input.",
                page.records.len(),
                page.total_records,
                self.describe()
            ));
        }
        if page.records.len() > RECORDS_MAX {
            let span = page.records.iter().map(|r| r.write_time).max().unwrap_or(0);
            bail!(
                "{file}: {} records to draw, more than one page shows ({RECORDS_MAX}): narrow \
                 it with --agents NAME,…, --cells NAME,… or --window FROM..TO (log time; this \
                 input spans 0..{span})",
                page.records.len()
            );
        }
        Ok(())
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.agents.is_empty() {
            parts.push(format!("agents {}", self.agents.join(", ")));
        }
        if !self.cells.is_empty() {
            parts.push(format!("cells {}", self.cells.join(", ")));
        }
        if let Some((from, to)) = self.window {
            parts.push(format!("log time {from}..{to}"));
        }
        parts.join("; ")
    }
}

/// Every name of `asked` is one of `have`, or the error lists some that are.
fn known<'a>(
    file: &str,
    flag: &str,
    asked: &[String],
    have: impl Iterator<Item = &'a String>,
) -> Result<()> {
    let have: std::collections::BTreeSet<&String> = have.collect();
    if let Some(missing) = asked.iter().find(|a| !have.contains(a)) {
        let some: Vec<&str> = have.iter().take(12).map(|s| s.as_str()).collect();
        bail!(
            "{flag} {missing}: {file} has no such name (it has {}{})",
            some.join(", "),
            if have.len() > some.len() { ", …" } else { "" }
        );
    }
    Ok(())
}

/// `FROM..TO`, log times, FROM ≤ TO.
fn parse_window(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{s}`: expected FROM..TO, two log times with FROM <= TO (e.g. 100..250)");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let (a, b) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// What INPUT is, decided once from the flags and the file.
enum Input {
    History(PathBuf),
    Trace(PathBuf, agentsim_ingest::Options),
    Counterexample(PathBuf),
    Replay(String),
}

fn input_of(args: &Args) -> Result<Input> {
    let options = args.input_from.options()?;
    let path = PathBuf::from(&args.input);
    if options.from.is_some() {
        return Ok(Input::Trace(path, options));
    }
    if args.input.contains("scenario=") {
        return Ok(Input::Replay(args.input.clone()));
    }
    if !path.is_file() {
        bail!(
            "{}: no such file (INPUT is a history, a trace with --from, an ITF file, or a \
             replay line)",
            args.input
        );
    }
    let head = first_bytes(&path)?;
    let text = String::from_utf8_lossy(&head);
    let first_line = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first_line.starts_with("scenario=") {
        return Ok(Input::Replay(args.input.clone()));
    }
    let itf = text.trim_start().starts_with('{') && text.contains("\"#meta\"");
    if itf && !first_line.contains("\"agent\"") {
        return Ok(Input::Counterexample(path));
    }
    Ok(Input::History(path))
}

fn first_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let mut buf = vec![0; 4096];
    let n = f
        .read(&mut buf)
        .with_context(|| format!("{}", path.display()))?;
    buf.truncate(n);
    Ok(buf)
}

/// Runs the command.
pub fn run(args: Args) -> Result<ExitCode> {
    let input = input_of(&args)?;
    if !matches!(input, Input::Counterexample(_)) && !args.check_flags.is_empty() {
        bail!(
            "the flags after `--` are the `check` flags of an ITF counterexample; INPUT is not one"
        );
    }
    // A replay line's input is the scenario it names (and the files that scenario reads): a
    // line that does not parse is reported where it is read.
    let mut paths = match &input {
        Input::Replay(line) => match agentsim_sim::replay_line::ReplayLine::parse(line) {
            Ok(l) => Paths::new().scenario(&l.scenario),
            Err(_) => Paths::new(),
        },
        _ => Paths::new().input("INPUT", Path::new(&args.input)),
    };
    if let Input::Trace(_, options) = &input {
        paths = super::input::beside_paths(paths, options);
    }
    paths.output("-o", Some(&args.out)).check()?;
    preflight(&args.out).context("-o")?;
    let narrow = Narrow {
        agents: args.agents.clone(),
        cells: args.cells.clone(),
        window: args.window,
    };
    let file = args.input.clone();
    let mut page = match &input {
        Input::History(p) => page_of_history(p)?,
        Input::Trace(p, source) => page_of_trace(p, source)?,
        Input::Counterexample(p) => inputs::page_of_itf(p, &args.check_flags)?,
        Input::Replay(line) => inputs::page_of_replay(line)?,
    };
    narrow.apply(&mut page, &file)?;
    let html = view::render(&page);
    write_atomic(&args.out, html.as_bytes())
        .with_context(|| format!("-o {}", args.out.display()))?;
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    // Anomalies (A1, a checker property) and their witnesses apart; L1_struct is a structural
    // condition, not an anomaly. An input that decides nothing says so.
    let mut kinds: Vec<&str> = Vec::new();
    for a in &page.anomalies {
        if a.list != "L1_struct" && !kinds.contains(&a.list.as_str()) {
            kinds.push(&a.list);
        }
    }
    let found = match &page.undecided {
        Some(why) => agentsim_models::escape_text(why).into_owned(),
        None if kinds.is_empty() => "no anomaly".to_owned(),
        None => format!(
            "{} ({}), {}",
            n(kinds.len(), "anomaly", "anomalies"),
            agentsim_models::escape_text(&kinds.join(", ")),
            n(page.anomalies.len(), "witness", "witnesses")
        ),
    };
    eprintln!(
        "view: {}: {}, {found}, {} -> {} ({} bytes)",
        agentsim_models::escape_text(&page.title),
        n(page.records.len(), "record", "records"),
        n(page.steps.len(), "step", "steps"),
        crate::artifacts::paths::shown(&args.out),
        html.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_and_refuse_reversed_bounds() {
        assert_eq!(parse_window("3..9"), Ok((3, 9)));
        assert_eq!(parse_window("4..4"), Ok((4, 4)));
        assert!(parse_window("9..3").is_err());
        assert!(parse_window("9").is_err());
        assert!(parse_window("a..b").is_err());
    }
}
