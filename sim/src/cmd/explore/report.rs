//! What `agentsim explore` prints: the verdicts per runtime (text or JSON) and the coverage
//! table. The JSON holds no wall time, so it is the same bytes on every run and thread count
//! of a complete search.

use super::Explored;
use agentsim_models::escape_text;
use agentsim_models::lattice::{level, Point};
use agentsim_models::Anomaly;
use agentsim_sim::explore::live::{LiveFinding, LiveVerdict, Liveness};
use agentsim_sim::explore::{has_copies, Exploration, Finding, Reach, Stopped, STEPS_UNBOUNDED};
use agentsim_sim::scenario::Scenario;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The flag that stopped a search, for messages.
pub fn stopped_flag(s: Option<Stopped>) -> &'static str {
    match s {
        None => "nothing",
        Some(Stopped::Schedules) => "--max-schedules",
        Some(Stopped::Memory) => "--max-memory-mb",
        Some(Stopped::Signal) => "a signal",
    }
}

/// "reachable", "unreachable over every interleaving" (only from a complete search), or
/// "cannot tell (budget: …)" / "cannot tell (vacuous: …)" with what cut the search or what
/// the scenario lacks.
/// The flags that would lift what cut or stopped `e`: `--steps-per-agent`, `[schedule]
/// events_max`, `--max-repeat`, `--max-schedules`, `--max-memory-mb`.
pub fn what_to_raise(e: &Exploration) -> String {
    let cut = e.cut();
    let mut flags: Vec<&str> = Vec::new();
    if let Some(Stopped::Schedules | Stopped::Memory) = e.stopped {
        flags.push(stopped_flag(e.stopped));
    }
    if cut.steps_per_agent > 0 {
        flags.push("--steps-per-agent");
    }
    if cut.events_max > 0 {
        flags.push("[schedule] events_max");
    }
    if cut.repeat > 0 {
        flags.push("--max-repeat");
    }
    match flags.as_slice() {
        [] => "nothing (a signal stopped it: run it again)".to_owned(),
        _ => flags.join(" and "),
    }
}

fn verdict(sc: &Scenario, e: &Exploration, f: &Finding) -> String {
    let v = match (f.reach, &f.why) {
        (Reach::Reachable, _) => "reachable".to_owned(),
        (Reach::Unreachable, _) => format!("unreachable {}", e.bound_text()),
        (Reach::CannotTell, Some(why)) => format!("cannot tell ({why})"),
        (Reach::CannotTell, None) => {
            format!("cannot tell ({} stopped it)", stopped_flag(e.stopped))
        }
    };
    format!("{v}{}", cap_text(sc))
}

/// "complete", "stopped by --max-schedules", or "cut" (a bound cut some path: its verdicts
/// are not a proof).
fn state(e: &Exploration) -> String {
    match (e.complete, e.stopped) {
        (true, _) => "complete".to_owned(),
        (false, Some(_)) => format!("stopped by {}", stopped_flag(e.stopped)),
        (false, None) => "cut".to_owned(),
    }
}

/// " at repeat ≤ N" when the scenario was explored with its repeats capped, else nothing.
pub fn cap_text(sc: &Scenario) -> String {
    sc.repeat_cap
        .map_or_else(String::new, |n| format!(" at repeat ≤ {n}"))
}

/// ", timed (lognormal between the 0.1% and 99.9% quantiles)" for a timed search.
fn timed_text(e: &Exploration) -> String {
    e.timed().map_or(String::new(), |q| {
        format!(", timed (lognormal between {})", q.describe())
    })
}

/// Whether the counts are up to renaming copies: symmetry on and copies to fold.
fn folded(sc: &Scenario, e: &Exploration) -> bool {
    e.symmetry() && has_copies(sc)
}

/// ", symmetry on" or ", symmetry off" for a scenario with copies; nothing without.
fn symmetry_text(sc: &Scenario, e: &Exploration) -> &'static str {
    match (has_copies(sc), folded(sc, e)) {
        (false, _) => "",
        (true, true) => ", symmetry on",
        (true, false) => ", symmetry off",
    }
}

