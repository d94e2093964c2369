#!/usr/bin/env python3
"""Writes the seeds of the `langgraph_blob` fuzz target (sim/fuzz/seeds/langgraph_blob/).

The seeds are the blobs of the example checkpointer databases in scenarios/traces/langgraph/
(and bad/pickled.sqlite, for a `pickle` blob the decoder refuses): every distinct
`checkpoints.checkpoint`, `checkpoints.metadata` and `writes.value`, in the framing the
target reads, one file each:

    1 byte  which decoder: the first letter of the row's `type` column (`m` msgpack, `j` json,
            `b` bytes, `a` bytearray, `n` null, `p` pickle, `-` a NULL type), or `M` for a
            checkpoint's `metadata` column (read as JSON, else msgpack)
    rest    the blob's bytes

Only Python's standard library (sqlite3) is used. Rerun it after changing the example
databases (`python3 sim/fuzz/make_langgraph_seeds.py` from anywhere); it replaces the
directory's *.bin files.
"""

import hashlib
import pathlib
import sqlite3

HERE = pathlib.Path(__file__).resolve().parent
DBS = HERE.parent.parent / "scenarios" / "traces" / "langgraph"
OUT = HERE / "seeds" / "langgraph_blob"


def tag(encoding):
    """The selector byte of a `type` column value."""
    return b"-" if encoding is None else encoding[:1].encode()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.bin"):
        old.unlink()
    seen = set()
    total = 0
    for db in sorted(DBS.glob("*.sqlite")) + [DBS / "bad" / "pickled.sqlite"]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        blobs = []
        for encoding, checkpoint, metadata in conn.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints ORDER BY rowid"
        ):
            blobs.append(("cp", tag(encoding) + bytes(checkpoint or b"")))
            blobs.append(("meta", b"M" + bytes(metadata or b"")))
        for encoding, value in conn.execute("SELECT type, value FROM writes ORDER BY rowid"):
            blobs.append(("write", tag(encoding) + bytes(value or b"")))
        conn.close()
        counts = {}
        for kind, data in blobs:
            digest = hashlib.sha1(data).digest()
            if digest in seen:
                continue
            seen.add(digest)
            n = counts.get(kind, 0)
            counts[kind] = n + 1
            (OUT / f"{db.stem}.{kind}{n}.bin").write_bytes(data)
            total += len(data)
    print(f"{len(seen)} seeds, {total} bytes, in {OUT}")


if __name__ == "__main__":
    main()
