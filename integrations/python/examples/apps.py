"""Example LangGraph apps that reproduce each deployed anomaly of SPEC section 7, and its fix.

No LLM is called: nodes sleep and compute, and the "model" is a node that returns a fixed
AIMessage with tool calls. Each builder returns an uncompiled StateGraph and the input to run
it with; `EXPECTED` says what agentsim must find in a run of it, which is what
`agentsim_ingest::langgraph::model` and `agentsim deployed` predict:

* stale_read: an editor rewrites `draft` while reviewers read it in the same superstep
  (every task reads the pre-step snapshot): A1. Fix: an edge editor -> reviewers.
* double_write: two planners write the plain key `todos` in one superstep: LangGraph raises
  InvalidUpdateError (INVALID_CONCURRENT_GRAPH_UPDATE) and commits nothing. Fix: an Annotated
  key with a reducer (keep the last non-None list): the run completes.
* deerflow_3123: a reporter returns `{"todos": None}` and erases the list (a sequential
  clobber, no anomaly of the catalogue). Fix: the same reducer keeps the list.
* fold_order: parallel appends with 10-200 ms latencies fold in task order, never in
  completion order (no anomaly; the final list is in task order).
* toolnode_fanout: one AI message with three tool calls fanned out with Send to a ToolNode;
  the calls run concurrently, their side effects land in completion order while the tool
  messages keep call order: A6. Fix: one call per superstep, in call order.
* toolnode_inline: the classic ToolNode node (all calls inside one task, a thread pool): A6,
  visible to the recorder; a checkpoint database cannot tell (results are stored in call order).
* send_fanout: a planner fans three calls out with Send to a plain node (no ToolNode); the
  tasks run concurrently and finish in latency order (email, ticket, refund), not in the order
  they were sent: A6. Fix: an ordered hand-off, each task lands its effect only after the
  previous call's task has (the slow work still overlaps): no A6.
"""

from __future__ import annotations

import operator
import threading
import time
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallWithContext
from langgraph.types import Send

# What a run of each app must give: (lattice anomalies, run error or None).
EXPECTED = {
    ("stale_read", False): ({"A1"}, None),
    ("stale_read", True): (set(), None),
    ("double_write", False): (set(), "InvalidUpdateError"),
    ("double_write", True): (set(), None),
    ("deerflow_3123", False): (set(), None),
    ("deerflow_3123", True): (set(), None),
    ("fold_order", False): (set(), None),
    ("toolnode_fanout", False): ({"A6"}, None),
    ("toolnode_fanout", True): (set(), None),
    ("toolnode_inline", False): ({"A6"}, None),
    ("send_fanout", False): ({"A6"}, None),
    ("send_fanout", True): (set(), None),
}

# The outside world the tools act on: (tool, argument) in the order the effects landed.
WORLD: list[tuple[str, Any]] = []
_WORLD_LOCK = threading.Lock()


def _effect(name: str, arg: Any, latency_s: float) -> str:
    time.sleep(latency_s)
    with _WORLD_LOCK:
        WORLD.append((name, arg))
    return f"{name}({arg}) done"


@tool
def refund(order: str) -> str:
    """Refund an order (slow: 150 ms)."""
    return _effect("refund", order, 0.15)


@tool
def email(to: str) -> str:
    """Send an e-mail (fast: 20 ms)."""
    return _effect("email", to, 0.02)


@tool
def ticket(title: str) -> str:
    """Close a ticket (80 ms)."""
    return _effect("ticket", title, 0.08)


TOOLS = [refund, email, ticket]
CALLS = [
    {"name": "refund", "args": {"order": "A-17"}, "id": "call_1", "type": "tool_call"},
    {"name": "email", "args": {"to": "bob"}, "id": "call_2", "type": "tool_call"},
    {"name": "ticket", "args": {"title": "A-17 refunded"}, "id": "call_3", "type": "tool_call"},
]


# --- stale_read -------------------------------------------------------------------------


class Draft(TypedDict, total=False):
    draft: str
    review_1: str
    review_2: str


def stale_read(fixed: bool) -> tuple[StateGraph, dict]:
    def editor(s: Draft) -> dict:
        time.sleep(0.02)
        return {"draft": "draft-2"}

    def reviewer(i: int):
        def review(s: Draft) -> dict:
            time.sleep(0.01)
            return {f"review_{i}": f"approve {s['draft']}"}

        return review

    g = StateGraph(Draft)
    g.add_node("editor", editor)
    g.add_edge(START, "editor")
    for i in (1, 2):
        g.add_node(f"reviewer_{i}", reviewer(i))
        g.add_edge("editor" if fixed else START, f"reviewer_{i}")
    return g, {"draft": "draft-1"}


# --- double_write and deerflow_3123 -----------------------------------------------------


def keep_last_non_none(old: Any, new: Any) -> Any:
    """deer-flow's fix for issue 3123: a None update keeps the old value."""
    return old if new is None else new


class Plain(TypedDict, total=False):
    request: str
    todos: list


class Reduced(TypedDict, total=False):
    request: str
    todos: Annotated[list, keep_last_non_none]


def double_write(fixed: bool) -> tuple[StateGraph, dict]:
    def planner(i: int):
        def plan(s: dict) -> dict:
            time.sleep(0.01 * (i + 1))
            return {"todos": [f"{s['request']}: step {i}"]}

        return plan

    g = StateGraph(Reduced if fixed else Plain)
    for i in (0, 1):
        g.add_node(f"planner_{i}", planner(i))
        g.add_edge(START, f"planner_{i}")
    return g, {"request": "ship"}