/// ", parking on (N paths end parked)" or ", parking off" for a scenario with a polling
/// loop; nothing without.
fn parking_text(e: &Exploration) -> String {
    match e.parking {
        None => String::new(),
        Some(true) => format!(", parking on ({} paths end parked)", e.spinning),
        Some(false) => ", parking off".to_owned(),
    }
}

/// ", events_max = N cut M paths" when the scenario's `events_max` cut some path.
fn truncated_text(e: &Exploration) -> String {
    match e.truncated {
        0 => String::new(),
        n => format!(", events_max = {} cut {n} paths", e.events_max),
    }
}

/// The step budget as the text report says it: a number, or "unbounded".
fn steps_text(n: u64) -> String {
    if n == STEPS_UNBOUNDED {
        "unbounded".to_owned()
    } else {
        n.to_string()
    }
}

/// ", stateful (N states, M paths merged)" for a stateful search; nothing for another.
fn stateful_text(e: &Exploration) -> String {
    e.stateful.map_or(String::new(), |s| {
        format!(
            ", stateful ({} states, {} paths merged)",
            s.states, s.merged
        )
    })
}

/// `{A1, A6}`, or `{}`.
fn set_text(set: &[Anomaly]) -> String {
    format!("{{{}}}", Anomaly::join(set, ", "))
}

/// The text report.
pub fn text(sc: &Scenario, done: &[Explored], coverage: bool) -> String {
    let mut s = String::new();
    for d in done {
        let e = &d.result;
        let state = state(e);
        let _ = writeln!(
            s,
            "explore {}{} under {}: {state}, {} schedules, {} classes, reduction {}{}{}, \
             {} steps per agent ({} paths cut){}{}, depth {}{}, {:.2} s",
            escape_text(&sc.name),
            cap_text(sc),
            e.runtime,
            e.schedules,
            e.classes,
            if e.reduction() { "on" } else { "off" },
            stateful_text(e),
            symmetry_text(sc, e),
            steps_text(e.steps_per_agent),
            e.budget_cut,
            truncated_text(e),
            parking_text(e),
            e.depth_max,
            timed_text(e),
            d.seconds
        );
        for f in &e.findings {
            let _ = writeln!(s, "  {:<11} {}", f.anomaly.name(), verdict(sc, e, f));
            if let Some(w) = &f.witness {
                let _ = writeln!(s, "              {} events: {}", w.events, w.line.command());
            }
        }
        let sets: Vec<String> = e.sets.keys().map(|k| set_text(k)).collect();
        let _ = writeln!(s, "  sets reached: {}", sets.join(" "));
        if let Some((l, seconds)) = &d.liveness {
            s.push_str(&live_text(sc, l, *seconds));
        }
    }
    if coverage {
        s.push_str(&coverage_text(done));
    }
    s
}

