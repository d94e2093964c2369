"""OpenAI Agents SDK runs, traced by OpenInference's instrumentor and written as OTLP JSON by the
official file exporter (``opentelemetry-exporter-otlp-json-file``, one ``TracesData`` per line).

The SDK is switched to chat completions (``set_default_openai_api("chat_completions")``, its
documented setting) and pointed at the scripted server, so each agent's generations are the
test's script and a gate holds a generation open while another agent acts. Runs (the file is
``folder/spans.jsonl``; ``run`` returns what happened):

* ``a6``: one generation plans ``slow`` and ``fast``; the SDK runs both at once and ``slow``
  finishes after ``fast``: A6. ``a6_fixed``: ``fast`` waits for ``slow``: clean.
* ``a1``: ``writer`` and ``editor`` share a profile store reached only through tools
  (``read_profile``, ``write_profile``). The editor reads, its generation is held open while the
  writer writes, and then it writes what it planned from the old value: a lost update (A1).
  ``a1_fixed``: the writer finishes before the editor reads: clean. OpenInference has no
  memory span kind and these are ordinary TOOL spans, so alone agentsim must say A1 *cannot
  tell* on both; with the mapping file (``runs.PROFILE_MAP``, ``--tool-memory``) it decides A1
  from the TOOL spans' ``tool.name``, ``input.value`` and ``output.value``. The truth is what the
  store saw: each agent's reads and writes, in order (``truth["ops"]``), and whether an agent
  wrote a key another agent had written since it read it (``truth["a1"]``).
* ``a2_mcp``: ``planner`` and ``admin`` each reach the same MCP server (``mcp_server``) through
  the SDK's own ``MCPServerStreamableHttp``, whose streams are logged (``mcp_client``'s format,
  ``folder/mcp.jsonl``). The planner's generation plans ``lookup``; while it is in flight the
  admin's tool call withdraws ``lookup``; the SDK ignores ``list_changed`` and calls it: A2,
  which the MCP log shows and the spans cannot (no ``llm.tools``). ``a2_mcp_fixed``: the admin
  withdraws ``search`` instead: the planner's call is a stale-list call, not an A2.

``run(..., also=...)`` sends the spans to more exporters beside the file (the live tests' OTLP
exporters), each behind a ``BatchSpanProcessor`` as an application ships spans to a collector,
flushed when the run's provider shuts down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agents import (Agent, Runner, function_tool, set_default_openai_api,
                    set_default_openai_client, set_tracing_disabled, trace)
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from agents.mcp import MCPServerStreamableHttp

from .llm_server import Reply, ScriptedLLM
from .mcp_client import JsonlLog, WireLog
from .mcp_server import RegistryServer
from .runs import lost_update

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed", "a2_mcp", "a2_mcp_fixed")


class LoggedMCPServer(MCPServerStreamableHttp):
    """The SDK's streamable-HTTP MCP client, with the JSON-RPC messages it sends and receives
    logged between its session and its transport."""

    def __init__(self, wire: WireLog) -> None:
        super().__init__({"url": wire.url}, name=wire.client, cache_tools_list=False)
        self.wire = wire

    @asynccontextmanager
    async def _logged(self) -> Any:
        async with super().create_streams() as (read, write, sid):
            self.wire.session_id = sid
            logged_read, logged_write = self.wire.wrap(read, write)
            yield logged_read, logged_write, sid

    def create_streams(self) -> Any:
        return self._logged()


# Exporters that receive a run's spans beside its file (the live tests' OTLP exporters).
Also = Callable[[], list[SpanExporter]]


def _traced(path: Path,
            also: Also | None = None) -> tuple[TracerProvider, OpenAIAgentsInstrumentor]:
    provider = TracerProvider(resource=Resource.create({"service.name": "openai-agents-corpus"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    # As an application ships spans to a collector: batched, flushed when the provider shuts down.
    for exporter in also() if also is not None else []:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    return provider, instrumentor


# The call that waited returns well after the one it waited for, so the spans end in the order
# the effects landed even on a loaded machine (the SDK's own work after a tool returns, ending
# its span, takes milliseconds).
SETTLE_S = 0.3


async def _a6(variant: str, truth: dict[str, Any]) -> None:
    fast_done = asyncio.Event()
    slow_done = asyncio.Event()
    order: list[str] = []

    @function_tool
    async def slow(item: str) -> str:
        """Slow tool."""
        if variant == "a6":
            await fast_done.wait()
            await asyncio.sleep(SETTLE_S)
        order.append("slow")
        slow_done.set()
        return f"slow {item}"

    @function_tool
    async def fast(item: str) -> str:
        """Fast tool."""
        if variant == "a6_fixed":
            await slow_done.wait()
            await asyncio.sleep(SETTLE_S)
        order.append("fast")
        fast_done.set()
        return f"fast {item}"

    agent = Agent(name="worker", instructions="worker", model="worker", tools=[slow, fast])
    with trace("a6 workflow"):
        await Runner.run(agent, "do both")
    truth["completion_order"] = order
    truth["a6"] = order == ["fast", "slow"]


async def _a1(variant: str, llm: ScriptedLLM, truth: dict[str, Any]) -> None:
    store: dict[str, str] = {"profile": "v0"}
    ops: list[tuple[str, str, str, str]] = []

    def profile_tools(agent: str) -> list[Any]:
        # One pair per agent, with the same names: the store records who called it.
        @function_tool
        def read_profile(key: str) -> str:
            """Reads a profile field."""
            ops.append((agent, "read", key, store[key]))
            return store[key]

        @function_tool
        def write_profile(key: str, value: str) -> str:
            """Writes a profile field."""
            ops.append((agent, "write", key, value))
            store[key] = value
            return "ok"

        return [read_profile, write_profile]

    writer = Agent(name="writer", instructions="writer", model="writer",
                   tools=profile_tools("writer"))
    editor = Agent(name="editor", instructions="editor", model="editor",
                   tools=profile_tools("editor"))
    with trace("a1 workflow"):
        if variant == "a1":
            editing = asyncio.create_task(Runner.run(editor, "edit the profile"))
            # The editor has read and its second generation is in flight.
            await asyncio.to_thread(llm.wait_requested, "editor", 2)
            await Runner.run(writer, "write the profile")
            llm.open("writer-done")
            await editing
        else:
            await Runner.run(writer, "write the profile")
            llm.open("writer-done")
            await Runner.run(editor, "edit the profile")
    truth["ops"] = ops
    truth["a1"] = lost_update(ops)


async def _a2_mcp(variant: str, llm: ScriptedLLM, url: str, log: JsonlLog,
                  truth: dict[str, Any]) -> None:
    planner_wire, admin_wire = WireLog("planner", url, log), WireLog("admin", url, log)
    async with LoggedMCPServer(planner_wire) as p_mcp, LoggedMCPServer(admin_wire) as a_mcp:
        planner = Agent(name="planner", instructions="planner", model="planner",
                        mcp_servers=[p_mcp])
        admin = Agent(name="admin", instructions="admin", model="admin", mcp_servers=[a_mcp])
        with trace("a2 workflow"):
            planning = asyncio.create_task(Runner.run(planner, "look k up"))
            await asyncio.to_thread(llm.wait_requested, "planner")
            await Runner.run(admin, "retire a tool")
            if not await asyncio.to_thread(planner_wire.changed.wait, 20):
                raise TimeoutError("the planner's connection never got list_changed")
            llm.open("retired")
            await planning
    truth["a2"] = variant == "a2_mcp"


def run(variant: str, folder: Path, also: Also | None = None) -> dict[str, Any]:
    """Runs ``variant``, writing ``folder/spans.jsonl``; returns what the run did. ``also``
    gives exporters that receive the spans too (batched)."""
    assert variant in RUNS, variant
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spans.jsonl"
    path.write_text("")
    script = {
        "worker": [Reply.tools(("slow", {"item": "a"}), ("fast", {"item": "b"})), Reply.text("done")],
        "writer": [Reply.tools(("write_profile", {"key": "profile", "value": "w1"})),
                   Reply.text("written")],
        "editor": [Reply.tools(("read_profile", {"key": "profile"})),
                   Reply.tools(("write_profile", {"key": "profile", "value": "e1"}),
                               gate="writer-done"),
                   Reply.text("edited")],
        "planner": [Reply.tools(("lookup", {"key": "k"}), gate="retired"), Reply.text("done")],
        "admin": [Reply.tools(("retire_tool",
                               {"name": "search" if variant == "a2_mcp_fixed" else "lookup"})),
                  Reply.text("retired")],
    }
    llm = ScriptedLLM(script)
    base = llm.start()
    provider, instrumentor = _traced(path, also)
    truth: dict[str, Any] = {"run": variant}
    try:
        set_tracing_disabled(False)
        set_default_openai_client(AsyncOpenAI(base_url=base, api_key="none"), use_for_tracing=False)
        set_default_openai_api("chat_completions")
        if variant.startswith("a6"):
            asyncio.run(_a6(variant, truth))
        elif variant.startswith("a1"):
            asyncio.run(_a1(variant, llm, truth))
        else:
            with RegistryServer() as server:
                log = JsonlLog(folder / "mcp.jsonl")
                asyncio.run(_a2_mcp(variant, llm, server.url, log, truth))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
