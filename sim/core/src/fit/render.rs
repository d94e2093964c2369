//! The fitted scenario as TOML text: the header that says what was fitted from how many
//! samples and what could not be inferred, then the scenario with each choice in a comment.

use super::lognormal::{self, FIT_SAMPLES_MIN};
use super::timeline::SLOT_MS;
use super::{tools, Event, Fitted, Group, Observed, OpKey, Timing};
use crate::dist::Dist;
use agentsim_models::History;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// What a render needs.
pub(super) struct Cx<'a> {
    pub obs: &'a Observed<'a>,
    pub h: &'a History,
    pub times: &'a [Timing],
    pub groups: &'a [Group],
    pub events: &'a [(u64, Event)],
    pub notes: Vec<String>,
}

/// The quantities fitted per agent and step kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Start,
    Generate,
    Effect,
    Wait,
    Completion,
}

const KINDS: [Kind; 5] = [
    Kind::Start,
    Kind::Generate,
    Kind::Effect,
    Kind::Wait,
    Kind::Completion,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Start => "start offsets",
            Kind::Generate => "generation latencies",
            Kind::Effect => "effect latencies",
            Kind::Wait => "waits between operations",
            Kind::Completion => "completion tokens",
        }
    }

    fn index(self) -> usize {
        KINDS.iter().position(|&k| k == self).unwrap_or(0)
    }
}

/// The samples of step `j` of group `g` of kind `k`, one per lane that has it.
fn samples(times: &[Timing], g: &Group, j: usize, k: Kind) -> Vec<u64> {
    let one = |recs: &Vec<usize>| -> Option<u64> {
        let tm = *times.get(*recs.get(j)?)?;
        let effect = tm.effect_ms.unwrap_or(0);
        match k {
            Kind::Start => (j == 0).then_some(tm.read_ms),
            Kind::Generate => Some(tm.commit_ms.saturating_sub(tm.read_ms + effect)),
            Kind::Effect => tm.effect_ms,
            Kind::Wait => recs
                .get(j + 1)
                .map(|&n| times[n].read_ms.saturating_sub(tm.commit_ms)),
            Kind::Completion => tm.completion_tokens,
        }
    };
    g.records.iter().filter_map(one).collect()
}

/// How each step of a group is modelled: pooled over the group's steps of one kind when
/// there are enough samples for a fit, else per step.
struct Models<'a> {
    times: &'a [Timing],
    /// Per kind: samples seen, log-normal fits made.
    tally: [(usize, usize); 5],
}

impl Models<'_> {
    fn of(&mut self, g: &Group, j: usize, k: Kind) -> Option<(Dist, String)> {
        let mine = samples(self.times, g, j, k);
        if mine.is_empty() {
            return None;
        }
        let pooled: Vec<u64> = (0..g.ops.len())
            .flat_map(|i| samples(self.times, g, i, k))
            .collect();
        self.tally[k.index()].0 += mine.len();
        if let Some(l) = lognormal::fit(&pooled) {
            self.tally[k.index()].1 += 1;
            let why = format!(
                "lognormal MLE of {} {} of `{}`",
                pooled.len(),
                k.name(),
                g.name
            );
            return Some((Dist::Lognormal(l), why));
        }
        Some(lognormal::model(&mine))
    }
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn list(xs: &[String]) -> String {
    let v: Vec<String> = xs.iter().map(|x| q(x)).collect();
    format!("[{}]", v.join(", "))
}

