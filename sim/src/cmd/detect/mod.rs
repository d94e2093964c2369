//! `agentsim detect FILE.jsonl`: every anomaly of a recorded history, the set it exhibits, its
//! level.
//!
//! Reads a JSON Lines history (schema `models/schema/history-v1.schema.json`), runs the fast
//! detectors (or the spec form with `--spec`), and prints each anomaly with its witness records
//! by name, the exact set of anomalies exhibited (`exhibits`, SPEC §4; a *lattice point* is a
//! consistency model, the set a model excludes, as `agentsim lattice` prints them) and the
//! level (the highest Lk of the named chain). `L1_struct` is reported in the text output as a diagnostic;
//! the A3 residue form only with `--residue` (it over-approximates A3 and is not part of the
//! exhibited set). Exit 0; 1 if `--fail-on` names an anomaly that is present; 2 on bad input.
//! A clean report says the history exhibits none of A1, A2, A3, A6 *as defined*; it says nothing
//! about histories the shim did not record.
//!
//! A4 (split view, SPEC §6) is reported only for histories with replica metadata (some record
//! has `read_replica`/`read_version`): then the text output gains an "A4 split-view" section and
//! `--json` an `A4` key inside `anomalies` (an array, empty when there is no split). A4 is
//! outside the lattice, so it changes neither `exhibits` nor `level`. On a single-store
//! history `--fail-on A4` is exit 2 after the report: A4 compares reads served by different
//! replicas, and a history without `read_replica`/`read_version` cannot show one, so its
//! absence there is no pass (a gate must not read it as one).
//!
//! Every witness is counted; at most `--max-witnesses` per anomaly are listed (the first in
//! completion order, see `models/src/detect/witnesses.rs`), and the output says how many were
//! left out (`left_out` in `--json`). `--json` also carries `L1_struct` (`holds`, `violations`).
//! The file is read and detected in one pass ([`batch`]), in memory bounded by the detector's
//! state, not the file; `--stream` follows a growing file or stdin instead ([`stream`]). Both
//! parse on `--threads` workers (default: the cores, at least 2); the output is the same bytes
//! whatever the count.
//! A closed stdout (`agentsim detect FILE | head`) ends the run quietly.

pub(crate) mod batch;
mod render;
mod stream;

use crate::verdicts::{reported, Verdicts};
use agentsim_ingest::Report;
use agentsim_jsonl as jsonl;
use agentsim_models::detect::stream::{Found, Limits};
pub(crate) use agentsim_models::detect::witnesses::MAX_WITNESSES_DEFAULT;
use agentsim_models::detect::{spec, Summary, Witnesses};
use agentsim_models::lattice::{self, Point};
use agentsim_models::{Anomaly, History, ValueMap, Verdict};
use clap::Args as ClapArgs;
use render::{FromHistory, Render};
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Detect anomalies in a JSON Lines history.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The history: one operation record per line (see docs/ingest.md, "History format"); `-`
    /// reads stdin. With `--from`, a trace file or checkpoint database instead.
    pub file: PathBuf,
    /// `--from` and what is read beside the input: the flags `ingest`, `fit`, `fix` and
    /// `view` take too.
    #[command(flatten)]
    pub input: super::input::FromArgs,
    /// The report `agentsim ingest --report` wrote with FILE (or the recorder's): the verdicts
    /// then weigh what the input could decide, as with `--from` (docs/ingest.md, "Saved
    /// histories").
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = ["from", "stream"])]
    pub ingest_report: Option<PathBuf>,
    /// Print one JSON object: `anomalies`, `exhibits`, `level`, `L1_struct`, `left_out`.
    #[arg(long)]
    pub json: bool,
    /// Also report the A3 residue form (reads of values nobody had written).
    #[arg(long)]
    pub residue: bool,
    /// Exit 1 if any of these anomalies is present (comma-separated: A1,A2,A3,A4,A6); exit 2
    /// if one of them cannot be told on this history (see `--allow-cannot-tell`).
    #[arg(long, value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<Anomaly>,
    #[command(flatten)]
    pub gate: super::gate::GateArgs,
    /// Use the spec-form detectors (quadratic; for cross-checking small histories).
    #[arg(long)]
    pub spec: bool,
    /// List at most this many witnesses per anomaly (all are counted).
    #[arg(long, default_value_t = MAX_WITNESSES_DEFAULT)]
    pub max_witnesses: usize,
    /// Read the history as it grows (like `tail -f`; `-` for stdin) and print each witness as
    /// soon as the record that completes it arrives.
    #[arg(long, conflicts_with_all = ["spec", "from", "tool_memory", "mcp_log"])]
    pub stream: bool,
    /// With --stream: the longest read-to-commit window (write_time − read_time) a record may
    /// have, in ticks; writes older than that are dropped.
    #[arg(long, default_value_t = 1_000_000, requires = "stream")]
    pub window_max: u64,
    /// With --stream: the most writes and waiting reads kept at once.
    #[arg(long, default_value_t = 4_194_304, requires = "stream")]
    pub live_max: usize,
    /// With --stream on a file: stop once it has not grown for this many milliseconds.
    #[arg(long, default_value_t = 1000, requires = "stream")]
    pub idle_ms: u64,
    /// Threads parsing the history, 1..=256 (the output does not depend on it); default: the
    /// machine's cores, at least 2.
    #[arg(long, value_parser = crate::limits::threads)]
    pub threads: Option<usize>,
    /// Progress on stderr while a history file is read (bytes and records done, rate, time
    /// left): `--progress` from the start, else on a terminal once a run passes 2 s.
    #[command(flatten)]
    pub progress: super::progress::ProgressArgs,
}

