//! One MCP server's tool registry over time, from what all its clients received.

use crate::value::canonical;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// A registry: (tool, signature version) pairs, sorted by tool.
pub type Entries = Vec<(String, u32)>;

#[derive(Clone, Debug, PartialEq)]
enum Event {
    /// A complete `tools/list` answer.
    List(Entries),
    /// A `notifications/tools/list_changed` received by some client.
    Changed,
}

/// The server's registry as its clients saw it, in (time, line) order.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Some `initialize` answer declared `capabilities.tools.listChanged: true`.
    pub announces: bool,
    events: Vec<((u64, usize), Event)>,
    /// tool → the canonical definitions seen, in order: the index is the version.
    versions: BTreeMap<String, Vec<String>>,
}

impl Timeline {
    /// The entries of a list of tool definitions (versions assigned on first sight).
    pub fn entries(&mut self, tools: &[Json]) -> Entries {
        let mut out: Entries = Vec::new();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Json::as_str) else {
                continue;
            };
            let text = canonical(tool);
            let known = self.versions.entry(name.to_owned()).or_default();
            let v = match known.iter().position(|k| *k == text) {
                Some(v) => v,
                None => {
                    known.push(text);
                    known.len() - 1
                }
            };
            out.push((name.to_owned(), v as u32));
        }
        out.sort();
        out.dedup();
        out
    }

    /// Records a list answered at `at` (the inputs come in time order).
    pub fn list(&mut self, at: (u64, usize), entries: Entries) {
        self.events.push((at, Event::List(entries)));
    }

    /// Records a `list_changed` received at `at`.
    pub fn changed(&mut self, at: (u64, usize)) {
        self.events.push((at, Event::Changed));
    }

    /// The registry at `at`: the latest list after the latest change at or before `at`; else,
    /// when the next event after `at` is a list (no change between), that list; else unknown.
    /// Sound when the server announces every change (`announces`).
    pub fn at(&self, at: (u64, usize)) -> Option<&Entries> {
        let i = self.events.partition_point(|(k, _)| *k <= at);
        if let Some((_, Event::List(e))) = i.checked_sub(1).map(|j| &self.events[j]) {
            return Some(e);
        }
        match self.events.get(i) {
            Some((_, Event::List(e))) => Some(e),
            _ => None,
        }
    }

    /// How many `list_changed` receptions the timeline holds.
    pub fn changes(&self) -> usize {
        self.events
            .iter()
            .filter(|(_, e)| *e == Event::Changed)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_is_resolved_by_the_next_list_only() {
        let mut tl = Timeline::default();
        let old = tl.entries(&[json!({"name": "a"}), json!({"name": "b"})]);
        let new = tl.entries(&[json!({"name": "b"}), json!({"name": "a", "x": 1})]);
        assert_eq!(new, vec![("a".to_owned(), 1), ("b".to_owned(), 0)]);
        tl.list((10, 1), old.clone());
        tl.changed((20, 2));
        tl.list((30, 3), new.clone());
        tl.changed((40, 4));
        assert_eq!(
            tl.at((5, 0)),
            Some(&old),
            "before any change: the first list"
        );
        assert_eq!(tl.at((15, 0)), Some(&old));
        assert_eq!(
            tl.at((25, 0)),
            Some(&new),
            "after a change: the list that follows"
        );
        assert_eq!(tl.at((35, 0)), Some(&new));
        assert_eq!(tl.at((45, 0)), None, "a change no list resolves");
        assert_eq!(tl.changes(), 2);
    }
}