class Report3123(TypedDict, total=False):
    todos: list
    messages: Annotated[list, operator.add]


class Report3123Fixed(TypedDict, total=False):
    todos: Annotated[list, keep_last_non_none]
    messages: Annotated[list, operator.add]


def deerflow_3123(fixed: bool) -> tuple[StateGraph, dict]:
    def planner(s: dict) -> dict:
        return {"todos": ["research", "write"], "messages": ["planned"]}

    def worker(i: int):
        def work(s: dict) -> dict:
            time.sleep(0.01)
            return {"todos": s["todos"][1:] + [f"done {i}"], "messages": [f"worker {i}"]}

        return work

    def reporter(s: dict) -> dict:
        # The partial update of deer-flow 3123: todos None alongside the report.
        return {"messages": ["report"], "todos": None}

    g = StateGraph(Report3123Fixed if fixed else Report3123)
    g.add_node("planner", planner)
    g.add_node("worker_1", worker(1))
    g.add_node("worker_2", worker(2))
    g.add_node("reporter", reporter)
    g.add_edge(START, "planner")
    g.add_edge("planner", "worker_1")
    g.add_edge("worker_1", "worker_2")
    g.add_edge("worker_2", "reporter")
    g.add_edge("reporter", END)
    return g, {}


# --- fold_order -------------------------------------------------------------------------


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]


def fold_order(fixed: bool) -> tuple[StateGraph, dict]:
    latencies = [0.15, 0.01, 0.09, 0.05]

    def task(i: int):
        def run(s: Log) -> dict:
            time.sleep(latencies[i])
            return {"log": [i]}

        return run

    g = StateGraph(Log)
    for i in range(len(latencies)):
        g.add_node(f"task_{i}", task(i))
        g.add_edge(START, f"task_{i}")
    return g, {}


# --- toolnode ---------------------------------------------------------------------------


class Messages(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def _agent(s: Messages) -> dict:
    return {"messages": [AIMessage(content="", tool_calls=CALLS)]}


def toolnode_fanout(fixed: bool) -> tuple[StateGraph, dict]:
    """Send fan-out (as `create_react_agent` does); fixed: one call per superstep."""

    def fan(s: Messages) -> list:
        calls = _last_ai(s).tool_calls
        if fixed:
            calls = calls[:1]
        return [
            Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=c, state=s))
            for c in calls
        ]

    def next_call(s: Messages) -> list:
        done = {m.tool_call_id for m in s["messages"] if getattr(m, "tool_call_id", None)}
        todo = [c for c in _last_ai(s).tool_calls if c["id"] not in done]
        return [
            Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=c, state=s))
            for c in todo[:1]
        ]

    g = StateGraph(Messages)
    g.add_node("agent", _agent)
    g.add_node("tools", ToolNode(TOOLS))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", fan, ["tools"])
    if fixed:
        g.add_conditional_edges("tools", next_call, ["tools"])
    else:
        g.add_edge("tools", END)
    return g, {"messages": []}


def toolnode_inline(fixed: bool) -> tuple[StateGraph, dict]:
    """The classic graph: `tools` is a ToolNode node that runs every call of the message."""
    g = StateGraph(Messages)
    g.add_node("agent", _agent)
    g.add_node("tools", ToolNode(TOOLS))
    g.add_edge(START, "agent")
    g.add_edge("agent", "tools")
    g.add_edge("tools", END)
    return g, {"messages": []}


# --- send_fanout ------------------------------------------------------------------------


class Plan(TypedDict, total=False):
    calls: list
    results: Annotated[list, operator.add]


# Wider apart than the tools' latencies, so that a loaded machine's thread start-up does not
# reorder them.
LATENCY_S = {"refund": 0.3, "email": 0.02, "ticket": 0.12}


def send_fanout(fixed: bool) -> tuple[StateGraph, dict]:
    """A planner `Send`s each call to `worker`, a plain function node (not a ToolNode)."""
    # The hand-off of the fix: call i lands its effect once call i-1's task has returned.
    landed = [threading.Event() for _ in CALLS]

    def planner(s: Plan) -> dict:
        return {"calls": [{"i": i, "name": c["name"], "arg": next(iter(c["args"].values()))}
                          for i, c in enumerate(CALLS)]}

    def fan(s: Plan) -> list:
        return [Send("worker", {"call": c}) for c in s["calls"]]

    def worker(packet: dict) -> dict:
        c = packet["call"]
        time.sleep(LATENCY_S[c["name"]])
        if fixed and c["i"] > 0:
            landed[c["i"] - 1].wait(timeout=5)
            # Leave the previous task time to return and have its writes stored.
            time.sleep(0.1)
        with _WORLD_LOCK:
            WORLD.append((c["name"], c["arg"]))
        landed[c["i"]].set()
        return {"results": [f"{c['name']}({c['arg']}) done"]}

    g = StateGraph(Plan)
    g.add_node("planner", planner)
    g.add_node("worker", worker)
    g.add_edge(START, "planner")
    g.add_conditional_edges("planner", fan, ["worker"])
    g.add_edge("worker", END)
    return g, {}


def _last_ai(s: Messages) -> AIMessage:
    return next(m for m in reversed(s["messages"]) if isinstance(m, AIMessage))


APPS = {
    "stale_read": stale_read,
    "double_write": double_write,
    "deerflow_3123": deerflow_3123,
    "fold_order": fold_order,
    "toolnode_fanout": toolnode_fanout,
    "toolnode_inline": toolnode_inline,
    "send_fanout": send_fanout,
}
