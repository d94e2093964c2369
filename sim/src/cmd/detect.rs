//! `agentsim detect FILE.jsonl`: every anomaly of a recorded history, its lattice point, its level.
//!
//! Reads a JSON Lines history (schema `models/schema/history-v1.schema.json`), runs the fast
//! detectors (or the spec form with `--spec`), and prints each anomaly with its witness records
//! by name, the lattice point (the exact set of anomalies exhibited, SPEC §4) and the level (the
//! highest Lk of the named chain). `L1_struct` is reported in the text output as a diagnostic;
//! the A3 residue form only with `--residue` (it over-approximates A3 and is not part of the
//! lattice point). Exit 0; 1 if `--fail-on` names an anomaly that is present; 2 on bad input.
//! A clean report says the history exhibits none of A1, A2, A3, A6 *as defined*; it says nothing
//! about histories the shim did not record.
//!
//! A4 (split view, SPEC §6) is reported only for histories with replica metadata (some record
//! has `read_replica`/`read_version`): then the text output gains an "A4 split-view" section and
//! `--json` an `A4` key inside `anomalies` (an array, empty when there is no split). A4 is
//! outside the lattice, so it changes neither `lattice_point` nor `level`. Single-store
//! histories give byte-identical output to a build without A4.

use agentsim_models::detect::a4::{self, A4Read, A4Witness};
use agentsim_models::detect::{
    fast, spec, A1Witness, A2Reason, A2Witness, A3ResidueWitness, A3Witness, A6Witness,
    L1StructViolation,
};
use agentsim_models::lattice::{self, Point};
use agentsim_models::{jsonl, Anomaly, History, Report};
use anyhow::Context;
use clap::Args as ClapArgs;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Detect anomalies in a JSON Lines history.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// The history: one operation record per line (see the README, "History format").
    pub file: PathBuf,
    /// Print one JSON object: `anomalies`, `lattice_point`, `level`.
    #[arg(long)]
    pub json: bool,
    /// Also report the A3 residue form (reads of values nobody had written).
    #[arg(long)]
    pub residue: bool,
    /// Exit 1 if any of these anomalies is present (comma-separated: A1,A2,A3,A4,A6).
    #[arg(long, value_delimiter = ',', value_parser = parse_fail_on)]
    pub fail_on: Vec<Anomaly>,
    /// Use the spec-form detectors (quadratic; for cross-checking small histories).
    #[arg(long)]
    pub spec: bool,
}

/// A `--fail-on` name: any anomaly of the catalogue the text and JSON report.
fn parse_fail_on(s: &str) -> Result<Anomaly, String> {
    match Anomaly::parse(s) {
        Some(a) if reported(a) => Ok(a),
        _ => Err(format!(
            "unknown anomaly `{s}` (expected {})",
            fail_on_names()
        )),
    }
}

