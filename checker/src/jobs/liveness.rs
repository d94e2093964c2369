//! One liveness check end to end: explore the state graph of the abstract model (SPEC §5.2)
//! or of the concrete model under a runtime, decide each liveness property under the chosen
//! fairness ([`crate::engine::fair`]), and render each violation's lasso as steps.
//!
//! Where it means something: the abstract model without `--max-ops` keeps no length, so its
//! runs can be infinite and a closed exploration decides liveness for runs of every length.
//! Every concrete run ends at MaxOps (each commit, live or aborted, appends a record; each
//! begin waits for its commit; registry changes and retractions only shrink what is left),
//! so the concrete state graph has no cycle: its checks find no fair cycle and, the bound
//! having cut every run, answer *cannot tell*, which a gate refuses. So does the abstract model
//! with `--max-ops`.

use crate::engine::fair::{self, Fair, Fairness, Graph, Lasso, LiveProperty, LiveVerdict};
use crate::engine::space::StepText;
use crate::jobs::check_abstract;
use crate::jobs::run::CheckConfig;
use crate::models::abstract_model::model::AbstractError;
use crate::models::composed::RuntimeModel;
use std::time::Instant;

/// What to check.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    /// Bounds, extensions, runtime, threads and `max_states`; `properties` are the safety
    /// properties the abstract model watches (none: the smallest state).
    pub check: CheckConfig,
    /// The abstract model (else the concrete one).
    pub abstract_model: bool,
    /// With the abstract model: keep the op counter at `max_ops`.
    pub bounded: bool,
    pub properties: Vec<LiveProperty>,
    pub fairness: Fairness,
}

/// A lasso in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedLasso {
    /// The stem's steps, from the initial state to the cycle's first state.
    pub stem: Vec<String>,
    /// The cycle's steps, back to its first state; empty: stuttering there forever (no
    /// agent is enabled).
    pub cycle: Vec<String>,
    /// Action indices (`0/4/17`) of the stem and of the cycle.
    pub stem_path: String,
    pub cycle_path: String,
    /// Agents (`a1`, ...) that step in the cycle, enabled at every state of it, at some state.
    pub stepping: Vec<String>,
    pub enabled_always: Vec<String>,
    pub enabled_sometimes: Vec<String>,
}

/// One property's verdict.
#[derive(Clone, Debug)]
pub struct LiveResult {
    pub property: LiveProperty,
    pub verdict: LiveVerdict,
    /// The starving agent (`a1`, ...) for a starvation violation.
    pub agent: Option<String>,
    pub lasso: Option<RenderedLasso>,
}

/// The result of a liveness check.
#[derive(Clone, Debug)]
pub struct LiveReport {
    /// `abstract:<stack>` or `runtime:<stack>`.
    pub model: String,
    pub fairness: Fairness,
    pub states: u64,
    pub generated: u64,
    pub edges: u64,
    pub depth: u32,
    pub complete: bool,
    /// Seconds spent exploring the graph, and deciding the properties on it.
    pub explore_seconds: f64,
    pub decide_seconds: f64,
    pub results: Vec<LiveResult>,
}

/// Runs the check.
pub fn check_liveness(cfg: &LiveConfig) -> Result<LiveReport, AbstractError> {
    if cfg.check.symmetry {
        return Err(AbstractError::Unsupported(
            "liveness is checked without symmetry reduction: a fair cycle of the quotient \
             need not be one of the model (drop --symmetry)"
                .into(),
        ));
    }
    if cfg.abstract_model {
        let m = check_abstract::model(&cfg.check, cfg.bounded)?;
        Ok(run(&m, cfg, format!("abstract:{}", cfg.check.runtime)))
    } else {
        let m = RuntimeModel::of_stack(cfg.check.bounds, cfg.check.ext, cfg.check.runtime)?;
        Ok(run(&m, cfg, format!("runtime:{}", cfg.check.runtime)))
    }
}

fn run<S: Fair>(m: &S, cfg: &LiveConfig, model: String) -> LiveReport {
    let t0 = Instant::now();
    let g = fair::graph(m, cfg.check.threads.max(1), cfg.check.max_states);
    let explore_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let results = cfg
        .properties
        .iter()
        .map(|&p| {
            let verdict = fair::decide(&g, p, cfg.fairness);
            let (agent, lasso) = match &verdict {
                LiveVerdict::Violated { agent, lasso } => {
                    (agent.map(name), Some(render(m, &g, lasso)))
                }
                _ => (None, None),
            };
            LiveResult {
                property: p,
                verdict,
                agent,
                lasso,
            }
        })
        .collect();
    LiveReport {
        model,
        fairness: cfg.fairness,
        states: g.len() as u64,
        generated: g.generated,
        edges: g.edges() as u64,
        depth: g.depth(),
        complete: g.complete,
        explore_seconds,
        decide_seconds: t1.elapsed().as_secs_f64(),
        results,
    }
}

