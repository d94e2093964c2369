"""The pytest plugin: `pytest --agentsim-suite scenarios/` runs `[[expect]]` claims as tests.

Registered through the `pytest11` entry point, so installing the wheel makes the option
known; without `--agentsim-suite` it adds nothing. With it, the plugin runs `agentsim test
PATH... --json` once when pytest collects, and adds one item per claim (`FILE::line N:
NAME`): a passed claim passes, a failed one fails with its evidence and replay line, a claim
that cannot be told fails too (a gate never passes on *cannot tell*), a file with nothing to
test is a skipped item. A suite the binary refuses (a bad file: its message names the file,
line and column) is a collection error carrying that message and the exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Literal, Optional, Union

import pytest
from _pytest._code.code import TerminalRepr

from ._bin import find_agentsim_bin
from .api import AgentsimError, Case, Json, run_json, suite_cases

# pytest's traceback styles (`--tb`).
Style = Literal["long", "short", "line", "no", "native", "value", "auto"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentsim", "agentsim scenario suites")
    group.addoption(
        "--agentsim-suite", action="append", default=[], metavar="PATH",
        help="run the [[expect]] claims of the scenario files under PATH (file or folder; "
             "repeatable) as test items, one per claim, with `agentsim test`",
    )
    group.addoption(
        "--agentsim-filter", default=None, metavar="TEXT",
        help="with --agentsim-suite: keep the claims whose `file:line name` contains TEXT "
             "(`agentsim test --filter`)",
    )


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    paths = config.getoption("agentsim_suite")
    if not paths:
        return
    suite = Suite.from_parent(session, name="agentsim-suite", nodeid="agentsim-suite")
    suite.paths = list(paths)
    suite.filter = config.getoption("agentsim_filter")
    # Collected as pytest collects a file: counted in "collected N items", and a suite the
    # binary refuses is a collection error (pytest stops before running anything, exit 2).
    session.ihook.pytest_collectstart(collector=suite)
    report = session.ihook.pytest_make_collect_report(collector=suite)
    session.ihook.pytest_collectreport(report=report)
    if report.passed:
        items.extend(x for x in report.result if isinstance(x, pytest.Item))


class SuiteRefused(Exception):
    """`agentsim test` printed no report: the binary's message and exit code."""


class Suite(pytest.Collector):
    """The claims of the `--agentsim-suite` paths, from one `agentsim test --json` run."""

    paths: list[str]
    filter: Optional[str]

    def collect(self) -> list[pytest.Item]:
        cwd = self.config.invocation_params.dir
        args = ["test", *self.paths, *(["--filter", self.filter] if self.filter else [])]
        try:
            report = run_json(args, ok=(0, 1), cwd=cwd, binary=find_agentsim_bin())
        except FileNotFoundError as e:
            raise SuiteRefused(str(e)) from None
        except AgentsimError as e:
            if e.report is None:
                raise SuiteRefused(f"agentsim test exited {e.returncode}: {e.message}") from None
            report = e.report  # exit 2 with a report: the cases that cannot be told fail below
        out = list(self._items(report, Path(cwd)))
        if not any(isinstance(x, Claim) for x in out):
            raise SuiteRefused(f"no [[expect]] claim under {', '.join(self.paths)}")
        return out

    def repr_failure(  # type: ignore[override]  # Collector's takes no style
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> Union[str, TerminalRepr]:
        if isinstance(excinfo.value, SuiteRefused):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def _items(self, report: Json, cwd: Path) -> Iterator[pytest.Item]:
        for f in report.get("files", []):
            if f.get("skipped"):
                yield Skipped.from_parent(self, name=f"{f['file']}::skipped",
                                          reason=f"{f['file']}: {f['skipped']}")
        for case in suite_cases(report):
            yield Claim.from_parent(self, name=f"{case.file}::line {case.line}: {case.name}",
                                    case=case, path_=cwd / case.file)


class Claim(pytest.Item):
    """One `[[expect]]` claim; its outcome is the binary's."""

    def __init__(self, *, case: Case, path_: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.scenario_path = path_

    def runtest(self) -> None:
        if self.case.outcome != "pass":
            raise ClaimFailed(self.case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Optional[Style] = None) -> Union[str, TerminalRepr]:
        if isinstance(excinfo.value, ClaimFailed):
            return describe(self.case)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Any, Optional[int], str]:
        return self.scenario_path, self.case.line - 1, f"{self.case.location} {self.case.name}"


class Skipped(pytest.Item):
    def __init__(self, *, reason: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reason = reason

    def runtest(self) -> None:
        pytest.skip(self.reason)


class ClaimFailed(Exception):
    def __init__(self, case: Case) -> None:
        super().__init__(describe(case))


def describe(case: Case) -> str:
    """The claim as `agentsim test` prints it: outcome, location, name, how, evidence, replay."""
    f = case.fields
    how = [str(f.get("by", "simulate"))]
    if f.get("seed") is not None:
        how.append(f"seed {f['seed']}")
    if f.get("trials") is not None:
        how.append(f"{f['trials']} trials")
    word = {"fail": "FAIL"}.get(case.outcome, "CANNOT TELL")
    lines = [f"{word}  {case.location}  {case.name} [{', '.join(how)}]: {case.evidence}"]
    if case.replay:
        lines.append(f"      replay: {case.replay}")
    return "\n".join(lines)