/// Renders the scenario and pairs it with the observed run's keys.
pub(super) fn render(cx: Cx<'_>, expected: Vec<OpKey>) -> Fitted {
    let mut models = Models {
        times: cx.times,
        tally: [(0, 0); 5],
    };
    let mut agents = String::new();
    for g in cx.groups {
        agents.push_str(&agent(g, &mut models));
    }
    let (maintainer, supervisor) = helper_names(cx.groups);
    agents.push_str(&helpers(&cx, &maintainer, &supervisor));
    let tokens = tokens(&cx);
    let header = header(&cx, &models.tally, &tokens.1);
    let mut s = String::new();
    for line in &header {
        // A TOML comment holds no control character (a name from a trace may carry one).
        let _ = writeln!(s, "# {}", comment_text(line));
    }
    let h = cx.h;
    let mut cells: BTreeSet<String> = BTreeSet::new();
    for r in &h.records {
        cells.extend(r.read_set.iter().map(|&c| h.names.cell_name(c)));
        cells.extend(r.write_set.iter().map(|&c| h.names.cell_name(c)));
    }
    let cells: Vec<String> = cells.into_iter().collect();
    let tools: Vec<String> = tools(h).into_iter().collect();
    let provenance = h.records.iter().any(|r| !r.preds.is_empty());
    let _ = writeln!(s, "name = {}", q(&cx.obs.name));
    let _ = writeln!(
        s,
        "description = {}",
        q(&format!("fitted from {}", cx.obs.source))
    );
    let _ = writeln!(s, "runtime = \"vanilla\"");
    let _ = writeln!(
        s,
        "provenance = {provenance}{}",
        if provenance {
            "  # the input records preds"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "trials = {}", cx.obs.trials);
    let _ = writeln!(s, "seed = {}", cx.obs.seed);
    let _ = writeln!(s, "cells = {}", list(&cells));
    if !tools.is_empty() {
        let _ = writeln!(s, "tools = {}", list(&tools));
    }
    s.push_str("\n[retry]  # not observed: what a stack's aborts and drops retry with\n");
    s.push_str("max = 3\nbackoff_ms = { uniform = [100, 500] }\n\n");
    s.push_str(&tokens.0);
    s.push_str(&agents);
    let samples = KINDS
        .iter()
        .map(|&k| {
            (
                k.name(),
                models.tally[k.index()].0,
                models.tally[k.index()].1,
            )
        })
        .collect();
    Fitted {
        toml: s,
        expected,
        header,
        samples,
    }
}

/// One `[[agents]]` entry.
fn agent(g: &Group, models: &mut Models<'_>) -> String {
    let mut s = String::from("\n[[agents]]\n");
    let _ = writeln!(s, "name = {}", q(&g.name));
    if g.lanes.len() > 1 {
        let _ = writeln!(
            s,
            "count = {}  # {} lanes with the same operations",
            g.lanes.len(),
            g.lanes.len()
        );
    }
    if let Some((d, why)) = models.of(g, 0, Kind::Start) {
        let _ = writeln!(s, "start_ms = {}  # {why}", lognormal::toml(&d));
    }
    s.push_str("script = [\n");
    for (j, op) in g.ops.iter().enumerate() {
        let tool = op
            .tool
            .as_ref()
            .map(|t| format!(", tool = {}", q(t)))
            .unwrap_or_default();
        let rec = op.record;
        let _ = writeln!(
            s,
            "  {{ do = \"read\", cells = {}{tool} }},  # record {rec}",
            list(&op.read)
        );
        let (lat, why) = models
            .of(g, j, Kind::Generate)
            .unwrap_or((Dist::Fixed(0.0), String::new()));
        let completion = models.of(g, j, Kind::Completion);
        let c = completion
            .as_ref()
            .map(|(d, _)| format!(", completion = {}", lognormal::toml(d)))
            .unwrap_or_default();
        let cwhy = completion
            .map(|(_, w)| format!("; completion tokens: {w}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {{ do = \"generate\", latency_ms = {}{c} }},  # {why}{cwhy}",
            lognormal::toml(&lat)
        );
        let effect = models.of(g, j, Kind::Effect);
        let e = effect
            .as_ref()
            .map(|(d, _)| format!(", effect_ms = {}", lognormal::toml(d)))
            .unwrap_or_default();
        let order = if op.reorder {
            ", order = \"non-identity\""
        } else {
            ""
        };
        let mut why = effect
            .map(|(_, w)| format!("effects: {w}"))
            .unwrap_or_default();
        if op.reorder {
            why.push_str(if why.is_empty() { "" } else { "; " });
            why.push_str("effects completed out of issue order");
        }
        let why = if why.is_empty() {
            String::new()
        } else {
            format!("  # {why}")
        };
        let _ = writeln!(
            s,
            "  {{ do = \"write\", cells = {}{e}{order} }},{why}",
            list(&op.write)
        );
        if let Some((d, why)) = models.of(g, j, Kind::Wait) {
            let _ = writeln!(
                s,
                "  {{ do = \"wait\", latency_ms = {} }},  # {why}",
                lognormal::toml(&d)
            );
        }
    }
    s.push_str("]\n");
    s
}

/// Names for the registry maintainer and the supervisor no observed agent has.
fn helper_names(groups: &[Group]) -> (String, String) {
    let taken: BTreeSet<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    let free = |base: &str| -> String {
        let mut name = base.to_owned();
        let mut k = 2;
        while taken.contains(name.as_str()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        name
    };
    (free("registry-maintainer"), free("supervisor"))
}

/// The maintainer (registry changes) and the supervisor (retractions), each a list of waits
/// and its steps at the times the run showed.
fn helpers(cx: &Cx<'_>, maintainer: &str, supervisor: &str) -> String {
    let mut s = String::new();
    for (name, registry) in [(maintainer, true), (supervisor, false)] {
        let mine: Vec<&(u64, Event)> = cx
            .events
            .iter()
            .filter(|(_, e)| matches!(e, Event::Registry { .. }) == registry)
            .collect();
        let mut mine = mine;
        mine.sort_by_key(|(t, e)| (*t, e.clone()));
        if mine.is_empty() {
            continue;
        }
        let what = if registry {
            "the registry changes the observed registries show"
        } else {
            "the retractions the observed `aborted` flags show"
        };
        let _ = write!(
            s,
            "\n[[agents]]  # {what}\nname = {}\nscript = [\n",
            q(name)
        );
        let mut now = 0;
        for (t, e) in mine {
            if *t > now {
                let _ = writeln!(
                    s,
                    "  {{ do = \"wait\", latency_ms = {{ fixed = {} }} }},",
                    t - now
                );
                now = *t;
            }
            match e {
                Event::Registry { change, tool } => {
                    let _ = writeln!(
                        s,
                        "  {{ do = \"registry\", change = \"{change}\", tool = {} }},  # at {t} ms",
                        q(tool)
                    );
                }
                Event::Retract { agent } => {
                    let _ = writeln!(
                        s,
                        "  {{ do = \"retract\", agent = {} }},  # at {t} ms",
                        q(agent)
                    );
                }
            }
        }
        s.push_str("]\n");
    }
    s
}

/// The `[tokens]` table and what the header says of it.
fn tokens(cx: &Cx<'_>) -> (String, String) {
    let prompts: Vec<u64> = cx.times.iter().filter_map(|t| t.prompt_tokens).collect();
    let completions: Vec<u64> = cx
        .times
        .iter()
        .filter_map(|t| t.completion_tokens)
        .collect();
    let mut s = String::from("[tokens]");
    let said = if prompts.is_empty() {
        s.push_str("  # not observed: the simulator's example sizes\n");
        s.push_str("prompt_base = 300\nprompt_per_cell = 800\n");
        "prompt tokens (not observed: 300 + 800 per cell read)".to_owned()
    } else {
        let mut p = prompts.clone();
        p.sort_unstable();
        let median = p[p.len() / 2];
        let _ = writeln!(
            s,
            "  # prompt: median of {} observed\nprompt_base = {median}\nprompt_per_cell = 0",
            p.len()
        );
        format!(
            "prompt tokens (median of {} gen_ai.usage.input_tokens)",
            p.len()
        )
    };
    let completion = if completions.is_empty() {
        "{ fixed = 400 }  # not observed".to_owned()
    } else {
        let (d, why) = lognormal::model(&completions);
        format!("{}  # {why}", lognormal::toml(&d))
    };
    let _ = writeln!(s, "completion = {completion}");
    (s, said)
}

fn header(cx: &Cx<'_>, tally: &[(usize, usize); 5], tokens: &str) -> Vec<String> {
    let h = cx.h;
    let lanes: usize = cx.groups.iter().map(|g| g.lanes.len()).sum();
    let mut out = vec![
        format!(
            "Fitted by `agentsim fit` from {}: {} records, {} agents ({} [[agents]] entries).",
            cx.obs.source,
            h.records.len(),
            lanes,
            cx.groups.len()
        ),
        match cx.obs.times {
            Some(_) => "Clock: the input's wall times, in ms from its first span.".to_owned(),
            None => format!(
                "Clock: log positions, {SLOT_MS} ms each: the input has no durations, so the \
                 durations below keep its order and are not measurements."
            ),
        },
    ];
    let fitted: Vec<String> = KINDS
        .iter()
        .filter(|k| tally[k.index()].0 > 0)
        .map(|k| {
            let (n, fits) = tally[k.index()];
            format!("{} ({n} samples, {fits} lognormal fits)", k.name())
        })
        .collect();
    out.push(format!(
        "Fitted: {}; {tokens}. A lognormal (maximum likelihood) where an agent's step kind has \
         at least {FIT_SAMPLES_MIN} samples, else the observed value (or the copies' range); each \
         step's comment says which.",
        fitted.join(", ")
    ));
    out.push(
        "Not inferred: branches not taken and the conditions of any branch (each script \
         replays the operations observed, in order); tools in a registry that no operation \
         called; the values (the stub generator makes its own); the retry policy."
            .to_owned(),
    );
    let never: Vec<String> = tools(h).difference(&called(h)).cloned().collect();
    if !never.is_empty() {
        out.push(format!("Tools never called: {}.", never.join(", ")));
    }
    out.extend(cx.notes.iter().map(|n| format!("Note: {n}")));
    out
}

/// The tools the history shows called: each record's planned tool, and every tool whose call
/// is an effect of a record (`tool:NAME:CALL`, as every reader names a call's effect), so the
/// second call of a step that issued two in parallel counts too.
fn called(h: &History) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = (h.records.iter())
        .filter_map(|r| r.planned_tool.map(|t| h.names.tool_name(t)))
        .collect();
    let effects: BTreeSet<String> = (h.records.iter())
        .flat_map(|r| r.io.iter().map(|&(c, _)| h.names.cell_name(c)))
        .collect();
    for t in tools(h) {
        let prefix = format!("tool:{t}:");
        if effects.iter().any(|c| c.starts_with(&prefix)) {
            out.insert(t);
        }
    }
    out
}

/// `line` with its control characters (but tab) written as `\u{..}`, as a TOML comment needs.
fn comment_text(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}
