"""``agentsim serve`` for the live tests: started on free loopback ports, fed by the frameworks'
own OTLP exporters (or by a router), stopped with SIGTERM, and its ``--report`` read back.

``serve`` prints the addresses it bound on stderr when it starts (``--listen 127.0.0.1:0``
and ``--grpc 127.0.0.1:0`` pick free ports); :class:`Serve` waits for that line. Its report
names the input ``<otlp>``, so a ``detect --json`` report on a file is compared with the file's
path replaced by that name (:func:`detect_as_served`).
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

# "agentsim serve: listening on http://127.0.0.1:PORT (OTLP/HTTP), 127.0.0.1:PORT (OTLP/gRPC)"
_LISTENING = re.compile(r"listening on http://(\S+) \(OTLP/HTTP\)(?:, (\S+) \(OTLP/gRPC\))?")
SERVED_NAME = "<otlp>"
START_S = 30.0
STOP_S = 60.0


class Serve:
    """One ``agentsim serve`` on loopback; ``http`` and ``grpc`` are its bound addresses."""

    def __init__(self, binary: str, folder: Path, *more: str, grpc: bool = True) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.report = folder / "report.json"
        self.alerts = folder / "alerts.jsonl"
        args = [binary, "serve", "--listen", "127.0.0.1:0",
                "--grpc", "127.0.0.1:0" if grpc else "off",
                "--report", str(self.report), "--alerts", str(self.alerts), *more]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.stderr: list[str] = []
        found = threading.Event()
        self.http: str | None = None
        self.grpc: str | None = None

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                m = _LISTENING.search(line)
                if m and not found.is_set():
                    self.http, self.grpc = m.group(1), m.group(2)
                    found.set()
            found.set()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not found.wait(START_S) or self.http is None:
            self.proc.kill()
            raise RuntimeError(f"agentsim serve did not start: {''.join(self.stderr)}")

    @property
    def traces_url(self) -> str:
        return f"http://{self.http}/v1/traces"

    def stop(self) -> dict:
        """SIGTERM; ``serve`` must exit 0 with its report written. Returns the report."""
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(STOP_S)
        self._reader.join(5)
        assert code == 0, f"agentsim serve exited {code}: {''.join(self.stderr)}"
        return json.loads(self.report.read_text())

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def detect_as_served(binary: str, path: Path, *more: str) -> dict:
    """``agentsim detect PATH --from otel --json``, with PATH named as ``serve`` names its input."""
    out = subprocess.run([binary, "detect", str(path), "--from", "otel", "--json", *more],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"agentsim detect {path} {more}: {out.stderr}"
    return json.loads(out.stdout.replace(str(path), SERVED_NAME))


def assert_served_as_detected(name: str, serve: Serve, report: dict, offline: dict) -> None:
    """``report`` (what ``serve`` wrote on SIGTERM) is ``offline`` (:func:`detect_as_served` on
    the run's file), and each A1 and A6 witness ``offline`` lists was alerted as it was found (a
    detection on part of the spans may have alerted more). ``name`` names the receiver."""
    assert report == offline, (name, json.dumps(report)[:2000], json.dumps(offline)[:2000])
    alerts = [json.loads(line) for line in serve.alerts.read_text().splitlines()]
    for a in ("A1", "A6"):
        listed = len(offline["anomalies"].get(a, []))
        alerted = sum(1 for line in alerts if line["anomaly"] == a)
        assert alerted >= listed, (name, a, alerts)


def post_json(url: str, doc: dict, timeout: float = 30.0) -> int:
    """POSTs one OTLP/JSON ``ExportTraceServiceRequest``; the HTTP status."""
    body = json.dumps(doc).encode()
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with _NO_PROXY.open(request, timeout=timeout) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


# Loopback only: a proxy from the environment must not see the spans.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def synthetic_batch(first_trace: int, traces: int) -> dict:
    """``traces`` GenAI traces of four spans each (``invoke_agent``, ``chat``, two
    ``execute_tool``), trace numbers from ``first_trace``: the load the throughput figure uses."""
    spans = []
    for t in range(first_trace, first_trace + traces):
        trace_id = f"{t + 1:032x}"
        root, chat = f"{4 * t + 1:016x}", f"{4 * t + 2:016x}"
        start = 1_700_000_000_000_000_000 + t * 10_000_000
        agent = f"agent-{t % 8}"

        def span(span_id: str, parent: str, name: str, offset: int, attrs: dict) -> dict:
            return {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name,
                    "kind": 1, "startTimeUnixNano": str(start + offset),
                    "endTimeUnixNano": str(start + offset + 1_000_000),
                    "attributes": [{"key": k, "value": {"stringValue": v}}
                                   for k, v in attrs.items()]}

        spans.append(span(root, "", f"invoke_agent {agent}", 0,
                          {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}))
        spans.append(span(chat, root, "chat gpt-4o", 1_000,
                          {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}))
        for i, tool in enumerate(("lookup", "notify")):
            spans.append(span(f"{4 * t + 3 + i:016x}", root, f"execute_tool {tool}",
                              2_000_000 + i * 2_000_000,
                              {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                               "gen_ai.tool.call.id": f"call-{t}-{i}"}))
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": "agentsim-load"}}]},
        "scopeSpans": [{"scope": {"name": "agentsim.load"}, "spans": spans}]}]}


def load(url: str, spans: int, batch: int) -> dict:
    """Sends ``spans`` synthetic spans in batches of ``batch`` over one keep-alive connection,
    encoding each batch as it goes (as an exporter does); retries a 429/503 after a pause.
    Returns what was sent and how fast."""
    import http.client
    import time
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.connect()
    # As urllib3 (the OTLP/HTTP exporter's requests) sets it: without it the body's last
    # segment waits on the receiver's delayed ACK, about 40 ms a request.
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    per = max(1, batch // 4)
    sent = refused = 0
    began, cpu = time.perf_counter(), time.process_time()
    trace = 0
    while sent < spans:
        body = json.dumps(synthetic_batch(trace, per)).encode()
        while True:
            conn.request("POST", parts.path, body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                break
            if response.status not in (429, 503):
                raise RuntimeError(f"{url}: HTTP {response.status}")
            refused += 1
            time.sleep(float(response.getheader("Retry-After") or 1))
        trace += per
        sent += 4 * per
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    conn.close()
    return {"spans": sent, "batch": 4 * per, "seconds": round(elapsed, 3),
            "spans_per_s": round(sent / elapsed), "client_cpu_s": round(cpu, 3),
            "refused": refused}


def main(argv: list[str] | None = None) -> int:
    """``python -m agentsim_corpus.live --spans N --batch B [--url URL | --agentsim BIN]``:
    the HTTP/JSON throughput figure (docs/benchmarks.md). Without ``--url`` it starts its own
    ``serve`` (``--grpc off``) and checks at the end that ``serve`` kept every span sent."""
    import argparse
    import tempfile

    p = argparse.ArgumentParser(prog="python -m agentsim_corpus.live")
    p.add_argument("--spans", type=int, default=200_000)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--url")
    p.add_argument("--agentsim", default="agentsim")
    a = p.parse_args(argv)
    if a.url:
        print(json.dumps(load(a.url, a.spans, a.batch)))
        return 0
    with tempfile.TemporaryDirectory() as folder, \
            Serve(a.agentsim, Path(folder), grpc=False) as serve:
        figure = load(serve.traces_url, a.spans, a.batch)
        report = serve.stop()
        stopped = f"stopped; {figure['spans']} spans kept, 0 dropped"
        kept = any(stopped in line for line in serve.stderr)
        figure["kept_by_serve"] = kept
        figure["records"] = report.get("ingest", {}).get("records")
        print(json.dumps(figure))
        return 0 if kept else 1


if __name__ == "__main__":
    raise SystemExit(main())
