"""What the corpus tests ask of the ``agentsim`` binary about a run's files: its verdicts from
``detect --from``, and the same after ``ingest`` saved the history and ``detect`` read it back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

V, H, C = "violated", "holds", "cannot_tell"
LATTICE = ("A1", "A2", "A3", "A6")
# The note `--from otel` gives when it finds OpenInference spans and reads them as such.
OPENINFERENCE_NOTE = "spans are OpenInference (openinference.span.kind); read as --from openinference"


def agentsim_json(binary: str, *args: str) -> dict:
    """`agentsim ARGS --json`, which must exit 0, as a dict."""
    out = subprocess.run([binary, *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, f"agentsim {' '.join(args)}: {out.stderr}"
    return json.loads(out.stdout)


def detect(binary: str, source: str, path: Path, *more: str) -> dict:
    """``agentsim detect PATH --from SOURCE --json``: the report (the run must exit 0)."""
    out = subprocess.run([binary, "detect", str(path), "--from", source, "--json", *more],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"agentsim detect --from {source} {path} {more}: {out.stderr}"
    return json.loads(out.stdout)


def detect_history(binary: str, path: Path, *more: str) -> dict:
    """``agentsim detect HISTORY --json``: the report on a saved history."""
    out = subprocess.run([binary, "detect", str(path), "--json", *more],
                         capture_output=True, text=True)
    assert out.returncode == 0, f"agentsim detect {path} {more}: {out.stderr}"
    return json.loads(out.stdout)


def ingested(binary: str, source: str, path: Path, folder: Path, *more: str) -> dict:
    """``agentsim ingest`` to a history and a report in ``folder``, then ``detect HISTORY
    --ingest-report``: what a user who saves the history gets back (A4's reason names the
    history, so it is renamed to the input for comparison)."""
    history, report = folder / f"{source}.history.jsonl", folder / f"{source}.report.json"
    args = [binary, "ingest", source, str(path), *more, "-o", str(history), "--report", str(report)]
    out = subprocess.run(args, capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(args)}: {out.stderr}"
    saved = detect_history(binary, history, "--ingest-report", str(report))
    return json.loads(json.dumps(saved).replace(str(history), str(path)))


def same_answer(saved: dict, direct: dict) -> None:
    """A saved history read back answers as ``detect --from`` did on the trace."""
    for key in ("exhibits", "verdicts", "ingest"):
        assert saved[key] == direct[key], (key, saved[key], direct[key])


def verdicts(report: dict) -> tuple:
    """The report's verdicts on the lattice anomalies, in order."""
    return tuple(report["verdicts"][a]["verdict"] for a in LATTICE)
