"""pydantic/pydantic-ai #2628, "Run Tools Sequentially" (A6): tools that must run in the order
the model gave them run in parallel.

The reporter's case is Git: a model that plans ``git add`` and ``git commit`` in one response
needs them to run in that order, but pydantic-ai runs every function tool call of one response
as its own asyncio task at once. Fixed by pull request #2718 (released in 1.0.2): a tool can be
declared ``sequential=True``, and a response whose calls include one runs them one at a time in
the model's order. Affected: 1.0.1, the last release without it.

The run: one agent, ``git``, with ``stage_file`` (writes the index: an await) and ``commit``
(records what is staged), over pydantic-ai's OpenAI chat model pointed at the scripted server,
whose one response plans ``stage_file`` then ``commit``. Traced by pydantic-ai's own
instrumentation (``Agent(instrument=InstrumentationSettings(tracer_provider=...))``: an
``agent run`` span, a ``chat`` span per generation, a ``running tools`` span and a ``running
tool`` span per call) and written as OTLP/JSON (:mod:`.otlp_json`). On 1.0.1 ``commit`` runs
while ``stage_file`` awaits the index and lands first: the commit is empty. On a release with
the fix the same code declares both tools sequential, as the maintainers' documentation says a
user should, and the commit holds the file. The truth is the repository's own log.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import pydantic_ai
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic_ai import Agent, Tool
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ..llm_server import Reply, ScriptedLLM
from .otlp_json import JsonLinesSpanExporter

REPORT = "pydantic/pydantic-ai#2628"
AFFECTED = "1.0.1"
FIXED = "1.0.2"
# Writing the index takes an await (the file system, in the reporter's case).
INDEX_WRITE_S = 0.05


def has_fix() -> bool:
    """Whether this pydantic-ai can declare a tool sequential (pull request #2718)."""
    return "sequential" in inspect.signature(Tool.__init__).parameters


def run(folder: Path) -> dict[str, Any]:
    """Runs the agent once, writing ``folder/spans.jsonl``; returns what the repository saw."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spans.jsonl"
    path.write_text("")
    provider = TracerProvider(resource=Resource.create({"service.name": "pydantic-ai-2628"}))
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(path)))
    index: list[str] = []
    commits: list[list[str]] = []
    effects: list[str] = []
    began: list[str] = []

    async def stage_file(path: str) -> str:
        """Stage a file for the next commit (git add)."""
        began.append("stage_file")
        await asyncio.sleep(INDEX_WRITE_S)
        index.append(path)
        effects.append("stage_file")
        return f"staged {path}"

    async def commit(message: str) -> str:
        """Commit what is staged (git commit)."""
        began.append("commit")
        commits.append(list(index))
        index.clear()
        effects.append("commit")
        return f"committed {len(commits[-1])} file(s): {message}"

    sequential = {"sequential": True} if has_fix() else {}
    llm = ScriptedLLM({"git": [
        Reply.tools(("stage_file", {"path": "notes.md"}), ("commit", {"message": "add notes"})),
        Reply.text("done"),
    ]})
    base = llm.start()
    try:
        model = OpenAIChatModel("git", provider=OpenAIProvider(base_url=base, api_key="none"))
        agent = Agent(model, name="git", tools=[Tool(stage_file, **sequential),
                                                Tool(commit, **sequential)],
                      instrument=InstrumentationSettings(tracer_provider=provider))
        asyncio.run(agent.run("Stage notes.md and commit it."))
    finally:
        provider.shutdown()
        llm.stop()
    assert not llm.errors, llm.errors
    return {
        "report": REPORT,
        "version": pydantic_ai.__version__,
        "fix_applied": has_fix(),
        "planned": ["stage_file", "commit"],
        "issue_order": began,
        "completion_order": effects,
        "commits": commits,
        # What the reporter saw: the commit ran before the file was staged, so it is empty.
        "empty_commit": commits == [[]],
        "a6": effects != ["stage_file", "commit"],
    }
