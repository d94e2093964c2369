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
from .races import RUNS, Effects, Profile, Retirement, run_race, script  # noqa: E402


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


async def _a6(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    effects = Effects(variant)
    await _agent("clerk", client, effects.tools()).arun("Confirm order 7.")
    effects.record(truth)


async def _a1(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    profile = Profile()
    writer = _agent("writer", client, profile.tools("writer"))
    editor = _agent("editor", client, profile.tools("editor"))
    await profile.race(variant, llm, lambda: writer.arun("Write the profile."),
                       lambda: editor.arun("Edit the profile."))
    profile.record(truth)


async def _a2(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    registry: dict[str, Callable[..., Any]] = {}
    retirement = Retirement(registry)
    lookup, retire_tool = retirement.tools()
    registry.update(lookup=lookup, retire_tool=retire_tool)

    def recheck(function_name: str, function_call: Callable[..., Any],
                arguments: dict[str, Any]) -> Any:
        # The fix: the registry is checked again when the call is about to run, and a tool
        # that has left it is refused without being called. Agno's RetryAgentRun fails the
        # call and hands the reason to the model as the call's result.
        if function_name in registry:
            return function_call(**arguments)
        raise RetryAgentRun(retirement.refuse(function_name))

    more = {"tool_hooks": [recheck]} if variant == "a2_fixed" else {}

    def built(name: str, wanted: list[str]) -> Agent:
        # An agent built from the registry as it is now.
        return _agent(name, client, [registry[t] for t in wanted if t in registry], **more)

    async def retire() -> None:
        await built("admin", ["lookup", "retire_tool"]).arun("Retire lookup.")
        # The admin's next run is built from the registry without `lookup`.
        await built("admin", ["lookup", "retire_tool"]).arun("Status?")

    # The planner's run is offered `lookup`; its generation is in flight while the admin acts.
    await retirement.planned_then_retired(llm, built("planner", ["lookup"]).arun("Find the fact."),
                                          retire)
    retirement.record(truth)


def _script() -> dict[str, list[Reply]]:
    return script(admin=[Reply.tools(("retire_tool", {"name": "lookup"})), Reply.text("retired"),
                         Reply.text("all good")])


async def _main(variant: str, llm: ScriptedLLM, base: str, truth: dict[str, Any]) -> None:
    races = {"a6": _a6, "a1": _a1, "a2": _a2}
    await run_race(variant, llm, AsyncOpenAI(base_url=base, api_key="none"), truth, races)


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
