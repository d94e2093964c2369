//! The four inputs of `agentsim view` as pages: each read by the reader its own command uses
//! and explained by that command's code (detect's report and witness lines, the checker's
//! replay, the simulator's trial), then named record by record for the page.

use super::super::check;
use super::super::detect::{explain, Explained};
use super::super::input;
use crate::view::{Anom, CellValue, Kind, Page, Rec, Step};
use agentsim_ingest::Options;
use agentsim_ingest::Report;
use agentsim_models::{History, Names, Value, ValueMap};
use anyhow::{anyhow, bail, Context, Result};
use clap::Parser;
use serde_json::{json, Map, Value as Json};
use std::path::Path;

/// A history's records by name.
pub fn records_of(h: &History) -> Vec<Rec> {
    let n = &h.names;
    let pairs = |cells: &[agentsim_models::Cell], m: &ValueMap| -> Vec<CellValue> {
        cells
            .iter()
            .map(|&c| (n.cell_name(c), n.value_name(m.get(c))))
            .collect()
    };
    let effects = |e: &[(agentsim_models::Cell, Value)]| -> Vec<CellValue> {
        e.iter()
            .map(|&(c, v)| (n.cell_name(c), n.value_name(v)))
            .collect()
    };
    let rec = |(index, r): (usize, &agentsim_models::OpRecord)| Rec {
        index,
        agent: n.agent_name(r.agent),
        read_time: r.read_time,
        write_time: r.write_time,
        reads: pairs(&r.read_set, &r.read_values),
        writes: pairs(&r.write_set, &r.write_values),
        io: effects(&r.io),
        co: effects(&r.co),
        aborted: r.aborted,
        tool: r.planned_tool.map(|t| n.tool_name(t)),
        preds: r.preds.clone(),
        registry: registry(n, &r.write_registry),
        ms: None,
    };
    h.records.iter().enumerate().map(rec).collect()
}

fn registry(n: &Names, r: &agentsim_models::record::Registry) -> Vec<(String, u32)> {
    r.entries()
        .iter()
        .map(|e| (n.tool_name(e.tool), e.version))
        .collect()
}

/// detect's witnesses as the page's anomalies: the records each names, and for the ones with
/// a conflicting write (A1's writer, A3's aborted pred, `L1_struct`'s latest writer, A4's
/// first read) the arrow from it to the record it conflicts with.
pub fn anomalies_of(e: &Explained) -> Vec<Anom> {
    let idx = |j: &Json, k: &str| j.get(k).and_then(Json::as_u64).map(|v| v as usize);
    let side = |j: &Json, k: &str| j.get(k).and_then(|s| idx(s, "record"));
    e.witnesses
        .iter()
        .map(|(list, line, j)| {
            let (records, arrow) = match *list {
                "A1" => (
                    [idx(j, "writer"), idx(j, "reader")],
                    idx(j, "writer").zip(idx(j, "reader")),
                ),
                "A3" => (
                    [idx(j, "pred"), idx(j, "record")],
                    idx(j, "pred").zip(idx(j, "record")),
                ),
                "L1_struct" => (
                    [idx(j, "writer"), idx(j, "record")],
                    idx(j, "writer").zip(idx(j, "record")),
                ),
                "A4" => (
                    [side(j, "first"), side(j, "second")],
                    side(j, "first").zip(side(j, "second")),
                ),
                _ => ([idx(j, "record"), None], None),
            };
            Anom {
                list: (*list).to_owned(),
                text: line.clone(),
                records: records.into_iter().flatten().collect(),
                arrow,
            }
        })
        .collect()
}

fn title_of(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    )
}

/// A history already read (`file` names it in detect's report), with detect's report and,
/// for an ingested trace, the ingest's.
pub fn page_of(h: History, title: String, file: &str, ingest: Option<Report>) -> Result<Page> {
    let mut records = records_of(&h);
    let wall = ingest
        .as_ref()
        .and_then(|r| r.wall_ns.as_ref())
        .is_some_and(|w| with_wall_time(&mut records, w));
    // detect answers *cannot tell* on an empty history: the page must not read as clean.
    let undecided = h
        .records
        .is_empty()
        .then(|| "cannot tell: the input holds no records (empty input)".to_owned());
    let explained = explain(h, file, ingest.as_ref())?;
    let kind = if ingest.is_some() {
        Kind::Trace
    } else {
        Kind::History
    };
    Ok(Page {
        kind: Some(kind),
        title,
        total_records: records.len(),
        records,
        anomalies: anomalies_of(&explained),
        report: explained.text,
        ingest: ingest.map(|r| r.to_text()),
        wall,
        undecided,
        ..Page::default()
    })
}

