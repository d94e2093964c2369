"""Records each example app with agentsim_record into this folder (`<app>[_fixed].jsonl` and
`.report.json`), with the pinned packages of integrations/python/requirements.txt:

    python scenarios/traces/recorder/make_recordings.py
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.path.join(HERE, "..", "..", "..", "integrations", "python")
sys.path.insert(0, PY)
sys.path.insert(0, os.path.join(PY, "examples"))

import agentsim.record as agentsim_record  # noqa: E402
import apps  # noqa: E402
from langgraph.errors import InvalidUpdateError  # noqa: E402


def main() -> None:
    for app, fixed in sorted(apps.EXPECTED):
        graph, inputs = apps.APPS[app](fixed)
        name = f"{app}_fixed.jsonl" if fixed else f"{app}.jsonl"
        rec = agentsim_record.record(graph.compile(), os.path.join(HERE, name))
        try:
            rec.invoke(inputs)
        except InvalidUpdateError as e:
            print(f"{name}: {type(e).__name__}")
        # The committed report names the history relative to the repository.
        rec.path = os.path.relpath(rec.path, os.path.join(HERE, "..", "..", ".."))
        with open(rec.report_path, "w", encoding="utf-8") as f:
            json.dump(rec.report(), f, indent=2, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
