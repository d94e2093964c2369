"""A tool server made with the official MCP Python SDK (FastMCP), served over streamable HTTP on
127.0.0.1, whose tool list changes while clients use it.

``retire_tool(name)`` removes a tool and sends ``notifications/tools/list_changed`` to every
session that has listed the tools, as a server that withdraws or upgrades a tool must; whether a
client acts on that notification is the client's business (see ``mcp_client``). The server runs
uvicorn in a thread of its own with its own event loop, so the test's clients reach it exactly
as they would reach a remote one.

    with RegistryServer() as server:
        url = server.url                    # http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.session import ServerSession


class RegistryServer:
    """The server and its thread. Tools: ``lookup``, ``search`` (read-only answers),
    ``retire_tool`` (withdraws another tool and announces it)."""

    def __init__(self, reorder: bool = False) -> None:
        # With reorder, lookup answers only after search has: two calls sent together
        # complete in the opposite order.
        self.reorder = reorder
        self.search_done = threading.Event()
        self.mcp = FastMCP("registry", log_level="WARNING")
        self.sessions: list[ServerSession] = []
        self.retired: list[str] = []
        self._install()
        # A server that sends list_changed must declare `tools.listChanged`; FastMCP declares
        # false unless told, through the low-level server's initialization options.
        lowlevel = self.mcp._mcp_server
        options = lowlevel.create_initialization_options
        lowlevel.create_initialization_options = lambda *a, **k: options(  # type: ignore
            NotificationOptions(tools_changed=True))
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def _install(self) -> None:
        mcp = self.mcp
        owner = self
        listed = mcp.list_tools

        # Remember every session that lists the tools: those are the clients to notify.
        async def list_tools() -> Any:
            session = mcp.get_context().session
            if all(s is not session for s in owner.sessions):
                owner.sessions.append(session)
            return await listed()

        mcp._mcp_server.list_tools()(list_tools)  # the SDK's own registration point

        @mcp.tool()
        async def lookup(key: str) -> str:
            """Looks a key up."""
            if owner.reorder:
                if not await asyncio.to_thread(owner.search_done.wait, 20):
                    raise TimeoutError("search was never called")
                # search sets the event before its answer is written: give that answer time
                # to reach the client first, or the two answers race.
                await asyncio.sleep(0.5)
            return f"value of {key}"

        @mcp.tool()
        def search(query: str) -> str:
            """Searches."""
            owner.search_done.set()
            return f"results for {query}"

        @mcp.tool()
        async def retire_tool(name: str, ctx: Context) -> str:
            """Withdraws a tool from the list and tells every client that listed tools."""
            mcp.remove_tool(name)
            owner.retired.append(name)
            for session in list(owner.sessions):
                await session.send_tool_list_changed()
            return f"retired {name}"

    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(self.mcp.streamable_http_app(), log_level="warning", lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        server = self._uvicorn
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the MCP server did not start within 20 s")
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}/mcp"
        return self.url

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=20)

    def __enter__(self) -> "RegistryServer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