/// The three liveness properties of `l`, in order.
pub fn live_findings(l: &Liveness) -> [(&'static str, &LiveFinding); 3] {
    [
        ("deadlock", &l.deadlock),
        ("starvation", &l.starvation),
        ("termination", &l.termination),
    ]
}

/// Agent names, comma-separated (`none` for no agent).
fn agents_text(sc: &Scenario, agents: &[usize]) -> String {
    if agents.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<String> = agents
        .iter()
        .map(|&a| escape_text(&sc.agents[a].name).into_owned())
        .collect();
    names.join(", ")
}

/// The liveness lines of one runtime.
fn live_text(sc: &Scenario, l: &Liveness, seconds: f64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  liveness ({} fairness): {} states, {} transitions, {}{}, {seconds:.2} s",
        l.fairness.long_name(),
        l.states,
        l.edges,
        if l.complete { "complete" } else { "cut" },
        if l.parked {
            ", polling loops parked"
        } else {
            ""
        },
    );
    for (p, f) in live_findings(l) {
        let agent = f
            .agent
            .map(|a| escape_text(&sc.agents[a].name).into_owned());
        let line = match (&f.verdict, agent) {
            (LiveVerdict::Holds, _) => "holds".to_owned(),
            (LiveVerdict::CannotTell(why), _) => format!("cannot tell ({why})"),
            (LiveVerdict::Violated, agent) => {
                let who = agent.unwrap_or_else(|| "an agent".to_owned());
                match p {
                    "deadlock" => format!("violated: {who} has not finished and no agent can step"),
                    "starvation" => format!(
                        "violated: {who} begins an operation that is never committed nor given up"
                    ),
                    _ => format!("violated: {who} never finishes its script"),
                }
            }
        };
        let _ = writeln!(s, "  {p:<11} {line}");
        if let Some(r) = &f.replay {
            let _ = writeln!(
                s,
                "              {} events: {}",
                r.schedule.events,
                r.command()
            );
        }
        if let Some(lasso) = &f.lasso {
            let cycle = if lasso.cycle.is_empty() {
                "then stutters forever (no agent enabled there)".to_owned()
            } else {
                format!(
                    "then a cycle of {} steps (stepping: {}; enabled at every state: {}; at \
                     some state: {})",
                    lasso.cycle.len(),
                    agents_text(sc, &lasso.stepping),
                    agents_text(sc, &lasso.enabled_always),
                    agents_text(sc, &lasso.enabled_sometimes),
                )
            };
            let _ = writeln!(
                s,
                "              lasso: a stem of {} steps, {cycle}, fair under {} fairness",
                lasso.stem.len(),
                l.fairness.long_name()
            );
            let _ = writeln!(s, "              {}", lasso.line.command());
        }
    }
    s
}

/// The `liveness` object.
fn live_json(sc: &Scenario, l: &Liveness) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("fairness".to_owned(), json!(l.fairness.long_name()));
    for (p, f) in live_findings(l) {
        let reason = match &f.verdict {
            LiveVerdict::CannotTell(why) => json!(why),
            _ => Value::Null,
        };
        let agent = f.agent.map(|a| sc.agents[a].name.clone());
        let entry = if p == "deadlock" {
            json!({
                "verdict": f.verdict.name(),
                "agent": agent,
                "replay": f.replay.as_ref().map(|r| r.to_string()),
                "reason": reason,
            })
        } else {
            json!({
                "verdict": f.verdict.name(),
                "agent": agent,
                "lasso": f.lasso.as_ref().map(|l| json!({
                    "stem": l.stem.len(),
                    "cycle": l.cycle.len(),
                    "replay": l.line.to_string(),
                })),
                "reason": reason,
            })
        };
        out.insert(p.to_owned(), entry);
    }
    Value::Object(out)
}

/// Every set reached under any of the runtimes, in lattice order.
fn all_sets(done: &[Explored]) -> Vec<Vec<Anomaly>> {
    let sets: BTreeSet<Vec<Anomaly>> = done
        .iter()
        .flat_map(|d| d.result.sets.keys().cloned())
        .collect();
    sets.into_iter().collect()
}

/// Runtimes × reached sets: `x` reached, `.` not (or `?` when that search stopped early).
fn coverage_text(done: &[Explored]) -> String {
    let sets = all_sets(done);
    let mut s = String::from("coverage (x reached, . unreachable, ? cannot tell):\n");
    let _ = write!(s, "  {:<20}", "runtime");
    for k in &sets {
        let _ = write!(s, " {:>8}", set_text(k));
    }
    s.push('\n');
    for d in done {
        let _ = write!(s, "  {:<20}", d.result.runtime.to_string());
        for k in &sets {
            // `.` only from a complete search: a cut one cannot tell a set is unreachable.
            let mark = match (d.result.sets.contains_key(k), d.result.complete) {
                (true, _) => "x",
                (false, true) => ".",
                (false, false) => "?",
            };
            let _ = write!(s, " {mark:>8}");
        }
        s.push('\n');
    }
    s
}

