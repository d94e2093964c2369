"""The recorder: a compiled LangGraph graph whose runs leave an agentsim history behind.

What it records, per node task (one agentsim operation record each, SPEC section 2):

* reads: the state keys the node actually looked at. The node gets its input state wrapped in
  a dict that notes every key read (`s["k"]`, `s.get("k")`, `"k" in s`; iterating reads
  every key), with the value the key had in the superstep's snapshot (a key read but absent
  reads NULL). Send (push) tasks read their packet, not the state: no reads.
* writes: the update the node returned (a dict, or a Command's update). The value is the key's
  value after the superstep when this task applied last (task order), as LangGraph folds
  reducers; otherwise the value written.
* tool effects: every tool call made inside the task (LangChain tool callbacks), as the effect
  `tool:<name>:<tool_call_id>` with the tool's output; `io` in start order, `co` in end order.
* Send fan-outs: the push tasks of one superstep addressed to one node (a ToolNode or a plain
  node) are one record, as `agentsim ingest langgraph` makes them; each task is an effect of
  the step that sent it: its tool calls, or else the task itself (`send:<node>:<index>`,
  valued by its update). `io` = Send order (the index in `langgraph_path`), `co` = the order
  the tasks returned (for tool calls, their end callbacks).
* times: all tasks of a superstep read at the log length before it (the pre-step snapshot);
  their records are appended in task order (LangGraph's `apply_writes` order: task path).
  Each run starts with a `__start__` record writing the input.
* errors: a run that raises (e.g. InvalidUpdateError, INVALID_CONCURRENT_GRAPH_UPDATE) leaves
  its last superstep's tasks recorded `aborted` (their writes never committed) and the error
  in the report; the exception is re-raised.

Only the root graph's nodes are tracked; a node that is itself a compiled graph is recorded
with the keys it was given as reads (its inner steps are not). What a recording does not show:
keys read through other channels than the state argument (globals, a store), effects of code
that is not a LangChain tool.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from typing import Any, Iterator

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import Runnable

from .values import value_name

KEYS = [
    "agent", "read_set", "read_values", "read_registry", "planned_tool", "read_time",
    "write_set", "write_values", "write_registry", "write_time", "io", "co", "aborted", "preds",
]


def record(compiled_graph: Any, path: str | os.PathLike) -> "Recorded":
    """Wraps `compiled_graph` so that its runs are written to `path` as an agentsim history."""
    return Recorded(compiled_graph, os.fspath(path))


class _Tracking(dict):
    """A node's input state that notes which keys the node reads."""

    def __init__(self, data: dict, reads: set):
        super().__init__(data)
        self._reads = reads

    def __getitem__(self, k):
        self._reads.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self._reads.add(k)
        return super().get(k, default)

    def __contains__(self, k):
        self._reads.add(k)
        return super().__contains__(k)

    def _all(self):
        self._reads.update(super().keys())

    def keys(self):
        self._all()
        return super().keys()

    def values(self):
        self._all()
        return super().values()

    def items(self):
        self._all()
        return super().items()

    def __iter__(self):
        self._all()
        return super().__iter__()

    def copy(self):
        self._all()
        return dict(super().items())


class _Task:
    def __init__(self, ns: str, step: int, node: str, path: tuple, state: Any):
        self.ns = ns
        self.step = step
        self.node = node
        self.path = path
        self.push = bool(path) and path[0] == "__pregel_push"
        self.state = dict(state) if isinstance(state, dict) else None
        self.reads: set = set()
        self.writes: dict | None = None
        self.error: BaseException | None = None
        self.tools: list[dict] = []
        # When the node returned or raised, on the recorder's clock (None: it never did).
        self.end: int | None = None
        # The Send index of a push task (`("__pregel_push", index, ...)`).
        self.index = path[1] if self.push and len(path) > 1 and isinstance(path[1], int) else None


def _path_key(p: Any) -> str:
    """LangGraph's `task_path_str`: the sort key of `apply_writes`."""
    if isinstance(p, (tuple, list)):
        return "~" + ", ".join(_path_key(x) for x in p)
    if isinstance(p, int):
        return f"{p:010d}"
    return str(p)


def _update_of(out: Any) -> dict:
    update = getattr(out, "update", out) if type(out).__name__ == "Command" else out
    if isinstance(update, dict):
        return dict(update)
    if isinstance(update, (list, tuple)) and all(isinstance(x, tuple) and len(x) == 2 for x in update):
        return dict(update)
    return {}


