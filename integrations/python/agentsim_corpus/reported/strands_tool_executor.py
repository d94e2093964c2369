"""strands-agents/harness-sdk #614, "Add ability to disable parallel tool calling" (A6): the tool
calls of one model response run concurrently, so a call that depends on an earlier one's effect
can run before it lands.

The reporter's case: tool A runs a query and saves the result to a file, tool B reads the file;
Strands ran every tool use of one response at once. Pull request #658 (released in
strands-agents 1.6.0) added tool executors: ``Agent(tool_executor=SequentialToolExecutor())``
runs a response's tool uses one at a time, in the order the model gave them. Affected: 1.5.0,
the last release without it.

The run: one agent, ``analyst``, with ``save_query`` (writes the query's result to a file, which
takes a while: the database and the disk) and ``read_file``, over ``OpenAIModel`` at the scripted
server, whose one response plans ``save_query`` then ``read_file``. Traced by Strands' own
telemetry (an ``execute_tool`` span per call). The same code runs on both releases; where the
release has tool executors the agent is built with ``SequentialToolExecutor``, as the pull
request documents. The truth is the file system's own log.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..llm_server import Reply, ScriptedLLM
from ..otel_export import capture, install

REPORT = "strands-agents/harness-sdk#614"
AFFECTED = "1.5.0"
FIXED = "1.6.0"
# Running the query and writing its result takes this long; reading a file, no time.
QUERY_S = 0.3


def executor() -> Any:
    """The sequential tool executor (pull request #658), or None on a release without it."""
    try:
        from strands.tools.executors import SequentialToolExecutor
    except ImportError:
        return None
    return SequentialToolExecutor()


def run(folder: Path) -> dict[str, Any]:
    """Runs the agent once, writing ``folder/spans.jsonl``; returns what the file system saw."""
    from importlib.metadata import version

    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    install()
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    began: list[str] = []
    landed: list[str] = []
    reads: list[str] = []

    @tool
    def save_query(query: str, path: str) -> str:
        """Run a query and save its result to a file."""
        began.append("save_query")
        time.sleep(QUERY_S)
        files[path] = f"3 rows for {query}"
        landed.append("save_query")
        return f"saved {path}"

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        began.append("read_file")
        reads.append(files.get(path, ""))
        landed.append("read_file")
        return files.get(path, "(no such file)")

    sequential = executor()
    llm = ScriptedLLM({"analyst": [
        Reply.tools(("save_query", {"query": "orders today", "path": "orders.csv"}),
                    ("read_file", {"path": "orders.csv"})),
        Reply.text("done"),
    ]})
    base = llm.start()
    try:
        model = OpenAIModel(client_args={"base_url": base, "api_key": "none"}, model_id="analyst")
        kwargs = {"tool_executor": sequential} if sequential is not None else {}
        agent = Agent(name="analyst", model=model, tools=[save_query, read_file],
                      callback_handler=None, **kwargs)
        with capture(folder / "spans.jsonl"):
            agent("Save today's orders to orders.csv, then read the file.")
    finally:
        llm.stop()
    assert not llm.errors, llm.errors
    return {
        "report": REPORT,
        "version": version("strands-agents"),
        "fix_applied": sequential is not None,
        "planned": ["save_query", "read_file"],
        "issue_order": began,
        "completion_order": landed,
        # What the reporter saw: the read ran before the file was written and found none.
        "reads": reads,
        "a6": landed != ["save_query", "read_file"],
    }
