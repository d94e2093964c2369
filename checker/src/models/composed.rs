//! The model composed with a runtime (SPEC §5): the runtime decides what begins, what
//! commits and what a retraction aborts; the model only chooses the agents' requests. Any
//! valid [`Stack`] of mechanisms runs here ([`RuntimeModel::of_stack`]); the named runtimes
//! are stacks.
//!
//! The state *is* the store under the runtime ([`Guarded`]: `log`, `inflight`, `registry`,
//! `memory`, the store's writer index, and the runtime, a constant); its identity (what dedups
//! and counts) is the store's four variables only, as in the TLA+ twin (see `identity`). A begin the runtime
//! drops is no transition. Actions are enumerated exactly as in the paper model, so with
//! `vanilla` and every extension off this explores the same transition system with the same
//! counts (a test pins it), and every runtime explores its `tla/` module's system. `io` is the issue order and the chosen `co`
//! is handed to the runtime as the completion order, which its externalization rule may
//! constrain (extension 5: `saga` forces `co = io`). Extension 4 allows one signature change
//! per tool (`VERSION_MAX`), keeping the space finite. No symmetry reduction here.

use crate::config::{Bounds, BoundsError, Extensions, AGENTS_MAX};
use crate::engine::space::{fingerprint_of, PendingView, Space, StateView};
use crate::models::action::{cell_value, Action, Choices, Seq, View};
use crate::property::PropSet;
use agentsim_models::names::{Agent, Cell, Tool, Value};
use agentsim_models::record::{Registry, ValueMap};
use agentsim_models::runtime::{
    BeginOutcome, BeginRequest, CommitRequest, Guarded, Options, RegistryChange, Runtime,
    RuntimeKind, Stack, Store,
};

/// The highest signature version `ChangeSignature` may reach.
pub const VERSION_MAX: u32 = 1;

/// SPEC §1 composed with runtime `R`.
#[derive(Clone, Debug)]
pub struct RuntimeModel<R: Runtime> {
    bounds: Bounds,
    choices: Choices,
    init: Guarded<R>,
}

impl RuntimeModel<Stack> {
    /// The model under a stack chosen at run time; provenance is forced on where the stack
    /// reads `preds` (`validate-preds`, `cascade`). The stack must be valid.
    pub fn of_stack(b: Bounds, ext: Extensions, stack: Stack) -> Result<Self, BoundsError> {
        stack.validate()?;
        let opts = Options {
            provenance: ext.provenance || stack.provenance(),
        };
        let ext = Extensions {
            provenance: opts.provenance,
            ..ext
        };
        RuntimeModel::new(b, ext, Guarded::new(stack, Registry::all(b.tools), opts))
    }

    /// The model under a named runtime ([`RuntimeModel::of_stack`] of its stack).
    pub fn of_kind(b: Bounds, ext: Extensions, kind: RuntimeKind) -> Result<Self, BoundsError> {
        RuntimeModel::of_stack(b, ext, kind.stack())
    }
}

impl<R: Runtime> RuntimeModel<R> {
    /// The model starting from `init` (which must be fresh over `Registry::all`).
    pub fn new(bounds: Bounds, ext: Extensions, init: Guarded<R>) -> Result<Self, BoundsError> {
        bounds.validate()?;
        assert!(init.log().is_empty(), "the initial runtime must be fresh");
        assert_eq!(init.store().registry(), &Registry::all(bounds.tools));
        Ok(RuntimeModel {
            bounds,
            choices: Choices::new(bounds, ext),
            init,
        })
    }

    /// Begins `agent`'s op; false if the runtime dropped it (then `rt` is unchanged).
    fn begin(&self, rt: &mut Guarded<R>, agent: u8, rs: u8, tool: u8, rv: u32) -> bool {
        let b = &self.bounds;
        let mut req = BeginRequest::new(
            Agent(u32::from(agent)),
            (0..b.cells)
                .filter(|c| rs & (1 << c) != 0)
                .map(Cell)
                .collect(),
            tool.checked_sub(1).map(|t| Tool(u32::from(t))),
        );
        if b.any_skew() {
            req.observed = Some(value_map(rv, b.cells));
        }
        match rt.begin(&req) {
            BeginOutcome::Begun(_) => true,
            BeginOutcome::Dropped(_) => false,
        }
    }

