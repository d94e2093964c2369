"""Google ADK runs (``google-adk``), traced by ADK's own OpenTelemetry instrumentation (the
``gcp.vertex.agent`` tracer: ``invoke_workflow``, ``invoke_agent``, ``generate_content`` and
``execute_tool`` spans in the GenAI conventions) and written as OTLP JSON by the official file
exporter through the corpus's global provider (:mod:`agentsim_corpus.otel_export`).

Each agent is an ``LlmAgent`` over ADK's own OpenAI provider
(``google.adk.integrations.openai.OpenAILlm``, the real ``openai`` client) pointed at the
scripted server, with one ``InMemoryRunner`` per agent. Tool arguments and results are content:
ADK writes them (``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``) only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` routes content to spans (``SPAN_ONLY``,
set here before ADK is imported). Each ``generate_content`` span carries the tools the step was
offered (``gen_ai.tool.definitions``). Runs (the file is ``folder/spans.jsonl``; ``run``
returns what happened):

* ``a6``: one generation plans ``charge`` and ``notify``; ADK runs the calls of one generation
  concurrently, and ``charge`` lands after ``notify``: A6. ``a6_fixed``: ``notify`` waits for
  ``charge``: clean. The truth is the order the calls began and the order they landed.
* ``a1``: ``writer`` and ``editor`` share a profile behind ``read_profile`` / ``write_profile``;
  the editor reads, its next generation is held open while the writer writes, then it writes
  what it planned from the old value (A1). ``a1_fixed``: the writer finishes before the editor
  starts. The truth is what the store saw, in order.
* ``a2``: ``planner`` and ``admin`` take their tools from one shared registry, an ADK toolset
  listed again at every step (``disable_invocation_cache``); the planner's generation that plans
  ``lookup`` is held open while the admin retires ``lookup`` (its next step is offered the
  registry without it), and then ADK runs the call from the tools the step started with: a
  phantom (A2). ``a2_fixed``: the same race, with the fix a user of ADK makes: a
  ``before_tool_callback`` re-checks the registry when the call is about to run and refuses a
  tool no longer in it (ADK then skips the tool and returns the refusal as its response). The
  truth is which calls ran and which were refused.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

# Before ADK is imported: tool arguments and results go on the spans.
os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.integrations.openai import OpenAILlm  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools import FunctionTool  # noqa: E402
from google.adk.tools.base_tool import BaseTool  # noqa: E402
from google.adk.tools.base_toolset import BaseToolset  # noqa: E402
from google.genai import types  # noqa: E402

from openai import AsyncOpenAI  # noqa: E402

from .llm_server import Reply, ScriptedLLM  # noqa: E402
from .otel_export import capture, install  # noqa: E402
from .races import RUNS, Effects, Profile, Retirement, run_race, script  # noqa: E402


class Registry(BaseToolset):
    """The shared tool registry: every step of every agent built on it is offered the tools in
    it at the time the step starts (listed again per request, not once per invocation)."""

    def __init__(self, tools: dict[str, BaseTool]) -> None:
        super().__init__(disable_invocation_cache=True)
        self.tools = tools

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        return list(self.tools.values())


async def _invoke(agent: LlmAgent, text: str) -> None:
    runner = InMemoryRunner(agent=agent, app_name="corpus")
    session = await runner.session_service.create_session(app_name="corpus", user_id="user")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id="user", session_id=session.id, new_message=message):
        pass


def _agent(name: str, client: AsyncOpenAI, tools: list[Any], **more: Any) -> LlmAgent:
    # The agent's name is the script's key: the model the server is asked for.
    llm = OpenAILlm(model=name, client=client)
    return LlmAgent(name=name, model=llm, instruction=f"You are the {name}.", tools=tools, **more)


async def _a6(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    effects = Effects(variant)
    await _invoke(_agent("clerk", client, effects.tools()), "Confirm order 7.")
    effects.record(truth)


async def _a1(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    profile = Profile()
    writer = _agent("writer", client, profile.tools("writer"))
    editor = _agent("editor", client, profile.tools("editor"))
    await profile.race(variant, llm, lambda: _invoke(writer, "Write the profile."),
                       lambda: _invoke(editor, "Edit the profile."))
    profile.record(truth)


async def _a2(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    registry = Registry({})
    retirement = Retirement(registry.tools)
    lookup, retire_tool = retirement.tools()
    registry.tools.update(lookup=FunctionTool(lookup), retire_tool=FunctionTool(retire_tool))

    def recheck(tool: BaseTool, args: dict[str, Any], tool_context: Any) -> dict | None:
        # The fix: the registry is checked again when the call is about to run, and a tool
        # that has left it is refused; ADK skips the tool and answers with this instead.
        if tool.name in registry.tools:
            return None
        return {"error": retirement.refuse(tool.name)}

    more = {"before_tool_callback": recheck} if variant == "a2_fixed" else {}
    planner = _agent("planner", client, [registry], **more)
    admin = _agent("admin", client, [registry], **more)
    await retirement.planned_then_retired(llm, _invoke(planner, "Find the fact."),
                                          lambda: _invoke(admin, "Retire lookup."))
    retirement.record(truth)


def _script() -> dict[str, list[Reply]]:
    # The admin's second step is offered the registry without `lookup`.
    return script(admin=[Reply.tools(("retire_tool", {"name": "lookup"})), Reply.text("retired")])


async def _main(variant: str, llm: ScriptedLLM, base: str, truth: dict[str, Any]) -> None:
    races = {"a6": _a6, "a1": _a1, "a2": _a2}
    await run_race(variant, llm, AsyncOpenAI(base_url=base, api_key="none"), truth, races)


def run(variant: str, folder: Path) -> dict[str, Any]:
    """Runs ``variant``, writing ``folder/spans.jsonl``; returns what the run did."""
    assert variant in RUNS, variant
    install()
    folder.mkdir(parents=True, exist_ok=True)
    llm = ScriptedLLM(_script())
    base = llm.start()
    truth: dict[str, Any] = {"run": variant}
    try:
        with capture(folder / "spans.jsonl"):
            asyncio.run(_main(variant, llm, base, truth))
    finally:
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
