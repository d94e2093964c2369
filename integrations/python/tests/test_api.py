"""The API over the binary (agentsim.detect, explore, check_suite, find_agentsim_bin,
`python -m agentsim`), against the binary it finds: the wheel's when the wheel is installed
(CI's wheel step sets AGENTSIM_EXPECT_WHEEL=1 and checks that it is), $AGENTSIM otherwise."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentsim

ROOT = Path(__file__).resolve().parents[3]
README_TRACE = "scenarios/traces/otel/memory_lost_update.json"
BROKEN_CLAIM = """
[[expect]]
name = "vanilla keeps doc fresh"
anomaly = "A1"
runtime = "vanilla"
never = true
trials = 50
"""


@pytest.fixture
def broken_suite(tmp_path: Path) -> Path:
    """edit-review with one claim the papers deny: A1 never under vanilla."""
    f = tmp_path / "broken.toml"
    f.write_text((ROOT / "scenarios/examples/edit-review.toml").read_text() + BROKEN_CLAIM)
    return f


def test_the_binary_is_the_wheels_when_the_wheel_is_installed():
    binary = agentsim.find_agentsim_bin()
    assert os.access(binary, os.X_OK), binary
    if os.environ.get("AGENTSIM_EXPECT_WHEEL") == "1":
        assert "AGENTSIM" not in os.environ
        assert Path(binary).parent == Path(sys.executable).parent, binary
        assert not Path(agentsim.__file__).is_relative_to(ROOT), agentsim.__file__
        assert shutil.which("cargo") is None, "the wheel step runs with no cargo on PATH"
        shown = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
        assert shown.split() == ["agentsim", agentsim.__version__], shown


def test_python_dash_m_runs_the_binary():
    env = dict(os.environ)
    if Path(agentsim.__file__).is_relative_to(ROOT):  # the sources, not an installed wheel
        env["PYTHONPATH"] = str(Path(agentsim.__file__).parents[1])
    done = subprocess.run([sys.executable, "-m", "agentsim", "--version"], capture_output=True,
                          text=True, check=True, env=env)
    assert done.stdout.startswith("agentsim "), done.stdout


def test_detect_finds_the_readme_lost_update():
    report = agentsim.detect(README_TRACE, source="otel", cwd=ROOT)
    assert report["exhibits"] == ["A1"]
    (witness,) = report["anomalies"]["A1"]
    assert (witness["reader_agent"], witness["writer_agent"]) == ("memory_updater", "memory_editor")
    assert report["ingest"]["decidable"]["A3"]["status"] == "undecidable"


def test_detect_takes_records_as_the_file_would():
    path = ROOT / "scenarios/histories/a1_stale_generation.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by_path = agentsim.detect(path)
    assert by_path["exhibits"] == ["A1"]
    for by_records in (agentsim.detect(records), agentsim.detect(iter(records))):
        # The same report, but for where the input came from ("-": stdin) in A4's reason.
        for key in ("anomalies", "exhibits", "level", "L1_struct"):
            assert by_records[key] == by_path[key], key
        assert ({k: v["verdict"] for k, v in by_records["verdicts"].items()}
                == {k: v["verdict"] for k, v in by_path["verdicts"].items()})


def test_detect_bad_input_raises_with_the_binarys_message_and_code(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"agent": "a1"}\n')
    with pytest.raises(agentsim.AgentsimError) as e:
        agentsim.detect(bad)
    assert e.value.returncode == 2
    assert "bad.jsonl" in e.value.message and ":1" in e.value.message, e.value.message
    with pytest.raises(agentsim.AgentsimError, match="exited 2"):
        agentsim.detect(tmp_path / "missing.json", source="otel")
    with pytest.raises(ValueError, match="source must be one of"):
        agentsim.detect(bad, source="zipkin")
    with pytest.raises(ValueError, match="records are a history"):
        agentsim.detect([{"agent": "a1"}], source="otel")


def test_explore_reaches_a1_under_vanilla_and_not_under_ssi():
    scenario = "scenarios/explore/stale-review.toml"
    vanilla = agentsim.explore(scenario, cwd=ROOT)
    assert vanilla["complete"] is True
    assert vanilla["anomalies"]["A1"]["reachable"] is True
    assert vanilla["anomalies"]["A1"]["replay"].startswith(f"scenario={scenario} ")
    ssi = agentsim.explore(scenario, runtime="ssi", cwd=ROOT)
    assert ssi["runtime"] == "ssi" and ssi["complete"] is True
    assert ssi["anomalies"]["A1"]["reachable"] is False


def test_explore_cut_by_its_budget_is_cannot_tell_not_an_answer():
    with pytest.raises(agentsim.AgentsimError) as e:
        agentsim.explore("scenarios/examples/triage.toml", args=["--max-schedules", "1"],
                         cwd=ROOT)
    assert e.value.returncode == 2
    assert e.value.report is not None and e.value.report["complete"] is False


def test_check_suite_passes_the_examples_as_agentsim_test_does():
    passed, failed = agentsim.check_suite("scenarios/examples", cwd=ROOT)
    assert failed == []
    text = subprocess.run([agentsim.find_agentsim_bin(), "test", "scenarios/examples"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    assert text.splitlines()[-1] == f"{len(passed)} passed, 0 failed"
    assert all(c.outcome == "pass" and c.location.startswith("scenarios/examples/")
               for c in passed)


def test_check_suite_reports_a_failed_claim_with_its_replay_line(broken_suite: Path):
    passed, failed = agentsim.check_suite(broken_suite)
    assert len(passed) == 3
    (case,) = failed
    assert case.name == "vanilla keeps doc fresh" and case.outcome == "fail"
    assert case.evidence.startswith("50/50 ")
    assert case.replay and case.replay.startswith("agentsim replay 'scenario=")


def test_check_suite_bad_file_raises_naming_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text((ROOT / "scenarios/examples/edit-review.toml").read_text()
                   + '\n[[expect]]\nanomaly = "A9"\nnever = true\n')
    with pytest.raises(agentsim.AgentsimError) as e:
        agentsim.check_suite(bad)
    assert e.value.returncode == 2
    assert "bad.toml:" in e.value.message, e.value.message