    fn commit(&self, rt: &mut Guarded<R>, agent: u8, io: Seq, co: Seq, values: u32) {
        let issue: Vec<u32> = io.iter().collect();
        let completion = co
            .iter()
            .map(|c| {
                issue
                    .iter()
                    .position(|&x| x == c)
                    .expect("co orders io's cells")
            })
            .collect();
        let req = CommitRequest {
            agent: Agent(u32::from(agent)),
            issue: issue.iter().map(|&c| Cell(c)).collect(),
            write_values: value_map(values, self.bounds.cells),
            completion,
        };
        rt.commit(&req);
    }
}

/// What a state's identity covers: the model's own variables (SPEC §1), nothing else. The
/// rest is either derived from these or never consulted again:
/// * a runtime keeps no state of its own: locks are the read sets of the ops in flight, and
///   validation reads committed versions off the log (see `lock.rs`, `validate.rs`);
/// * the store's writer index lists the records that committed a write. For a live record
///   that is the log itself (an abort at commit is final, so a live record committed); for an
///   aborted one the entry is only ever skipped (provenance looks at live writers only).
///   Memory, which does keep retracted writes, is part of the identity;
/// * the runtime's stack and options are constants of the model.
///
/// So two states with the same identity have the same futures and the same properties,
/// and the state space is the TLA+ twin's (whose variables are just these). The
/// `identity_is_a_bisimulation` test checks that claim at small bounds.
fn identity(st: &Store) -> impl std::hash::Hash + '_ {
    (st.log(), st.memory(), st.registry(), st.inflight())
}

fn value_map(map: u32, cells: u32) -> ValueMap {
    ValueMap::from_pairs((0..cells).map(|c| (Cell(c), Value(cell_value(map, c)))))
}

fn packed_map(m: &ValueMap) -> u32 {
    m.entries()
        .iter()
        .fold(0, |acc, &(c, v)| acc | (v.0 << (4 * c.0)))
}

impl<R: Runtime> stateright::Model for RuntimeModel<R> {
    type State = Guarded<R>;
    type Action = Action;

    fn init_states(&self) -> Vec<Guarded<R>> {
        vec![self.init.clone()]
    }

    fn actions(&self, rt: &Guarded<R>, actions: &mut Vec<Action>) {
        let st = rt.store();
        let log = st.log();
        let registry = st.registry();
        let a = self.bounds.agents as usize;
        let mut pending = [false; AGENTS_MAX as usize];
        let mut reads = [0u32; AGENTS_MAX as usize];
        for (agent, p) in st.inflight() {
            pending[agent.index()] = true;
            reads[agent.index()] = p.request.read_set.iter().fold(0, |m, c| m | 1 << c.0);
        }
        let tools: Vec<u32> = registry.entries().iter().map(|e| e.tool.0).collect();
        let changeable: Vec<u32> = registry
            .entries()
            .iter()
            .filter(|e| e.version < VERSION_MAX)
            .map(|e| e.tool.0)
            .collect();
        let live: Vec<u32> = (0..log.len() as u32)
            .filter(|&i| !log[i as usize].aborted)
            .collect();
        let view = View {
            log_len: log.len() as u32,
            pending: &pending[..a],
            registry: &tools,
            changeable: &changeable,
            memory: packed_map(st.memory()),
            pending_reads: &reads[..a],
            retractable: &live,
        };
        self.choices.enumerate(&view, actions);
    }