fn name(agent: u8) -> String {
    format!("a{}", agent + 1)
}

fn names(mask: u8, agents: usize) -> Vec<String> {
    (0..agents as u8)
        .filter(|a| mask & (1 << a) != 0)
        .map(name)
        .collect()
}

/// Replays the lasso on the model (action indices from the root), checking that the stem
/// reaches the entry and the cycle returns to it, and renders both.
fn render<S: Fair>(m: &S, g: &Graph, l: &Lasso) -> RenderedLasso {
    let b = m.bounds();
    let mut state = m.init_states()[l.root as usize].clone();
    let mut actions = Vec::new();
    let mut take = |state: &mut S::State, k: u32| -> String {
        actions.clear();
        stateright::Model::actions(m, state, &mut actions);
        let a = actions[k as usize];
        let next = m
            .next_state(state, a)
            .expect("a lasso step is an enabled action");
        let step = m.step(state, a, &next);
        *state = next;
        match (a.appends_record(), step.agent.is_some(), step.commits) {
            (true, true, true) => format!("{} (commits)", a.describe(&b)),
            (true, true, false) => format!("{} (aborted)", a.describe(&b)),
            _ => a.describe(&b),
        }
    };
    let stem: Vec<String> = l.stem.iter().map(|&k| take(&mut state, k)).collect();
    let entry = m.fingerprint(&state);
    let cycle: Vec<String> = l
        .cycle
        .iter()
        .map(|(_, e)| take(&mut state, e.action))
        .collect();
    assert_eq!(
        m.fingerprint(&state),
        entry,
        "a lasso's cycle returns to its first state"
    );
    let path =
        |ks: &mut dyn Iterator<Item = u32>| ks.map(|k| k.to_string()).collect::<Vec<_>>().join("/");
    RenderedLasso {
        stem,
        cycle,
        stem_path: path(&mut l.stem.iter().copied()),
        cycle_path: path(&mut l.cycle.iter().map(|(_, e)| e.action)),
        stepping: names(l.stepping, g.agents),
        enabled_always: names(l.enabled_always, g.agents),
        enabled_sometimes: names(l.enabled_sometimes, g.agents),
    }
}

/// The verdict's word: `holds`, `violated` or `cannot_tell`.
pub fn verdict_word(v: &LiveVerdict) -> &'static str {
    match v {
        LiveVerdict::Holds => "holds",
        LiveVerdict::Violated { .. } => "violated",
        LiveVerdict::CannotTell(_) => "cannot_tell",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Bounds, Extensions};
    use agentsim_models::runtime::RuntimeKind;

    fn cfg(runtime: RuntimeKind, agents: u32, cells: u32, fairness: Fairness) -> LiveConfig {
        LiveConfig {
            check: CheckConfig {
                bounds: Bounds {
                    values: 1,
                    tools: 0,
                    ..Bounds::paper(agents, cells, 2)
                },
                ext: Extensions::default(),
                runtime: runtime.stack(),
                symmetry: false,
                properties: Vec::new(),
                threads: 2,
                max_states: 10_000_000,
            },
            abstract_model: true,
            bounded: false,
            properties: LiveProperty::ALL.to_vec(),
            fairness,
        }
    }

    fn words(r: &LiveReport) -> Vec<&'static str> {
        r.results.iter().map(|x| verdict_word(&x.verdict)).collect()
    }

    /// Vanilla never aborts: under weak fairness a begun op commits; without fairness an
    /// agent may simply never be scheduled again.
    #[test]
    fn vanilla_is_live_under_fairness_only() {
        let r = check_liveness(&cfg(RuntimeKind::Vanilla, 2, 1, Fairness::Weak)).unwrap();
        assert_eq!(words(&r), ["holds", "holds"]);
        let r = check_liveness(&cfg(RuntimeKind::Vanilla, 2, 1, Fairness::None)).unwrap();
        assert_eq!(words(&r)[0], "violated");
    }

    /// Validation aborts the op that read a cell another agent then wrote: that agent can be
    /// overtaken forever, even under strong fairness, and its lasso is a real cycle.
    #[test]
    fn ssi_starves_an_agent_under_strong_fairness() {
        let r = check_liveness(&cfg(RuntimeKind::Ssi, 2, 1, Fairness::Strong)).unwrap();
        let s = &r.results[0];
        assert_eq!(verdict_word(&s.verdict), "violated");
        let l = s.lasso.as_ref().unwrap();
        assert!(!l.cycle.is_empty());
        assert_eq!(l.stepping, ["a1", "a2"]);
    }

    /// Every concrete run ends at MaxOps: no fair cycle, and cannot tell.
    #[test]
    fn the_concrete_model_cannot_tell() {
        let mut c = cfg(RuntimeKind::Ssi, 2, 1, Fairness::Weak);
        c.abstract_model = false;
        let r = check_liveness(&c).unwrap();
        assert_eq!(words(&r), ["cannot_tell", "cannot_tell"]);
    }
}
