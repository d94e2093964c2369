//! From the file as written ([`super::raw`]) to a [`Scenario`]: intern names, expand agent
//! copies, resolve every name to an id (or fail at its line), and compute each script's
//! operation structure (which `read` opens the operation a step is in, which `write` closes
//! it). Structural rules are checked here once so the engine can assert them.

use super::limits::{self, within};
use super::raw::{RawAgent, RawScenario, RawStep};
use super::{AgentSpec, Cond, EffectOrder, McpClient, Scenario, Script, Step, TRIALS_DEFAULT};
use crate::dist::Dist;
use crate::source::{ScenarioError, Source};
use agentsim_models::names::{Agent, Cell, Names, Tool};
use agentsim_models::runtime::RegistryChange;
use agentsim_models::runtime::Stack;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

type Res<T> = Result<T, ScenarioError>;

/// Parses and resolves scenario text.
pub fn resolve(path: &Path, text: &str, embedded: &[(&str, &str)]) -> Res<Scenario> {
    let src = Source { file: path, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| src.from_toml(&e))?;
    let r = Resolver {
        src,
        names: Names::new(),
        cpl: None,
        embedded,
    };
    r.scenario(raw, path)
}

pub(super) struct Resolver<'a> {
    pub(super) src: Source<'a>,
    pub(super) names: Names,
    /// The compiled `[cpl]` section, once resolved (message steps need it).
    pub(super) cpl: Option<super::CplSpec>,
    /// Files the scenario names (guard files), by the name it gives, compiled into the
    /// binary: looked up here before the disk.
    pub(super) embedded: &'a [(&'a str, &'a str)],
}

