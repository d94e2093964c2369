//! Wall times of an OpenTelemetry trace, one [`Timing`] per history record: the spans are
//! grouped by their `invoke_agent` ancestor and cut into steps as the reader cuts them (a
//! read or a generation after a generation or a write starts a step), each step spanning its
//! first start to its last end, its effects (memory writes, tool calls) their first start to
//! their last end, its tokens the sum of its generations' `gen_ai.usage.*`. Steps pair with
//! records in commit order when the counts and the agent names agree; otherwise the caller
//! keeps the slot clock and says why. The reader's own mapping stays the authority on what a
//! step read and wrote; this only times it.

use agentsim_ingest::otel::otlp::{self, Span};
use agentsim_models::History;
use agentsim_sim::fit::Timing;
use std::collections::BTreeMap;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Agent,
    Generate,
    Read,
    Write,
    Other,
}

fn role(s: &Span) -> Role {
    match s.str("gen_ai.operation.name") {
        Some("invoke_agent") => Role::Agent,
        Some("chat" | "generate_content" | "text_completion") => Role::Generate,
        Some("search_memory" | "retrieval") => Role::Read,
        Some("create_memory" | "update_memory" | "upsert_memory" | "delete_memory")
        | Some("execute_tool") => Role::Write,
        _ => Role::Other,
    }
}

fn int(s: &Span, key: &str) -> Option<u64> {
    let v = s.attrs.get(key)?;
    v.as_u64()
        .or_else(|| v.as_str().and_then(|t| t.parse().ok()))
}

/// One timed step.
struct StepTimes {
    agent: String,
    start: u64,
    end: u64,
    effect: Option<(u64, u64)>,
    prompt: Option<u64>,
    completion: Option<u64>,
}

/// The timings of `h`'s records from the trace `text`, or why they cannot be paired.
pub fn timings(text: &str, file: &str, h: &History) -> Result<Vec<Timing>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let spans = otlp::parse(text, file).map_err(|e| e.to_string())?;
    let mut steps = steps(&spans);
    steps.sort_by_key(|s| (s.end, s.start));
    if steps.len() != h.records.len() {
        return Err(format!(
            "{} timed steps for {} records",
            steps.len(),
            h.records.len()
        ));
    }
    for (s, r) in steps.iter().zip(&h.records) {
        let agent = h.names.agent_name(r.agent);
        if !agent.starts_with(&s.agent) {
            return Err(format!(
                "step of `{}` pairs with a record of `{agent}`",
                s.agent
            ));
        }
    }
    let t0 = spans.iter().map(|s| s.start).min().unwrap_or(0);
    let ms = |ns: u64| (ns.saturating_sub(t0) + 500_000) / 1_000_000;
    Ok(steps
        .iter()
        .map(|s| Timing {
            read_ms: ms(s.start),
            commit_ms: ms(s.end).max(ms(s.start)),
            effect_ms: s.effect.map(|(a, b)| ms(b).saturating_sub(ms(a))),
            prompt_tokens: s.prompt,
            completion_tokens: s.completion,
        })
        .collect())
}

/// The steps of every invocation.
fn steps(spans: &[Span]) -> Vec<StepTimes> {
    let index: BTreeMap<(&str, &str), usize> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.trace.as_str(), s.id.as_str()), i))
        .collect();
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, s) in spans.iter().enumerate() {
        if matches!(role(s), Role::Agent | Role::Other) {
            continue;
        }
        if let Some(owner) = owner(spans, &index, i) {
            members.entry(owner).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for (owner, mut ms) in members {
        let a = &spans[owner];
        let agent = a
            .str("gen_ai.agent.name")
            .or_else(|| a.str("gen_ai.agent.id"))
            .unwrap_or("")
            .to_owned();
        ms.sort_by_key(|&i| (spans[i].start, i));
        let mut cur: Vec<usize> = Vec::new();
        let mut segments = Vec::new();
        for i in ms {
            let r = role(&spans[i]);
            let closes = cur
                .iter()
                .any(|&j| matches!(role(&spans[j]), Role::Generate | Role::Write));
            if matches!(r, Role::Read | Role::Generate) && closes {
                segments.push(std::mem::take(&mut cur));
            }
            cur.push(i);
        }
        segments.push(cur);
        for seg in segments.into_iter().filter(|s| !s.is_empty()) {
            out.push(timed(spans, &agent, &seg));
        }
    }
    out
}

fn timed(spans: &[Span], agent: &str, seg: &[usize]) -> StepTimes {
    let start = seg.iter().map(|&i| spans[i].start).min().unwrap_or(0);
    let end = seg.iter().map(|&i| spans[i].end).max().unwrap_or(start);
    let writes: Vec<&Span> = seg
        .iter()
        .map(|&i| &spans[i])
        .filter(|s| role(s) == Role::Write)
        .collect();
    let effect = (!writes.is_empty()).then(|| {
        let a = writes.iter().map(|s| s.start).min().unwrap_or(0);
        let b = writes.iter().map(|s| s.end).max().unwrap_or(a);
        (a, b)
    });
    let gens: Vec<&Span> = seg
        .iter()
        .map(|&i| &spans[i])
        .filter(|s| role(s) == Role::Generate)
        .collect();
    let sum = |key: &str| -> Option<u64> {
        let xs: Vec<u64> = gens.iter().filter_map(|s| int(s, key)).collect();
        (!xs.is_empty()).then(|| xs.iter().sum())
    };
    StepTimes {
        agent: agent.to_owned(),
        start,
        end,
        effect,
        prompt: sum("gen_ai.usage.input_tokens"),
        completion: sum("gen_ai.usage.output_tokens"),
    }
}

/// The nearest `invoke_agent` ancestor of span `i`.
fn owner(spans: &[Span], index: &BTreeMap<(&str, &str), usize>, i: usize) -> Option<usize> {
    let mut cur = i;
    for _ in 0..spans.len() {
        let s = &spans[cur];
        let parent = s.parent.as_deref()?;
        let &p = index.get(&(s.trace.as_str(), parent))?;
        if role(&spans[p]) == Role::Agent {
            return Some(p);
        }
        cur = p;
    }
    None
}