/// Gives each record its read and commit in wall milliseconds since the trace's first read,
/// from the ingest's Unix-nanosecond instants (one pair per record, in log order); `false`,
/// changing nothing, when they do not pair up with the records.
fn with_wall_time(records: &mut [Rec], wall_ns: &[(u128, u128)]) -> bool {
    if records.is_empty() || wall_ns.len() != records.len() {
        return false;
    }
    let t0 = wall_ns.iter().map(|&(r, _)| r).min().unwrap_or(0);
    let ms = |t: u128| u64::try_from((t - t0) / 1_000_000).unwrap_or(u64::MAX);
    for (r, &(read, commit)) in records.iter_mut().zip(wall_ns) {
        r.ms = Some((ms(read), ms(commit.max(read))));
    }
    true
}

/// A JSON Lines history, with detect's report.
pub fn page_of_history(path: &Path) -> Result<Page> {
    let (h, _) = input::read(path, &Options::default())?;
    page_of(h, title_of(path), &path.display().to_string(), None)
}

/// An ingested trace, with the ingest's report and detect's.
pub fn page_of_trace(path: &Path, options: &Options) -> Result<Page> {
    let (h, report) = input::read(path, options)?;
    page_of(h, title_of(path), &path.display().to_string(), report)
}

/// The `check` flags after `--`, parsed as `check` parses them.
#[derive(Debug, Parser)]
#[command(name = "agentsim check")]
struct CheckFlags {
    #[command(flatten)]
    args: check::Args,
}

/// A checker counterexample: its states stepped through, the records of its last state's log
/// detected as a history, and the checker's verdict when its path replays under `flags`.
pub fn page_of_itf(path: &Path, flags: &[String]) -> Result<Page> {
    let arg = path.display().to_string();
    let (cex_path, states) = check::replay_source(&arg)?;
    let states = states.ok_or_else(|| anyhow!("{arg}: not an ITF trace"))?;
    let list = states
        .as_array()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| anyhow!("{arg}: the ITF has no states"))?;
    let mut notes = Vec::new();
    let (labels, violated) = match replay(&arg, &cex_path, &states, flags) {
        Ok(r) => r,
        Err(e) => {
            let why = format!(
                "Steps are unnamed: the path {cex_path} does not replay under the check flags \
                 given ({e:#}); give the flags that wrote the file after `--`."
            );
            eprintln!("view: {why}");
            notes.push(why);
            (Vec::new(), Vec::new())
        }
    };
    let mut steps = Vec::new();
    for (k, s) in list.iter().enumerate() {
        let label = match k {
            0 => "initial state".to_owned(),
            // The checker numbers its steps (`  1. StartRead(a1) …`); the page numbers them too.
            _ => labels.get(k - 1).map_or_else(
                || format!("state {k}"),
                |l| {
                    let l = l.trim_start();
                    l.split_once(". ").map_or(l, |(_, rest)| rest).to_owned()
                },
            ),
        };
        let plain = plain(s);
        let vars: Vec<(String, String)> = plain
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with('#'))
            .map(|(k, v)| (k.clone(), serde_json::to_string(v).unwrap_or_default()))
            .collect();
        let committed = plain["log"].as_array().map_or(0, Vec::len);
        steps.push(Step {
            label,
            agent: None,
            committed,
            vars,
        });
    }
    let last = plain(&list[list.len() - 1]);
    let jsonl =
        history_lines(&last["log"]).with_context(|| format!("{arg}: the last state's log"))?;
    let h = agentsim_jsonl::parse_history(&jsonl, &format!("{arg} (last state's log)"))?;
    let records = records_of(&h);
    for s in &mut steps {
        // The checker names the acting agent in parentheses: `StartRead(a1) …`.
        let inner = s.label.split_once('(').and_then(|(_, r)| r.split_once(')'));
        s.agent = inner
            .map(|(a, _)| a.to_owned())
            .filter(|a| records.iter().any(|r| &r.agent == a));
    }
    let explained = explain(h, &arg, None)?;
    let mut report = String::new();
    if !violated.is_empty() {
        report.push_str(&format!(
            "check: the path {cex_path} violates {}\n\n",
            violated.join(", ")
        ));
    }
    report.push_str("detect on the last state's log:\n");
    report.push_str(&explained.text);
    Ok(Page {
        kind: Some(Kind::Counterexample),
        title: title_of(path),
        total_records: records.len(),
        records,
        anomalies: anomalies_of(&explained),
        report,
        steps,
        notes,
        ..Page::default()
    })
}

