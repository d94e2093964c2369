"""strands-agents/harness-sdk #1176, "Parallel invocations to the same Agent instance corrupt
message history" (A1): an invocation that starts while another is generating appends to the one
message history the other read, so the first answer is written after messages its generation
never saw.

The reporter's case: a client times out and retries with the same session while the first
request is still being processed; both invocations run on the one ``Agent`` and its
``messages``, and every later request to the provider fails on the corrupted history. Pull
request #1453 (released in strands-agents 1.22.0) makes an invocation that overlaps another
raise ``ConcurrencyException`` before it touches the agent's state. Affected: 1.21.0, the last
release without it.

The run: one agent, ``support``, over ``OpenAIModel`` at the scripted server. The client asks
"Refund order 9."; while that generation is in flight it retries the same question. On 1.22.0
the retry raises ``ConcurrencyException`` and the client retries again once the first
invocation is done, as the pull request describes. Strands traces its invocations, cycles,
generations and tool calls but not the history they read and write, so the application adds
those spans through Strands' hooks (``HistorySpans``): a ``search_memory`` span when a
generation reads the history (``BeforeModelCallEvent``, whose request is built from
``agent.messages``) and an ``update_memory`` span when a message is appended
(``MessageAddedEvent``), both in the GenAI conventions' memory shape, the history as one cell
``support.messages/history`` whose value is the history rendered as text. The truth is the
history itself and the requests the scripted server received.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ..llm_server import Reply, ScriptedLLM
from ..otel_export import capture, install

REPORT = "strands-agents/harness-sdk#1176"
AFFECTED = "1.21.0"
FIXED = "1.22.0"
PROMPT = "Refund order 9."
STORE = "support.messages"
FIRST_ANSWER = "Refunded order 9: 40 dollars."
# The mapping the spans are read with (``detect --tool-memory``): the two invocations are the
# client's request and its retry, separate callers of one agent instance.
MAP = """\
[invocations]
separate = ["support"]  # the request and its retry: two callers of one agent instance
"""


def render(messages: list[dict[str, Any]]) -> str:
    """The history as one line per message: ``role: text``."""
    lines = []
    for m in messages:
        text = " ".join(str(b["text"]) for b in m.get("content", []) if "text" in b)
        lines.append(f"{m['role']}: {text}")
    return "\n".join(lines)


def history_spans() -> Any:
    """A hook provider that traces the agent's reads and writes of its message history."""
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan
    from strands.hooks import (AfterInvocationEvent, BeforeModelCallEvent, HookProvider,
                               MessageAddedEvent)

    tracer = trace.get_tracer("agentsim_corpus.reported.history")

    def parent_of_generation() -> tuple[Any, int | None]:
        """The context to put a history span in (the cycle, not the generation: a generation
        is no parent of a step's spans) and the generation's start, if it is current."""
        current = trace.get_current_span()
        name = getattr(current, "name", "")
        if name.startswith("chat") and getattr(current, "parent", None) is not None:
            ctx = trace.set_span_in_context(NonRecordingSpan(current.parent))
            return ctx, current.start_time
        return None, None

    def emit(op: str, history: str, start: int | None, ctx: Any) -> None:
        records = json.dumps([{"id": "history", "content": history}])
        span = tracer.start_span(
            f"{op} {STORE}", context=ctx, start_time=start,
            attributes={"gen_ai.operation.name": op, "gen_ai.memory.store.id": STORE,
                        "gen_ai.memory.records": records})
        span.end()

    class HistorySpans(HookProvider):  # type: ignore[misc]
        def register_hooks(self, registry: Any, **_: Any) -> None:
            registry.add_callback(BeforeModelCallEvent, self.read)
            registry.add_callback(MessageAddedEvent, self.wrote)
            registry.add_callback(AfterInvocationEvent, self.ending)

        def read(self, event: Any) -> None:
            # The hook runs inside the generation's span, right after it starts, and the request
            # is built from the history after it: the read is dated 1 ns before the generation
            # so that a reader of the spans takes it as the generation's input, which it is.
            ctx, start = parent_of_generation()
            emit("search_memory", render(event.agent.messages),
                 None if start is None else start - 1, ctx)

        def wrote(self, event: Any) -> None:
            ctx, _ = parent_of_generation()
            emit("update_memory", render(event.agent.messages), None, ctx)

        def ending(self, event: Any) -> None:
            # Strands keeps the invocation's span on the agent (``agent.trace_span``) and ends
            # that one when an invocation ends. An overlapping invocation has replaced it, so
            # Strands would end the other invocation's span again and leave this one open, never
            # exported (the same shared state the report is about). This invocation's span is
            # still the current one here: end it, so the export holds both invocations.
            mine = trace.get_current_span()
            if mine is not event.agent.trace_span and mine.is_recording():
                mine.end()
                self.repaired += 1

    provider = HistorySpans()
    provider.repaired = 0
    return provider


