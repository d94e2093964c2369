"""agentsim.shard: fan a seeded agentsim command or an exploration out over a Dask cluster.

    from dask.distributed import Client
    from agentsim import shard
    client = Client("tcp://scheduler:8786")
    out = shard.run(client, ["twins", "--trials", "100000"], shards=64)
    print(out.stdout.decode(), end="")   # the bytes `agentsim twins --trials 100000` prints

Each shard is one Dask task that runs `agentsim ARGS --shard I/N --partial-out FILE` on a
worker and returns the partial's bytes; the client writes them to a local folder and runs
`agentsim merge` there, so workers need the binary and the scenario files but no shared
file system. `shard.explore(client, "scenarios/x.toml", shards=8, flags=["--json"])`
fans out `agentsim explore` the same way. See `driver.py` and docs/sharding.md.
"""

from .driver import MergeError, ShardError, explore, merge_flags, run

__all__ = ["MergeError", "ShardError", "explore", "merge_flags", "run"]
