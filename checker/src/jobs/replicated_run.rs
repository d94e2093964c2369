//! One check of the replicated model (SPEC §6), end to end: explore, find the shortest
//! counterexample per violated property, render it. The same figures as `run::check` (TLC's
//! distinct / generated / depth), so `agentsim check --replicas` prints like any other check.
//!
//! Rendering differs in one way: a read's step says where it was routed and what it was
//! served, `-> primary: c1=v1 @1`, i.e. value and the cell's committed version (the two
//! things A4 compares), and the ITF document gains `reads` (each record's read metadata) and
//! `replicas` (each replica's applied version per cell). A trace shows one way to split; it
//! does not show every way.

use crate::config::Replication;
use crate::engine::frontier::Storage;
use crate::engine::space::{Space, StepText};
use crate::engine::trace::{self, Trace};
use crate::jobs::run::{
    check_space, CheckConfig, CheckError, CheckReport, Counterexample, Replayed,
};
use crate::jobs::vacuity::Features;
use crate::models::render;
use crate::models::replicated::{replica_name, value_name, RepAction, RepState, ReplicatedModel};
use agentsim_models::names::{Agent, Cell};
use agentsim_models::record::ReadMeta;
use agentsim_models::runtime::Stack;
use serde_json::{json, Value as Json};

type Model = ReplicatedModel<Stack>;
type State = RepState<Stack>;

fn model(cfg: &CheckConfig, rep: Replication) -> Result<Model, CheckError> {
    if cfg.threads == 0 {
        return Err(CheckError::NoThreads);
    }
    rep.validate(&cfg.bounds, &cfg.ext, cfg.symmetry)?;
    Ok(ReplicatedModel::of_stack(
        cfg.bounds,
        cfg.ext,
        rep,
        cfg.runtime,
    )?)
}

/// The report's model name, e.g. `replicated:vanilla/any-replica/k1/lag1`.
pub fn model_name(cfg: &CheckConfig, rep: Replication) -> String {
    format!(
        "replicated:{}/{}/k{}/lag{}",
        cfg.runtime,
        rep.discipline.name(),
        rep.secondaries,
        rep.max_lag
    )
}

/// Runs the check on the replicated model (`cfg.symmetry` must be off) with the default
/// [`Storage`].
pub fn check(cfg: &CheckConfig, rep: Replication) -> Result<CheckReport, CheckError> {
    check_with(cfg, rep, &Storage::default())
}

/// Runs the check on the replicated model within `storage`'s limits.
pub fn check_with(
    cfg: &CheckConfig,
    rep: Replication,
    storage: &Storage,
) -> Result<CheckReport, CheckError> {
    let m = model(cfg, rep)?;
    let features = Features::replicated(cfg.bounds, cfg.ext, rep, cfg.runtime);
    let mut report = check_space(&m, cfg, storage, model_name(cfg, rep), render);
    report.mark_vacuous(&features);
    Ok(report)
}

/// Replays a path (`0/4/17`) on the replicated model, renders it, and checks
/// `cfg.properties` on it.
pub fn replay(cfg: &CheckConfig, rep: Replication, path: &str) -> Result<Replayed, CheckError> {
    let m = model(cfg, rep)?;
    let ids = trace::parse_path(path)?;
    let t = trace::replay(&m, &ids)?;
    Ok(Replayed::of(&m, &t, cfg, render))
}

fn render(m: &Model, t: &Trace<State, RepAction>, description: &str) -> Counterexample {
    Counterexample {
        steps: steps(m, t),
        path: t.path_string(),
        itf: itf(m, t, description),
    }
}

fn served_text(m: &[ReadMeta], values: impl Fn(Cell) -> u32) -> String {
    let Some(first) = m.first() else {
        return "nothing read".to_owned();
    };
    let cells: Vec<_> = m
        .iter()
        .map(|r| {
            format!(
                "c{}={} @{}",
                r.cell.0 + 1,
                value_name(values(r.cell)),
                r.version
            )
        })
        .collect();
    format!("{}: {}", replica_name(first.replica), cells.join(", "))
}

/// The readable step list; a read says where it went and what it was served.
pub fn steps(m: &Model, t: &Trace<State, RepAction>) -> Vec<String> {
    let b = m.bounds();
    let mut out = Vec::new();
    for (k, a) in t.actions.iter().enumerate() {
        let after = &t.states[k + 1];
        let mut line = format!("{:>2}. {}", k + 1, a.describe(&b));
        match *a {
            RepAction::Read { agent, .. } => {
                let agent = Agent(agent.into());
                match after.rt.store().inflight().get(&agent) {
                    Some(p) => {
                        let rv = &p.snapshot.read_values;
                        let text = served_text(after.pending_meta(agent), |c| rv.get(c).0);
                        line.push_str(&format!(" -> {text}"));
                    }
                    None => line.push_str(" -> dropped by the runtime"),
                }
            }
            RepAction::Write { .. } => {
                let log = after.rt.log();
                let r = log.last().expect("a write appends a record");
                let status = if r.aborted { "aborted" } else { "committed" };
                line.push_str(&format!(" -> record {} {status}", log.len() - 1));
                if !r.aborted && !r.write_set.is_empty() {
                    let heads: Vec<_> = r
                        .write_set
                        .iter()
                        .map(|&c| format!("c{} @{}", c.0 + 1, after.replicas.primary().head(c)))
                        .collect();
                    line.push_str(&format!(" at {}", heads.join(", ")));
                }
            }
            RepAction::Apply { replica, cell } => {
                let r = agentsim_models::names::Replica(replica.into());
                let v = after.replicas.applied(r, Cell(cell.into()));
                line.push_str(&format!(
                    " -> {} serves c{} @{v}",
                    replica_name(r),
                    cell + 1
                ));
            }
        }
        out.push(line);
    }
    out
}

fn reads_json(s: &State) -> Json {
    let log = s.log();
    let rows: Vec<Json> = log
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.read_meta.iter().map(move |m| {
                json!({ "#tup": [
                    { "#bigint": i.to_string() },
                    format!("c{}", m.cell.0 + 1),
                    replica_name(m.replica),
                    { "#bigint": m.version.to_string() },
                    value_name(r.read_values.get(m.cell).0),
                ] })
            })
        })
        .collect();
    Json::Array(rows)
}

fn replicas_json(m: &Model, s: &State) -> Json {
    let cells = m.bounds().cells;
    let per: Vec<Json> = s
        .replicas
        .replicas()
        .map(|r| {
            let applied: Vec<Json> = (0..cells)
                .map(|c| {
                    let v = s.replicas.applied(r, Cell(c));
                    json!([format!("c{}", c + 1), { "#bigint": v.to_string() }])
                })
                .collect();
            json!([replica_name(r), { "#map": applied }])
        })
        .collect();
    json!({ "#map": per })
}

/// The trace as ITF: the SPEC §1 variables plus `reads` (record, cell, replica, committed
/// version, value) and `replicas` (applied version per cell; the primary's is its head).
pub fn itf(m: &Model, t: &Trace<State, RepAction>, description: &str) -> Json {
    let mut doc = render::itf(m, t, description);
    doc["vars"] = json!(["log", "inflight", "registry", "memory", "reads", "replicas"]);
    let states = doc["states"]
        .as_array_mut()
        .expect("ITF states are an array");
    for (state, s) in states.iter_mut().zip(&t.states) {
        state["reads"] = reads_json(s);
        state["replicas"] = replicas_json(m, s);
    }
    doc
}