def _issued(rank: int, t: _Task) -> list:
    """The task's tool calls keyed by issue order: task order, then the order of the tool
    messages the task returned (a ToolNode returns them in call order), then start time.
    Start callbacks alone would give thread-scheduling order, not the order of the calls."""
    order: list = []
    for v in (t.writes or {}).values():
        for m in v if isinstance(v, list) else [v]:
            call = getattr(m, "tool_call_id", None)
            if call is not None:
                order.append(call)
    position = {c: i for i, c in enumerate(order)}
    return [((rank, position.get(e["call"], len(order)), e["start"]), e) for e in t.tools]


class _Wrapped(Runnable):
    """A node's runnable, tracking what it reads and returns."""

    def __init__(self, inner: Runnable, node: str, rec: "Recorded"):
        self.inner = inner
        self.node = node
        self.rec = rec

    def _begin(self, input: Any, config: Any) -> tuple[_Task, Any]:
        meta = (config or {}).get("metadata", {}) or {}
        task = _Task(
            meta.get("langgraph_checkpoint_ns", ""),
            int(meta.get("langgraph_step", 0)),
            self.node,
            tuple(meta.get("langgraph_path", ())),
            input,
        )
        self.rec._add_task(task)
        if isinstance(input, dict) and not task.push:
            return task, _Tracking(input, task.reads)
        return task, input

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        task, tracked = self._begin(input, config)
        try:
            out = self.inner.invoke(tracked, config, **kwargs)
        except BaseException as e:
            task.error = e
            raise
        finally:
            task.end = self.rec._tick()
        task.writes = _update_of(out)
        return out

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        task, tracked = self._begin(input, config)
        try:
            out = await self.inner.ainvoke(tracked, config, **kwargs)
        except BaseException as e:
            task.error = e
            raise
        finally:
            task.end = self.rec._tick()
        task.writes = _update_of(out)
        return out


class _ToolEvents(BaseCallbackHandler):
    """Tool start and end, in one global order (run inline so the order is the real one)."""

    run_inline = True

    def __init__(self, rec: "Recorded"):
        self.rec = rec
        self.open: dict = {}

    def on_tool_start(self, serialized, input_str, *, run_id, metadata=None, **kwargs):
        meta = metadata or {}
        event = {
            "ns": meta.get("langgraph_checkpoint_ns", ""),
            "name": (serialized or {}).get("name") or kwargs.get("name") or "?",
            "call": kwargs.get("tool_call_id") or str(run_id),
            "start": self.rec._tick(),
            "end": None,
            "output": None,
        }
        with self.rec._lock:
            self.open[run_id] = event

    def on_tool_end(self, output, *, run_id, **kwargs):
        self._finish(run_id, getattr(output, "content", output))

    def on_tool_error(self, error, *, run_id, **kwargs):
        self._finish(run_id, f"error: {type(error).__name__}")

    def _finish(self, run_id, output):
        end = self.rec._tick()
        with self.rec._lock:
            event = self.open.pop(run_id, None)
            if event is None:
                return
            event["end"], event["output"] = end, output
            self.rec._tool_events.append(event)