/// The checker's step names and violated properties for `cex_path`, replayed under `flags`;
/// an error when it does not replay to the file's states.
fn replay(
    arg: &str,
    cex_path: &str,
    states: &Json,
    flags: &[String],
) -> Result<(Vec<String>, Vec<String>)> {
    use agentsim_checker::jobs::{replicated_run, run};
    let argv = std::iter::once("agentsim check".to_owned()).chain(flags.iter().cloned());
    let a = CheckFlags::try_parse_from(argv).map_err(|e| anyhow!("{}", e.to_string().trim()))?;
    let (cfg, model) = check::resolve(&a.args)?;
    let r = match model {
        check::CheckModel::Abstract { .. } => bail!("abstract paths are not concrete ones"),
        check::CheckModel::Replicated(rep) => replicated_run::replay(&cfg, rep, cex_path),
        check::CheckModel::Paper | check::CheckModel::Stack => run::replay(&cfg, cex_path),
    }
    .map_err(|e| anyhow!("{e}"))?;
    check::same_states(arg, states, &r.trace.itf["states"])?;
    let names = r.violated.iter().map(|p| p.name().to_owned()).collect();
    Ok((r.trace.steps.clone(), names))
}

/// ITF's encodings (`#bigint`, `#set`, `#tup`, `#map`) as plain JSON.
fn plain(v: &Json) -> Json {
    match v {
        Json::Object(o) => {
            if let Some(n) = o.get("#bigint").and_then(Json::as_str) {
                return n.parse::<u64>().map_or_else(|_| json!(n), |n| json!(n));
            }
            if let Some(s) = o.get("#set").or_else(|| o.get("#tup")) {
                return plain(s);
            }
            if let Some(Json::Array(m)) = o.get("#map") {
                let entries = m.iter().filter_map(|kv| {
                    let kv = kv.as_array()?;
                    let key = match plain(kv.first()?) {
                        Json::String(s) => s,
                        k => k.to_string(),
                    };
                    Some((key, plain(kv.get(1)?)))
                });
                return Json::Object(entries.collect());
            }
            Json::Object(o.iter().map(|(k, v)| (k.clone(), plain(v))).collect())
        }
        Json::Array(a) => Json::Array(a.iter().map(plain).collect()),
        v => v.clone(),
    }
}

/// The ITF log (plain JSON) as history-v1 JSON Lines, for the one history reader: the
/// checker's `"NULL"` is JSON null, a registry tuple `[tool, version]` an object.
fn history_lines(log: &Json) -> Result<String> {
    let null = |v: &Json| match v {
        Json::String(s) if s == "NULL" => Json::Null,
        v => v.clone(),
    };
    let values = |v: &Json| -> Json {
        let o = v.as_object().cloned().unwrap_or_default();
        Json::Object(o.iter().map(|(k, v)| (k.clone(), null(v))).collect())
    };
    let effects = |v: &Json| -> Json {
        let l = v.as_array().cloned().unwrap_or_default();
        l.iter()
            .map(|e| match e.as_array().map(Vec::as_slice) {
                Some([c, v]) => Json::Array(vec![c.clone(), null(v)]),
                _ => e.clone(),
            })
            .collect()
    };
    let reg = |v: &Json| -> Json {
        let l = v.as_array().cloned().unwrap_or_default();
        l.iter()
            .map(|e| match e.as_array().map(Vec::as_slice) {
                Some([t, v]) => json!({ "tool": t, "version": v }),
                _ => e.clone(),
            })
            .collect()
    };
    let Some(entries) = log.as_array() else {
        bail!("no `log` list");
    };
    let mut out = String::new();
    for e in entries {
        let mut m = Map::new();
        for k in [
            "agent",
            "read_time",
            "write_time",
            "read_set",
            "write_set",
            "aborted",
            "preds",
        ] {
            if let Some(v) = e.get(k) {
                m.insert(k.to_owned(), v.clone());
            }
        }
        m.insert("planned_tool".into(), null(&e["planned_tool"]));
        m.insert("read_values".into(), values(&e["read_values"]));
        m.insert("write_values".into(), values(&e["write_values"]));
        m.insert("io".into(), effects(&e["io"]));
        m.insert("co".into(), effects(&e["co"]));
        m.insert("read_registry".into(), reg(&e["read_registry"]));
        m.insert("write_registry".into(), reg(&e["write_registry"]));
        out.push_str(&Json::Object(m).to_string());
        out.push('\n');
    }
    Ok(out)
}

