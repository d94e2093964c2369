"""The API: each function runs one `agentsim` command with `--json` and returns its object.

Nothing here decides anything: the binary does, and these functions only carry its JSON out
and its errors up. A non-zero exit the command does not define as an answer raises
`AgentsimError` with the binary's own message (which names the file, line and field) and its
exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence, Union

from ._bin import find_agentsim_bin

PathLike = Union[str, "os.PathLike[str]"]
# A JSON object as the binary prints it.
Json = dict[str, Any]

# `--from` values `agentsim detect` takes (`agentsim detect --help`).
SOURCES = ("otel", "genai", "langgraph", "openinference", "mcp")


class AgentsimError(RuntimeError):
    """`agentsim` refused the input or could not answer.

    `returncode` is the binary's exit code (2: bad input, or *cannot tell*; 130: stopped by a
    signal), `message` its stderr, `command` the argument list, and `report` the JSON object it
    printed before exiting, if any (an exploration a budget stopped prints its partial counts).
    """

    def __init__(self, command: Sequence[str], returncode: int, message: str,
                 report: Optional[Json] = None):
        self.command = list(command)
        self.returncode = returncode
        self.message = message.strip()
        self.report = report
        shown = self.message or "(no message)"
        super().__init__(f"agentsim {' '.join(self.command)} exited {returncode}: {shown}")


class Case(NamedTuple):
    """One `[[expect]]` claim as `agentsim test` ran it (the fields of its `--json` case)."""

    file: str
    line: int
    name: str
    outcome: str  # "pass", "fail" or "cannot_tell"
    evidence: str
    replay: Optional[str]
    fields: Json

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


def run_json(args: Sequence[str], *, ok: Sequence[int] = (0,), stdin: Optional[str] = None,
             cwd: Optional[PathLike] = None, binary: Optional[str] = None) -> Json:
    """Runs `agentsim ARGS --json` and returns the object it prints.

    An exit code outside `ok` raises `AgentsimError`; so does output that is not one JSON
    object (the command does not take `--json`, say).
    """
    command = [*map(str, args), "--json"]
    exe = binary or find_agentsim_bin()
    done = subprocess.run([exe, *command], input=stdin, capture_output=True, text=True,
                          cwd=None if cwd is None else os.fspath(cwd))
    report = _parse(done.stdout)
    if done.returncode not in ok:
        raise AgentsimError(command, done.returncode, done.stderr, report)
    if report is None:
        raise AgentsimError(command, done.returncode,
                            f"printed no JSON object on stdout: {done.stdout[:200]!r} "
                            f"{done.stderr.strip()}", None)
    return report


def detect(path_or_records: Union[PathLike, Iterable[Mapping[str, Any]]],
           source: Optional[str] = None, *, args: Sequence[str] = (),
           cwd: Optional[PathLike] = None, binary: Optional[str] = None) -> Json:
    """`agentsim detect --json`: the anomalies in a history or a trace.

    `path_or_records` is a file (a JSON Lines history, or with `source` a trace: `"otel"`,
    `"genai"`, `"openinference"`, `"mcp"`, or a `"langgraph"` checkpoint database) or the
    history's operation records themselves (dicts in the history format, docs/ingest.md),
    which are sent on stdin. `args` adds flags (`["--tool-memory", "map.toml"]`). Returns
    the `--json` object: `anomalies`, `exhibits`, `level`, `L1_struct`, `left_out`, and with
    `source` an `ingest` part saying what the input let it decide.
    """
    if source is not None and source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)} (or None for a "
                         f"JSON Lines history), not {source!r}")
    if isinstance(path_or_records, (str, os.PathLike)):
        target, stdin = os.fspath(path_or_records), None
    elif isinstance(path_or_records, (bytes, Mapping)):
        raise TypeError("path_or_records is a path or an iterable of records (dicts), "
                        f"not {type(path_or_records).__name__}")
    else:
        if source is not None:
            raise ValueError("records are a history already: give source only with a file")
        target = "-"
        stdin = "".join(json.dumps(dict(r), separators=(",", ":")) + "\n"
                        for r in path_or_records)
    cmd = ["detect", target, *(["--from", source] if source else []), *args]
    return run_json(cmd, stdin=stdin, cwd=cwd, binary=binary)


def explore(scenario: PathLike, runtime: Optional[str] = None, *, args: Sequence[str] = (),
            cwd: Optional[PathLike] = None, binary: Optional[str] = None) -> Json:
    """`agentsim explore --json`: every interleaving of a scenario's agents.

    `runtime` is a named runtime or a `+`-joined stack (default: the scenario's). Returns the
    `--json` object (`anomalies` with each one's verdict and shortest replay, `complete`,
    `schedules`, ...). A search a budget stopped is *cannot tell*: `AgentsimError` with exit
    code 2 and the partial report in `.report`.
    """
    cmd = ["explore", os.fspath(scenario), *(["--runtime", runtime] if runtime else []), *args]
    return run_json(cmd, cwd=cwd, binary=binary)


def check_suite(path: Union[PathLike, Sequence[PathLike]], *, args: Sequence[str] = (),
                cwd: Optional[PathLike] = None,
                binary: Optional[str] = None) -> tuple[list[Case], list[Case]]:
    """`agentsim test --json`: the `[[expect]]` claims of scenario files, as (passed, failed).

    `path` is a file or folder (or a list of them), taken as `agentsim test` takes them. A
    failed case carries its evidence and, when a trial shows it, its replay line. A bad file,
    a case that cannot be told, or nothing to test raises `AgentsimError` (exit 2): a gate
    never passes on *cannot tell*.
    """
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    report = run_json(["test", *(os.fspath(p) for p in paths), *args], ok=(0, 1), cwd=cwd, binary=binary)
    passed: list[Case] = []
    failed: list[Case] = []
    for case in suite_cases(report):
        (passed if case.outcome == "pass" else failed).append(case)
    return passed, failed


def suite_cases(report: Mapping[str, Any]) -> list[Case]:
    """The cases of an `agentsim test --json` report, in suite order."""
    out = []
    for f in report.get("files", []):
        for c in f.get("cases", []):
            out.append(Case(file=f["file"], line=int(c["line"]), name=str(c["name"]),
                            outcome=str(c["outcome"]), evidence=str(c.get("evidence", "")),
                            replay=c.get("replay"), fields=dict(c)))
    return out


def _parse(stdout: str) -> Optional[Json]:
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
