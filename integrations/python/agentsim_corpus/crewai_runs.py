"""CrewAI runs, traced by OpenInference's CrewAI instrumentor and written as OTLP JSON by the
official file exporter (``opentelemetry-exporter-otlp-json-file``, one ``TracesData`` per line).

Each agent's ``LLM`` is CrewAI's native OpenAI provider (``LLM(model="openai/<key>",
base_url=...)``: the ``openai`` client, no LiteLLM) pointed at the scripted server, so each
agent's generations are the test's script and a gate holds a generation open while another
agent acts. CrewAI's own telemetry and trace upload are switched off by its environment
variables (``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_DISABLE_TRACKING``,
``CREWAI_TRACING_ENABLED=false``); ``OTEL_SDK_DISABLED`` is not used, since it would also turn
the corpus's own tracer provider into a no-op. Nothing leaves 127.0.0.1.

The instrumentor runs in its event-listener mode (``use_event_listener=True``): besides the
crew (``CHAIN``), task (``AGENT``, ``graph.node.id`` = the agent's role) and tool (``TOOL``)
spans of its default mode, it writes one ``LLM`` span per generation, so a step is a generation
and the tool calls after it; ``run(..., listener=False)`` traces with the default mode. Runs (the file is ``folder/spans.jsonl``; ``run`` returns what
happened):

* ``a6``: one generation plans ``slow`` and ``fast``; CrewAI runs native tool calls of one
  generation on a thread pool, and ``slow`` finishes after ``fast``: A6. ``a6_fixed``: ``fast``
  waits for ``slow``: clean. A ``before_tool_call`` hook starts the calls in the plan's order;
  the truth is the order CrewAI issued the calls and the order they finished
  (``truth["issue_order"]``, ``truth["completion_order"]``). A call is issued when its
  ``TOOL`` span starts: in the default mode, after the hooks (the order the tools began); in the
  event-listener mode, at CrewAI's ``ToolUsageStartedEvent``, which each call's pool thread makes
  before any hook runs, so there the order is the events' (their timestamps, which the spans'
  start times are). No hook can order those events: in the rare run whose ``fast`` event came
  first, the ``a6`` run did not reorder what CrewAI issued, says so in its truth, and is made
  again (at most ``ATTEMPTS`` times; ``truth["attempts"]``).
* ``a1``: ``writer`` and ``editor`` (two crews, one agent each, kicked off on two threads) share
  a profile store reached only through tools (``read_profile``, ``write_profile``). The editor
  reads, its generation is held open while the writer writes, and then it writes what it
  planned from the old value: a lost update (A1). ``a1_fixed``: the writer's crew finishes
  before the editor's starts: clean. The tool spans are ordinary ``TOOL`` spans, so alone
  agentsim must say A1 *cannot tell*; with the mapping file (``runs.PROFILE_MAP``,
  ``--tool-memory``) it decides A1 from ``tool.name``, ``input.value`` and ``output.value``.
  The truth is what the store saw, in order (``truth["ops"]``), and whether an agent wrote a
  key another agent had written since it read it (``truth["a1"]``).

No A2 run: the tool list an agent planned from is on its ``LLM`` spans only as one JSON
attribute (``llm.tools``, a JSON array, not OpenInference's flattened
``llm.tools.<i>.tool.json_schema``), and CrewAI has no shared registry whose change a run could
make between a plan and its call.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Before CrewAI is imported: its telemetry reads these when it starts.
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
# CrewAI keeps each kickoff's task outputs in a SQLite file under the user's data directory
# (``$XDG_DATA_HOME/<CREWAI_STORAGE_DIR>``, the working directory's name by default): one fixed
# name, whatever folder the runs start from (the tests point XDG_DATA_HOME at their own folder).
os.environ.setdefault("CREWAI_STORAGE_DIR", "agentsim-corpus-crewai")

from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.events import crewai_event_bus  # noqa: E402
from crewai.events.types.tool_usage_events import ToolUsageStartedEvent  # noqa: E402
from crewai.hooks import (ToolCallHookContext, register_before_tool_call_hook,  # noqa: E402
                          unregister_before_tool_call_hook)
from crewai.tools import tool  # noqa: E402
from crewai_core.lock_store import set_lock_backend  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.json.file import FileSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import (BatchSpanProcessor, SimpleSpanProcessor,  # noqa: E402
                                            SpanExporter)

from .llm_server import Reply, ScriptedLLM  # noqa: E402
from .runs import lost_update  # noqa: E402

RUNS = ("a6", "a6_fixed", "a1", "a1_fixed")

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


@contextmanager
def _in_process_lock(name: str, *, timeout: float) -> Iterator[None]:
    """CrewAI's named locks, held within this process: by default each is a file
    ``crewai:<md5>.lock`` in the system temporary folder, left there after the run. The runs
    share one process, so a thread lock per name excludes what the file lock would."""
    with _locks_guard:
        held = _locks.setdefault(name, threading.Lock())
    if not held.acquire(timeout=timeout):
        raise TimeoutError(f"CrewAI lock {name!r} not acquired in {timeout} s")
    try:
        yield
    finally:
        held.release()


set_lock_backend(_in_process_lock)

# The call that waited returns well after the one it waited for, so the spans end in the order
# the effects landed even on a loaded machine.
SETTLE_S = 0.3
WAIT_S = 30.0
# An A6 run whose issue order the pool's threads decided the other way is made again.
ATTEMPTS = 3


# Exporters that receive a run's spans beside its file (the live tests' OTLP exporters): called
# once per attempt, so a run made again starts from fresh receivers.
Also = Callable[[], list[SpanExporter]]


def _traced(path: Path, listener: bool,
            also: Also | None = None) -> tuple[TracerProvider, CrewAIInstrumentor]:
    provider = TracerProvider(resource=Resource.create({"service.name": "crewai-corpus"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    # As an application ships spans to a collector: batched, flushed when the provider shuts down.
    for exporter in also() if also is not None else []:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    instrumentor = CrewAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider, use_event_listener=listener)
    return provider, instrumentor


def _agent(role: str, base: str, tools: list[Any]) -> Agent:
    # The role names the script: it is the model the server is asked for.
    llm = LLM(model=f"openai/{role}", base_url=base, api_key="none")
    return Agent(role=role, goal=f"{role} work", backstory=role, llm=llm, tools=tools,
                 allow_delegation=False, verbose=False)


def _crew(agent: Agent, description: str) -> Crew:
    task = Task(description=description, expected_output="a short answer", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False)


def _a6(variant: str, base: str, truth: dict[str, Any], listener: bool) -> None:
    started: list[tuple[Any, str]] = []
    started_lock = threading.Lock()

    def on_started(_source: Any, event: ToolUsageStartedEvent) -> None:
        with started_lock:
            started.append((event.timestamp, event.tool_name))

    slow_began = threading.Event()
    fast_done = threading.Event()
    slow_done = threading.Event()
    began: list[str] = []
    order: list[str] = []

    def issue_in_plan_order(context: ToolCallHookContext) -> None:
        # CrewAI starts the calls of one generation on a thread pool at once, so which call's
        # span starts first is a race between its threads. This hook (run on the call's thread
        # before the tool, and before the default mode's TOOL span) lets ``fast`` go only once
        # ``slow`` is running, so the calls start in the plan's order. The event listener's
        # TOOL span starts earlier, at ToolUsageStartedEvent, before the hooks: there the
        # pool's first thread, started before the second exists, has been first in every run.
        if context.tool_name == "fast" and not slow_began.wait(WAIT_S):
            raise TimeoutError("slow never began")

    @tool("slow")
    def slow(item: str) -> str:
        """Slow tool."""
        began.append("slow")
        slow_began.set()
        if variant == "a6":
            if not fast_done.wait(WAIT_S):
                raise TimeoutError("fast never ran")
            time.sleep(SETTLE_S)
        order.append("slow")
        slow_done.set()
        return f"slow {item}"

    @tool("fast")
    def fast(item: str) -> str:
        """Fast tool."""
        began.append("fast")
        if variant == "a6_fixed":
            if not slow_done.wait(WAIT_S):
                raise TimeoutError("slow never ran")
            time.sleep(SETTLE_S)
        order.append("fast")
        fast_done.set()
        return f"fast {item}"

    register_before_tool_call_hook(issue_in_plan_order)
    crewai_event_bus.register_handler(ToolUsageStartedEvent, on_started)
    try:
        _crew(_agent("worker", base, [slow, fast]), "do both").kickoff()
    finally:
        unregister_before_tool_call_hook(issue_in_plan_order)
        # The bus runs handlers on its own pool: wait for them before reading what they saw.
        crewai_event_bus.flush()
        crewai_event_bus.off(ToolUsageStartedEvent, on_started)
    issued = [name for _, name in sorted(started, key=lambda e: e[0])] if listener else began
    truth["began"] = began
    truth["issue_order"] = issued
    truth["completion_order"] = order
    truth["a6"] = issued != order


def _a1(variant: str, llm: ScriptedLLM, base: str, truth: dict[str, Any]) -> None:
    store: dict[str, str] = {"profile": "v0"}
    ops: list[tuple[str, str, str, str]] = []
    lock = threading.Lock()

    def profile_tools(agent: str) -> list[Any]:
        # One pair per agent, with the same names: the store records who called it.
        @tool("read_profile")
        def read_profile(key: str) -> str:
            """Reads a profile field."""
            with lock:
                ops.append((agent, "read", key, store[key]))
                return store[key]

        @tool("write_profile")
        def write_profile(key: str, value: str) -> str:
            """Writes a profile field."""
            with lock:
                ops.append((agent, "write", key, value))
                store[key] = value
            return "ok"

        return [read_profile, write_profile]

    writer = _crew(_agent("writer", base, profile_tools("writer")), "write the profile")
    editor = _crew(_agent("editor", base, profile_tools("editor")), "edit the profile")
    if variant == "a1":
        failed: list[BaseException] = []

        def edit() -> None:
            try:
                editor.kickoff()
            except BaseException as e:  # reported below, on the driving thread
                failed.append(e)

        editing = threading.Thread(target=edit)
        editing.start()
        # The editor has read and its second generation is in flight.
        llm.wait_requested("editor", 2)
        writer.kickoff()
        llm.open("writer-done")
        editing.join(WAIT_S * 2)
        if editing.is_alive():
            raise TimeoutError("the editor's crew did not finish")
        if failed:
            raise failed[0]
    else:
        writer.kickoff()
        llm.open("writer-done")
        editor.kickoff()
    truth["ops"] = ops
    truth["a1"] = lost_update(ops)


def run(variant: str, folder: Path, listener: bool = True,
        also: Also | None = None) -> dict[str, Any]:
    """Runs ``variant``, writing ``folder/spans.jsonl``; returns what the run did. ``listener``
    False traces it with the instrumentor's default mode instead (no ``LLM`` spans). An A6 run
    whose threads issued the calls in the order it did not intend is made again, up to
    ``ATTEMPTS`` times; the last run's file and truth are kept. ``also`` gives exporters that
    receive the spans too (batched), fresh for each attempt."""
    assert variant in RUNS, variant
    for attempt in range(1, ATTEMPTS + 1):
        truth = _run_once(variant, folder, listener, also)
        truth["attempts"] = attempt
        if "a6" not in truth or truth["a6"] == (variant == "a6"):
            break
    return truth


def _run_once(variant: str, folder: Path, listener: bool, also: Also | None) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spans.jsonl"
    path.write_text("")
    script = {
        "worker": [Reply.tools(("slow", {"item": "a"}), ("fast", {"item": "b"})),
                   Reply.text("done")],
        "writer": [Reply.tools(("write_profile", {"key": "profile", "value": "w1"})),
                   Reply.text("written")],
        "editor": [Reply.tools(("read_profile", {"key": "profile"})),
                   Reply.tools(("write_profile", {"key": "profile", "value": "e1"}),
                               gate="writer-done"),
                   Reply.text("edited")],
    }
    llm = ScriptedLLM(script)
    base = llm.start()
    provider, instrumentor = _traced(path, listener, also)
    truth: dict[str, Any] = {"run": variant}
    try:
        if variant.startswith("a6"):
            _a6(variant, base, truth, listener)
        else:
            _a1(variant, llm, base, truth)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
        llm.stop()
    assert not llm.errors, llm.errors
    return truth