def concurrency_exception() -> type[BaseException] | None:
    """``ConcurrencyException`` (pull request #1453), or None on a release without it."""
    try:
        from strands.types.exceptions import ConcurrencyException
    except ImportError:
        return None
    return ConcurrencyException


def run(folder: Path) -> dict[str, Any]:
    """Runs the first request and its retry, writing ``folder/spans.jsonl`` and
    ``folder/map.toml``; returns what the history and the scripted server saw."""
    from importlib.metadata import version

    from strands import Agent
    from strands.models.openai import OpenAIModel

    install()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "map.toml").write_text(MAP)
    refused = concurrency_exception()
    llm = ScriptedLLM({"support": [
        Reply.text(FIRST_ANSWER, gate="first"),
        Reply.text("Order 9 is already refunded."),
    ]})
    base = llm.start()
    outcome = ""
    try:
        model = OpenAIModel(client_args={"base_url": base, "api_key": "none"}, model_id="support")
        spans = history_spans()
        agent = Agent(name="support", model=model, callback_handler=None, hooks=[spans])

        async def client() -> str:
            first = asyncio.create_task(agent.invoke_async(PROMPT))
            # The retry comes while the first generation is in flight.
            await asyncio.to_thread(llm.wait_requested, "support", 1)
            try:
                await agent.invoke_async(PROMPT)
                seen = "ran concurrently"
            except BaseException as e:  # noqa: BLE001 - only the release's own refusal is expected
                if refused is None or not isinstance(e, refused):
                    raise
                seen = f"raised {type(e).__name__}"
            llm.open("first")
            await first
            if seen.startswith("raised"):
                await agent.invoke_async(PROMPT)  # the retry once the first is done
                seen += ", retried after the first"
            return seen

        with capture(folder / "spans.jsonl"):
            outcome = asyncio.run(client())
    finally:
        llm.stop()
    assert not llm.errors, llm.errors
    history = [(m["role"], render([m]).split(": ", 1)[1]) for m in agent.messages]
    roles = [r for r, _ in history]
    # The history the first generation was sent, and the history its answer was appended to.
    first_view = [m["role"] for m in llm.requests[0]["body"]["messages"] if m["role"] != "system"]
    answer_at = next(i for i, (r, t) in enumerate(history) if r == "assistant" and t == FIRST_ANSWER)
    return {
        "report": REPORT,
        "version": version("strands-agents"),
        "fix_applied": refused is not None,
        "retry": outcome,
        # Invocation spans Strands left open and the application ended (HistorySpans.ending).
        "spans_ended_by_the_application": spans.repaired,
        "history": [f"{r}: {t}" for r, t in history],
        # What the reporter saw: two user turns in a row (the provider refuses such a history).
        "alternates": all(a != b for a, b in zip(roles, roles[1:])),
        "first_generation_saw": len(first_view),
        "first_answer_written_after": answer_at,
        "a1": answer_at != len(first_view),
    }
