"""agentsim.record: record a LangGraph graph's runs as an agentsim history.

    from agentsim.record import record      # the wheel's [langgraph] extra
    graph = record(builder.compile(), "out.jsonl")
    graph.invoke({"draft": "v1"})        # also stream, ainvoke, astream
    # then: agentsim detect out.jsonl

The wrapped graph behaves as the original; after every run it (re)writes `out.jsonl` (one
agentsim operation record per node task) and `out.report.json` (what the recording can decide,
and the error the run raised, e.g. LangGraph's InvalidUpdateError). See `recorder.py` for
the mapping.
"""

from .recorder import Recorded, record
from .values import value_name

__all__ = ["Recorded", "record", "value_name"]
