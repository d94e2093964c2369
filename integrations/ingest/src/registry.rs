//! A tool registry shared across agents: registry changes observed anywhere apply to every
//! agent of the group (SPEC §1 extension 4, A2 in §3).
//!
//! Sources observe a registry only at some instants: an `invoke_agent` span's
//! `gen_ai.tool.definitions` or `gen_ai.agent.tools`, a generation's definitions, an MCP
//! `tools/list` response. Each [`Observation`] is one agent's view at one instant. A change is
//! what one observer's consecutive views differ by (a tool gone, a definition changed, a tool
//! back); the first view of an observer changes nothing. [`SharedRegistry::at`] answers "what
//! would this agent resolve its tools against at `t`": its own latest view, with every change
//! observed in its group since then applied. So a retirement that one agent's later spans show
//! is found in another agent's dispatch (A2), which a per-agent timeline misses.
//!
//! What a pass does not prove: a change is seen at the next observation after it, never
//! earlier, so a change between two observations that no later observation precedes a
//! dispatch is invisible; a "none" for A2 on sparse observations is not an answer (the
//! verdict is [`crate::report::Verdict::LowerBound`]). Views that give names only (Strands'
//! `gen_ai.agent.tools`) show removals, never signature changes.

use std::collections::BTreeMap;

/// One agent's view of its registry at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// When (any ordered instant, e.g. Unix nanoseconds).
    pub at: u64,
    /// Who observed it (an agent name, an MCP client).
    pub observer: String,
    /// Tool → its definition as canonical text, or `None` when the view gives names only.
    pub tools: BTreeMap<String, Option<String>>,
}

/// A registry snapshot: (tool, signature version) pairs, sorted by tool.
pub type Entries = Vec<(String, u32)>;

/// One change: at `at`, in `group`, `tool` got `version` (`None`: it was removed).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Change {
    at: u64,
    tool: String,
    version: Option<u32>,
}

/// The registries of a trace, grouped by who shares them.
#[derive(Clone, Debug, Default)]
pub struct SharedRegistry {
    /// observer → its views in time order: (at, entries).
    views: BTreeMap<String, Vec<(u64, Entries)>>,
    /// observer → its group.
    group: BTreeMap<String, String>,
    /// group → changes in time order, with the observer that saw each.
    changes: BTreeMap<String, Vec<(Change, String)>>,
}

impl SharedRegistry {
    /// Builds the timeline from `obs`; `group_of` names the registry each observer uses
    /// (return the observer itself for a private registry).
    pub fn new(mut obs: Vec<Observation>, group_of: impl Fn(&str) -> String) -> SharedRegistry {
        obs.sort_by(|a, b| (a.at, &a.observer).cmp(&(b.at, &b.observer)));
        let mut r = SharedRegistry::default();
        // (group, tool) → definitions seen, in order: the version is the index.
        let mut versions: BTreeMap<(String, String), Vec<Option<String>>> = BTreeMap::new();
        for o in obs {
            let g = r
                .group
                .entry(o.observer.clone())
                .or_insert_with(|| group_of(&o.observer))
                .clone();
            let mut entries: Entries = Vec::new();
            for (tool, def) in &o.tools {
                let known = versions.entry((g.clone(), tool.clone())).or_default();
                // Names only: the signature is unknown, so it matches any version seen.
                let v = match def {
                    None => known.len().saturating_sub(1),
                    Some(d) => match known.iter().position(|k| k.as_ref() == Some(d)) {
                        Some(v) => v,
                        None => {
                            known.push(Some(d.clone()));
                            known.len() - 1
                        }
                    },
                };
                if known.is_empty() {
                    known.push(None);
                }
                entries.push((tool.clone(), v as u32));
            }
            let views = r.views.entry(o.observer.clone()).or_default();
            if let Some((_, prev)) = views.last() {
                let changes = r.changes.entry(g.clone()).or_default();
                for c in diff(o.at, prev, &entries) {
                    changes.push((c, o.observer.clone()));
                }
            }
            views.push((o.at, entries));
        }
        r
    }

    /// The observer's own latest view at or before `t` (what it was given), if any.
    pub fn own(&self, observer: &str, t: u64) -> Option<&Entries> {
        let views = self.views.get(observer)?;
        let i = views.partition_point(|(at, _)| *at <= t);
        i.checked_sub(1).map(|i| &views[i].1)
    }