/// Whether `detect` reports `a` (and `--fail-on` accepts it): the lattice's four always, A4 on
/// histories with replica metadata; the residue form is a diagnostic (`--residue`), not a
/// verdict.
fn reported(a: Anomaly) -> bool {
    match a {
        Anomaly::A1 | Anomaly::A2 | Anomaly::A3 | Anomaly::A4 | Anomaly::A6 => true,
        Anomaly::A3Residue => false,
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
    // The error already names the file, the line and the key.
    let history = jsonl::read_history(&args.file)?;
    let report = if args.spec {
        spec::detect(&history)
    } else {
        fast::detect(&history)
    };
    let split = a4::has_replica_meta(&history).then_some(&report.a4);
    let point = Point::of(&report.anomalies());
    let level = lattice::level(point);
    if args.json {
        let mut v = to_json(&history, &report, point, level, args.residue);
        if let Some(ws) = &split {
            v["anomalies"]["A4"] = ws.iter().map(|w| Render(&history).a4_json(w)).collect();
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&v).context("encoding JSON")?
        );
    } else {
        let file = args.file.display().to_string();
        print!(
            "{}",
            text(&file, &history, &report, point, level, args.residue)
        );
        if let Some(ws) = &split {
            let mut s = String::new();
            let title = "A4 split-view (replicated store, outside the lattice)";
            section(&mut s, title, ws, |w| Render(&history).a4_text(w));
            print!("{s}");
        }
    }
    let failed = args.fail_on.iter().any(|&a| report.has(a));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The `--json` object.
pub fn to_json(h: &History, r: &Report, point: Point, level: u8, residue: bool) -> Json {
    let n = Render(h);
    let mut anomalies = serde_json::Map::new();
    anomalies.insert("A1".into(), r.a1.iter().map(|w| n.a1_json(w)).collect());
    anomalies.insert("A2".into(), r.a2.iter().map(|w| n.a2_json(w)).collect());
    anomalies.insert("A3".into(), r.a3.iter().map(|w| n.a3_json(w)).collect());
    anomalies.insert("A6".into(), r.a6.iter().map(|w| n.a6_json(w)).collect());
    if residue {
        let ws = r.a3_residue.iter().map(|w| n.residue_json(w)).collect();
        anomalies.insert("A3_residue".into(), ws);
    }
    let names: Vec<&str> = point.members().iter().map(|a| a.name()).collect();
    json!({ "anomalies": anomalies, "lattice_point": names, "level": level })
}

/// The human-readable report.
pub fn text(file: &str, h: &History, r: &Report, point: Point, level: u8, residue: bool) -> String {
    let n = Render(h);
    let mut s = String::new();
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        s,
        "{file}: {}, {}, {}",
        count(h.len(), "record"),
        count(h.names.agents.len(), "agent"),
        count(h.names.cells.len(), "cell")
    );
    section(&mut s, "A1 stale-generation", &r.a1, |w| n.a1_text(w));
    section(&mut s, "A2 phantom-tool", &r.a2, |w| n.a2_text(w));
    section(&mut s, "A3 causal-cascade", &r.a3, |w| n.a3_text(w));
    section(&mut s, "A6 tool-effect reordering", &r.a6, |w| n.a6_text(w));
    if residue {
        let title = "A3 residue (over-approximates A3)";
        section(&mut s, title, &r.a3_residue, |w| n.residue_text(w));
    }
    if r.l1_struct_holds() {
        let _ = writeln!(
            s,
            "L1_struct: holds (every read saw the latest committed write)"
        );
    } else {
        section(&mut s, "L1_struct violated", &r.l1_struct, |w| n.l1_text(w));
    }
    let _ = writeln!(s, "lattice point: {}", point.label());
    let _ = writeln!(s, "level: L{level}{}", level_note(level));
    s
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

fn section<W>(s: &mut String, title: &str, ws: &[W], line: impl Fn(&W) -> String) {
    if ws.is_empty() {
        let _ = writeln!(s, "{title}: none");
        return;
    }
    let plural = if ws.len() == 1 { "" } else { "es" };
    let _ = writeln!(s, "{title}: {} witness{plural}", ws.len());
    for w in ws {
        let _ = writeln!(s, "  {}", line(w));
    }
}

/// Names for witnesses: records are 0-based indices (as in `preds`).
struct Render<'a>(&'a History);

