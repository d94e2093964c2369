"""An MCP client (the official SDK's ``ClientSession`` over streamable HTTP) that logs every
JSON-RPC message it sends and receives, as one JSON object per line: the log
``agentsim detect --from mcp`` reads.

A line is::

    {"t": 1796302357216197888, "client": "planner", "server": "http://127.0.0.1:PORT/mcp",
     "session": "<Mcp-Session-Id>", "dir": "send" | "recv", "message": {<the JSON-RPC message>}}

``t`` is the wall clock in nanoseconds when the message left or arrived, ``message`` the
message as the SDK put it on (or took it off) the wire, with absent fields left out. The
logger sits between the SDK's session and its transport (it wraps the two streams the
transport hands the session), so it sees exactly what the session sent and received —
including notifications the application never looks at.

``refresh`` decides what the client does with ``notifications/tools/list_changed``: a
refreshing client re-lists the tools before its next call and drops a planned call whose tool
is gone; an ignoring one calls from the list it has (the stale-list failure of MCP clients).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage


class JsonlLog:
    """One JSONL file shared by every client of a run (lines written whole, under a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.write_text("")

    def write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        with self._lock, self.path.open("a") as f:
            f.write(line)


def _wire(message: Any) -> dict[str, Any]:
    return message.model_dump(by_alias=True, mode="json", exclude_none=True)


class WireLog:
    """Logs the messages of one connection (one client of one server) into a ``JsonlLog``;
    ``changed`` is set when a ``notifications/tools/list_changed`` arrives."""

    def __init__(self, client: str, url: str, log: JsonlLog) -> None:
        self.client = client
        self.url = url
        self._log = log
        self.session_id: Any = None
        self.changed = threading.Event()

    def write(self, direction: str, message: Any) -> None:
        wire = _wire(message)
        if direction == "recv" and wire.get("method") == "notifications/tools/list_changed":
            self.changed.set()
        sid = self.session_id() if self.session_id else None
        self._log.write({"t": time.time_ns(), "client": self.client, "server": self.url,
                         "session": sid, "dir": direction, "message": wire})

    def wrap(self, read: Any, write: Any) -> tuple["_Logged", "_Logged"]:
        """The transport's two streams, logged."""
        return _Logged(read, self, "recv"), _Logged(write, self, "send")


class _Logged:
    """A stream between the session and the transport that logs what passes."""

    def __init__(self, inner: Any, wire: WireLog, direction: str) -> None:
        self._inner = inner
        self._wire = wire
        self._dir = direction

    async def send(self, item: SessionMessage) -> None:
        self._wire.write(self._dir, item.message)
        await self._inner.send(item)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        if isinstance(item, SessionMessage):
            self._wire.write(self._dir, item.message)
        return item

    def __aiter__(self) -> "_Logged":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except Exception as e:  # the stream's end (EndOfStream, ClosedResourceError)
            if type(e).__name__ in ("EndOfStream", "ClosedResourceError"):
                raise StopAsyncIteration from e
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def close(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> "_Logged":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class LoggedClient:
    """One client (one agent's connection) of one server."""

    def __init__(self, name: str, url: str, log: JsonlLog, refresh: bool) -> None:
        self.name = name
        self.url = url
        self.refresh = refresh
        self._wire = WireLog(name, url, log)
        self._stack = AsyncExitStack()
        self.session: ClientSession | None = None
        self.tools: dict[str, types.Tool] = {}
        self.stale = False
        self.list_changed = asyncio.Event()

    async def _on_message(self, message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, types.ToolListChangedNotification):
            self.stale = True
            self.list_changed.set()

    async def __aenter__(self) -> "LoggedClient":
        read, write, sid = await self._stack.enter_async_context(streamable_http_client(self.url))
        self._wire.session_id = sid
        logged_read, logged_write = self._wire.wrap(read, write)
        session = ClientSession(logged_read, logged_write, message_handler=self._on_message)
        self.session = await self._stack.enter_async_context(session)
        await self.session.initialize()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()

    async def list_tools(self) -> list[types.Tool]:
        assert self.session is not None
        result = await self.session.list_tools()
        self.tools = {t.name: t for t in result.tools}
        self.stale = False
        return result.tools

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult | None:
        """Calls ``name`` as planned; a refreshing client re-lists first after a
        ``list_changed`` and returns None (no call) when the tool is gone."""
        assert self.session is not None
        if self.refresh and self.stale:
            await self.list_tools()
            if name not in self.tools:
                return None
        return await self.session.call_tool(name, arguments)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The listed tools as chat-completions tool definitions (what the model is offered)."""
        return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                  "parameters": t.inputSchema}}
                for t in self.tools.values()]