    /// What `observer` would resolve against at `t`: its own latest view at or before `t`,
    /// with the changes its group saw after that view and at or before `t` applied (a tool
    /// the view lacks is not added by another observer's change). The second value counts the
    /// changes applied that another observer saw.
    pub fn at(&self, observer: &str, t: u64) -> Option<(Entries, usize)> {
        let views = self.views.get(observer)?;
        let i = views.partition_point(|(at, _)| *at <= t).checked_sub(1)?;
        let (since, view) = &views[i];
        let mut map: BTreeMap<String, Option<u32>> =
            view.iter().map(|(t, v)| (t.clone(), Some(*v))).collect();
        let mut foreign = 0;
        let group = &self.group[observer];
        for (c, by) in self.changes.get(group).into_iter().flatten() {
            if c.at <= *since || c.at > t {
                continue;
            }
            if let Some(slot) = map.get_mut(&c.tool) {
                *slot = c.version;
                foreign += usize::from(by != observer);
            }
        }
        let entries = map
            .into_iter()
            .filter_map(|(t, v)| v.map(|v| (t, v)))
            .collect();
        Some((entries, foreign))
    }

    /// How many changes were observed, over all groups.
    pub fn changes(&self) -> usize {
        self.changes.values().map(Vec::len).sum()
    }

    /// The groups that more than one observer shares.
    pub fn shared_groups(&self) -> usize {
        let mut members: BTreeMap<&String, usize> = BTreeMap::new();
        for g in self.group.values() {
            *members.entry(g).or_default() += 1;
        }
        members.values().filter(|&&n| n > 1).count()
    }

    /// How the registries are shared, for a report: by the `[[registry]]` groups the mapping
    /// file `declared_in` declares, or per agent (`None`: no groups declared).
    pub fn sharing(&self, declared_in: Option<&str>) -> String {
        match declared_in {
            Some(file) => format!(
                "shared by the groups {file} declares ({} groups with several agents seen)",
                self.shared_groups()
            ),
            None => "per agent (no [[registry]] groups declared)".to_owned(),
        }
    }
}

/// What changed from `prev` to `cur` (both sorted by tool).
fn diff(at: u64, prev: &Entries, cur: &Entries) -> Vec<Change> {
    let p: BTreeMap<&String, u32> = prev.iter().map(|(t, v)| (t, *v)).collect();
    let c: BTreeMap<&String, u32> = cur.iter().map(|(t, v)| (t, *v)).collect();
    let mut out = Vec::new();
    for (t, v) in &p {
        match c.get(t) {
            None => out.push(Change {
                at,
                tool: (*t).clone(),
                version: None,
            }),
            Some(w) if w != v => out.push(Change {
                at,
                tool: (*t).clone(),
                version: Some(*w),
            }),
            Some(_) => {}
        }
    }
    for (t, v) in &c {
        if !p.contains_key(t) {
            out.push(Change {
                at,
                tool: (*t).clone(),
                version: Some(*v),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(at: u64, who: &str, tools: &[(&str, &str)]) -> Observation {
        Observation {
            at,
            observer: who.into(),
            tools: tools
                .iter()
                .map(|(t, d)| (t.to_string(), Some(d.to_string())))
                .collect(),
        }
    }

    #[test]
    fn a_retirement_seen_by_one_agent_applies_to_its_group() {
        let o = vec![
            obs(10, "planner", &[("lookup", "a")]),
            obs(20, "admin", &[("lookup", "a"), ("retire", "r")]),
            obs(40, "admin", &[("retire", "r")]),
        ];
        let shared = SharedRegistry::new(o.clone(), |_| "all".into());
        assert_eq!(
            shared.own("planner", 50).unwrap(),
            &vec![("lookup".into(), 0)]
        );
        assert_eq!(
            shared.at("planner", 30).unwrap(),
            (vec![("lookup".into(), 0)], 0)
        );
        assert_eq!(shared.at("planner", 50).unwrap(), (vec![], 1));
        // Private registries: the planner's is unchanged.
        let private = SharedRegistry::new(o, |a| a.into());
        assert_eq!(
            private.at("planner", 50).unwrap().0,
            vec![("lookup".into(), 0)]
        );
        assert_eq!((shared.changes(), shared.shared_groups()), (1, 1));
    }

    #[test]
    fn a_changed_definition_is_a_new_version_and_names_only_match_any() {
        let mut names = obs(30, "b", &[]);
        names.tools.insert("t".into(), None);
        let o = vec![
            obs(10, "a", &[("t", "x")]),
            obs(20, "a", &[("t", "y")]),
            names,
        ];
        let r = SharedRegistry::new(o, |_| "g".into());
        assert_eq!(r.at("a", 25).unwrap().0, vec![("t".into(), 1)]);
        assert_eq!(r.own("b", 30).unwrap(), &vec![("t".into(), 1)]);
    }
}
