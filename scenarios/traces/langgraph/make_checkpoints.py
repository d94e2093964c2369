"""Makes the example LangGraph checkpoint databases in this folder with the real packages.

Run from the repository root with the pinned packages installed
(`pip install -r integrations/python/requirements.txt`):

    python scenarios/traces/langgraph/make_checkpoints.py

Each example app of `integrations/python/examples/apps.py` runs once (thread `t`) under
`langgraph.checkpoint.sqlite.SqliteSaver`, before and after its fix, into `<app>.sqlite` and
`<app>_fixed.sqlite`; `two_threads.sqlite` holds two threads; `forked_thread.sqlite` one thread
that two workers forked at once (`forked_thread_fixed.sqlite`: they take turns); `bad/` holds the inputs the
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


def forked(fixed: bool, path: str) -> None:
    """Two workers, each with its own connection, invoke one graph on thread `t` at once: both
    read the newest checkpoint and both succeed, so the thread forks and one worker's `notes`
    is on a branch no later checkpoint descends from (a lost update). Fixed: the workers take
    turns (a lock around each invocation), and the chain stays one."""
    import threading
    import time
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    if os.path.exists(path):
        os.remove(path)

    class State(TypedDict):
        notes: str
        add: str

    both_read = threading.Barrier(2)

    def update(state: State) -> dict:
        seen = state.get("notes", "")
        if not fixed and state["add"]:
            both_read.wait(timeout=10)
        time.sleep(0.05)
        return {"notes": (seen + " " + state["add"]).strip()}

    g = StateGraph(State)
    g.add_node("update", update)
    g.add_edge(START, "update")
    g.add_edge("update", END)
    setup = sqlite3.connect(path, check_same_thread=False)
    g.compile(checkpointer=SqliteSaver(setup)).invoke(
        {"notes": "likes tea", "add": ""}, {"configurable": {"thread_id": "t"}})
    setup.commit()
    turns = threading.Lock()

    def worker(add: str) -> None:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
        app = g.compile(checkpointer=SqliteSaver(conn))
        if fixed:
            with turns:
                app.invoke({"add": add}, {"configurable": {"thread_id": "t"}})
        else:
            app.invoke({"add": add}, {"configurable": {"thread_id": "t"}})
        conn.commit()
        conn.close()

    workers = [threading.Thread(target=worker, args=(a,)) for a in ("likes coffee", "likes cake")]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    setup.execute("VACUUM")
    setup.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    setup.execute("PRAGMA journal_mode=DELETE")
    setup.close()


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
    forked(False, os.path.join(HERE, "forked_thread.sqlite"))
    forked(True, os.path.join(HERE, "forked_thread_fixed.sqlite"))
    bad_inputs()
    print("world (effects in the order they landed):", apps.WORLD)


if __name__ == "__main__":
    main()
