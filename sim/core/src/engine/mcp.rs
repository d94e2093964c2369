//! MCP clients' cached tool lists (the `mcp_client` agent key): what an agent plans against
//! when its tools come from an MCP server through a client that caches `tools/list`.
//!
//! The scenario's registry is the server's tool list; every `registry` step that fires is a
//! change the server announces to every client with `notifications/tools/list_changed`,
//! delivered at once (the engine has no transport: on one host a notification takes well
//! under a millisecond against generations of seconds). A client lists at its first read.
//! Then:
//!
//! * `stale` keeps that list for every later read, ignoring `list_changed`: the operation's
//!   read registry is the cached list, so a tool the server withdrew is still planned, and
//!   the call (resolved against the live registry by every runtime that does not pin) is
//!   A2, phantom-tool (SPEC §3).
//! * `relist` re-lists after `list_changed`, before its next read, and calls what it planned.
//! * `refresh` re-lists after `list_changed`, before its next read, and before dispatching a
//!   planned call checks the tool against its (re-listed) list: if the tool left or changed
//!   since the plan, the call is not sent and the operation is given up without a record and
//!   retried (re-listed, regenerated) within the scenario's retry bound. Re-listing alone
//!   (`relist`) does not prevent A2: a change announced while a generation is in flight
//!   reaches the client after the plan. The check at dispatch closes that window, and the
//!   re-list keeps the regeneration from planning the same withdrawn tool again (a check
//!   against a list that is never refreshed would refuse and regenerate the same plan until
//!   the retries ran out). Nothing a client does closes the window between a call's dispatch
//!   and its completion: a withdrawal there is still A2 (`agentsim explore` reaches it); only
//!   a server that finishes calls against the version they were planned on (`pin`) does.
//!
//! A client plans only tools its list offers (the model is not offered the others); an
//! agent without the key plans as before, against the live registry. This proves the twin's
//! outcome on the seeds run, not that a real client behaves so: the corpus runs
//! (docs/ingest.md) are the evidence for that.

use super::Engine;
use crate::scenario::{McpClient, Scenario};
use agentsim_models::names::Agent;
use agentsim_models::record::Registry;
use agentsim_models::runtime::{BeginRequest, Runtime};

/// One client's state.
#[derive(Clone, Debug, Hash)]
struct Client {
    policy: McpClient,
    /// The list from the latest `tools/list`; `None` before the first.
    list: Option<Registry>,
    /// A `list_changed` arrived since that listing.
    changed: bool,
}

/// Every agent's client (empty when no agent has one).
#[derive(Clone, Debug, Default, Hash)]
pub(super) struct Clients(Vec<Option<Client>>);

impl Clients {
    /// A client, with nothing listed yet, for each agent with `mcp_client`.
    pub(super) fn new(sc: &Scenario) -> Clients {
        if sc.agents.iter().all(|a| a.mcp_client.is_none()) {
            return Clients::default();
        }
        let client = |policy| Client {
            policy,
            list: None,
            changed: false,
        };
        Clients(sc.agents.iter().map(|a| a.mcp_client.map(client)).collect())
    }

    /// The server announced a change: `notifications/tools/list_changed` to every client.
    pub(super) fn list_changed(&mut self) {
        for c in self.0.iter_mut().flatten() {
            c.changed = true;
        }
    }

    /// Agent `a`'s list as the client holds it now: listed (from `live`) if never listed, or
    /// re-listed after a `list_changed` if the client refreshes. `None`: not a client.
    fn view(&mut self, a: usize, live: &Registry) -> Option<&Registry> {
        let c = self.0.get_mut(a)?.as_mut()?;
        let relist = c.list.is_none() || (c.changed && c.policy != McpClient::Stale);
        if relist {
            c.list = Some(live.clone());
            c.changed = false;
        }
        c.list.as_ref()
    }
}

