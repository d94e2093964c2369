"""Writes the example OTLP/JSON traces in this folder (standard library only, deterministic).

    python3 scenarios/traces/otel/make_traces.py

Each file is what an OpenTelemetry Collector's file exporter writes: one `TracesData` JSON
document per line (here one per trace, resource spans split by service), following the
OTLP/JSON mapping (hex ids, 64-bit integers as strings, lowerCamelCase) and the GenAI
semantic conventions (open-telemetry/semantic-conventions-genai, model/gen-ai/*.yaml). Spans
are written out of time order and mixed with non-GenAI spans (HTTP), as real exports are.

| file | what happens | agentsim must find |
| --- | --- | --- |
| memory_lost_update.json | deer-flow's memory updater reads a record, generates for 8 s, saves it whole; an editor saved the record meanwhile | A1 (decided: contents captured) |
| memory_occ.json | the same with a version check: the save fails, the updater reloads and generates again | none (the failed attempt is aborted) |
| memory_versions_only.json | the lost update with contents not captured (only record ids) | A1 (upper bound: versions derived) |
| memory_unidentified.json | searches that do not say which records they returned | A1 undecidable |
| tool_reordering.json | a refund call issued before an e-mail completes after it | A6 |
| tool_sequenced.json | the same calls one after the other | none |
| phantom_tool.json | a tool removed from the agent's definitions before the planned call | A2 |
| phantom_signature.json | a tool's parameters changed before the planned call | A2 (signature version) |
| profile_tools.json | Agent Framework's shape: memory is two tools (read_profile, write_profile), definitions on invoke_agent only; a lost update through them | with profile_map.toml: A1 (decided); without: A1 cannot tell |

`gaps/` holds the same runs with a trace gap each (docs/ingest.md, "What each source can decide"):

| file | gap | what the gap hides, and the verdict |
| --- | --- | --- |
| gaps/one_trace.json | none: the lost update with both agents in one trace (the control) | A1 decided, 1 witness |
| gaps/orphan.json | one_trace.json with both invoke_agent spans dropped (as a sampler does) | the A1 witness; A1 undecidable |
| gaps/unknown_parent.json | the editor's spans under a framework "chain" span inside the updater | the A1 witness; A1 undecidable |
| gaps/mistyped_agent.json | phantom_tool.json with the second `ops` named by an integer | the A2 witness; A2 undecidable |
| gaps/overlap.json | the lost update with the editor being a second invocation of the updater | A1 upper bound, 1 witness |
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in ns


class Trace:
    def __init__(self, n: int):
        self.trace_id = f"{n:032x}"
        self.n = n
        self.count = 0
        self.spans = []

    def span(self, name, start_ms, end_ms, parent=None, attrs=None, error=False, kind=1):
        self.count += 1
        span_id = f"{self.n:08x}{self.count:08x}"
        s = {
            "traceId": self.trace_id,
            "spanId": span_id,
            "parentSpanId": parent or "",
            "name": name,
            "kind": kind,
            "startTimeUnixNano": str(T0 + int(start_ms * 1_000_000)),
            "endTimeUnixNano": str(T0 + int(end_ms * 1_000_000)),
            "attributes": [kv(k, v) for k, v in (attrs or {}).items()],
            "status": {"code": 2, "message": "conflict"} if error else {},
        }
        self.spans.append(s)
        return span_id

    def document(self) -> str:
        genai = [s for s in self.spans if any(a["key"].startswith("gen_ai.") for a in s["attributes"])]
        other = [s for s in self.spans if s not in genai]
        # Reverse time order inside each scope: the reader must not rely on file order.
        resources = [
            {
                "resource": {"attributes": [kv("service.name", "agents")]},
                "scopeSpans": [{"scope": {"name": "genai-example"}, "spans": genai[::-1]}],
            },
            {
                "resource": {"attributes": [kv("service.name", "http")]},
                "scopeSpans": [{"scope": {"name": "http"}, "spans": other[::-1]}],
            },
        ]
        return json.dumps({"resourceSpans": resources}, separators=(",", ":"))


def kv(key, value):
    if isinstance(value, bool):
        v = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, (list, dict)):
        v = {"stringValue": json.dumps(value, separators=(",", ":"))}
    else:
        v = {"stringValue": str(value)}
    return {"key": key, "value": v}


def agent(t, name, start, end, parent=None):
    return t.span(f"invoke_agent {name}", start, end, parent, attrs={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
        "gen_ai.provider.name": "openai"})


def chat(t, parent, start, end, tools=None):
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
             "gen_ai.provider.name": "openai", "gen_ai.usage.input_tokens": 900}
    if tools is not None:
        attrs["gen_ai.tool.definitions"] = tools
    return t.span("chat gpt-4o", start, end, parent, attrs, kind=3)


def search(t, parent, start, end, records=None, record_id=None, count=None):
    attrs = {"gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "user-memory"}
    if records is not None:
        attrs["gen_ai.memory.records"] = records
    if record_id is not None:
        attrs["gen_ai.memory.record.id"] = record_id
    if count is not None:
        attrs["gen_ai.memory.record.count"] = count
    return t.span("search_memory", start, end, parent, attrs, kind=3)


def update(t, parent, start, end, records=None, record_id=None, error=False):
    attrs = {"gen_ai.operation.name": "update_memory", "gen_ai.memory.store.id": "user-memory"}
    if records is not None:
        attrs["gen_ai.memory.records"] = records
    if record_id is not None:
        attrs["gen_ai.memory.record.id"] = record_id
    if error:
        attrs["error.type"] = "version_conflict"
    return t.span("update_memory", start, end, parent, attrs, error=error, kind=3)


def tool(t, parent, name, call_id, start, end, result):
    return t.span(f"execute_tool {name}", start, end, parent, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.result": result})


def http(t, parent, start, end):
    return t.span("POST /v1/chat/completions", start, end, parent,
                  {"http.request.method": "POST", "server.address": "api.example"}, kind=3)


def rec(content, rid="profile"):
    return [{"id": rid, "content": content}]


def memory(variant: str) -> list:
    """The deer-flow memory updater, and a user's concurrent edit of the same record."""
    content = variant in ("lost", "occ")
    t1, t2 = Trace(1), Trace(2)
    up = agent(t1, "memory_updater", 0, 9500)
    if variant == "unidentified":
        search(t1, up, 0, 50, count=1)
    else:
        search(t1, up, 0, 50, records=rec("likes tea") if content else None,
               record_id=None if content else "profile")
    g = chat(t1, up, 100, 8000)
    http(t1, g, 120, 7990)
    ed = agent(t2, "memory_editor", 1000, 3300)
    if variant == "unidentified":
        search(t2, ed, 1000, 1050, count=1)
    else:
        search(t2, ed, 1000, 1050, records=rec("likes tea") if content else None,
               record_id=None if content else "profile")
    chat(t2, ed, 1100, 3000)
    update(t2, ed, 3100, 3200, records=rec("likes coffee") if content else None,
           record_id="profile")
    if variant == "occ":
        # The save checks the version, fails, reloads and generates again.
        update(t1, up, 8100, 8150, records=rec("likes tea; vegan"), record_id="profile", error=True)
        search(t1, up, 8200, 8250, records=rec("likes coffee"))
        chat(t1, up, 8300, 9300)
        update(t1, up, 9350, 9450, records=rec("likes coffee; vegan"), record_id="profile")
    else:
        update(t1, up, 8100, 8200, records=rec("likes tea; vegan") if content else None,
               record_id="profile")
    return [t1, t2]


