//! The `[cpl]` section and the message steps of a scenario (CPL.md).
//!
//! `[cpl]` names a guard file (`guards`, relative to the scenario) or inline guards (`text`),
//! the guard the twin's arm without the mechanism uses instead (`unguarded`), and a formula
//! that marks a committed action as stale (`stale`). Every agent is a lifeline (so agents are
//! single copies); the variables are the ones `set` and `take` name, in order of first use.
//! Steps: `send` (to, set, latency_ms), `recv` (from, take, set), `set` (set) and `act`
//! (name, guard, refused). Everything a user can get wrong is an error naming its line:
//! unknown lifelines, guards or variables, a `recv` that no `send` can ever feed. A scenario
//! that loads is well-formed; whether its guards express the intended policy is not checked.

use super::raw::{RawCpl, RawScenario, RawStep};
use super::resolve::Resolver;
use super::{AgentSpec, Scenario, Step};
use crate::source::ScenarioError;
use agentsim_cpl::{compile, parse_formula, parse_guards, Formula, Program};
use agentsim_cpl::{Symbols, Value};
use agentsim_models::names::Agent;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

type Res<T> = Result<T, ScenarioError>;

/// The name under which the stale detector is compiled (not a valid guard name, so it never
/// collides with one).
pub const STALE: &str = "(stale)";

/// The compiled `[cpl]` section: lifeline `i` is agent `i`.
#[derive(Clone, Debug)]
pub struct CplSpec {
    /// Where the guards came from (a path as written, or `(inline)`).
    pub source: String,
    /// The guards, compiled over the agents and the scenario's variables.
    pub prog: Program,
    /// Strings of the guards and of every `set` value.
    pub syms: Symbols,
    /// One formula per `prog.guards` entry, for the reference evaluator.
    pub formulas: Vec<Formula>,
    /// The guard the twin's arm without the mechanism uses.
    pub unguarded: Option<usize>,
    /// The stale detector's guard index.
    pub stale: Option<usize>,
}

impl CplSpec {
    /// The name of guard `g`.
    pub fn guard_name(&self, g: usize) -> &str {
        &self.prog.guards[g].0
    }
}

impl Scenario {
    /// The same scenario with every `act` step guarded by `guard` instead (the twin's other
    /// arm differs only in the guard).
    pub fn with_guard(&self, guard: usize) -> Scenario {
        let mut sc = self.clone();
        for a in &mut sc.agents {
            let mut script = (*a.script).clone();
            for step in &mut script.steps {
                if let Step::Act { guard: g, .. } = step {
                    *g = guard;
                }
            }
            a.script = Arc::new(script);
        }
        sc
    }
}

