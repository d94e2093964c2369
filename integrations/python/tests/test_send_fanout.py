"""Send fan-outs to a plain node (no ToolNode), run with the pinned `langgraph`: a planner
`Send`s three calls to `worker`, whose tasks finish in latency order (A6), and its twin whose
tasks hand off in Send order (no A6). Each run is made here, through the SQLite checkpointer
and through the recorder, and both readers must decide A6 from the orders the run left."""

import json
import sqlite3
import subprocess

import apps
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

import agentsim.record as agentsim_record

SENT = ["send:worker:0", "send:worker:1", "send:worker:2"]
CALL = {"refund": "send:worker:0", "email": "send:worker:1", "ticket": "send:worker:2"}


def checkpointed(fixed: bool, db) -> list:
    """Runs the app under SqliteSaver into `db`; returns the effects in the order they landed."""
    apps.WORLD.clear()
    conn = sqlite3.connect(db, check_same_thread=False)
    graph, inputs = apps.send_fanout(fixed)
    graph.compile(checkpointer=SqliteSaver(conn)).invoke(inputs, {"configurable": {"thread_id": "t"}})
    conn.commit()
    conn.close()
    return [CALL[name] for name, _ in apps.WORLD]


def recorded(fixed: bool, out, mode: str = "invoke") -> tuple[list, dict]:
    apps.WORLD.clear()
    graph, inputs = apps.send_fanout(fixed)
    rec = agentsim_record.record(graph.compile(), str(out))
    if mode == "invoke":
        rec.invoke(inputs)
    else:
        list(rec.stream(inputs))
    return [CALL[name] for name, _ in apps.WORLD], rec.report()


def fanout_record(path) -> dict:
    [r] = [json.loads(line) for line in open(path) if '"send:worker:' in line]
    return r


@pytest.mark.parametrize("fixed", [False, True])
def test_the_checkpointer_decides_a6_from_send_and_storage_order(fixed, tmp_path, agentsim,
                                                                 agentsim_binary):
    db = tmp_path / "c.sqlite"
    landed = checkpointed(fixed, db)
    out = agentsim("detect", str(db), "--from", "langgraph")
    a6 = out["ingest"]["decidable"]["A6"]
    assert a6["status"] == "decided", a6
    assert "planner → worker, 3 tasks" in a6["why"]
    assert out["exhibits"] == (["A6"] if not fixed else [])
    assert out["verdicts"]["A6"]["verdict"] == ("violated" if not fixed else "holds")
    # The effects landed as the run's world saw them: out of Send order only before the fix.
    assert (landed == SENT) == fixed, landed
    h = tmp_path / "h.jsonl"
    subprocess.run([agentsim_binary, "ingest", "langgraph", str(db), "-o", str(h)], check=True,
                   capture_output=True)
    assert out["ingest"]["records"] == 3
    r = fanout_record(h)
    assert [c for c, _ in r["io"]] == SENT
    assert [c for c, _ in r["co"]] == landed


@pytest.mark.parametrize("mode", ["invoke", "stream"])
@pytest.mark.parametrize("fixed", [False, True])
def test_the_recorder_decides_a6_from_send_and_return_order(fixed, mode, tmp_path, agentsim):
    out = tmp_path / "h.jsonl"
    landed, report = recorded(fixed, out, mode)
    assert report["decidable"]["A6"]["status"] == "decided"
    assert "langgraph_path" in report["decidable"]["A6"]["why"]
    r = fanout_record(out)
    assert r["agent"] == "worker"
    assert [c for c, _ in r["io"]] == SENT
    assert [c for c, _ in r["co"]] == landed
    assert (landed == SENT) == fixed, landed
    assert agentsim("detect", str(out))["exhibits"] == (["A6"] if not fixed else [])


def test_a_send_task_that_never_returns_leaves_a6_a_lower_bound(tmp_path):
    # A fan-out task whose end the recorder never saw cannot be placed in completion order.
    graph, inputs = apps.send_fanout(False)
    rec = agentsim_record.record(graph.compile(), str(tmp_path / "h.jsonl"))
    rec.invoke(inputs)
    for t in rec._tasks:
        if t.push and t.index == 1:
            t.end = None
    rec.records = []
    rec._finish(inputs, None, None)
    a6 = rec.report()["decidable"]["A6"]
    assert a6["status"] == "lower_bound", a6
    assert "1 Send tasks never returned" in a6["why"]
    r = fanout_record(tmp_path / "h.jsonl")
    assert [c for c, _ in r["io"]] == ["send:worker:0", "send:worker:2"]