DEFS = [{"type": "function", "name": "refund"}, {"type": "function", "name": "email"}]


def tools(sequenced: bool) -> list:
    t = Trace(3)
    a = agent(t, "support", 0, 1000)
    chat(t, a, 0, 90, tools=DEFS)
    if sequenced:
        tool(t, a, "refund", "call_1", 100, 400, "refunded A-17")
        tool(t, a, "email", "call_2", 410, 480, "sent")
    else:
        tool(t, a, "refund", "call_1", 100, 400, "refunded A-17")
        tool(t, a, "email", "call_2", 120, 200, "sent")
    return [t]


def phantom(signature: bool) -> list:
    """Two overlapping invocations of one agent; the second sees the changed definitions."""
    t1, t2 = Trace(4), Trace(5)
    deploy = {"type": "function", "name": "deploy", "parameters": {"properties": {"env": {}}}}
    rollback = {"type": "function", "name": "rollback"}
    a1 = agent(t1, "ops", 0, 6000)
    chat(t1, a1, 0, 1000, tools=[deploy, rollback])
    a2 = agent(t2, "ops", 2000, 3000)
    if signature:
        changed = {"type": "function", "name": "deploy",
                   "parameters": {"properties": {"env": {}, "approver": {}}}}
        chat(t2, a2, 2000, 2500, tools=[changed, rollback])
        tool(t1, a1, "deploy", "call_7", 5000, 5100, "deployed")
    else:
        chat(t2, a2, 2000, 2500, tools=[deploy])
        tool(t1, a1, "rollback", "call_7", 5000, 5100, "rolled back")
    return [t1, t2]


