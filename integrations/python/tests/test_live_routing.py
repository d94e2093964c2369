"""Past one machine: two ``agentsim serve`` instances on loopback behind a router in the test,
as the Collector's load-balancing exporter would spread spans (docs/serving.md, "Past one
machine").

Two applications, each with a store its agents share: ``profile-db`` (a memory cell two agents
update from two traces: a lost update, A1) and ``tool-registry`` (a tool retired between a plan
and its call, in another trace: A2). Their spans carry the resource attribute
``agentsim.store`` naming the store, as ``OTEL_RESOURCE_ATTRIBUTES`` would set it.

* Routed by that attribute, every span a store's anomalies rest on reaches one receiver: each
  receiver's report is ``detect`` on its store's spans, and every witness one receiver of all the
  spans finds, exactly one of the two finds.
* Routed by trace ID, the two traces of the lost update reach different receivers. A receiver
  told so (``--routed``) says *cannot tell* for every verdict, never *holds*; one not told would
  say *holds* about A1, which is what the flag is for.
"""

import json
from pathlib import Path

import pytest

from agentsim_corpus.live import Serve, detect_as_served, post_json

ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT / "scenarios" / "traces" / "otel"
KEY = "agentsim.store"
# store -> (the application's spans, the anomaly its stores' agents make)
APPS = {
    "profile-db": ("memory_lost_update.json", "A1"),
    "tool-registry": ("phantom_tool.json", "A2"),
}
LATTICE = ("A1", "A2", "A3", "A6")


def _documents(store: str, number: int) -> list[dict]:
    """The application's export, its resources naming its store, and its trace IDs made its own
    (the scenario files number their traces from 1, so two applications would share IDs)."""
    out = []
    for line in (TRACES / APPS[store][0]).read_text().splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            rs.setdefault("resource", {}).setdefault("attributes", []).append(
                {"key": KEY, "value": {"stringValue": store}})
            for ss in rs.get("scopeSpans", []):
                for span in ss["spans"]:
                    span["traceId"] = f"{number:02x}" + span["traceId"][2:]
        out.append(doc)
    return out