/// How the batch path reads and keeps, from the flags.
fn batch_config(args: &Args) -> batch::Config {
    batch::Config {
        threads: threads(args),
        max_witnesses: args.max_witnesses,
        residue: args.residue,
        progress: args.progress,
    }
}

/// The parse threads: `--threads`, else the cores (at least 2: one parses while the other
/// detects).
fn threads(args: &Args) -> usize {
    args.threads
        .unwrap_or_else(|| crate::limits::default_threads().max(2))
}

/// A `--fail-on` name: any anomaly of the catalogue the text and JSON report.
pub(crate) fn parse_fail_on(s: &str) -> Result<Anomaly, String> {
    match Anomaly::parse(s) {
        Some(a) if reported(a) => Ok(a),
        _ => Err(format!(
            "unknown anomaly `{s}` (expected {})",
            fail_on_names()
        )),
    }
}

/// "A1, A2, A3, A4 or A6".
fn fail_on_names() -> String {
    let names: Vec<&str> = Anomaly::ALL
        .into_iter()
        .filter(|&a| reported(a))
        .map(Anomaly::name)
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(", "),
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let file = args.file.display().to_string();
    let options = args.input.options()?;
    if args.stream {
        if args.progress.progress {
            // The stream prints its witnesses as it reads; a terminal would get both.
            anyhow::bail!("--progress applies to a history read whole, not to --stream");
        }
        let cfg = stream::Config {
            limits: Limits {
                max_witnesses: args.max_witnesses,
                window_max: args.window_max,
                live_max: args.live_max,
            },
            residue: args.residue,
            json: args.json,
            idle: std::time::Duration::from_millis(args.idle_ms),
            threads: threads(&args),
        };
        return stream::run(&args.file, cfg, &args.fail_on, args.gate);
    }
    // Errors already name the file, the line, the column and the key.
    let mut ingest = None;
    let saved = args.ingest_report.as_deref();
    let saved = saved.map(agentsim_ingest::saved::read_report).transpose()?;
    // A saved trace's initial state is by name: the history is read whole to resolve it.
    let initial = saved.as_ref().is_some_and(|r| !r.initial.is_empty());
    let outcome = if options.from.is_some() || args.spec || is_stdin(&args.file) || initial {
        let (mut h, report) = super::input::read(&args.file, &options)?;
        ingest = report;
        if let (Some(r), Some(path)) = (saved.as_ref(), &args.ingest_report) {
            let mut r = super::input::count_checked(r.clone(), path, h.len() as u64)?;
            r.initial
                .resolve(&mut h.names)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            ingest = Some(r);
        }
        history_outcome(h, initial_of(ingest.as_ref()), &file, &args)?
    } else {
        let f = std::fs::File::open(&args.file).map_err(|source| jsonl::JsonlError::Io {
            file: file.clone(),
            source,
        })?;
        let expect = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
        batch::run(f, &file, expect, batch_config(&args))?
    };
    if let (Some(r), Some(path), None) = (saved, &args.ingest_report, &ingest) {
        ingest = Some(super::input::count_checked(
            r,
            path,
            outcome.summary.records,
        )?);
    }
    let verdicts = Verdicts::of(&outcome.summary, &file, ingest.as_ref());
    let printed = match args.json {
        true => {
            let mut v = to_json(&outcome, &verdicts, args.residue);
            if let Some(ingest) = &ingest {
                v["ingest"] = ingest.to_json();
            }
            serde_json::to_string_pretty(&v)? + "\n"
        }
        false => {
            let head = ingest.as_ref().map(|i| i.to_text()).unwrap_or_default();
            head + &text(&file, &outcome, &verdicts, args.residue)
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(printed.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        r => r?,
    }
    drop(out);
    Ok(gate(&verdicts, &args.fail_on, args.gate))
}

/// The `--fail-on` gate: 1 if a named anomaly is violated, else 2 if one cannot be told on
/// this history (unless `--allow-cannot-tell`), else 0; each *cannot tell* is said on stderr
/// with its reason, so that the absence of a witness is never read as a pass.
fn gate(v: &Verdicts, fail_on: &[Anomaly], gate: super::gate::GateArgs) -> ExitCode {
    gate.finish("--fail-on", &v.gated(fail_on))
}

/// Whether an error is a write to a closed pipe (the reader of stdout went away).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn is_stdin(file: &std::path::Path) -> bool {
    file.as_os_str() == "-"
}

/// The outcome for a history already in memory (stdin, `--from`, or `--spec`): the spec form
/// with `--spec` (it is quadratic: small histories only), else the one-pass stream detector over
/// its records in log order, as a file's are. An ingested history is first held to the
/// structure the reader holds a file to ([`History::validate`], [`History::validate_effects`]).
fn history_outcome(
    h: History,
    initial: &ValueMap,
    file: &str,
    args: &Args,
) -> anyhow::Result<batch::Outcome> {
    h.validate()
        .and_then(|()| h.validate_effects())
        .map_err(|e| anyhow::anyhow!("{file}: the history it gives is malformed: {e}"))?;
    if !args.spec {
        return batch::in_memory(h, initial, file, batch_config(args));
    }
    let summary = spec::summary_from(&h, initial, args.max_witnesses, args.residue);
    let from = FromHistory(&h);
    let s = &summary;
    let mut kept: Vec<Found> = Vec::new();
    for a in Anomaly::ALL {
        match a {
            Anomaly::A1 => kept.extend(s.a1.kept.iter().map(|&w| from.a1(w))),
            Anomaly::A2 => kept.extend(s.a2.kept.iter().map(|&w| from.a2(w))),
            Anomaly::A3 => kept.extend(s.a3.kept.iter().map(|&w| from.a3(w))),
            Anomaly::A3Residue => kept.extend(s.a3_residue.kept.iter().map(|&w| from.residue(w))),
            Anomaly::A4 => kept.extend(s.a4.kept.iter().map(|&w| from.a4(w))),
            Anomaly::A6 => kept.extend(s.a6.kept.iter().map(|&w| from.a6(w))),
        }
    }
    kept.extend(s.l1_struct.kept.iter().map(|&w| from.l1(w)));
    Ok(batch::Outcome {
        summary,
        kept,
        names: h.names,
    })
}

/// The state an ingested history began in (all-NULL for one that starts empty: a JSON Lines
/// history, or a trace that shows nothing of it).
fn initial_of(ingest: Option<&Report>) -> &ValueMap {
    static EMPTY: ValueMap = ValueMap::new();
    ingest.map_or(&EMPTY, |r| &r.initial.values)
}

/// The kept witnesses of one list, in printing order (A4 by witness, as it always printed).
fn list<'a>(o: &'a batch::Outcome, name: &str) -> Vec<&'a Found> {
    let mut ws: Vec<&Found> = o.kept.iter().filter(|k| k.list() == name).collect();
    if name == "A4" {
        // By the reads, first then second, then the cell: a witness is its two reads (a
        // record reads a cell once), so this orders every pair, and it never looks at value
        // ids, which mean different things to a keyed run and to a history's names.
        ws.sort_by_key(|k| match k {
            Found::A4 { w, .. } => {
                let (f, s) = (&w.first, &w.second);
                (f.record, f.replica, s.record, s.replica, w.cell, w.version)
            }
            _ => unreachable!("filtered to A4"),
        });
    }
    ws
}