    fn next_state(&self, rt: &Guarded<R>, action: Action) -> Option<Guarded<R>> {
        let mut next = rt.clone();
        match action {
            Action::StartRead {
                agent,
                read_set,
                tool,
                read_values,
            } => {
                if !self.begin(&mut next, agent, read_set, tool, read_values) {
                    return None;
                }
            }
            Action::CompleteWrite {
                agent,
                io,
                co,
                values,
            } => self.commit(&mut next, agent, io, co, values),
            Action::RemoveTool(t) => next.change_registry(RegistryChange::Remove(Tool(t.into()))),
            Action::ChangeSignature(t) => {
                next.change_registry(RegistryChange::ChangeSignature(Tool(t.into())))
            }
            Action::Retract(i) => {
                next.retract(usize::from(i));
            }
        }
        Some(next)
    }
}

impl<R: Runtime> Space for RuntimeModel<R> {
    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn fingerprint(&self, rt: &Guarded<R>) -> u64 {
        fingerprint_of(&identity(rt.store()))
    }

    fn violations(&self, rt: &Guarded<R>, check: PropSet) -> PropSet {
        let mut out = PropSet::default();
        for p in check.iter() {
            if p.violated_by(rt.log()) {
                out.insert(p);
            }
        }
        out
    }

    fn view(&self, rt: &Guarded<R>) -> StateView {
        store_view(rt.store(), self.bounds.agents, rt.log().to_vec())
    }
}

/// Liveness: an agent's action is its step; a commit is live when the record it appended is
/// not aborted.
impl<R: Runtime> crate::engine::fair::Fair for RuntimeModel<R> {
    fn step(
        &self,
        _s: &Guarded<R>,
        action: Action,
        next: &Guarded<R>,
    ) -> crate::engine::fair::Step {
        use crate::engine::fair::Step;
        match action {
            Action::StartRead { agent, .. } => Step {
                agent: Some(agent),
                commits: false,
            },
            Action::CompleteWrite { agent, .. } => Step {
                agent: Some(agent),
                commits: next.log().last().is_some_and(|r| !r.aborted),
            },
            _ => Step {
                agent: None,
                commits: false,
            },
        }
    }

    fn busy(&self, rt: &Guarded<R>) -> u8 {
        rt.store()
            .inflight()
            .into_iter()
            .fold(0, |m, (a, _)| m | 1 << a.index())
    }

    fn at_bound(&self, rt: &Guarded<R>) -> bool {
        rt.log().len() as u32 >= self.bounds.max_ops
    }
}