def _write(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def _store_of(rs: dict) -> str:
    attrs = {a["key"]: a["value"].get("stringValue") for a in rs["resource"]["attributes"]}
    return attrs[KEY]


def _by_store(docs: list[dict], receivers: int) -> list[list[dict]]:
    """The router keyed on the store attribute: each ResourceSpans whole to one receiver."""
    out: list[list[dict]] = [[] for _ in range(receivers)]
    for doc in docs:
        for rs in doc["resourceSpans"]:
            i = sorted(APPS).index(_store_of(rs)) % receivers
            out[i].append({"resourceSpans": [rs]})
    return out


def _trace_hash(trace_id: str) -> int:
    """Where a trace goes: the ID's last byte (the Collector hashes the ID onto a ring; any
    function of the ID alone keeps a trace together, which is all the test relies on)."""
    return int(trace_id[-2:], 16)


def _by_trace(docs: list[dict], receivers: int) -> list[list[dict]]:
    """The router keyed on the trace ID (the load-balancing exporter's default): a
    ResourceSpans is split, each trace's spans to the receiver its ID hashes to."""
    out: list[list[dict]] = [[] for _ in range(receivers)]
    for doc in docs:
        for rs in doc["resourceSpans"]:
            for ss in rs.get("scopeSpans", []):
                for span in ss["spans"]:
                    i = _trace_hash(span["traceId"]) % receivers
                    part = {**rs, "scopeSpans": [{**ss, "spans": [span]}]}
                    out[i].append({"resourceSpans": [part]})
    return out


def _send(serve: Serve, docs: list[dict]) -> None:
    for doc in docs:
        assert post_json(serve.traces_url, doc) == 200


def _serves(binary: str, folder: Path, n: int, *more: str) -> list[Serve]:
    return [Serve(binary, folder / f"receiver{i}", *more, grpc=False) for i in range(n)]


def _verdicts(report: dict) -> dict[str, str]:
    return {a: report["verdicts"][a]["verdict"] for a in LATTICE}


def _witnesses(report: dict) -> dict[str, int]:
    return {a: len(report["anomalies"].get(a, [])) for a in LATTICE}


@pytest.fixture
def everything(tmp_path, agentsim_binary):
    """Both applications' spans, and what one receiver of all of them reports."""
    docs = {store: _documents(store, n + 1) for n, store in enumerate(sorted(APPS))}
    alls = [d for store in sorted(APPS) for d in docs[store]]
    with Serve(agentsim_binary, tmp_path / "one", grpc=False) as one:
        _send(one, alls)
        single = one.stop()
    offline = detect_as_served(agentsim_binary, _write(tmp_path / "all.jsonl", alls))
    assert single == offline
    for store, (_, anomaly) in APPS.items():
        assert single["verdicts"][anomaly]["verdict"] == "violated", (store, single["verdicts"])
    return docs, alls, single


def test_routed_by_store_every_verdict_is_one_receivers(everything, tmp_path, agentsim_binary):
    docs, alls, single = everything
    shares = _by_store(alls, 2)
    serves = _serves(agentsim_binary, tmp_path, 2)
    try:
        for serve, share in zip(serves, shares):
            _send(serve, share)
        reports = [s.stop() for s in serves]
    finally:
        for s in serves:
            s.kill()
    for i, store in enumerate(sorted(APPS)):
        # Each receiver got one store's spans, and reports what detect does on them.
        assert all(_store_of(d["resourceSpans"][0]) == store for d in shares[i]), i
        alone = detect_as_served(agentsim_binary, _write(tmp_path / f"{store}.jsonl", docs[store]))
        assert reports[i] == alone, (store, reports[i]["verdicts"], alone["verdicts"])
    # Every witness the one receiver found, one of the two found; and a verdict violated there is
    # violated on one of them, while one that holds there holds on both.
    for a in LATTICE:
        assert _witnesses(single)[a] == sum(_witnesses(r)[a] for r in reports), a
        verdict = _verdicts(single)[a]
        if verdict == "violated":
            assert any(_verdicts(r)[a] == "violated" for r in reports), a
        if verdict == "holds":
            assert all(_verdicts(r)[a] == "holds" for r in reports), a


def test_routed_by_trace_a_verdict_is_cannot_tell_never_holds(everything, tmp_path,
                                                               agentsim_binary):
    docs, alls, single = everything
    shares = _by_trace(alls, 2)
    # The lost update's two traces went to different receivers.
    lost = {span["traceId"] for d in docs["profile-db"] for rs in d["resourceSpans"]
            for ss in rs.get("scopeSpans", []) for span in ss["spans"]}
    assert len({_trace_hash(t) % 2 for t in lost}) == 2, lost
    told = _serves(agentsim_binary, tmp_path / "told", 2, "--routed")
    untold = _serves(agentsim_binary, tmp_path / "untold", 2)
    try:
        for serve, share in zip(told, shares):
            _send(serve, share)
        for serve, share in zip(untold, shares):
            _send(serve, share)
        reports = [s.stop() for s in told]
        blind = [s.stop() for s in untold]
    finally:
        for s in told + untold:
            s.kill()
    for report, alone in zip(reports, blind):
        for a in LATTICE:
            v = report["verdicts"][a]
            assert v["verdict"] == "cannot_tell", (a, v)
            # A verdict the receiver would have told is untold for the routing; one it could
            # not tell anyway keeps its own reason.
            if _verdicts(alone)[a] != "cannot_tell":
                assert "receives part of the spans (--routed)" in v["reason"]["detail"], v
            else:
                assert v == alone["verdicts"][a], (a, v)
    # Not told, a receiver would say the lost update holds: the hazard the flag is for.
    assert any(_verdicts(b)["A1"] == "holds" for b in blind), [_verdicts(b) for b in blind]
    assert _verdicts(single)["A1"] == "violated"
