"""What the Agent Framework and the Strands corpora share: the plain tools over the
application's profile and tool registry (each runner wraps them with its framework's ``tool``
decorator), and the scripts the LLM server answers the A1, A2 and A6 runs with.

Nothing here imports a framework: the two runners' venvs need not agree on one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .llm_server import Reply


class World(Protocol):
    """The application state the tools act on."""

    profile: dict[str, str]
    registry: dict[str, Any]


def profile_and_registry_tools(w: World) -> list[Callable[..., str]]:
    """``read_profile`` / ``write_profile`` over ``w.profile``, ``lookup``, and
    ``retire_tool`` that removes a tool from ``w.registry``."""

    def read_profile(key: str) -> str:
        """Read one field of the shared user profile."""
        return w.profile.get(key, "")

    def write_profile(key: str, value: str) -> str:
        """Write one field of the shared user profile."""
        w.profile[key] = value
        return "ok"

    def lookup(query: str) -> str:
        """Look a fact up in the catalogue."""
        return f"fact about {query}"

    def retire_tool(name: str) -> str:
        """Withdraw a tool from the shared registry."""
        w.registry.pop(name, None)
        return f"retired {name}"

    return [read_profile, write_profile, lookup, retire_tool]


def profile_script(lost: bool) -> dict[str, list[Reply]]:
    """Alice and Bob each read the tone and write theirs; when ``lost``, Alice's write waits
    for Bob's (``bob-done``)."""
    gate = "bob-done" if lost else None
    return {
        "alice": [Reply.tools(("read_profile", {"key": "tone"})),
                  Reply.tools(("write_profile", {"key": "tone", "value": "formal"}), gate=gate),
                  Reply.text("done")],
        "bob": [Reply.tools(("read_profile", {"key": "tone"})),
                Reply.tools(("write_profile", {"key": "tone", "value": "casual"})),
                Reply.text("done")],
    }


def registry_script(retired: bool) -> dict[str, list[Reply]]:
    """The planner plans ``lookup`` (held until ``retired`` when ``retired``); the admin
    retires it and is asked once more."""
    return {
        "planner": [Reply.tools(("lookup", {"query": "x"}), gate="retired" if retired else None),
                    Reply.text("done")],
        "admin": [Reply.tools(("retire_tool", {"name": "lookup"})), Reply.text("retired"),
                  Reply.text("all good")],
    }


def effects_script() -> dict[str, list[Reply]]:
    """The clerk plans ``charge`` and ``notify`` in one generation."""
    return {"clerk": [Reply.tools(("charge", {"order": "7"}), ("notify", {"order": "7"})),
                      Reply.text("done")]}