impl Render<'_> {
    fn agent(&self, i: usize) -> String {
        self.0.names.agent_name(self.0.records[i].agent)
    }
    fn cell(&self, c: agentsim_models::Cell) -> String {
        self.0.names.cell_name(c)
    }
    fn val(&self, v: agentsim_models::Value) -> String {
        self.0.names.value_display(v)
    }
    fn val_json(&self, v: agentsim_models::Value) -> Json {
        self.0.names.value_name(v).map_or(Json::Null, Json::String)
    }
    fn effects(&self, e: &[(agentsim_models::Cell, agentsim_models::Value)]) -> Json {
        e.iter()
            .map(|&(c, v)| json!([self.cell(c), self.val_json(v)]))
            .collect()
    }
    fn effects_text(&self, e: &[(agentsim_models::Cell, agentsim_models::Value)]) -> String {
        let items: Vec<_> = e
            .iter()
            .map(|&(c, v)| format!("{}={}", self.cell(c), self.val(v)))
            .collect();
        format!("[{}]", items.join(", "))
    }

    fn a1_text(&self, w: &A1Witness) -> String {
        let (ri, rj) = (&self.0.records[w.reader], &self.0.records[w.writer]);
        format!(
            "record {} ({}) read {} = {} at t={} and wrote at t={}; meanwhile record {} ({}) \
             wrote {} = {} at t={}",
            w.reader,
            self.agent(w.reader),
            self.cell(w.cell),
            self.val(ri.read_values.get(w.cell)),
            ri.read_time,
            ri.write_time,
            w.writer,
            self.agent(w.writer),
            self.cell(w.cell),
            self.val(rj.write_values.get(w.cell)),
            rj.write_time
        )
    }
    fn a1_json(&self, w: &A1Witness) -> Json {
        let (ri, rj) = (&self.0.records[w.reader], &self.0.records[w.writer]);
        json!({
            "reader": w.reader, "reader_agent": self.agent(w.reader),
            "writer": w.writer, "writer_agent": self.agent(w.writer),
            "cell": self.cell(w.cell),
            "read_value": self.val_json(ri.read_values.get(w.cell)),
            "written_value": self.val_json(rj.write_values.get(w.cell)),
        })
    }

    fn a2_text(&self, w: &A2Witness) -> String {
        let tool = self.0.names.tool_name(w.tool);
        let why = match w.reason {
            A2Reason::Removed => "it had left the registry at write time".to_owned(),
            A2Reason::VersionChanged { read, write } => {
                format!("its signature changed from version {read} to {write}")
            }
        };
        format!(
            "record {} ({}) planned tool {tool}, but {why}",
            w.record,
            self.agent(w.record)
        )
    }
    fn a2_json(&self, w: &A2Witness) -> Json {
        let (reason, read, write) = match w.reason {
            A2Reason::Removed => ("removed", None, None),
            A2Reason::VersionChanged { read, write } => {
                ("version_changed", Some(read), Some(write))
            }
        };
        json!({
            "record": w.record, "agent": self.agent(w.record),
            "tool": self.0.names.tool_name(w.tool), "reason": reason,
            "read_version": read, "write_version": write,
        })
    }

    fn a3_text(&self, w: &A3Witness) -> String {
        format!(
            "record {} ({}) survives although its pred record {} ({}) is aborted",
            w.record,
            self.agent(w.record),
            w.pred,
            self.agent(w.pred)
        )
    }
    fn a3_json(&self, w: &A3Witness) -> Json {
        json!({ "record": w.record, "agent": self.agent(w.record), "pred": w.pred })
    }

    fn residue_text(&self, w: &A3ResidueWitness) -> String {
        format!(
            "record {} ({}) read {} = {} which no other live record had written by then",
            w.record,
            self.agent(w.record),
            self.cell(w.cell),
            self.val(w.value)
        )
    }
    fn residue_json(&self, w: &A3ResidueWitness) -> Json {
        json!({ "record": w.record, "cell": self.cell(w.cell), "value": self.val_json(w.value) })
    }

    fn a6_text(&self, w: &A6Witness) -> String {
        let r = &self.0.records[w.record];
        format!(
            "record {} ({}) issued {} but its effects completed {}",
            w.record,
            self.agent(w.record),
            self.effects_text(&r.io),
            self.effects_text(&r.co)
        )
    }
    fn a6_json(&self, w: &A6Witness) -> Json {
        let r = &self.0.records[w.record];
        json!({ "record": w.record, "agent": self.agent(w.record),
                "io": self.effects(&r.io), "co": self.effects(&r.co) })
    }

    fn a4_side(&self, r: &A4Read) -> String {
        format!(
            "record {} ({}) got {} from {}",
            r.record,
            self.agent(r.record),
            self.val(r.value),
            self.0.names.replica_name(r.replica)
        )
    }
    fn a4_text(&self, w: &A4Witness) -> String {
        format!(
            "{} at committed version {}: {}, but {}",
            self.cell(w.cell),
            w.version,
            self.a4_side(&w.first),
            self.a4_side(&w.second)
        )
    }
    fn a4_json(&self, w: &A4Witness) -> Json {
        let side = |r: &A4Read| {
            json!({ "record": r.record, "agent": self.agent(r.record),
                    "replica": self.0.names.replica_name(r.replica),
                    "value": self.val_json(r.value) })
        };
        json!({ "cell": self.cell(w.cell), "version": w.version,
                "first": side(&w.first), "second": side(&w.second) })
    }

    fn l1_text(&self, w: &L1StructViolation) -> String {
        let latest = match w.writer {
            Some(k) => format!("record {k}'s {}", self.val(w.expected)),
            None => "NULL (no earlier write)".to_owned(),
        };
        format!(
            "record {} ({}) read {} = {}, latest committed was {latest}",
            w.record,
            self.agent(w.record),
            self.cell(w.cell),
            self.val(w.read)
        )
    }
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