impl Resolver<'_> {
    pub(super) fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        key: &str,
        msg: impl Into<String>,
    ) -> Res<T> {
        Err(self.src.error(span, key, msg))
    }

    fn scenario(mut self, raw: RawScenario, path: &Path) -> Res<Scenario> {
        let runtime = Stack::parse(raw.runtime.get_ref())
            .or_else(|m| self.err(raw.runtime.span(), "runtime", m.to_string()))?;
        let trials = match &raw.trials {
            None => TRIALS_DEFAULT,
            Some(t) => within(*t.get_ref(), 1, limits::TRIALS_MAX)
                .or_else(|m| self.err(t.span(), "trials", m))?,
        };
        self.declare(&raw.cells, "cells", |n, s| n.cell(s).0)?;
        self.declare(&raw.tools, "tools", |n, s| n.tool(s).0)?;
        let bases = self.declare_agents(&raw.agents)?;
        let (window_ms, events_max) = self.schedule(&raw)?;
        self.cpl = self.cpl_spec(&raw, path)?;
        let mut agents = Vec::new();
        for a in &raw.agents {
            agents.extend(self.agent(a.get_ref(), &bases)?);
        }
        if self.cpl.is_some() {
            self.check_messages(&raw, &agents)?;
        }
        let generator = self.generator(&raw, path)?;
        let tokens = self.tokens(&raw)?;
        let retry = self.retry(&raw)?;
        super::expect::resolve(self.src, &raw.expect, super::expect::Engine::Simulate)?;
        Ok(Scenario {
            name: raw.name.into_inner(),
            file: path.to_path_buf(),
            runtime,
            provenance: raw.provenance.unwrap_or(false),
            trials,
            seed: raw.seed.unwrap_or(0),
            cell_count: self.names.cells.len() as u32,
            tool_count: self.names.tools.len() as u32,
            names: self.names,
            agents,
            tokens,
            retry,
            window_ms,
            events_max,
            generator,
            cpl: self.cpl.map(Arc::new),
            repeat_cap: None,
        })
    }

    /// Interns a list of declared names; duplicates are errors.
    fn declare(
        &mut self,
        list: &[Spanned<String>],
        key: &str,
        mut intern: impl FnMut(&mut Names, &str) -> u32,
    ) -> Res<()> {
        for (i, s) in list.iter().enumerate() {
            let before = list[..i].iter().any(|p| p.get_ref() == s.get_ref());
            if before || s.get_ref().is_empty() {
                return self.err(
                    s.span(),
                    key,
                    format!("`{}` is empty or declared twice", s.get_ref()),
                );
            }
            intern(&mut self.names, s.get_ref());
        }
        Ok(())
    }

    /// Interns every agent copy; returns base name → the copies' ids.
    fn declare_agents(
        &mut self,
        agents: &[Spanned<RawAgent>],
    ) -> Res<BTreeMap<String, Vec<Agent>>> {
        let mut bases: BTreeMap<String, Vec<Agent>> = BTreeMap::new();
        if agents.is_empty() {
            return self.err(
                0..0,
                "agents",
                "a scenario needs at least one [[agents]] entry",
            );
        }
        let mut total: u32 = 0;
        for a in agents {
            let a = a.get_ref();
            let base = a.name.get_ref();
            let count = a.count.as_ref().map_or(1, |c| *c.get_ref());
            if let Some(c) = a.count.as_ref().filter(|c| *c.get_ref() == 0) {
                return self.err(c.span(), "count", "must be at least 1");
            }
            total = total.saturating_add(count);
            if total > limits::AGENTS_MAX {
                let span = a.count.as_ref().map_or(a.name.span(), Spanned::span);
                let msg = format!(
                    "{total} agents so far (copies included), more than the {} a scenario \
                     may have",
                    limits::AGENTS_MAX
                );
                return self.err(span, "count", msg);
            }
            if let Some(r) = &a.repeat {
                within(*r.get_ref(), 1, limits::REPEAT_MAX)
                    .or_else(|m| self.err(r.span(), "repeat", m))?;
            }
            if bases.contains_key(base) || base.is_empty() || base.contains('.') {
                let msg = format!("agent `{base}` is empty, contains `.`, or is declared twice");
                return self.err(a.name.span(), "name", msg);
            }
            let ids = (0..count)
                .map(|k| copy_name(base, count, k))
                .map(|n| self.names.agent(&n))
                .collect();
            bases.insert(base.clone(), ids);
        }
        Ok(bases)
    }

    fn agent(&self, a: &RawAgent, bases: &BTreeMap<String, Vec<Agent>>) -> Res<Vec<AgentSpec>> {
        let start_ms = self
            .dist(a.start_ms.as_ref(), "start_ms")?
            .unwrap_or(Dist::ZERO);
        let script = Arc::new(self.script(&a.script, bases)?);
        let mcp_client = self.mcp_client(a)?;
        let serves = a.serves.as_ref().is_some_and(|s| *s.get_ref());
        if let Some(s) = a.serves.as_ref().filter(|_| serves) {
            let loops = script.steps.iter().enumerate().any(
                |(i, st)| matches!(st, crate::scenario::Step::Branch { target, .. } if *target <= i),
            );
            if !loops {
                let msg = "`serves = true` marks a script that loops forever, and this one has \
                           no backward `branch` (it ends after its last step)";
                return self.err(s.span(), "serves", msg);
            }
        }
        let base = a.name.get_ref();
        let count = a.count.as_ref().map_or(1, |c| *c.get_ref());
        Ok((0..count)
            .map(|k| AgentSpec {
                name: copy_name(base, count, k),
                base: base.clone(),
                repeat: a.repeat.as_ref().map_or(1, |r| *r.get_ref()),
                start_ms,
                script: Arc::clone(&script),
                mcp_client,
                serves,
            })
            .collect())
    }

    /// `mcp_client`: `stale`, `relist` or `refresh`, in a scenario that declares tools to list.
    fn mcp_client(&self, a: &RawAgent) -> Res<Option<McpClient>> {
        let Some(k) = &a.mcp_client else {
            return Ok(None);
        };
        let c = McpClient::parse(k.get_ref()).or_else(|m| self.err(k.span(), "mcp_client", m))?;
        if self.names.tools.is_empty() {
            let msg = "an MCP client needs tools to list: declare them in `tools`";
            return self.err(k.span(), "mcp_client", msg);
        }
        Ok(Some(c))
    }

    fn script(
        &self,
        raw: &[Spanned<RawStep>],
        bases: &BTreeMap<String, Vec<Agent>>,
    ) -> Res<Script> {
        let labels = self.labels(raw)?;
        let mut script = Script::default();
        let mut open: Option<usize> = None;
        for (pc, s) in raw.iter().enumerate() {
            let step = self.step(s, bases, &labels, (pc, raw.len()))?;
            match (&step, open) {
                (Step::Read { .. }, Some(_)) => {
                    return self.err(
                        s.span(),
                        "do",
                        "`read` while an operation is open (add a `write`)",
                    )
                }
                (Step::Write { .. }, None) => {
                    return self.err(
                        s.span(),
                        "do",
                        "`write` with no open operation (add a `read`)",
                    )
                }
                _ => {}
            }
            script.op_start.push(if matches!(step, Step::Read { .. }) {
                Some(pc)
            } else {
                open
            });
            match step {
                Step::Read { .. } => open = Some(pc),
                Step::Write { .. } => open = None,
                _ => {}
            }
            script.op_close.push(0);
            script
                .labels
                .push(s.get_ref().label.as_ref().map(|l| l.get_ref().clone()));
            script.steps.push(step);
        }
        if let (Some(pc), Some(last)) = (open, raw.last()) {
            return self.err(
                last.span(),
                "script",
                format!("the `read` at step {pc} is never closed by a `write`"),
            );
        }
        self.link_ops(&mut script, raw)?;
        Ok(script)
    }

    /// Fills `op_close` and checks that every `goto` stays within one operation (or outside).
    fn link_ops(&self, script: &mut Script, raw: &[Spanned<RawStep>]) -> Res<()> {
        for pc in 0..script.steps.len() {
            if matches!(script.steps[pc], Step::Write { .. }) {
                let read = script.op_start[pc].expect("a write is inside an operation");
                script.op_close[read] = pc;
            }
        }
        for (pc, step) in script.steps.iter().enumerate() {
            let jump = match *step {
                Step::Branch { target, .. } => Some((target, "goto")),
                Step::Act { refused, .. } => Some((refused, "refused")),
                _ => None,
            };
            if let Some((target, key)) = jump {
                let here = script.op_start[pc];
                let there = script.op_start.get(target).copied().flatten();
                let there = if matches!(script.steps.get(target), Some(Step::Read { .. })) {
                    None
                } else {
                    there
                };
                if here != there {
                    let msg = format!("`{key}` must not jump into or out of an operation");
                    return self.err(raw[pc].span(), key, msg);
                }
            }
        }
        Ok(())
    }

    fn labels(&self, raw: &[Spanned<RawStep>]) -> Res<BTreeMap<String, usize>> {
        let mut labels = BTreeMap::new();
        for (pc, s) in raw.iter().enumerate() {
            if let Some(l) = &s.get_ref().label {
                if l.get_ref() == "end" || labels.insert(l.get_ref().clone(), pc).is_some() {
                    return self.err(
                        l.span(),
                        "label",
                        format!("label `{}` is reserved or repeated", l.get_ref()),
                    );
                }
            }
        }
        Ok(labels)
    }

    fn step(
        &self,
        s: &Spanned<RawStep>,
        bases: &BTreeMap<String, Vec<Agent>>,
        labels: &BTreeMap<String, usize>,
        (pc, len): (usize, usize),
    ) -> Res<Step> {
        let r = s.get_ref();
        let action = r.action.get_ref().as_str();
        let allowed: &[&str] = match action {
            "read" => &["cells", "pick", "tool"],
            "generate" => &["latency_ms", "completion"],
            "write" => &["cells", "pick", "include_read", "effect_ms", "order"],
            "wait" => &["latency_ms", "prob"],
            "retract" => &["agent", "prob"],
            "registry" => &["change", "tool", "prob"],
            "branch" => &["cell", "when", "goto", "prob"],
            "send" => &["to", "set", "latency_ms"],
            "recv" => &["from", "take", "set"],
            "set" => &["set"],
            "act" => &["name", "guard", "refused"],
            _ => {
                let msg = format!(
                    "unknown step `{action}`; valid: read, generate, write, wait, retract, \
                     registry, branch, send, recv, set, act"
                );
                return self.err(r.action.span(), "do", msg);
            }
        };
        if let Some(k) = r.present_keys().into_iter().find(|k| !allowed.contains(k)) {
            let msg = format!(
                "key `{k}` is not allowed in a `{action}` step (allowed: {})",
                allowed.join(", ")
            );
            return self.err(s.span(), k, msg);
        }
        let prob = self.prob(r)?;
        Ok(match action {
            "read" => Step::Read {
                cells: self.cells(r, s, true)?,
                pick: self.pick(r)?,
                tool: r.tool.as_ref().map(|t| self.tool(t)).transpose()?,
            },
            "generate" => Step::Generate {
                latency_ms: self.need_dist(r.latency_ms.as_ref(), s, "latency_ms")?,
                completion: self.dist(r.completion.as_ref(), "completion")?,
            },
            "write" => Step::Write {
                cells: self.cells(r, s, false)?,
                pick: self.pick(r)?,
                include_read: r.include_read.unwrap_or(false),
                effect_ms: self
                    .dist(r.effect_ms.as_ref(), "effect_ms")?
                    .unwrap_or(Dist::ZERO),
                order: self.order(r)?,
            },
            "wait" => Step::Wait {
                latency_ms: self.need_dist(r.latency_ms.as_ref(), s, "latency_ms")?,
                prob,
            },
            "retract" => Step::Retract {
                targets: self.targets(r, s, bases)?,
                prob,
            },
            "registry" => Step::Registry {
                change: self.change(r, s)?,
                prob,
            },
            "send" | "recv" | "set" | "act" => {
                self.cpl_step(action, s, bases, labels, (pc, len))?
            }
            _ => self.branch(r, s, labels, len, prob)?,
        })
    }

    fn branch(
        &self,
        r: &RawStep,
        s: &Spanned<RawStep>,
        labels: &BTreeMap<String, usize>,
        len: usize,
        prob: f64,
    ) -> Res<Step> {
        let Some(cell) = &r.cell else {
            return self.err(s.span(), "cell", "a `branch` needs `cell`");
        };
        let Some(when) = &r.when else {
            return self.err(s.span(), "when", "a `branch` needs `when`");
        };
        let Some(goto) = &r.goto else {
            return self.err(s.span(), "goto", "a `branch` needs `goto`");
        };
        let when = match when.get_ref().as_str() {
            "null" => Cond::Null,
            "not-null" => Cond::NotNull,
            w => {
                return self.err(
                    when.span(),
                    "when",
                    format!("`{w}` is not `null` or `not-null`"),
                )
            }
        };
        let target = match goto.get_ref().as_str() {
            "end" => len,
            l => match labels.get(l) {
                Some(&pc) => pc,
                None => {
                    return self.err(
                        goto.span(),
                        "goto",
                        format!("no step has label `{l}` (or use `end`)"),
                    )
                }
            },
        };
        Ok(Step::Branch {
            cell: self.cell(cell)?,
            when,
            target,
            prob,
        })
    }

    fn cells(&self, r: &RawStep, s: &Spanned<RawStep>, read: bool) -> Res<Vec<Cell>> {
        let Some(list) = &r.cells else {
            return self.err(
                s.span(),
                "cells",
                "this step needs `cells` (it may be empty)",
            );
        };
        let mut out = list.iter().map(|c| self.cell(c)).collect::<Res<Vec<_>>>()?;
        out.sort_unstable();
        out.dedup();
        if let Some(p) = &r.pick {
            if *p.get_ref() as usize > out.len() {
                let msg = format!(
                    "pick {} exceeds the {} cells listed",
                    p.get_ref(),
                    out.len()
                );
                return self.err(p.span(), "pick", msg);
            }
        }
        let _ = read;
        Ok(out)
    }

    fn cell(&self, c: &Spanned<String>) -> Res<Cell> {
        match self.names.cells.get(c.get_ref()) {
            Some(id) => Ok(Cell(id)),
            None => self.err(
                c.span(),
                "cells",
                format!("unknown cell `{}` (declare it in `cells`)", c.get_ref()),
            ),
        }
    }

    fn tool(&self, t: &Spanned<String>) -> Res<Tool> {
        match self.names.tools.get(t.get_ref()) {
            Some(id) => Ok(Tool(id)),
            None => self.err(
                t.span(),
                "tool",
                format!("unknown tool `{}` (declare it in `tools`)", t.get_ref()),
            ),
        }
    }

    fn pick(&self, r: &RawStep) -> Res<Option<u32>> {
        Ok(r.pick.as_ref().map(|p| *p.get_ref()))
    }

    fn prob(&self, r: &RawStep) -> Res<f64> {
        match &r.prob {
            None => Ok(1.0),
            Some(p) if (0.0..=1.0).contains(p.get_ref()) => Ok(*p.get_ref()),
            Some(p) => self.err(
                p.span(),
                "prob",
                format!("{} is not a probability in [0, 1]", p.get_ref()),
            ),
        }
    }

    fn order(&self, r: &RawStep) -> Res<EffectOrder> {
        match r.order.as_ref() {
            None => Ok(EffectOrder::Latency),
            Some(o) => match o.get_ref().as_str() {
                "latency" => Ok(EffectOrder::Latency),
                "non-identity" => Ok(EffectOrder::NonIdentity),
                other => self.err(
                    o.span(),
                    "order",
                    format!("`{other}` is not `latency` or `non-identity`"),
                ),
            },
        }
    }

    fn targets(
        &self,
        r: &RawStep,
        s: &Spanned<RawStep>,
        bases: &BTreeMap<String, Vec<Agent>>,
    ) -> Res<Vec<Agent>> {
        let Some(a) = &r.agent else {
            return self.err(s.span(), "agent", "a `retract` needs `agent`");
        };
        match bases.get(a.get_ref()) {
            Some(ids) => Ok(ids.clone()),
            None => self.err(
                a.span(),
                "agent",
                format!("unknown agent `{}`", a.get_ref()),
            ),
        }
    }

    fn change(&self, r: &RawStep, s: &Spanned<RawStep>) -> Res<RegistryChange> {
        let Some(c) = &r.change else {
            return self.err(s.span(), "change", "a `registry` step needs `change`");
        };
        let Some(t) = &r.tool else {
            return self.err(s.span(), "tool", "a `registry` step needs `tool`");
        };
        let tool = self.tool(t)?;
        match c.get_ref().as_str() {
            "remove" => Ok(RegistryChange::Remove(tool)),
            "signature" => Ok(RegistryChange::ChangeSignature(tool)),
            "add" => Ok(RegistryChange::Add(tool)),
            x => self.err(
                c.span(),
                "change",
                format!("`{x}` is not remove, signature or add"),
            ),
        }
    }

    pub(super) fn dist(&self, d: Option<&Spanned<Dist>>, key: &str) -> Res<Option<Dist>> {
        match d {
            None => Ok(None),
            Some(d) => match d.get_ref().validate() {
                Ok(()) => Ok(Some(*d.get_ref())),
                Err(e) => self.err(d.span(), key, e.to_string()),
            },
        }
    }

    fn need_dist(&self, d: Option<&Spanned<Dist>>, s: &Spanned<RawStep>, key: &str) -> Res<Dist> {
        match self.dist(d, key)? {
            Some(d) => Ok(d),
            None => self.err(s.span(), key, format!("this step needs `{key}`")),
        }
    }
}

/// The name of copy `k` of `count` copies of `base`: `base` alone, or `base.1` … `base.count`.
pub fn copy_name(base: &str, count: u32, k: u32) -> String {
    if count == 1 {
        base.to_owned()
    } else {
        format!("{base}.{}", k + 1)
    }
}
