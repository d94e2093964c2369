"""The recorder on real `langgraph` (pinned in requirements.txt): every example app gives the
anomaly set SPEC section 7 and `agentsim_ingest::langgraph::model` predict, through every entry
point, and agrees with what `agentsim ingest langgraph` reads from the same run's checkpoints."""

import asyncio
import json
import sqlite3

import apps
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.errors import InvalidUpdateError

import agentsim.record as agentsim_record
from agentsim.record.values import fnv1a64, value_name


def run(app: str, fixed: bool, out, mode: str = "invoke", checkpointer=None):
    graph, inputs = apps.APPS[app](fixed)
    compiled = graph.compile(checkpointer=checkpointer)
    rec = agentsim_record.record(compiled, str(out))
    config = {"configurable": {"thread_id": "t"}} if checkpointer else None
    try:
        if mode == "invoke":
            rec.invoke(inputs, config)
        elif mode == "stream":
            list(rec.stream(inputs, config))
        elif mode == "ainvoke":
            asyncio.run(rec.ainvoke(inputs, config))
        elif mode == "astream":
            async def drain():
                return [c async for c in rec.astream(inputs, config)]
            asyncio.run(drain())
    except InvalidUpdateError:
        pass
    return rec


def records(path) -> list:
    return [json.loads(line) for line in open(path)]


@pytest.mark.parametrize("app,fixed", sorted(apps.EXPECTED))
def test_each_app_gives_the_predicted_anomalies(app, fixed, tmp_path, agentsim):
    out = tmp_path / "h.jsonl"
    rec = run(app, fixed, out)
    anomalies, error = apps.EXPECTED[(app, fixed)]
    assert set(agentsim("detect", str(out))["exhibits"]) == anomalies
    assert [e["error"] for e in rec.report()["errors"]] == ([error] if error else [])


@pytest.mark.parametrize("mode", ["stream", "ainvoke", "astream"])
@pytest.mark.parametrize("app", ["stale_read", "toolnode_inline", "toolnode_fanout", "send_fanout"])
def test_every_entry_point_records_the_same(app, mode, tmp_path, agentsim):
    out = tmp_path / "h.jsonl"
    run(app, False, out, mode)
    assert set(agentsim("detect", str(out))["exhibits"]) == apps.EXPECTED[(app, False)][0]


def test_reads_are_tracked_per_key(tmp_path):
    out = tmp_path / "h.jsonl"
    run("stale_read", False, out)
    by_agent = {r["agent"]: r for r in records(out)}
    # The editor never looks at the state; each reviewer reads draft only.
    assert by_agent["editor"]["read_set"] == []
    assert by_agent["reviewer_1"]["read_set"] == ["draft"]
    assert by_agent["reviewer_1"]["read_values"] == {"draft": '"draft-1"'}
    assert by_agent["reviewer_2"]["read_time"] == by_agent["editor"]["read_time"]


def test_invalid_update_error_is_recorded_with_the_aborted_step(tmp_path):
    out = tmp_path / "h.jsonl"
    graph, inputs = apps.double_write(False)
    rec = agentsim_record.record(graph.compile(), str(out))
    with pytest.raises(InvalidUpdateError):
        rec.invoke(inputs)
    rs = records(out)
    assert [r["agent"] for r in rs if r["aborted"]] == ["planner_0", "planner_1"]
    report = json.load(open(tmp_path / "h.report.json"))
    [error] = report["errors"]
    assert error["error"] == "InvalidUpdateError"
    assert error["code"] == "INVALID_CONCURRENT_GRAPH_UPDATE"
    assert error["message"].startswith("At key 'todos': Can receive only one value per step.")
    assert error["records"] == [1, 2]


def test_tool_effects_complete_in_the_order_the_world_saw(tmp_path):
    out = tmp_path / "h.jsonl"
    apps.WORLD.clear()
    run("toolnode_inline", False, out)
    [turn] = [r for r in records(out) if r["agent"] == "tools"]
    assert [c for c, _ in turn["io"]] == ["tool:refund:call_1", "tool:email:call_2", "tool:ticket:call_3"]
    landed = [f"tool:{name}:" for name, _ in apps.WORLD]
    assert [c.rsplit(":", 1)[0] + ":" for c, _ in turn["co"]] == landed


@pytest.mark.parametrize("app,fixed", [("stale_read", False), ("stale_read", True),
                                       ("double_write", False), ("toolnode_fanout", False),
                                       ("send_fanout", False), ("send_fanout", True)])
def test_the_recorder_and_the_checkpoints_agree(app, fixed, tmp_path, agentsim):
    db = tmp_path / "c.sqlite"
    conn = sqlite3.connect(db, check_same_thread=False)
    out = tmp_path / "h.jsonl"
    run(app, fixed, out, checkpointer=SqliteSaver(conn))
    conn.commit()
    conn.close()
    recorded = agentsim("detect", str(out))
    ingested = agentsim("detect", str(db), "--from", "langgraph")
    assert recorded["exhibits"] == ingested["exhibits"]
    assert [e["error"] for e in ingested["ingest"]["errors"]] == (
        ["InvalidUpdateError"] if app == "double_write" else [])
    assert len(records(out)) == ingested["ingest"]["records"]


def test_value_names_are_the_rust_readers():
    assert value_name("v1") == '"v1"'
    assert value_name(None) is None
    assert value_name({"y": [True, None], "x": 1}) == '{"x":1,"y":[true,null]}'
    assert fnv1a64(b"foobar") == 0x85944171F73967E8
    text = '"' + "a" * 60 + '"'
    assert value_name("a" * 60) == "fnv1a64:%016x" % fnv1a64(text.encode())
    # The same vectors are pinned in agentsim_ingest::value's tests.
    assert value_name("a" * 60) == "fnv1a64:93f0ef23ba8f5b89"
    assert value_name({"k": ["x"] * 20}) == "fnv1a64:76b8c19493a61744"
