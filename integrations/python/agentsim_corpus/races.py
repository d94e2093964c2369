"""The three races the Google ADK and Agno corpora run, each with its fixed twin, written once:
the tools and what they record (the truth a run is checked against), the order the agents
are started in, and the script the LLM server answers with. A framework's runner supplies how
an agent is built and invoked, and how it refuses a call (``adk_runs``, ``agno_runs``).

* ``a6``: one generation plans ``charge`` and ``notify``; the framework runs them
  concurrently and ``charge`` lands after ``notify`` (A6); ``a6_fixed``: ``notify`` waits for
  ``charge``.
* ``a1``: the editor reads the profile, its next generation is held open while the writer
  writes, then it writes what it planned from the old value (A1); ``a1_fixed``: the writer
  finishes before the editor starts.
* ``a2``: the planner's generation that plans ``lookup`` is held open while the admin retires
  ``lookup`` from the shared registry (A2 if the call then runs); ``a2_fixed`` refuses the call
  at call time.

Nothing here imports a framework or a client library: the runners' venvs differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .llm_server import Reply, ScriptedLLM
from .runs import lost_update

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed", "a2", "a2_fixed")
WAIT_S = 30.0
# The call that waited lands well after the one it waited for, so the spans end in the order
# the effects landed even on a loaded machine.
SETTLE_S = 0.3
REFUSAL = "refused: {name} is no longer in the registry"


class Effects:
    """The A6 race's two effects; ``a6`` lands ``charge`` after ``notify``, ``a6_fixed`` makes
    ``notify`` wait for ``charge``. The truth is the order the calls began and landed."""

    def __init__(self, variant: str) -> None:
        self.variant = variant
        self.began: list[str] = []
        self.landed: list[str] = []

    def tools(self) -> list[Callable[..., Any]]:
        charged, notified = asyncio.Event(), asyncio.Event()
        variant, began, landed = self.variant, self.began, self.landed

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

        return [charge, notify]

    def record(self, truth: dict[str, Any]) -> None:
        truth["issue_order"] = self.began
        truth["completion_order"] = self.landed
        truth["a6"] = self.began != self.landed


class Profile:
    """The A1 race's shared profile behind ``read_profile`` / ``write_profile``; the truth is
    what the store saw, in order."""

    def __init__(self) -> None:
        self.store: dict[str, str] = {"profile": "v0"}
        self.ops: list[tuple[str, str, str, str]] = []

    def tools(self, agent: str) -> list[Callable[..., Any]]:
        # One pair per agent, with the same names: the store records who called it.
        store, ops = self.store, self.ops

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

    async def race(self, variant: str, llm: ScriptedLLM,
                   write: Callable[[], Awaitable[Any]], edit: Callable[[], Awaitable[Any]]) -> None:
        """Runs the writer (``write``) and the editor (``edit``) as ``variant`` orders them."""
        if variant == "a1":
            editing = asyncio.create_task(edit())
            # The editor has read and its second generation is in flight.
            while llm.requested("editor") < 2:
                await asyncio.sleep(0.005)
            await write()
            llm.open("writer-done")
            await asyncio.wait_for(editing, WAIT_S * 2)
        else:
            await write()
            llm.open("writer-done")
            await edit()

    def record(self, truth: dict[str, Any]) -> None:
        truth["ops"] = self.ops
        truth["a1"] = lost_update(self.ops)


class Retirement:
    """The A2 race's tools over a shared registry (a dict of the framework's tools, by name):
    ``lookup``, and ``retire_tool`` that removes a tool from it. The truth is which calls ran
    and which were refused."""

    def __init__(self, registry: dict[str, Any]) -> None:
        self.registry = registry
        self.ran: list[str] = []
        self.refused: list[str] = []

    def tools(self) -> tuple[Callable[..., Any], Callable[..., Any]]:
        ran, registry = self.ran, self.registry

        def lookup(query: str) -> str:
            """Look a fact up in the catalogue."""
            ran.append("lookup")
            return f"fact about {query}"

        def retire_tool(name: str) -> str:
            """Withdraw a tool from the shared registry."""
            ran.append("retire_tool")
            registry.pop(name, None)
            return f"retired {name}"

        return lookup, retire_tool

    def refuse(self, name: str) -> str:
        """Notes a call refused at call time; the reason the model is told."""
        self.refused.append(name)
        return REFUSAL.format(name=name)

    async def planned_then_retired(self, llm: ScriptedLLM, plan: Awaitable[Any],
                                   retire: Callable[[], Awaitable[Any]]) -> None:
        """Starts the planner (``plan``), and once its generation is in flight retires
        ``lookup`` (``retire``), then lets the planner's call go ahead."""
        planning = asyncio.create_task(plan)
        # The planner's step was offered `lookup` and its generation is in flight.
        while llm.requested("planner") < 1:
            await asyncio.sleep(0.005)
        await retire()
        llm.open("retired")
        await asyncio.wait_for(planning, WAIT_S * 2)

    def record(self, truth: dict[str, Any]) -> None:
        truth["ran"] = self.ran
        truth["refused"] = self.refused
        # A2 (SPEC): a call that ran a tool no longer in the registry.
        truth["a2"] = "lookup" in self.ran


def script(admin: list[Reply]) -> dict[str, list[Reply]]:
    """The LLM server's script, with the admin's replies as the framework needs them."""
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
        "admin": admin,
    }


Race = Callable[[str, ScriptedLLM, Any, dict[str, Any]], Awaitable[None]]


async def run_race(variant: str, llm: ScriptedLLM, client: Any, truth: dict[str, Any],
                   races: dict[str, Race]) -> None:
    """Runs the race ``variant`` belongs to (``races`` by ``a6``, ``a1``, ``a2``) with the
    run's one client, closed before the run's event loop is."""
    try:
        await races[variant.split("_")[0]](variant, llm, client, truth)
    finally:
        await client.close()