/// The `--json` object: the lists, then what they mean (`verdicts`, `level_range`).
fn to_json(o: &batch::Outcome, v: &Verdicts, residue: bool) -> Json {
    let r = Render(&o.names);
    let s = &o.summary;
    let rendered = |name: &str| -> Json { list(o, name).into_iter().map(|k| r.json(k)).collect() };
    let mut anomalies = serde_json::Map::new();
    let mut left_out = serde_json::Map::new();
    let lists = Anomaly::ALL
        .into_iter()
        .filter(|&a| shown(a, residue, s))
        .map(|a| (a.name(), s.left_out(a)));
    for (name, left) in lists {
        anomalies.insert(name.into(), rendered(name));
        if left > 0 {
            left_out.insert(name.into(), json!(left));
        }
    }
    if s.l1_struct.left_out() > 0 {
        left_out.insert("L1_struct".into(), json!(s.l1_struct.left_out()));
    }
    let point = Point::of(&s.anomalies());
    let names: Vec<&str> = point.members().iter().map(|a| a.name()).collect();
    let mut l1 = json!({ "holds": s.l1_struct_holds(), "violations": rendered("L1_struct") });
    if let Some(why) = &v.1 {
        l1["cannot_tell"] = json!(why);
    }
    let (lo, hi) = v.level_range();
    json!({ "anomalies": anomalies, "exhibits": names, "level": lattice::level(point),
            "L1_struct": l1, "left_out": left_out, "verdicts": verdicts_json(v),
            "level_range": { "low": lo, "high": hi } })
}

