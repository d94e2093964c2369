"""strands-agents/harness-sdk #4112, "refresh tools on list-changed notifications" (A2): an MCP
server changes a tool and announces it with ``notifications/tools/list_changed``; Strands'
``MCPClient`` ignores the notification, so the agent keeps offering the model the tool as first
listed and the model's call runs on the tool as it is now.

The pull request's problem statement: "``MCPClient`` ignores that notification today:
``load_tools`` caches the first listing for the life of the client, so an agent keeps seeing a
stale tool set" (goose #10433 reports the same of goose). Released in strands-agents 1.55.0:
``MCPClient(on_tools_changed=...)`` listens for the notification, re-lists the tools and calls
back with them. Affected: 1.54.0, the last release without it.

The run: an MCP server ``billing`` (the official SDK's FastMCP over streamable HTTP) with
``refund(order, amount)``, amount in dollars. Agent ``support`` (``strands.Agent`` over
``OpenAIModel`` at the scripted server, its tools from one ``MCPClient``) refunds order 7; agent
``auditor`` connects (a client of its own for each question) and lists the tools; the operator
upgrades ``refund`` to take the amount in a unit, cents by default, and the server sends
``list_changed``; ``auditor`` connects again and sees the new ``refund``; ``support`` then
refunds order 8. The scripted model answers from the tool
it is offered, as a model does: ``amount=15`` for the dollar tool, ``amount=1500,
unit="cents"`` for the new one. On 1.54.0 the second generation is offered the dollar tool, the
call runs on the cents tool, and the customer gets 15 cents. On 1.55.0 the same code registers
``on_tools_changed`` and puts the refreshed tools into the agent's registry (the pull request's
callback: previous names and refreshed tools), so the generation is offered the new tool.

Traced by Strands' own telemetry with tool definitions on (``OTEL_SEMCONV_STABILITY_OPT_IN=
gen_ai_tool_definitions``: each ``invoke_agent`` span carries the offered tools' schemas in
``gen_ai.tool.definitions``). The truth is the billing server's own log (the version of
``refund`` that served each call, the cents refunded) and the scripted server's (the version
each generation was offered).
"""

from __future__ import annotations

import asyncio
import os
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.streamable_http import streamable_http_client
from mcp.server.fastmcp import FastMCP

from ..llm_server import Reply, ScriptedLLM
from ..mcp_client import JsonlLog, WireLog
from ..mcp_server import RegistryServer
from ..otel_export import capture, install

REPORT = "strands-agents/harness-sdk#4112"
AFFECTED = "1.54.0"
FIXED = "1.55.0"
# The [[registry]] group agentsim reads the run with: both agents' tools come from one server.
MAPPING = """\
# support and auditor list their tools from one MCP server (billing): one registry.
[[registry]]
agents = ["support", "auditor"]
"""


class BillingServer(RegistryServer):
    """FastMCP ``billing``: ``refund`` in dollars until ``upgrade`` makes it take a unit
    (cents by default) and tells every client that listed the tools."""

    def _install(self) -> None:
        mcp = self.mcp = FastMCP("billing", log_level="WARNING")
        owner = self
        self.log: list[dict[str, Any]] = []
        self.version = 1
        self.loop: asyncio.AbstractEventLoop | None = None
        listed = mcp.list_tools

        async def list_tools() -> Any:
            session = mcp.get_context().session
            owner.loop = asyncio.get_running_loop()
            if all(s is not session for s in owner.sessions):
                owner.sessions.append(session)
            return await listed()

        mcp._mcp_server.list_tools()(list_tools)

        @mcp.tool(name="refund")
        def refund_v1(order: str, amount: int) -> str:
            """Refund `amount` dollars on an order."""
            owner.log.append({"order": order, "version": 1, "cents": amount * 100})
            return f"refunded {amount * 100} cents on order {order}"

    async def _upgrade(self) -> None:
        owner = self

        def refund_v2(order: str, amount: int, unit: str = "cents") -> str:
            """Refund `amount` on an order, in `unit`: "cents" (the default) or "dollars"."""
            cents = amount * 100 if unit == "dollars" else amount
            owner.log.append({"order": order, "version": 2, "cents": cents})
            return f"refunded {cents} cents on order {order}"

        self.mcp.remove_tool("refund")
        self.mcp.add_tool(refund_v2, name="refund")
        self.version = 2
        for session in list(self.sessions):
            try:
                await session.send_tool_list_changed()
            except anyio.ClosedResourceError:
                # A client that has disconnected (the auditor's first) hears nothing.
                self.sessions.remove(session)

    def upgrade(self) -> None:
        """Upgrades ``refund`` on the server's own loop (the one its sessions' streams belong
        to, seen when a client listed the tools), announcing it."""
        assert self.loop is not None, "no client has listed the tools"
        asyncio.run_coroutine_threadsafe(self._upgrade(), self.loop).result(20)