PROFILE_DEFS = [{"type": "function", "name": "read_profile",
                 "parameters": {"properties": {"key": {"type": "string"}}}},
                {"type": "function", "name": "write_profile",
                 "parameters": {"properties": {"key": {"type": "string"},
                                               "value": {"type": "string"}}}}]


def profile_call(t, parent, name, call_id, start, end, args, result):
    return t.span(f"execute_tool {name}", start, end, parent, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": args,
        "gen_ai.tool.call.result": result})


def profile_tools() -> list:
    """Agent Framework's shape: no memory spans, memory behind tools, definitions on
    invoke_agent only, tool spans as children of invoke_agent."""
    t1, t2 = Trace(7), Trace(8)
    traces = []
    for t, name, start, read, wrote, gen_end in ((t1, "alice", 0, "v0", "formal", 5000),
                                                (t2, "bob", 1000, "v0", "casual", 2500)):
        a = agent(t, name, start, gen_end + 1000)
        t.spans[-1]["attributes"].append(kv("gen_ai.tool.definitions", PROFILE_DEFS))
        chat(t, a, start, start + 100)
        profile_call(t, a, "read_profile", f"{name}_1", start + 110, start + 120,
                     {"key": "tone"}, read)
        chat(t, a, start + 130, gen_end)
        profile_call(t, a, "write_profile", f"{name}_2", gen_end + 10, gen_end + 20,
                     {"key": "tone", "value": wrote}, "ok")
        chat(t, a, gen_end + 30, gen_end + 900)
        traces.append(t)
    return traces


def one_trace(gap: str) -> list:
    """The lost update of memory("lost") with both agents in one trace, and one gap."""
    t = Trace(6)
    editor = "memory_updater" if gap == "overlap" else "memory_editor"
    up = agent(t, "memory_updater", 0, 9500)
    if gap == "unknown_parent":
        # A framework's own agent span (not a GenAI span) nested in the updater.
        ed = t.span("LangGraph editor", 1000, 3300, up, {"openinference.span.kind": "CHAIN"})
    else:
        ed = agent(t, editor, 1000, 3300)
    search(t, up, 0, 50, records=rec("likes tea"))
    chat(t, up, 100, 8000)
    search(t, ed, 1000, 1050, records=rec("likes tea"))
    chat(t, ed, 1100, 3000)
    update(t, ed, 3100, 3200, records=rec("likes coffee"), record_id="profile")
    update(t, up, 8100, 8200, records=rec("likes tea; vegan"), record_id="profile")
    if gap == "orphan":
        # The sampler kept the steps and dropped both invocations; children still name them.
        t.spans = [s for s in t.spans if not s["name"].startswith("invoke_agent")]
    return [t]


def mistyped_agent() -> list:
    """phantom_tool.json, the second invocation's gen_ai.agent.name an integer."""
    t1, t2 = phantom(False)
    for s in t2.spans:
        for a in s["attributes"]:
            if a["key"] == "gen_ai.agent.name":
                a["value"] = {"intValue": "7"}
    return [t1, t2]


def write(name: str, traces: list) -> None:
    with open(os.path.join(HERE, name), "w") as f:
        for t in traces:
            f.write(t.document() + "\n")


def main() -> None:
    write("memory_lost_update.json", memory("lost"))
    write("memory_occ.json", memory("occ"))
    write("memory_versions_only.json", memory("versions"))
    write("memory_unidentified.json", memory("unidentified"))
    write("tool_reordering.json", tools(False))
    write("tool_sequenced.json", tools(True))
    write("phantom_tool.json", phantom(False))
    write("phantom_signature.json", phantom(True))
    write("profile_tools.json", profile_tools())
    os.makedirs(os.path.join(HERE, "gaps"), exist_ok=True)
    for gap in ("one_trace", "orphan", "unknown_parent", "overlap"):
        write(f"gaps/{gap}.json", one_trace(gap))
    write("gaps/mistyped_agent.json", mistyped_agent())
    with open(os.path.join(HERE, "malformed.json"), "w") as f:
        f.write('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"02",'
                '"startTimeUnixNano":"20","endTimeUnixNano":"10"}]}]}]}\n')


if __name__ == "__main__":
    main()