/// `{"A1": {"verdict": "holds"}, "A3": {"verdict": "cannot_tell", "reason": …}, …}`: every
/// anomaly `--fail-on` takes, A4 included (on a single-store history it cannot be told).
fn verdicts_json(v: &Verdicts) -> Json {
    let each = v.0.iter().map(|(a, v)| (a.name().to_owned(), json!(v)));
    Json::Object(each.collect())
}

/// The human-readable report.
fn text(file: &str, o: &batch::Outcome, v: &Verdicts, residue: bool) -> String {
    let (s, n) = (&o.summary, Render(&o.names));
    let mut out = String::new();
    let count = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{file}: {}, {}, {}",
        count(s.records, "record"),
        count(o.names.agents.len() as u64, "agent"),
        count(o.names.cells.len() as u64, "cell")
    );
    let mut sec = |title: &str, a: Anomaly, w: (u64, u64)| {
        let verdict = v.0.iter().find(|(x, _)| *x == a).map(|(_, v)| v);
        section(&mut out, title, verdict, w, &list(o, a.name()), &n);
    };
    let sections = |after_verdict: bool| {
        let mut these: Vec<Anomaly> = Anomaly::ALL
            .into_iter()
            .filter(|&a| shown(a, residue, s) && text_place(a).0 == after_verdict)
            .collect();
        these.sort_by_key(|&a| text_place(a).1);
        these
    };
    for a in sections(false) {
        sec(&text_title(a), a, (s.count(a), s.left_out(a)));
    }
    if s.records == 0 {
        let _ = writeln!(out, "L1_struct: cannot tell (empty input)");
    } else if let Some(why) = &v.1 {
        let title = format!("L1_struct: cannot tell ({why})");
        let l1 = totals(&s.l1_struct);
        section(&mut out, &title, None, l1, &list(o, "L1_struct"), &n);
    } else if s.l1_struct_holds() {
        let _ = writeln!(
            out,
            "L1_struct: holds (every read saw the latest committed write)"
        );
    } else {
        section(
            &mut out,
            "L1_struct violated",
            None,
            totals(&s.l1_struct),
            &list(o, "L1_struct"),
            &n,
        );
    }
    let point = Point::of(&s.anomalies());
    let _ = writeln!(out, "exhibits: {}", point.label());
    let _ = writeln!(out, "level: {}", level_text(v));
    for a in sections(true) {
        let w = (s.count(a), s.left_out(a));
        let verdict = v.0.iter().find(|(x, _)| *x == a).map(|(_, v)| v);
        section(&mut out, &text_title(a), verdict, w, &list(o, a.name()), &n);
    }
    out
}

