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
  memory span kind and these are ordinary TOOL spans, so agentsim must say A1 *cannot tell*
  on both: the truth is kept here to show what it could not see.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agents import (Agent, Runner, function_tool, set_default_openai_api,
                    set_default_openai_client, set_tracing_disabled, trace)
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from opentelemetry.exporter.otlp.json.file import FileSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from .llm_server import Reply, ScriptedLLM

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed")


def _traced(path: Path) -> tuple[TracerProvider, OpenAIAgentsInstrumentor]:
    provider = TracerProvider(resource=Resource.create({"service.name": "openai-agents-corpus"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    return provider, instrumentor


async def _a6(variant: str, truth: dict[str, Any]) -> None:
    fast_done = asyncio.Event()
    slow_done = asyncio.Event()
    order: list[str] = []

    @function_tool
    async def slow(item: str) -> str:
        """Slow tool."""
        if variant == "a6":
            await fast_done.wait()
        order.append("slow")
        slow_done.set()
        return f"slow {item}"

    @function_tool
    async def fast(item: str) -> str:
        """Fast tool."""
        if variant == "a6_fixed":
            await slow_done.wait()
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
    ops: list[tuple[str, str, str]] = []

    @function_tool
    def read_profile(key: str) -> str:
        """Reads a profile field."""
        ops.append(("read", key, store[key]))
        return store[key]

    @function_tool
    def write_profile(key: str, value: str) -> str:
        """Writes a profile field."""
        ops.append(("write", key, value))
        store[key] = value
        return "ok"

    tools = [read_profile, write_profile]
    writer = Agent(name="writer", instructions="writer", model="writer", tools=tools)
    editor = Agent(name="editor", instructions="editor", model="editor", tools=tools)
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
    truth["a1"] = variant == "a1"


def run(variant: str, folder: Path) -> dict[str, Any]:
    """Runs ``variant``, writing ``folder/spans.jsonl``; returns what the run did."""
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
    }
    llm = ScriptedLLM(script)
    base = llm.start()
    provider, instrumentor = _traced(path)
    truth: dict[str, Any] = {"run": variant}
    try:
        set_tracing_disabled(False)
        set_default_openai_client(AsyncOpenAI(base_url=base, api_key="none"), use_for_tracing=False)
        set_default_openai_api("chat_completions")
        if variant.startswith("a6"):
            asyncio.run(_a6(variant, truth))
        else:
            asyncio.run(_a1(variant, llm, truth))
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
