"""Multi-agent runs of Microsoft Agent Framework (``agent-framework-core``) with known
anomalies and their fixed twins, traced by the framework's own instrumentation.

Every agent is an ``agent_framework.Agent`` over ``OpenAIChatCompletionClient`` (the real
``openai`` client) pointed at the scripted server; the server's gates put one agent's
generation in flight exactly while another acts. Shared memory is a dict behind two ordinary
tools, ``read_profile`` and ``write_profile`` (Agent Framework emits no memory spans), read
with the mapping file of :mod:`agentsim_corpus.runs`. Agents are built from a shared tool
registry at the start of each invocation, so a retirement shows in later ``invoke_agent``
spans' ``gen_ai.tool.definitions`` only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_framework import Agent, tool
from agent_framework.observability import enable_instrumentation
from agent_framework.openai import OpenAIChatCompletionClient

from .llm_server import Reply, ScriptedLLM
from .otel_export import capture, install
from .runs import Run, write_mapping
from .tool_world import (effects_script, profile_and_registry_tools, profile_script,
                         registry_script)

FRAMEWORK = "agent-framework-core"


def _setup() -> None:
    install()
    # Tool arguments and results are "sensitive" in Agent Framework: off by default.
    enable_instrumentation(enable_sensitive_data=True)


class World:
    """The application state the tools act on: a profile store and a tool registry."""

    def __init__(self) -> None:
        self.profile: dict[str, str] = {"tone": "v0"}
        self.log: list[str] = []
        self.registry: dict = {}
        self.events: dict[str, asyncio.Event] = {}
        w = self

        @tool
        async def charge(order: str) -> str:
            """Charge the customer for an order."""
            await w.wait("charge")
            w.log.append("charge")
            w.signal("charged")
            return "charged"

        @tool
        async def notify(order: str) -> str:
            """Tell the customer the order is confirmed."""
            await w.wait("notify")
            w.log.append("notify")
            w.signal("notified")
            return "notified"

        for f in profile_and_registry_tools(self):
            self.registry[f.__name__] = tool(f)
        self.registry.update(charge=charge, notify=notify)
        # tool → the event it waits for before acting (set by a run).
        self.waits: dict[str, str] = {}

    def event(self, name: str) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())

    def signal(self, name: str) -> None:
        self.event(name).set()

    async def wait(self, tool_name: str) -> None:
        if tool_name in self.waits:
            await asyncio.wait_for(self.event(self.waits[tool_name]).wait(), 20)
            # The call that waited lands well after the one it waited for, so the spans end
            # in the order the effects landed even on a loaded machine.
            await asyncio.sleep(0.3)

    def agent(self, base_url: str, name: str, tools: list[str], key: str | None = None) -> Agent:
        """An agent built from the registry as it is now; ``key`` picks its script."""
        client = OpenAIChatCompletionClient(base_url=base_url, api_key="none", model=key or name)
        chosen = [self.registry[t] for t in tools if t in self.registry]
        return Agent(client=client, name=name, instructions=f"You are {name}.", tools=chosen)


async def _in_flight(server: ScriptedLLM, key: str, n: int) -> None:
    await asyncio.to_thread(server.wait_requested, key, n)


async def _memory(base: str, server: ScriptedLLM, world: World, lost: bool) -> None:
    tools = ["read_profile", "write_profile"]
    alice = world.agent(base, "alice", tools)
    bob = world.agent(base, "bob", tools)
    if lost:
        # Alice read the profile and is generating her update while Bob writes his.
        task = asyncio.create_task(alice.run("Update the tone."))
        await _in_flight(server, "alice", 2)
        await bob.run("Update the tone.")
        server.open("bob-done")
        await task
    else:
        await bob.run("Update the tone.")
        await alice.run("Update the tone.")


async def _registry(base: str, server: ScriptedLLM, world: World, retired: bool) -> None:
    planner = world.agent(base, "planner", ["lookup"])
    if retired:
        task = asyncio.create_task(planner.run("Find the fact."))
        await _in_flight(server, "planner", 1)
        await world.agent(base, "admin", ["lookup", "retire_tool"]).run("Retire lookup.")
        # The admin's next invocation is built from the registry without `lookup`.
        await world.agent(base, "admin", ["lookup", "retire_tool"]).run("Status?")
        server.open("retired")
        await task
    else:
        await planner.run("Find the fact.")
        await world.agent(base, "admin", ["lookup", "retire_tool"]).run("Retire lookup.")
        await world.agent(base, "admin", ["lookup", "retire_tool"]).run("Status?")


async def _effects(base: str, world: World, reordered: bool) -> None:
    # charge is issued first; in the anomalous run it lands after notify.
    world.waits = {"charge": "notified"} if reordered else {"notify": "charged"}
    await world.agent(base, "clerk", ["charge", "notify"]).run("Confirm order 7.")


async def _retry(base: str, server: ScriptedLLM, world: World, read_discarded: bool) -> None:
    tools = ["read_profile", "write_profile"]
    # The drafter's first attempt writes, then fails (its next generation errors); the
    # workflow retries it. The reviewer reads the profile either before the retry (it reads
    # the failed attempt's write) or after it.
    try:
        await world.agent(base, "drafter", tools).run("Draft the tone.")
    except Exception:  # noqa: BLE001 - the failed attempt is the point
        pass
    retry = world.agent(base, "drafter", tools, key="drafter-retry")
    if read_discarded:
        await world.agent(base, "reviewer", tools).run("Review the tone.")
        await retry.run("Draft the tone.")
    else:
        await retry.run("Draft the tone.")
        await world.agent(base, "reviewer", tools).run("Review the tone.")


def _retry_script() -> dict[str, list[Reply]]:
    return {
        # One reply only: the attempt's next request exhausts the script, the server answers
        # 400, and the attempt fails.
        "drafter": [Reply.tools(("write_profile", {"key": "tone", "value": "draft-1"}))],
        "drafter-retry": [
            Reply.tools(("write_profile", {"key": "tone", "value": "draft-2"})),
            Reply.text("done"),
        ],
        "reviewer": [
            Reply.tools(("read_profile", {"key": "tone"})),
            Reply.tools(("write_profile", {"key": "review", "value": "approved"})),
            Reply.text("done"),
        ],
    }


def _run(trace: Path, script: dict[str, list[Reply]], body, gate_timeout_s: float = 30.0):
    _setup()
    server = ScriptedLLM(script, gate_timeout_s=gate_timeout_s)
    base = server.start()
    world = World()
    try:
        with capture(trace):
            asyncio.run(body(base, server, world))
    finally:
        server.stop()
    return server, world


def generate(out: Path) -> list[Run]:
    """Runs every scenario, writes its trace under ``out``, returns the runs."""
    mapping = write_mapping(out)
    runs: list[Run] = []
    for lost in (True, False):
        name = "a1_lost_update" if lost else "a1_fixed"
        trace = out / f"af_{name}.jsonl"
        _run(trace, profile_script(lost), lambda b, s, w, lost=lost: _memory(b, s, w, lost))
        expect = {"A1": "violated" if lost else "holds", "A2": "cannot tell",
                  "A3": "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "memory behind read_profile/write_profile tools"))
    for retired in (True, False):
        name = "a2_retired" if retired else "a2_fixed"
        trace = out / f"af_{name}.jsonl"
        _run(trace, registry_script(retired), lambda b, s, w, r=retired: _registry(b, s, w, r))
        expect = {"A1": "cannot tell", "A2": "violated" if retired else "cannot tell",
                  "A3": "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "lookup retired through the admin's tool while the planner generated"))
    for reordered in (True, False):
        name = "a6_out_of_order" if reordered else "a6_fixed"
        trace = out / f"af_{name}.jsonl"
        _run(trace, effects_script(), lambda b, s, w, r=reordered: _effects(b, w, r))
        expect = {"A1": "cannot tell", "A2": "cannot tell", "A3": "cannot tell",
                  "A6": "violated" if reordered else "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "two parallel tool calls; charge lands after notify"))
    for discarded in (True, False):
        name = "a3_failed_attempt" if discarded else "a3_fixed"
        trace = out / f"af_{name}.jsonl"
        _run(trace, _retry_script(), lambda b, s, w, d=discarded: _retry(b, s, w, d))
        expect = {"A1": "holds", "A2": "cannot tell",
                  "A3": "violated" if discarded else "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "an attempt that failed after writing; the reviewer reads before or "
                        "after the retry"))
    return runs
