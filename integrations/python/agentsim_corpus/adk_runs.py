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
from .runs import lost_update  # noqa: E402

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed", "a2", "a2_fixed")
WAIT_S = 30.0
# The call that waited lands well after the one it waited for, so the spans end in the order
# the effects landed even on a loaded machine.
SETTLE_S = 0.3
REFUSAL = "refused: {name} is no longer in the registry"


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

    await _invoke(_agent("clerk", client, [charge, notify]), "Confirm order 7.")
    truth["issue_order"] = began
    truth["completion_order"] = landed
    truth["a6"] = began != landed


async def _a1(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    store: dict[str, str] = {"profile": "v0"}
    ops: list[tuple[str, str, str, str]] = []

    def profile_tools(agent: str) -> list[Any]:
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
        editing = asyncio.create_task(_invoke(editor, "Edit the profile."))
        # The editor has read and its second generation is in flight.
        while llm.requested("editor") < 2:
            await asyncio.sleep(0.005)
        await _invoke(writer, "Write the profile.")
        llm.open("writer-done")
        await asyncio.wait_for(editing, WAIT_S * 2)
    else:
        await _invoke(writer, "Write the profile.")
        llm.open("writer-done")
        await _invoke(editor, "Edit the profile.")
    truth["ops"] = ops
    truth["a1"] = lost_update(ops)


async def _a2(variant: str, llm: ScriptedLLM, client: AsyncOpenAI, truth: dict[str, Any]) -> None:
    ran: list[str] = []
    refused: list[str] = []
    registry = Registry({})

    def lookup(query: str) -> str:
        """Look a fact up in the catalogue."""
        ran.append("lookup")
        return f"fact about {query}"

    def retire_tool(name: str) -> str:
        """Withdraw a tool from the shared registry."""
        ran.append("retire_tool")
        registry.tools.pop(name, None)
        return f"retired {name}"

    registry.tools.update(lookup=FunctionTool(lookup), retire_tool=FunctionTool(retire_tool))

    def recheck(tool: BaseTool, args: dict[str, Any], tool_context: Any) -> dict | None:
        # The fix: the registry is checked again when the call is about to run, and a tool
        # that has left it is refused; ADK skips the tool and answers with this instead.
        if tool.name in registry.tools:
            return None
        refused.append(tool.name)
        return {"error": REFUSAL.format(name=tool.name)}

    more = {"before_tool_callback": recheck} if variant == "a2_fixed" else {}
    planner = _agent("planner", client, [registry], **more)
    admin = _agent("admin", client, [registry], **more)
    planning = asyncio.create_task(_invoke(planner, "Find the fact."))
    # The planner's step was offered `lookup` and its generation is in flight.
    while llm.requested("planner") < 1:
        await asyncio.sleep(0.005)
    await _invoke(admin, "Retire lookup.")
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
        # The admin's second step is offered the registry without `lookup`.
        "admin": [Reply.tools(("retire_tool", {"name": "lookup"})), Reply.text("retired")],
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
