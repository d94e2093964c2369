"""MCP runs: a planner agent whose generation is in flight while another client withdraws a
tool from the shared server, and what the planner does with ``notifications/tools/list_changed``.

Every run writes ``mcp.jsonl`` (the JSON-RPC log of both clients, ``mcp_client``'s format) into
its folder and returns what happened (``truth``), which the test compares with agentsim's answer:

* ``ignore``: the planner's generation plans ``lookup`` from the list it had; ``lookup`` is
  withdrawn while the generation is in flight; the planner ignores ``list_changed`` and calls it
  (the server answers with an error): A2.
* ``refresh``: the same, but the planner re-lists before calling and drops the call: clean.
* ``ignore_unaffected``: ``search`` is withdrawn instead; the planner calls ``lookup`` from its
  invalidated list, which is a stale-list call but not A2 (its tool is still there): clean,
  with one stale-list call reported.
* ``parallel``: the planner's generation plans two calls, sent together; the server answers the
  second first: A6. ``parallel_fixed`` sends them one after the other: clean.

The generation is a real chat-completions request (the ``openai`` client) to the scripted server,
offered the tools the planner listed, and held open by a gate until the withdrawal is done.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from .llm_server import Reply, ScriptedLLM
from .mcp_client import JsonlLog, LoggedClient
from .mcp_server import RegistryServer

RUNS = ("ignore", "refresh", "ignore_unaffected", "parallel", "parallel_fixed")


async def _registry_run(variant: str, llm: ScriptedLLM, base: str, url: str, log: JsonlLog,
                        truth: dict[str, Any]) -> None:
    retire = "search" if variant == "ignore_unaffected" else "lookup"
    model = AsyncOpenAI(base_url=base, api_key="none")
    async with LoggedClient("planner", url, log, refresh=variant == "refresh") as planner, \
            LoggedClient("admin", url, log, refresh=True) as admin:
        await planner.list_tools()
        await admin.list_tools()
        planned = asyncio.create_task(model.chat.completions.create(
            model="planner", messages=[{"role": "user", "content": "look k up"}],
            tools=planner.openai_tools()))
        await asyncio.to_thread(llm.wait_requested, "planner")
        await admin.call("retire_tool", {"name": retire})
        await asyncio.wait_for(planner.list_changed.wait(), 20)
        llm.open("retired")
        reply = await planned
        calls = reply.choices[0].message.tool_calls or []
        truth["planned"] = [c.function.name for c in calls]
        for c in calls:
            result = await planner.call(c.function.name, json.loads(c.function.arguments))
            truth.setdefault("called", []).append(
                None if result is None else {"tool": c.function.name, "error": result.isError})
        # The planner's next turn lists the tools again; so does the admin's.
        await planner.list_tools()
        await admin.list_tools()
    truth["a2"] = variant == "ignore"
    truth["stale_calls"] = 0 if variant == "refresh" else 1


async def _parallel_run(variant: str, llm: ScriptedLLM, base: str, url: str, log: JsonlLog,
                        truth: dict[str, Any]) -> None:
    model = AsyncOpenAI(base_url=base, api_key="none")
    async with LoggedClient("planner", url, log, refresh=True) as planner:
        await planner.list_tools()
        reply = await model.chat.completions.create(
            model="planner", messages=[{"role": "user", "content": "look both up"}],
            tools=planner.openai_tools())
        calls = reply.choices[0].message.tool_calls or []
        truth["planned"] = [c.function.name for c in calls]
        answered: list[str] = []

        async def call(c: Any) -> None:
            await planner.call(c.function.name, json.loads(c.function.arguments))
            answered.append(c.function.name)

        if variant == "parallel":
            # Sent together; the server holds lookup's answer until search has answered.
            await asyncio.gather(*(call(c) for c in calls))
        else:
            for c in calls:
                await call(c)
    # What happened, as the client saw it (not what the variant intended): the answers came
    # back in another order than the calls went out.
    truth["answered"] = answered
    truth["a6"] = answered != truth["planned"]


def run(variant: str, folder: Path) -> dict[str, Any]:
    """Runs ``variant`` and writes ``folder/mcp.jsonl``; returns what the run did."""
    assert variant in RUNS, variant
    folder.mkdir(parents=True, exist_ok=True)
    log = JsonlLog(folder / "mcp.jsonl")
    truth: dict[str, Any] = {"run": variant}
    if variant.startswith("parallel"):
        script = {"planner": [Reply.tools(("lookup", {"key": "a"}), ("search", {"query": "b"}))]}
    else:
        script = {"planner": [Reply.tools(("lookup", {"key": "k"}), gate="retired")]}
    llm = ScriptedLLM(script)
    base = llm.start()
    try:
        with RegistryServer(reorder=variant == "parallel") as server:
            if variant.startswith("parallel"):
                asyncio.run(_parallel_run(variant, llm, base, server.url, log, truth))
            else:
                asyncio.run(_registry_run(variant, llm, base, server.url, log, truth))
    finally:
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