impl Resolver<'_> {
    /// Compiles `[cpl]`; `None` when the scenario has none.
    pub(super) fn cpl_spec(&mut self, raw: &RawScenario, path: &Path) -> Res<Option<CplSpec>> {
        let Some(section) = &raw.cpl else {
            return Ok(None);
        };
        if let Some(n) = raw.agents.iter().find_map(|a| a.get_ref().count.as_ref()) {
            let msg = "with [cpl] every agent is one lifeline: drop `count`";
            return self.err(n.span(), "count", msg);
        }
        let c = section.get_ref();
        let (source, text, at) = self.guard_text(c, section.span(), path)?;
        // The guard file's own position: `guards.cpl:3:5: expected …` (the error's location
        // is the scenario's `guards` key).
        let mut guards = parse_guards(&text).or_else(|e| {
            let msg = format!(
                "{source}:{}:{}: expected {}, found {}",
                e.line, e.column, e.expected, e.found
            );
            self.err(at.clone(), "guards", msg)
        })?;
        let stale = match &c.stale {
            None => None,
            Some(s) => {
                let f = parse_formula(s.get_ref(), &guards)
                    .or_else(|e| self.err(s.span(), "stale", e.to_string()))?;
                guards.defs.push((STALE.to_owned(), f));
                Some(guards.defs.len() - 1)
            }
        };
        let lifelines: Vec<String> = raw
            .agents
            .iter()
            .map(|a| a.get_ref().name.get_ref().clone())
            .collect();
        let mut syms = Symbols::new();
        let vars = collect_vars(raw, &mut syms);
        let prog = compile(&guards, &lifelines, &vars, &mut syms)
            .or_else(|e| self.err(at.clone(), "guards", format!("{source}: {e}")))?;
        if let Some(l) = prog.lifelines.get(lifelines.len()) {
            let msg = format!("{source}: lifeline `{l}` is not an agent of this scenario");
            return self.err(at, "guards", msg);
        }
        if let Some(v) = prog.vars.get(vars.len()) {
            let msg = format!("{source}: variable `{v}` is never set by a `set` or `take`");
            return self.err(at, "guards", msg);
        }
        let unguarded = match &c.unguarded {
            None => None,
            Some(u) => Some(self.guard_index(&prog, u)?),
        };
        let formulas = guards.defs.into_iter().map(|(_, f)| f).collect();
        Ok(Some(CplSpec {
            source,
            prog,
            syms,
            formulas,
            unguarded,
            stale,
        }))
    }

    /// The guards' text, its display name and the span errors in it are reported at.
    fn guard_text(
        &self,
        c: &RawCpl,
        section: std::ops::Range<usize>,
        path: &Path,
    ) -> Res<(String, String, std::ops::Range<usize>)> {
        match (&c.guards, &c.text) {
            (Some(g), None) => {
                if let Some((_, text)) = self.embedded.iter().find(|(n, _)| n == g.get_ref()) {
                    return Ok((g.get_ref().clone(), (*text).to_owned(), g.span()));
                }
                let base = path.parent().unwrap_or(Path::new("."));
                let text = std::fs::read_to_string(base.join(g.get_ref()))
                    .or_else(|e| self.err(g.span(), "guards", format!("{}: {e}", g.get_ref())))?;
                Ok((g.get_ref().clone(), text, g.span()))
            }
            (None, Some(t)) => Ok(("(inline)".into(), t.get_ref().clone(), t.span())),
            _ => self.err(
                section,
                "guards",
                "[cpl] needs exactly one of `guards` and `text`",
            ),
        }
    }

    fn guard_index(&self, prog: &Program, name: &Spanned<String>) -> Res<usize> {
        let n = name.get_ref();
        match prog.guards.iter().position(|(g, _)| g == n && g != STALE) {
            Some(i) => Ok(i),
            None => {
                let known: Vec<&str> = prog
                    .guards
                    .iter()
                    .map(|(g, _)| g.as_str())
                    .filter(|g| *g != STALE)
                    .collect();
                let msg = format!("unknown guard `{n}`; defined: {}", known.join(", "));
                self.err(name.span(), "guard", msg)
            }
        }
    }

    /// A `send`, `recv`, `set` or `act` step.
    pub(super) fn cpl_step(
        &self,
        action: &str,
        s: &Spanned<RawStep>,
        bases: &BTreeMap<String, Vec<Agent>>,
        labels: &BTreeMap<String, usize>,
        (pc, len): (usize, usize),
    ) -> Res<Step> {
        let r = s.get_ref();
        let Some(spec) = &self.cpl else {
            let msg = format!("a `{action}` step needs a [cpl] section");
            return self.err(r.action.span(), "do", msg);
        };
        let set = self.set_values(spec, r)?;
        Ok(match action {
            "send" => {
                let Some(to) = &r.to else {
                    return self.err(s.span(), "to", "a `send` needs `to`");
                };
                Step::Send {
                    to: self.agent_named(to, "to", bases)?,
                    set,
                    latency_ms: self
                        .dist(r.latency_ms.as_ref(), "latency_ms")?
                        .unwrap_or(crate::dist::Dist::ZERO),
                }
            }
            "recv" => Step::Recv {
                from: r
                    .from
                    .as_ref()
                    .map(|f| self.agent_named(f, "from", bases))
                    .transpose()?,
                take: self.take(spec, r),
                set,
            },
            "set" => Step::Set { set },
            _ => {
                let Some(g) = &r.guard else {
                    return self.err(s.span(), "guard", "an `act` needs `guard`");
                };
                Step::Act {
                    name: r
                        .name
                        .as_ref()
                        .map_or("act".into(), |n| n.get_ref().clone()),
                    guard: self.guard_index(&spec.prog, g)?,
                    refused: match &r.refused {
                        None => pc + 1,
                        Some(l) if l.get_ref() == "end" => len,
                        Some(l) => match labels.get(l.get_ref()) {
                            Some(&t) => t,
                            None => {
                                let msg =
                                    format!("no step has label `{}` (or use `end`)", l.get_ref());
                                return self.err(l.span(), "refused", msg);
                            }
                        },
                    },
                }
            }
        })
    }

    fn agent_named(
        &self,
        name: &Spanned<String>,
        key: &str,
        bases: &BTreeMap<String, Vec<Agent>>,
    ) -> Res<Agent> {
        match bases.get(name.get_ref()).and_then(|ids| ids.first()) {
            Some(&a) => Ok(a),
            None => {
                let msg = format!("unknown agent `{}`", name.get_ref());
                self.err(name.span(), key, msg)
            }
        }
    }

    fn set_values(&self, spec: &CplSpec, r: &RawStep) -> Res<Vec<(usize, Value)>> {
        let Some(set) = &r.set else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(set.get_ref().len());
        for (name, v) in set.get_ref() {
            let var = spec
                .prog
                .vars
                .iter()
                .position(|x| x == name)
                .expect("every `set` variable was collected");
            let value = match v {
                toml::Value::String(t) => {
                    Value::Str(spec.syms.get(t).expect("every `set` string was interned"))
                }
                toml::Value::Integer(i) => Value::Num(*i as f64),
                toml::Value::Float(x) if x.is_finite() => Value::Num(*x),
                toml::Value::Boolean(b) => Value::Bool(*b),
                _ => {
                    let msg = format!("`{name}` must be a string, a finite number or a boolean");
                    return self.err(set.span(), "set", msg);
                }
            };
            out.push((var, value));
        }
        Ok(out)
    }

    fn take(&self, spec: &CplSpec, r: &RawStep) -> Vec<usize> {
        r.take
            .iter()
            .flatten()
            .map(|t| {
                spec.prog
                    .vars
                    .iter()
                    .position(|x| x == t.get_ref())
                    .expect("every `take` variable was collected")
            })
            .collect()
    }

    /// Every `recv` can be fed by some `send` addressed to its agent (from `from`, if given),
    /// and nobody sends to itself (a message edge joins two lifelines).
    pub(super) fn check_messages(&self, raw: &RawScenario, agents: &[AgentSpec]) -> Res<()> {
        let sends = |from: usize, to: Agent| {
            agents[from]
                .script
                .steps
                .iter()
                .any(|s| matches!(s, Step::Send { to: t, .. } if *t == to))
        };
        for (b, spec) in agents.iter().enumerate() {
            assert_eq!(
                spec.name,
                *raw.agents[b].get_ref().name.get_ref(),
                "agent order"
            );
            let me = Agent(b as u32);
            for (pc, step) in spec.script.steps.iter().enumerate() {
                let span = raw.agents[b].get_ref().script[pc].span();
                let fed = match step {
                    Step::Send { to, .. } if *to == me => {
                        return self.err(span, "to", format!("`{}` sends to itself", spec.name))
                    }
                    Step::Recv { from: Some(f), .. } => {
                        f.0 as usize != b && sends(f.0 as usize, me)
                    }
                    Step::Recv { from: None, .. } => (0..agents.len()).any(|f| sends(f, me)),
                    _ => true,
                };
                if !fed {
                    let msg = format!(
                        "recv with no sender: no `send` step targets `{}`",
                        spec.name
                    );
                    return self.err(span, "recv", msg);
                }
            }
        }
        Ok(())
    }
}

/// The variables `set` and `take` name, in order of first use; interns `set` strings.
fn collect_vars(raw: &RawScenario, syms: &mut Symbols) -> Vec<String> {
    let mut vars: Vec<String> = Vec::new();
    let mut add = |v: &str| {
        if !vars.iter().any(|x| x == v) {
            vars.push(v.to_owned());
        }
    };
    for a in &raw.agents {
        for s in &a.get_ref().script {
            let r = s.get_ref();
            for t in r.take.iter().flatten() {
                add(t.get_ref());
            }
            for (name, v) in r.set.iter().flat_map(|s| s.get_ref()) {
                add(name);
                if let toml::Value::String(t) = v {
                    syms.intern(t);
                }
            }
        }
    }
    vars
}
