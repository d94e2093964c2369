//! One check on the abstract model, end to end: explore, find shortest abstract witnesses,
//! concretize each on the concrete model, confirm it with the spec detectors, and render it
//! there (steps, replay path, ITF), so a counterexample reads and replays exactly like one of
//! `run::check`.
//!
//! `bounded` keeps the op counter at `bounds.max_ops`. Unbounded, the state has no length
//! component; if the exploration closes, a "holds" is a verdict for histories of every length
//! at these agents, cells, values and tools (`all_lengths`). Its witnesses replay on the
//! concrete model with `--max-ops` set to `replay_max_ops`.

use crate::config::MAX_OPS_MAX;
use crate::engine::explore::{explore_with, ExploreOptions};
use crate::engine::frontier::Storage;
use crate::engine::trace;
use crate::jobs::run::{CheckConfig, CheckReport, Counterexample, Verdict};
use crate::jobs::vacuity::Features;
use crate::models::abstract_model::concretize::concretize;
use crate::models::abstract_model::model::{AbstractConfig, AbstractError, AbstractModel};
use crate::models::composed::RuntimeModel;
use crate::models::render;
use crate::property::PropSet;
use agentsim_models::history::History;
use agentsim_models::names::Names;

/// The result of an abstract check.
#[derive(Clone, Debug)]
pub struct AbstractReport {
    /// `model` is `abstract:<runtime>`; counterexamples are concretized.
    pub report: CheckReport,
    pub bounded: bool,
    /// Unbounded and closed: every "holds" covers every history length.
    pub all_lengths: bool,
    /// The `--max-ops` under which the counterexample paths replay concretely.
    pub replay_max_ops: u32,
    /// Each violated property's concretized history (synthetic names `a1..`, `c1..`), in
    /// the order of `report.verdicts`.
    pub histories: Vec<(crate::property::Property, History)>,
}

/// The abstract model `cfg` describes.
pub fn model(cfg: &CheckConfig, bounded: bool) -> Result<AbstractModel, AbstractError> {
    AbstractModel::new(AbstractConfig {
        bounds: cfg.bounds,
        ext: cfg.ext,
        stack: cfg.runtime,
        watch: PropSet::of(&cfg.properties),
        bounded,
        symmetry: cfg.symmetry,
    })
}

/// Runs the check.
pub fn check_abstract(
    cfg: &CheckConfig,
    bounded: bool,
    storage: &Storage,
) -> Result<AbstractReport, AbstractError> {
    if cfg.threads == 0 {
        return Err(AbstractError::Unsupported("at least one thread".into()));
    }
    let abs = model(cfg, bounded)?;
    // The abstract model is shown equivalent to the concrete one: the same features, with no
    // bound on records when it keeps no op counter.
    let features = Features::single_store(cfg.bounds, cfg.ext, cfg.runtime, bounded);
    let opts = ExploreOptions {
        threads: cfg.threads,
        check: PropSet::of(&cfg.properties),
        max_states: cfg.max_states,
    };
    let outcome = explore_with(&abs, &opts, storage);
    let traces = if outcome.violated.is_empty() {
        Default::default()
    } else {
        trace::shortest(&abs, outcome.violated, cfg.max_states)
    };
    let commits = |t: &trace::Trace<_, crate::models::action::Action>| {
        t.actions
            .iter()
            .filter(|a| matches!(a, crate::models::action::Action::CompleteWrite { .. }))
            .count()
    };
    let replay_max_ops = if bounded {
        cfg.bounds.max_ops
    } else {
        traces.values().map(commits).max().unwrap_or(0).max(1) as u32
    };
    if replay_max_ops > MAX_OPS_MAX {
        return Err(AbstractError::Unsupported(format!(
            "a witness needs {replay_max_ops} records, more than the concrete model's \
             {MAX_OPS_MAX}"
        )));
    }
    let conc_bounds = crate::config::Bounds {
        max_ops: replay_max_ops,
        ..cfg.bounds
    };
    let conc = RuntimeModel::of_stack(conc_bounds, cfg.ext, cfg.runtime)?;
    let mut verdicts = Vec::new();
    let mut histories = Vec::new();
    for &p in &cfg.properties {
        let counterexample = match traces.get(&p) {
            None => None,
            Some(t) => {
                let c = concretize(&abs, &conc, t).map_err(AbstractError::Unsupported)?;
                let log = c.states.last().expect("a trace has a state").log();
                assert!(
                    p.violated_by(log),
                    "a concretized {p:?} witness the detectors reject"
                );
                let b = &cfg.bounds;
                histories.push((
                    p,
                    History {
                        records: log.to_vec(),
                        names: Names::synthetic(b.agents, b.cells, b.tools, b.values),
                    },
                ));
                Some(Counterexample {
                    steps: render::steps(&conc, &c),
                    path: c.path_string(),
                    itf: render::itf(&conc, &c, &format!("counterexample to {}", p.name())),
                })
            }
        };
        verdicts.push(Verdict {
            property: p,
            counterexample,
            vacuous: None,
        });
    }
    let mut report = CheckReport {
        model: format!("abstract:{}", cfg.runtime),
        outcome,
        verdicts,
    };
    report.mark_vacuous(&features);
    Ok(AbstractReport {
        all_lengths: !bounded && report.outcome.complete,
        report,
        bounded,
        replay_max_ops,
        histories,
    })
}