/// One runtime's JSON object, with its liveness when asked for.
fn one_with(sc: &Scenario, d: &Explored) -> Value {
    let mut out = one(sc, &d.result);
    if let (Some((l, _)), Some(o)) = (&d.liveness, out.as_object_mut()) {
        o.insert("liveness".to_owned(), live_json(sc, l));
    }
    out
}

/// One runtime's JSON object.
fn one(sc: &Scenario, e: &Exploration) -> Value {
    let mut anomalies = serde_json::Map::new();
    for f in &e.findings {
        let reachable = match f.reach {
            Reach::Reachable => json!(true),
            Reach::Unreachable => json!(false),
            Reach::CannotTell => Value::Null,
        };
        let mut entry = json!({
            "reachable": reachable,
            "verdict": verdict(sc, e, f),
            "replay": f.witness.as_ref().map(|w| w.line.to_string()),
            "events": f.witness.as_ref().map(|w| w.events),
        });
        if let (Some(why), Some(o)) = (&f.why, entry.as_object_mut()) {
            // `{"kind": "budget" | "vacuous", "detail": …}`, only on a cannot tell.
            o.insert("reason".to_owned(), json!(why));
        }
        anomalies.insert(f.anomaly.name().to_owned(), entry);
    }
    let sets: Vec<Value> = e
        .sets
        .iter()
        .map(|(k, w)| {
            json!({
                "anomalies": k.iter().map(|a| a.name()).collect::<Vec<_>>(),
                "level": level(Point::of(k)),
                "replay": w.line.to_string(),
            })
        })
        .collect();
    let cut = e.cut();
    let mut out = json!({
        "scenario": sc.name,
        "runtime": e.runtime.to_string(),
        "complete": e.complete,
        "stopped": e.stopped.map(|s| stopped_flag(Some(s))),
        "reduction": e.reduction(),
        "symmetry": folded(sc, e),
        "timed": e.timed().map(|q| {
            let (lo, hi) = q.probabilities();
            json!({"quantiles": [lo, hi], "search": "plain enumeration"})
        }),
        "steps_per_agent": (e.steps_per_agent != STEPS_UNBOUNDED).then_some(e.steps_per_agent),
        "repeat_max": sc.repeat_cap,
        "schedules": e.schedules,
        "classes": e.classes,
        "budget_cut": e.budget_cut,
        "truncated": e.truncated,
        "cut": {
            "steps_per_agent": cut.steps_per_agent,
            "events_max": cut.events_max,
            "repeat": cut.repeat,
        },
        "depth_max": e.depth_max,
        "anomalies": anomalies,
        "sets": sets,
    });
    if let (Some(parking), Some(o)) = (e.parking, out.as_object_mut()) {
        // Only for a scenario with a polling loop, so every other output stays as it was.
        o.insert("parking".to_owned(), json!(parking));
        o.insert("spinning".to_owned(), json!(e.spinning));
    }
    if let (Some(s), Some(o)) = (e.stateful, out.as_object_mut()) {
        // Only for a stateful search, so every other output stays as it was.
        o.insert(
            "stateful".to_owned(),
            json!({"states": s.states, "merged": s.merged}),
        );
    }
    out
}

/// The JSON report: one runtime's object, or with several (or `--coverage`) every runtime's
/// under `runtimes`, with the coverage rows.
pub fn json(sc: &Scenario, done: &[Explored], coverage: bool) -> Value {
    if done.len() == 1 && !coverage {
        return one_with(sc, &done[0]);
    }
    let sets = all_sets(done);
    let rows: Vec<Value> = done
        .iter()
        .map(|d| {
            let reached: Vec<Value> = sets
                .iter()
                .filter(|k| d.result.sets.contains_key(*k))
                .map(|k| json!(k.iter().map(|a| a.name()).collect::<Vec<_>>()))
                .collect();
            json!({"runtime": d.result.runtime.to_string(), "complete": d.result.complete,
                   "reached": reached})
        })
        .collect();
    json!({
        "scenario": sc.name,
        "runtimes": done.iter().map(|d| one_with(sc, d)).collect::<Vec<_>>(),
        "coverage": rows,
    })
}
