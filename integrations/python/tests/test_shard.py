"""The Dask driver on a LocalCluster of 2 worker processes: sharded twins, a sweep, a
simulation and the split-view twin (partial fact rows), merged by `agentsim merge`, print the bytes the single run prints and write the
same table files; so does a sharded exploration (its text but for the seconds); a shard that
fails and partials that do not cover the trials raise."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dask.distributed import Client, LocalCluster

import agentsim.shard as agentsim_shard


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    c = Client(cluster)
    assert len(c.scheduler_info()["workers"]) == 2
    yield c
    c.close()
    cluster.close()


def single(binary: str, root: Path, args: list) -> bytes:
    done = subprocess.run([binary, *args], cwd=root, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("args", [
    ["twins", "--trials", "24", "--seed", "5"],
    ["sweep", "scenarios/sweeps/contention.toml", "--trials", "6"],
    ["simulate", "scenarios/examples/triage.toml", "--trials", "50", "--runtime", "si"],
    ["split-view", "scenarios/split-view.toml", "--trials", "40"],
])
@pytest.mark.parametrize("shards", [1, 5])
def test_merged_bytes_equal_the_single_run(client, agentsim_binary, repo_root, tmp_path, args,
                                           shards):
    for fmt in ([], ["--json"]):
        if args[0] in ("simulate", "split-view"):
            out_flags = []
        else:
            out_flags = ["--out", str(tmp_path / f"single{fmt}")]
        want = single(agentsim_binary, repo_root, args + fmt + out_flags)
        merged_out = [] if not out_flags else ["--out", str(tmp_path / f"merged{fmt}")]
        got = agentsim_shard.run(client, args + fmt + merged_out, shards,
                                 binary=agentsim_binary, cwd=str(repo_root),
                                 partial_dir=str(tmp_path / f"parts{shards}{fmt}"))
        assert got.stdout == want
        assert len(list((tmp_path / f"parts{shards}{fmt}").glob("*.json"))) == shards
        if out_flags:
            assert files(tmp_path / f"merged{fmt}") == files(tmp_path / f"single{fmt}")
            assert files(tmp_path / f"single{fmt}"), "the single run wrote its tables"


def no_seconds(text: bytes) -> str:
    """The explore text without each header line's wall time (`, 0.12 s`)."""
    return re.sub(r"(?m)^(explore .*), [0-9.]+ s$", r"\1", text.decode())


@pytest.mark.parametrize("scenario,flags", [
    ("scenarios/explore/stale-review.toml", ["--coverage", "--runtime", "vanilla,ssi"]),
    ("scenarios/explore/effect-order.toml", ["--no-reduction"]),
    ("scenarios/examples/triage.toml", ["--steps-per-agent", "6"]),
])
@pytest.mark.parametrize("shards", [1, 3])
def test_a_sharded_exploration_prints_the_single_run(client, agentsim_binary, repo_root, tmp_path,
                                                     scenario, flags, shards):
    for fmt in (["--json"], []):
        want = single(agentsim_binary, repo_root, ["explore", scenario, *flags, *fmt])
        got = agentsim_shard.explore(client, scenario, shards, [*flags, *fmt],
                                     binary=agentsim_binary, cwd=str(repo_root),
                                     partial_dir=str(tmp_path / f"parts{fmt}"))
        if fmt:
            assert got.stdout == want
        else:
            assert no_seconds(got.stdout) == no_seconds(want)
            assert got.stdout.decode().startswith("explore ")
        assert len(list((tmp_path / f"parts{fmt}").glob("*.json"))) == shards


def test_a_stopped_exploration_raises_the_merge_exit(client, agentsim_binary, repo_root):
    with pytest.raises(agentsim_shard.MergeError, match="cannot tell") as e:
        agentsim_shard.explore(client, "scenarios/explore/stale-review-ssi.toml", 2,
                               ["--max-schedules", "1"], binary=agentsim_binary,
                               cwd=str(repo_root))
    assert e.value.returncode == 2


def test_a_failing_shard_raises_with_its_stderr(client, agentsim_binary, repo_root):
    with pytest.raises(agentsim_shard.ShardError, match="no-such.toml"):
        agentsim_shard.run(client, ["sweep", "no-such.toml"], 2, binary=agentsim_binary,
                           cwd=str(repo_root))


def test_merge_flags_are_the_output_flags():
    args = ["twins", "--trials", "9", "--json", "--out", "d", "--threads", "2", "--no-write"]
    assert agentsim_shard.merge_flags(args) == ["--json", "--out", "d", "--no-write"]
    assert agentsim_shard.merge_flags(["sweep", "f.toml", "--out=x"]) == ["--out=x"]


def test_the_command_line_runs_a_local_cluster(agentsim_binary, repo_root):
    args = ["twins", "--trials", "8", "--no-write"]
    want = single(agentsim_binary, repo_root, args)
    done = subprocess.run(
        [sys.executable, "-m", "agentsim.shard", "--workers", "2", "--shards", "3",
         "--binary", agentsim_binary, "--cwd", str(repo_root), "--", *args],
        cwd=repo_root, capture_output=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == want
