"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for driving real agent
frameworks without a model or a network.

Each agent's generations are a script: a list of replies, consumed in order by the requests
whose ``model`` field (or, failing that, whose first system message) names that script's key. A
reply is either text or tool calls, and may wait on a gate the test opens, so a test decides
exactly which generation is in flight while another agent acts: that is how a run is made to
exhibit (or, in its fixed twin, avoid) an anomaly deterministically, without sleeps.

    server = ScriptedLLM({
        "writer": [Reply.tools(("write_profile", {"key": "k", "value": "v"})), Reply.text("done")],
        "reviewer": [Reply.text("ok", gate="writer-done")],
    })
    base_url = server.start()          # http://127.0.0.1:PORT/v1
    ...                                # the frameworks call base_url with any api key
    server.open("writer-done")
    server.stop()

A reply may also be made from the request (``Reply.chosen``: a function of the request's body,
as a model answers from the tools it is offered) or be a failed generation (``Reply.fail``: an
HTTP error status and message, as a provider refuses a request).

Both plain and streamed (``"stream": true``, server-sent events of ``chat.completion.chunk``,
with a final usage chunk when ``stream_options.include_usage`` is set) responses are served;
``GET /v1/models`` lists the keys. Every request is kept (``server.requests``) so a test can
assert what a framework sent (tool definitions, messages).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """One scripted generation: text, or tool calls (name, arguments) in order."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Name of a gate to wait for before answering (opened by ScriptedLLM.open).
    gate: str | None = None
    prompt_tokens: int = 100
    completion_tokens: int = 20
    # A reply made from the request instead (as a model answers from the tools it is offered):
    # called with the request's body, it returns the reply to send.
    choose: Callable[[dict[str, Any]], "Reply"] | None = None
    # A failed generation instead: the HTTP status and error message the server answers with
    # (a 400 is not retried by the OpenAI client).
    failure: tuple[int, str] | None = None

    @staticmethod
    def text(content: str, gate: str | None = None) -> "Reply":
        return Reply(content=content, gate=gate)

    @staticmethod
    def fail(message: str, status: int = 400) -> "Reply":
        return Reply(failure=(status, message))

    @staticmethod
    def chosen(choose: Callable[[dict[str, Any]], "Reply"]) -> "Reply":
        return Reply(choose=choose)

    @staticmethod
    def tools(*calls: tuple[str, dict[str, Any]], gate: str | None = None) -> "Reply":
        return Reply(tool_calls=list(calls), gate=gate)


class ScriptError(Exception):
    """A request the script cannot answer (unknown key, script exhausted)."""


class ScriptedLLM:
    """The server. ``script`` maps a key (the request's model name or a word of its system
    prompt) to the replies for that key, in order."""

    def __init__(self, script: dict[str, list[Reply]], gate_timeout_s: float = 30.0):
        self._script = {k: list(v) for k, v in script.items()}
        self._next = {k: 0 for k in script}
        self._gates: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._gate_timeout_s = gate_timeout_s
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._call_ids = 0
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []

    # -- gates -------------------------------------------------------------------------------

    def _gate(self, name: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def open(self, name: str) -> None:
        """Lets every reply waiting on ``name`` (now or later) be sent."""
        self._gate(name).set()

    def requested(self, key: str) -> int:
        """How many requests for ``key`` have arrived so far."""
        with self._lock:
            return self._next.get(key, 0)

    def wait_requested(self, key: str, n: int = 1, timeout_s: float = 30.0) -> None:
        """Blocks until ``n`` requests for ``key`` have arrived (the generation is in flight)."""
        deadline = time.monotonic() + timeout_s
        while self.requested(key) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no request #{n} for {key!r} within {timeout_s} s")
            time.sleep(0.005)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> str:
        """Starts serving on an ephemeral port; returns the base URL (``…/v1``)."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": k, "object": "model", "owned_by": "agentsim"} for k in owner._script]
                    self._json(200, {"object": "list", "data": data})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    key, reply = owner._take(body)
                except ScriptError as e:
                    owner.errors.append(str(e))
                    self._json(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
                    return
                if reply.gate is not None and not owner._gate(reply.gate).wait(owner._gate_timeout_s):
                    msg = f"gate {reply.gate!r} for {key!r} never opened"
                    owner.errors.append(msg)
                    self._json(500, {"error": {"message": msg}})
                    return
                if reply.failure is not None:
                    status, message = reply.failure
                    self._json(status, {"error": {"message": message,
                                                  "type": "invalid_request_error"}})
                    return
                if body.get("stream"):
                    self._stream(key, body, reply)
                else:
                    self._json(200, owner._completion(key, reply))

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, key: str, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in owner._chunks(key, body, reply):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        for gate in list(self._gates.values()):
            gate.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "ScriptedLLM":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- replies -----------------------------------------------------------------------------

    def _key(self, body: dict[str, Any]) -> str:
        model = body.get("model")
        if model in self._script:
            return model
        for message in body.get("messages", []):
            if message.get("role") in ("system", "developer"):
                text = message.get("content")
                if isinstance(text, list):
                    text = " ".join(part.get("text", "") for part in text if isinstance(part, dict))
                for key in self._script:
                    if isinstance(text, str) and key in text:
                        return key
        raise ScriptError(f"no script for model {model!r} (keys: {sorted(self._script)})")

    def _take(self, body: dict[str, Any]) -> tuple[str, Reply]:
        key = self._key(body)
        with self._lock:
            self.requests.append({"key": key, "body": body})
            i = self._next[key]
            self._next[key] = i + 1
            replies = self._script[key]
            if i >= len(replies):
                raise ScriptError(f"script {key!r} has {len(replies)} replies; request #{i + 1} has none")
            reply = replies[i]
        return key, reply.choose(body) if reply.choose is not None else reply

    def _call_id(self) -> str:
        with self._lock:
            self._call_ids += 1
            return f"call_{self._call_ids}"

    def _usage(self, reply: Reply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        return [
            {
                "id": self._call_id(),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in reply.tool_calls
        ]

    def _completion(self, key: str, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        finish = "stop"
        if reply.tool_calls:
            message["tool_calls"] = self._tool_calls(reply)
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{key}-{self.requested(key)}",
            "object": "chat.completion",
            "created": 0,
            "model": key,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": self._usage(reply),
        }

    def _chunks(self, key: str, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        base = {"id": f"chatcmpl-{key}-{self.requested(key)}", "object": "chat.completion.chunk",
                "created": 0, "model": key}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        if reply.content:
            out.append(chunk({"content": reply.content}))
        for i, call in enumerate(self._tool_calls(reply)):
            out.append(chunk({"tool_calls": [{"index": i, **call}]}))
        out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append({**base, "choices": [], "usage": self._usage(reply)})
        return out
