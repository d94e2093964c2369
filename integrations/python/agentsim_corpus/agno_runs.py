"""Agno runs (``agno``), traced by OpenInference's Agno instrumentor
(``openinference-instrumentation-agno``: ``AGENT`` spans for runs, ``LLM`` spans per generation
with the offered tools flattened into ``llm.tools.<i>.tool.json_schema``, ``TOOL`` spans per
call) and written as OTLP JSON by the official file exporter.

Each agent is an ``agno.agent.Agent`` over Agno's ``OpenAIChat`` (the real ``openai`` client)
pointed at the scripted server; the model id is the script's key. Agno's telemetry to its own
service is off (``AGNO_TELEMETRY=false``). Runs (the file is ``folder/spans.jsonl``; ``run``
returns what happened):

* ``a6``: one generation plans ``charge`` and ``notify``; Agno's ``arun`` runs the calls of one
  generation concurrently, and ``charge`` lands after ``notify``: A6. ``a6_fixed``: ``notify``
  waits for ``charge``: clean. The truth is the order the calls began and the order they landed.
* ``a1``: ``writer`` and ``editor`` share a profile behind ``read_profile`` / ``write_profile``;
  the editor reads, its next generation is held open while the writer writes, then it writes
  what it planned from the old value (A1). ``a1_fixed``: the writer finishes before the editor
  starts. The truth is what the store saw, in order.
* ``a2``: ``planner`` and ``admin`` are built, at each run, from one shared tool registry (an
  Agno agent's tools are fixed when its run starts); the planner's generation that plans
  ``lookup`` is held open while the admin retires ``lookup`` (the admin's next run is offered
  the registry without it), and then Agno runs the call from the tools the run started with: a
  phantom (A2). ``a2_fixed``: the same race, with the fix a user of Agno makes: a tool hook
  (``tool_hooks``, Agno's middleware around every call) re-checks the registry when the call is
  about to run and refuses a tool no longer in it, without calling it, by raising Agno's
  ``RetryAgentRun`` (the call fails, its ``TOOL`` span ends in ERROR with the refusal as its
  output, and the model is told why). The truth is which calls ran and which were refused.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent  # noqa: E402
from agno.exceptions import RetryAgentRun  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from openinference.instrumentation.agno import AgnoInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.json.file import FileSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

from openai import AsyncOpenAI  # noqa: E402

from .llm_server import Reply, ScriptedLLM  # noqa: E402
from .runs import lost_update  # noqa: E402

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed", "a2", "a2_fixed")
WAIT_S = 30.0
# The call that waited lands well after the one it waited for, so the spans end in the order
# the effects landed even on a loaded machine.
SETTLE_S = 0.3
REFUSAL = "refused: {name} is no longer in the registry"


def _traced(path: Path) -> tuple[TracerProvider, AgnoInstrumentor]:
    provider = TracerProvider(resource=Resource.create({"service.name": "agno-corpus"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    return provider, instrumentor


def _agent(name: str, client: AsyncOpenAI, tools: list[Callable[..., Any]], **more: Any) -> Agent:
    model = OpenAIChat(id=name, async_client=client)
    return Agent(name=name, model=model, instructions=f"You are the {name}.", tools=tools,
                 telemetry=False, **more)


async def _a6(variant: str, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    charged, notified = asyncio.Event(), asyncio.Event()
    began: list[str] = []
    landed: list[str] = []

    async def charge(order: str) -> str:
        """Charge the customer for an order."""
        began.append("charge")
        if variant == "a6":
            await asyncio.wait_for(notified.wait(), WAIT_S)
            await asyncio.sleep(SETTLE_S)
        landed.append("charge")
        charged.set()
        return "charged"

    async def notify(order: str) -> str:
        """Tell the customer the order is confirmed."""
        began.append("notify")
        if variant == "a6_fixed":
            await asyncio.wait_for(charged.wait(), WAIT_S)
            await asyncio.sleep(SETTLE_S)
        landed.append("notify")
        notified.set()
        return "notified"

    await _agent("clerk", client, [charge, notify]).arun("Confirm order 7.")
    truth["issue_order"] = began
    truth["completion_order"] = landed
    truth["a6"] = began != landed


async def _a1(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    store: dict[str, str] = {"profile": "v0"}
    ops: list[tuple[str, str, str, str]] = []

    def profile_tools(agent: str) -> list[Callable[..., Any]]:
        # One pair per agent, with the same names: the store records who called it.
        def read_profile(key: str) -> str:
            """Read one field of the shared user profile."""
            ops.append((agent, "read", key, store[key]))
            return store[key]

        def write_profile(key: str, value: str) -> str:
            """Write one field of the shared user profile."""
            ops.append((agent, "write", key, value))
            store[key] = value
            return "ok"

        return [read_profile, write_profile]

    writer = _agent("writer", client, profile_tools("writer"))
    editor = _agent("editor", client, profile_tools("editor"))
    if variant == "a1":
        editing = asyncio.create_task(editor.arun("Edit the profile."))
        # The editor has read and its second generation is in flight.
        while llm.requested("editor") < 2:
            await asyncio.sleep(0.005)
        await writer.arun("Write the profile.")
        llm.open("writer-done")
        await asyncio.wait_for(editing, WAIT_S * 2)
    else:
        await writer.arun("Write the profile.")
        llm.open("writer-done")
        await editor.arun("Edit the profile.")
    truth["ops"] = ops
    truth["a1"] = lost_update(ops)


async def _a2(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    ran: list[str] = []
    refused: list[str] = []
    registry: dict[str, Callable[..., Any]] = {}

    def lookup(query: str) -> str:
        """Look a fact up in the catalogue."""
        ran.append("lookup")
        return f"fact about {query}"

    def retire_tool(name: str) -> str:
        """Withdraw a tool from the shared registry."""
        ran.append("retire_tool")
        registry.pop(name, None)
        return f"retired {name}"

    registry.update(lookup=lookup, retire_tool=retire_tool)

    def recheck(function_name: str, function_call: Callable[..., Any],
                arguments: dict[str, Any]) -> Any:
        # The fix: the registry is checked again when the call is about to run, and a tool
        # that has left it is refused without being called. Agno's RetryAgentRun fails the
        # call and hands the reason to the model as the call's result.
        if function_name in registry:
            return function_call(**arguments)
        refused.append(function_name)
        raise RetryAgentRun(REFUSAL.format(name=function_name))

    more = {"tool_hooks": [recheck]} if variant == "a2_fixed" else {}

    def built(name: str, wanted: list[str]) -> Agent:
        # An agent built from the registry as it is now.
        return _agent(name, client, [registry[t] for t in wanted if t in registry], **more)

    planning = asyncio.create_task(built("planner", ["lookup"]).arun("Find the fact."))
    # The planner's run was offered `lookup` and its generation is in flight.
    while llm.requested("planner") < 1:
        await asyncio.sleep(0.005)
    await built("admin", ["lookup", "retire_tool"]).arun("Retire lookup.")
    # The admin's next run is built from the registry without `lookup`.
    await built("admin", ["lookup", "retire_tool"]).arun("Status?")
    llm.open("retired")
    await asyncio.wait_for(planning, WAIT_S * 2)
    truth["ran"] = ran
    truth["refused"] = refused
    # A2 (SPEC): a call that ran a tool no longer in the registry.
    truth["a2"] = "lookup" in ran


def _script() -> dict[str, list[Reply]]:
    return {
        "clerk": [Reply.tools(("charge", {"order": "7"}), ("notify", {"order": "7"})),
                  Reply.text("done")],
        "writer": [Reply.tools(("write_profile", {"key": "profile", "value": "w1"})),
                   Reply.text("written")],
        "editor": [Reply.tools(("read_profile", {"key": "profile"})),
                   Reply.tools(("write_profile", {"key": "profile", "value": "e1"}),
                               gate="writer-done"),
                   Reply.text("edited")],
        "planner": [Reply.tools(("lookup", {"query": "x"}), gate="retired"),
                    Reply.text("done")],
        "admin": [Reply.tools(("retire_tool", {"name": "lookup"})), Reply.text("retired"),
                  Reply.text("all good")],
    }


async def _main(variant: str, llm: ScriptedLLM, base: str, truth: dict[str, Any]) -> None:
    # One client for the run's agents, closed before the run's event loop is.
    client = AsyncOpenAI(base_url=base, api_key="none")
    try:
        if variant.startswith("a6"):
            await _a6(variant, client, truth)
        elif variant.startswith("a1"):
            await _a1(variant, llm, client, truth)
        else:
            await _a2(variant, llm, client, truth)
    finally:
        await client.close()


def run(variant: str, folder: Path) -> dict[str, Any]:
    """Runs ``variant``, writing ``folder/spans.jsonl``; returns what the run did."""
    assert variant in RUNS, variant
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spans.jsonl"
    path.write_text("")
    llm = ScriptedLLM(_script())
    base = llm.start()
    provider, instrumentor = _traced(path)
    truth: dict[str, Any] = {"run": variant}
    try:
        asyncio.run(_main(variant, llm, base, truth))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