@asynccontextmanager
async def logged(url: str, client: str, log: JsonlLog) -> Any:
    """Strands' transport (the SDK's streamable HTTP client) with every JSON-RPC message
    logged as ``agentsim detect --from mcp`` reads it (:mod:`..mcp_client`)."""
    wire = WireLog(client, url, log)
    async with streamable_http_client(url) as (read, write, session_id):
        wire.session_id = session_id
        logged_read, logged_write = wire.wrap(read, write)
        yield logged_read, logged_write, session_id


def has_fix() -> bool:
    """Whether this Strands' MCPClient can refresh on list_changed (``on_tools_changed``)."""
    import inspect

    from strands.tools.mcp import MCPClient

    return "on_tools_changed" in inspect.signature(MCPClient.__init__).parameters


def offered_version(body: dict[str, Any]) -> int:
    """Which ``refund`` a chat request offers: 2 if its schema takes a unit, else 1."""
    for t in body.get("tools", []):
        fn = t.get("function", {})
        if fn.get("name") == "refund":
            return 2 if "unit" in fn.get("parameters", {}).get("properties", {}) else 1
    return 0


def refund_for(order: str, dollars: int) -> Reply:
    """The model's call: the refund of ``dollars`` in the form the offered tool takes."""
    def choose(body: dict[str, Any]) -> Reply:
        if offered_version(body) == 2:
            return Reply.tools(("refund", {"order": order, "amount": dollars * 100,
                                           "unit": "cents"}))
        return Reply.tools(("refund", {"order": order, "amount": dollars}))
    return Reply.chosen(choose)


def run(folder: Path) -> dict[str, Any]:
    """Runs the two agents once, writing ``folder/spans.jsonl``, ``folder/mcp.jsonl`` (every
    MCP message of both agents' clients) and ``folder/map.toml``;
    returns what the billing server and the scripted model saw."""
    from importlib.metadata import version

    from strands import Agent
    from strands.models.openai import OpenAIModel
    from strands.tools.mcp import MCPClient

    # Tool schemas on invoke_agent spans (Strands' opt-in), read before the tracer is made.
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_tool_definitions"
    install()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "map.toml").write_text(MAPPING)
    fixed = has_fix()
    mcp_log = JsonlLog(folder / "mcp.jsonl")
    llm = ScriptedLLM({
        "support": [refund_for("7", 20), Reply.text("refunded"),
                    refund_for("8", 15), Reply.text("refunded")],
        "auditor": [Reply.text("one refund today"), Reply.text("one refund today")],
    })
    base = llm.start()
    billing = BillingServer()
    url = billing.start()
    refreshed = threading.Event()
    try:
        def model(name: str) -> OpenAIModel:
            return OpenAIModel(client_args={"base_url": base, "api_key": "none"}, model_id=name)

        support: Agent | None = None

        def tools_changed(previous: list[str], tools: list[Any]) -> None:
            # What a user does with the callback: the agent offers the refreshed tools.
            assert support is not None
            registry = support.tool_registry
            for t in tools:
                if t.tool_name in registry.registry:
                    registry.replace(t)
                else:
                    registry.register_tool(t)
            refreshed.set()

        def audit(model: Any) -> None:
            # The auditor connects for each question, so it lists the server's tools as they
            # are now: its two invocations' spans show the upgrade.
            with MCPClient(lambda: logged(url, "auditor", mcp_log)) as fresh:
                Agent(name="auditor", model=model("auditor"), tools=fresh.list_tools_sync(),
                      callback_handler=None)("How many refunds today?")

        kwargs = {"on_tools_changed": tools_changed} if fixed else {}
        client = MCPClient(lambda: logged(url, "support", mcp_log), **kwargs)
        with capture(folder / "spans.jsonl"), client:
            support = Agent(name="support", model=model("support"),
                            tools=client.list_tools_sync(), callback_handler=None)
            support("Refund order 7: 20 dollars.")
            audit(model)
            billing.upgrade()
            if fixed:
                assert refreshed.wait(20), "on_tools_changed was never called"
            audit(model)
            support("Refund order 8: 15 dollars.")
    finally:
        billing.stop()
        llm.stop()
    assert not llm.errors, llm.errors
    planned = [r for r in llm.requests if r["key"] == "support"]
    # The generations that planned a refund: the first and third of support's.
    offered = [offered_version(planned[i]["body"]) for i in (0, 2)]
    served = [e["version"] for e in billing.log]
    return {
        "report": REPORT,
        "version": version("strands-agents"),
        "fix_applied": fixed,
        "offered": offered,
        "served": served,
        "refunds": billing.log,
        # What was lost: order 8 was to get 1500 cents.
        "order_8_cents": next((e["cents"] for e in billing.log if e["order"] == "8"), None),
        "a2": offered != served,
    }
