"""The pytest plugin (`pytest --agentsim-suite PATH`), run in a child pytest as a user runs it:
with the wheel installed its `pytest11` entry point loads it, otherwise `-p` does."""

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import agentsim

ROOT = Path(__file__).resolve().parents[3]
SOURCES = Path(__file__).resolve().parents[1]


def _installed() -> bool:
    return any(ep.value == "agentsim.pytest_plugin" for ep in entry_points(group="pytest11"))


def child_pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    plugin = []
    if not _installed():
        plugin = ["-p", "agentsim.pytest_plugin"]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCES), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *plugin, *args],
        cwd=cwd, env=env, capture_output=True, text=True)


def test_each_claim_of_the_example_suite_is_one_passing_item(tmp_path: Path):
    passed, failed = agentsim.check_suite("scenarios/examples", cwd=ROOT)
    assert failed == [] and len(passed) >= 9
    done = child_pytest("--agentsim-suite", "scenarios/examples", "--rootdir", str(tmp_path),
                        str(tmp_path), cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"collected {len(passed)} items" in done.stdout, done.stdout
    assert f"{len(passed)} passed" in done.stdout.splitlines()[-1], done.stdout
    for case in passed:
        assert f"{case.file}::line {case.line}: {case.name}" in done.stdout, case


def test_a_failed_claim_fails_its_item_with_the_replay_line(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    example = (ROOT / "scenarios/examples/edit-review.toml").read_text()
    (suite / "broken.toml").write_text(
        example + '\n[[expect]]\nname = "vanilla keeps doc fresh"\nanomaly = "A1"\n'
          'runtime = "vanilla"\nnever = true\ntrials = 50\n')
    (suite / "notes.toml").write_text(example[:example.index("[[expect]]")])
    done = child_pytest("--agentsim-suite", "suite", str(suite), cwd=tmp_path)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "1 failed, 3 passed, 1 skipped" in out.splitlines()[-1], out
    assert "FAIL  suite/broken.toml:" in out and "vanilla keeps doc fresh" in out, out
    assert "replay: agentsim replay 'scenario=suite/broken.toml runtime=vanilla" in out, out
    assert "suite/notes.toml: no [[expect]]" in out, out


def test_a_bad_file_is_a_collection_error_with_the_binarys_message(tmp_path: Path):
    (tmp_path / "bad.toml").write_text(
        (ROOT / "scenarios/examples/edit-review.toml").read_text()
        + '\n[[expect]]\nanomaly = "A9"\nnever = true\n')
    done = child_pytest("--agentsim-suite", "bad.toml", "--rootdir", str(tmp_path),
                        str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr  # pytest: interrupted
    assert "1 error during collection" in done.stdout, done.stdout
    assert "agentsim test exited 2: " in done.stdout, done.stdout
    assert "bad.toml:" in done.stdout, done.stdout


def test_without_the_option_the_plugin_adds_nothing(tmp_path: Path):
    done = child_pytest("--rootdir", str(tmp_path), str(tmp_path), cwd=tmp_path)
    assert done.returncode == 5, done.stdout + done.stderr  # pytest: no tests collected
    assert "--agentsim-suite" in child_pytest("--help", cwd=tmp_path).stdout
