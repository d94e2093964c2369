"""microsoft/agent-framework #7386, "No way to serialize (or order) same-message function calls
-- stateful tools with write->read dependencies race" (A6).

Agent Framework runs every function call of one assistant message as its own asyncio task at
once, so a model that plans "write the file, then read it back" in one message can have the read
run before the write lands. Fixed by pull request #8453 (released in agent-framework-core
1.19.0): ``FunctionInvocationConfiguration`` takes ``allow_concurrent_invocation``, and with it
``False`` the calls of one message run one at a time in the model's order. Affected: 1.18.0, the
last release without it.

The run: one agent, ``editor``, with ``write_file`` (an await: the disk) and ``read_file``, over
``OpenAIChatCompletionClient`` (``agent-framework-openai`` 1.14.3, which both releases accept)
pointed at the scripted server, whose one response plans ``write_file`` then ``read_file``.
Traced by Agent Framework's own instrumentation (``enable_instrumentation`` with sensitive data,
GenAI spans) through the corpus's OTLP/JSON file exporter. The same code runs on both releases;
where the option exists the client is built with ``allow_concurrent_invocation=False``, as the
pull request documents. The truth is the file system's own log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent_framework import Agent, tool
from agent_framework._tools import normalize_function_invocation_configuration
from agent_framework.observability import enable_instrumentation
from agent_framework.openai import OpenAIChatCompletionClient

from ..llm_server import Reply, ScriptedLLM
from ..otel_export import capture, install

REPORT = "microsoft/agent-framework#7386"
AFFECTED = "1.18.0"
FIXED = "1.19.0"
# Writing the file takes an await.
DISK_WRITE_S = 0.05


def has_fix() -> bool:
    """Whether this Agent Framework can run one message's calls in order (pull request #8453)."""
    return "allow_concurrent_invocation" in normalize_function_invocation_configuration(None)


def run(folder: Path) -> dict[str, Any]:
    """Runs the agent once, writing ``folder/spans.jsonl``; returns what the file system saw."""
    from importlib.metadata import version

    install()
    # Tool arguments and results are "sensitive" in Agent Framework: off by default.
    enable_instrumentation(enable_sensitive_data=True)
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    began: list[str] = []
    landed: list[str] = []
    reads: list[str] = []

    @tool
    async def write_file(path: str, text: str) -> str:
        """Write a text file."""
        began.append("write_file")
        await asyncio.sleep(DISK_WRITE_S)
        files[path] = text
        landed.append("write_file")
        return f"wrote {path}"

    @tool
    async def read_file(path: str) -> str:
        """Read a text file back."""
        began.append("read_file")
        reads.append(files.get(path, ""))
        landed.append("read_file")
        return files.get(path, "(no such file)")

    config = {"allow_concurrent_invocation": False} if has_fix() else None
    llm = ScriptedLLM({"editor": [
        Reply.tools(("write_file", {"path": "report.md", "text": "draft 1"}),
                    ("read_file", {"path": "report.md"})),
        Reply.text("done"),
    ]})
    base = llm.start()
    try:
        client = OpenAIChatCompletionClient(base_url=base, api_key="none", model="editor",
                                            function_invocation_configuration=config)
        agent = Agent(client=client, name="editor", instructions="You are editor.",
                      tools=[write_file, read_file])
        with capture(folder / "spans.jsonl"):
            asyncio.run(agent.run("Write report.md, then read it back."))
    finally:
        llm.stop()
    assert not llm.errors, llm.errors
    return {
        "report": REPORT,
        "version": version("agent-framework-core"),
        "fix_applied": has_fix(),
        "planned": ["write_file", "read_file"],
        "issue_order": began,
        "completion_order": landed,
        # What the reporter saw: the read ran before the write landed and found no file.
        "reads": reads,
        "stale_read": reads != ["draft 1"],
        "a6": landed != ["write_file", "read_file"],
    }