/// `L2 (no A1, A3; exhibits A6)` when every lattice anomaly is told, else the range and what
/// could not be told: `L1..L4 (cannot tell A3)`.
fn level_text(v: &Verdicts) -> String {
    match v.level_range() {
        (lo, hi) if lo == hi => format!("L{lo}{}", level_note(lo)),
        (lo, hi) => {
            let untold: Vec<&str> = v.untold().into_iter().map(Anomaly::name).collect();
            format!("L{lo}..L{hi} (cannot tell {})", untold.join(", "))
        }
    }
}

/// Whether the report has a list for `a`: the lattice's four always, the residue form with
/// `--residue`, A4 on histories with replica metadata.
fn shown(a: Anomaly, residue: bool, s: &Summary) -> bool {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A6 => true,
        Anomaly::A3Residue => residue,
        Anomaly::A4 => s.replica_meta,
    }
}

/// Where the text report prints `a`'s section: after the verdict lines (`exhibits`, `level`)
/// or before them, and its rank there.
fn text_place(a: Anomaly) -> (bool, u8) {
    match a {
        Anomaly::A1 => (false, 0),
        Anomaly::A2 => (false, 1),
        Anomaly::A3 => (false, 2),
        Anomaly::A6 => (false, 3),
        Anomaly::A3Residue => (false, 4),
        // Outside the lattice, so after the lattice's verdict.
        Anomaly::A4 => (true, 0),
    }
}

/// The title of `a`'s section in the text report.
fn text_title(a: Anomaly) -> String {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A6 => {
            format!("{} {}", a.name(), a.title())
        }
        Anomaly::A3Residue => "A3 residue (over-approximates A3)".to_owned(),
        Anomaly::A4 => "A4 split-view (replicated store, outside the lattice)".to_owned(),
    }
}

fn totals<T>(w: &Witnesses<T>) -> (u64, u64) {
    (w.total, w.left_out())
}

fn level_note(level: u8) -> &'static str {
    match level {
        0 => " (exhibits A1)",
        1 => " (no A1; exhibits A3)",
        2 => " (no A1, A3; exhibits A6)",
        3 => " (no A1, A3, A6; exhibits A2)",
        _ => " (none of A1, A3, A6, A2)",
    }
}

