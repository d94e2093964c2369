//! One check, end to end: pick the model, explore, and for every violated property find the
//! shortest counterexample and render it. The CLI (`agentsim check`) and the matrix both go
//! through here, so they cannot disagree about what was checked.
//!
//! Model choice: `vanilla` with no runtime-level extension (provenance, retraction, tool
//! versions) runs on the packed [`PaperModel`] (the same transition system as the composed
//! vanilla model; a test pins equal counts), every other stack on [`RuntimeModel`]. Symmetry
//! is offered on the packed model only. The runtime is a [`Stack`]; a named runtime is one
//! (`RuntimeKind::stack`, or `.into()`), and the report names it canonically.

use crate::composed::RuntimeModel;
use crate::config::{Bounds, BoundsError, Extensions};
use crate::explore::{explore_with, ExploreOptions, Outcome};
use crate::frontier::Storage;
use crate::paper::PaperModel;
use crate::property::{PropSet, Property};
use crate::render;
use crate::space::Space;
use crate::trace;
use agentsim_models::runtime::Stack;

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
}

/// Whether this configuration runs on the packed paper model.
pub fn uses_paper_model(cfg: &CheckConfig) -> bool {
    cfg.runtime == Stack::VANILLA
        && !cfg.ext.provenance
        && !cfg.ext.retraction
        && !cfg.ext.tool_versions
}

/// Runs the check with the default [`Storage`] (1 GiB of packed frontier per level in memory).
pub fn check(cfg: &CheckConfig) -> Result<CheckReport, BoundsError> {
    check_with(cfg, &Storage::default())
}

/// Runs the check, keeping the exploration within `storage`'s limits.
pub fn check_with(cfg: &CheckConfig, storage: &Storage) -> Result<CheckReport, BoundsError> {
    cfg.bounds.validate()?;
    if cfg.threads == 0 {
        return Err(BoundsError::Unsupported(
            "--threads must be at least 1".into(),
        ));
    }
    if uses_paper_model(cfg) {
        let m = PaperModel::new(cfg.bounds, cfg.ext, cfg.symmetry)?;
        return Ok(check_space(&m, cfg, storage, "paper".into()));
    }
    if cfg.symmetry {
        return Err(BoundsError::Unsupported(
            "--symmetry is implemented for vanilla without provenance, retraction or tool \
             versions"
                .into(),
        ));
    }
    let m = RuntimeModel::of_stack(cfg.bounds, cfg.ext, cfg.runtime)?;
    Ok(check_space(
        &m,
        cfg,
        storage,
        format!("runtime:{}", cfg.runtime),
    ))
}

fn check_space<S: Space>(
    space: &S,
    cfg: &CheckConfig,
    storage: &Storage,
    model: String,
) -> CheckReport
where
    S::State: Clone + Send + Sync,
{
    let opts = ExploreOptions {
        threads: cfg.threads,
        check: PropSet::of(&cfg.properties),
        max_states: cfg.max_states,
    };
    let outcome = explore_with(space, &opts, storage);
    let traces = if outcome.violated.is_empty() {
        Default::default()
    } else {
        trace::shortest(space, outcome.violated, cfg.max_states)
    };
    let verdicts = cfg
        .properties
        .iter()
        .map(|&p| Verdict {
            property: p,
            counterexample: traces.get(&p).map(|t| Counterexample {
                steps: render::steps(space, t),
                path: t.path_string(),
                itf: render::itf(space, t, &format!("counterexample to {}", p.name())),
            }),
        })
        .collect();
    CheckReport {
        model,
        outcome,
        verdicts,
    }
}

/// Replays a path on the model `cfg` selects and renders it.
pub fn replay(cfg: &CheckConfig, path: &str) -> Result<Counterexample, String> {
    let ids = trace::parse_path(path)?;
    let render_with = |steps: Vec<String>, itf| Counterexample {
        steps,
        path: path.to_owned(),
        itf,
    };
    if uses_paper_model(cfg) {
        let m = PaperModel::new(cfg.bounds, cfg.ext, cfg.symmetry).map_err(|e| e.to_string())?;
        let t = trace::replay(&m, &ids)?;
        return Ok(render_with(
            render::steps(&m, &t),
            render::itf(&m, &t, "replay"),
        ));
    }
    let m = RuntimeModel::of_stack(cfg.bounds, cfg.ext, cfg.runtime).map_err(|e| e.to_string())?;
    let t = trace::replay(&m, &ids)?;
    Ok(render_with(
        render::steps(&m, &t),
        render::itf(&m, &t, "replay"),
    ))
}