class Recorded:
    """The wrapped graph: `invoke`, `stream`, `ainvoke`, `astream` record; the rest delegates."""

    def __init__(self, graph: Any, path: str):
        self._graph = graph
        self.path = path
        self.report_path = (path[: -len(".jsonl")] if path.endswith(".jsonl") else path) + ".report.json"
        self.records: list[dict] = []
        self.errors: list[dict] = []
        self.notes: list[str] = []
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._tasks: list[_Task] = []
        self._tool_events: list[dict] = []
        # Send tasks of this recording's runs that never returned (A6 cannot order them).
        self._unordered = 0
        # The user's state keys: LangGraph's own channels are `__...__`, `branch:...`, `join:...`.
        self._state_keys = {
            k for k in getattr(graph, "channels", {})
            if not (k.startswith("__") or k.startswith("branch:") or k.startswith("join:"))
        }
        for name, node in graph.nodes.items():
            if name.startswith("__"):
                continue
            if type(node.bound).__name__ in ("Pregel", "CompiledStateGraph"):
                self.notes.append(f"node {name} is a subgraph: its inner steps are not recorded")
            node.bound = _Wrapped(node.bound, name, self)
            node.__dict__.pop("node", None)  # a cached_property built from `bound`

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)

    # --- running -------------------------------------------------------------------------

    def _config(self, config: Any) -> dict:
        config = dict(config or {})
        handler = _ToolEvents(self)
        callbacks = config.get("callbacks")
        if callbacks is None:
            config["callbacks"] = [handler]
        elif isinstance(callbacks, list):
            config["callbacks"] = [*callbacks, handler]
        else:
            callbacks = callbacks.copy()
            callbacks.add_handler(handler, inherit=True)
            config["callbacks"] = callbacks
        return config

    def _start(self) -> None:
        with self._lock:
            self._tasks = []
            self._tool_events = []

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self._start()
        out, error = None, None
        try:
            out = self._graph.invoke(input, self._config(config), **kwargs)
            return out
        except BaseException as e:
            error = e
            raise
        finally:
            self._finish(input, out if isinstance(out, dict) else None, error)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self._start()
        out, error = None, None
        try:
            out = await self._graph.ainvoke(input, self._config(config), **kwargs)
            return out
        except BaseException as e:
            error = e
            raise
        finally:
            self._finish(input, out if isinstance(out, dict) else None, error)

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        self._start()
        last, error = None, None
        values = kwargs.get("stream_mode", getattr(self._graph, "stream_mode", None)) == "values"
        try:
            for chunk in self._graph.stream(input, self._config(config), **kwargs):
                last = chunk
                yield chunk
        except BaseException as e:
            error = e
            raise
        finally:
            self._finish(input, last if values and isinstance(last, dict) else None, error)

    async def astream(self, input: Any, config: Any = None, **kwargs: Any):
        self._start()
        last, error = None, None
        values = kwargs.get("stream_mode", getattr(self._graph, "stream_mode", None)) == "values"
        try:
            async for chunk in self._graph.astream(input, self._config(config), **kwargs):
                last = chunk
                yield chunk
        except BaseException as e:
            error = e
            raise
        finally:
            self._finish(input, last if values and isinstance(last, dict) else None, error)

    # --- bookkeeping ---------------------------------------------------------------------

    def _tick(self) -> int:
        with self._lock:
            return next(self._seq)

    def _add_task(self, task: _Task) -> None:
        with self._lock:
            self._tasks.append(task)

    def _finish(self, input: Any, final: dict | None, error: BaseException | None) -> None:
        with self._lock:
            tasks = [t for t in self._tasks if "|" not in t.ns]
            events = list(self._tool_events)
        for e in events:
            for t in tasks:
                if t.ns == e["ns"]:
                    t.tools.append(e)
        steps = sorted({t.step for t in tasks})
        by_step = {s: sorted((t for t in tasks if t.step == s), key=lambda t: (_path_key(t.path), t.ns)) for s in steps}
        first_state = next((t.state for s in steps for t in by_step[s] if not t.push and t.state is not None), None)
        self._start_record(input, first_state)
        failed_step = steps[-1] if (error is not None and steps) else None
        for i, s in enumerate(steps):
            after = self._state_after(by_step, steps, i, final)
            self._superstep(by_step[s], after, aborted=(s == failed_step))
        if error is not None:
            self._error(error, failed_step)
        self._write()

    @staticmethod
    def _state_after(by_step: dict, steps: list, i: int, final: dict | None) -> dict | None:
        if i + 1 < len(steps):
            return next((t.state for t in by_step[steps[i + 1]] if not t.push and t.state is not None), None)
        return final

    def _start_record(self, input: Any, first_state: dict | None) -> None:
        if not isinstance(input, dict):
            return
        writes = {k: (first_state.get(k) if first_state is not None and k in first_state else v) for k, v in input.items()}
        self._append("__start__", {}, writes, [], [], aborted=False, read_time=len(self.records))

    def _superstep(self, tasks: list[_Task], after: dict | None, aborted: bool) -> None:
        read_time = len(self.records)
        last_writer: dict = {}
        for rank, t in enumerate(tasks):
            for k in t.writes or {}:
                last_writer[k] = rank
        fanouts: dict = {}
        pending: list = []  # (rank, agent, reads, writes, io, co)
        for rank, t in enumerate(tasks):
            reads = {}
            if not t.push and t.state is not None:
                reads = {k: t.state.get(k) for k in sorted(t.reads, key=str) if k in self._state_keys}
            writes = {}
            for k, v in (t.writes or {}).items():
                committed = not aborted and after is not None and last_writer.get(k) == rank and k in after
                writes[k] = after[k] if committed else v
            if t.push:
                fanouts.setdefault(t.node, []).append((rank, t, writes))
                continue
            io, co = self._effects(_issued(rank, t), writes)
            pending.append((rank, t.node, reads, writes, io, co))
        for node, group in fanouts.items():
            writes: dict = {}
            events = []
            for rank, t, w in group:
                writes.update(w)
                events.extend(_issued(rank, t) if t.tools else self._sent(rank, t))
            io, co = self._effects(events, writes)
            pending.append((group[-1][0], node, {}, writes, io, co))
        for _, agent, reads, writes, io, co in sorted(pending, key=lambda p: p[0]):
            self._append(agent, reads, writes, io, co, aborted=aborted, read_time=read_time)

    def _sent(self, rank: int, t: _Task) -> list:
        """A push task without tool calls as one effect of the step that sent it. A task that
        never returned has no completion time: A6 cannot be told for its fan-out."""
        if t.end is None:
            self._unordered += 1
            return []
        index = t.index if t.index is not None else rank
        event = {"cell": f"send:{t.node}:{index}", "output": dict(t.writes or {}), "end": t.end}
        return [((rank, 0, 0), event)]

    @staticmethod
    def _effects(events: list, writes: dict) -> tuple[list, list]:
        """`events` are (issue key, event): io in issue order, co in completion order."""
        cells = []
        for key, e in events:
            cell = e.get("cell") or f"tool:{e['name']}:{e['call']}"
            writes[cell] = e["output"]
            cells.append((key, e["end"], cell))
        io = [c for _, _, c in sorted(cells, key=lambda x: x[0])]
        co = [c for _, _, c in sorted(cells, key=lambda x: x[1])]
        return io, co

    def _append(self, agent, reads: dict, writes: dict, io, co, aborted: bool, read_time: int) -> None:
        index = len(self.records)
        preds: set = set()
        for k in reads:
            w = self._latest_writer(k, read_time)
            if w is not None:
                preds.add(w)
                preds.update(self.records[w]["preds"])
        wv = {k: value_name(v) for k, v in writes.items()}
        rv = {k: value_name(v) for k, v in reads.items()}
        self.records.append({
            "agent": agent,
            "read_set": sorted(reads),
            "read_values": {k: v for k, v in sorted(rv.items()) if v is not None},
            "read_registry": [],
            "planned_tool": None,
            "read_time": read_time,
            "write_set": sorted(writes),
            "write_values": {k: v for k, v in sorted(wv.items()) if v is not None},
            "write_registry": [],
            "write_time": index + 1,
            "io": [[c, wv.get(c)] for c in io],
            "co": [[c, wv.get(c)] for c in co],
            "aborted": aborted,
            "preds": sorted(preds),
        })

    def _latest_writer(self, key: str, read_time: int) -> int | None:
        for i in range(min(read_time, len(self.records)) - 1, -1, -1):
            r = self.records[i]
            if not r["aborted"] and key in r["write_set"]:
                return i
        return None

    def _error(self, error: BaseException, step: int | None) -> None:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        code = getattr(error, "lc_error_code", None)
        if code is None and "/errors/" in str(error):
            code = str(error).rsplit("/errors/", 1)[1].split()[0].strip("/") or None
        aborted = [i for i, r in enumerate(self.records) if r["aborted"]]
        self.errors.append({
            "error": type(error).__name__, "code": code, "message": message,
            "records": aborted, "superstep": step,
        })

    def report(self) -> dict:
        """What this recording can decide (the same shape as `agentsim ingest --report`)."""
        return {
            "source": "recorder",
            "file": self.path,
            "records": len(self.records),
            "counts": {"records": len(self.records)},
            "decidable": {
                "A1": {"status": "decided", "why": "per-key reads of each node's state argument, values from the superstep snapshot"},
                "A2": {"status": "undecidable", "why": "a LangGraph graph's tool set is fixed per ToolNode; registry changes are not observed"},
                "A3": {"status": "decided", "why": "provenance from the per-key reads; a failed superstep commits nothing"},
                "A6": self._a6(),
            },
            "errors": self.errors,
            "notes": self.notes,
        }

    def _a6(self) -> dict:
        why = ("tool calls from LangChain tool callbacks: issue order = start, completion order = "
               "end; Send fan-outs: issue order = the Send index in `langgraph_path`, completion "
               "order = the order the node's tasks returned")
        if self._unordered:
            return {"status": "lower_bound",
                    "why": f"{why}; but {self._unordered} Send tasks never returned: when they "
                           "finished cannot be told"}
        return {"status": "decided", "why": why}

    def _write(self) -> None:
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for r in self.records:
                f.write(json.dumps({k: r[k] for k in KEYS}, separators=(",", ":"), ensure_ascii=False) + "\n")
        os.replace(tmp, self.path)
        with open(self.report_path, "w", encoding="utf-8") as f:
            json.dump(self.report(), f, indent=2, sort_keys=True)
            f.write("\n")