/// One anomaly's lines: its verdict (when it has one: the residue form and `L1_struct` are
/// diagnostics), the witness count, and the listed witnesses.
fn section(
    s: &mut String,
    title: &str,
    verdict: Option<&Verdict>,
    (total, left): (u64, u64),
    ws: &[&Found],
    n: &Render,
) {
    let plural = if total == 1 { "" } else { "es" };
    let found = format!("{total} witness{plural}");
    let _ = match (verdict, total) {
        (None, 0) => write!(s, "{title}: none"),
        (None, _) => write!(s, "{title}: {found}"),
        (Some(v @ Verdict::Holds), _) => write!(s, "{title}: {v}"),
        (Some(v @ Verdict::Violated), _) => write!(s, "{title}: {v}, {found}"),
        (Some(v), 0) => write!(s, "{title}: {v}, none found"),
        (Some(v), _) => write!(s, "{title}: {v}, {found} found"),
    };
    if left > 0 {
        let _ = write!(
            s,
            " ({} listed, {left} left out: raise --max-witnesses)",
            ws.len()
        );
    }
    s.push('\n');
    for w in ws {
        let _ = writeln!(s, "  {}", n.text(w));
    }
}

/// `detect --json`'s output on an ingested history (`file` names it), with the default
/// witness limit: what `agentsim serve` reports on the spans it received. When the input lacks
/// spans (`missing`: dropped, or routed elsewhere), each told verdict is *cannot tell* for that
/// reason (a span not seen could have made or unmade any witness).
pub fn ingested_json(
    h: History,
    ingest: &Report,
    file: &str,
    missing: Option<&str>,
) -> anyhow::Result<String> {
    h.validate()
        .and_then(|()| h.validate_effects())
        .map_err(|e| anyhow::anyhow!("{file}: the history it gives is malformed: {e}"))?;
    let cfg = batch::Config {
        threads: 1,
        max_witnesses: MAX_WITNESSES_DEFAULT,
        residue: false,
        progress: super::progress::ProgressArgs::default(),
    };
    let o = batch::in_memory(h, initial_of(Some(ingest)), file, cfg)?;
    let mut v = Verdicts::of(&o.summary, file, Some(ingest));
    if let Some(missing) = missing {
        v = v.with_missing(missing);
    }
    let mut j = to_json(&o, &v, false);
    j["ingest"] = ingest.to_json();
    Ok(serde_json::to_string_pretty(&j)? + "\n")
}

/// What `agentsim view` shows beside a history: this command's text report on it, and each
/// listed witness as the report prints it (`line`) and as `--json` lists it (`json`, whose
/// record fields locate it), in the report's order.
pub struct Explained {
    pub text: String,
    pub witnesses: Vec<(&'static str, String, Json)>,
}

/// Detects `h` (read from `file`, ingested with `ingest` when it was) as `detect` does, with
/// the default witness limit, and explains it.
pub fn explain(h: History, file: &str, ingest: Option<&Report>) -> anyhow::Result<Explained> {
    h.validate()
        .and_then(|()| h.validate_effects())
        .map_err(|e| anyhow::anyhow!("{file}: the history it gives is malformed: {e}"))?;
    let cfg = batch::Config {
        threads: 1,
        max_witnesses: MAX_WITNESSES_DEFAULT,
        residue: false,
        progress: super::progress::ProgressArgs::default(),
    };
    let o = batch::in_memory(h, initial_of(ingest), file, cfg)?;
    let v = Verdicts::of(&o.summary, file, ingest);
    let r = Render(&o.names);
    let lists = Anomaly::ALL
        .into_iter()
        .filter(|&a| shown(a, false, &o.summary));
    let names = lists.map(Anomaly::name).chain(["L1_struct"]);
    let witnesses = names
        .flat_map(|name| list(&o, name).into_iter().map(move |k| (name, k)))
        .map(|(name, k)| (name, r.text(k), r.json(k)))
        .collect();
    let text = text(file, &o, &v, false);
    Ok(Explained { text, witnesses })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_on_parses_names() {
        assert_eq!(parse_fail_on("a3"), Ok(Anomaly::A3));
        assert_eq!(parse_fail_on("a4"), Ok(Anomaly::A4));
        assert_eq!(parse_fail_on("A6"), Ok(Anomaly::A6));
        assert_eq!(
            parse_fail_on("A5").unwrap_err(),
            "unknown anomaly `A5` (expected A1, A2, A3, A4 or A6)"
        );
        assert!(parse_fail_on("A3_residue").is_err());
    }
}
