"""Makes the example LangGraph checkpoint databases in this folder with the real packages.

Run from the repository root with the pinned packages installed
(`pip install -r integrations/python/requirements.txt`):

    python scenarios/traces/langgraph/make_checkpoints.py

Each example app of `integrations/python/examples/apps.py` runs once (thread `t`) under
`langgraph.checkpoint.sqlite.SqliteSaver`, before and after its fix, into `<app>.sqlite` and
`<app>_fixed.sqlite`; `two_threads.sqlite` holds two threads; `bad/` holds the inputs the
reader must refuse (a database that is not a checkpointer's, a truncated one, one with a
serialization it cannot read). The databases differ from run to run in ids and timestamps,
never in what the tests check (the tools' latencies are 20, 80 and 150 ms apart).
"""

import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "integrations", "python", "examples"))

import apps  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.errors import InvalidUpdateError  # noqa: E402


def run(app: str, fixed: bool, path: str, threads=("t",)) -> None:
    if os.path.exists(path):
        os.remove(path)
    conn = sqlite3.connect(path, check_same_thread=False)
    graph, inputs = apps.APPS[app](fixed)
    compiled = graph.compile(checkpointer=SqliteSaver(conn))
    for thread in threads:
        try:
            compiled.invoke(inputs, {"configurable": {"thread_id": thread}})
        except InvalidUpdateError as e:
            print(f"{os.path.basename(path)}: {type(e).__name__}: {str(e).splitlines()[0]}")
    conn.commit()
    conn.execute("VACUUM")
    # SqliteSaver switches the database to WAL. Back to a rollback journal, so that the file
    # alone holds every row and no reader (even a read-only one) leaves `-shm`/`-wal`
    # sidecars beside it: those would otherwise be committed with the examples.
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


def bad_inputs() -> None:
    bad = os.path.join(HERE, "bad")
    os.makedirs(bad, exist_ok=True)
    # A real SQLite database, but not a checkpointer's.
    other = os.path.join(bad, "not_a_checkpointer.sqlite")
    if os.path.exists(other):
        os.remove(other)
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes (text) VALUES ('hello')")
    conn.commit()
    conn.close()
    # A checkpointer database cut to half its pages.
    src = os.path.join(HERE, "stale_read.sqlite")
    cut = os.path.join(bad, "truncated.sqlite")
    data = open(src, "rb").read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    # A checkpoint stored with a serialization the reader does not decode.
    odd = os.path.join(bad, "pickled.sqlite")
    shutil.copy(src, odd)
    conn = sqlite3.connect(odd)
    conn.execute(
        "UPDATE checkpoints SET type = 'pickle' WHERE checkpoint_id = "
        "(SELECT max(checkpoint_id) FROM checkpoints)"
    )
    conn.commit()
    conn.close()
    # Not SQLite at all.
    with open(os.path.join(bad, "not_sqlite.sqlite"), "w") as f:
        f.write("this is a text file\n")


def main() -> None:
    for app, fixed in apps.EXPECTED:
        name = f"{app}_fixed.sqlite" if fixed else f"{app}.sqlite"
        run(app, fixed, os.path.join(HERE, name))
    run("stale_read", False, os.path.join(HERE, "two_threads.sqlite"), threads=("a", "b"))
    bad_inputs()
    print("world (effects in the order they landed):", apps.WORLD)


if __name__ == "__main__":
    main()
