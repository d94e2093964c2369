//! The `mcp_client` key of an `[[agents]]` entry: the agent reaches its tools through an MCP
//! client that caches the server's tool list (`tools/list`), and this says what the client
//! does when the server announces a change (`notifications/tools/list_changed`).
//!
//! The engine side (`engine::mcp`) keeps each client's list. Without the key an agent sees
//! the live registry at every read, as before; the key changes nothing about the runtime,
//! which still resolves every call against the live registry (the server's) unless it pins.

/// What an MCP client does with its cached tool list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpClient {
    /// Lists the tools at its first read and plans every later generation against that list,
    /// ignoring `list_changed` (what the OpenAI Agents SDK's MCP client does with its list
    /// cached; docs/ingest.md, the `a2_mcp` corpus run).
    Stale,
    /// Re-lists on `list_changed` before its next read, and calls whatever it planned: a
    /// change announced while a generation is in flight is seen only after that plan.
    Relist,
    /// Re-lists on `list_changed` before its next read, and before dispatching a planned call
    /// checks the tool against its list: a tool withdrawn since the plan is not called; the
    /// operation is regenerated (a retry) against the new list.
    Refresh,
}

impl McpClient {
    /// The key's value: `stale`, `relist` or `refresh`.
    pub fn parse(s: &str) -> Result<McpClient, String> {
        match s {
            "stale" => Ok(McpClient::Stale),
            "relist" => Ok(McpClient::Relist),
            "refresh" => Ok(McpClient::Refresh),
            x => Err(format!("`{x}` is not stale, relist or refresh")),
        }
    }

    /// The key's value, as written.
    pub fn name(self) -> &'static str {
        match self {
            McpClient::Stale => "stale",
            McpClient::Relist => "relist",
            McpClient::Refresh => "refresh",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_three_names_and_nothing_else() {
        for c in [McpClient::Stale, McpClient::Relist, McpClient::Refresh] {
            assert_eq!(McpClient::parse(c.name()), Ok(c));
        }
        let e = McpClient::parse("ignore").expect_err("not a policy");
        assert_eq!(e, "`ignore` is not stale, relist or refresh");
    }
}
