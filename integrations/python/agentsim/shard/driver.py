"""The driver: shards as Dask tasks, partials back to the client, `agentsim merge` there.

Why Dask (not Ray): `distributed` is a pure-Python wheel set that installs from PyPI in under
a minute, and a `LocalCluster` runs in the test's own process tree with no daemon to start or
stop (Ray's local mode starts a raylet and a GCS server and pulls a ~60 MB wheel); a real
cluster is a `dask scheduler` and `dask worker ADDRESS` on each machine, or any deployment
package (dask-jobqueue for Slurm/PBS, dask-kubernetes).

What the driver guarantees is only what `agentsim merge` checks: the partials belong together
and cover every trial (for `explore`, every task of the split schedule tree), so the merged
bytes are the single run's. It does not balance load (shards are equal trial ranges, or every
N-th task of the tree) and retries a failed shard only as Dask's `retries` says.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Optional, Sequence

# Flags that decide what the merge prints and writes; a shard ignores them.
_MERGE_SWITCHES = ("--json", "--no-write")
_MERGE_VALUES = ("--out",)


class ShardError(RuntimeError):
    """A shard's `agentsim` exited non-zero (its stderr is the message)."""


class MergeError(RuntimeError):
    """`agentsim merge` refused the partials or failed (exit code and stderr attached)."""

    def __init__(self, returncode: int, stderr: str):
        super().__init__(f"agentsim merge exited {returncode}: {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


def merge_flags(args: Sequence[str]) -> list[str]:
    """The output flags of a command line (`--json`, `--no-write`, `--out DIR`), for the merge."""
    out: list[str] = []
    it = iter(range(len(args)))
    for i in it:
        a = args[i]
        if a in _MERGE_SWITCHES:
            out.append(a)
        elif a in _MERGE_VALUES and i + 1 < len(args):
            out.extend([a, args[i + 1]])
            next(it, None)
        elif any(a.startswith(f + "=") for f in _MERGE_VALUES):
            out.append(a)
    return out


def _shard(binary: str, args: list[str], index: int, count: int, cwd: Optional[str]) -> bytes:
    """Runs on a worker: shard `index` of `count`, returning the partial's bytes."""
    with tempfile.TemporaryDirectory(prefix="agentsim-shard-") as tmp:
        part = os.path.join(tmp, "partial.json")
        cmd = [binary, *args, "--shard", f"{index}/{count}", "--partial-out", part]
        done = subprocess.run(cmd, cwd=cwd, capture_output=True)
        if done.returncode != 0:
            raise ShardError(
                f"shard {index}/{count}: {' '.join(cmd)} exited {done.returncode}: "
                f"{done.stderr.decode(errors='replace').strip()}"
            )
        return Path(part).read_bytes()


def run(
    client,
    args: Sequence[str],
    shards: int,
    *,
    binary: str = "agentsim",
    worker_binary: Optional[str] = None,
    cwd: Optional[str] = None,
    partial_dir: Optional[str] = None,
    retries: int = 0,
) -> subprocess.CompletedProcess:
    """Runs `agentsim ARGS` as `shards` Dask tasks on `client` and merges them locally.

    `binary` is the client's agentsim (it merges), `worker_binary` the path on the workers
    (default: the same); `cwd` is where both run (relative scenario paths resolve there).
    The partials are written to `partial_dir` (default: a temporary folder, removed after).
    Returns the merge's completed process: `stdout` holds the bytes the unsharded command
    prints. Raises `ShardError` if a shard fails and `MergeError` if the merge refuses.
    """
    if shards < 1:
        raise ValueError("shards must be at least 1")
    args = list(args)
    wb = worker_binary or binary
    # Keys unique per call: Dask hands back a live future's result for a repeated key, so a
    # second run of another command while the first one's futures are still referenced (by a
    # traceback, say) would get the first one's partials.
    run_id = uuid.uuid4().hex[:12]
    futures = [
        client.submit(_shard, wb, args, i, shards, cwd,
                      key=f"agentsim-shard-{run_id}-{i}-of-{shards}",
                      pure=False, retries=retries)
        for i in range(1, shards + 1)
    ]
    parts = client.gather(futures)
    with tempfile.TemporaryDirectory(prefix="agentsim-merge-") as tmp:
        folder = Path(partial_dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = []
        for i, data in enumerate(parts, start=1):
            f = folder / f"partial-{i:05d}-of-{shards}.json"
            f.write_bytes(data)
            files.append(str(f))
        done = subprocess.run([binary, "merge", *files, *merge_flags(args)], cwd=cwd,
                              capture_output=True)
    if done.returncode != 0:
        raise MergeError(done.returncode, done.stderr.decode(errors="replace"))
    return done


def explore(
    client,
    scenario: str,
    shards: int,
    flags: Sequence[str] = (),
    **kwargs,
) -> subprocess.CompletedProcess:
    """Explores `scenario` (`agentsim explore SCENARIO FLAGS`) as `shards` Dask tasks.

    Each task runs its share of the schedule tree (`--shard I/N`: the tree is split by prefix
    into a fixed task list, shard I takes every N-th task); `agentsim merge` joins the shares.
    The `--json` output is the single run's bytes, and so is the text but for its seconds,
    which are the shards' seconds added. A search a budget stopped (`--max-schedules`,
    `--max-memory-mb`, spent per shard) is cannot tell, and the merge exits 2: `MergeError`
    unless FLAGS has `--allow-cannot-tell`. Keyword arguments are `run`'s.
    """
    return run(client, ["explore", scenario, *flags], shards, **kwargs)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m agentsim.shard --scheduler ADDR --shards N [--binary B] -- ARGS...`."""
    import argparse
    import sys

    from dask.distributed import Client, LocalCluster

    p = argparse.ArgumentParser(prog="python -m agentsim.shard", description=__doc__)
    p.add_argument("--scheduler", help="the Dask scheduler's address (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers (no --scheduler)")
    p.add_argument("--shards", type=int, required=True)
    p.add_argument("--binary", default="agentsim", help="agentsim on the client (merges)")
    p.add_argument("--worker-binary", help="agentsim on the workers (default: --binary)")
    p.add_argument("--cwd", help="folder the commands run in on every machine")
    p.add_argument("--partial-dir", help="keep the partials here")
    p.add_argument("--retries", type=int, default=0)
    p.add_argument("args", nargs=argparse.REMAINDER, help="the agentsim command, after --")
    ns = p.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    if not args:
        p.error("give the agentsim command after --, e.g. -- twins --trials 1000")
    if ns.scheduler:
        client = Client(ns.scheduler)
    else:
        client = Client(LocalCluster(n_workers=ns.workers, threads_per_worker=1))
    try:
        done = run(client, args, ns.shards, binary=ns.binary, worker_binary=ns.worker_binary,
                   cwd=ns.cwd, partial_dir=ns.partial_dir, retries=ns.retries)
    except (ShardError, MergeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        client.close()
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    return 0
