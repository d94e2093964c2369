"""strands-agents/harness-sdk #3028, "preserve failed status reported by graph nodes" (A3): a
node of a Strands ``Graph`` that is itself a multi-agent system (a ``Swarm``) fails, but the
graph records it as completed, so the nodes after it run on what the failed attempt left.

The pull request's description: "A graph node executor that is itself a MultiAgentBase can
return a NodeResult with status FAILED, but the graph overwrote it to COMPLETED and routed the
node to completed_nodes". Released in strands-agents 1.46.0 (a FAILED result routes the node to
``failed_nodes``); affected: 1.45.0, the last release without it.

The run: a graph of two nodes, ``drafting`` (a ``Swarm`` of one agent, ``drafter``) then
``sending`` (agent ``sender``), one edge between them, taken when the graph records
``drafting`` as completed (the condition a user writes to send only a finished draft).
``drafter`` writes a refund draft into the shared profile (``write_profile``), then its next
generation fails (the scripted server answers 400, as a provider does for a request it
refuses), so the swarm ends FAILED. On 1.45.0
the graph marks ``drafting`` completed and runs ``sender``, which reads the draft
(``read_profile``) and sends the refund (``send_refund``): it acted on an attempt that failed.
On 1.46.0 ``drafting`` is a failed node, the edge's condition is false and ``sender`` never
runs. (Without the condition ``sender`` runs on both releases: the pull request changes what the
graph records, which conditional edges read.)

Traced by Strands' own telemetry (an ``invoke_agent`` span per agent invocation, ERROR for the
one whose generation failed; an ``execute_tool`` span per call), read with the corpus's mapping
of the profile tools (``read_profile``/``write_profile`` read and write ``profile/{key}``). The
truth is the application's own log: what was written, read and sent, and the graph's status.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..llm_server import Reply, ScriptedLLM
from ..otel_export import capture, install
from ..runs import PROFILE_MAP

REPORT = "strands-agents/harness-sdk#3028"
AFFECTED = "1.45.0"
FIXED = "1.46.0"


def run(folder: Path) -> dict[str, Any]:
    """Runs the graph once, writing ``folder/spans.jsonl`` and ``folder/map.toml``; returns what
    the application saw."""
    from importlib.metadata import version

    from strands import Agent, tool
    from strands.models.openai import OpenAIModel
    from strands.multiagent import GraphBuilder, Swarm

    install()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "map.toml").write_text(PROFILE_MAP)
    profile: dict[str, str] = {}
    log: list[dict[str, str]] = []

    @tool
    def write_profile(key: str, value: str) -> str:
        """Write one field of the shared profile."""
        profile[key] = value
        log.append({"op": "write", "key": key, "value": value})
        return "ok"

    @tool
    def read_profile(key: str) -> str:
        """Read one field of the shared profile."""
        log.append({"op": "read", "key": key, "value": profile.get(key, "")})
        return profile.get(key, "")

    @tool
    def send_refund(order: str, amount: str) -> str:
        """Send a refund to the customer."""
        log.append({"op": "send", "key": order, "value": amount})
        return f"sent {amount} on order {order}"

    llm = ScriptedLLM({
        "drafter": [Reply.tools(("write_profile", {"key": "refund-9", "value": "500 dollars"})),
                    Reply.fail("This request was refused by the provider.")],
        "sender": [Reply.tools(("read_profile", {"key": "refund-9"})),
                   Reply.tools(("send_refund", {"order": "9", "amount": "500 dollars"})),
                   Reply.text("sent")],
    })
    base = llm.start()
    try:
        def agent(name: str, tools: list[Any]) -> Agent:
            model = OpenAIModel(client_args={"base_url": base, "api_key": "none",
                                             "max_retries": 0}, model_id=name)
            return Agent(name=name, model=model, tools=tools, callback_handler=None)

        builder = GraphBuilder()
        builder.add_node(Swarm([agent("drafter", [write_profile])]), "drafting")
        builder.add_node(agent("sender", [read_profile, send_refund]), "sending")
        # Send only once the draft is done: the graph's own record of which nodes completed,
        # which the pull request makes true for a failed multi-agent node.
        def drafted(state: Any) -> bool:
            return any(n.node_id == "drafting" for n in state.completed_nodes)

        builder.add_edge("drafting", "sending", condition=drafted)
        builder.set_entry_point("drafting")
        graph = builder.build()
        with capture(folder / "spans.jsonl"):
            try:
                result = graph("Refund order 9.")
                status = str(result.status.value)
                nodes = {n: str(r.status.value) for n, r in result.results.items()}
            except Exception as e:  # a release whose graph raises on the failure
                status, nodes = f"raised {type(e).__name__}", {}
    finally:
        llm.stop()
    sent = [e for e in log if e["op"] == "send"]
    return {
        "report": REPORT,
        "version": version("strands-agents"),
        "graph_status": status,
        "node_status": nodes,
        "log": log,
        "sender_ran": llm.requested("sender") > 0,
        # What was lost: a refund sent on the draft of an attempt that failed. The failed
        # drafter is the only writer, so any read that found a value read its write.
        "sent_on_failed_draft": bool(sent),
        "a3": any(e["op"] == "read" and e["value"] for e in log),
    }
