//! Concretization: an abstract trace replayed on the concrete model, so that an abstract
//! witness becomes a history the spec detectors can read and a path `--replay` accepts.
//!
//! Every action but `Retract(k)` is replayed as the first concrete action whose image under β
//! ([`AbstractModel::abstract_action`]) it is; `Retract(k)`
//! retracts the log record that kept node `k` stands for (from the tagged α of the concrete
//! state reached so far). After every step α of the concrete state must be the abstract state
//! of the trace: a mismatch is an error, never a silent repair. A concretized witness shows the
//! violation is real at the concrete model's bounds; it does not say the trace is the only one.

use super::alpha::{alpha, tagged};
use super::model::{AbsState, AbstractModel};
use crate::engine::trace::Trace;
use crate::models::action::Action;
use crate::models::composed::RuntimeModel;
use agentsim_models::runtime::{Guarded, Stack};
use stateright::Model;

/// The concrete trace of abstract trace `t`, on `conc` (whose bounds must admit every step).
pub fn concretize(
    abs: &AbstractModel,
    conc: &RuntimeModel<Stack>,
    t: &Trace<AbsState, Action>,
) -> Result<Trace<Guarded<Stack>, Action>, String> {
    let mut s = conc.init_states().remove(0);
    if alpha(abs, s.store()) != t.states[0] {
        return Err("α(init) differs from the abstract initial state".into());
    }
    let mut out = Trace {
        path: vec![0],
        actions: Vec::new(),
        states: vec![s.clone()],
    };
    let mut actions = Vec::new();
    for (k, &a) in t.actions.iter().enumerate() {
        let act = match a {
            Action::Retract(node) => {
                let tags = tagged(abs, s.store());
                let n = tags
                    .nodes
                    .get(usize::from(node))
                    .ok_or(format!("step {}: no kept record {node}", k + 1))?;
                Action::Retract(n.tag as u8)
            }
            other => other,
        };
        actions.clear();
        conc.actions(&s, &mut actions);
        let image = |x: Action| match x {
            Action::Retract(_) => x,
            _ => abs.abstract_action(x),
        };
        let idx = actions
            .iter()
            .position(|&x| image(x) == act)
            .ok_or(format!("step {}: {act:?} is not enabled concretely", k + 1))?;
        let act = actions[idx];
        s = conc
            .next_state(&s, act)
            .ok_or(format!("step {}: {act:?} is refused concretely", k + 1))?;
        if alpha(abs, s.store()) != t.states[k + 1] {
            return Err(format!("step {}: α of the concrete state differs", k + 1));
        }
        out.path.push(idx as u32);
        out.actions.push(act);
        out.states.push(s.clone());
    }
    Ok(out)
}
