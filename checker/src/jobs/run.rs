//! One check, end to end: pick the model, explore, and for every violated property find the
//! shortest counterexample and render it. The CLI (`agentsim check`) and the matrix both go
//! through here, so they cannot disagree about what was checked.
//!
//! Model choice: `vanilla` with no runtime-level extension (provenance, retraction, tool
//! versions) runs on the packed [`PaperModel`] (the same transition system as the composed
//! vanilla model; a test pins equal counts), every other stack on [`RuntimeModel`]. Symmetry
//! is offered on the packed model only. The runtime is a [`Stack`]; a named runtime is one
//! (`RuntimeKind::stack`, or `.into()`), and the report names it canonically.

use crate::config::{Bounds, BoundsError, Extensions};
use crate::engine::explore::{explore_with, ExploreOptions, Outcome};
use crate::engine::frontier::Storage;
use crate::engine::space::Space;
use crate::engine::trace::{self, PathError, Trace};
use crate::jobs::vacuity::{self, Features};
use crate::models::composed::RuntimeModel;
use crate::models::paper::PaperModel;
use crate::models::render;
use crate::property::{PropSet, Property};
use agentsim_models::runtime::Stack;
use thiserror::Error;

/// Everything a check needs.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    pub bounds: Bounds,
    pub ext: Extensions,
    /// The runtime: any valid stack of mechanisms.
    pub runtime: Stack,
    pub symmetry: bool,
    pub properties: Vec<Property>,
    pub threads: usize,
    /// Bound on distinct states, for the exploration and for each trace search.
    pub max_states: u64,
}

/// A shortest counterexample, rendered.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// Readable steps, one per action.
    pub steps: Vec<String>,
    /// The replay path (`0/4/17`).
    pub path: String,
    /// The ITF document.
    pub itf: serde_json::Value,
}

/// The verdict on one property.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub property: Property,
    /// `None`: holds on every explored state; `Some`: violated, with a shortest trace.
    pub counterexample: Option<Counterexample>,
    /// `Some(why)`: no history of this model can violate the property at these bounds and
    /// extensions (`jobs::vacuity`), so "holds" would say nothing: the verdict is *cannot
    /// tell*. Set only where no counterexample was found.
    pub vacuous: Option<String>,
}

impl Verdict {
    /// Whether the property held on every explored state and is not vacuous.
    pub fn holds(&self) -> bool {
        self.counterexample.is_none() && self.vacuous.is_none()
    }
}

/// The result of a check.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// `paper` (packed vanilla model) or `runtime:<stack>` (its canonical name).
    pub model: String,
    pub outcome: Outcome,
    pub verdicts: Vec<Verdict>,
}

impl CheckReport {
    /// Whether some checked property is violated.
    pub fn violated(&self) -> bool {
        self.verdicts.iter().any(|v| v.counterexample.is_some())
    }

    /// Whether some checked property is vacuous (its verdict is *cannot tell*).
    pub fn cannot_tell(&self) -> bool {
        self.verdicts.iter().any(|v| v.vacuous.is_some())
    }

    /// Marks the verdicts `features` makes vacuous (those without a counterexample: a found
    /// violation is evidence the analysis would be wrong to contradict).
    pub fn mark_vacuous(&mut self, features: &Features) {
        for v in &mut self.verdicts {
            if v.counterexample.is_none() {
                v.vacuous = vacuity::vacuous(v.property, features);
            }
        }
    }
}

/// Why a check could not run, or a replay could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CheckError {
    #[error(transparent)]
    Bounds(#[from] BoundsError),
    #[error("the explorer needs at least one worker thread")]
    NoThreads,
    #[error(
        "symmetry reduction is implemented for vanilla without provenance, retraction or \
         tool versions"
    )]
    Symmetry,
    #[error(transparent)]
    Path(#[from] PathError),
}

/// Whether this configuration runs on the packed paper model.
pub fn uses_paper_model(cfg: &CheckConfig) -> bool {
    cfg.runtime == Stack::VANILLA
        && !cfg.ext.provenance
        && !cfg.ext.retraction
        && !cfg.ext.tool_versions
}

/// Runs the check with the default [`Storage`] (1 GiB of packed frontier per level in memory).
pub fn check(cfg: &CheckConfig) -> Result<CheckReport, CheckError> {
    check_with(cfg, &Storage::default())
}