impl<R: Runtime> Engine<'_, R> {
    /// Whether agent `a`'s client checks its planned call against its list before the write
    /// issues it (`refresh`): that check reads what a `registry` step changes, so the issue
    /// is not a local step for the explorer's reduction.
    pub(super) fn mcp_checks(&self, a: usize) -> bool {
        let c = self.mcp.0.get(a).and_then(Option::as_ref);
        c.is_some_and(|c| c.policy == McpClient::Refresh)
    }

    /// The read's request as agent `a`'s client makes it: planned against its list (a tool
    /// the list lacks is not planned), that list recorded as the read registry.
    pub(super) fn mcp_request(&mut self, a: usize, mut req: BeginRequest) -> BeginRequest {
        let live = self.rt.store().registry();
        let Some(list) = self.mcp.view(a, live) else {
            return req;
        };
        req.planned_tool = req.planned_tool.filter(|&t| list.contains(t));
        req.observed_registry = Some(list.clone());
        req
    }

    /// At agent `a`'s write, before its effects are issued: whether a `refresh` client refuses
    /// the planned call (its tool left or changed since the plan). A refusal gives the
    /// operation up (no record; its tokens are wasted) and returns the next program counter:
    /// the operation's read again (a retry) or past its write once retries run out.
    pub(super) fn mcp_refuse(&mut self, a: usize, delay: &mut u64) -> Option<Option<usize>> {
        let st = &self.agents[a];
        assert!(st.open, "a call is dispatched from an open operation");
        assert!(
            !st.op.issued,
            "a call is checked before its effects are issued"
        );
        let tool = st.op.planned?;
        let agent = Agent(a as u32);
        let planned = self.rt.store().pending(agent).snapshot.registry.get(tool);
        let live = self.rt.store().registry();
        if !self.mcp_checks(a) {
            return None;
        }
        let now = self.mcp.view(a, live)?.get(tool);
        if now.is_some() && now == planned {
            return None;
        }
        self.rt.abandon(agent);
        let st = &mut self.agents[a];
        st.open = false;
        self.c.tokens_wasted = self.c.tokens_wasted.saturating_add(st.op.tokens);
        let read_pc = st.op.read_pc;
        let name = self.sc.names.tool_name(tool);
        note!(
            self,
            a,
            "refused call of `{name}`: withdrawn since the plan"
        );
        let next = if self.retry(a, delay) {
            read_pc
        } else {
            self.sc.agents[a].script.op_close[read_pc] + 1
        };
        Some(Some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentsim_models::names::Tool;
    use agentsim_models::runtime::{RegistryChange, Store};
    use std::path::Path;

    /// One agent without a client, then one client per policy, of a server with `a` and `b`.
    const FOUR: &str = r#"
name = "t"
runtime = "vanilla"
cells = ["c"]
tools = ["a", "b"]
[[agents]]
name = "plain"
script = [{ do = "wait", latency_ms = { fixed = 1 } }]
[[agents]]
name = "s"
mcp_client = "stale"
script = [{ do = "wait", latency_ms = { fixed = 1 } }]
[[agents]]
name = "l"
mcp_client = "relist"
script = [{ do = "wait", latency_ms = { fixed = 1 } }]
[[agents]]
name = "r"
mcp_client = "refresh"
script = [{ do = "wait", latency_ms = { fixed = 1 } }]
"#;

    #[test]
    fn a_stale_client_keeps_its_first_list_the_others_relist_on_list_changed() {
        let sc = Scenario::parse(Path::new("t.toml"), FOUR).expect("parses");
        let mut cs = Clients::new(&sc);
        let mut store = Store::new(Registry::all(2));
        assert!(cs.view(0, store.registry()).is_none(), "not a client");
        for a in 1..=3 {
            assert_eq!(cs.view(a, store.registry()), Some(&Registry::all(2)));
        }
        store.change_registry(RegistryChange::Remove(Tool(1)));
        // Until the notification arrives every client holds the list it has.
        for a in 1..=3 {
            let list = cs.view(a, store.registry()).expect("a client");
            assert!(list.contains(Tool(1)));
        }
        cs.list_changed();
        let stale = cs.view(1, store.registry()).expect("stale");
        assert!(stale.contains(Tool(1)));
        for a in 2..=3 {
            let list = cs.view(a, store.registry()).expect("re-lists");
            assert!(!list.contains(Tool(1)));
            assert!(list.contains(Tool(0)));
        }
    }

    #[test]
    fn without_clients_there_is_no_state() {
        let plain = FOUR
            .split("[[agents]]\nname = \"s\"")
            .next()
            .expect("prefix");
        let sc = Scenario::parse(Path::new("t.toml"), plain).expect("parses");
        assert!(Clients::new(&sc).0.is_empty());
    }
}
