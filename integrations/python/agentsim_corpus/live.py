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
import subprocess
import threading
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