/// The rendering view of a store: `log` as given (a model may keep its log elsewhere), the
/// in-flight reads of agents `0..agents`, the registry and memory.
pub(crate) fn store_view(
    st: &Store,
    agents: u32,
    log: Vec<agentsim_models::record::OpRecord>,
) -> StateView {
    StateView {
        log,
        inflight: (0..agents)
            .map(|a| {
                st.inflight().get(&Agent(a)).map(|p| PendingView {
                    read_set: p.request.read_set.iter().map(|c| c.0).collect(),
                    read_values: p.snapshot.read_values.clone(),
                    read_registry: p.snapshot.registry.clone(),
                    planned_tool: p.request.planned_tool.map(|t| t.0),
                    read_time: p.snapshot.read_time,
                    preds: p.snapshot.preds.clone(),
                })
            })
            .collect(),
        registry: st.registry().clone(),
        memory: st.memory().clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::explore::{explore, ExploreOptions};

    fn counts<R: Runtime>(m: &RuntimeModel<R>) -> (u64, u64, u32) {
        let opts = ExploreOptions {
            threads: 2,
            check: PropSet::default(),
            max_states: u64::MAX,
        };
        let o = explore(m, &opts);
        (o.distinct, o.generated, o.depth)
    }

    /// Runs `stack` at 1 cell, 1 value, MaxOps 2, canonical writes, provenance and retraction
    /// (2 agents and no tool; a stack with `pin` or `validate-tool` at 1 agent and 1 tool with
    /// versions: the CI-sized TLA+ configs), over the whole state value (the store with its
    /// writer index, and the runtime). States with one identity must enable the same actions,
    /// lead action by action to states with one identity, and violate the same properties:
    /// the identity is then a bisimulation, and counting by it loses no behaviour. Returns how
    /// many whole states it merged.
    fn merged_by_identity(stack: Stack) -> usize {
        use agentsim_models::runtime::Mechanism;
        use stateright::Model;
        use std::collections::HashMap;
        let registry = stack.contains(Mechanism::Pin) || stack.contains(Mechanism::ValidateTool);
        let b = Bounds {
            values: 1,
            tools: u32::from(registry),
            ..Bounds::paper(2 - u32::from(registry), 1, 2)
        };
        let ext = Extensions {
            canonical_writes: true,
            provenance: true,
            retraction: true,
            tool_versions: registry,
            all_writers: false,
        };
        let m = RuntimeModel::of_stack(b, ext, stack).unwrap();
        let all = PropSet::of(&crate::property::Property::ALL);
        let mut futures: HashMap<u64, (PropSet, Vec<Option<u64>>)> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        let mut todo = m.init_states();
        let mut actions = Vec::new();
        while let Some(rt) = todo.pop() {
            if !seen.insert(fingerprint_of(&rt)) {
                continue;
            }
            actions.clear();
            m.actions(&rt, &mut actions);
            let next: Vec<Option<Guarded<Stack>>> =
                actions.iter().map(|&a| m.next_state(&rt, a)).collect();
            let future = (
                m.violations(&rt, all),
                next.iter()
                    .map(|n| n.as_ref().map(|n| m.fingerprint(n)))
                    .collect(),
            );
            let known = futures
                .entry(m.fingerprint(&rt))
                .or_insert_with(|| future.clone());
            assert_eq!(*known, future, "{stack}: one identity, two futures");
            todo.extend(next.into_iter().flatten());
        }
        seen.len() - futures.len()
    }

    /// Only the store's writer index (kept with provenance, on here for every stack) is state
    /// beyond the identity: it remembers which aborted records committed first, so a stack
    /// merges states where a commit-time abort and a later retraction meet. Vanilla never
    /// aborts at commit; lock's commit-time aborts at these bounds never meet a retraction
    /// with the same identity.
    #[test]
    fn identity_is_a_bisimulation_for_the_named_runtimes() {
        for kind in RuntimeKind::ALL {
            let merged = merged_by_identity(kind.stack());
            let expect_merges = !matches!(kind, RuntimeKind::Vanilla | RuntimeKind::Pessimistic);
            assert_eq!(merged > 0, expect_merges, "{kind}: merged {merged}");
        }
    }

    /// Every mechanism alone (cascade with the validate-preds it needs) and a sample of the
    /// stacks that no named runtime is.
    #[test]
    fn identity_is_a_bisimulation_for_every_mechanism_and_sample_stacks() {
        use agentsim_models::runtime::Mechanism;
        let mut stacks: Vec<Stack> = Mechanism::ALL
            .iter()
            .map(|&m| Stack::from(m))
            .filter(|s| s.validate().is_ok())
            .collect();
        assert_eq!(
            stacks.len(),
            Mechanism::ALL.len() - 1,
            "all but cascade stand alone"
        );
        for name in [
            "validate-preds+cascade",
            "lock+sequencer",
            "lock+validate-preds+cascade",
            "lock+validate+validate-preds+cascade+sequencer",
            "validate-writers+validate-preds+cascade",
            "lock+validate-tool",
            "sequencer+pin",
            "lock+validate-writers+validate-preds+cascade+sequencer+validate-tool",
        ] {
            stacks.push(name.parse().unwrap());
        }
        for s in stacks {
            merged_by_identity(s);
        }
    }

    /// Vanilla with every extension off is the paper model: TLC's figures again.
    #[test]
    fn vanilla_composition_matches_paper_counts() {
        let ext = Extensions::default();
        for (b, want) in [
            (Bounds::paper(1, 1, 2), (31_942, 33_497, 7)),
            (Bounds::paper(1, 2, 1), (10_168, 10_937, 5)),
        ] {
            let m = RuntimeModel::of_kind(b, ext, RuntimeKind::Vanilla).unwrap();
            assert_eq!(counts(&m), want);
        }
    }
}