/// Runs the check, keeping the exploration within `storage`'s limits.
pub fn check_with(cfg: &CheckConfig, storage: &Storage) -> Result<CheckReport, CheckError> {
    cfg.bounds.validate()?;
    if cfg.threads == 0 {
        return Err(CheckError::NoThreads);
    }
    // Decided before exploring, from the model's definition; attached to the verdicts after.
    let features = Features::single_store(cfg.bounds, cfg.ext, cfg.runtime, true);
    let mut report = if uses_paper_model(cfg) {
        let m = PaperModel::new(cfg.bounds, cfg.ext, cfg.symmetry)?;
        check_space(&m, cfg, storage, "paper".into(), render_space)
    } else {
        if cfg.symmetry {
            return Err(CheckError::Symmetry);
        }
        let m = RuntimeModel::of_stack(cfg.bounds, cfg.ext, cfg.runtime)?;
        let name = format!("runtime:{}", cfg.runtime);
        check_space(&m, cfg, storage, name, render_space)
    };
    report.mark_vacuous(&features);
    Ok(report)
}

/// Renders a trace with the SPEC §1 step list and ITF document.
fn render_space<S: Space>(space: &S, t: &Trace<S::State, S::Action>, what: &str) -> Counterexample {
    Counterexample {
        steps: render::steps(space, t),
        path: t.path_string(),
        itf: render::itf(space, t, what),
    }
}

/// Explores `space`, then (unless the search was stopped) finds and renders the shortest
/// counterexample of each violated property with `render`.
pub(crate) fn check_space<S: Space>(
    space: &S,
    cfg: &CheckConfig,
    storage: &Storage,
    model: String,
    render: impl Fn(&S, &Trace<S::State, S::Action>, &str) -> Counterexample,
) -> CheckReport {
    let opts = ExploreOptions {
        threads: cfg.threads,
        check: PropSet::of(&cfg.properties),
        max_states: cfg.max_states,
    };
    let mut outcome = explore_with(space, &opts, storage);
    let traces = if outcome.violated.is_empty() || outcome.stopped.is_some() {
        Default::default()
    } else {
        match trace::shortest_with(space, outcome.violated, cfg.max_states, storage) {
            Ok(t) => t,
            Err(stop) => {
                (outcome.complete, outcome.stopped) = (false, Some(stop));
                Default::default()
            }
        }
    };
    let verdicts = cfg
        .properties
        .iter()
        .map(|&p| Verdict {
            property: p,
            counterexample: traces
                .get(&p)
                .map(|t| render(space, t, &format!("counterexample to {}", p.name()))),
            vacuous: None,
        })
        .collect();
    CheckReport {
        model,
        outcome,
        verdicts,
    }
}

/// A replayed path: its rendering and the checked properties some state on it violates.
#[derive(Clone, Debug)]
pub struct Replayed {
    pub trace: Counterexample,
    /// In `cfg.properties` order.
    pub violated: Vec<Property>,
}

impl Replayed {
    /// Renders `t` and evaluates `cfg.properties` on each of its states.
    pub(crate) fn of<S: Space>(
        space: &S,
        t: &Trace<S::State, S::Action>,
        cfg: &CheckConfig,
        render: impl Fn(&S, &Trace<S::State, S::Action>, &str) -> Counterexample,
    ) -> Replayed {
        let hit = trace::violated_on(space, t, PropSet::of(&cfg.properties));
        Replayed {
            trace: render(space, t, "replay"),
            violated: cfg
                .properties
                .iter()
                .copied()
                .filter(|&p| hit.contains(p))
                .collect(),
        }
    }
}

/// Replays a path on the model `cfg` selects, renders it, and checks `cfg.properties` on it.
pub fn replay(cfg: &CheckConfig, path: &str) -> Result<Replayed, CheckError> {
    let ids = trace::parse_path(path)?;
    let mut r = if uses_paper_model(cfg) {
        let m = PaperModel::new(cfg.bounds, cfg.ext, cfg.symmetry)?;
        Replayed::of(&m, &trace::replay(&m, &ids)?, cfg, render_space)
    } else {
        let m = RuntimeModel::of_stack(cfg.bounds, cfg.ext, cfg.runtime)?;
        Replayed::of(&m, &trace::replay(&m, &ids)?, cfg, render_space)
    };
    r.trace.path = path.to_owned();
    Ok(r)
}
