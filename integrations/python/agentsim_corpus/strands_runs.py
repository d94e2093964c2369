"""Multi-agent runs of Strands Agents (``strands-agents``) with known anomalies and their fixed
twins, traced by Strands' own telemetry (``strands.telemetry``).

Every agent is a ``strands.Agent`` over ``strands.models.openai.OpenAIModel`` (the real
``openai`` client) pointed at the scripted server. Memory is shared two ways: Strands' own
``MemoryManager`` over one ``TestMemoryStore`` (its ``search_memory`` / ``add_memory`` tools,
traced as ``memory.search`` / ``memory.add`` spans that name stores, not records, with
contents in span events), and a profile dict behind ``read_profile`` / ``write_profile``
tools, read with the mapping file. Strands records tool names only (``gen_ai.agent.tools``) on
``invoke_agent``.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from strands import Agent, tool
from strands.memory import MemoryManager
from strands.models.openai import OpenAIModel
from strands.vended_memory_stores.test_memory_store import TestMemoryStore

from .llm_server import Reply, ScriptedLLM
from .otel_export import capture, install
from .runs import Run, write_mapping
from .tool_world import (effects_script, profile_and_registry_tools, profile_script,
                         registry_script)

FRAMEWORK = "strands-agents"


class World:
    """The application state: a profile dict, a memory store, a tool registry."""

    def __init__(self, out: Path) -> None:
        self.profile: dict[str, str] = {"tone": "v0"}
        self.store = TestMemoryStore(name="notes", config={"path": str(out / "notes.json")})
        self.events: dict[str, threading.Event] = {}
        self.waits: dict[str, str] = {}
        w = self

        @tool
        def charge(order: str) -> str:
            """Charge the customer for an order."""
            w.wait("charge")
            w.event("charged").set()
            w.settle("charge")
            return "charged"

        @tool
        def notify(order: str) -> str:
            """Tell the customer the order is confirmed."""
            w.wait("notify")
            w.event("notified").set()
            w.settle("notify")
            return "notified"

        self.registry = {f.__name__: tool(f) for f in profile_and_registry_tools(self)}
        self.registry.update(charge=charge, notify=notify)

    def event(self, name: str) -> threading.Event:
        return self.events.setdefault(name, threading.Event())

    def wait(self, tool_name: str) -> None:
        if tool_name in self.waits:
            assert self.event(self.waits[tool_name]).wait(20), f"{tool_name} waited too long"

    def settle(self, tool_name: str) -> None:
        """The call that waited returns well after the one it waited for, so the spans end
        in the order the effects landed even on a loaded machine (the framework's own work
        after a tool returns takes milliseconds)."""
        if tool_name in self.waits:
            time.sleep(0.3)

    def agent(self, base_url: str, name: str, tools: list[str], memory: bool = False) -> Agent:
        """An agent built from the registry as it is now."""
        model = OpenAIModel(client_args={"base_url": base_url, "api_key": "none"}, model_id=name)
        chosen = [self.registry[t] for t in tools if t in self.registry]
        plugins = []
        if memory:
            plugins.append(MemoryManager(stores=[self.store], add_tool_config=True, injection=False))
        return Agent(name=name, model=model, tools=chosen, plugins=plugins, callback_handler=None)


def _in_background(fn) -> threading.Thread:
    t = threading.Thread(target=fn)
    t.start()
    return t


def _run(trace: Path, out: Path, script: dict[str, list[Reply]], body) -> None:
    install()
    server = ScriptedLLM(script)
    base = server.start()
    world = World(out)
    try:
        with capture(trace):
            body(base, server, world)
    finally:
        server.stop()


def _two_writers(base, server, world, lost: bool, tools: list[str], memory: bool) -> None:
    alice = world.agent(base, "alice", tools, memory)
    bob = world.agent(base, "bob", tools, memory)
    if lost:
        t = _in_background(lambda: alice("Update the notes."))
        server.wait_requested("alice", 2)
        bob("Update the notes.")
        server.open("bob-done")
        t.join(60)
    else:
        bob("Update the notes.")
        alice("Update the notes.")


def _memory_script(lost: bool) -> dict[str, list[Reply]]:
    gate = "bob-done" if lost else None
    return {
        "alice": [Reply.tools(("search_memory", {"query": "tone"})),
                  Reply.tools(("add_memory", {"entries": ["tone: formal"]}), gate=gate),
                  Reply.text("done")],
        "bob": [Reply.tools(("search_memory", {"query": "tone"})),
                Reply.tools(("add_memory", {"entries": ["tone: casual"]})),
                Reply.text("done")],
    }


def _registry(base, server, world, retired: bool) -> None:
    planner = world.agent(base, "planner", ["lookup"])
    admin_tools = ["lookup", "retire_tool"]
    if retired:
        t = _in_background(lambda: planner("Find the fact."))
        server.wait_requested("planner", 1)
        world.agent(base, "admin", admin_tools)("Retire lookup.")
        world.agent(base, "admin", admin_tools)("Status?")
        server.open("retired")
        t.join(60)
    else:
        planner("Find the fact.")
        world.agent(base, "admin", admin_tools)("Retire lookup.")
        world.agent(base, "admin", admin_tools)("Status?")


def _effects(base, world, reordered: bool) -> None:
    world.waits = {"charge": "notified"} if reordered else {"notify": "charged"}
    world.agent(base, "clerk", ["charge", "notify"])("Confirm order 7.")


def generate(out: Path) -> list[Run]:
    """Runs every scenario, writes its trace under ``out``, returns the runs."""
    mapping = write_mapping(out)
    runs: list[Run] = []
    for lost in (True, False):
        name = "a1_memory_lost_update" if lost else "a1_memory_fixed"
        trace = out / f"strands_{name}.jsonl"
        _run(trace, out, _memory_script(lost),
             lambda b, s, w, lost=lost: _two_writers(b, s, w, lost, [], True))
        # Stores, not records: a witness may be a false alarm (upper bound), none holds.
        expect = {"A1": "cannot tell" if lost else "holds", "A2": "cannot tell",
                  "A3": "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, None,
                        "memory.search then memory.add on one store, another add between"))
    for lost in (True, False):
        name = "a1_tools_lost_update" if lost else "a1_tools_fixed"
        trace = out / f"strands_{name}.jsonl"
        _run(trace, out, profile_script(lost),
             lambda b, s, w, lost=lost: _two_writers(
                 b, s, w, lost, ["read_profile", "write_profile"], False))
        expect = {"A1": "violated" if lost else "holds", "A2": "cannot tell",
                  "A3": "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "memory behind read_profile/write_profile tools"))
    for retired in (True, False):
        name = "a2_retired" if retired else "a2_fixed"
        trace = out / f"strands_{name}.jsonl"
        _run(trace, out, registry_script(retired), lambda b, s, w, r=retired: _registry(b, s, w, r))
        expect = {"A1": "cannot tell", "A2": "violated" if retired else "cannot tell",
                  "A3": "cannot tell", "A6": "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "lookup retired through the admin's tool while the planner generated"))
    for reordered in (True, False):
        name = "a6_out_of_order" if reordered else "a6_fixed"
        trace = out / f"strands_{name}.jsonl"
        _run(trace, out, effects_script(), lambda b, s, w, r=reordered: _effects(b, w, r))
        expect = {"A1": "cannot tell", "A2": "cannot tell", "A3": "cannot tell",
                  "A6": "violated" if reordered else "holds"}
        runs.append(Run(FRAMEWORK, name, trace, expect, mapping,
                        "two concurrent tool calls; charge lands after notify"))
    return runs
