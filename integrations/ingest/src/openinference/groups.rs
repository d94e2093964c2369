//! A mapping's `[[registry]]` groups on OpenInference spans: the agents' `llm.tools` as one
//! registry timeline per group ([`SharedRegistry`]), so that a tool one agent's later `LLM`
//! span no longer lists is gone for every agent of its group (SPEC §1 extension 4, A2 in §3).
//!
//! OpenInference puts a registry on `LLM` spans only (`llm.tools`: what the generation was
//! offered); the registry when a tool runs is on no span. Without groups the reader takes the
//! agent's own latest `llm.tools` at the call (`super::map`, bytes as before); with them, that
//! view with every change its group's `llm.tools` showed after it and by the call applied, as
//! the GenAI reader does with its definitions (`crate::otel`). An agent the mapping puts in no
//! group keeps a registry of its own (`agent:<name>`).
//!
//! What a pass does not prove: a change is seen at the next `LLM` span of the group that lists
//! the tools, never earlier, and a change no agent's `LLM` span shows (a tool server's) is
//! unseen. So a witness is real, given the mapping's claim that the agents share a registry,
//! and none is not an answer: A2 is a lower bound ([`crate::evidence::a2`]).

use crate::evidence::{self, RegistryEvidence, Runs};
use crate::otel::mapping::Mapping;
use crate::registry::{Entries, Observation, SharedRegistry};
use crate::report::Verdict;
use std::collections::BTreeMap;

/// The registries of a trace whose mapping declares `[[registry]]` groups.
pub(super) struct Groups<'m> {
    mapping: &'m Mapping,
    shared: SharedRegistry,
    /// Generation span (its index) → what it offered: its own tools, in its group's versions.
    offered: BTreeMap<usize, Entries>,
    /// `llm.tools` views read.
    views: u64,
    /// Calls whose registry took a change another agent's `llm.tools` showed.
    foreign: u64,
}

impl<'m> Groups<'m> {
    /// The groups of `mapping`, if it declares any, over `views`: each generation span with
    /// `llm.tools`, with its agent's view (observer = the invocation's agent name).
    pub(super) fn new(
        mapping: Option<&'m Mapping>,
        views: Vec<(usize, Observation)>,
    ) -> Option<Groups<'m>> {
        let mapping = mapping.filter(|m| !m.registry_groups.is_empty())?;
        let group_of = |agent: &str| mapping.registry_group(agent);
        let obs = views.iter().map(|(_, o)| o.clone()).collect();
        let shared = SharedRegistry::new(obs, group_of);
        let mut offered = BTreeMap::new();
        for (g, o) in &views {
            // Several views of one agent at one instant: the span's own tools are what its
            // plan saw (the GenAI reader's rule).
            let Some(entries) = shared.own(&o.observer, o.at) else {
                continue;
            };
            let mine: Entries = (entries.iter())
                .filter(|(t, _)| o.tools.contains_key(t))
                .cloned()
                .collect();
            offered.insert(*g, mine);
        }
        Some(Groups {
            mapping,
            shared,
            offered,
            views: views.len() as u64,
            foreign: 0,
        })
    }

    /// What generation span `g` offered, if it carried `llm.tools`.
    pub(super) fn offered(&self, g: usize) -> Option<&Entries> {
        self.offered.get(&g)
    }

    /// What `agent` resolved a call against at `t`: its latest view by then with its group's
    /// later changes applied (empty when it had no view yet, as without groups).
    pub(super) fn at(&mut self, agent: &str, t: u64) -> Entries {
        let Some((entries, foreign)) = self.shared.at(agent, t) else {
            return Entries::new();
        };
        self.foreign += u64::from(foreign > 0);
        entries
    }

    fn sharing(&self) -> String {
        self.shared.sharing(Some(&self.mapping.file))
    }

    /// The report's note: how the registries are shared, and what `--mcp-log` overrides.
    pub(super) fn note(&self, joined: bool) -> String {
        let join = match joined {
            true => {
                "; the MCP log's registries (--mcp-log) take precedence, and a step it does \
                 not join has none"
            }
            false => "",
        };
        format!(
            "registries are {}: a planned call resolves against its agent's latest llm.tools \
             with every change its group's llm.tools showed before the call ({} changes \
             seen){join}",
            self.sharing(),
            self.shared.changes()
        )
    }

    /// A2 over `planned` planned steps, every one of which saw its generation's `llm.tools`;
    /// `runs` says which planned calls did not run, or may not have.
    pub(super) fn a2(&self, planned: u64, runs: &Runs) -> Verdict {
        let mut observed = BTreeMap::new();
        observed.insert("llm.tools on LLM".to_owned(), self.views);
        evidence::a2(&RegistryEvidence {
            tool_calls: planned,
            without_registry: 0,
            observed,
            names_only: 0,
            changes: self.shared.changes(),
            sharing: self.sharing(),
            foreign_applied: self.foreign,
            not_run: runs.not_run.clone(),
            unknown_run: runs.unknown,
        })
    }
}