/// A simulated trial re-run from its replay line (as `replay` does): its history detected, and
/// its schedule stepped through, one step per event.
pub fn page_of_replay(arg: &str) -> Result<Page> {
    use super::super::replay::{load, read_line_arg};
    let line = read_line_arg(arg)?;
    let (sc, rt) = load(&line)?;
    let t = agentsim_sim::runner::run_one(
        &sc,
        rt,
        line.seed,
        line.trial,
        &line.schedule,
        line.on_missing,
    )
    .map_err(|e| anyhow!("{e}"))?;
    // As `agentsim replay`: a line whose event count the re-run does not reach describes
    // another trial (the scenario file or the build changed), and is refused, not drawn.
    let expected = line.schedule.stop.unwrap_or(line.schedule.events);
    if expected != 0 && t.metrics.events != expected {
        bail!(
            "replay diverged: the line recorded {expected} events, the replay ran {}; the \
             scenario file or the build changed since the line was printed",
            t.metrics.events
        );
    }
    // A lasso line (`cycle=<n>`, from `explore --liveness`): checked as `replay` checks it,
    // and its cycle's events marked `↻`.
    let cycle_from = match line.schedule.cycle {
        Some(_) => Some(
            agentsim_sim::explore::live::replay_lasso(&sc, rt, &line)
                .map_err(|e| anyhow!("lasso `{}`: {e}", line.schedule))?
                .stem_events,
        ),
        None => None,
    };
    let mut records = records_of(&t.history);
    let mut steps = Vec::new();
    let (mut committed, mut read_ms) = (0usize, std::collections::BTreeMap::new());
    for e in &t.run.trace {
        let agent = sc.names.agent_name(e.agent);
        // The engine names its events in these words (`read …`, `commit #k at t=…`); the
        // record's read and commit instants on the simulated clock come from them.
        if e.text.starts_with("read ") {
            read_ms.insert(agent.clone(), e.time_ms);
        }
        if let Some(k) = e
            .text
            .strip_prefix("commit #")
            .and_then(|s| s.split(' ').next())
        {
            if let Some(r) = k.parse::<usize>().ok().and_then(|k| records.get_mut(k)) {
                r.ms = Some((read_ms.get(&agent).copied().unwrap_or(e.time_ms), e.time_ms));
            }
            committed += 1;
        }
        let choice = match e.choice {
            0 => format!("first of {}", e.enabled),
            c => format!("{} of {} (scheduled ahead)", c + 1, e.enabled),
        };
        let mut vars = vec![
            ("agent".to_owned(), agent.clone()),
            ("choice".to_owned(), choice),
            ("committed records".to_owned(), committed.to_string()),
            ("event".to_owned(), e.text.clone()),
            ("time ms".to_owned(), e.time_ms.to_string()),
        ];
        let in_cycle = cycle_from.is_some_and(|from| e.event >= from);
        if let Some(from) = cycle_from {
            let part = if in_cycle {
                format!("cycle (from event {from}; returns to the state before it)")
            } else {
                "stem".to_owned()
            };
            vars.push(("lasso".to_owned(), part));
        }
        let mark = if in_cycle { "↻ " } else { "" };
        let label = format!("{mark}{} ms {agent}: {}", e.time_ms, e.text);
        steps.push(Step {
            label,
            agent: Some(agent),
            committed,
            vars,
        });
    }
    let title = line.to_string();
    let explained = explain(t.history, "the replayed trial", None)?;
    Ok(Page {
        kind: Some(Kind::Schedule),
        title,
        total_records: records.len(),
        records,
        anomalies: anomalies_of(&explained),
        report: explained.text,
        steps,
        ..Page::default()
    })
}
